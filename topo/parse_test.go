package topo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"testing"
	"testing/fstest"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// parseString parses text as file name in an FS holding extra files.
func parseString(t testing.TB, name, text string, extra fstest.MapFS) (*Fabric, error) {
	t.Helper()
	fsys := fstest.MapFS{name: {Data: []byte(text)}}
	for k, v := range extra {
		fsys[k] = v
	}
	p := Parser{FS: fsys}
	return p.ParseFile(name)
}

func mustParse(t testing.TB, name, text string) *Fabric {
	t.Helper()
	f, err := parseString(t, name, text, nil)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return f
}

// nodeSummary is what the GUID-rule tests compare.
type nodeSummary struct {
	ID, Desc  string
	Type      NodeType
	NumPorts  int
	GUID      uint64
	SysGUID   uint64
	VendorID  uint32
	DeviceID  uint16
	PortGUIDs []uint64
}

func summarize(f *Fabric) []nodeSummary {
	var out []nodeSummary
	for _, n := range f.Nodes {
		s := nodeSummary{ID: n.ID, Desc: n.Desc, Type: n.Type, NumPorts: n.NumPorts,
			GUID: n.GUID, SysGUID: n.SysGUID, VendorID: n.VendorID, DeviceID: n.DeviceID}
		for _, p := range n.Ports {
			if p != nil {
				s.PortGUIDs = append(s.PortGUIDs, p.GUID)
			}
		}
		out = append(out, s)
	}
	return out
}

func TestParseGUIDRules(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []nodeSummary
	}{
		{
			name: "defaults",
			text: `
Switch 2 "S1"
[1] "H1"[1]
[2] "H2"[2]

Hca 2 "H1"
[1] "S1"[1]

Ca 2 "H2"
[2] "S1"[2]

Switch 1 "S2"

Rt 1 "R1"
`,
			want: []nodeSummary{
				{ID: "S1", Desc: "S1", Type: Switch, NumPorts: 2, GUID: 0x200000, SysGUID: 0x200000,
					PortGUIDs: []uint64{0x200000, 0x200000, 0x200000}},
				{ID: "H1", Desc: "H1", Type: CA, NumPorts: 2, GUID: 0x100000, SysGUID: 0x100000,
					PortGUIDs: []uint64{0x100001, 0x100002}},
				{ID: "H2", Desc: "H2", Type: CA, NumPorts: 2, GUID: 0x100003, SysGUID: 0x100003,
					PortGUIDs: []uint64{0x100004, 0x100005}},
				{ID: "S2", Desc: "S2", Type: Switch, NumPorts: 1, GUID: 0x200001, SysGUID: 0x200001,
					PortGUIDs: []uint64{0x200001, 0x200001}},
				{ID: "R1", Desc: "R1", Type: Router, NumPorts: 1, GUID: 0, SysGUID: 0,
					PortGUIDs: []uint64{1}},
			},
		},
		{
			name: "absolute and relative bases, next-node-only values",
			text: `
switchguid=0xabc000
caguid=0x5000
devid=0x1003
vendid=0x2c9
sysimgguid=0x777
Switch 1 "S1" # "leaf one" enhanced port 0 lid 7 lmc 1

Hca 1 "H1" # host one

caguid+0x100
hcaguids=0x9000
Hca 1 "H2"

caguid+0x10
Hca 1 "H3"

rtguid=0x40
Rt 2 "R1"
`,
			want: []nodeSummary{
				{ID: "S1", Desc: "leaf one", Type: Switch, NumPorts: 1, GUID: 0xabc000, SysGUID: 0x777,
					VendorID: 0x2c9, DeviceID: 0x1003, PortGUIDs: []uint64{0xabc000, 0xabc000}},
				{ID: "H1", Desc: "host one", Type: CA, NumPorts: 1, GUID: 0x5000, SysGUID: 0x5000,
					DeviceID: 0x1003, PortGUIDs: []uint64{0x5001}},
				{ID: "H2", Desc: "H2", Type: CA, NumPorts: 1, GUID: 0x9000, SysGUID: 0x9000,
					DeviceID: 0x1003, PortGUIDs: []uint64{0x9001}},
				{ID: "H3", Desc: "H3", Type: CA, NumPorts: 1, GUID: 0x9010, SysGUID: 0x9010,
					DeviceID: 0x1003, PortGUIDs: []uint64{0x9011}},
				{ID: "R1", Desc: "R1", Type: Router, NumPorts: 2, GUID: 0x40, SysGUID: 0x40,
					DeviceID: 0x1003, PortGUIDs: []uint64{0x41, 0x42}},
			},
		},
		{
			name: "module prefix",
			text: `
module="m1"
Switch 1 "S1"
[1] "H1"[1]

Hca 1 "H1"
[1] "m1#S1"[1]
`,
			want: []nodeSummary{
				{ID: "m1#S1", Desc: "m1#S1", Type: Switch, NumPorts: 1, GUID: 0x200000, SysGUID: 0x200000,
					PortGUIDs: []uint64{0x200000, 0x200000}},
				{ID: "m1#H1", Desc: "m1#H1", Type: CA, NumPorts: 1, GUID: 0x100000, SysGUID: 0x100000,
					PortGUIDs: []uint64{0x100001}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustParse(t, "net.test", tt.text)
			if diff := cmp.Diff(tt.want, summarize(f)); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseLinksAndPortAttributes(t *testing.T) {
	f := mustParse(t, "net.test", `
width=3
speed=7
Switch 4 "S1" # "s one" base port 0 lid 7 lmc 1
[1] "H1"[1] w=2 s=4
[2] "H2"[1]	# "H2" lid 9 12xEDR
[3] "S1"[4]
[4] "S1"[3]

rtguid=0x300000
Rt 2 "R1"
[1] "S2"[1]	# lid 5 lmc 1 "S2" lid 7 1xSDR
[2] "S2"[2] w=1 s=1

Switch 2 "S2"
[1] "R1"[1]
[2] "R1"[2]

Hca 1 "H1"
[1] "S1"[1] w=2 s=4 e=2

Ca 1 "H2"
[1](100004) "S1"[2]	# lid 9 lmc 2 "s one" lid 7 12xEDR
`)
	s1, h1, h2, r1 := f.NodeByID("S1"), f.NodeByID("H1"), f.NodeByID("H2"), f.NodeByID("R1")
	type portAttrs struct {
		LID               uint16
		LMC               uint8
		Width, Speed, Ext uint8
		RemoteNode        string
		RemotePort        int
	}
	get := func(p *Port) portAttrs {
		a := portAttrs{LID: p.LID, LMC: p.LMC, Width: p.WidthEnabled, Speed: p.SpeedEnabled, Ext: p.SpeedExtEnabled}
		if p.Remote != nil {
			a.RemoteNode, a.RemotePort = p.Remote.Node.ID, p.Remote.Num
		}
		return a
	}
	got := map[string]portAttrs{
		"S1/0": get(s1.Ports[0]), "S1/1": get(s1.Ports[1]), "S1/2": get(s1.Ports[2]),
		"S1/3": get(s1.Ports[3]), "H1/1": get(h1.Ports[1]), "H2/1": get(h2.Ports[1]),
		"R1/1": get(r1.Ports[1]), "R1/2": get(r1.Ports[2]),
	}
	want := map[string]portAttrs{
		"S1/0": {LID: 7, LMC: 1, Width: 3, Speed: 7},
		"S1/1": {Width: 2, Speed: 4, RemoteNode: "H1", RemotePort: 1},
		"S1/2": {Width: 11, Speed: 7, Ext: 3, RemoteNode: "H2", RemotePort: 1},
		"S1/3": {Width: 3, Speed: 7, RemoteNode: "S1", RemotePort: 4},
		"H1/1": {Width: 2, Speed: 4, Ext: 2, RemoteNode: "S1", RemotePort: 1},
		"H2/1": {LID: 9, LMC: 2, Width: 11, Speed: 7, Ext: 3, RemoteNode: "S1", RemotePort: 2},
		// ibsim reads no "lid L lmc M" nor width and speed after the
		// quotes on router lines; w= and s= still apply
		"R1/1": {Width: 3, Speed: 7, RemoteNode: "S2", RemotePort: 1},
		"R1/2": {Width: 1, Speed: 1, RemoteNode: "S2", RemotePort: 2},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if s1.EnhancedPort0 {
		t.Error("EnhancedPort0 set by \"base port 0\"")
	}
	if n := len(f.Links()); n != 5 {
		t.Errorf("%d links, want 5", n)
	}
}

// TestParseXDR: XDR is extended speed bit 32, as libibnetdisc aggregates
// PortInfo's LinkSpeedExt*2 fields: extspeed= and e= take it, and
// ibnetdiscover's "4xXDR" enables every speed up to it; a bit past it is
// refused.
func TestParseXDR(t *testing.T) {
	f := mustParse(t, "net.xdr", `
extspeed=0x2f
Switch 2 "S1"
[1] "H1"[1]	# "H1" lid 2 4xXDR
[2] "H2"[1] e=8

Hca 1 "H1"
[1] "S1"[1]

Hca 1 "H2"
[1] "S1"[2]
`)
	s1 := f.NodeByID("S1")
	if e := s1.Ports[1].SpeedExtEnabled; e != 1|2|4|8|32 {
		t.Errorf("4xXDR: SpeedExtEnabled %#x", e)
	}
	if e := s1.Ports[2].SpeedExtEnabled; e != 8 {
		t.Errorf("e=8: SpeedExtEnabled %#x", e)
	}
	if e := f.NodeByID("H2").Ports[1].SpeedExtEnabled; e != 0x2f {
		t.Errorf("extspeed=0x2f: SpeedExtEnabled %#x", e)
	}
	if _, err := Parse("net.bad", strings.NewReader("extspeed=0x40\nHca 1 \"H\"\n")); err == nil {
		t.Error("extspeed=0x40 accepted")
	}
}

func TestParseRecordEnd(t *testing.T) {
	// A record ends after its port count or at a blank line; comment lines
	// inside do not end it.
	f := mustParse(t, "net.test", `Switch 3 "S1"
# a comment inside the record
[1] "H1"[1]

Hca 1 "H1"
[1] "S1"[1]
Hca 1 "H2"
`)
	if got := len(f.Nodes); got != 3 {
		t.Fatalf("%d nodes, want 3", got)
	}
}

func TestParseInclude(t *testing.T) {
	extra := fstest.MapFS{
		"sub/a.net":     {Data: []byte("include \"b.net\"\nHca 1 \"H1\"\n[1] \"S1\"[1]\n")},
		"sub/b.net":     {Data: []byte("caguid=0x7000\n")},
		"loop/loop.net": {Data: []byte("include \"loop.net\"\n")},
	}
	f, err := parseString(t, "top.net", "Switch 1 \"S1\"\n[1] \"H1\"[1]\n\ninclude \"sub/a.net\"\n", extra)
	if err != nil {
		t.Fatal(err)
	}
	if h := f.NodeByID("H1"); h == nil || h.GUID != 0x7000 {
		t.Fatalf("H1 = %v, want GUID 0x7000 from the nested include", h)
	}
	_, err = parseString(t, "top.net", "include \"loop/loop.net\"\n", extra)
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "nested more than 9 deep") {
		t.Fatalf("include loop: got %v", err)
	}
	if pe.File != "loop/loop.net" || pe.Line != 1 {
		t.Errorf("include loop error at %s:%d", pe.File, pe.Line)
	}
	_, err = parseString(t, "top.net", "\ninclude \"missing.net\"\n", extra)
	if !errors.Is(err, fs.ErrNotExist) || !strings.HasPrefix(err.Error(), "top.net:2: include \"missing.net\"") {
		t.Fatalf("missing include: got %v", err)
	}
}

func TestParseIncludeOS(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("top.net", "include \"d/sw.net\"\nHca 1 \"H1\"\n[1] \"S1\"[1]\n")
	write("d/sw.net", "include \"opts.net\"\nSwitch 1 \"S1\"\n[1] \"H1\"[1]\n")
	write("d/opts.net", "switchguid=0x42\n")
	f, err := ParseFile(filepath.Join(dir, "top.net"))
	if err != nil {
		t.Fatal(err)
	}
	if s := f.NodeByID("S1"); s.GUID != 0x42 {
		t.Errorf("S1 GUID 0x%x, want 0x42", s.GUID)
	}
}

func TestParseErrors(t *testing.T) {
	long := "# " + strings.Repeat("x", 300)
	tests := []struct {
		name, text, want string
	}{
		{"port out of range", "Switch 8 \"Switch1\"\n[9] \"H\"[1]\n", `net.bad:2: port 9 of "Switch1" out of range (8 ports)`},
		{"port zero", "Switch 8 \"Switch1\"\n[0] \"H\"[1]\n", `net.bad:2: port 0 of "Switch1" out of range (8 ports)`},
		{"remote port out of range", "Switch 2 \"S\"\n[1] \"H\"[3]\n\nHca 2 \"H\"\n[1] \"S\"[1]\n",
			`net.bad:2: "S"[1]: port 3 of "H" out of range (2 ports)`},
		{"unknown remote", "Hca 1 \"H\"\n[1] \"Nope\"[1]\n", `net.bad:2: "H"[1]: unknown remote node "Nope"`},
		{"one-sided link", "Switch 2 \"S\"\n[1] \"H\"[1]\n\nHca 1 \"H\"\n",
			`net.bad:2: "S"[1] is cabled to "H"[1], but "H"[1] has no port line for it`},
		{"inconsistent link", "Switch 2 \"S\"\n[1] \"H\"[1]\n[2] \"H\"[2]\n\nHca 2 \"H\"\n[1] \"S\"[2]\n[2] \"S\"[1]\n",
			`net.bad:2: "S"[1] is cabled to "H"[1], but "H"[1] is cabled to "S"[2] (net.bad:6)`},
		{"self link", "Switch 2 \"S\"\n[1] \"S\"[1]\n", `net.bad:2: "S"[1] is cabled to itself`},
		{"duplicate id", "Hca 1 \"H\"\n\nHca 1 \"H\"\n", `net.bad:3: duplicate node id "H" (first at net.bad:1)`},
		{"duplicate node GUID", "Hca 1 \"H1\"\n\ncaguid=0x100000\nHca 1 \"H2\"\n",
			`net.bad:4: duplicate GUID 0x0000000000100000: node GUID of "H2" and node GUID of "H1"`},
		{"duplicate port GUID", "Hca 2 \"H1\"\n\nswitchguid=0x100002\nSwitch 1 \"S\"\n",
			`net.bad:4: duplicate GUID 0x0000000000100002: node GUID of "S" and port 2 GUID of "H1"`},
		{"no common width", "Switch 1 \"S\"\n[1] \"H\"[1] w=1\n\nHca 1 \"H\"\n[1] \"S\"[1] w=2\n",
			`net.bad:2: "S"[1] (width mask 1) and "H"[1] (width mask 2) have no common link width`},
		{"no common speed", "speed=1\nSwitch 1 \"S\"\n[1] \"H\"[1]\n\nHca 1 \"H\"\n[1] \"S\"[1] s=4\n\n",
			`net.bad:3: "S"[1] (speed mask 1) and "H"[1] (speed mask 4) have no common link speed`},
		{"bad number", "caguid=0xzz\n", `net.bad:1: bad number "0xzz" for caguid`},
		{"bad relative number", "caguid+12q\n", `net.bad:1: bad number "12q" for caguid`},
		{"bad port count", "Switch x \"S\"\n", `net.bad:1: bad port count "x"`},
		{"port count range", "Hca 300 \"H\"\n", `net.bad:1: port count 300 out of range (1-254: IBA numbers ports up to 254, 255 is reserved)`},
		{"bad lid", "Switch 1 \"S\" # \"d\" lid 0xq\n", `net.bad:1: bad number "0xq" after "lid"`},
		{"lid range", "Switch 1 \"S\" # \"d\" lid 49152\n", `net.bad:1: lid 49152 out of the unicast range (1-0xbfff)`},
		{"bad width", "width=0\n", `net.bad:1: bad width 0 (want 1..31)`},
		{"bad speed", "speed=9\n", `net.bad:1: bad speed 9 (want 1..7)`},
		{"bad port option", "Hca 1 \"H\"\n[1] \"S\"[1] w=40\n", `net.bad:2: bad port option "w=40" (want 1..31)`},
		{"bad port option number", "Hca 1 \"H\"\n[1] \"S\"[1] s=q\n", `net.bad:2: bad number "q" in port option "s=q"`},
		{"line too long", "\n" + long + "\n", `net.bad:2: line too long (302 > 255 characters)`},
		{"very long line", "\n\n" + strings.Repeat("y", 70000), `net.bad:3: line too long (more than 255 characters)`},
		{"missing id", "Switch 2\n", `net.bad:1: missing quoted node id`},
		{"reserved id char", "Switch 2 \"a#b\"\n", `net.bad:1: bad node id "a#b": '#' and '@' are reserved`},
		{"port listed twice", "Switch 4 \"S\"\n[1] \"H\"[1]\n[1] \"H\"[1]\n", `net.bad:3: port 1 of "S" listed twice (first at line 2)`},
		{"stray port line", "Hca 1 \"H\"\n[1] \"S\"[1]\n[2] \"S\"[2]\n", `net.bad:3: port line outside a node record (more port lines than the header's port count?)`},
		{"swallowed header", "Hca 2 \"H\"\n[1] \"S\"[1]\nSwitch 2 \"S\"\n",
			`net.bad:3: "Switch 2 \"S\"" ends the record of "H" and would be ignored; put a blank line before it`},
		{"alias", "Switch 2 \"S\"\n@[1] \"a\"\n", `net.bad:2: port aliases ('@' lines) are not supported`},
		{"bad remote port", "Hca 1 \"H\"\n[1] \"S\"[0]\n", `net.bad:2: bad remote port "0"`},
		{"missing remote", "Hca 1 \"H\"\n[1] S[1]\n", `net.bad:2: port 1 of "H": missing quoted remote node id`},
		{"include syntax", "include nothing\n", `net.bad:1: include: missing quoted file name`},
		{"module too long", "module=\"" + strings.Repeat("m", 21) + "\"\n", `net.bad:1: module prefix "mmmmmmmmmmmmmmmmmmmmm" too long (max 20)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseString(t, "net.bad", tt.text, nil)
			if err == nil {
				t.Fatalf("no error; want %s", tt.want)
			}
			if f != nil {
				t.Error("fabric returned with an error")
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Errorf("error %T is not a *ParseError", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("error\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestParseIgnored checks lines that ibsim ignores (or runs) are accepted.
func TestParseIgnored(t *testing.T) {
	f := mustParse(t, "net.test", `# header
pdebug=1
do Error "H1"[1] 10
some other text
  Switch 2 "indented is ignored, as by ibsim"

Hca 1 "H1"
`)
	if len(f.Nodes) != 1 {
		t.Fatalf("%d nodes, want 1", len(f.Nodes))
	}
}

// linkKey names a link by GUIDs and port numbers, smaller end first.
func linkKeys(f *Fabric) []string {
	var ks []string
	for _, l := range f.Links() {
		a := fmt.Sprintf("%#x[%d]", l.A.Node.GUID, l.A.Num)
		b := fmt.Sprintf("%#x[%d]", l.B.Node.GUID, l.B.Num)
		if b < a {
			a, b = b, a
		}
		ks = append(ks, a+"-"+b)
	}
	sort.Strings(ks)
	return ks
}

type guidNode struct {
	Desc     string
	Type     NodeType
	NumPorts int
	SysGUID  uint64
	Ports    []uint64
}

func byGUID(f *Fabric) map[uint64]guidNode {
	m := make(map[uint64]guidNode)
	for _, n := range f.Nodes {
		g := guidNode{Desc: n.Desc, Type: n.Type, NumPorts: n.NumPorts, SysGUID: n.SysGUID}
		for _, p := range n.Ports {
			if p != nil {
				g.Ports = append(g.Ports, p.GUID)
			}
		}
		m[n.GUID] = g
	}
	return m
}

// TestParseIBNetDiscoverOutput checks that ibnetdiscover's output of the
// ibsim fabric net.2sw2path4hca parses to the same nodes, GUIDs and links
// as the net file itself, and to the LIDs OpenSM gave them.
func TestParseIBNetDiscoverOutput(t *testing.T) {
	net, err := ParseFile("testdata/net.2sw2path4hca")
	if err != nil {
		t.Fatal(err)
	}
	ibnd, err := ParseFile("testdata/ibnd.2sw2path4hca.txt")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(byGUID(net), byGUID(ibnd)); diff != "" {
		t.Errorf("nodes by GUID (-net +ibnetdiscover):\n%s", diff)
	}
	if diff := cmp.Diff(linkKeys(net), linkKeys(ibnd)); diff != "" {
		t.Errorf("links (-net +ibnetdiscover):\n%s", diff)
	}
	lids := make(map[string]uint16)
	for _, n := range ibnd.Nodes {
		lids[n.Desc] = n.EndPort(1).LID
		if n.ID != NodeIDFor(n.Type, n.GUID) {
			t.Errorf("node id %q, want %q", n.ID, NodeIDFor(n.Type, n.GUID))
		}
	}
	want := map[string]uint16{"Switch1": 1, "Hca1": 2, "Switch2": 3, "Hca2": 4, "Hca3": 5, "Hca4": 6}
	if diff := cmp.Diff(want, lids); diff != "" {
		t.Errorf("LIDs (-want +got):\n%s", diff)
	}
	if p := ibnd.Node(0x100009).Ports[1]; p.WidthEnabled != 3 || p.SpeedEnabled != 1 {
		t.Errorf("Hca4 port 1 width/speed enabled %d/%d, want 3/1 from 4xSDR", p.WidthEnabled, p.SpeedEnabled)
	}
}

// TestParseWriteRoundTrip writes a parsed fabric as ibnetdiscover does and
// parses it again.
func TestParseWriteRoundTrip(t *testing.T) {
	for _, name := range []string{"net", "net.2sw2path4hca2port", "fattree-50.net"} {
		t.Run(name, func(t *testing.T) {
			f, err := ParseFile(filepath.Join("..", "tests", "topologies", name))
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range f.Links() {
				for _, p := range []*Port{l.A, l.B} {
					p.WidthActive, p.SpeedActive = 2, 1
				}
			}
			var sb strings.Builder
			if err := WriteIBNetDiscover(&sb, f, nil); err != nil {
				t.Fatal(err)
			}
			g, err := Parse(name+".ibnd", strings.NewReader(sb.String()))
			if err != nil {
				t.Fatalf("%v\n%s", err, sb.String())
			}
			if diff := cmp.Diff(byGUID(f), byGUID(g)); diff != "" {
				t.Errorf("nodes (-file +rewritten):\n%s", diff)
			}
			if diff := cmp.Diff(linkKeys(f), linkKeys(g)); diff != "" {
				t.Errorf("links (-file +rewritten):\n%s", diff)
			}
		})
	}
}

// TestParseRepoTopologies loads every shipped topology.
func TestParseRepoTopologies(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "tests", "topologies", "*"))
	files = append(files, "testdata/ibnd.2sw2path4hca.txt")
	if len(files) < 6 {
		t.Fatalf("only %d topologies found", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			f, err := ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Nodes) == 0 || len(f.Links()) == 0 {
				t.Errorf("%d nodes, %d links", len(f.Nodes), len(f.Links()))
			}
		})
	}
	f, err := ParseFile(filepath.Join("..", "tests", "topologies", "fattree-2000.net"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 2000 || len(f.Links()) != 2944 {
		t.Errorf("fattree-2000: %d nodes, %d links; want 2000, 2944", len(f.Nodes), len(f.Links()))
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "tests", "topologies", "*"))
	files = append(files, "testdata/ibnd.2sw2path4hca.txt")
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if len(b) < 8192 {
			f.Add(b)
		}
	}
	f.Add([]byte("switchguid=0x10\ncaguid+5\nmodule=\"m\"\nSwitch 2 \"S\" # \"d\" enhanced port 0 lid 3 lmc 1\n[1] \"H\"[1](10) w=3 s=7 e=1 # \"x\" lid 4 4xQDR\n\nHca 1 \"H\"\n[1](11) \"S\"[1] # lid 4 lmc 0 \"S\" lid 3 4xQDR\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p := Parser{FS: fstest.MapFS{"inc.net": {Data: data}}}
		fab, err := p.Parse("fuzz.net", strings.NewReader(string(data)))
		if err != nil {
			if fab != nil {
				t.Fatal("fabric with error")
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
			return
		}
		for _, l := range fab.Links() {
			if l.A.Remote != l.B || l.B.Remote != l.A {
				t.Fatalf("asymmetric link %v - %v", l.A, l.B)
			}
		}
		for _, n := range fab.Nodes {
			if len(n.Ports) != n.NumPorts+1 {
				t.Fatalf("node %q: %d port slots for %d ports", n.ID, len(n.Ports), n.NumPorts)
			}
		}
	})
}

// TestParseRefusesNonTopology: a file with no node record is not a
// topology (FooBar=1 and /etc/passwd loaded as empty fabrics, so a
// reference made every node "extra"); the error names the first line
// that is not a topology line, without quoting it.
func TestParseRefusesNonTopology(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"FooBar", "FooBar=1\n", "net.x:1: not a topology line, and the file has no node record"},
		{"passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/:/sbin/nologin\n", "net.x:1: not a topology line"},
		{"after comments", "# a comment\n\nFooBar=1\n", "net.x:3: not a topology line"},
		{"empty", "", "net.x:0: not a topology: no node record"},
		{"settings only", "# header\nswitchguid=0x10\n", "net.x:0: not a topology: no node record"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := parseString(t, "net.x", c.text, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("fabric %v, error %v; want %q", f, err, c.want)
			}
			if strings.Contains(err.Error(), "root") || strings.Contains(err.Error(), "FooBar") {
				t.Errorf("the error quotes the file: %v", err)
			}
		})
	}
}

// TestParseIPoIB: "# ipoib" lines give CA ports their IPoIB addresses,
// wherever they stand in the file; bad ones are errors naming the line.
func TestParseIPoIB(t *testing.T) {
	f, err := ParseFile(filepath.Join("..", "tests", "topologies", "net.ipoib"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && len(p.IPoIB) > 0 {
				got[n.ID] = fmt.Sprint(p.IPoIB)
			}
		}
	}
	if want := map[string]string{"host1": "[10.0.0.1 fd00::1]", "host2": "[10.0.0.2 fd00::2]"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("IPoIB %v, want %v", got, want)
	}
	base := "Hca 1 \"h\"\n[1] \"s\"[1]\n\nSwitch 2 \"s\"\n[1] \"h\"[1]\n\n"
	for _, c := range []struct{ line, err string }{
		{`# ipoib "x"[1] 10.0.0.1`, `t.net:7: ipoib: no CA or router port "x"[1]`},
		{`# ipoib "s"[1] 10.0.0.1`, `no CA or router port "s"[1]`},
		{`# ipoib "h"[1] 10.0.0.300`, `"10.0.0.300" is not an IPv4 or IPv6 address`},
		{`# ipoib "h"[1]`, "no address"},
		{`# ipoib h[1] 10.0.0.1`, "no quoted node id"},
		{`# ipoib "h" 10.0.0.1`, "no [port]"},
	} {
		_, err := Parse("t.net", strings.NewReader(base+c.line+"\n"))
		if err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%s: %v, want an error with %q", c.line, err, c.err)
		}
	}
}

// TestParseHostileBounds: the 0.35 MB topology of 20,000
// unlinked 255-port switches took 1.9 GB and 8 s to load; now a port
// count past IBA's 254 is refused at its line, and 254-port switches are
// refused when they pass MaxPorts, before the fabric is built: the parse
// allocates far less than 100 MB either way. A done context ends a parse.
func TestParseHostileBounds(t *testing.T) {
	dir := t.TempDir()
	gen := func(name string, ports, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "Switch %d \"S%d\"\n\n", ports, i)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name       string
		ports, n   int
		want       string
		wantLoaded bool
	}{
		{"255 ports", 255, 20000, "h255:1: port count 255 out of range (1-254", false},
		{"254 ports", 254, 20000, fmt.Sprintf("more than %d ports in all", MaxPorts), false},
		{"at the bound", 254, MaxPorts / 255, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := gen(map[int]string{255: "h255", 254: "h254"}[c.ports], c.ports, c.n)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			f, err := ParseFile(p)
			runtime.ReadMemStats(&after)
			if c.wantLoaded {
				if err != nil || len(f.Nodes) != c.n {
					t.Fatalf("%v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 100<<20 {
				t.Errorf("the refused parse allocated %d MB", alloc>>20)
			}
		})
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("interrupted by SIGTERM"))
	_, err := (&Parser{Context: ctx}).ParseFile(gen("h254", 4, 2000))
	if err == nil || !strings.Contains(err.Error(), "parse stopped: interrupted by SIGTERM") {
		t.Errorf("a parse under a done context: %v", err)
	}
	if _, err := ParseFile(gen("nodes", 1, MaxNodes+1)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("more than %d nodes", MaxNodes)) {
		t.Errorf("more nodes than LIDs: %v", err)
	}
}

// TestLongDescriptionCut: a description longer than NodeDescription's 64
// bytes is kept to its first 64, with a note naming the line; 64 bytes
// are kept whole. (ibsim 0.10 keeps 63 of either: C ibnetdiscover prints
// the first 63 of 64, 70 and 100 bytes given; the embedded simulator
// answers 63 as it does, sim.TestDescriptionKeptAsIbsim.)
func TestLongDescriptionCut(t *testing.T) {
	var notes bytes.Buffer
	p := Parser{Logger: slog.New(slog.NewTextHandler(&notes, nil))}
	long, exact := strings.Repeat("d", 97)+"end", strings.Repeat("e", 64)
	f, err := p.Parse("net.long", strings.NewReader("Hca 1 \"H\" # \""+long+"\"\n\nHca 1 \"I\" # \""+exact+"\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Nodes[0].Desc; got != long[:64] {
		t.Errorf("100-byte description kept as %q, want its first 64 bytes", got)
	}
	if got := f.Nodes[1].Desc; got != exact {
		t.Errorf("64-byte description kept as %q, want it whole", got)
	}
	if n := strings.Count(notes.String(), "longer than 64 bytes cut"); n != 1 || !strings.Contains(notes.String(), "net.long:1") {
		t.Errorf("notes %q: want one about net.long:1", notes.String())
	}
}

// TestParseHelpersAsStrings: firstTwoFields is the first two of
// strings.Fields, trimBlanks strings.TrimLeft(s, " \t") and parseDecimal
// strconv.Atoi on up to 5 digits, on ASCII and Unicode spaces alike.
func TestParseHelpersAsStrings(t *testing.T) {
	for _, s := range []string{"", " ", "0 4xXDR", "\t0\t4xXDR  ", " 12 ", "a b c", "a\u00a0b c", "\u0085 x y",
		"x\xffy z", " \v\f\r\n1 2", "lid 3", "  \t# \"d\" lid 7 4xQDR"} {
		want := strings.Fields(s)
		f, n := firstTwoFields(s)
		if n != min(len(want), 2) || (n > 0 && f[0] != want[0]) || (n > 1 && f[1] != want[1]) {
			t.Errorf("firstTwoFields(%q) = %q, %d; strings.Fields has %q", s, f, n, want)
		}
		if got, want := trimBlanks(s), strings.TrimLeft(s, " \t"); got != want {
			t.Errorf("trimBlanks(%q) = %q, want %q", s, got, want)
		}
	}
	for _, s := range []string{"0", "7", "00012", "99999", "65535", "100000", "", "1a", "-1", "+1", " 1"} {
		got, err := parseDecimal(s)
		want, werr := strconv.Atoi(s)
		if len(s) > 5 || strings.ContainsAny(s, "+- ") {
			werr = strconv.ErrSyntax
		}
		if (err != nil) != (werr != nil) || (err == nil && got != want) {
			t.Errorf("parseDecimal(%q) = %d, %v; want %d, %v", s, got, err, want, werr)
		}
	}
}

// TestParseReaders: the line reader gives the same fabric whatever the
// reader hands it at a time (one byte, half, the data with io.EOF), ends
// its last line without an end of line, takes CRLF, reports a read error
// at the line it could not read after the lines before it, and a
// planarized tree of 2,240 nodes (lines spanning its 64 KiB reads) reads
// as a whole.
func TestParseReaders(t *testing.T) {
	text := "# a comment\r\nSwitch\t2 \"S1\"\t# \"sw one\" lid 3\r\n[1]\t\"H1\"[1]\r\n[2]\t\"H2\"[1]\n\n" +
		"Hca\t1 \"H1\"\n[1]\t\"S1\"[1]\n\nHca\t1 \"H2\"\n[1]\t\"S1\"[2]"
	want, err := Parse("net", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	if err := WriteSnapshot(&w, want); err != nil {
		t.Fatal(err)
	}
	if len(want.Nodes) != 3 || want.Nodes[0].Desc != "sw one" || want.Nodes[0].Ports[0].LID != 3 || len(want.Links()) != 2 {
		t.Fatalf("parsed %d nodes, %q, %d links", len(want.Nodes), want.Nodes[0].Desc, len(want.Links()))
	}
	for name, r := range map[string]func() io.Reader{
		"one byte":  func() io.Reader { return iotest.OneByteReader(strings.NewReader(text)) },
		"half":      func() io.Reader { return iotest.HalfReader(strings.NewReader(text)) },
		"data, EOF": func() io.Reader { return iotest.DataErrReader(strings.NewReader(text)) },
	} {
		got, err := Parse("net", r())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var g bytes.Buffer
		if err := WriteSnapshot(&g, got); err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(w.String(), g.String()); d != "" {
			t.Errorf("%s: (-want +got)\n%s", name, d)
		}
	}
	broken := io.MultiReader(strings.NewReader(text[:strings.Index(text, "Hca")+3]), iotest.ErrReader(errors.New("disk gone")))
	if _, err := Parse("net", broken); err == nil || err.Error() != "net:6: read: disk gone" {
		t.Errorf("a read error at line 6: %v", err)
	}
	path := filepath.Join(t.TempDir(), "planes.net")
	var spec strings.Builder
	spec.WriteString("width=2\n")
	for h := range 1920 {
		fmt.Fprintf(&spec, "# planarized \"h%d\" 1 2 3 4\nHca\t4 \"h%d\"\t# \"h%d\"\n", h, h, h)
		for pl := 1; pl <= 4; pl++ {
			fmt.Fprintf(&spec, "[%d]\t\"p%d-leaf%d\"[%d]\t# lid 0 4xSDR\n", pl, pl, h/30, h%30+1)
		}
		spec.WriteString("\n")
	}
	for pl := 1; pl <= 4; pl++ {
		for l := range 64 {
			fmt.Fprintf(&spec, "Switch\t30 \"p%d-leaf%d\"\t# \"p%d-leaf%d\"\n", pl, l, pl, l)
			for h := range 30 {
				fmt.Fprintf(&spec, "[%d]\t\"h%d\"[%d]\t# lid 0 4xSDR\n", h+1, l*30+h, pl)
			}
			spec.WriteString("\n")
		}
	}
	if err := os.WriteFile(path, []byte(spec.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := ParseFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, l := len(f.Nodes), len(f.Links()); n != 1920+256 || l != 4*1920 || spec.Len() < 4*lineBufSize {
		t.Errorf("%d nodes, %d links from %d bytes", n, l, spec.Len())
	}
	if h := f.Nodes[1919]; h.ID != "h1919" || h.Desc != "h1919" || h.Ports[4].Remote.Node.ID != "p4-leaf63" || h.Ports[4].Plane != 4 {
		t.Errorf("the last host: %q %q, port 4 to %q on plane %d", h.ID, h.Desc, h.Ports[4].Remote.Node.ID, h.Ports[4].Plane)
	}
}
