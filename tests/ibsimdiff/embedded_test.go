package ibsimdiff

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

// TestEmbeddedSimAgreesWithIbsim runs the same queries on the embedded
// simulator and on ibsim (with OpenSM) loaded from the same topology file:
// the discovered fabric (nodes, GUIDs, links, LIDs, widths and speeds, as
// ibnetdiscover text), and every switch's LFT. Where the two are allowed
// to differ the test says so: the LFTs are the SM's choice (OpenSM's
// min-hop vs the embedded SM's), so they are compared as routes: for
// every destination LID both must forward out of a port on a shortest
// path (they pick different ones among equal-cost uplinks on a fat tree).
func TestEmbeddedSimAgreesWithIbsim(t *testing.T) {
	for _, tp := range []string{topo2sw, topo2sw2p, topoFat500} {
		t.Run(tp[strings.LastIndex(tp, "/")+1:], func(t *testing.T) {
			s := shared.Get(t, tp, nil)
			isess, _ := session(t, s, "", nil, nil)
			f, err := sim.Load(tp, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			tr, err := f.Open(t.Context(), "", 0)
			if err != nil {
				t.Fatal(err)
			}
			esess, err := engine.New(tr, nil)
			if err != nil {
				tr.Close()
				t.Fatal(err)
			}
			defer esess.Close()

			var texts [2]string
			var fab *topo.Fabric
			var lfts [2]map[uint64]map[uint16]uint8
			for i, sess := range []*engine.Session{isess, esess} {
				d, err := sess.Discover(t.Context(), nil)
				if err != nil || len(d.Errors) > 0 {
					t.Fatalf("discover: %v %v", err, d.Errors)
				}
				var b bytes.Buffer
				topo.WriteIBNetDiscover(&b, d.Fabric, &topo.WriteOptions{Time: time.Unix(0, 0)})
				texts[i] = b.String()
				fab = d.Fabric
				lfts[i] = map[uint64]map[uint16]uint8{}
				n := 0
				for _, node := range d.Fabric.Nodes {
					if node.Type != topo.Switch {
						continue
					}
					if n++; n > 6 {
						break
					}
					lid := nodeLID(node)
					si, err := sess.SwitchInfo(t.Context(), engine.LID(lid))
					if err != nil {
						t.Fatal(err)
					}
					m := map[uint16]uint8{}
					for blk := uint32(0); blk <= uint32(si.LinearFDBTop)/64; blk++ {
						l, err := sess.LFTBlock(t.Context(), engine.LID(lid), blk)
						if err != nil {
							t.Fatal(err)
						}
						for j, p := range l.Ports {
							if x := uint16(blk*64) + uint16(j); p != 0xff && x >= 1 && x <= si.LinearFDBTop {
								m[x] = p
							}
						}
					}
					lfts[i][node.GUID] = m
				}
			}
			if texts[0] != texts[1] {
				t.Errorf("discovered fabric: ibsim vs embedded sim:\n%s", strings.ReplaceAll(lineDiff(texts[0], texts[1]), "ibnetdiscover:", "ibsim:        "))
			}
			diff := 0
			for g, im := range lfts[0] {
				em := lfts[1][g]
				if len(im) != len(em) {
					t.Errorf("switch %#x: ibsim (OpenSM) LFT has %d LIDs, embedded %d", g, len(im), len(em))
				}
				for l, p := range im {
					sw := nodeByGUID(fab, g)
					if !minimalPort(fab, sw, l, p) {
						t.Errorf("switch %#x LID %d: OpenSM routes out of port %d, not on a shortest path", g, l, p)
					}
					if !minimalPort(fab, sw, l, em[l]) {
						t.Errorf("switch %#x LID %d: the embedded SM routes out of port %d, not on a shortest path", g, l, em[l])
					}
					if em[l] != p {
						diff++
					}
				}
			}
			t.Logf("%d LFT entries checked; %d differ between OpenSM and the embedded SM, all on shortest paths", countEntries(lfts[0]), diff)
		})
	}
}

func countEntries(m map[uint64]map[uint16]uint8) int {
	n := 0
	for _, x := range m {
		n += len(x)
	}
	return n
}

func nodeByGUID(f *topo.Fabric, g uint64) *topo.Node {
	for _, n := range f.Nodes {
		if n.GUID == g {
			return n
		}
	}
	return nil
}

// minimalPort reports whether switch sw forwarding LID lid out of port p
// is a step on a shortest path to the port that has lid.
func minimalPort(f *topo.Fabric, sw *topo.Node, lid uint16, p uint8) bool {
	var dest *topo.Port
	for _, n := range f.Nodes {
		for _, q := range n.Ports {
			if q != nil && q.LID == lid {
				dest = q
			}
		}
	}
	if dest == nil || sw == nil {
		return false
	}
	if dest.Node == sw {
		return p == 0
	}
	// Hop distances to dest, over switches only (CAs do not forward).
	dist := map[*topo.Node]int{}
	var queue []*topo.Node
	if dest.Node.Type == topo.Switch {
		dist[dest.Node] = 0
		queue = append(queue, dest.Node)
	} else if dest.Remote != nil {
		dist[dest.Remote.Node] = 1
		queue = append(queue, dest.Remote.Node)
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.Type != topo.Switch {
			continue
		}
		for _, q := range n.Ports {
			if q != nil && q.Remote != nil {
				if m := q.Remote.Node; m.Type == topo.Switch {
					if _, ok := dist[m]; !ok {
						dist[m] = dist[n] + 1
						queue = append(queue, m)
					}
				}
			}
		}
	}
	if int(p) >= len(sw.Ports) || sw.Ports[p] == nil || sw.Ports[p].Remote == nil {
		return false
	}
	next := sw.Ports[p].Remote
	if next == dest {
		return true
	}
	d, ok := dist[next.Node]
	return ok && next.Node.Type == topo.Switch && d == dist[sw]-1
}
