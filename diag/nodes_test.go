package diag

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/topo"
)

// FuzzFilterNodeLines: the scripts' awk filter over any text never
// panics, prints only lines derived from the input's (one output line
// per matching rule), and is the same for the text with or without its
// trailing newline.
func FuzzFilterNodeLines(f *testing.F) {
	f.Add("Switch\t24 \"S-0002c90200403b80\"\t\t# \"export 0 switch\" base port 0 lid 2 lmc 0\n")
	f.Add("Ca\t2 \"H-0002c90300001234\"\t\t# \"host # with hash\"\nibwarn: x\n  iberror: ibpanic:\n")
	f.Add("Switch\nRt\t2\t#\n#\n\n")
	f.Add("Switch 8 \"S-1\" # port 0port 0 enhanced port 0 base port 0\n")
	all := NodesOptions{Types: []topo.NodeType{topo.CA, topo.Switch, topo.Router}}
	f.Fuzz(func(t *testing.T, text string) {
		var a, b bytes.Buffer
		if err := FilterNodeLines(&a, text, all); err != nil {
			t.Fatal(err)
		}
		if err := FilterNodeLines(&b, strings.TrimSuffix(text, "\n")+"\n", all); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatalf("trailing newline changes the output:\n%q\n%q", a.String(), b.String())
		}
		in := strings.Count(strings.TrimSuffix(text, "\n"), "\n") + 1
		// Each input line prints at most twice per type pass (its node
		// rule, then up to the three warning rules).
		if out := strings.Count(a.String(), "\n"); out > 3*4*in {
			t.Fatalf("%d lines out of %d", out, in)
		}
	})
}

// TestAwkSubstr: substr as mawk computes it for the arguments the
// scripts pass.
func TestAwkSubstr(t *testing.T) {
	for _, c := range []struct {
		s    string
		m, n int
		want string
	}{
		{"hello", 1, 2, "he"}, {"hello", 2, 100, "ello"}, {"hello", 1, 0, ""}, {"hello", 1, -1, ""},
		{"hello", 5, 3, "o"}, {"hello", 6, 1, ""}, {"\"S-0002c90200403b80\"", 4, 16, "0002c90200403b80"},
	} {
		if got := awkSubstr(c.s, c.m, c.n); got != c.want {
			t.Errorf("awkSubstr(%q, %d, %d) = %q, want %q", c.s, c.m, c.n, got, c.want)
		}
	}
	for _, c := range []struct {
		s    string
		m    int
		want string
	}{{"hello", 0, "hello"}, {"hello", -1, "hello"}, {"hello", 2, "ello"}, {"hello", 6, ""}} {
		if got := awkSubstrToEnd(c.s, c.m); got != c.want {
			t.Errorf("awkSubstrToEnd(%q, %d) = %q, want %q", c.s, c.m, got, c.want)
		}
	}
}
