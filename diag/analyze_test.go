package diag

import (
	"context"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/sim"
)

// TestAnalyzeDeadSwitch: a spine that stops answering after the fabric
// came up is missed by discovery; Analyze still runs every check on what
// it found, names the missed route in Errors (the run fails) and counts
// the routes through the dead switch as unknown, not as faults.
func TestAnalyzeDeadSwitch(t *testing.T) {
	f, err := sim.Load("../tests/topologies/fattree-50.net", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tr, err := f.Open(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.New(tr, &engine.Options{Timeout: 20e6, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
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
