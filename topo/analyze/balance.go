package analyze

import (
	"github.com/ibscript/ibscript/topo"
)

// PortLoad is how many destination LIDs one egress port carries, by the
// kind of port the LID is.
type PortLoad struct {
	Port   int      `json:"port"`
	Remote *PortRef `json:"remote,omitempty"`
	CA     int      `json:"ca"`
	Switch int      `json:"switch"`
	Router int      `json:"router"`
	// Direction is "up", "down" (to a CA too) or "lateral", by the
	// switches' fat-tree levels (CheckFatTree).
	Direction string `json:"direction"`
}

// SwitchBalance is one switch's route balance.
type SwitchBalance struct {
	Switch NodeRef    `json:"switch"`
	Ports  []PortLoad `json:"ports"`
	// Unbalanced is check_lft_balance's verdict over the switch's up
	// links (to switches a fat-tree level higher, where routing picks
	// among equal paths): the most CA LIDs one carries exceeds the fewest
	// by more than one. Down and lateral links carry what lies behind
	// them and are not compared.
	Unbalanced bool `json:"unbalanced"`
}

// BalanceReport is what Balance found.
type BalanceReport struct {
	Switches   []SwitchBalance `json:"switches"`
	Unbalanced int             `json:"unbalanced"`
}

// Balance counts, for every egress port of every switch with an LFT, the
// destination LIDs its LFT sends there (by CA, switch and router), as
// rdma-core's check_lft_balance counts the CA LIDs of dump_lfts; a switch
// is unbalanced when its up links carry CA LIDs unevenly (max > min + 1).
// check_lft_balance compares every port but those to the CA whose LIDs
// they carry, which flags every switch whose subtrees differ in size (a
// chain, a ring); the up links are where the routing chooses.
func Balance(f *topo.Fabric, t Tables) (*BalanceReport, error) {
	if t.LFT == nil {
		return nil, ErrNoLFT
	}
	x := newIndex(f, t.LFT)
	all := newIndex(f, nil)
	level := levels(all)
	r := &BalanceReport{Switches: []SwitchBalance{}}
	for s, n := range x.sw {
		b := SwitchBalance{Switch: ref(n), Ports: []PortLoad{}}
		loads := make([]PortLoad, len(x.next[s]))
		for _, d := range x.dests {
			o := x.out(int32(s), d.lid)
			if o == 0 || o >= len(loads) {
				continue
			}
			switch d.port.Node.Type {
			case topo.CA:
				loads[o].CA++
			case topo.Switch:
				loads[o].Switch++
			default:
				loads[o].Router++
			}
		}
		ls := level[all.swIdx[n]]
		for pn := 1; pn < len(loads); pn++ {
			h := x.next[s][pn]
			if h.port == nil {
				continue
			}
			pl := loads[pn]
			pl.Port, pl.Remote, pl.Direction = pn, portRef(h.port), direction(all, level, ls, h.port)
			b.Ports = append(b.Ports, pl)
		}
		b.Unbalanced = unbalanced(b.Ports, "up")
		if b.Unbalanced {
			r.Unbalanced++
		}
		r.Switches = append(r.Switches, b)
	}
	return r, nil
}

func direction(all *index, level []int, ls int, rp *topo.Port) string {
	j, ok := all.swIdx[rp.Node]
	switch {
	case !ok || level[j] < ls:
		return "down"
	case level[j] > ls:
		return "up"
	}
	return "lateral"
}

// unbalanced compares the CA LIDs of the inter-switch ports of one
// direction.
func unbalanced(ps []PortLoad, dir string) bool {
	lo, hi, n := 0, 0, 0
	for _, p := range ps {
		if p.Direction != dir || p.Remote.Node.Type != "Switch" {
			continue
		}
		if n == 0 || p.CA < lo {
			lo = p.CA
		}
		hi = max(hi, p.CA)
		n++
	}
	return n > 1 && hi > lo+1
}
