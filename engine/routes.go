package engine

import (
	"fmt"

	"github.com/ibscript/ibscript/topo"
)

// RouteProblem is a LID route that does not reach its destination, named
// at the switch whose forwarding table entry is at fault (routes of other
// switches that only pass through it are counted in
// RouteAnalysis.Inherited, not listed).
type RouteProblem struct {
	Switch *topo.Node
	LID    uint16
	Port   uint8  // the egress port the switch's LFT gives for LID
	Kind   string // "drop", "uncabled", "wrong-port", "no-lft", "loop", "port0"
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
	// Problems lists root causes, at most MaxProblems; Count counts them
	// all, Loops the routes caught in a forwarding loop, and Inherited
	// the routes that fail only because they pass through a problem.
	Problems  []RouteProblem
	Count     int
	Loops     int
	Inherited int
	// Hops is the histogram of host-to-host path lengths in links, over
	// every ordered pair of CA ports with LIDs: Hops[h] pairs need h
	// links (pairs whose route fails are not counted).
	Hops map[int]int
}

// MaxProblems bounds RouteAnalysis.Problems.
const MaxProblems = 1000

// AnalyzeRoutes follows the route of every LID of f from every switch of
// l, through the forwarding tables only (no MADs), and reports the routes
// that do not reach the LID's port: dropped, sent to an uncabled port or
// the wrong node, or caught in a loop. It also counts host-to-host hops.
func AnalyzeRoutes(f *topo.Fabric, l *LFTs) *RouteAnalysis {
	ra := &RouteAnalysis{Switches: len(l.Switches), Hops: map[int]int{}}
	swIdx := make(map[*topo.Node]int, len(l.Switches))
	for i, n := range l.Switches {
		swIdx[n] = i
	}
	// Destinations: every LID of every endport.
	type dest struct {
		port *topo.Port
		lid  uint16
	}
	var dests []dest
	casOn := make([]int, len(l.Switches)) // CA ports with LIDs cabled to each switch
	var caSrc []int                       // switch index of each such CA port, by destination index (-1 otherwise)
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 || (n.Type == topo.Switch && p.Num != 0) {
				continue
			}
			for k := 0; k < 1<<p.LMC; k++ {
				dests = append(dests, dest{p, p.LID + uint16(k)})
				src := -1
				if n.Type != topo.Switch && k == 0 && p.Remote != nil {
					if i, ok := swIdx[p.Remote.Node]; ok {
						src = i
						casOn[i]++
					}
				}
				caSrc = append(caSrc, src)
			}
		}
	}
	ra.LIDs = len(dests)
	const (
		unknown  = 0
		visiting = 1
		ok       = 2
		bad      = 3
	)
	state := make([]uint8, len(l.Switches))
	hops := make([]int32, len(l.Switches))
	hist := make([]int, 1)
	var problem func(i int, lid uint16, port uint8, kind, detail string)
	problem = func(i int, lid uint16, port uint8, kind, detail string) {
		ra.Count++
		if len(ra.Problems) < MaxProblems {
			ra.Problems = append(ra.Problems, RouteProblem{Switch: l.Switches[i], LID: lid, Port: port, Kind: kind, Detail: detail})
		}
	}
	for di, d := range dests {
		clear(state)
		var walk func(i int) bool
		walk = func(i int) bool {
			switch state[i] {
			case ok:
				return true
			case bad:
				return false
			case visiting:
				ra.Loops++
				problem(i, d.lid, portOf(l.Ports[i], d.lid), "loop", fmt.Sprintf("forwarding loop through %q for LID %d", l.Switches[i].Desc, d.lid))
				state[i] = bad
				return false
			}
			sw := l.Switches[i]
			if d.port.Node == sw {
				state[i], hops[i] = ok, 0
				return true
			}
			state[i] = visiting
			port := portOf(l.Ports[i], d.lid)
			fail := func(kind, detail string) bool {
				problem(i, d.lid, port, kind, detail)
				state[i] = bad
				return false
			}
			switch {
			case port == 255 || int(port) > sw.NumPorts:
				return fail("drop", fmt.Sprintf("LID %d is dropped (LFT entry %d)", d.lid, port))
			case port == 0:
				return fail("port0", fmt.Sprintf("LID %d is sent to port 0 but is not the switch's", d.lid))
			}
			var out *topo.Port
			if int(port) < len(sw.Ports) {
				out = sw.Ports[port]
			}
			if out == nil || out.Remote == nil {
				return fail("uncabled", fmt.Sprintf("LID %d leaves by port %d, which is not cabled", d.lid, port))
			}
			next := out.Remote
			if next.Node.Type != topo.Switch {
				if next == d.port {
					state[i], hops[i] = ok, 1
					return true
				}
				return fail("wrong-port", fmt.Sprintf("LID %d (%q port %d) is sent to %q port %d", d.lid, d.port.Node.Desc, d.port.Num, next.Node.Desc, next.Num))
			}
			j, has := swIdx[next.Node]
			if !has {
				return fail("no-lft", fmt.Sprintf("LID %d goes to %q, whose forwarding table was not read", d.lid, next.Node.Desc))
			}
			if !walk(j) {
				if state[i] == visiting {
					ra.Inherited++
					state[i] = bad
				}
				return false
			}
			state[i], hops[i] = ok, hops[j]+1
			return true
		}
		for i := range l.Switches {
			ra.Routes++
			if walk(i) && casOn[i] > 0 && d.port.Node.Type != topo.Switch {
				// Host-to-host: one link to the source's switch, then the
				// switch's route. Pairs of a CA port with itself are not
				// counted.
				h := int(hops[i]) + 1
				n := casOn[i]
				if caSrc[di] == i {
					n--
				}
				for len(hist) <= h {
					hist = append(hist, 0)
				}
				hist[h] += n
			}
		}
	}
	for h, n := range hist {
		if n > 0 {
			ra.Hops[h] = n
		}
	}
	return ra
}

func portOf(lft []uint8, lid uint16) uint8 {
	if int(lid) < len(lft) {
		return lft[lid]
	}
	return 255
}
