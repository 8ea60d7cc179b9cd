package analyze

import (
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/ibscript/ibscript/topo"
)

// Channel is one VL of one direction of a link: the switch port a packet
// leaves by, the port it arrives at, and the VL.
type Channel struct {
	Node       NodeRef `json:"node"`
	Port       int     `json:"port"`
	RemoteNode NodeRef `json:"remote_node"`
	RemotePort int     `json:"remote_port"`
	VL         int     `json:"vl"`
}

func (c Channel) String() string {
	return fmt.Sprintf("%q (%s) port %d VL %d -> %q (%s) port %d", c.Node.Desc, c.Node.GUID, c.Port, c.VL, c.RemoteNode.Desc, c.RemoteNode.GUID, c.RemotePort)
}

// CreditLoop is one cycle of the channel dependency graph: each channel's
// packets wait for buffers of the next, and the last's for the first's.
type CreditLoop struct {
	// SLs are the SLs whose routes add a dependency of the cycle; the
	// Channels' VLs are those the SL2VL tables give them.
	SLs       []int     `json:"sls"`
	Multicast bool      `json:"multicast"` // found on multicast routes
	Channels  []Channel `json:"channels"`
	// Component is the size of the strongly connected component the cycle
	// was taken from: every channel in it is on some cycle.
	Component int `json:"component"`
}

// MaxLoops bounds CreditLoops.Loops.
const MaxLoops = 100

// CreditLoops is what FindCreditLoops found.
type CreditLoops struct {
	// Loops are one cycle per strongly connected component of the
	// dependency graph of every SL, at most MaxLoops; Count counts them
	// all.
	Loops []CreditLoop `json:"loops"`
	Count int          `json:"count"`
	// Channels and Dependencies size the graph.
	Channels     int `json:"channels"`
	Dependencies int `json:"dependencies"`
	// SLClasses are the groups of SLs every table maps to the same VL:
	// each group's routes are followed once.
	SLClasses [][]int `json:"sl_classes"`
	// SL2VL says where the VLs came from: "tables", or "none (every SL
	// on VL 0)" when no SLtoVLMappingTable was read; MissingSL2VL counts
	// the switch port pairs routes use whose table was not read (taken as
	// VL 0).
	SL2VL        string `json:"sl2vl"`
	MissingSL2VL int    `json:"missing_sl2vl"`
	// Unicast and Multicast say which routes were followed: multicast only
	// with MFTs.
	Unicast   bool `json:"unicast"`
	Multicast bool `json:"multicast"`
	// Sources and Destinations count the unicast endpoints (CA and router
	// ports with a LID; every LID); MLIDs the multicast groups.
	Sources      int `json:"sources"`
	Destinations int `json:"destinations"`
	MLIDs        int `json:"mlids"`
}

// FindCreditLoops builds the channel dependency graph of every SL (a
// channel is a direction of a switch-to-switch link and a VL; a packet
// that arrives by one channel and leaves by another makes the second a
// dependency of the first) from the unicast routes of every source port
// (CA and router ports with a LID) to every LID, and from the multicast
// routes of every MLID of the MFTs, and reports its cycles: credit loops,
// which can deadlock the fabric. The VL of each hop is the SL2VL entry of
// the switch's input and output ports (a CA's own table on its link);
// without tables every SL is on VL 0. The graph is one over every SL
// (SLs sharing a VL share its buffers); SLs every table maps to the same
// VL add their dependencies once. Tarjan's algorithm finds the strongly
// connected components; one shortest cycle of each is reported.
//
// Every route is taken on every SL: right for SMs that give all pairs one
// SL (min-hop, up/down, fat-tree), an over-approximation where the SM
// spreads pairs over SLs to break cycles (DFSSSP, LASH), whose per-pair
// SLs this does not know.
func FindCreditLoops(f *topo.Fabric, t Tables) (*CreditLoops, error) {
	if t.LFT == nil && t.MFT == nil {
		return nil, ErrNoLFT
	}
	x := newIndex(f, t.LFT)
	vm := newVLMap(x, t.SL2VL)
	res := &CreditLoops{Loops: []CreditLoop{}, SL2VL: "tables", Unicast: t.LFT != nil, Multicast: t.MFT != nil}
	if vm.none {
		res.SL2VL = "none (every SL on VL 0)"
	}
	res.SLClasses = vm.classes(x)
	if t.LFT != nil {
		for _, ps := range x.cas {
			res.Sources += len(ps)
		}
		res.Destinations = len(x.dests)
	}
	cg := newChanGraph(x)
	// One graph over every SL: SLs sharing a VL share its buffers, so a
	// cycle may run through the dependencies of several.
	perClass := make([][]uint64, len(res.SLClasses))
	var all, uni []uint64
	for i, sls := range res.SLClasses {
		var u, edges []uint64
		if t.LFT != nil {
			u = unicastDeps(x, vm, cg, sls[0])
		}
		edges = u
		if t.MFT != nil {
			var mc []uint64
			mc, res.MLIDs = multicastDeps(x, vm, cg, t.MFT, sls[0])
			edges = sortEdges(append(slices.Clip(u), mc...))
		}
		perClass[i] = edges
		all = append(all, edges...)
		uni = append(uni, u...)
	}
	if len(res.SLClasses) > 1 {
		all, uni = sortEdges(all), sortEdges(uni)
	}
	res.Dependencies = len(all)
	res.Channels = cg.used(all)
	for _, c := range cg.cycles(all) {
		res.Count++
		if len(res.Loops) < MaxLoops {
			res.Loops = append(res.Loops, CreditLoop{SLs: cycleSLs(c.cycle, res.SLClasses, perClass), Component: c.size,
				Channels: cg.channels(c.cycle), Multicast: !allIn(c.cycle, uni)})
		}
	}
	res.MissingSL2VL = missingSL2VL(x, vm)
	return res, nil
}

// missingSL2VL counts the switch port pairs that carry routes from a
// cabled port to a switch link, and the CA and router ports, whose table
// was not read, when some were.
func missingSL2VL(x *index, vm *vlMap) int {
	if vm.none {
		return 0
	}
	n := 0
	for s := range x.sw {
		for in, hi := range x.next[s] {
			for out, ho := range x.next[s] {
				if in != out && in > 0 && hi.port != nil && ho.sw >= 0 && !vm.has(int32(s), in, out) {
					n++
				}
			}
		}
	}
	for _, p := range caPorts(x) {
		if _, ok := vm.ca[p]; !ok {
			n++
		}
	}
	return n
}

// chanGraph numbers the channels: base[s] + port*16 + vl.
type chanGraph struct {
	x    *index
	base []int32
	n    int
}

func newChanGraph(x *index) *chanGraph {
	g := &chanGraph{x: x, base: make([]int32, len(x.sw))}
	for s := range x.sw {
		g.base[s] = int32(g.n)
		g.n += len(x.next[s]) * 16
	}
	return g
}

func (g *chanGraph) id(s int32, port int, vl uint8) uint32 {
	return uint32(g.base[s]) + uint32(port)*16 + uint32(vl)
}

func (g *chanGraph) channel(id uint32) Channel {
	s, _ := slices.BinarySearch(g.base, int32(id))
	if s == len(g.base) || g.base[s] > int32(id) {
		s--
	}
	off := int(id) - int(g.base[s])
	port, vl := off/16, off%16
	sw := g.x.sw[s]
	rp := g.x.next[s][port].port
	c := Channel{Node: ref(sw), Port: port, VL: vl}
	if rp != nil {
		c.RemoteNode, c.RemotePort = ref(rp.Node), rp.Num
	}
	return c
}

func (g *chanGraph) channels(ids []uint32) []Channel {
	cs := make([]Channel, len(ids))
	for i, id := range ids {
		cs[i] = g.channel(id)
	}
	return cs
}

// cycleSLs are the SLs of the classes that add a dependency of the cycle.
func cycleSLs(cycle []uint32, classes [][]int, perClass [][]uint64) []int {
	var sls []int
	for i, es := range perClass {
		for k, c := range cycle {
			e := uint64(c)<<32 | uint64(cycle[(k+1)%len(cycle)])
			if _, ok := slices.BinarySearch(es, e); ok {
				sls = append(sls, classes[i]...)
				break
			}
		}
	}
	slices.Sort(sls)
	return sls
}

// allIn reports whether every dependency of the cycle is in the sorted
// set es.
func allIn(cycle []uint32, es []uint64) bool {
	for i, c := range cycle {
		e := uint64(c)<<32 | uint64(cycle[(i+1)%len(cycle)])
		if _, ok := slices.BinarySearch(es, e); !ok {
			return false
		}
	}
	return true
}

// unicastDeps returns the dependencies (from<<32 | to) of the routes of
// every source to every destination LID for SL sl, split among
// GOMAXPROCS goroutines by destination.
func unicastDeps(x *index, vm *vlMap, cg *chanGraph, sl int) []uint64 {
	workers := max(1, min(runtime.GOMAXPROCS(0), len(x.dests)/64+1))
	parts := make([][]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			u := newUnicastWalk(x, vm, cg, sl)
			for di := w; di < len(x.dests); di += workers {
				u.dest(&x.dests[di], int32(di+1))
				if len(u.edges) > 1<<20 {
					u.edges = sortEdges(u.edges)
				}
			}
			parts[w] = sortEdges(u.edges)
		})
	}
	wg.Wait()
	return mergeEdges(parts)
}

// unicastWalk is one goroutine's state for unicastDeps.
type unicastWalk struct {
	x      *index
	vm     *vlMap
	cg     *chanGraph
	sl     int
	stamp  []int32  // by switch: the destination it carries traffic for
	emit   []uint16 // by switch: the VLs it sends the destination's traffic on
	active []int32
	caVL   map[[2]int32]uint16 // (switch, out port) -> VLs from its CA ports
	edges  []uint64
}

func newUnicastWalk(x *index, vm *vlMap, cg *chanGraph, sl int) *unicastWalk {
	return &unicastWalk{x: x, vm: vm, cg: cg, sl: sl, stamp: make([]int32, len(x.sw)), emit: make([]uint16, len(x.sw)), caVL: map[[2]int32]uint16{}}
}

// dest adds the dependencies of the routes to d (stamp: its number).
func (u *unicastWalk) dest(d *dest, stamp int32) {
	x := u.x
	u.active = u.active[:0]
	// Switches that carry d's traffic: those with a source CA port (not
	// d's own) and every switch their routes pass.
	for s := range x.sw {
		n := len(x.cas[s])
		if d.at == int32(s) {
			n--
		}
		for cur := int32(s); n > 0 && cur >= 0 && u.stamp[cur] != stamp; {
			u.stamp[cur] = stamp
			u.emit[cur] = 0
			u.active = append(u.active, cur)
			if cur == d.sw {
				break
			}
			nx, _, ok := x.step(cur, d.lid)
			if !ok {
				break
			}
			cur = nx
		}
	}
	// The VLs each switch sends d's traffic on: its CA ports' and its
	// active neighbours' arrivals through its SL2VL entries.
	for _, s := range u.active {
		if s == d.sw {
			continue
		}
		o := x.out(s, d.lid)
		u.emit[s] |= u.fromCAs(s, o)
		if nx, _, ok := x.step(s, d.lid); ok && nx >= 0 && u.stamp[nx] == stamp && nx != d.sw {
			in := x.next[s][o].port.Num
			u.emit[nx] |= 1 << u.vm.vl(nx, in, x.out(nx, d.lid), u.sl)
		}
	}
	for _, s := range u.active {
		u.link(s, d, stamp)
	}
}

// link adds the dependency of switch s's channel for d on the next
// switch's, when both are switch-to-switch links.
func (u *unicastWalk) link(s int32, d *dest, stamp int32) {
	x := u.x
	if s == d.sw {
		return
	}
	z, o, ok := x.step(s, d.lid)
	if !ok || z < 0 || z == d.sw || u.stamp[z] != stamp {
		return
	}
	oz := x.out(z, d.lid)
	if oz >= len(x.next[z]) || x.next[z][oz].sw < 0 {
		return // into an endport or an unread switch: never on a cycle
	}
	in := x.next[s][o].port.Num
	to := u.cg.id(z, oz, u.vm.vl(z, in, oz, u.sl))
	for m := u.emit[s]; m != 0; m &= m - 1 {
		vl := uint8(bitIndex(m))
		u.edges = append(u.edges, uint64(u.cg.id(s, o, vl))<<32|uint64(to))
	}
}

// fromCAs is the set of VLs switch s sends traffic of its CA ports on by
// port o.
func (u *unicastWalk) fromCAs(s int32, o int) uint16 {
	if len(u.x.cas[s]) == 0 {
		return 0
	}
	if u.vm.none {
		return 1
	}
	k := [2]int32{s, int32(o)}
	if m, ok := u.caVL[k]; ok {
		return m
	}
	var m uint16
	for _, p := range u.x.cas[s] {
		if p != o {
			m |= 1 << u.vm.vl(s, p, o, u.sl)
		}
	}
	u.caVL[k] = m
	return m
}

func bitIndex(m uint16) int {
	for i := range 16 {
		if m&(1<<i) != 0 {
			return i
		}
	}
	return -1
}

// mergeEdges merges sorted, distinct edge lists into one (a sort of their
// concatenation would redo what each goroutine did).
func mergeEdges(parts [][]uint64) []uint64 {
	for len(parts) > 1 {
		var next [][]uint64
		for i := 0; i < len(parts); i += 2 {
			if i+1 == len(parts) {
				next = append(next, parts[i])
				continue
			}
			a, b := parts[i], parts[i+1]
			m := make([]uint64, 0, len(a)+len(b))
			for len(a) > 0 && len(b) > 0 {
				switch {
				case a[0] < b[0]:
					m, a = append(m, a[0]), a[1:]
				case b[0] < a[0]:
					m, b = append(m, b[0]), b[1:]
				default:
					m, a, b = append(m, a[0]), a[1:], b[1:]
				}
			}
			next = append(next, append(append(m, a...), b...))
		}
		parts = next
	}
	if len(parts) == 0 {
		return nil
	}
	return parts[0]
}

func sortEdges(e []uint64) []uint64 {
	slices.Sort(e)
	return slices.Compact(e)
}
