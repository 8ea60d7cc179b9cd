package bindings

import (
	"strings"
	"testing"
)

// TestDiagAnalyzeFunctions: diag.analyze, diag.nodes_using and
// diag.ibfindnodesusing return the diag package's values as tables on the
// bundled fabric, and bad arguments are errors naming them.
func TestDiagAnalyzeFunctions(t *testing.T) {
	L, _, out := newTestStateOpts(t, &Options{})
	src := `
local a = diag.analyze{checks = {"credit-loops", "routes", "fat-tree"}}
print(a.schema, a.credit_loops.count, a.credit_loops.sl2vl, a.routes.count, a.routes.unreachable, #a.fat_tree.levels, #a.errors, a.balance == nil)
local u = diag.nodes_using{switch = "leaf01", port = 1}
print(#u.out.destinations, u.out.destinations[1].port.node.desc, u.out.remote.node.desc, u["in"].destinations == nil, #u["in"].sources)
local r = diag.ibfindnodesusing{switch = "0x0002c90300f00000", port = 1}
print(r.found, r.out[1], r.remote_desc)
print(diag.ibfindnodesusing{switch = "0x1", port = 1}.found)
print(pcall(diag.analyze, {checks = {"loops"}}))
print(pcall(diag.analyze, {chekcs = 1}))
print(pcall(diag.nodes_using, {switch = "nosuch", port = 1}))
print(pcall(diag.nodes_using, {switch = "leaf01", port = 99}))
print(pcall(diag.analyze, {load = 5}))
`
	if err := L.DoString(src); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		"ibscript.analyze.v1\t0\ttables\t0\t0\t2\t0\ttrue",
		"1\tnode001 HCA-1\tnode001 HCA-1\ttrue\t1",
		"true\tnode001 HCA-1\tnode001 HCA-1",
		"false",
	}
	errs := []string{`unknown check "loops"`, `unknown option "chekcs"`, `no switch "nosuch"`, `has no port 99`, `load: want a file name, got number`}
	if len(lines) != len(want)+len(errs) {
		t.Fatalf("output:\n%s", out.String())
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d: %q, want %q", i+1, lines[i], w)
		}
	}
	for i, e := range errs {
		if l := lines[len(want)+i]; !strings.HasPrefix(l, "false\t") || !strings.Contains(l, e) {
			t.Errorf("error %d: %q, want false and %q", i+1, l, e)
		}
	}
}
