package diag_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/sim/simtest"
)

// oddNameNet is a fabric whose CA's description has a tab and UTF-8.
const oddNameNet = "Switch\t4 \"S1\" # \"s1\" enhanced port 0\n[1]\t\"H1\"[1]\n[2]\t\"H2\"[1]\n\n" +
	"Hca\t1 \"H1\" # \"plain\"\n[1]\t\"S1\"[1]\n\n" +
	"Hca\t1 \"H2\" # h2\ttab é\n[1]\t\"S1\"[2]\n"

// TestSAQueryNameCleaned: saquery's -N/-L/-l/-G find a node by its
// description as clean_nodedesc leaves it (a tab and each byte of 'é' a
// space), because remap_node_name cleans the record's description in
// place before saquery compares (util/node_name_map.c); the raw text
// finds nothing, unless the node name map names the node (then the
// description stays raw, and the mapped name finds it too). NR NAME
// resolves the raw text (get_lid_from_name). The C tool on ibsim: seeds
// 9 and 14 of TestRandomTopologies ('ca0\ttab\there', a 63-byte
// description ending in half a 'ü').
func TestSAQueryNameCleaned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "net.odd-name")
	if err := os.WriteFile(path, []byte(oddNameNet), 0o644); err != nil {
		t.Fatal(err)
	}
	f := simtest.Load(t, path, nil)
	env := &diag.Env{Session: attachSession(t, f, "H1", &engine.Options{Retries: 1})}
	raw, clean := "h2\ttab é", "h2 tab   "
	// H2's node GUID, from its NodeRecord (NR NAME finds the raw text).
	o := diag.NewSAQueryOptions()
	o.QueryType, o.Args = "NR", []string{raw}
	res, err := diag.SAQuery(t.Context(), env, o)
	if err != nil || len(res.Sections) != 1 || len(res.Sections[0].Records) != 1 {
		t.Fatalf("saquery NR %q: %v %+v", raw, err, res)
	}
	h2, _ := res.Sections[0].Records[0].Fields["node_guid"].(diag.GUID)
	for _, c := range []struct {
		names map[uint64]string
		print diag.SANodePrint
		qt    string
		name  string
		want  int // records found
	}{
		{nil, diag.SANodeLIDOnly, "", raw, 0},
		{nil, diag.SANodeLIDOnly, "", clean, 1},
		{nil, diag.SANodeAll, "", raw, 0},
		{nil, diag.SANodeGUIDOnly, "", clean, 1},
		{nil, diag.SANodeAll, "NR", raw, 1},
		{map[uint64]string{uint64(h2): "mapped"}, diag.SANodeLIDOnly, "", raw, 1},
		{map[uint64]string{uint64(h2): "mapped"}, diag.SANodeLIDOnly, "", "mapped", 1},
		{map[uint64]string{uint64(h2): "mapped"}, diag.SANodeLIDOnly, "", clean, 0},
	} {
		env.NodeNames = c.names
		o := diag.NewSAQueryOptions()
		if c.qt == "" {
			o.Command = diag.SANodeRecords
		}
		o.QueryType, o.NodePrint, o.Args = c.qt, c.print, []string{c.name}
		res, err := diag.SAQuery(t.Context(), env, o)
		got := 0
		if err == nil && len(res.Sections) == 1 {
			got = len(res.Sections[0].Records)
		}
		if err != nil || got != c.want {
			t.Errorf("saquery %s print %d %q (map %v): %d records, %v; want %d", c.qt, c.print, c.name, c.names, got, err, c.want)
		}
	}
}
