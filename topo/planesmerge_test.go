package topo

import (
	"strings"
	"testing"
)

// TestMergePlanesErrors: walks MergePlanes cannot merge are refused with
// an error naming why: none, one without a local port numbered 1 to
// MaxPlanes, a node GUID met as a CA and as a switch, two walks from
// local ports of one number (one plane twice).
func TestMergePlanesErrors(t *testing.T) {
	walk := func(origin int, typ NodeType, guid uint64) *Fabric {
		n := &Node{Type: typ, NumPorts: 2, GUID: guid}
		n.Ports = []*Port{nil, {Node: n, Num: 1, GUID: guid + 1}, {Node: n, Num: 2, GUID: guid + 1}}
		if typ == Switch {
			n.Ports[0] = &Port{Node: n, GUID: guid}
		}
		f := &Fabric{Nodes: []*Node{n}}
		if origin > 0 {
			f.Origin = &Port{Node: n, Num: origin}
		}
		return f
	}
	for _, c := range []struct {
		walks []*Fabric
		want  string
	}{
		{nil, "no discovery to merge"},
		{[]*Fabric{walk(1, CA, 0x10), walk(0, CA, 0x10)}, "discovery 2 has no local plane port numbered 1 to 8"},
		{[]*Fabric{walk(MaxPlanes+1, CA, 0x10)}, "discovery 1 has no local plane port"},
		{[]*Fabric{walk(1, CA, 0x10), walk(2, Switch, 0x10)}, "node GUID 0x0000000000000010 is a CA of 2 ports on plane 1 and a Switch of 2 ports on plane 2"},
		{[]*Fabric{walk(1, CA, 0x10), walk(1, CA, 0x20)}, "discovery 2 is of plane 1, as an earlier one"},
	} {
		if _, err := MergePlanes(c.walks); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%d walks: error %v, want %q", len(c.walks), err, c.want)
		}
	}
	// Two walks of one CA whose ports share one port GUID: planarized,
	// each port on its walk's plane; of a CA with two port GUIDs: not.
	for _, shared := range []bool{true, false} {
		a, b := walk(1, CA, 0x10), walk(2, CA, 0x10)
		a.Nodes[0].Ports[2], b.Nodes[0].Ports[1] = nil, nil
		if !shared {
			b.Nodes[0].Ports[2].GUID = 0x99
		}
		f, err := MergePlanes([]*Fabric{a, b})
		if err != nil {
			t.Fatal(err)
		}
		n := f.Nodes[0]
		if len(f.Nodes) != 1 || n.Planarized != shared || n.Ports[1].Plane != 1 || n.Ports[2].Plane != 2 || n.Ports[2].Node != n {
			t.Errorf("shared port GUID %v: %d nodes, planarized %v, planes %d %d", shared, len(f.Nodes), n.Planarized, n.Ports[1].Plane, n.Ports[2].Plane)
		}
	}
}

// TestMergePlanesAs: the planes given, not the local ports' numbers, are
// the walks' (two SMI devices, each walking from its port 1); a plane
// out of range, given twice, or a count that is not the walks' is an
// error.
func TestMergePlanesAs(t *testing.T) {
	walk := func(guid uint64) *Fabric {
		n := &Node{Type: Switch, NumPorts: 1, GUID: guid}
		n.Ports = []*Port{{Node: n, GUID: guid}, {Node: n, Num: 1}}
		return &Fabric{Nodes: []*Node{n}, Origin: &Port{Num: 1}}
	}
	f, err := MergePlanesAs([]*Fabric{walk(0x10), walk(0x20)}, []int{2, 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Nodes) != 2 || f.Nodes[0].Ports[1].Plane != 2 || f.Nodes[1].Ports[1].Plane != 1 || f.Nodes[1].Ports[0].Plane != 1 {
		t.Errorf("planes %d and %d, want 2 and 1", f.Nodes[0].Ports[1].Plane, f.Nodes[1].Ports[1].Plane)
	}
	for _, c := range []struct {
		planes []int
		want   string
	}{
		{[]int{1}, "2 discoveries and 1 planes"},
		{[]int{1, 0}, "discovery 2 is of plane 0, not 1 to 8"},
		{[]int{3, MaxPlanes + 1}, "discovery 2 is of plane 9, not 1 to 8"},
		{[]int{3, 3}, "discovery 2 is of plane 3, as an earlier one"},
	} {
		if _, err := MergePlanesAs([]*Fabric{walk(0x10), walk(0x20)}, c.planes); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("planes %v: %v, want %q", c.planes, err, c.want)
		}
	}
}
