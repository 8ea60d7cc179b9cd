package topo

import "testing"

// TestMappedNameKeepsWhatCToolsPrint: a node-name-map's name is printed as
// the C tools print it (its bytes as they are: UTF-8, a tab), except the
// bytes that could drive a terminal (C0 controls, DEL, C1 controls) and
// bytes that are not UTF-8, which become spaces; a description from the
// wire is cleaned byte by byte as clean_nodedesc does.
func TestMappedNameKeepsWhatCToolsPrint(t *testing.T) {
	n := &Node{GUID: 7, Desc: "h\u00f6st"}
	for _, c := range []struct{ name, want string }{
		{"plain", "plain"},
		{"h\u00f6st \u65e5\u672c", "h\u00f6st \u65e5\u672c"},
		{"tab\there", "tab\there"},
		{"esc\x1b[1m", "esc [1m"},
		{"del\x7fx", "del x"},
		{"c1\u0085x", "c1  x"},
		{"bad\xffx", "bad x"},
		{"nul\x00x", "nul x"},
	} {
		if got := MappedName(n, map[uint64]string{7: c.name}); got != c.want {
			t.Errorf("MappedName(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := MappedName(n, nil); got != "h  st" {
		t.Errorf("MappedName without a map = %q, want the description cleaned byte by byte", got)
	}
}
