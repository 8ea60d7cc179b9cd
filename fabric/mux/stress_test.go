package mux_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/mux"
	"github.com/ibscript/ibscript/mad"
)

type dropWire struct{}

func (dropWire) Transmit(*fabric.Packet) error { return nil }
func (dropWire) Close() error                  { return nil }

// TestTimeoutsUnderLoad sends from many goroutines on the real clock; every
// request must come back timed out exactly once.
func TestTimeoutsUnderLoad(t *testing.T) {
	m := mux.New(dropWire{}, fabric.PortAttr{}, nil)
	defer m.Close()
	ctx := t.Context()
	id, _ := m.Register(ctx, fabric.Agent{Class: fabrictest.TestClass, Version: 1})
	const senders, each = 8, 200
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			for i := range each {
				d := time.Duration(1+(g*each+i)%7) * time.Millisecond
				tid := uint64(g)<<16 | uint64(i)
				if err := m.Send(ctx, &fabric.Packet{Agent: id, Timeout: d, Retries: i % 3, Data: gmp(fabrictest.TestClass, mad.MethodGet, tid)}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	got := map[uint32]bool{}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var p fabric.Packet
	for len(got) < senders*each {
		if err := m.Recv(rctx, &p); err != nil {
			t.Fatalf("after %d completions: %v", len(got), err)
		}
		tid := uint32(mad.TIDOf(p.Data))
		if p.Status != fabric.StatusTimeout || got[tid] {
			t.Fatalf("TID 0x%x status %d dup %v", tid, p.Status, got[tid])
		}
		got[tid] = true
	}
	wg.Wait()
}
