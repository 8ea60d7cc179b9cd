package fattree

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestMatchesCheckedIn: the 2,000-node preset is byte for byte the
// gen-fattree.py output checked in under tests/topologies.
func TestMatchesCheckedIn(t *testing.T) {
	want, err := os.ReadFile("../../tests/topologies/fattree-2000.net")
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := Nodes2000.Write(&got); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("generated fattree-2000 differs from tests/topologies/fattree-2000.net")
	}
	if n := Nodes2000.Nodes(); n != 2000 {
		t.Errorf("Nodes() = %d", n)
	}
	if n := Nodes7968.Nodes(); n != 7968 {
		t.Errorf("Nodes7968.Nodes() = %d", n)
	}
	if f := Nodes2000.IbsimFlags(); len(f) != 0 {
		t.Errorf("2000 flags %v, want none", f)
	}
	// As gen-fattree.py prints them.
	if f := strings.Join(Nodes7968.IbsimFlags(), " "); f != "-N 7968 -S 280 -P 31528" {
		t.Errorf("7968 flags %q", f)
	}
}
