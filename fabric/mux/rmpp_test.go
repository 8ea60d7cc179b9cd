package mux_test

import (
	"context"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// TestRMPPAgentGetsUnmatchedResponses: the Mux does no RMPP, so an agent
// registered with RMPPVersion 1 gets every response carrying its hi_tid
// even when no request is outstanding (the later segments and ACKs of an
// RMPP transfer, for the engine's driver), while other agents' unmatched
// responses are dropped and counted.
func TestRMPPAgentGetsUnmatchedResponses(t *testing.T) {
	m, w := newLoop(nil)
	w.answer = false
	defer m.Close()
	ctx := context.Background()
	rmppAgent, err := m.Register(ctx, fabric.Agent{Class: mad.ClassSubnAdm, Version: 2, RMPPVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := m.Register(ctx, fabric.Agent{Class: mad.ClassSubnAdm, Version: 2})
	if err != nil {
		t.Fatal(err)
	}
	var tids [2]uint64
	for i, a := range []fabric.AgentID{rmppAgent, plain} {
		if err := m.Send(ctx, &fabric.Packet{Agent: a, Addr: fabric.Addr{LID: 1, QPN: 1}, Data: gmp(mad.ClassSubnAdm, mad.MethodGetTable, 5)}); err != nil {
			t.Fatal(err)
		}
		tids[i] = mad.TIDOf(w.last())
	}
	for _, tid := range tids {
		resp := gmp(mad.ClassSubnAdm, mad.MethodGetTableRes, tid)
		resp[2] = 2
		m.Deliver(&fabric.Packet{Addr: fabric.Addr{LID: 1}, Data: resp})
	}
	rctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var p fabric.Packet
	if err := m.Recv(rctx, &p); err != nil || p.Agent != rmppAgent || mad.TIDOf(p.Data) != tids[0] {
		t.Fatalf("recv: %v agent %d, want the RMPP agent's response", err, p.Agent)
	}
	if st := m.Stats(); st.Unmatched != 1 {
		t.Errorf("%d unmatched, want the plain agent's response counted", st.Unmatched)
	}
}
