package diag

import (
	"bytes"
	"testing"

	"github.com/ibscript/ibscript/topo"
)

// TestDashEcho: the escapes dash's echo converts, as dash 0.5 prints
// them (each expectation checked with `dash -c 'echo "$1"' sh ARG`).
func TestDashEcho(t *testing.T) {
	for _, c := range []struct {
		in, want string
		stopped  bool
	}{
		{`plain`, "plain\n", false},
		{`a\0b`, "a\x00b\n", false},
		{`a\0101b`, "aAb\n", false},
		{`a\101b`, "aAb\n", false},
		{`a\08b`, "a\x008b\n", false},
		{`a\qb`, "a\\qb\n", false},
		{`back\slash`, "back\\slash\n", false},
		{`a\\b`, "a\\b\n", false},
		{`a\tb\`, "a\tb\\\n", false},
		{`x\cy`, "x", true},
		{`a\1234`, "aS4\n", false},
		{`a\0`, "a\x00\n", false},
		{`a\00012z`, "a\x012z\n", false},
		{`ab\n\r\v\f\a\b`, "ab\n\r\v\f\a\b\n", false},
		{`-n`, "", false},
	} {
		got, stopped := dashEcho(c.in)
		if got != c.want || stopped != c.stopped {
			t.Errorf("dashEcho(%q) = %q, %v; want %q, %v", c.in, got, stopped, c.want, c.stopped)
		}
	}
}

// TestFilterNodeLinesEcho: the scripts echo ibnetdiscover's whole output
// through dash before awk filters it: "\t" in a description becomes a
// tab, "\n" splits a line, and "\c" anywhere (here in a CA's description
// on a switch's port line) ends the listing there.
func TestFilterNodeLinesEcho(t *testing.T) {
	text := "switchguid=0x2(2)\n" +
		"Switch\t8 \"S-0000000000000002\"\t\t# \"sw \\t one\" enhanced port 0 lid 2 lmc 0\n" +
		"[1]\t\"H-0000000000000001\"[1](2) \t\t# \"h\\cost\" lid 1 4xQDR\n" +
		"\n" +
		"Switch\t8 \"S-0000000000000003\"\t\t# \"sw3\" base port 0 lid 3 lmc 0\n" +
		"Ca\t1 \"H-0000000000000001\"\t\t# \"h\\cost\"\n"
	for _, c := range []struct {
		typ  topo.NodeType
		want string
	}{
		{topo.Switch, "Switch\t: 0x0000000000000002 ports 8 \"sw \t one\" enhanced port 0 lid 2 lmc 0\n"},
		{topo.CA, ""},
	} {
		var b bytes.Buffer
		if err := FilterNodeLines(&b, text, NodesOptions{Types: []topo.NodeType{c.typ}}); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("%v: got %q, want %q", c.typ, b.String(), c.want)
		}
	}
	// A "\n" in a description starts a line awk sees on its own.
	var b bytes.Buffer
	if err := FilterNodeLines(&b, "Ca\t1 \"H-0000000000000001\"\t\t# \"x\\nCa 2 \"H-0000000000000009\" # y\"\n", NodesOptions{Types: []topo.NodeType{topo.CA}}); err != nil {
		t.Fatal(err)
	}
	if want := "Ca\t: 0x0000000000000001 ports 1 \"x\nCa\t: 0x0000000000000009 ports 2 y\"\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
}
