package topo_test

import (
	"bufio"
	"fmt"
	"maps"
	"os"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/topo"
)

// TestParseNameMapFile reads the node name map in testdata, written as
// infiniband-diags' --node-name-map files are.
func TestParseNameMapFile(t *testing.T) {
	f, err := os.Open("testdata/node-name-map")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := topo.ParseNameMap(f, "testdata/node-name-map")
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{
		0x200000: "spine-1 (Switch1)",
		0x200001: "spine-2 (Switch2)",
		0x100000: "hca1 rack A",
		0x100003: "hca2",
		0x100006: "hca3",
		0x100009: "hca4",
	}
	if !maps.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

// TestParseNameMapErrors pins the messages: file and line, and what is
// wrong with it.
func TestParseNameMapErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no name", "0x10\n", `map:1: want GUID "name"`},
		{"bad GUID", "# c\nzz \"x\"\n", `map:2: GUID: not a 64-bit number`},
		{"GUID too big", "0x1ffffffffffffffff a\n", `map:1: GUID: not a 64-bit number`},
		{"unterminated", "0x1 \"a b\n", `map:1: unterminated name`},
		{"line too long", "0x1 " + strings.Repeat("a", bufio.MaxScanTokenSize) + "\n", `map:1: line longer than 65536 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := topo.ParseNameMap(strings.NewReader(tc.in), "map")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err %v, want it to start with %q", err, tc.want)
			}
		})
	}
}

// FuzzParseNameMap: the parser never panics, an error names the file,
// and a map it accepts, written back out (quoted when the name allows
// it, else as the rest of the line), reads back the same.
func FuzzParseNameMap(f *testing.F) {
	seed, err := os.ReadFile("testdata/node-name-map")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(seed))
	f.Add("# comment\n0x0002c90300000001 \"rack1 leaf\"\n\n0x10\tspine-a\n")
	f.Add("0x1 \"\"\n0x2 a\"b\n0x3 \"x\r\n")
	f.Add("017 \"octal\"\n0b11 bin\n1_000 under\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := topo.ParseNameMap(strings.NewReader(in), "fuzz.map")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.map") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		var b strings.Builder
		for guid, name := range m {
			if strings.Contains(name, `"`) {
				fmt.Fprintf(&b, "%#x %s\n", guid, name)
			} else {
				fmt.Fprintf(&b, "%#x \"%s\"\n", guid, name)
			}
		}
		back, err := topo.ParseNameMap(strings.NewReader(b.String()), "again")
		if err != nil {
			t.Fatalf("re-reading %q: %v", b.String(), err)
		}
		if !maps.Equal(m, back) {
			t.Fatalf("round trip: %q -> %v -> %q -> %v", in, m, b.String(), back)
		}
	})
}
