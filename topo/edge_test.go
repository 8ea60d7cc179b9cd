package topo

import (
	"strings"
	"testing"
)

// TestGUIDArithmeticWraps: a GUID base or increment, or a node's port
// GUIDs, that would pass 0xffffffffffffffff is an error naming the file
// and line, never a GUID that wrapped to 0.
func TestGUIDArithmeticWraps(t *testing.T) {
	for _, tc := range []struct{ name, text, want string }{
		{"relative base", "caguid=0xfffffffffffffff0\ncaguid+0x20\n", "net:2: caguid: GUID 0xfffffffffffffff0 + 0x20 wraps"},
		{"switch base", "switchguid=0xffffffffffffffff\nswitchguid+1\n", "net:2: switchguid: GUID"},
		{"port GUIDs", "caguid=0xfffffffffffffffe\nHca 2 \"H1\"\n", `net:2: "H1": GUIDs from 0xfffffffffffffffe for 2 ports wrap`},
		{"next node", "switchguid=0xffffffffffffffff\nSwitch 2 \"S1\"\n\nSwitch 2 \"S2\"\n", `net:4: "S2": GUIDs from 0x0 for 2 ports wrap`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseString(t, "net", tc.text, nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				var guids []string
				if f != nil {
					for _, n := range f.Nodes {
						guids = append(guids, n.ID+"="+NodeIDFor(n.Type, n.GUID))
					}
				}
				t.Errorf("error %v (nodes %v), want one containing %q", err, guids, tc.want)
			}
		})
	}
	// The last GUID itself is fine.
	if _, err := parseString(t, "net", "switchguid=0xffffffffffffffff\nSwitch 2 \"S1\"\n", nil); err != nil {
		t.Errorf("a switch at the last GUID: %v", err)
	}
}

// TestNameMapNamesCleaned: a node-name-map's names are cleaned as wire
// descriptions are (every byte outside 0x20-0x7e a space) where they are
// shown (Rename, the ibnetdiscover writer), so a NUL, an escape sequence
// or invalid UTF-8 in a map reaches no output.
func TestNameMapNamesCleaned(t *testing.T) {
	m, err := ParseNameMap(strings.NewReader("0x200000 \"a\x01b\x1b[31mred\xff\xfe\"\n"), "map")
	if err != nil {
		t.Fatal(err)
	}
	f, err := parseString(t, "net", "switchguid=0x200000\nSwitch 2 \"S1\"\n", nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteIBNetDiscover(&b, f, &WriteOptions{NameMap: m}); err != nil {
		t.Fatal(err)
	}
	f.Rename(m)
	for what, s := range map[string]string{"ibnetdiscover output": b.String(), "renamed description": f.Nodes[0].Desc} {
		for _, c := range []byte(s) {
			if (c < 0x20 || c > 0x7e) && c != '\n' && c != '\t' {
				t.Errorf("%s holds byte %#02x: %q", what, c, s)
				break
			}
		}
	}
	if want := "a b [31mred  "; f.Nodes[0].Desc != want {
		t.Errorf("renamed %q, want %q", f.Nodes[0].Desc, want)
	}
}

// TestLongLinesNameFileAndLine: an over-long line in a node-name-map is
// read as the C tools' fgets reads it, in pieces of 255 bytes, and the
// piece that holds no GUID is an error naming the file and the line and
// saying the line is too long, not bufio's "token too long".
func TestLongLinesNameFileAndLine(t *testing.T) {
	text := "0x1 \"a\"\n0x2 \"" + strings.Repeat("x", 70_000) + "\"\n"
	_, err := ParseNameMap(strings.NewReader(text), "names.map")
	if err == nil || !strings.Contains(err.Error(), "names.map:2: line longer than 255 bytes") || strings.Contains(err.Error(), "token too long") {
		t.Errorf("error %v, want names.map:2: line longer than 255 bytes ...", err)
	}
}
