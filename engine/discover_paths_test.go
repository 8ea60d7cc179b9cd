package engine

import (
	"slices"
	"testing"

	"github.com/ibscript/ibscript/internal/intmap"
	"github.com/ibscript/ibscript/topo"
)

// TestFinishRoutesAsLibibnetdisc: the concurrent sweep may reach a node
// first by a longer route (here Sw-B through Sw-C, 0,1,3,3, before the
// 36-port switch's port 18 answered); finish gives every node and port
// the route libibnetdisc reaches it by, breadth first with the lowest
// ports first (0,1,18), which dump_fts prints.
func TestFinishRoutesAsLibibnetdisc(t *testing.T) {
	mk := func(typ topo.NodeType, guid uint64, nports int) *topo.Node {
		n := &topo.Node{Type: typ, GUID: guid, NumPorts: nports, Ports: make([]*topo.Port, nports+1)}
		for i := range n.Ports {
			if i == 0 && typ != topo.Switch {
				continue
			}
			pg := guid
			if typ != topo.Switch {
				pg = guid + uint64(i)
			}
			n.Ports[i] = &topo.Port{Node: n, Num: i, GUID: pg}
		}
		return n
	}
	link := func(a *topo.Node, pa int, b *topo.Node, pb int) {
		a.Ports[pa].Remote, b.Ports[pb].Remote = b.Ports[pb], a.Ports[pa]
	}
	m := mk(topo.CA, 0x100000, 4)
	big := mk(topo.Switch, 0x200000, 36)
	b := mk(topo.Switch, 0x200001, 8)
	c := mk(topo.Switch, 0x200002, 8)
	h := mk(topo.CA, 0x100010, 1)
	link(m, 1, big, 2)
	link(big, 3, c, 1)
	link(big, 18, b, 2)
	link(c, 3, b, 3)
	link(m, 2, b, 5)
	link(b, 7, h, 1)
	// The sweep's order and routes: C, then B through C.
	f := &topo.Fabric{Nodes: []*topo.Node{m, big, c, b, h}}
	paths := new(intmap.Map[[]uint8])
	for guid, p := range map[uint64][]uint8{
		m.GUID: {0}, m.GUID + 1: {0}, big.GUID: {0, 1}, c.GUID: {0, 1, 3},
		b.GUID: {0, 1, 3, 3}, m.GUID + 2: {0, 1, 3, 3, 5}, h.GUID: {0, 1, 3, 3, 7}, h.GUID + 1: {0, 1, 3, 3, 7},
	} {
		paths.Set(guid, p)
	}
	finish(f, 1, paths)
	for _, w := range []struct {
		what string
		guid uint64
		want []uint8
	}{
		{"local CA", m.GUID, []uint8{0}},
		{"local port", m.GUID + 1, []uint8{0}},
		{"36-port switch", big.GUID, []uint8{0, 1}},
		{"Sw-C", c.GUID, []uint8{0, 1, 3}},
		{"Sw-B", b.GUID, []uint8{0, 1, 18}},
		{"local CA's port 2", m.GUID + 2, []uint8{0, 1, 18, 5}},
		{"CA behind Sw-B", h.GUID, []uint8{0, 1, 18, 7}},
		{"its port", h.GUID + 1, []uint8{0, 1, 18, 7}},
	} {
		if got, _ := paths.Get(w.guid); !slices.Equal(got, w.want) {
			t.Errorf("%s: route %v, want %v", w.what, got, w.want)
		}
	}
	if got := []*topo.Node{m, big, c, b, h}; !slices.Equal(f.Nodes, got) {
		t.Errorf("node order changed")
	}
}
