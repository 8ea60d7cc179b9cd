package bindings

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
)

// TestQueryErrorsTakesTheCLIOptions: diag.queryerrors takes
// ibqueryerrors' options by their long names and returns what diag
// returns for the same options (what `ibscript ibqueryerrors` prints as
// JSON): -c, --switch, --details, --counters, -r, -D, the PathRecord
// step; and fabric=, the nodes of a discovery given.
func TestQueryErrorsTakesTheCLIOptions(t *testing.T) {
	L, env, _ := newTestState(t)
	denv := &diag.Env{Session: env.sess}
	for _, c := range []struct {
		lua string
		o   diag.QueryErrorsOptions
	}{
		{`{suppress = {"PortXmitWait,LinkDownedCounter"}, suppress_common = true, switch = true, details = true, path_records = true}`,
			diag.QueryErrorsOptions{Suppress: []string{"PortXmitWait", "LinkDownedCounter", diag.CommonSuppressed}, Types: []topo.NodeType{topo.Switch}, Details: true, PathRecords: true}},
		{`{counters = true, ca = true, report_port = true}`, diag.QueryErrorsOptions{CountersOnly: true, Types: []topo.NodeType{topo.CA}, ReportPort: true}},
		{`{direct = "0,1", data = true}`, diag.QueryErrorsOptions{Path: []uint8{0, 1}, Data: true}},
		{`{port_guid = "0x0002c90300f00000"}`, diag.QueryErrorsOptions{PortGUID: 0x0002c90300f00000}},
		// the nodes of a discovery given, as of its own
		{`{fabric = fabric.discover(), switch = true}`, diag.QueryErrorsOptions{Types: []topo.NodeType{topo.Switch}}},
		// validate.lua's counters check on a port that is not planarized:
		// its discovery's nodes, every type, as of a discovery of its own
		{`{fabric = fabric.discover{planes = true}, passes = 4, skip_no_lid = true}`, diag.QueryErrorsOptions{Passes: 4, SkipNoLID: true}},
	} {
		if err := L.DoString(`qe_result = diag.queryerrors` + c.lua); err != nil {
			t.Fatalf("%s: %v", c.lua, err)
		}
		q, err := diag.QueryErrorsOf(t.Context(), denv, c.o)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(q)
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		// the one key the Lua table adds to diag's JSON
		v.(map[string]any)["summary"].(map[string]any)["ports_not_read"] = json.Number(strconv.Itoa(q.PortsNotRead))
		gb, _ := json.Marshal(luaToAny(L.GetGlobal("qe_result")))
		wb, _ := json.Marshal(luaToAny(jsonToLua(L, v)))
		got, want := string(gb), string(wb)
		if got != want || !strings.Contains(got, "summary") {
			t.Errorf("diag.queryerrors%s:\n%s\nwant (diag):\n%s", c.lua, got, want)
		}
	}
}

// luaToAny is a Lua value as Go values (tables as maps by their keys'
// text), for comparing two whole tables; counters' values are left out
// (the data counters count the MADs of the runs compared).
func luaToAny(v lua.LValue) any {
	t, ok := v.(*lua.LTable)
	if !ok {
		return v.String()
	}
	m := map[string]any{}
	t.ForEach(func(k, el lua.LValue) {
		if k.String() != "value" && k.String() != "human" {
			m[k.String()] = luaToAny(el)
		}
	})
	return m
}
