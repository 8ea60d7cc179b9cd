package topo

import (
	"fmt"
	"runtime"
	"sync"

	"github.com/ibscript/ibscript/mad/smp"
)

// RouteProblem is a LID route that does not reach its destination, named
// at the switch whose forwarding table entry is at fault (routes of other
// switches that only pass through it are counted in
// RouteAnalysis.Inherited, not listed).
type RouteProblem struct {
	Switch *Node
	LID    uint16
	Port   uint8  // the egress port the switch's LFT gives for LID
	Kind   string // "drop", "uncabled", "wrong-port", "loop", "port0"
	Detail string
}

func (p RouteProblem) String() string {
	return fmt.Sprintf("%q (0x%016x) LID %d -> port %d: %s", p.Switch.Desc, p.Switch.GUID, p.LID, p.Port, p.Detail)
}

// RouteAnalysis is what AnalyzeRoutes found.
type RouteAnalysis struct {
	Switches int // switches with a forwarding table
	LIDs     int // destination LIDs (every LID of every endport)
	Routes   int // switch-to-LID routes followed
	// Problems lists root causes, at most MaxProblems, in LID order; Count
	// counts them all, Loops the routes caught in a forwarding loop, and
	// Inherited the routes that fail only because they pass through a
	// problem.
	Problems  []RouteProblem
	Count     int
	Loops     int
	Inherited int
	// Unknown counts the routes whose outcome is not known: they reach a
	// switch whose forwarding table was not read (not in the
	// ForwardingTables), so whether they arrive cannot be told. They are
	// neither problems nor inherited.
	Unknown int
	// Hops is the histogram of host-to-host path lengths in links, over
	// every ordered pair of CA ports with LIDs: Hops[h] pairs need h
	// links (pairs whose route fails are not counted).
	Hops map[int]int
}

// MaxProblems bounds RouteAnalysis.Problems.
const MaxProblems = 1000

// ForwardingTables are the linear forwarding tables AnalyzeRoutes
// follows: Ports[i] is the egress port by LID of Switches[i]; 255, or a
// LID past the table, means drop (engine.Session.LFTs reads them).
type ForwardingTables struct {
	Switches []*Node
	Ports    [][]uint8
}

// hop is where a switch's egress port leads.
type hop struct {
	sw   int32 // next switch index, or -1
	port *Port // the remote port (CA or switch), nil when uncabled
}

// AnalyzeRoutes follows the route of every LID of f from every switch of
// l, through the forwarding tables only (no MADs), and reports the routes
// that do not reach the LID's port: dropped, sent to an uncabled port or
// the wrong node, or caught in a loop. A route that reaches a switch whose
// table l lacks (it could not be read), or leaves by a port that is
// linked (PhysState LinkUp) to what discovery did not reach, is counted in
// Unknown, never as a problem. It also counts host-to-host hops.
// The LIDs are split among GOMAXPROCS goroutines.
func AnalyzeRoutes(f *Fabric, l *ForwardingTables) *RouteAnalysis {
	return AnalyzePlaneRoutes(f, l, 0)
}

// AnalyzePlaneRoutes is AnalyzeRoutes of one plane of a planarized
// fabric (docs/planes.md): l holds that plane's switches, which route its
// LIDs alone, and the destinations are the LIDs of f's ports on plane
// (Port.Plane; a planarized CA's plane port, a switch's port 0). Plane 0
// is AnalyzeRoutes: every LID of f.
func AnalyzePlaneRoutes(f *Fabric, l *ForwardingTables, plane uint8) *RouteAnalysis {
	S := len(l.Switches)
	swIdx := make(map[*Node]int, S)
	for i, n := range l.Switches {
		swIdx[n] = i
	}
	next := routeHops(l, swIdx)
	dests, casOn := routeDests(f, swIdx, S, plane)
	workers := max(1, min(runtime.GOMAXPROCS(0), len(dests)/64+1))
	results := make([]routeWalker, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			r := &results[w]
			*r = routeWalker{l: l, next: next, casOn: casOn,
				state: make([]uint8, S), hops: make([]int32, S), stack: make([]int32, 0, 16), hist: make([]int, 1)}
			for di := w; di < len(dests); di += workers {
				r.walk(&dests[di])
			}
		})
	}
	wg.Wait()
	ra := &RouteAnalysis{Switches: S, LIDs: len(dests), Hops: map[int]int{}}
	for _, r := range results {
		ra.Routes += r.n
		ra.Count += r.count
		ra.Loops += r.loops
		ra.Inherited += r.inh
		ra.Unknown += r.unknown
		for _, p := range r.problems {
			if len(ra.Problems) < MaxProblems {
				ra.Problems = append(ra.Problems, p)
			}
		}
		for h, n := range r.hist {
			if n > 0 {
				ra.Hops[h] += n
			}
		}
	}
	sortProblems(ra.Problems)
	return ra
}

// routeHops returns where each port of each switch of l leads, by switch
// index and port number.
func routeHops(l *ForwardingTables, swIdx map[*Node]int) [][]hop {
	next := make([][]hop, len(l.Switches)) // by switch, by port
	for i, n := range l.Switches {
		next[i] = make([]hop, len(n.Ports))
		for pn, p := range n.Ports {
			h := hop{sw: -1}
			switch {
			case p != nil && p.Remote != nil:
				h.port = p.Remote
				if j, ok := swIdx[p.Remote.Node]; ok {
					h.sw = int32(j)
				} else if p.Remote.Node.Type == Switch {
					h.sw = -2 // a switch whose table was not read
				}
			case p != nil && pn > 0 && p.PhysState == smp.PhysStateLinkUp:
				// Linked, but discovery did not learn what is
				// behind it (the route there could not be read):
				// where a route goes through it is unknown.
				h.sw = -2
			}
			next[i][pn] = h
		}
	}
	return next
}

// routeDest is a LID routes are followed to.
type routeDest struct {
	port *Port
	lid  uint16
	sw   int32 // the destination switch (its port 0), else -1
	src  int32 // for a CA port's base LID: the switch it is cabled to, else -1
}

// routeDests lists every LID of f's ports (on plane, when not 0), and
// counts the CA ports with LIDs cabled to each of the S switches.
func routeDests(f *Fabric, swIdx map[*Node]int, S int, plane uint8) (dests []routeDest, casOn []int) {
	casOn = make([]int, S)
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 || (n.Type == Switch && p.Num != 0) || (plane != 0 && p.Plane != plane) {
				continue
			}
			for k := 0; k < 1<<p.LMC; k++ {
				d := routeDest{port: p, lid: p.LID + uint16(k), sw: -1, src: -1}
				if n.Type == Switch {
					if i, ok := swIdx[n]; ok {
						d.sw = int32(i)
					}
				} else if k == 0 && p.Remote != nil {
					if i, ok := swIdx[p.Remote.Node]; ok {
						d.src = int32(i)
						casOn[i]++
					}
				}
				dests = append(dests, d)
			}
		}
	}
	return dests, casOn
}

// What a route walk knows of a switch, for one destination.
const (
	walkUnknown  = 0
	walkVisiting = 1
	walkOK       = 2
	walkBad      = 3
	walkUnread   = 4 // reaches a switch whose table was not read
)

// routeWalker follows routes for one goroutine of AnalyzeRoutes and
// counts what it finds.
type routeWalker struct {
	l     *ForwardingTables
	next  [][]hop
	casOn []int
	state []uint8 // by switch, for the current destination
	hops  []int32 // by switch: hops to the destination, once walkOK
	stack []int32

	problems                      []RouteProblem
	count, loops, inh, unknown, n int
	hist                          []int
}

func (r *routeWalker) problem(i int32, d *routeDest, port uint8, kind, detail string) {
	r.count++
	if len(r.problems) < MaxProblems {
		r.problems = append(r.problems, RouteProblem{Switch: r.l.Switches[i], LID: d.lid, Port: port, Kind: kind, Detail: detail})
	}
}

// walk follows the route to d from every switch.
func (r *routeWalker) walk(d *routeDest) {
	l, state, hops, next := r.l, r.state, r.hops, r.next
	clear(state)
	if d.sw >= 0 {
		state[d.sw], hops[d.sw] = walkOK, 0
	}
	for start := range len(state) {
		r.n++
		outcome := r.follow(d, int32(start))
		// Unwind: each switch on the stack forwards to the next.
		for k := len(r.stack) - 1; k >= 0; k-- {
			s := r.stack[k]
			switch outcome {
			case walkOK:
				nx := next[s][portOf(l.Ports[s], d.lid)].sw
				state[s], hops[s] = walkOK, hops[nx]+1
			case walkUnread:
				state[s] = walkUnread
			default:
				state[s] = walkBad
				r.inh++
			}
		}
		if outcome == walkUnread {
			r.unknown++
		}
		if outcome == walkOK && r.casOn[start] > 0 && d.port.Node.Type != Switch {
			// Host-to-host: one link to the source's switch,
			// then the switch's route; a CA port and itself
			// are not a pair.
			h := int(hops[start]) + 1
			n := r.casOn[start]
			if d.src == int32(start) {
				n--
			}
			for len(r.hist) <= h {
				r.hist = append(r.hist, 0)
			}
			r.hist[h] += n
		}
	}
}

// follow follows the route to d from switch i until a switch whose
// outcome is known, leaving on r.stack the switches to unwind, and returns
// the outcome.
func (r *routeWalker) follow(d *routeDest, i int32) uint8 {
	l, state := r.l, r.state
	r.stack = r.stack[:0]
	for {
		if st := state[i]; st == walkOK || st == walkBad || st == walkUnread {
			return st
		} else if st == walkVisiting {
			r.loops++
			r.problem(i, d, portOf(l.Ports[i], d.lid), "loop", fmt.Sprintf("forwarding loop through %q for LID %d", l.Switches[i].Desc, d.lid))
			// Every switch on the stack from i on is in
			// the loop; mark them bad without counting them
			// as inherited.
			for k := len(r.stack) - 1; k >= 0; k-- {
				state[r.stack[k]] = walkBad
				if r.stack[k] == i {
					r.stack = r.stack[:k]
					break
				}
			}
			return walkBad
		}
		state[i] = walkVisiting
		r.stack = append(r.stack, i)
		port := portOf(l.Ports[i], d.lid)
		sw := l.Switches[i]
		fail := func(kind, detail string) uint8 {
			r.problem(i, d, port, kind, detail)
			state[i] = walkBad
			r.stack = r.stack[:len(r.stack)-1]
			return walkBad
		}
		if port == 255 || int(port) > sw.NumPorts {
			return fail("drop", fmt.Sprintf("LID %d is dropped (LFT entry %d)", d.lid, port))
		}
		if port == 0 {
			return fail("port0", fmt.Sprintf("LID %d is sent to port 0 but is not the switch's", d.lid))
		}
		h := r.next[i][port]
		if h.port == nil && h.sw != -2 {
			return fail("uncabled", fmt.Sprintf("LID %d leaves by port %d, which is not cabled", d.lid, port))
		}
		if h.sw == -2 {
			// The next switch's table was not read:
			// where the route goes from there is
			// unknown.
			state[i] = walkUnread
			r.stack = r.stack[:len(r.stack)-1]
			return walkUnread
		}
		if h.sw < 0 {
			if h.port == d.port {
				state[i], r.hops[i] = walkOK, 1
				r.stack = r.stack[:len(r.stack)-1]
				return walkOK
			}
			return fail("wrong-port", fmt.Sprintf("LID %d (%q port %d) is sent to %q port %d", d.lid, d.port.Node.Desc, d.port.Num, h.port.Node.Desc, h.port.Num))
		}
		i = h.sw
	}
}

func sortProblems(ps []RouteProblem) {
	// insertion order by LID then switch description; small lists
	for i := 1; i < len(ps); i++ {
		for j := i; j > 0 && (ps[j].LID < ps[j-1].LID || (ps[j].LID == ps[j-1].LID && ps[j].Switch.Desc < ps[j-1].Switch.Desc)); j-- {
			ps[j], ps[j-1] = ps[j-1], ps[j]
		}
	}
}

func portOf(lft []uint8, lid uint16) uint8 {
	if int(lid) < len(lft) {
		return lft[lid]
	}
	return 255
}
