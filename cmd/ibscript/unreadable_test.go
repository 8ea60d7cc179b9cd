package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunUnreadableExit2: through the whole run, a check that could not
// read a node (dead on the simulator: no answer after every try) is
// reported as could-not-be-read in every format and the run exits 2,
// while a check that found the fabric wrong beside it still fails. Before,
// the dead node's check failed and the run exited 1.
func TestRunUnreadableExit2(t *testing.T) {
	p := filepath.Join(t.TempDir(), "dead.lua")
	if err := os.WriteFile(p, []byte(`
plan.define{categories = {"x"}}
local f = fabric.discover()
local leaf
for _, n in ipairs(f.nodes) do if n.desc == "leaf02" then leaf = n end end
sim.faults{dead = {"leaf02"}}
plan.check("leaf02 answers", "x", function(r)
  for _, res in ipairs(fabric.sweep("portinfo", {leaf.ports[0]})) do
    if res.err then r:fail(res.err, res.port) else r:pass() end
  end
end)
plan.check("wrong", "x", function(r) r:fail("planted") end)
`), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"text":  {"ERROR leaf02 answers", "could not read: ", "timeout after", "FAIL  wrong", "1 could not complete"},
		"json":  {`"status": "error"`, `"errors": 1`},
		"tap":   {"not ok 1 - x: leaf02 answers", "status: error", "unreadable:"},
		"junit": {`type="unreadable"`, `errors="1"`, `type="fail"`},
	}
	for format, subs := range want {
		code, out, errOut := ibscript(t, "run", "--fabric", "sim:", "--timeout", "5", "--retries", "0", p, "--format", format)
		if code != 2 {
			t.Errorf("%s: exit %d, want 2\n%s\n%s", format, code, out, errOut)
		}
		for _, s := range subs {
			if !strings.Contains(out, s) {
				t.Errorf("%s: no %q in\n%s", format, s, out)
			}
		}
	}
}
