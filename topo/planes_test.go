package topo

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// planesNet is two planes, each one switch: CAs "a" and "b" planarized
// (a's port 1 on plane 2, port 2 on plane 1), "c" an ordinary CA on
// plane 1's switch.
const planesNet = `# planarized "a" 2 1
Switch 3 "s1"
[1] "a"[2]
[2] "b"[1]
[3] "c"[1]

Switch 2 "s2"
[1] "a"[1]
[2] "b"[2]

Hca 2 "a"
[1] "s2"[1]
[2] "s1"[1]

Hca 2 "b"
[1] "s1"[2]
[2] "s2"[2]

Hca 1 "c"
[1] "s1"[3]

# planarized "b" 1 2
`

func planeMap(f *Fabric) map[string]string {
	got := map[string]string{}
	for _, n := range f.Nodes {
		var b strings.Builder
		if n.Planarized {
			b.WriteString("planarized ")
		}
		for _, p := range n.Ports {
			if p != nil {
				b.WriteString(string(rune('0' + p.Plane)))
			}
		}
		got[n.Desc] = b.String()
	}
	return got
}

// TestParsePlanarized: "# planarized" lines, before or after the CA's
// record, mark the CA, put each port on its plane and give its ports
// port 1's GUID; switches take the plane of the CA ports they reach, and
// an ordinary CA its switch's.
func TestParsePlanarized(t *testing.T) {
	f, err := Parse("p.net", strings.NewReader(planesNet))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"s1": "1111", "s2": "222", "a": "planarized 21", "b": "planarized 12", "c": "1"}
	if got := planeMap(f); !equalMaps(got, want) {
		t.Errorf("planes %v, want %v", got, want)
	}
	if f.Planes() != 2 {
		t.Errorf("Planes() = %d, want 2", f.Planes())
	}
	a := f.NodeByID("a")
	if a.Ports[1].GUID != a.GUID+1 || a.Ports[2].GUID != a.GUID+1 {
		t.Errorf("a's port GUIDs %#x %#x, want both %#x (one aggregated port)", a.Ports[1].GUID, a.Ports[2].GUID, a.GUID+1)
	}
	if c := f.NodeByID("c"); c.Planarized {
		t.Error("c is not planarized")
	}
	if l := PlanarizedLine(a, "H-x"); l != `# planarized "H-x" 2 1` {
		t.Errorf("PlanarizedLine %q", l)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestPlanesRoundTrip: ibnetdiscover's text (with its "# planarized"
// lines, by the ids it writes) and the JSON snapshot load back with the
// same planes; a fabric with none writes no such line.
func TestPlanesRoundTrip(t *testing.T) {
	f, err := Parse("p.net", strings.NewReader(planesNet))
	if err != nil {
		t.Fatal(err)
	}
	byGUID := func(f *Fabric) map[string]string {
		m := planeMap(f)
		out := map[string]string{}
		for _, n := range f.Nodes {
			out[NodeIDFor(n.Type, n.GUID)] = m[n.Desc]
		}
		return out
	}
	want := byGUID(f)
	var text bytes.Buffer
	if err := WriteIBNetDiscover(&text, f, &WriteOptions{Time: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), "# planarized \"H-0000000000100000\" 2 1\n") {
		t.Errorf("ibnetdiscover text without a's line:\n%s", text.String())
	}
	back, err := Parse("ibnd.txt", &text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text.String())
	}
	if got := byGUID(back); !equalMaps(got, want) {
		t.Errorf("ibnetdiscover round trip %v, want %v", got, want)
	}
	var js bytes.Buffer
	if err := WriteSnapshot(&js, f); err != nil {
		t.Fatal(err)
	}
	snap, err := ReadSnapshot(&js, "snap.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := byGUID(snap); !equalMaps(got, want) {
		t.Errorf("snapshot round trip %v, want %v", got, want)
	}
	plain, err := Parse("plain.net", strings.NewReader("Switch 1 \"s\"\n[1] \"h\"[1]\n\nHca 1 \"h\"\n[1] \"s\"[1]\n"))
	if err != nil {
		t.Fatal(err)
	}
	text.Reset()
	if err := WriteIBNetDiscover(&text, plain, nil); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(text.String(), "planarized") {
		t.Errorf("a fabric without planes writes a planarized line:\n%s", text.String())
	}
}

// TestPlanarizedErrors: every bad "# planarized" line is an error naming
// the file and the line at fault.
func TestPlanarizedErrors(t *testing.T) {
	base := "Switch 2 \"s1\"\n[1] \"a\"[1]\n[2] \"r\"[1]\n\nSwitch 1 \"s2\"\n[1] \"a\"[2]\n\n" +
		"Hca 2 \"a\"\n[1] \"s1\"[1]\n[2] \"s2\"[1]\n\nHca 2 \"b\"\n\nHca 1 \"one\"\n\nRt 1 \"r\"\n[1] \"s1\"[2]\n\n"
	for _, c := range []struct{ line, err string }{
		{`# planarized "x" 1 2`, `planarized: no node "x"`},
		{`# planarized "s1" 1 2`, `"s1" is a Switch; only a CA is planarized`},
		{`# planarized "r" 1`, `"r" is a Router`},
		{`# planarized "one" 1`, `"one" has 1 port; a planarized CA has one port per plane, at least 2`},
		{`# planarized "a" 1`, `"a" has 2 ports and the line gives 1 planes`},
		{`# planarized "a" 1 2 3`, `"a" has 2 ports and the line gives 3 planes`},
		{`# planarized "a" 1 1`, `ports 1 and 2 are both on plane 1 (one plane per port)`},
		{`# planarized "a" 0 1`, `plane "0" of port 1 is not a number from 1 to 8`},
		{`# planarized "a" 1 9`, `plane "9" of port 2 is not a number from 1 to 8`},
		{`# planarized "a" 1 x`, `plane "x" of port 2`},
		{`# planarized "a" 1 -2`, `plane "-2" of port 2`},
		{`# planarized "a" 1 2 3 4 5 6 7 8 9`, `9 planes, more than 8`},
		{`# planarized "a"`, "no plane"},
		{`# planarized a 1 2`, "no quoted node id"},
		{`# planarized "a 1 2`, "unterminated node id"},
		{`# planarized "" 1 2`, "empty node id"},
		{"# planarized \"a\" 1 2\n# planarized \"a\" 2 1", "planarized: \"a\" already planarized at line 19"},
		// b is not cabled: its planes reach no switch.
		{"# planarized \"a\" 1 2\n# planarized \"b\" 2 1", ""},
	} {
		_, err := Parse("t.net", strings.NewReader(base+c.line+"\n"))
		at := "t.net:19: " // the line after base
		if strings.Contains(c.line, "\n") {
			at = "t.net:20: "
		}
		var pe *ParseError
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.line, err)
		case c.err == "":
		case err == nil || !strings.HasPrefix(err.Error(), at) || !strings.Contains(err.Error(), c.err):
			t.Errorf("%s: %v, want an error %q...%q", c.line, err, at, c.err)
		case !errors.As(err, &pe):
			t.Errorf("%s: %T, want a *ParseError", c.line, err)
		}
	}
	// Planes meeting: b's port 1 (plane 2) and a's port 1 (plane 1) both
	// reach s1.
	meet := strings.Replace(base, "Hca 2 \"b\"\n", "Hca 2 \"b\"\n[1] \"s3\"[1]\n", 1) +
		"Switch 2 \"s3\"\n[1] \"b\"[1]\n[2] \"s1\"[3]\n\n"
	meet = strings.Replace(meet, "Switch 2 \"s1\"\n[1] \"a\"[1]\n[2] \"r\"[1]\n", "Switch 3 \"s1\"\n[1] \"a\"[1]\n[2] \"r\"[1]\n[3] \"s3\"[2]\n", 1)
	_, err := Parse("m.net", strings.NewReader(meet+"# planarized \"a\" 1 2\n# planarized \"b\" 2 1\n"))
	if want := `m.net:26: planarized: "b" port 1 (plane 2) reaches switch "s3", which "a" port 1 reaches on plane 1: planes do not meet`; err == nil || err.Error() != want {
		t.Errorf("meeting planes: %v\nwant %s", err, want)
	}
}

// TestSnapshotPlaneErrors: a snapshot's bad planes are refused, naming the
// node and port.
func TestSnapshotPlaneErrors(t *testing.T) {
	for _, c := range []struct{ json, err string }{
		{`{"schema":"ibscript.topology.v1","nodes":[{"desc":"a","type":"CA","num_ports":2,"guid":"0x1","planarized":true,"ports":[{"num":1,"plane":1},{"num":2}]}]}`,
			"nodes[0] port 2: plane 0"},
		{`{"schema":"ibscript.topology.v1","nodes":[{"desc":"a","type":"CA","num_ports":1,"guid":"0x1","ports":[{"num":1,"plane":9}]}]}`,
			"nodes[0] port 1: plane 9"},
		{`{"schema":"ibscript.topology.v1","nodes":[{"desc":"s","type":"Switch","num_ports":2,"guid":"0x1","planarized":true,"ports":[]}]}`,
			`nodes[0] "s": planarized, but a Switch of 2 ports`},
		{`{"schema":"ibscript.topology.v1","nodes":[{"desc":"a","type":"CA","num_ports":1,"guid":"0x1","planarized":true,"ports":[{"num":1,"plane":1}]}]}`,
			`nodes[0] "a": planarized, but a CA of 1 ports`},
	} {
		_, err := ReadSnapshot(strings.NewReader(c.json), "s.json")
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.HasPrefix(err.Error(), "s.json: ") {
			t.Errorf("%s: %v, want s.json: ...%s", c.json, err, c.err)
		}
	}
}

// FuzzPlanarized: any "# planarized" line on a planarized-capable fabric
// either loads, with every planarized CA's ports on distinct planes from
// 1 to MaxPlanes sharing one GUID, or is a *ParseError naming its line.
func FuzzPlanarized(f *testing.F) {
	f.Add(`# planarized "a" 2 1`)
	f.Add(`# planarized "b" 1 2`)
	f.Add(`# planarized "a" 1 1`)
	f.Add(`# planarized "c" 1`)
	f.Add(`# planarized "s1" 1 2 3 4`)
	f.Add(`# planarized "a" 255 256`)
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n\r") {
			return
		}
		src := strings.Replace(planesNet, `# planarized "b" 1 2`, line, 1)
		fab, err := Parse("f.net", strings.NewReader(src))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line == 0 {
				t.Fatalf("%q: %v is not a *ParseError with a line", line, err)
			}
			return
		}
		for _, n := range fab.Nodes {
			if !n.Planarized {
				continue
			}
			seen := map[uint8]bool{}
			for _, p := range n.Ports[1:] {
				if p.Plane < 1 || p.Plane > MaxPlanes || seen[p.Plane] || p.GUID != n.Ports[1].GUID {
					t.Fatalf("%q: %q port %d plane %d guid %#x", line, n.ID, p.Num, p.Plane, p.GUID)
				}
				seen[p.Plane] = true
			}
		}
	})
}
