package engine_test

import (
	"errors"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// gbps is a link's data rate from its PortInfo masks.
func gbps(pi smp.PortInfo) float64 {
	lanes := map[uint8]float64{1: 1, 2: 4, 4: 8, 8: 12, 16: 2}[pi.LinkWidthActive]
	if e := map[uint8]float64{1: 14, 2: 25, 4: 50, 8: 100}[pi.LinkSpeedExtActive]; e > 0 {
		return lanes * e
	}
	return lanes * map[uint8]float64{1: 2.5, 2: 5, 4: 10}[pi.LinkSpeedActive]
}

// rateGbps decodes a PathRecord Rate.
var rateGbps = map[uint8]float64{2: 2.5, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14,
	12: 56, 13: 112, 14: 168, 15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600}

// TestSAPathRecordsFollowLFTs reads every switch's LFT and every port's
// PortInfo over SMPs, walks each host pair's route through them, and
// requires the SA's PathRecord to agree: a record exists exactly when the
// route arrives, with the smallest NeighborMTU and the slowest link of the
// route. Then it breaks one route with an LFT Set and the SA stops
// offering that path.
func TestSAPathRecordsFollowLFTs(t *testing.T) {
	for _, file := range []string{"../tests/topologies/net.2sw2path4hca", "../tests/topologies/fattree-50.net"} {
		t.Run(file, func(t *testing.T) {
			s, f := simSession(t, file, "", 0)
			ctx := t.Context()
			tp := f.Topology()
			byLID := map[uint16]*topo.Node{}
			var hosts []*topo.Port
			for _, n := range tp.Nodes {
				for _, p := range n.Ports {
					if p != nil && p.LID != 0 {
						byLID[p.LID] = n
						if n.Type == topo.CA {
							hosts = append(hosts, p)
						}
					}
				}
			}
			lidOf := func(n *topo.Node) uint16 {
				if n.Type == topo.Switch {
					return n.Ports[0].LID
				}
				return n.Ports[1].LID
			}
			lfts := map[*topo.Node][]uint8{}
			pis := map[*topo.Port]smp.PortInfo{}
			for _, n := range tp.Nodes {
				tg := engine.Target{Kind: engine.ByLID, LID: lidOf(n)}
				if n.Type == topo.Switch {
					si, err := s.SwitchInfo(ctx, tg)
					if err != nil {
						t.Fatal(err)
					}
					for b := uint32(0); b*64 <= uint32(si.LinearFDBTop); b++ {
						blk, err := s.LFTBlock(ctx, tg, b)
						if err != nil {
							t.Fatal(err)
						}
						lfts[n] = append(lfts[n], blk.Ports[:]...)
					}
				}
				for _, p := range n.Ports {
					if p == nil || p.Num == 0 {
						continue
					}
					pi, err := s.PortInfo(ctx, tg, uint8(p.Num))
					if err != nil {
						t.Fatal(err)
					}
					pis[p] = pi
				}
			}
			walk := func(src *topo.Port, dlid uint16) (mtu uint8, rate float64, ok bool) {
				mtu, rate = 5, 1e9
				out := src
				for range 64 {
					if out == nil || out.Remote == nil {
						return 0, 0, false
					}
					mtu = min(mtu, pis[out].NeighborMTU)
					rate = min(rate, gbps(pis[out]))
					n := out.Remote.Node
					if lidOf(n) == dlid {
						return mtu, rate, true
					}
					if n.Type != topo.Switch || int(dlid) >= len(lfts[n]) {
						return 0, 0, false
					}
					e := int(lfts[n][dlid])
					if e == 0 || e >= len(n.Ports) {
						return 0, 0, false
					}
					out = n.Ports[e]
				}
				return 0, 0, false
			}
			check := func(a, b *topo.Port) {
				t.Helper()
				mtu, rate, ok := walk(a, b.LID)
				if a == b {
					mtu, rate, ok = pis[a].NeighborMTU, gbps(pis[a]), true
				}
				if _, _, back := walk(b, a.LID); !back && a != b {
					ok = false
				}
				p, err := s.PathRecord(ctx, a.LID, b.LID)
				var se *engine.StatusError
				switch {
				case !ok && errors.As(err, &se) && se.Status == sa.StatusNoRecords:
				case !ok:
					t.Errorf("%d->%d: no route through the LFTs, SA says %v %v", a.LID, b.LID, p, err)
				case err != nil:
					t.Errorf("%d->%d: %v", a.LID, b.LID, err)
				case p.SLID != a.LID || p.DLID != b.LID || p.MTU != mtu || rateGbps[p.Rate] != rate:
					t.Errorf("%d->%d: PathRecord slid %d dlid %d mtu %d rate %v Gb/s, LFT walk mtu %d rate %v Gb/s",
						a.LID, b.LID, p.SLID, p.DLID, p.MTU, rateGbps[p.Rate], mtu, rate)
				}
			}
			for _, a := range hosts {
				for _, b := range hosts {
					check(a, b)
				}
			}
			// Break the route to the last host at the first host's switch.
			a, b := hosts[0], hosts[len(hosts)-1]
			sw := a.Remote.Node
			blk := uint32(b.LID / 64)
			tg := engine.Target{Kind: engine.ByLID, LID: lidOf(sw)}
			data := append([]byte(nil), lfts[sw][blk*64:blk*64+64]...)
			data[b.LID%64] = 0xff
			if _, err := s.SMP(ctx, tg, mad.MethodSet, smp.AttrLinearForwardingTable, blk, data); err != nil {
				t.Fatal(err)
			}
			lfts[sw][b.LID] = 0xff
			check(a, b)
			if _, err := s.PathRecord(ctx, a.LID, b.LID); err == nil {
				t.Errorf("%d->%d: PathRecord after the route was cut", a.LID, b.LID)
			}
		})
	}
}
