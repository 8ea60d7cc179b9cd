package engine

import (
	"fmt"
	"slices"
	"testing"

	"github.com/ibscript/ibscript/internal/intmap"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// TestFinishRoutesAsLibibnetdisc: the concurrent sweep may reach a node
// first by a longer route (here Sw-B through Sw-C, 0,1,3,3, before the
// 36-port switch's port 18 answered); finish gives every node and port
// the route libibnetdisc reaches it by, breadth first with the lowest
// ports first (0,1,18), which dump_fts prints.
func TestFinishRoutesAsLibibnetdisc(t *testing.T) {
	m := finishNode(topo.CA, 0x100000, 4)
	big := finishNode(topo.Switch, 0x200000, 36)
	b := finishNode(topo.Switch, 0x200001, 8)
	c := finishNode(topo.Switch, 0x200002, 8)
	h := finishNode(topo.CA, 0x100010, 1)
	finishLink(m, 1, big, 2)
	finishLink(big, 3, c, 1)
	finishLink(big, 18, b, 2)
	finishLink(c, 3, b, 3)
	finishLink(m, 2, b, 5)
	finishLink(b, 7, h, 1)
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

// finishNode is a node of n ports for finish's tests, its ports' GUIDs
// as ibsim gives them.
func finishNode(typ topo.NodeType, guid uint64, nports int) *topo.Node {
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

// finishLink cables port pa of a to port pb of b.
func finishLink(a *topo.Node, pa int, b *topo.Node, pb int) {
	a.Ports[pa].Remote, b.Ports[pb].Remote = b.Ports[pb], a.Ports[pa]
}

// TestFinishOrderBehindMlnxExtPortInfo: libibnetdisc reads the
// MlnxExtPortInfo of a QDR port of a Mellanox device before it looks
// behind the port, so what is cabled there is found a turn later, after
// what is behind the node's slower ports (iblinkinfo lists the nodes in
// that order, reversed). A port at an extended speed, or a node whose
// device ID has no MlnxExtPortInfo, is looked behind at once; what was
// read where libibnetdisc reads nothing is dropped.
func TestFinishOrderBehindMlnxExtPortInfo(t *testing.T) {
	up := func(p *topo.Port, speed, ext uint8) {
		p.PhysState, p.State, p.SpeedActive, p.SpeedExtActive = smp.PhysStateLinkUp, smp.PortStateActive, speed, ext
		p.CapMask = smp.CapIsExtendedSpeedsSupported
		p.MlnxSpeedSupported, p.MlnxSpeedActive = smp.MlnxSpeedFDR10, smp.MlnxSpeedFDR10
	}
	ca := finishNode(topo.CA, 0x100000, 1)
	ca.DeviceID = 0x1003
	sx := finishNode(topo.Switch, 0x200000, 8)
	sx.DeviceID = 0xc738
	s2 := finishNode(topo.Switch, 0x200001, 8)
	s3 := finishNode(topo.Switch, 0x200002, 8)
	rt := finishNode(topo.Router, 0x10, 1)
	finishLink(ca, 1, sx, 1)
	finishLink(sx, 2, s2, 1) // QDR: MlnxExtPortInfo first
	finishLink(sx, 3, rt, 1) // DDR
	finishLink(sx, 4, s3, 1) // EDR
	up(ca.Ports[1], 4, 0)
	up(sx.Ports[0], 0, 0)
	up(sx.Ports[1], 4, 0)
	up(sx.Ports[2], 4, 0)
	up(sx.Ports[3], 2, 0)
	up(sx.Ports[4], 4, 2)
	f := &topo.Fabric{Nodes: []*topo.Node{ca, sx, s2, rt, s3}}
	finish(f, 1, new(intmap.Map[[]uint8]))
	if want := []*topo.Node{ca, sx, rt, s3, s2}; !slices.Equal(f.Nodes, want) {
		t.Errorf("node order %v, want %v", guids(f.Nodes), guids(want))
	}
	for _, w := range []struct {
		p    *topo.Port
		mlnx uint8
	}{{ca.Ports[1], 1}, {sx.Ports[1], 1}, {sx.Ports[2], 1}, {sx.Ports[3], 0}, {sx.Ports[4], 0}} {
		if w.p.MlnxSpeedActive != w.mlnx || w.p.MlnxSpeedSupported != w.mlnx {
			t.Errorf("%x port %d: MlnxExtPortInfo speeds %d/%d, want %d", w.p.Node.GUID, w.p.Num, w.p.MlnxSpeedSupported, w.p.MlnxSpeedActive, w.mlnx)
		}
	}
}

func guids(ns []*topo.Node) []string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprintf("%#x", n.GUID))
	}
	return s
}
