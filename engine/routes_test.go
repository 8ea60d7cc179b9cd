package engine_test

import (
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

func TestSweepPerTargetErrors(t *testing.T) {
	s, _ := simSession(t, "../tests/topologies/net.2sw2path4hca", "", 0)
	reqs := []engine.SweepReq{
		{Target: engine.LID(1), Method: mad.MethodGet, AttrID: smp.AttrNodeInfo},
		{Target: engine.LID(999), Method: mad.MethodGet, AttrID: smp.AttrNodeInfo}, // nobody
		{Target: engine.LID(2), Method: mad.MethodGet, AttrID: smp.AttrNodeInfo},
	}
	var calls atomic.Int32 // progress runs on the sweep's goroutines
	res := s.Sweep(t.Context(), reqs, func(done, total int) { calls.Add(1) }, engine.Timeout(10e6), engine.Retries(engine.NoRetries))
	if len(res) != 3 || res[0].Err != nil || res[2].Err != nil || len(res[0].Data) == 0 {
		t.Fatalf("results %+v", res)
	}
	if !errors.Is(res[1].Err, fabric.ErrTimeout) {
		t.Errorf("LID 999: %v, want a timeout", res[1].Err)
	}
	if calls.Load() != 3 {
		t.Errorf("progress called %d times", calls.Load())
	}
}

func lfts(t *testing.T, path string) (*engine.Discovery, *engine.LFTs) {
	s, _ := simSession(t, path, "", 0)
	d, err := s.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	l := s.LFTs(t.Context(), d, nil)
	if len(l.Errors) > 0 {
		t.Fatal(l.Errors)
	}
	return d, l
}

func TestAnalyzeRoutesClean(t *testing.T) {
	d, l := lfts(t, "../tests/topologies/fattree-50.net")
	ra := topo.AnalyzeRoutes(d.Fabric, &l.ForwardingTables)
	if ra.Count != 0 || ra.Loops != 0 || ra.Inherited != 0 || ra.Switches != 6 || ra.LIDs != 50 || ra.Routes != 300 {
		t.Fatalf("%+v", ra)
	}
	// 44 hosts, 11 per leaf: same leaf 2 links, else 4.
	want := map[int]int{2: 44 * 10, 4: 44 * 33}
	if len(ra.Hops) != 2 || ra.Hops[2] != want[2] || ra.Hops[4] != want[4] {
		t.Errorf("hops %v, want %v", ra.Hops, want)
	}
}

func TestAnalyzeRoutesFaults(t *testing.T) {
	d, l := lfts(t, "../tests/topologies/fattree-50.net")
	idx := func(desc string) int {
		i := slices.IndexFunc(l.Switches, func(n *topo.Node) bool { return n.Desc == desc })
		if i < 0 {
			t.Fatalf("no switch %q", desc)
		}
		return i
	}
	var host *topo.Port
	for _, n := range d.Fabric.Nodes {
		if n.Type == topo.CA && n.Ports[1].Remote.Node.Desc == "leaf001" {
			host = n.Ports[1]
			break
		}
	}
	if host == nil {
		t.Fatal("no host on leaf001")
	}
	leaf, spine, hostLeaf := idx("leaf000"), idx("spine000"), idx("leaf001")
	orig, hostOrig := slices.Clone(l.Ports[leaf]), slices.Clone(l.Ports[hostLeaf])
	for _, c := range []struct {
		name      string
		set       func()
		kinds     []string
		loops     int
		inherited bool
	}{
		{"drop", func() { l.Ports[leaf][host.LID] = 255 }, []string{"drop"}, 0, false},
		{"wrong-port", func() { // to the host beside it
			other := 1
			if host.Remote.Num == 1 {
				other = 2
			}
			l.Ports[hostLeaf][host.LID] = uint8(other)
		}, []string{"wrong-port"}, 0, true},
		{"loop", func() {
			// leaf00 sends the host's LID to spine00, which sends it back.
			for p, pt := range l.Switches[spine].Ports {
				if pt != nil && pt.Remote != nil && pt.Remote.Node == l.Switches[leaf] {
					l.Ports[spine][host.LID] = uint8(p)
					l.Ports[leaf][host.LID] = uint8(pt.Remote.Num)
				}
			}
		}, []string{"loop"}, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			spineOrig := slices.Clone(l.Ports[spine])
			defer func() { copy(l.Ports[leaf], orig); copy(l.Ports[spine], spineOrig); copy(l.Ports[hostLeaf], hostOrig) }()
			c.set()
			ra := topo.AnalyzeRoutes(d.Fabric, &l.ForwardingTables)
			if ra.Count != 1 || len(ra.Problems) != 1 || ra.Problems[0].LID != host.LID {
				t.Fatalf("problems %v (count %d)", ra.Problems, ra.Count)
			}
			if c.kinds != nil && ra.Problems[0].Kind != c.kinds[0] {
				t.Errorf("kind %q, want %q", ra.Problems[0].Kind, c.kinds[0])
			}
			if ra.Loops != c.loops {
				t.Errorf("loops %d, want %d", ra.Loops, c.loops)
			}
			if c.inherited && ra.Inherited == 0 {
				t.Errorf("routes through the loop not counted")
			}
		})
	}
}
