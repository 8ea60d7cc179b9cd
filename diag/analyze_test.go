package diag

import (
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
	"github.com/ibscript/ibscript/topo/analyze"
)

// simAnalyzed is a Session with o on the default port of the topology
// at path in the embedded simulator, and the fabric; both closed when
// the test ends.
func simAnalyzed(t *testing.T, path string, o *engine.Options) (*engine.Session, *sim.Fabric) {
	t.Helper()
	f := simtest.Load(t, path, nil)
	return simtest.Session(t, f, o), f
}

// TestAnalyzeDeadSwitch: a spine that stops answering after the fabric
// came up is missed by discovery; Analyze still runs every check on what
// it found, names the missed route in Errors (the run fails) and counts
// the routes through the dead switch as unknown, not as faults.
func TestAnalyzeDeadSwitch(t *testing.T) {
	s, f := simAnalyzed(t, "../tests/topologies/fattree-50.net", &engine.Options{Timeout: 20e6, Retries: 1})
	spine := ""
	for _, n := range f.Topology().Nodes {
		if strings.HasPrefix(n.Desc, "spine") || strings.Contains(n.Desc, "spine") {
			spine = n.Desc
			break
		}
	}
	if spine == "" {
		t.Fatal("no spine in fattree-50")
	}
	if err := f.SetFaults(sim.Faults{DeadNodes: []string{spine}}); err != nil {
		t.Fatal(err)
	}
	a, err := Analyze(t.Context(), &Env{Session: s}, AnalyzeOptions{Checks: []string{"routes", "credit-loops"}})
	if err != nil {
		t.Fatal(err)
	}
	if !a.Failed() || len(a.Errors) == 0 || !strings.HasPrefix(a.Errors[0], "discovery: ") {
		t.Fatalf("errors %q", a.Errors)
	}
	if a.Routes == nil || a.Routes.Count != 0 || a.Routes.Unknown == 0 || a.CreditLoops == nil || a.CreditLoops.Count != 0 {
		t.Errorf("routes %+v, credit loops %+v", a.Routes, a.CreditLoops)
	}
}

// TestWriteAnalysisLoop: a credit loop prints its SLs and one line per
// channel, leaving switch and port, VL, and where it arrives.
func TestWriteAnalysisLoop(t *testing.T) {
	sw := func(d, g string) analyze.NodeRef { return analyze.NodeRef{Desc: d, GUID: g, Type: "Switch"} }
	a := &Analysis{Source: "live", Nodes: 8, Errors: []string{}, CreditLoops: &analyze.CreditLoops{Count: 1, SL2VL: "tables", Channels: 2, Dependencies: 2,
		Loops: []analyze.CreditLoop{{SLs: []int{0, 3}, Component: 2, Channels: []analyze.Channel{
			{Node: sw("A", "0x0000000000000001"), Port: 1, RemoteNode: sw("B", "0x0000000000000002"), RemotePort: 2, VL: 0},
			{Node: sw("B", "0x0000000000000002"), Port: 2, RemoteNode: sw("A", "0x0000000000000001"), RemotePort: 1, VL: 1},
		}}}}}
	var b strings.Builder
	if err := WriteAnalysis(&b, a); err != nil {
		t.Fatal(err)
	}
	want := `Analysis of live (8 nodes)

Credit loops: 1 (SL2VL tables; 2 channels, 2 dependencies; 0 sources, 0 destinations, 0 MLIDs)
  loop 1: SLs [0 3], unicast, 2 channels (component of 2)
    "A" (0x0000000000000001) port 1 VL 0 -> "B" (0x0000000000000002) port 2
    "B" (0x0000000000000002) port 2 VL 1 -> "A" (0x0000000000000001) port 1
`
	if b.String() != want || !a.Failed() {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// TestWriteFatTreeCounts: the fat tree's counts read as English: "1
// level", "1 switch", "1 link", and plurals otherwise (it said "1
// levels" and "link(s)").
func TestWriteFatTreeCounts(t *testing.T) {
	s, _ := simAnalyzed(t, "../tests/topologies/net.2sw2path4hca", nil)
	a, err := Analyze(t.Context(), &Env{Session: s}, AnalyzeOptions{Checks: []string{"fat-tree"}})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	writeFatTree(&b, a.FatTree)
	writeFatTree(&b, &analyze.FatTreeReport{Levels: []analyze.LevelShape{{Level: 1, Switches: 1}, {Level: 2, Switches: 3}}})
	for _, want := range []string{"Fat tree: 1 level, ", "level 1: 2 switches,", "): 2 links within level 1", "Fat tree: 2 levels, ", "level 1: 1 switch,", "level 2: 3 switches,"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "(s)") || strings.Contains(b.String(), " 1 levels") {
		t.Errorf("a count's noun is not its number's:\n%s", b.String())
	}
}
