package analyze

import (
	"slices"

	"github.com/ibscript/ibscript/topo"
)

// vlMap answers the VL of an SL on a channel from the SL2VL tables, as
// dense per-switch arrays (a map lookup per hop would dominate).
type vlMap struct {
	none bool      // no tables at all: every SL on VL 0
	sw   [][]uint8 // by switch: ((in*np)+out)*16+sl, 0xff where missing
	np   []int     // ports+1 by switch
	ca   map[*topo.Port][16]uint8
	// Missing counts the switch port pairs and CA ports routes use
	// whose table was not read (taken as VL 0).
	missing int
}

func newVLMap(x *index, t *topo.SL2VLTables) *vlMap {
	m := &vlMap{none: t == nil || len(t.Tables) == 0}
	if m.none {
		return m
	}
	m.sw = make([][]uint8, len(x.sw))
	m.np = make([]int, len(x.sw))
	m.ca = map[*topo.Port][16]uint8{}
	for i, n := range x.sw {
		np := len(n.Ports)
		m.np[i] = np
		m.sw[i] = make([]uint8, np*np*16)
		for k := range m.sw[i] {
			m.sw[i][k] = 0xff
		}
	}
	for k, v := range t.Tables {
		if k.Node == nil {
			continue
		}
		if s, ok := x.swIdx[k.Node]; ok {
			np := m.np[s]
			if int(k.In) < np && int(k.Out) < np {
				copy(m.sw[s][(int(k.In)*np+int(k.Out))*16:], v[:])
			}
			continue
		}
		if int(k.Out) < len(k.Node.Ports) && k.Node.Ports[k.Out] != nil {
			m.ca[k.Node.Ports[k.Out]] = v
		}
	}
	return m
}

// vl is the VL of sl on switch s's channel out for a packet that came in
// by port in; 0 (and counted missing by the caller's check) without a
// table.
func (m *vlMap) vl(s int32, in, out, sl int) uint8 {
	if m.none {
		return 0
	}
	np := m.np[s]
	if in < 0 || out < 0 || in >= np || out >= np {
		return 0 // a port the switch does not have (an LFT entry past it)
	}
	if v := m.sw[s][(in*np+out)*16+sl]; v != 0xff {
		return v & 0xf
	}
	return 0
}

// has reports whether switch s's (in, out) table was read.
func (m *vlMap) has(s int32, in, out int) bool {
	if m.none {
		return false
	}
	np := m.np[s]
	return in < np && out < np && m.sw[s][(in*np+out)*16] != 0xff
}

// caVL is the VL of sl on a CA port's own channel.
func (m *vlMap) caVL(p *topo.Port, sl int) uint8 {
	if m.none {
		return 0
	}
	return m.ca[p][sl] & 0xf
}

// classes groups the SLs whose routes give the same dependencies: SLs
// that every table maps to the same VL. Without tables, one class of all
// 16 SLs.
func (m *vlMap) classes(x *index) [][]int {
	if m.none {
		return [][]int{{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}}
	}
	vec := func(sl int) []uint8 {
		var v []uint8
		add := func(vl uint8) { v = append(v, vl) }
		// The entries routes into other switches use: a missing one is
		// VL 0, as vl takes it.
		for s := range m.sw {
			for in, hi := range x.next[s] {
				for out, ho := range x.next[s] {
					if in > 0 && in != out && hi.port != nil && ho.sw >= 0 {
						add(m.vl(int32(s), in, out, sl))
					}
				}
			}
		}
		for _, p := range caPorts(x) {
			add(m.caVL(p, sl))
		}
		return v
	}
	var out [][]int
	var vecs [][]uint8
	for sl := range 16 {
		v := vec(sl)
		i := slices.IndexFunc(vecs, func(w []uint8) bool { return slices.Equal(v, w) })
		if i < 0 {
			vecs = append(vecs, v)
			out = append(out, []int{sl})
			continue
		}
		out[i] = append(out[i], sl)
	}
	return out
}

// caPorts are the CA and router ports cabled to an indexed switch, in
// switch and port order.
func caPorts(x *index) []*topo.Port {
	var ps []*topo.Port
	for s, ports := range x.cas {
		for _, p := range ports {
			ps = append(ps, x.next[s][p].port)
		}
	}
	return ps
}
