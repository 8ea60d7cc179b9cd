package main

import (
	"strings"
	"testing"
)

// TestSimFaultsModule drives fault injection from Lua: a lossy sweep
// still finds the 22 nodes of the default fabric, a dead leaf cuts off
// what is behind it, and a bad probability raises an error.
func TestSimFaultsModule(t *testing.T) {
	code, out, errOut := ibscript(t, "--fabric", "sim:", "-e", `
		sim.faults{seed=1, loss=0.05, duplicate=0.01, reorder=0.02}
		local f = fabric.discover()
		local s = sim.stats()
		print(#f.nodes, s.requests > 0, s.lost_requests + s.lost_responses > 0)
		sim.faults{dead={"leaf01"}}
		f = fabric.discover()
		print(#f.nodes, #f.errors > 0)
		sim.faults{}
		sim.link("node002", 1, false)
		print(#fabric.discover().nodes)
		sim.link("node002", 1, true)
		print(#fabric.discover().nodes)
		print(pcall(sim.faults, {loss=3}))`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := "22\ttrue\ttrue\n1\ttrue\n21\n22\nfalse\t"
	if !strings.HasPrefix(out, want) || !strings.Contains(out, "not a probability") {
		t.Errorf("output %q, want prefix %q and 'not a probability'", out, want)
	}
}

// TestSimModulePresent: a sim backend gets the sim module (run.go sets
// bindings.Options.Sim only for one).
func TestSimModulePresent(t *testing.T) {
	code, out, _ := ibscript(t, "--fabric", "sim:", "-e", `print(type(sim))`)
	if code != 0 || strings.TrimSpace(out) != "table" {
		t.Errorf("exit %d, output %q", code, out)
	}
}
