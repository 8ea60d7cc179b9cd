package randtopo

import (
	"strings"
	"testing"

	"github.com/ibscript/ibscript/topo"
)

// TestGenerate: a seed always gives the same text; the text is a
// topology ibscript's parser takes (ibsim's format), with every link
// written at both ends, the hosts' port 1 cabled, OpenSM's node first and
// cabled, the node GUIDs as the parser (ibsim's rules) gives them, and the links OpenSM leaves in Init (routers', CA-CA, the
// island's) counted in InitPorts.
func TestGenerate(t *testing.T) {
	for seed := range uint64(200) {
		f := Generate(seed)
		if g := Generate(seed); g.Text != f.Text {
			t.Fatalf("seed %d: two texts", seed)
		}
		fab, err := topo.Parse("rand", strings.NewReader(f.Text))
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, f.Text)
		}
		if len(f.Hosts) == 0 || len(f.Switches) < 3 || len(fab.Nodes) < 9 {
			t.Fatalf("seed %d: %d hosts, %d switches, %d nodes", seed, len(f.Hosts), len(f.Switches), len(fab.Nodes))
		}
		byID := map[string]*topo.Node{}
		for _, n := range fab.Nodes {
			byID[n.ID] = n
			if g := f.GUIDs[n.ID]; g != n.GUID || (n.Type != topo.Switch && n.Ports[1].GUID != g+1) {
				t.Errorf("seed %d: %s: GUIDs says %#x, the parser %#x (port 1 %#x)", seed, n.ID, g, n.GUID, n.Ports[1].GUID)
			}
		}
		if got := initEnds(fab); f.InitPorts != got {
			t.Errorf("seed %d: InitPorts %d, %d ends of links OpenSM does not bring up", seed, f.InitPorts, got)
		}
		for _, id := range f.Island {
			if n := byID[id]; n == nil || n.Type != topo.CA || n.Ports[1] == nil || n.Ports[1].Remote == nil {
				t.Errorf("seed %d: island host %s has no cabled port 1", seed, id)
			}
		}
		for _, h := range f.Hosts {
			if n := byID[h]; n == nil || n.Type != topo.CA || len(n.Ports) < 2 || n.Ports[1] == nil || n.Ports[1].Remote == nil {
				t.Errorf("seed %d: host %s has no cabled port 1", seed, h)
			}
		}
		first := fab.Nodes[0]
		if first.Type == topo.CA && (first.Ports[1] == nil || first.Ports[1].Remote == nil) {
			t.Errorf("seed %d: OpenSM's node %s has no cabled port 1", seed, first.ID)
		}
	}
}

// initEnds is how many link ends of fab OpenSM leaves in Init: it sweeps
// from the first node's port (port 0 of a switch, port 1 of a CA)
// through switches, and brings up the links of the switches it reaches
// (and its own port's) but none to or from a router.
func initEnds(fab *topo.Fabric) int {
	first := fab.Nodes[0]
	seen := map[*topo.Node]bool{first: true}
	queue := []*topo.Node{first}
	if first.Type == topo.CA {
		queue = []*topo.Node{first.Ports[1].Remote.Node}
		seen[queue[0]] = true
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node.Type == topo.Switch && !seen[p.Remote.Node] {
				seen[p.Remote.Node] = true
				queue = append(queue, p.Remote.Node)
			}
		}
	}
	ends := 0
	for _, n := range fab.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			a, b := n, p.Remote.Node
			up := a.Type != topo.Router && b.Type != topo.Router &&
				(a.Type == topo.Switch && seen[a] || b.Type == topo.Switch && seen[b] || p == first.Ports[1] && first.Type == topo.CA)
			if !up {
				ends++
			}
		}
	}
	return ends
}
