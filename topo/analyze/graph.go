package analyze

import "slices"

// csr is a directed graph over channel ids in compressed sparse rows,
// built from sorted, distinct edges (from<<32 | to).
type csr struct {
	start []int32 // by node: its first edge; start[n] ends it
	to    []uint32
}

func newCSR(n int, edges []uint64) *csr {
	g := &csr{start: make([]int32, n+1), to: make([]uint32, len(edges))}
	for _, e := range edges {
		g.start[e>>32+1]++
	}
	for i := 1; i <= n; i++ {
		g.start[i] += g.start[i-1]
	}
	for i, e := range edges {
		g.to[i] = uint32(e)
	}
	return g
}

func (g *csr) out(v uint32) []uint32 { return g.to[g.start[v]:g.start[v+1]] }

// used counts the channels with a dependency either way.
func (g *chanGraph) used(edges []uint64) int {
	seen := make([]bool, g.n)
	n := 0
	for _, e := range edges {
		for _, v := range [2]uint32{uint32(e >> 32), uint32(e)} {
			if !seen[v] {
				seen[v] = true
				n++
			}
		}
	}
	return n
}

// cycle is one cycle of a strongly connected component.
type cycle struct {
	size  int
	cycle []uint32
}

// cycles returns one shortest cycle of every strongly connected component
// that has one (more than one channel, or a channel that depends on
// itself), found by an iterative Tarjan, in order of their lowest channel.
func (g *chanGraph) cycles(edges []uint64) []cycle {
	if len(edges) == 0 {
		return nil
	}
	gr := newCSR(g.n, edges)
	comp := tarjan(gr, g.n)
	members := map[int32][]uint32{}
	for v, c := range comp {
		if c >= 0 {
			members[c] = append(members[c], uint32(v))
		}
	}
	var out []cycle
	for _, vs := range members {
		if len(vs) == 1 && !slices.Contains(gr.out(vs[0]), vs[0]) {
			continue
		}
		out = append(out, cycle{size: len(vs), cycle: shortestCycle(gr, comp, vs[0])})
	}
	slices.SortFunc(out, func(a, b cycle) int { return int(slices.Min(a.cycle)) - int(slices.Min(b.cycle)) })
	return out
}

// tarjan labels every node that has an edge with its strongly connected
// component (-1 for the others), without recursion (a 16k-node fabric's
// graph would need a deep stack).
func tarjan(g *csr, n int) []int32 {
	const unvisited = -1
	index := make([]int32, n)
	low := make([]int32, n)
	comp := make([]int32, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i], comp[i] = unvisited, -1
	}
	var stack []uint32
	type frame struct {
		v    uint32
		edge int32
	}
	var call []frame
	next, ncomp := int32(0), int32(0)
	for root := range n {
		if index[root] != unvisited || g.start[root] == g.start[root+1] {
			continue
		}
		call = append(call[:0], frame{v: uint32(root), edge: g.start[root]})
		index[root], low[root] = next, next
		next++
		stack = append(stack, uint32(root))
		onStack[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.edge < g.start[v+1] {
				w := g.to[f.edge]
				f.edge++
				if index[w] == unvisited {
					index[w], low[w] = next, next
					next++
					stack = append(stack, w)
					onStack[w] = true
					call = append(call, frame{v: w, edge: g.start[w]})
				} else if onStack[w] {
					low[v] = min(low[v], index[w])
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				p := call[len(call)-1].v
				low[p] = min(low[p], low[v])
			}
			if low[v] == index[v] {
				for {
					w := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					onStack[w] = false
					comp[w] = ncomp
					if w == v {
						break
					}
				}
				ncomp++
			}
		}
	}
	return comp
}

// shortestCycle is a shortest cycle through v inside v's component
// (breadth first from v's successors back to v).
func shortestCycle(g *csr, comp []int32, v uint32) []uint32 {
	prev := map[uint32]uint32{}
	queue := []uint32{v}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, w := range g.out(u) {
			if comp[w] != comp[v] {
				continue
			}
			if w == v {
				path := []uint32{u}
				for u != v {
					u = prev[u]
					path = append(path, u)
				}
				slices.Reverse(path)
				return path
			}
			if _, seen := prev[w]; !seen {
				prev[w] = u
				queue = append(queue, w)
			}
		}
	}
	return []uint32{v}
}
