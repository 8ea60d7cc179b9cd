package analyze

import (
	"fmt"

	"github.com/ibscript/ibscript/topo"
)

// LinkDirection is the traffic of one direction of a link: what leaves
// Node by Port towards Remote.
type LinkDirection struct {
	Node   NodeRef  `json:"node"`
	Port   int      `json:"port"`
	Remote *PortRef `json:"remote"`
	// Destinations are the ports whose LIDs the switch's LFT sends out of
	// Port (every LID of them: with LMC a port is listed once per LID),
	// in LID order: what ibfindnodesusing lists (its CAs); nil when Node
	// is not a switch with an LFT.
	Destinations []LIDRef `json:"destinations"`
	// Sources are the CA and router ports whose route to one of the
	// Destinations crosses the link (Node's own CA ports included).
	Sources []PortRef `json:"sources"`
}

// LIDRef is a LID and the port that holds it.
type LIDRef struct {
	LID  uint16  `json:"lid"`
	Port PortRef `json:"port"`
}

// LinkUse is what NodesUsing found: both directions of a link.
type LinkUse struct {
	Out LinkDirection  `json:"out"`
	In  *LinkDirection `json:"in"` // nil when the port is not cabled
}

// NodesUsing reports which nodes use the link at switch sw's port: the
// LIDs the switch routes out of it and the sources whose routes to them
// cross it, and the same for the other direction (the remote switch's
// port back; a CA's traffic is its own).
func NodesUsing(f *topo.Fabric, t Tables, sw *topo.Node, port int) (*LinkUse, error) {
	if t.LFT == nil {
		return nil, ErrNoLFT
	}
	if sw == nil || sw.Type != topo.Switch {
		return nil, fmt.Errorf("analyze: nodes using a link: not a switch")
	}
	if port < 1 || port >= len(sw.Ports) || sw.Ports[port] == nil {
		return nil, fmt.Errorf("analyze: %q (0x%016x) has no port %d", sw.Desc, sw.GUID, port)
	}
	x := newIndex(f, t.LFT)
	u := &LinkUse{Out: x.direction(sw, port)}
	if rp := sw.Ports[port].Remote; rp != nil {
		in := x.direction(rp.Node, rp.Num)
		u.In = &in
	}
	return u, nil
}

func (x *index) direction(n *topo.Node, port int) LinkDirection {
	p := n.Ports[port]
	ld := LinkDirection{Node: ref(n), Port: port, Sources: []PortRef{}}
	if p.Remote != nil {
		ld.Remote = portRef(p.Remote)
	}
	s, ok := x.swIdx[n]
	if !ok {
		if n.Type != topo.Switch && p.LID != 0 {
			ld.Sources = append(ld.Sources, *portRef(p))
		}
		return ld
	}
	ld.Destinations = []LIDRef{}
	crosses := make([]bool, len(x.sw)) // switches whose CA traffic crosses
	row := make([]int8, len(x.sw))
	for di := range x.dests {
		d := &x.dests[di]
		if x.out(s, d.lid) != port {
			continue
		}
		ld.Destinations = append(ld.Destinations, LIDRef{LID: d.lid, Port: *portRef(d.port)})
		for i := range row {
			row[i] = -2
		}
		row[s] = 1
		for o := range x.sw {
			if x.passes(int32(o), s, d, row) {
				crosses[o] = true
			}
		}
	}
	for o, c := range crosses {
		if !c {
			continue
		}
		for _, cp := range x.cas[o] {
			ld.Sources = append(ld.Sources, *portRef(x.next[o][cp].port))
		}
	}
	return ld
}

// passes reports whether switch o's route to d goes through switch s
// (row: 1 yes, 0 no, -2 unknown, -3 on the walk), filling row.
func (x *index) passes(o, s int32, d *dest, row []int8) bool {
	var stack []int32
	out := int8(0)
	for cur := o; ; {
		if v := row[cur]; v != -2 {
			if v == 1 {
				out = 1
			}
			break
		}
		row[cur] = -3
		stack = append(stack, cur)
		nx, _, ok := x.step(cur, d.lid)
		if !ok || nx < 0 || cur == d.sw {
			break
		}
		cur = nx
	}
	for _, v := range stack {
		row[v] = out
	}
	return out == 1
}
