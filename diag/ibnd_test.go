package diag

import (
	"testing"

	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// ibndFabric: h1 (the local CA) - sw1 port 1; sw1 ports 2 and 3 to sw2
// ports 2 and 3; sw2 port 1 - h2; sw1 port 4 and sw2 port 4 down. Links
// are 4x QDR; swDev is both switches' device ID.
func ibndFabric(swDev uint16) *topo.Fabric {
	node := func(t topo.NodeType, guid uint64, ports int) *topo.Node {
		n := &topo.Node{Type: t, GUID: guid, NumPorts: ports, Desc: topo.NodeIDFor(t, guid), Ports: make([]*topo.Port, ports+1)}
		first := 1
		if t == topo.Switch {
			first = 0
			n.DeviceID = swDev
		}
		for i := first; i <= ports; i++ {
			n.Ports[i] = &topo.Port{Node: n, Num: i, GUID: guid + uint64(i), PhysState: 2, SpeedActive: 4, WidthActive: 2}
			if t == topo.Switch {
				n.Ports[i].GUID = guid
			}
		}
		return n
	}
	h1, h2 := node(topo.CA, 0x100, 1), node(topo.CA, 0x110, 1)
	sw1, sw2 := node(topo.Switch, 0x200, 4), node(topo.Switch, 0x210, 4)
	sw1.Ports[0].PhysState, sw2.Ports[0].PhysState = 0, 0
	link := func(a *topo.Node, ap int, b *topo.Node, bp int) {
		a.Ports[ap].Remote, b.Ports[bp].Remote = b.Ports[bp], a.Ports[ap]
		a.Ports[ap].PhysState, b.Ports[bp].PhysState = smp.PhysStateLinkUp, smp.PhysStateLinkUp
	}
	link(h1, 1, sw1, 1)
	link(sw1, 2, sw2, 2)
	link(sw1, 3, sw2, 3)
	link(sw2, 1, h2, 1)
	return &topo.Fabric{Nodes: []*topo.Node{h1, sw1, sw2, h2}, Origin: h1.Ports[1]}
}

// TestReplayIBND: libibnetdisc's SMPs for a small fabric, counted by
// hand from ibnetdisc.c: a NodeInfo per route probed (known nodes too),
// a NodeDescription per node, a SwitchInfo and a PortInfo per port (0
// included) per switch, a PortInfo per CA each time it is reached, and a
// MlnxExtPortInfo per QDR port that is up on a SwitchX; a hop limit lets
// one route past it and no more.
func TestReplayIBND(t *testing.T) {
	for _, c := range []struct {
		name            string
		swDev           uint16
		maxHops         int
		smps, hops      int
		nodes           []uint64
		sw1Port3Remoted bool
	}{
		// h1: NI ND PI; sw1: NI ND SI PI0-4; probes [1,2] [1,3]; sw2 (by
		// [1,2]): ND SI PI0-4; its probes [1,2,1] (h2: ND PI) [1,2,3] (sw1
		// known).
		{"full", 0, 0, 24, 3, []uint64{0x100, 0x200, 0x210, 0x110}, true},
		// sw2's ports 1-3 are QDR and up: three MlnxExtPortInfo more;
		// sw1's 1-3 as well.
		{"SwitchX", 0xc738, 0, 30, 3, []uint64{0x100, 0x200, 0x210, 0x110}, true},
		// -n 1: [1] then [1,2] (max hops 2 > 1): nothing more.
		{"max hops 1", 0, 1, 19, 2, []uint64{0x100, 0x200, 0x210}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := replayIBND(ibndFabric(c.swDev), ibndStart{}, c.maxHops)
			if r.SMPs != c.smps || r.MaxHops != c.hops || r.Unknown != 0 {
				t.Errorf("SMPs %d, max hops %d, unknown %d; want %d, %d, 0", r.SMPs, r.MaxHops, r.Unknown, c.smps, c.hops)
			}
			var got []uint64
			for _, n := range r.Fabric.Nodes {
				got = append(got, n.GUID)
			}
			if len(got) != len(c.nodes) {
				t.Fatalf("nodes %x, want %x", got, c.nodes)
			}
			for i := range got {
				if got[i] != c.nodes[i] {
					t.Fatalf("nodes %x, want %x", got, c.nodes)
				}
			}
			sw1 := r.Fabric.Nodes[1]
			if (sw1.Ports[3].Remote != nil) != c.sw1Port3Remoted {
				t.Errorf("sw1 port 3 linked: %v, want %v", sw1.Ports[3].Remote != nil, c.sw1Port3Remoted)
			}
			if sw1.Desc != "S-0000000000000200" || r.Fabric.Origin == nil || r.Fabric.Origin.GUID != 0x101 {
				t.Errorf("sw1's description %q, origin %v", sw1.Desc, r.Fabric.Origin)
			}
		})
	}
}

// TestNetDiscoverUnmodelled: -m's figures come from a replay over the
// discovered fabric; where discovery did not read a port libibnetdisc's
// scan asks (a switch's PortInfo a discovery that missed part of the
// fabric lacks), the replay counts it as unmodelled (ibnetdiscover prints
// no such count: the tool says it on stderr), and 0 on a whole fabric.
func TestNetDiscoverUnmodelled(t *testing.T) {
	for _, c := range []struct {
		name   string
		cut    func(f *topo.Fabric)
		smps   int
		unread int
	}{
		{"whole", func(*topo.Fabric) {}, 24, 0},
		// sw2 (0x210) without its down port 4: libibnetdisc still asks
		// its PortInfo.
		{"missing port", func(f *topo.Fabric) { f.Nodes[2].Ports[4] = nil }, 24, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := ibndFabric(0)
			c.cut(f)
			var nd NetDiscover
			nd.replay(f, NetDiscoverOptions{MaxHops: true})
			if nd.Scan == nil || nd.Scan.MADs != c.smps || nd.Scan.Unmodelled != c.unread {
				t.Fatalf("scan %+v, want %d MADs, %d unmodelled", nd.Scan, c.smps, c.unread)
			}
		})
	}
}
