package bindings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

func TestFabricSaveLoadDiff(t *testing.T) {
	L, _ := newPlanState(t, nil)
	dir := t.TempDir()
	names := filepath.Join(dir, "names")
	os.WriteFile(names, []byte("# node-name-map\n0x0002c90300f00001 \"rack2-leaf\"\n"), 0o644)
	L.SetGlobal("dir", lua.LString(dir))
	err := DoString(L, `
		local f = fabric.discover()
		fabric.save(f, dir .. "/f.json")
		fabric.save(f, dir .. "/f.topo", {format = "ibnetdiscover", node_name_map = dir .. "/names"})
		local g = fabric.load(dir .. "/f.json")
		assert(#g.nodes == #f.nodes and #g.links == #f.links)
		assert(#fabric.diff(g, f) == 0)
		-- the name map renamed one node: an info-level change, nothing else
		local nd = fabric.diff(fabric.load(dir .. "/f.topo"), f)
		assert(#nd == 1 and nd[1].severity == "info" and nd[1].kind == "field-changed", #nd)
		-- a node gone from the current fabric: the reference has more
		local d = fabric.diff(f, fabric.load("../tests/topologies/net.2sw2path4hca"))
		assert(d[1].severity == "critical", d[1].severity)`)
	if err != nil {
		t.Fatal(err)
	}
	topoText, _ := os.ReadFile(filepath.Join(dir, "f.topo"))
	if !strings.Contains(string(topoText), `"rack2-leaf"`) {
		t.Errorf("node name map not applied:\n%s", topoText)
	}
	for _, c := range []struct{ chunk, want string }{
		{`fabric.load("/nonexistent")`, "fabric.load: open /nonexistent"},
		{`fabric.save(fabric.discover(), "/tmp/x", {format = "xml"})`, `fabric.save: format "xml"`},
		{`fabric.save(fabric.discover(), "/tmp/x", {fromat = "json"})`, `unknown option "fromat"`},
		{`fabric.diff({}, {})`, "a fabric from fabric.discover or fabric.load expected"},
		{`fabric.sweep("portcounters", fabric.discover().nodes[1].ports, {fields = {"nope"}})`, `has no field "nope"`},
		{`fabric.sweep("bogus", {})`, `unknown sweep "bogus"`},
	} {
		if err := DoString(L, c.chunk); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.chunk, err, c.want)
		}
	}
}
