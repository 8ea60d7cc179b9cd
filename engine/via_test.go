package engine_test

import (
	"errors"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim/simtest"
)

// nodeInfoReq is a sweep's NodeInfo Get of t.
func nodeInfoReq(t engine.Target) engine.SweepReq {
	return engine.SweepReq{Target: t, Method: mad.MethodGet, AttrID: smp.AttrNodeInfo}
}

// TestTargetVia: a target whose directed route starts from another local
// port (Target.Via) is sent from a session on that port: from Hca1's
// session, dr:0 via Hca2 port 1 reads Hca2's NodeInfo, by SMP call and in
// a sweep mixed with the session's own targets (each answered by its own
// node); a Via port that cannot be opened is its calls' and its sweep
// requests' error (fabric.ErrNoDevice), the other requests unharmed.
func TestTargetVia(t *testing.T) {
	f := simtest.Load(t, "../tests/topologies/net.2sw2path4hca", nil)
	s := simtest.PortSession(t, f, "Hca1", 1, nil)
	ctx := t.Context()
	self, err := s.NodeInfo(ctx, engine.DR())
	if err != nil {
		t.Fatal(err)
	}
	other := engine.DR()
	other.Via = &engine.Via{Fabric: f, CAName: "Hca2", PortNum: 1}
	ni, err := s.NodeInfo(ctx, other)
	if err != nil || ni.NodeGUID == self.NodeGUID || ni.NodeGUID == 0 {
		t.Fatalf("NodeInfo via Hca2 = 0x%x, %v; want Hca2's, not Hca1's (0x%x)", ni.NodeGUID, err, self.NodeGUID)
	}
	if got := other.String(); got != "dr:0 from Hca2 port 1" {
		t.Errorf("String() = %q", got)
	}
	bad := engine.DR()
	bad.Via = &engine.Via{Fabric: f, CAName: "nope", PortNum: 1}
	if _, err := s.NodeInfo(ctx, bad); !errors.Is(err, fabric.ErrNoDevice) {
		t.Errorf("NodeInfo via an unknown CA: %v; want ErrNoDevice", err)
	}
	res := s.Sweep(ctx, []engine.SweepReq{nodeInfoReq(engine.DR()), nodeInfoReq(other), nodeInfoReq(bad), nodeInfoReq(engine.DR())}, nil)
	want := []uint64{self.NodeGUID, ni.NodeGUID, 0, self.NodeGUID}
	for i, r := range res {
		if want[i] == 0 {
			if !errors.Is(r.Err, fabric.ErrNoDevice) {
				t.Errorf("sweep %d (via an unknown CA): %v; want ErrNoDevice", i, r.Err)
			}
			continue
		}
		var got smp.NodeInfo
		if r.Err == nil {
			r.Err = got.UnmarshalBinary(r.Data)
		}
		if r.Err != nil || got.NodeGUID != want[i] {
			t.Errorf("sweep %d: 0x%x, %v; want 0x%x", i, got.NodeGUID, r.Err, want[i])
		}
	}
}
