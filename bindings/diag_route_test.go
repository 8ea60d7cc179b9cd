package bindings

import (
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
)

// TestDiagRouteFunctions: diag.ibroute, diag.dump_fts, diag.tracert and
// diag.saquery return the diag package's values as tables (the same as
// the tools' JSON), a failed route as data with its reason, and bad
// arguments as errors naming them.
func TestDiagRouteFunctions(t *testing.T) {
	L, env, out := newTestStateOpts(t, &Options{})
	ctx := t.Context()
	denv := &diag.Env{Session: env.sess}
	tr, err := diag.Tracert(ctx, denv, 1, 16, nil)
	if err != nil {
		t.Fatal(err)
	}
	ft, err := diag.IBRoute(ctx, denv, engine.LID(2), diag.LIDAddress(2), nil)
	if err != nil {
		t.Fatal(err)
	}
	src := `
local tr = diag.tracert(1, 16)
print(#tr.hops, tr.to.lid, tr.hops[1].name, tr.from.guid)
local bad, why = diag.tracert(1, 999)
print(bad.to == nil, why:find("Failed to get route information", 1, true) ~= nil)
local t = diag.ibroute(2)
print(#t.lids, t.lids[1].dest.port_guid, t.switch)
local m = diag.ibroute("lid:2", {multicast = true, all = true, start = 0xc000, last = 0xc003})
print(#m.mlids, m.mlids[1].mlid)
print(#diag.dump_fts({no_dests = true}).switches)
local r = diag.saquery{query = "LFTR", args = {"2/0"}}
print(r.sections[1].type, #r.sections[1].records, r.sections[1].records[1].fields.lid)
local sm = diag.saquery{command = "issm"}
print(#sm.sections, sm.sections[1].title, sm.sections[1].records[1].fields.endport_lid)
print(pcall(diag.ibroute, 2, {multicast = 1}))
print(pcall(diag.saquery, {query = "NoSuchQuery"}))
`
	if err := L.DoString(src); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []string{
		strings.Join([]string{strconv.Itoa(len(tr.Hops)), "16", tr.Hops[0].Name, tr.From.GUID.String()}, "\t"),
		"true\ttrue",
		strings.Join([]string{strconv.Itoa(len(ft.LIDs)), ft.LIDs[0].Dest.PortGUID.String(), "Lid 2"}, "\t"),
		"4\t49152",
		"6",
		"LFTRecord\t1\t2",
		"2\tIsSM ports\t1",
	}
	if len(lines) != len(want)+2 {
		t.Fatalf("output:\n%s", out.String())
	}
	for i, w := range want {
		if lines[i] != w {
			t.Errorf("line %d: %q, want %q", i+1, lines[i], w)
		}
	}
	if !strings.Contains(lines[7], "false") || !strings.Contains(lines[7], "option multicast: boolean expected") {
		t.Errorf("bad option: %q", lines[7])
	}
	if !strings.Contains(lines[8], "false") || !strings.Contains(lines[8], "Unknown query type NoSuchQuery") {
		t.Errorf("bad query: %q", lines[8])
	}
}
