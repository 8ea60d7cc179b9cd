package mux_test

import (
	"context"
	"testing"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/mux"
	"github.com/ibscript/ibscript/mad"
)

// TestPortTagged: every request TID of a tagged port carries the tag in
// bits 48..63 (what ibsim writes there), the agent's own tag below it, and
// the response completes the request.
func TestPortTagged(t *testing.T) {
	m, w := newLoop(&mux.Options{Port: mux.NewPortTagged(7)})
	defer m.Close()
	ctx := context.Background()
	seen := map[uint64]bool{}
	for range 3 {
		id, err := m.Register(ctx, fabric.Agent{Class: 0x09, Version: 1})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Send(ctx, &fabric.Packet{Agent: id, Timeout: -1, Data: gmp(0x09, mad.MethodGet, 0xffffffff_00000042)}); err != nil {
			t.Fatal(err)
		}
		tid := mad.TIDOf(w.last())
		if tid>>48 != 7 || tid>>32&0xffff == 0 || uint32(tid) != 0x42 {
			t.Errorf("agent %d transmitted TID %#016x, want 0x0007xxxx00000042 with xxxx != 0", id, tid)
		}
		if seen[tid] {
			t.Errorf("TID %#016x transmitted twice", tid)
		}
		seen[tid] = true
		var p fabric.Packet
		if err := m.Recv(ctx, &p); err != nil || p.Status != 0 || mad.TIDOf(p.Data) != tid {
			t.Errorf("completion: %v status %d TID %#016x, want the response to %#016x", err, p.Status, mad.TIDOf(p.Data), tid)
		}
	}
}
