package fattree

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/topo"
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

// TestPlanes: genfattree -planes writes the bundled planarized tree byte
// for byte; the file loads with every host planarized (port p on plane p)
// and every switch on the plane its name says, as many nodes as Nodes()
// says; a plane count out of 2..topo.MaxPlanes is refused.
func TestPlanes(t *testing.T) {
	spec := Spec{Leaves: 2, Spines: 2, Hosts: 4, LinksPerSpine: 1, XDR: true, Planes: 4}
	var got bytes.Buffer
	if err := spec.Write(&got); err != nil {
		t.Fatal(err)
	}
	if want, err := os.ReadFile("../../tests/topologies/fattree-xdr-4planes.net"); err != nil || !bytes.Equal(got.Bytes(), want) {
		t.Errorf("generated 4-plane tree differs from tests/topologies/fattree-xdr-4planes.net (%v)", err)
	}
	f, err := topo.Parse("planes.net", &got)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != spec.Nodes() || spec.Nodes() != 8+4*4 || f.Planes() != 4 {
		t.Errorf("%d nodes (Nodes() %d), %d planes", len(f.Nodes), spec.Nodes(), f.Planes())
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			want := uint8(p.Num)
			if n.Type == topo.Switch {
				want = n.Desc[1] - '0' // "p3-leaf001"
			}
			if p.Plane != want || n.Planarized != (n.Type == topo.CA) {
				t.Errorf("%s port %d: plane %d (planarized %v), want %d", n.Desc, p.Num, p.Plane, n.Planarized, want)
			}
		}
	}
	for _, planes := range []int{1, 9, -1} {
		spec.Planes = planes
		if err := spec.Write(&bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "want 2 to 8") {
			t.Errorf("%d planes: %v", planes, err)
		}
	}
}
