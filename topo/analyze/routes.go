package analyze

import (
	"runtime"
	"sync"

	"github.com/ibscript/ibscript/topo"
)

// MaxProblems bounds the lists of problems and examples in results.
const MaxProblems = 1000

// RouteProblem is a route that does not reach its LID, named at the
// switch whose LFT entry is at fault (topo.RouteProblem).
type RouteProblem struct {
	Switch NodeRef `json:"switch"`
	LID    uint16  `json:"lid"`
	Port   int     `json:"port"`
	Kind   string  `json:"kind"` // drop, uncabled, wrong-port, loop, port0
	Detail string  `json:"detail"`
}

// HopCount is one bar of the hop histogram.
type HopCount struct {
	Hops  int `json:"hops"`
	Pairs int `json:"pairs"`
}

// AsymmetricPair is a pair of ports whose routes differ in length.
type AsymmetricPair struct {
	A      PortRef `json:"a"`
	B      PortRef `json:"b"`
	HopsAB int     `json:"hops_ab"`
	HopsBA int     `json:"hops_ba"`
}

// RouteReport is what ValidateRoutes found.
type RouteReport struct {
	Switches int `json:"switches"` // with an LFT
	LIDs     int `json:"lids"`
	Routes   int `json:"routes"` // switch-to-LID routes followed
	// Problems are the root causes (at most MaxProblems), Count them all,
	// Kinds by kind; Loops counts routes caught in a forwarding loop,
	// Inherited those failing only through a problem, Unknown those
	// reaching a switch whose LFT was not read.
	Problems  []RouteProblem `json:"problems"`
	Count     int            `json:"count"`
	Kinds     map[string]int `json:"kinds"`
	Loops     int            `json:"loops"`
	Inherited int            `json:"inherited"`
	Unknown   int            `json:"unknown"`
	// Pairs counts the source port to destination LID pairs (CA and
	// router ports with a LID to every LID of another port), Unreachable
	// those whose route does not arrive (or meets a switch whose LFT was
	// not read); the hop counts (links, the
	// source's own included) are over the pairs that arrive.
	Pairs       int        `json:"pairs"`
	Unreachable int        `json:"unreachable"`
	MinHops     int        `json:"min_hops"`
	MaxHops     int        `json:"max_hops"`
	Hops        []HopCount `json:"hops"`
	// Asymmetric counts the pairs of ports (base LIDs) whose routes A to
	// B and B to A have different lengths; AsymmetricPairs lists the
	// first MaxProblems.
	Asymmetric      int              `json:"asymmetric"`
	AsymmetricPairs []AsymmetricPair `json:"asymmetric_pairs"`
}

// ValidateRoutes follows every unicast route through the LFTs: from every
// switch to every LID (topo.AnalyzeRoutes: drops, uncabled and wrong
// ports, loops) and from every source port to every LID (reach, hop
// counts and their histogram, asymmetric pairs).
func ValidateRoutes(f *topo.Fabric, t Tables) (*RouteReport, error) {
	if t.LFT == nil {
		return nil, ErrNoLFT
	}
	ra := topo.AnalyzeRoutes(f, t.LFT)
	r := &RouteReport{Switches: ra.Switches, LIDs: ra.LIDs, Routes: ra.Routes, Count: ra.Count, Loops: ra.Loops,
		Inherited: ra.Inherited, Unknown: ra.Unknown, Kinds: map[string]int{}, Problems: []RouteProblem{}, Hops: []HopCount{}, AsymmetricPairs: []AsymmetricPair{}}
	for _, p := range ra.Problems {
		r.Problems = append(r.Problems, RouteProblem{Switch: ref(p.Switch), LID: p.LID, Port: int(p.Port), Kind: p.Kind, Detail: p.Detail})
		r.Kinds[p.Kind]++
	}
	x := newIndex(f, t.LFT)
	h := hopTable(x)
	r.pairs(x, h)
	return r, nil
}

// hopTable is the number of links from each switch to each destination
// (by dest index, then switch): 0 at the destination switch, -1 where the
// route does not arrive.
func hopTable(x *index) [][]int8 {
	S := len(x.sw)
	h := make([][]int8, len(x.dests))
	workers := max(1, min(runtime.GOMAXPROCS(0), len(x.dests)/64+1))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var stack []int32
			for di := w; di < len(x.dests); di += workers {
				row := make([]int8, S)
				for s := range row {
					row[s] = -2 // not yet known
				}
				d := &x.dests[di]
				for s := range S {
					stack = x.hopsFrom(int32(s), d, row, stack[:0])
				}
				h[di] = row
			}
		})
	}
	wg.Wait()
	return h
}

// hopsFrom fills row[s] and the routes it passes.
func (x *index) hopsFrom(s int32, d *dest, row []int8, stack []int32) []int32 {
	const visiting = -3
	out := int8(-1)
	for cur := s; ; {
		if v := row[cur]; v != -2 {
			if v != visiting {
				out = v
			}
			break
		}
		if cur == d.sw {
			out = 0
			row[cur] = 0
			break
		}
		row[cur] = visiting
		stack = append(stack, cur)
		nx, port, ok := x.step(cur, d.lid)
		if !ok || nx == unknownSwitch {
			break
		}
		if nx == noSwitch {
			if x.next[cur][port].port == d.port {
				out = 0 // one more below
			}
			break
		}
		cur = nx
	}
	for k := len(stack) - 1; k >= 0; k-- {
		if out >= 0 && out < 126 {
			out++
		} else {
			out = -1
		}
		row[stack[k]] = out
	}
	return stack
}

// pairs counts hops and asymmetric pairs over the source ports.
func (r *RouteReport) pairs(x *index, h [][]int8) {
	type src struct {
		sw   int32
		port *topo.Port
		base int // dest index of its base LID
	}
	base := map[*topo.Port]int{}
	for di, d := range x.dests {
		if _, ok := base[d.port]; !ok {
			base[d.port] = di
		}
	}
	var srcs []src
	for s, ps := range x.cas {
		for _, p := range ps {
			rp := x.next[s][p].port
			srcs = append(srcs, src{int32(s), rp, base[rp]})
		}
	}
	hist := map[int]int{}
	for sw, ps := range x.cas {
		for di, d := range x.dests {
			n := len(ps)
			if d.at == int32(sw) {
				n-- // a port and itself are not a pair
			}
			r.Pairs += n
			if v := h[di][sw]; v < 0 {
				r.Unreachable += n
			} else if n > 0 {
				hist[int(v)+1] += n
			}
		}
	}
	r.histogram(hist)
	// The pairs split among goroutines by first port; the examples kept
	// in that port's order.
	workers := max(1, min(runtime.GOMAXPROCS(0), len(srcs)/256+1))
	type part struct {
		n     int
		pairs []AsymmetricPair
	}
	parts := make([]part, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			p := &parts[w]
			for i := w * len(srcs) / workers; i < (w+1)*len(srcs)/workers; i++ {
				a := srcs[i]
				for _, b := range srcs[i+1:] {
					ab, ba := int(h[b.base][a.sw]), int(h[a.base][b.sw])
					if ab < 0 || ba < 0 || ab == ba {
						continue
					}
					p.n++
					if len(p.pairs) < MaxProblems {
						p.pairs = append(p.pairs, AsymmetricPair{A: *portRef(a.port), B: *portRef(b.port), HopsAB: ab + 1, HopsBA: ba + 1})
					}
				}
			}
		})
	}
	wg.Wait()
	for _, p := range parts {
		r.Asymmetric += p.n
		for _, ap := range p.pairs {
			if len(r.AsymmetricPairs) < MaxProblems {
				r.AsymmetricPairs = append(r.AsymmetricPairs, ap)
			}
		}
	}
}

func (r *RouteReport) histogram(hist map[int]int) {
	for hops := 0; hops < 128; hops++ {
		n, ok := hist[hops]
		if !ok {
			continue
		}
		if len(r.Hops) == 0 {
			r.MinHops = hops
		}
		r.MaxHops = hops
		r.Hops = append(r.Hops, HopCount{Hops: hops, Pairs: n})
	}
}
