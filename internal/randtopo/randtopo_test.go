package randtopo

import (
	"strings"
	"testing"

	"github.com/ibscript/ibscript/topo"
)

// TestGenerate: a seed always gives the same text; the text is a
// topology ibscript's parser takes (ibsim's format), with every link
// written at both ends, the hosts' port 1 cabled, OpenSM's node first and
// cabled, and the routers' and CA-CA links counted in InitPorts.
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
		initPorts := 0
		for _, n := range fab.Nodes {
			byID[n.ID] = n
			for _, p := range n.Ports {
				if p == nil || p.Remote == nil {
					continue
				}
				if p.Remote.Remote != p {
					t.Errorf("seed %d: %s[%d] -> %s[%d], not back", seed, n.ID, p.Num, p.Remote.Node.ID, p.Remote.Num)
				}
				switch {
				case n.Type == topo.Router:
					initPorts += 2 // both ends
				case n.Type == topo.CA && p.Remote.Node.Type == topo.CA:
					initPorts++ // this end; the other counts itself
				}
			}
		}
		if f.InitPorts != initPorts {
			t.Errorf("seed %d: InitPorts %d, %d ends of router and CA-CA links", seed, f.InitPorts, initPorts)
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
