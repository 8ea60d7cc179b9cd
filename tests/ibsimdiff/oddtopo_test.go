package ibsimdiff

import (
	"path/filepath"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
)

// oddFindings are the differences TestRandomTopologies found on random
// fabrics, each on the smallest fabric that shows it, with the command
// lines that showed it: the C tool and ibscript's must print the same
// bytes and exit the same.
var oddFindings = []struct {
	path, host string
	cmds       [][]string
}{
	// A CA with two ports on one switch and a third on another: the
	// partial scan of -D (and -G) reaches the switch and, through it, the
	// CA's other port there (-n 2: the third too); iblinkinfo and
	// ibqueryerrors print the CA with them (seed 8).
	{"../topologies/net.odd-multiport", "H1", [][]string{
		{"iblinkinfo", "-D", "0,1,2"}, {"iblinkinfo", "-D", "0,1,3", "-l"}, {"iblinkinfo", "-D", "0,1,3", "-n", "2"},
		{"iblinkinfo", "-D", "0,1,2", "-n", "3", "--cas-only"}, {"iblinkinfo", "-D", "0,1,4,6"},
		{"iblinkinfo", "-G", "0x100004"}, {"iblinkinfo", "-G", "0x100005", "-n", "2"},
		{"ibqueryerrors", "-D", "0,1,2"}, {"ibqueryerrors", "-G", "0x100003", "-r"},
		// Through an egress port 0, which ibsim takes as the switch
		// itself (0,1,0,2 is S1's port 2 as 0,1,2 is) and, from a CA,
		// as port 1 (0,0,3): the same scan, the route one hop longer
		// (iblinkinfo printed M3's port 1 alone).
		{"iblinkinfo", "-D", "0,1,0,2"}, {"iblinkinfo", "-D", "0,1,0,2", "-n", "2"}, {"iblinkinfo", "-D", "0,0,3", "-l"},
		{"iblinkinfo", "-a", "-D", "0,1,0,2"}, {"iblinkinfo", "-a", "-D", "0,1,4,0,6", "-n", "2"},
		{"ibqueryerrors", "-D", "0,1,0,3"},
	}},
	// iblinkinfo -n: the links libibnetdisc makes within the hop limit,
	// where the engine's discovery limited to it had reached a node by a
	// longer route first (seed 16).
	{"../topologies/net.odd-hops", "sw3", [][]string{{"iblinkinfo", "-n", "2"}, {"iblinkinfo", "-n", "1", "-l"}}},
	{"../topologies/net.odd-hops", "ca5", [][]string{{"iblinkinfo", "-n", "3"}, {"iblinkinfo", "-n", "2", "--switches-only"}}},
	// Ends enabling different widths: ibsim shows the width OpenSM's
	// PortInfo Set wrote on the switch's end (8X), where hardware and the
	// embedded simulator negotiate 1X; on ibsim ibscript prints what the
	// C tools print.
	{"../topologies/net.odd-width", "B", [][]string{{"iblinkinfo"}, {"iblinkinfo", "-l"}, {"ibnetdiscover", "-p"},
		{"smpquery", "-D", "portinfo", "0,1", "1"}, {"smpquery", "-D", "portinfo", "0,1,1"}, {"ibportstate", "-D", "0,1", "1"}}},
}

// TestOddTopologyFindings runs oddFindings.
func TestOddTopologyFindings(t *testing.T) {
	for _, f := range oddFindings {
		t.Run(filepath.Base(f.path)+"/"+f.host, func(t *testing.T) {
			s := diagSim(t, f.path)
			for _, c := range f.cmds {
				diffTool(t, s, f.host, c[0], c[1:]...)
			}
		})
	}
}

// TestDiscoverMaxHopsOnOddHops: the engine's discovery limited to h hops
// (Lua fabric.discover{max_hops=h}) holds every node h hops or fewer away
// and every link out of a switch fewer than h hops away (and the local
// port's), as a breadth
// first walk of the whole discovery says, from each of net.odd-hops'
// hosts where a node's first answer came by a longer route than its
// shortest (the limit held back its ports' probes).
func TestDiscoverMaxHopsOnOddHops(t *testing.T) {
	const path = "../topologies/net.odd-hops"
	s := diagSim(t, path)
	for _, host := range []string{"sw3", "ca5"} {
		sess, _ := session(t, s, host, nil, nil)
		full, err := sess.Discover(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		dist := hopDistances(full.Fabric)
		for h := 1; h <= 4; h++ {
			d, err := sess.Discover(t.Context(), &engine.DiscoverOptions{MaxHops: h})
			if err != nil {
				t.Fatal(err)
			}
			got := map[uint64]*topo.Node{}
			for _, n := range d.Fabric.Nodes {
				got[n.GUID] = n
			}
			for _, n := range full.Fabric.Nodes {
				k, near := dist[n]
				if !near || k > h {
					continue
				}
				g := got[n.GUID]
				if g == nil {
					t.Errorf("from %s, max %d hops: node %s (%d hops away) not found", host, h, n.Desc, k)
					continue
				}
				if n.Type != topo.Switch && k > 0 || k >= h {
					continue
				}
				for i, p := range n.Ports {
					if n.Type != topo.Switch && p != full.Fabric.Origin {
						continue // the local CA's other ports are found from their switches
					}
					if i > 0 && p != nil && p.Remote != nil && (g.Ports[i] == nil || g.Ports[i].Remote == nil) {
						t.Errorf("from %s, max %d hops: %s port %d (%d hops away) has no link", host, h, n.Desc, i, k)
					}
				}
			}
		}
	}
}

// hopDistances is each node's distance in hops from f's origin, through
// switches only (a directed route goes on through no CA but the origin).
func hopDistances(f *topo.Fabric) map[*topo.Node]int {
	dist := map[*topo.Node]int{f.Origin.Node: 0}
	queue := []*topo.Node{f.Origin.Node}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.Type != topo.Switch && n != f.Origin.Node {
			continue
		}
		for i, p := range n.Ports {
			if i == 0 || p == nil || p.Remote == nil || n.Type != topo.Switch && p != f.Origin {
				continue
			}
			if _, ok := dist[p.Remote.Node]; !ok {
				dist[p.Remote.Node] = dist[n] + 1
				queue = append(queue, p.Remote.Node)
			}
		}
	}
	return dist
}
