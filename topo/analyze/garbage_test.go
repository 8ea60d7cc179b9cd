package analyze_test

import (
	"math/rand/v2"
	"testing"

	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/topo"
	"github.com/ibscript/ibscript/topo/analyze"
)

// TestGarbageTables: tables as a broken or hostile fabric may answer them
// (LFT entries past the switch's ports, port 0, tables shorter than the
// LIDs, MFT masks naming ports that do not exist, SL2VL tables of any
// ports and VLs, a switch without any table) never make an analysis
// panic, and every route it cannot follow is counted, not guessed.
func TestGarbageTables(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 34))
		f, tabs := minHop(t, fattree.Spec{Leaves: 4, Spines: 2, Hosts: 3, LinksPerSpine: 1 + int(seed%2)})
		for i := range tabs.LFT.Ports {
			p := tabs.LFT.Ports[i]
			for k := range p {
				switch r.IntN(6) {
				case 0:
					p[k] = uint8(r.IntN(256))
				case 1:
					p[k] = 0
				}
			}
			if r.IntN(5) == 0 {
				tabs.LFT.Ports[i] = p[:r.IntN(len(p)+1)]
			}
		}
		if seed%3 == 0 {
			// One switch's table unread.
			tabs.LFT.Switches, tabs.LFT.Ports = tabs.LFT.Switches[1:], tabs.LFT.Ports[1:]
		}
		mft := &topo.MulticastTables{}
		sl2vl := &topo.SL2VLTables{Tables: map[topo.SL2VLKey][16]uint8{}}
		for _, n := range f.Nodes {
			var v [16]uint8
			for i := range v {
				v[i] = uint8(r.IntN(16))
			}
			sl2vl.Tables[topo.SL2VLKey{Node: n, In: uint8(r.IntN(300)), Out: uint8(r.IntN(300))}] = v
			if n.Type != topo.Switch {
				continue
			}
			for in := range n.Ports {
				for out := range n.Ports {
					if r.IntN(3) > 0 {
						sl2vl.Tables[topo.SL2VLKey{Node: n, In: uint8(in), Out: uint8(out)}] = v
					}
				}
			}
			var m topo.PortMask
			for range 4 {
				m.Set(r.IntN(256))
			}
			mft.Switches = append(mft.Switches, n)
			mft.Groups = append(mft.Groups, map[uint16]topo.PortMask{0xc000 + uint16(r.IntN(3)): m})
		}
		tabs.MFT, tabs.SL2VL = mft, sl2vl
		cl, err := analyze.FindCreditLoops(f, tabs)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range cl.Loops {
			if len(l.Channels) == 0 || l.Component < len(l.Channels) {
				t.Errorf("seed %d: loop %+v", seed, l)
			}
		}
		rr, err := analyze.ValidateRoutes(f, tabs)
		if err != nil {
			t.Fatal(err)
		}
		if rr.Pairs != rr.Unreachable+sum(rr.Hops) {
			t.Errorf("seed %d: %d pairs, %d unreachable, hops %v", seed, rr.Pairs, rr.Unreachable, rr.Hops)
		}
		if _, err := analyze.ValidateMulticast(f, tabs); err != nil {
			t.Fatal(err)
		}
		if _, err := analyze.Balance(f, tabs); err != nil {
			t.Fatal(err)
		}
		analyze.CheckFatTree(f)
		sw := tabs.LFT.Switches[0]
		for port := range len(sw.Ports) + 1 {
			_, _ = analyze.NodesUsing(f, tabs, sw, port)
		}
	}
}

func sum(hs []analyze.HopCount) int {
	n := 0
	for _, h := range hs {
		n += h.Pairs
	}
	return n
}
