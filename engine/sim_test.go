package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

const fattree2000 = "../tests/topologies/fattree-2000.net"

// simSession loads a topology into the embedded simulator and opens a
// Session on node's port (the SM's port when node is "").
func simSession(tb testing.TB, path, node string, port int) (*engine.Session, *sim.Fabric) {
	tb.Helper()
	return simSessionOpts(tb, path, node, port, nil)
}

// simSessionOpts is simSession with Session options.
func simSessionOpts(tb testing.TB, path, node string, port int, opts *engine.Options) (*engine.Session, *sim.Fabric) {
	tb.Helper()
	return simSessionWrap(tb, path, node, port, opts, nil)
}

// simSessionWrap is simSessionOpts with the transport wrapped by wrap
// (nil: not wrapped).
func simSessionWrap(tb testing.TB, path, node string, port int, opts *engine.Options, wrap func(fabric.Transport) fabric.Transport) (*engine.Session, *sim.Fabric) {
	tb.Helper()
	f, err := sim.Load(path, nil)
	if err != nil {
		tb.Fatal(err)
	}
	var tr fabric.Transport
	if node == "" {
		tr, err = f.Open(context.Background(), "", 0) // the SM's port
	} else {
		tr, err = f.Attach(node, port)
	}
	if err != nil {
		f.Close()
		tb.Fatal(err)
	}
	if wrap != nil {
		tr = wrap(tr)
	}
	s, err := engine.New(tr, opts)
	if err != nil {
		f.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close(); f.Close() })
	return s, f
}

// TestDiscoverSim sweeps the simulated 2sw2path4hca fabric and compares the
// result with ibnetdiscover's output on the same fabric under ibsim.
func TestDiscoverSim(t *testing.T) {
	for _, root := range ibnd2swRoots {
		t.Run(root.node, func(t *testing.T) {
			s, _ := simSession(t, "../tests/topologies/net.2sw2path4hca", root.node, root.port)
			disc, want := discover2sw(t, s)
			// Descriptions, LIDs and link state as ibnetdiscover saw them.
			for _, w := range want.Nodes {
				g := disc.Fabric.Node(w.GUID)
				if g == nil {
					continue
				}
				if g.Desc != w.Desc || g.Type != w.Type || g.NumPorts != w.NumPorts {
					t.Errorf("node %s: %q %v %d ports, want %q %v %d", g.ID, g.Desc, g.Type, g.NumPorts, w.Desc, w.Type, w.NumPorts)
				}
				for _, wp := range w.Ports {
					if wp == nil || wp.Remote == nil {
						continue
					}
					gp := g.Ports[wp.Num]
					if gp.State != smp.PortStateActive || gp.WidthActive != 2 || gp.SpeedActive != 1 {
						t.Errorf("%v: state %d width %d speed %d, want Active 4x SDR", gp, gp.State, gp.WidthActive, gp.SpeedActive)
					}
					if ep := w.EndPort(wp.Num); ep != nil && ep.LID != 0 && g.EndPort(wp.Num).LID != ep.LID {
						t.Errorf("%v: LID %d, want %d", gp, g.EndPort(wp.Num).LID, ep.LID)
					}
				}
			}
		})
	}
}

// expectWhole fails t unless disc found ref whole: no error, its nodes
// and its links.
func expectWhole(t *testing.T, disc *engine.Discovery, ref *topo.Fabric) {
	t.Helper()
	if len(disc.Errors) != 0 {
		t.Errorf("%d errors, first %v", len(disc.Errors), disc.Errors[0])
	}
	if len(disc.Fabric.Nodes) != len(ref.Nodes) {
		t.Errorf("%d nodes, want %d", len(disc.Fabric.Nodes), len(ref.Nodes))
	}
	if w, g := linkSet(ref), linkSet(disc.Fabric); !slices.Equal(w, g) {
		t.Errorf("%d link ends, want %d", len(g), len(w))
	}
}

func TestDiscoverSimFattree2000(t *testing.T) {
	if testing.Short() {
		t.Skip("2000-node sweep")
	}
	s, f := simSession(t, fattree2000, "", 0)
	ref := f.Topology()
	port := s.Port()
	disc, err := s.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	expectWhole(t, disc, ref)
	if disc.Fabric.Nodes[0].GUID != port.NodeGUID {
		t.Errorf("first node 0x%x, want the local node 0x%x", disc.Fabric.Nodes[0].GUID, port.NodeGUID)
	}
	t.Logf("%d nodes, %d SMPs in %v", len(disc.Fabric.Nodes), disc.MADs, disc.Elapsed)
}

// BenchmarkDiscover2000 sweeps the 2000-node fat tree through the
// simulator.
func BenchmarkDiscover2000(b *testing.B) {
	s, _ := simSession(b, fattree2000, "", 0)
	ctx := context.Background()
	mads := 0
	for b.Loop() {
		disc, err := s.Discover(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(disc.Errors) != 0 {
			b.Fatal(disc.Errors[0])
		}
		mads += disc.MADs
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(sec*1000/float64(b.N), "ms/sweep")
	b.ReportMetric(float64(mads)/sec, "MADs/s")
}

// BenchmarkSMPRoundTrip is one NodeInfo at a time through the Session and
// the simulator, LID-routed to a switch.
func BenchmarkSMPRoundTrip(b *testing.B) {
	s, _ := simSession(b, fattree2000, "", 0)
	benchNodeInfo(b, s)
}

func benchNodeInfo(b *testing.B, s *engine.Session) {
	ctx := context.Background()
	disc, err := s.Discover(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	var t engine.Target
	for _, n := range disc.Fabric.Nodes {
		if n.Type == topo.Switch && n.Ports[0].LID != 0 {
			t = engine.LID(n.Ports[0].LID)
			break
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.NodeInfo(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkSMPRoundTripParallel runs NodeInfo from many goroutines, each
// to its own switch.
func BenchmarkSMPRoundTripParallel(b *testing.B) {
	s, _ := simSession(b, fattree2000, "", 0)
	ctx := context.Background()
	disc, err := s.Discover(ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	var targets []engine.Target
	for _, n := range disc.Fabric.Nodes {
		if n.Type == topo.Switch && n.Ports[0].LID != 0 {
			targets = append(targets, engine.LID(n.Ports[0].LID))
		}
	}
	next := make(chan engine.Target, len(targets))
	for _, t := range targets {
		next <- t
	}
	b.ReportAllocs()
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		t := <-next
		for pb.Next() {
			if _, err := s.NodeInfo(ctx, t); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// TestDiscoverXDR: discovery aggregates PortInfo's LinkSpeedExt*2 fields
// as libibnetdisc's ibnd_get_agg_linkspeedext* do (XDR 32 above the
// LinkSpeedExt bits, where CapabilityMask2 has
// IsExtendedSpeeds2Supported, a switch's from port 0): an XDR link is
// active 32 at both ends and enables and supports 32; a port enabled up to
// NDR on the same switch runs NDR and has no XDR bit.
func TestDiscoverXDR(t *testing.T) {
	path := filepath.Join(t.TempDir(), "xdr.net")
	const net = `extspeed=0x2f
Switch 4 "S1"
[1] "H1"[1]
[2] "H2"[1] e=15

Hca 1 "H1"
[1] "S1"[1]

Hca 1 "H2"
[1] "S1"[2]
`
	if err := os.WriteFile(path, []byte(net), 0o644); err != nil {
		t.Fatal(err)
	}
	s, _ := simSession(t, path, "H1", 1)
	disc, err := s.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	byDesc := map[string]*topo.Node{}
	for _, n := range disc.Fabric.Nodes {
		byDesc[n.Desc] = n
	}
	for _, tc := range []struct {
		node          string
		port          int
		act, en, supp uint8
	}{
		{"S1", 1, 32, 0xf | 32, 0xf | 32},
		{"H1", 1, 32, 0xf | 32, 0xf | 32},
		{"S1", 2, 8, 0xf, 0xf},           // e=15
		{"H2", 1, 8, 0xf | 32, 0xf | 32}, // able to run XDR, its peer is not
	} {
		n := byDesc[tc.node]
		if n == nil || n.Ports[tc.port] == nil {
			t.Fatalf("%s port %d not discovered", tc.node, tc.port)
		}
		p := n.Ports[tc.port]
		if p.SpeedExtActive != tc.act || p.SpeedExtEnabled != tc.en || p.SpeedExtSupported != tc.supp {
			t.Errorf("%v: ext active %#x enabled %#x supported %#x, want %#x %#x %#x", p,
				p.SpeedExtActive, p.SpeedExtEnabled, p.SpeedExtSupported, tc.act, tc.en, tc.supp)
		}
	}
	if got := smp.LinkText(2, byDesc["H1"].Ports[1].SpeedActive, byDesc["H1"].Ports[1].SpeedExtActive); got != "4xXDR" {
		t.Errorf("H1's link %q, want 4xXDR", got)
	}
}

// TestDRPathToLID: current rdma-core's build_dr_path_to_lid (rdma-core
// #1755) on the embedded simulator: from a CA, from a switch reached by a
// route and from a switch's own port, the route built through the LFTs to
// every LID reaches the port of that LID (its NodeInfo's PortGUID).
func TestDRPathToLID(t *testing.T) {
	const topology = "../tests/topologies/net.2sw2path4hca"
	for _, start := range []struct {
		node string
		port int
		from []uint8
		keep int // how much of from every route starts with
	}{{"Hca1", 1, nil, 0}, {"Hca3", 1, []uint8{0, 1}, 2}, {"Switch2", 0, nil, 0}, {"Hca4", 1, []uint8{0, 1, 3, 1}, 3}} {
		s, _ := simSession(t, topology, start.node, start.port)
		ctx := t.Context()
		d, err := s.Discover(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		reached := 0
		for _, n := range d.Fabric.Nodes {
			for _, p := range n.Ports {
				if p == nil || p.LID == 0 {
					continue
				}
				path, err := s.DRPathToLID(ctx, start.from, p.LID)
				if err != nil {
					t.Errorf("from %s %v: lid %d: %v", start.node, start.from, p.LID, err)
					continue
				}
				// A start at a switch stays the route's beginning; from a
				// CA reached by a route the walk goes back a hop first.
				if keep := start.keep; !slices.Equal(path[:min(keep, len(path))], start.from[:keep]) {
					t.Errorf("from %s %v: lid %d: route %v does not start with the start's", start.node, start.from, p.LID, path)
				}
				ni, err := s.NodeInfo(ctx, engine.Target{Kind: engine.ByDR, Path: path})
				if err != nil || ni.PortGUID != p.GUID {
					t.Errorf("from %s %v: lid %d: route %v reaches port GUID %#x (%v), want %#x", start.node, start.from, p.LID, path, ni.PortGUID, err, p.GUID)
				}
				reached++
			}
		}
		if reached != 6 {
			t.Errorf("from %s: %d LIDs reached, want the fabric's 6", start.node, reached)
		}
	}
}

// TestDRPathToLIDErrors: build_dr_path_to_lid's failures, each with the
// text rdma-core's IBWARN prints (infiniband-diags/ibdiag_dr.c): its node
// is the C's node pointer, the start's until the walk has left it.
func TestDRPathToLIDErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lid   uint16
		setup func(f *sim.Fabric) error
		want  string
	}{
		{"LID 0", 0, nil, "invalid destination LID 0"},
		{"past LinearFDBTop", 0xbfff, nil, `Bad forwarding table entry found at: node "Hca1" lid entry 49151 is -1 (top 6)`},
		{"unassigned LFT entry", 4, func(f *sim.Fabric) error { return f.SetLFT("Switch1", 4, 0xff) },
			`Bad forwarding table entry found at: node "Hca1" lid entry 4 is 255 (top 6)`},
		{"uncabled port", 4, func(f *sim.Fabric) error { return f.SetLFT("Switch1", 4, 7) },
			"can't reach port at DR path slid 0; dlid 0; 0,1,7"},
		{"entry 0 at the next switch", 4, func(f *sim.Fabric) error { return f.SetLFT("Switch2", 4, 0) },
			"can't reach port at DR path slid 0; dlid 0; 0,1,3,0"}, // the simulator drops an egress port 0
		{"loop", 4, func(f *sim.Fabric) error { return errors.Join(f.SetLFT("Switch1", 4, 3), f.SetLFT("Switch2", 4, 3)) },
			"Direct path too long!"},
		{"start port down", 4, func(f *sim.Fabric) error { return f.SetLink("Hca1", 1, false) }, `Bad port state found: node "Hca1" port 1 state 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, f := simSession(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1)
			if tc.setup != nil {
				if err := tc.setup(f); err != nil {
					t.Fatal(err)
				}
			}
			path, err := s.DRPathToLID(t.Context(), nil, tc.lid, engine.Retries(0))
			var de *engine.DRPathError
			if !errors.As(err, &de) || de.Msg != tc.want || de.LID != tc.lid {
				t.Fatalf("route %v, error %v; want %q", path, err, tc.want)
			}
		})
	}
}
