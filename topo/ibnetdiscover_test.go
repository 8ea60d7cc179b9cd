package topo

import (
	"strings"
	"testing"
	"time"
)

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

// TestWriteGrouping: ibnetdiscover -g on a fabric without chassis puts
// the nodes under "Non-Chassis Nodes" and ends each switchguid line in a
// tab and "# " (infiniband-diags' output on ibsim, byte for byte).
func TestWriteGrouping(t *testing.T) {
	sw := &Node{Type: Switch, GUID: 0x200000, SysGUID: 0x200000, NumPorts: 1, Desc: "sw"}
	sw.Ports = []*Port{{Node: sw, Num: 0, GUID: 0x200000, LID: 2}, {Node: sw, Num: 1}}
	f := &Fabric{Nodes: []*Node{sw}, Origin: sw.Ports[0]}
	var b strings.Builder
	if err := WriteIBNetDiscover(&b, f, &WriteOptions{Time: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), Grouping: true}); err != nil {
		t.Fatal(err)
	}
	want := "#\n# Topology file: generated on Tue Nov 24 12:00:00 2026\n#\n" +
		"# Initiated from node 0000000000200000 port 0000000000200000\n" +
		"\nNon-Chassis Nodes\n" +
		"\nvendid=0x0\ndevid=0x0\nsysimgguid=0x200000\nswitchguid=0x200000(200000)\t# \n" +
		"Switch\t1 \"S-0000000000200000\"\t\t# \"sw\" base port 0 lid 2 lmc 0\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}
}

// TestWriteFull: ibnetdiscover -f ends every link line, a switch's and a
// CA's, in the port's " s=%d w=%d v=%d" (LinkSpeedActive, LinkWidthActive,
// VLCap as PortInfo gives them), as infiniband-diags prints them on ibsim.
func TestWriteFull(t *testing.T) {
	sw := &Node{Type: Switch, GUID: 0x200000, SysGUID: 0x200000, NumPorts: 1, Desc: "sw"}
	ca := &Node{Type: CA, GUID: 0x100000, SysGUID: 0x100000, NumPorts: 1, Desc: "ca"}
	sw.Ports = []*Port{{Node: sw, Num: 0, GUID: 0x200000, LID: 2},
		{Node: sw, Num: 1, WidthActive: 2, SpeedActive: 4, VLCap: 4}}
	ca.Ports = []*Port{nil, {Node: ca, Num: 1, GUID: 0x100001, LID: 3, WidthActive: 2, SpeedActive: 4, VLCap: 3}}
	sw.Ports[1].Remote, ca.Ports[1].Remote = ca.Ports[1], sw.Ports[1]
	f := &Fabric{Nodes: []*Node{ca, sw}, Origin: ca.Ports[1]}
	var b strings.Builder
	if err := WriteIBNetDiscover(&b, f, &WriteOptions{Time: time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC), Full: true}); err != nil {
		t.Fatal(err)
	}
	want := "#\n# Topology file: generated on Tue Nov 24 12:00:00 2026\n#\n" +
		"# Initiated from node 0000000000100000 port 0000000000100001\n" +
		"\nvendid=0x0\ndevid=0x0\nsysimgguid=0x200000\nswitchguid=0x200000(200000)\n" +
		"Switch\t1 \"S-0000000000200000\"\t\t# \"sw\" base port 0 lid 2 lmc 0\n" +
		"[1]\t\"H-0000000000100000\"[1](100001) \t\t# \"ca\" lid 3 4xQDR s=4 w=2 v=4\n" +
		"\nvendid=0x0\ndevid=0x0\nsysimgguid=0x100000\ncaguid=0x100000\n" +
		"Ca\t1 \"H-0000000000100000\"\t\t# \"ca\"\n" +
		"[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 3 lmc 0 \"sw\" lid 2 4xQDR s=4 w=2 v=3\n"
	if b.String() != want {
		t.Errorf("got:\n%q\nwant:\n%q", b.String(), want)
	}
}
