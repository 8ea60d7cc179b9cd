package topo

import (
	"strings"
	"testing"
)

// TestMergePlanesErrors: walks MergePlanes cannot merge are refused with
// an error naming why: none, one without a local port numbered 1 to
// MaxPlanes, a node GUID met as a CA and as a switch.
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
