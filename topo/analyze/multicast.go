package analyze

import (
	"slices"

	"github.com/ibscript/ibscript/topo"
)

// mgroup is one MLID's tree: each switch's port mask (by index) and the
// member ports (CA and router ports cabled to a switch port of the mask).
type mgroup struct {
	mlid    uint16
	mask    []topo.PortMask // by switch of the index; zero where not in the MFTs
	members []member
}

// member is a CA or router port in a group: the switch and port it is
// cabled to.
type member struct {
	sw   int32
	port int
}

// groups collects the MLIDs of t over the index's switches, in MLID order.
func groups(x *index, t *topo.MulticastTables) []mgroup {
	byMLID := map[uint16]*mgroup{}
	for i, n := range t.Switches {
		s, ok := x.swIdx[n]
		if !ok || i >= len(t.Groups) {
			continue
		}
		for mlid, m := range t.Groups[i] {
			g := byMLID[mlid]
			if g == nil {
				g = &mgroup{mlid: mlid, mask: make([]topo.PortMask, len(x.sw))}
				byMLID[mlid] = g
			}
			g.mask[s] = m
		}
	}
	out := make([]mgroup, 0, len(byMLID))
	for _, g := range byMLID {
		for s := range x.sw {
			for _, p := range x.cas[s] {
				if g.mask[s].Has(p) {
					g.members = append(g.members, member{int32(s), p})
				}
			}
		}
		out = append(out, *g)
	}
	slices.SortFunc(out, func(a, b mgroup) int { return int(a.mlid) - int(b.mlid) })
	return out
}

// arrivals are the (switch, input port) pairs a group's packets reach
// from any member: a switch forwards a packet to every port of its mask
// but the one it came in by.
func (g *mgroup) arrivals(x *index) [][2]int32 {
	seen := map[[2]int32]bool{}
	var queue [][2]int32
	for _, m := range g.members {
		k := [2]int32{m.sw, int32(m.port)}
		if !seen[k] {
			seen[k] = true
			queue = append(queue, k)
		}
	}
	for i := 0; i < len(queue); i++ {
		s, in := queue[i][0], int(queue[i][1])
		g.each(x, s, in, func(o int, z int32, zin int) {
			k := [2]int32{z, int32(zin)}
			if !seen[k] {
				seen[k] = true
				queue = append(queue, k)
			}
		})
	}
	return queue
}

// each calls fn for every switch-to-switch port o that switch s forwards
// a packet that came in by port in to: the next switch z and its input
// port.
func (g *mgroup) each(x *index, s int32, in int, fn func(o int, z int32, zin int)) {
	m := &g.mask[s]
	for o := 1; o < len(x.next[s]); o++ {
		if o == in || !m.Has(o) {
			continue
		}
		if h := x.next[s][o]; h.sw >= 0 {
			fn(o, h.sw, h.port.Num)
		}
	}
}

// multicastDeps returns the dependencies of every group's routes for SL
// sl, and the number of groups.
func multicastDeps(x *index, vm *vlMap, cg *chanGraph, t *topo.MulticastTables, sl int) ([]uint64, int) {
	gs := groups(x, t)
	var edges []uint64
	for i := range gs {
		g := &gs[i]
		for _, a := range g.arrivals(x) {
			s, in := a[0], int(a[1])
			g.each(x, s, in, func(o int, z int32, zin int) {
				from := cg.id(s, o, vm.vl(s, in, o, sl))
				g.each(x, z, zin, func(oz int, _ int32, _ int) {
					edges = append(edges, uint64(from)<<32|uint64(cg.id(z, oz, vm.vl(z, zin, oz, sl))))
				})
			})
		}
	}
	return sortEdges(edges), len(gs)
}

// MulticastProblem is a fault of one group's tree.
type MulticastProblem struct {
	MLID uint16 `json:"mlid"`
	// Kind is "loop" (a packet from Source reaches a switch twice: the
	// tree has a cycle), "unreached" (Member gets no copy of Source's
	// packets) or "duplicate" (Member gets more than one).
	Kind   string   `json:"kind"`
	Source *PortRef `json:"source"`
	Member *PortRef `json:"member,omitempty"`
	Switch *NodeRef `json:"switch,omitempty"`
}

// PortRef names a port in results.
type PortRef struct {
	Node NodeRef `json:"node"`
	Port int     `json:"port"`
	LID  uint16  `json:"lid,omitempty"`
}

func portRef(p *topo.Port) *PortRef {
	return &PortRef{Node: ref(p.Node), Port: p.Num, LID: p.LID}
}

// MulticastReport is what ValidateMulticast found.
type MulticastReport struct {
	MLIDs    int                `json:"mlids"`
	Members  int                `json:"members"` // summed over groups
	Problems []MulticastProblem `json:"problems"`
	Count    int                `json:"count"`
}

// ValidateMulticast floods a packet from every member of every MLID of
// the MFTs through the switches' masks and reports members that get no
// copy or more than one, and trees with a loop (a switch reached twice).
// Members are the CA and router ports whose switch port is in the mask.
func ValidateMulticast(f *topo.Fabric, t Tables) (*MulticastReport, error) {
	if t.MFT == nil {
		return nil, ErrNoMFT
	}
	x := newIndex(f, t.LFT)
	if t.LFT == nil {
		x = newIndex(f, &topo.ForwardingTables{Switches: t.MFT.Switches, Ports: make([][]uint8, len(t.MFT.Switches))})
	}
	r := &MulticastReport{Problems: []MulticastProblem{}}
	add := func(p MulticastProblem) {
		r.Count++
		if len(r.Problems) < MaxProblems {
			r.Problems = append(r.Problems, p)
		}
	}
	for _, g := range groups(x, t.MFT) {
		r.MLIDs++
		r.Members += len(g.members)
		for _, src := range g.members {
			g.flood(x, src, add)
		}
	}
	return r, nil
}

// flood sends one packet from member src through g's tree and reports
// what goes wrong.
func (g *mgroup) flood(x *index, src member, add func(MulticastProblem)) {
	srcRef := portRef(x.next[src.sw][src.port].port)
	got := map[member]int{}
	visited := make(map[int32]bool)
	type at struct {
		sw int32
		in int
	}
	queue := []at{{src.sw, src.port}}
	for i := 0; i < len(queue); i++ {
		s, in := queue[i].sw, queue[i].in
		if visited[s] {
			r := ref(x.sw[s])
			add(MulticastProblem{MLID: g.mlid, Kind: "loop", Source: srcRef, Switch: &r})
			return
		}
		visited[s] = true
		for _, p := range x.cas[s] {
			if p != in && g.mask[s].Has(p) {
				got[member{s, p}]++
			}
		}
		g.each(x, s, in, func(_ int, z int32, zin int) { queue = append(queue, at{z, zin}) })
	}
	for _, m := range g.members {
		if m == src {
			continue
		}
		switch n := got[m]; {
		case n == 0:
			add(MulticastProblem{MLID: g.mlid, Kind: "unreached", Source: srcRef, Member: portRef(x.next[m.sw][m.port].port)})
		case n > 1:
			add(MulticastProblem{MLID: g.mlid, Kind: "duplicate", Source: srcRef, Member: portRef(x.next[m.sw][m.port].port)})
		}
	}
}
