package topo_test

import (
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
		{"bad GUID", "# c\nzz \"x\"\n", `map:2: GUID: not a number`},
		{"GUID then a letter", "0x10g \"x\"\n", `map:1: GUID: not a number`},
		{"0x without digits", "\n\n0xzz \"x\"\n", `map:3: GUID: not a number`},
		// fgets' 256-byte buffer: the rest of a long line is a line of
		// its own, which starts with no GUID: the map fails as in C, and
		// the error says the line is too long (it said "GUID: not a
		// number").
		{"line past 255 bytes", "0x1 \"" + strings.Repeat("a", 300) + "\"\n", `map:1: line longer than 255 bytes (rdma-core's parser reads it in 255-byte pieces`},
		{"line past 255 bytes, later", "# x\n0x1 \"" + strings.Repeat("a", 300) + "\"\n", `map:2: line longer than 255 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := topo.ParseNameMap(strings.NewReader(tc.in), "map")
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("err %v, want it to start with %q", err, tc.want)
			}
		})
	}
}

// TestParseNameMapAsRdmaCore: lines as rdma-core's node_name_map.c reads
// them (checked against ibnetdiscover --node-name-map under ibsim): a
// GUID alone or with "" names nothing, the first of two lines with one
// GUID counts, an unterminated quote runs to the end of the line, a name
// stops at '"' or '#', unquoted names keep their trailing blanks, a GUID
// is strtoull's (a sign, saturation), and a line of 255 bytes still fits.
func TestParseNameMapAsRdmaCore(t *testing.T) {
	long := strings.Repeat("b", 255-len("0x7 \"\"\n")+1)
	in := "0x1\n0x2 \"\"\n0x3 \"first\"\n0x3 \"second\"\n0x4 \"open quote\n" +
		"0x5 a \"b\" c\n0x6 \"x\" # c\n  \t0x8#\"hash\"\n0x9 trailing  \r\n-1 minus\n" +
		"0x1ffffffffffffffff big\n0x7 \"" + long + "\n017 octal\n"
	got, err := topo.ParseNameMap(strings.NewReader(in), "map")
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]string{
		0x3: "first", 0x4: "open quote", 0x5: "a ", 0x6: "x", 0x8: "hash", 0x9: "trailing  \r",
		^uint64(0): "minus", 0x7: long, 15: "octal",
	}
	if !maps.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
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
			if strings.ContainsAny(name, "\"#") || name == "" {
				t.Fatalf("%q: name %q: a name never holds '\"' or '#' and is never empty", in, name)
			}
			l := fmt.Sprintf("%#x \"%s\"\n", guid, name)
			if len(l) > 255 {
				return // past fgets' buffer, it would read back as two lines
			}
			b.WriteString(l)
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
