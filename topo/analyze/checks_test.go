package analyze_test

import (
	"os"
	"slices"
	"testing"

	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/topo"
	"github.com/ibscript/ibscript/topo/analyze"
)

func node(tb testing.TB, f *topo.Fabric, desc string) *topo.Node {
	for _, n := range f.Nodes {
		if n.Desc == desc {
			return n
		}
	}
	tb.Fatalf("no node %q", desc)
	return nil
}

func TestValidateRoutesFaults(t *testing.T) {
	l := newLive(t, ring4, "")
	f, _ := l.read(t)
	l.clockwise(t, f)
	// H2 from S1 the long way round (S1>S0>S3>S2): 4 switch links where
	// H2 to H1 takes 1.
	for _, sw := range []string{"S1", "S0"} {
		if err := l.sim.SetLFT(sw, lidOf(t, f, "H2"), 2); err != nil {
			t.Fatal(err)
		}
	}
	f, tabs := l.read(t)
	// S3 drops H0 (planted in the tables read: in the fabric it would cut
	// the SM's answers).
	for i, n := range tabs.LFT.Switches {
		if n.Desc == "S3" {
			tabs.LFT.Ports[i][lidOf(t, f, "H0")] = 255
		}
	}
	r, err := analyze.ValidateRoutes(f, tabs)
	if err != nil {
		t.Fatal(err)
	}
	if r.Count != 1 || r.Kinds["drop"] != 1 || r.Problems[0].Switch.Desc != "S3" || r.Unreachable == 0 {
		t.Errorf("problems %+v kinds %v unreachable %d", r.Problems, r.Kinds, r.Unreachable)
	}
	found := false
	for _, a := range r.AsymmetricPairs {
		if a.A.Node.Desc == "H1" && a.B.Node.Desc == "H2" && a.HopsAB == 5 && a.HopsBA == 3 {
			found = true
		}
	}
	if !found || r.MaxHops != 5 {
		t.Errorf("asymmetric %+v, max hops %d: want H1>H2 5 hops, H2>H1 3", r.AsymmetricPairs, r.MaxHops)
	}
}

func TestFatTreeShapeAndBalance(t *testing.T) {
	f, tabs := minHop(t, fattree.Spec{Leaves: 8, Spines: 4, Hosts: 6, LinksPerSpine: 1})
	if ft := analyze.CheckFatTree(f); ft.UnknownRates != 8*(6+4)+4*8 || ft.BisectionGbps != 0 {
		t.Errorf("a topology file's links: %d unknown rates, bisection %v", ft.UnknownRates, ft.BisectionGbps)
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				p.WidthActive, p.SpeedActive = 2, 1 // 4x SDR
			}
		}
	}
	ft := analyze.CheckFatTree(f)
	if len(ft.Levels) != 2 || ft.Levels[0].Up != 4 || ft.Levels[0].Down != 6 || ft.Levels[1].Down != 8 || len(ft.Problems) != 0 {
		t.Fatalf("%+v", ft)
	}
	// Parsed 4x SDR: 10 Gb/s a link; 32 leaf uplinks.
	if ft.Levels[0].UpGbps != 320 || ft.Levels[0].Oversubscription != 60.0/40 || ft.BisectionGbps != 160 {
		t.Errorf("levels %+v bisection %v", ft.Levels, ft.BisectionGbps)
	}
	b, err := analyze.Balance(f, tabs)
	if err != nil || b.Unbalanced != 0 {
		t.Fatalf("%+v %v", b, err)
	}
	// A leaf's uplinks carry the other 7 leaves' 42 hosts: 10 or 11 each.
	for _, p := range b.Switches[0].Ports {
		if p.Direction == "up" && (p.CA < 10 || p.CA > 11) {
			t.Errorf("leaf000 port %d carries %d CA LIDs", p.Port, p.CA)
		}
	}
	// All of leaf000's uplink 7 traffic to spine000: plant it.
	l0 := tabs.LFT.Ports[0]
	for lid := range l0 {
		if l0[lid] >= 8 {
			l0[lid] = 7
		}
	}
	b, _ = analyze.Balance(f, tabs)
	if b.Unbalanced != 1 || !b.Switches[0].Unbalanced {
		t.Errorf("planted imbalance not found: %d", b.Unbalanced)
	}
}

func TestNodesUsing(t *testing.T) {
	l := newLive(t, ring4, "")
	f, _ := l.read(t)
	l.clockwise(t, f)
	f, tabs := l.read(t)
	u, err := analyze.NodesUsing(f, tabs, node(t, f, "S0"), 1)
	if err != nil {
		t.Fatal(err)
	}
	var dst, src, back []string
	for _, d := range u.Out.Destinations {
		dst = append(dst, d.Port.Node.Desc)
	}
	for _, s := range u.Out.Sources {
		src = append(src, s.Node.Desc)
	}
	for _, d := range u.In.Destinations {
		back = append(back, d.Port.Node.Desc)
	}
	// S0 port 1 (to S1) carries H1 and H2 and S1, S2 (two hops
	// clockwise, as the sim routes the switches: any), from H0 and H3
	// (H3 to H1 goes S3>S0>S1).
	has := func(l []string, s string) bool {
		for _, x := range l {
			if x == s {
				return true
			}
		}
		return false
	}
	if !has(dst, "H1") || !has(dst, "H2") || has(dst, "H3") || !has(src, "H0") || !has(src, "H3") || has(src, "H2") || !has(back, "H0") {
		t.Errorf("out %v from %v; back %v", dst, src, back)
	}
}

func TestMulticastRing(t *testing.T) {
	l := newLive(t, ring4, "")
	f, _ := l.read(t)
	mft := &topo.MulticastTables{}
	plant := func(masks map[string][]int) {
		mft.Switches, mft.Groups = nil, nil
		for _, n := range f.Nodes {
			if ports, ok := masks[n.Desc]; ok {
				var m topo.PortMask
				for _, p := range ports {
					m.Set(p)
				}
				mft.Switches = append(mft.Switches, n)
				mft.Groups = append(mft.Groups, map[uint16]topo.PortMask{0xc000: m})
			}
		}
	}
	// A tree: the S3-S0 link left out.
	plant(map[string][]int{"S0": {1, 3}, "S1": {1, 2, 3}, "S2": {1, 2, 3}, "S3": {2, 3}})
	r, err := analyze.ValidateMulticast(f, analyze.Tables{MFT: mft})
	if err != nil || r.MLIDs != 1 || r.Members != 4 || r.Count != 0 {
		t.Fatalf("tree: %+v %v", r, err)
	}
	cl, err := analyze.FindCreditLoops(f, analyze.Tables{MFT: mft})
	if err != nil || cl.Count != 0 || cl.MLIDs != 1 || cl.Dependencies == 0 {
		t.Fatalf("tree: %+v %v", cl, err)
	}
	// The whole ring: every packet goes round; S2 gets no H2 member port.
	plant(map[string][]int{"S0": {1, 2, 3}, "S1": {1, 2, 3}, "S2": {1, 2}, "S3": {1, 2, 3}})
	r, _ = analyze.ValidateMulticast(f, analyze.Tables{MFT: mft})
	if r.Members != 3 || r.Count != 3 || r.Problems[0].Kind != "loop" {
		t.Errorf("ring: %+v", r)
	}
	cl, _ = analyze.FindCreditLoops(f, analyze.Tables{MFT: mft})
	if cl.Count != 2 || !cl.Loops[0].Multicast || len(cl.Loops[0].Channels) != 4 {
		t.Errorf("ring: %+v", cl)
	}
}

// TestFatTreeProblemsInOneOrder: the shape's problems come level by level
// in one order, run after run (they came in the map order of the levels:
// `ibscript analyze` on net.chassis printed its two non-uniform switches
// either way round).
func TestFatTreeProblemsInOneOrder(t *testing.T) {
	file, err := os.Open("../../tests/topologies/net.chassis")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	f, err := topo.Parse("net.chassis", file)
	if err != nil {
		t.Fatal(err)
	}
	first := analyze.CheckFatTree(f).Problems
	if len(first) < 2 {
		t.Fatalf("problems %q: want the non-uniform switches of two levels", first)
	}
	for range 64 {
		if got := analyze.CheckFatTree(f).Problems; !slices.Equal(got, first) {
			t.Fatalf("problems\n%q\nthen\n%q", first, got)
		}
	}
}
