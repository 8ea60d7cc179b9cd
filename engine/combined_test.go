package engine_test

import (
	"testing"

	"github.com/ibscript/ibscript/engine"
)

// TestCombinedRoute: a combined route (smpquery -c) is LID-routed to a
// switch, then directed from there; the simulator follows DrSLID's
// LID-routed legs both ways (ibsim drops them), so what it reaches is
// what the whole directed route from the local port reaches.
func TestCombinedRoute(t *testing.T) {
	s, _ := simSession(t, "../tests/topologies/net.mixed-router", "HcaX", 1)
	ctx := t.Context()
	pi, err := s.PortInfo(ctx, engine.DR(1), 0) // SwA, HcaX port 1's peer
	if err != nil {
		t.Fatal(err)
	}
	if pi.LID == 0 {
		t.Fatal("SwA has no LID")
	}
	for _, c := range []struct {
		t    engine.Target
		want string
	}{
		{engine.Combined(pi.LID, 0), "SwA"},
		{engine.Combined(pi.LID, 0, 5), "SwB"},
		{engine.Combined(pi.LID, 0, 6, 7), "HcaZ"},
		{engine.Combined(pi.LID, 0, 5, 1), "HcaX"},
	} {
		nd, err := s.NodeDesc(ctx, c.t)
		if err != nil {
			t.Errorf("%s: %v", c.t, err)
			continue
		}
		if got := nd.String(); got != c.want {
			t.Errorf("%s: NodeDesc %q, want %q", c.t, got, c.want)
		}
		back, err := engine.ParseTarget(c.t.String())
		if err != nil || back.String() != c.t.String() || back.LID != pi.LID {
			t.Errorf("ParseTarget(%q) = %v, %v", c.t.String(), back, err)
		}
	}
	for _, bad := range []string{"lid:0+dr:0,1", "dr:0,1+dr:0", "lid:5+lid:6", "lid:5+"} {
		if _, err := engine.ParseTarget(bad); err == nil {
			t.Errorf("ParseTarget(%q): no error", bad)
		}
	}
}
