package analyze_test

import (
	"bytes"
	"testing"

	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/topo"
	"github.com/ibscript/ibscript/topo/analyze"
)

// minHop is a fabric with LIDs (CA ports and switches from 1 in file
// order) and shortest-path LFTs, ties spread by destination LID, as
// OpenSM's minhop routes a fat tree, made without a simulator (a
// 16k-node fabric read through SMPs would take minutes).
func minHop(tb testing.TB, spec fattree.Spec) (*topo.Fabric, analyze.Tables) {
	tb.Helper()
	var b bytes.Buffer
	if err := spec.Write(&b); err != nil {
		tb.Fatal(err)
	}
	f, err := topo.Parse("fattree", &b)
	if err != nil {
		tb.Fatal(err)
	}
	lid := uint16(1)
	var sws []*topo.Node
	swIdx := map[*topo.Node]int{}
	for _, n := range f.Nodes {
		if n.Type == topo.Switch {
			if n.Ports[0] == nil {
				n.Ports[0] = &topo.Port{Node: n}
			}
			swIdx[n] = len(sws)
			sws = append(sws, n)
		}
		for _, p := range n.Ports {
			if p != nil && (n.Type != topo.Switch || p.Num == 0) {
				p.LID = lid
				lid++
			}
		}
	}
	lft := &topo.ForwardingTables{Switches: sws, Ports: make([][]uint8, len(sws))}
	for i := range sws {
		lft.Ports[i] = bytes.Repeat([]byte{255}, int(lid))
	}
	dist := make([]int, len(sws))
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 {
				continue
			}
			root, rootPort := n, 0
			if n.Type != topo.Switch {
				root, rootPort = p.Remote.Node, p.Remote.Num
			}
			routeTo(sws, swIdx, lft, dist, root, rootPort, p.LID)
		}
	}
	return f, analyze.Tables{LFT: lft}
}

// routeTo fills every switch's entry for lid, which root reaches by
// rootPort: breadth first from root, each switch's port toward it among
// the shortest picked by lid.
func routeTo(sws []*topo.Node, swIdx map[*topo.Node]int, lft *topo.ForwardingTables, dist []int, root *topo.Node, rootPort int, lid uint16) {
	for i := range dist {
		dist[i] = -1
	}
	r := swIdx[root]
	dist[r] = 0
	lft.Ports[r][lid] = uint8(rootPort)
	queue := []int{r}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, p := range sws[s].Ports {
			if p == nil || p.Remote == nil || p.Remote.Node.Type != topo.Switch {
				continue
			}
			if j := swIdx[p.Remote.Node]; dist[j] < 0 {
				dist[j] = dist[s] + 1
				queue = append(queue, j)
			}
		}
	}
	for j, n := range sws {
		if j == r {
			continue
		}
		var best []int
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == topo.Switch && dist[swIdx[p.Remote.Node]] == dist[j]-1 {
				best = append(best, p.Num)
			}
		}
		if len(best) > 0 {
			lft.Ports[j][lid] = uint8(best[int(lid)%len(best)])
		}
	}
}

// spec16k is a 16,412-node two-level fat tree: 252 leaves of 64 hosts,
// 32 spines.
var spec16k = fattree.Spec{Leaves: 252, Spines: 32, Hosts: 64, LinksPerSpine: 1}

func TestFatTreeMinHopClean(t *testing.T) {
	f, tabs := minHop(t, fattree.Spec{Leaves: 8, Spines: 4, Hosts: 6, LinksPerSpine: 1})
	cl, err := analyze.FindCreditLoops(f, tabs)
	if err != nil || cl.Count != 0 || cl.Dependencies == 0 {
		t.Fatalf("%+v %v", cl, err)
	}
	rr, err := analyze.ValidateRoutes(f, tabs)
	if err != nil || rr.Count != 0 || rr.Unreachable != 0 || rr.MinHops != 1 || rr.MaxHops != 4 || rr.Pairs != 48*59 || rr.Asymmetric != 0 {
		t.Fatalf("%+v %v", rr, err)
	}
}

// BenchmarkAnalyze16k runs each analysis on a 16,412-node fat tree with
// min-hop LFTs (BENCHMARKS.md); All is what ibscript analyze runs.
func BenchmarkAnalyze16k(b *testing.B) {
	f, tabs := minHop(b, spec16k)
	run := map[string]func() error{
		"CreditLoops": func() error {
			cl, err := analyze.FindCreditLoops(f, tabs)
			if err == nil && cl.Count != 0 {
				b.Fatal(cl.Loops)
			}
			return err
		},
		"Routes": func() error {
			rr, err := analyze.ValidateRoutes(f, tabs)
			if err == nil && (rr.Count != 0 || rr.Asymmetric != 0) {
				b.Fatal(rr.Problems)
			}
			return err
		},
		"Balance": func() error { _, err := analyze.Balance(f, tabs); return err },
		"FatTree": func() error { analyze.CheckFatTree(f); return nil },
	}
	for _, name := range []string{"CreditLoops", "Routes", "Balance", "FatTree", "All"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				for n, fn := range run {
					if name != "All" && n != name {
						continue
					}
					if err := fn(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
