package bindings

import (
	"regexp"
	"testing"
)

// TestSAErrorTexts pins the sa module's messages.
func TestSAErrorTexts(t *testing.T) {
	checkChunkErrors(t, []chunkError{
		{`sa.get_table("NodeRecords")`, `^chunk:1: sa.get_table: unknown SA record "NodeRecords" \(sa.records\(\) lists them\)$`},
		{`sa.get_table("NodeRecord", {nod_type = 2})`, `^chunk:1: sa.get_table: NodeRecord has no field "nod_type"$`},
		{`sa.get_table("NodeRecord", {node_type = 300})`, `^chunk:1: sa.get_table: NodeRecord field "node_type": value 300 out of range \(max 255\)$`},
		{`sa.get_table("LinearForwardingTableRecord", {port0 = 1})`, `^chunk:1: sa.get_table: LinearForwardingTableRecord field "port0" is not a component of the query$`},
		{`sa.get("NodeRecord", {lid = 999})`, `^chunk:1: sa.get: .*no records \(ERR_NO_RECORDS\)`},
		{`sa.get("NodeRecord", {})`, `^chunk:1: sa.get: .*too many records`},
		{`sa.get("NodeRecord")`, `^chunk:1: bad argument #2 to sa.get \(fields: table expected, got nil\)$`},
		{`sa.path("dr:0,1", 1)`, `^chunk:1: sa.path: argument #1: a LID is needed, got `},
		{`sa.path(1, 4000)`, `^chunk:1: sa.path: lid 1 -> lid 4000: .*no records`},
	})
}

// TestSAResults: get_table answers arrays of decoded tables, one per
// record, keyed by the layout's snake_case names.
func TestSAResults(t *testing.T) {
	L, _, _ := newTestState(t)
	err := DoString(L, `
		local all = sa.get_table("NodeRecord")
		local cas = sa.get_table("NodeRecord", {node_type = 1})
		local one = sa.get("NodeRecord", {node_guid = cas[1].node_guid})
		result = #all .. " " .. #cas .. " " .. tostring(one.lid == cas[1].lid) .. " " .. type(one.node_guid)`)
	if err != nil {
		t.Fatal(err)
	}
	if got := L.GetGlobal("result").String(); !regexp.MustCompile(`^\d+ \d+ true string$`).MatchString(got) {
		t.Errorf("result %q", got)
	}
}
