package analyze

import (
	"errors"
	"fmt"

	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// Tables are the routing tables the analyses read beside the topology.
type Tables struct {
	// LFT are the switches' linear forwarding tables; nil when not read
	// (a topology file, a snapshot, a cache).
	LFT *topo.ForwardingTables
	// MFT are the switches' multicast forwarding tables; nil when not
	// read.
	MFT *topo.MulticastTables
	// SL2VL are the SLtoVLMappingTables; nil when not read, and then every
	// SL is taken to travel on VL 0 (the results say so).
	SL2VL *topo.SL2VLTables
}

// ErrNoLFT is the error of an analysis that follows unicast routes on a
// fabric whose forwarding tables were not read.
var ErrNoLFT = errors.New("no linear forwarding tables (read from the live fabric; a topology file, snapshot or cache has none)")

// ErrNoMFT is the error of a multicast analysis without MFTs.
var ErrNoMFT = errors.New("no multicast forwarding tables (read from the live fabric; a topology file, snapshot or cache has none)")

// NodeRef names a node in results as JSON and Lua carry it.
type NodeRef struct {
	Desc string `json:"desc"`
	GUID string `json:"guid"`
	Type string `json:"type"`
}

func ref(n *topo.Node) NodeRef {
	return NodeRef{Desc: n.Desc, GUID: fmt.Sprintf("0x%016x", n.GUID), Type: n.Type.String()}
}

// index is the routing graph the analyses share: switches by index, where
// each of their ports leads, their LFTs and the destination LIDs.
type index struct {
	f     *topo.Fabric
	sw    []*topo.Node
	swIdx map[*topo.Node]int32
	next  [][]hop   // by switch, by port
	lft   [][]uint8 // by switch; nil when not read
	dests []dest
	// cas[s] are the ports of switch s cabled to a CA or router port with
	// a LID: the sources of traffic.
	cas [][]int
}

// hop is where a switch's egress port leads.
type hop struct {
	sw   int32      // next switch, or noSwitch (an endport, nothing) or unknownSwitch
	port *topo.Port // the remote port, nil when uncabled
}

const (
	noSwitch      = -1
	unknownSwitch = -2 // a switch not in the index (no table)
)

// dest is one destination LID.
type dest struct {
	lid  uint16
	port *topo.Port
	sw   int32 // the switch it is (its port 0), else -1
	at   int32 // a CA port's switch, else -1
	atP  int   // the port of at it is cabled to
}

// newIndex indexes f; the switches are those of lft when given (the ones
// whose tables were read), else every switch of f.
func newIndex(f *topo.Fabric, lft *topo.ForwardingTables) *index {
	x := &index{f: f, swIdx: map[*topo.Node]int32{}}
	if lft != nil {
		x.sw = lft.Switches
		x.lft = lft.Ports
	} else {
		for _, n := range f.Nodes {
			if n.Type == topo.Switch {
				x.sw = append(x.sw, n)
			}
		}
	}
	for i, n := range x.sw {
		x.swIdx[n] = int32(i)
	}
	x.next = make([][]hop, len(x.sw))
	x.cas = make([][]int, len(x.sw))
	for i, n := range x.sw {
		x.next[i] = make([]hop, len(n.Ports))
		for pn, p := range n.Ports {
			h := hop{sw: noSwitch}
			if pn > 0 && p != nil && p.Remote != nil {
				h.port = p.Remote
				if j, ok := x.swIdx[p.Remote.Node]; ok {
					h.sw = j
				} else if p.Remote.Node.Type == topo.Switch {
					h.sw = unknownSwitch
				} else if p.Remote.LID != 0 {
					x.cas[i] = append(x.cas[i], pn)
				}
			} else if pn > 0 && p != nil && p.PhysState == smp.PhysStateLinkUp {
				// Linked to what discovery did not reach: where a
				// route goes from there is unknown.
				h.sw = unknownSwitch
			}
			x.next[i][pn] = h
		}
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 || (n.Type == topo.Switch && p.Num != 0) {
				continue
			}
			for k := 0; k < 1<<p.LMC; k++ {
				d := dest{lid: p.LID + uint16(k), port: p, sw: -1, at: -1}
				if n.Type == topo.Switch {
					if i, ok := x.swIdx[n]; ok {
						d.sw = i
					}
				} else if p.Remote != nil {
					if i, ok := x.swIdx[p.Remote.Node]; ok {
						d.at, d.atP = i, p.Remote.Num
					}
				}
				x.dests = append(x.dests, d)
			}
		}
	}
	return x
}

// out is switch s's egress port for lid: 255 (drop) past its table.
func (x *index) out(s int32, lid uint16) int {
	if t := x.lft[s]; int(lid) < len(t) {
		return int(t[lid])
	}
	return 255
}

// step is where switch s sends lid: the next switch (or noSwitch when it
// leaves the switches, unknownSwitch) and the port it leaves by; ok false
// when it is dropped (255, a port past the switch, port 0 of another
// LID, an uncabled port).
func (x *index) step(s int32, lid uint16) (next int32, port int, ok bool) {
	port = x.out(s, lid)
	if port == 0 || port >= len(x.next[s]) {
		return noSwitch, port, false
	}
	h := x.next[s][port]
	if h.port == nil && h.sw != unknownSwitch {
		return noSwitch, port, false
	}
	return h.sw, port, true
}
