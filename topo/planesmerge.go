package topo

import "fmt"

// MergePlanes merges the discoveries of a planarized fabric's planes into
// one fabric (docs/planes.md): walks[i] is a discovery from one plane port
// of the local planarized CA, its Origin that port, whose number is the
// plane of every node the walk reached. Nodes are merged by node GUID, in
// the order of the walks (the first walk's nodes first), and their ports by
// number; links are kept at both ends. A CA met in two or more walks whose
// ports there share one port GUID is planarized (Node.Planarized), each
// port on the plane of the walk that reached it cabled; every port of
// every other node gets the plane of the walk that found it (Port.Plane).
// The walks' nodes and ports become the result's: the walks are not to be
// used afterwards. A node GUID met as two kinds of node or port counts, a
// walk without an Origin or with a port number beyond MaxPlanes, and two
// walks from ports of one number, are errors.
func MergePlanes(walks []*Fabric) (*Fabric, error) {
	planes := make([]int, len(walks))
	for i, w := range walks {
		if w == nil || w.Origin == nil || w.Origin.Num < 1 || w.Origin.Num > MaxPlanes {
			return nil, fmt.Errorf("topo: merge planes: discovery %d has no local plane port numbered 1 to %d", i+1, MaxPlanes)
		}
		planes[i] = w.Origin.Num
	}
	return MergePlanesAs(walks, planes)
}

// MergePlanesAs is MergePlanes with the plane of each walk given:
// planes[i] is walks[i]'s, from 1 to MaxPlanes, each once (for when the
// local plane ports' numbers are not their planes': engine.DiscoverPlanes
// on several SMI devices).
func MergePlanesAs(walks []*Fabric, planes []int) (*Fabric, error) {
	if len(walks) == 0 {
		return nil, fmt.Errorf("topo: merge planes: no discovery to merge")
	}
	if len(planes) != len(walks) {
		return nil, fmt.Errorf("topo: merge planes: %d discoveries and %d planes", len(walks), len(planes))
	}
	m := planeMerge{byGUID: make(map[uint64]*Node), dup: make(map[*Port]*Port), seen: make(map[*Node]uint8)}
	var taken [MaxPlanes + 1]bool
	for i, w := range walks {
		pl := planes[i]
		switch {
		case w == nil || w.Origin == nil:
			return nil, fmt.Errorf("topo: merge planes: discovery %d has no local plane port", i+1)
		case pl < 1 || pl > MaxPlanes:
			return nil, fmt.Errorf("topo: merge planes: discovery %d is of plane %d, not 1 to %d", i+1, pl, MaxPlanes)
		case taken[pl]:
			return nil, fmt.Errorf("topo: merge planes: discovery %d is of plane %d, as an earlier one", i+1, pl)
		}
		taken[pl] = true
		for _, n := range w.Nodes {
			if err := m.add(n, uint8(pl)); err != nil {
				return nil, err
			}
		}
	}
	for _, n := range m.nodes {
		for _, pt := range n.Ports {
			if pt == nil {
				continue
			}
			if c := m.dup[pt.Remote]; c != nil {
				pt.Remote = c
			}
		}
	}
	origin := walks[0].Origin
	if c := m.dup[origin]; c != nil {
		origin = c
	}
	return &Fabric{Nodes: m.nodes, Origin: origin}, nil
}

// planeMerge is MergePlanes's state: the merged nodes by GUID, the ports
// met again (each to the one kept), and the plane each node was first
// met on.
type planeMerge struct {
	nodes  []*Node
	byGUID map[uint64]*Node
	dup    map[*Port]*Port
	seen   map[*Node]uint8
}

// add merges n, found by the walk of plane pl.
func (m *planeMerge) add(n *Node, pl uint8) error {
	c := m.byGUID[n.GUID]
	if c == nil {
		m.byGUID[n.GUID], m.seen[n] = n, pl
		m.nodes = append(m.nodes, n)
		for _, pt := range n.Ports {
			if pt != nil {
				pt.Plane = pl
			}
		}
		return nil
	}
	if c.Type != n.Type || c.NumPorts != n.NumPorts || len(c.Ports) != len(n.Ports) {
		return fmt.Errorf("topo: merge planes: node GUID 0x%016x is a %s of %d ports on plane %d and a %s of %d ports on plane %d",
			n.GUID, c.Type, c.NumPorts, m.seen[c], n.Type, n.NumPorts, pl)
	}
	for num, pt := range n.Ports {
		if pt == nil {
			continue
		}
		k := c.Ports[num]
		if k == nil {
			pt.Node, pt.Plane, c.Ports[num] = c, pl, pt
			k = pt
		} else {
			m.dup[pt] = k
			if k.Remote == nil && pt.Remote != nil {
				k.Remote, k.Plane = pt.Remote, pl
			}
		}
		if c.Type == CA && pl != m.seen[c] && k.GUID != 0 && k.GUID == firstPortGUID(c) {
			c.Planarized = true
		}
	}
	return nil
}

// firstPortGUID is the GUID of n's lowest-numbered port.
func firstPortGUID(n *Node) uint64 {
	for _, pt := range n.Ports {
		if pt != nil {
			return pt.GUID
		}
	}
	return 0
}
