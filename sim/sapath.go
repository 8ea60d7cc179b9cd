package sim

import (
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

var (
	piNeighborMTU, _     = smp.PortInfoLayout().Field("NeighborMTU")
	piWidthActive, _     = smp.PortInfoLayout().Field("LinkWidthActive")
	piSpeedActive, _     = smp.PortInfoLayout().Field("LinkSpeedActive")
	piSpeedExtActive, _  = smp.PortInfoLayout().Field("LinkSpeedExtActive")
	piSpeedExtActive2, _ = smp.PortInfoLayout().Field("LinkSpeedExtActive2")
	piMTUCap, _          = smp.PortInfoLayout().Field("MTUCap")
	prSLID, _, _         = sa.PathRecord().Field("SLID")
	prDLID, _, _         = sa.PathRecord().Field("DLID")
	prSGID, _, _         = sa.PathRecord().Field("SGID")
	prDGID, _, _         = sa.PathRecord().Field("DGID")
	prReversible, _, _   = sa.PathRecord().Field("Reversible")
	prPKey, _, _         = sa.PathRecord().Field("P_Key")
	prMTUSel, _, _       = sa.PathRecord().Field("MTUSelector")
	prMTU, _, _          = sa.PathRecord().Field("MTU")
	prRateSel, _, _      = sa.PathRecord().Field("RateSelector")
	prRate, _, _         = sa.PathRecord().Field("Rate")
	prPLTSel, _, _       = sa.PathRecord().Field("PacketLifeTimeSelector")
	prPacketLife, _, _   = sa.PathRecord().Field("PacketLifeTime")
	prHopLimit, _, _     = sa.PathRecord().Field("HopLimit")
	prNumbPath, _, _     = sa.PathRecord().Field("NumbPath")
	prSelectorComps      = uint64(1<<12 | 1<<16 | 1<<17 | 1<<18 | 1<<19 | 1<<20 | 1<<21)
	// rateEnum and rateGbps are PathRecord's Rate codes (libibmad's
	// IB_PATH_RECORD_RATE_*, libibverbs' ibv_rate: 23 800 Gb/s, 24 1200
	// Gb/s, 4x XDR and 12x NDR).
	rateEnum = map[int]uint8{2: 2, 10: 3, 30: 4, 5: 5, 20: 6, 40: 7, 60: 8, 80: 9, 120: 10, 14: 11, 56: 12, 112: 13, 168: 14, 25: 15, 100: 16, 200: 17, 300: 18, 28: 19, 50: 20, 400: 21, 600: 22, 800: 23, 1200: 24}
	rateGbps = map[uint8]int{2: 2, 3: 10, 4: 30, 5: 5, 6: 20, 7: 40, 8: 60, 9: 80, 10: 120, 11: 14, 12: 56, 13: 112, 14: 168, 15: 25, 16: 100, 17: 200, 18: 300, 19: 28, 20: 50, 21: 400, 22: 600, 23: 800, 24: 1200}
)

// saPacketLifeTime is the PathRecord PacketLifeTime of a path between two
// ports: OpenSM's default packet_life_time, as measured.
const saPacketLifeTime = 0x12

// pathInfo is what a LID route from one endport to a LID offers.
type pathInfo struct {
	mtu  uint8 // smallest NeighborMTU along the route (IBA MTU code)
	rate int   // slowest link, Gb/s
	hops int   // links crossed
}

// pathRate is the PathRecord Rate code of a path's rate in Gb/s: its
// own, or past 1200 (8x and 12x XDR, which IBA gives no code) 1200's,
// the fastest there is; 10 Gb/s's for a rate that is no code's.
func pathRate(gbps int) uint8 {
	if r, ok := rateEnum[gbps]; ok {
		return r
	}
	if gbps > 1200 {
		return rateEnum[1200]
	}
	return rateEnum[10]
}

// walk follows the forwarding tables from endport src to dlid as lidRoute
// does, without sending anything, and reports whether it gets there and
// the ports it leaves by (in path's array: none when src holds dlid).
// What the path offers is pathOffer's, left to the walks that get there
// (most of a planarized fabric's fail, from a plane that does not hold
// dlid). f.mu is held.
func (f *Fabric) walk(src *port, dlid uint16, path []*port) ([]*port, bool) {
	path = path[:0]
	if src.owns(dlid) {
		return path, true
	}
	out := src
	if src.node.typ == typeSwitch {
		out = src.node.egress(dlid)
	}
	for range maxLIDHops {
		if out == nil || out.remote == nil || !out.up(false) {
			return path, false
		}
		path = append(path, out)
		r := out.remote
		m := r.node
		if m.typ != typeSwitch {
			return path, r.owns(dlid)
		}
		if m.ports[0].owns(dlid) {
			return path, true
		}
		out = m.egress(dlid)
	}
	return path, false
}

// pathOffer is what the route walk found from src along path offers.
func pathOffer(src *port, path []*port) pathInfo {
	pi := pathInfo{mtu: 5, rate: 1 << 30}
	link := func(p *port) {
		pi.mtu = min(pi.mtu, uint8(p.get(piNeighborMTU)), uint8(p.get(piMTUCap)))
		pi.rate = min(pi.rate, smp.SysfsRate(uint8(p.get(piWidthActive)), uint8(p.get(piSpeedActive)), p.aggExtActive()))
		pi.hops++
	}
	// A switch's port 0 limits the paths that end there by its MTUCap
	// (1024 in ibsim), as OpenSM answers (mad/sa/testdata/pathrecord_get.hex).
	port0 := func(n *node) {
		if n.typ == typeSwitch {
			pi.mtu = min(pi.mtu, uint8(n.ports[0].get(piMTUCap)))
		}
	}
	port0(src.node)
	if len(path) == 0 {
		// The port itself: what its link offers, as OpenSM answers.
		q := src
		if q.node.typ == typeSwitch {
			for _, p := range q.node.ports[1:] {
				if p.remote != nil && p.up(false) {
					q = p
					break
				}
			}
		}
		link(q)
		pi.hops = 0
		return pi
	}
	for _, p := range path {
		link(p)
	}
	port0(path[len(path)-1].remote.node) // a switch: the path ends at its port 0
	return pi
}

// saPaths appends the PathRecords asked for: SLID (component 5) or SGID (3)
// or else the requester; DLID (4) or DGID (2) or else every endport. Only
// reachable pairs give a record. NumbPath and the MTU, rate and packet
// lifetime selectors are applied as selectors, not compared. f.mu is held.
func (f *Fabric) saPaths(tmpl []byte, mask uint64, from uint16, add func(func([]byte))) {
	srcs, dsts := f.pathEnds(tmpl, mask, from)
	fwd, back := make([]*port, 0, maxLIDHops), make([]*port, 0, maxLIDHops)
	for _, s := range srcs {
		for _, d := range dsts {
			slid, dlid := s.lid, d.lid
			if mask&(1<<5) != 0 {
				slid = uint16(prSLID.Get(tmpl))
			}
			if mask&(1<<4) != 0 {
				dlid = uint16(prDLID.Get(tmpl))
			}
			var ok bool
			if fwd, ok = f.walk(s, dlid, fwd); !ok {
				continue
			}
			if back, ok = f.walk(d, slid, back); !ok {
				continue
			}
			info := pathOffer(s, fwd)
			r := pathRate(info.rate)
			if !selects(mask, 16, 17, prMTUSel, prMTU, tmpl, info.mtu, false) ||
				!selects(mask, 18, 19, prRateSel, prRate, tmpl, r, true) {
				continue
			}
			add(func(rec []byte) {
				copy(prDGID.Slice(rec), gidOf(d))
				copy(prSGID.Slice(rec), gidOf(s))
				prDLID.Put(rec, uint64(dlid))
				prSLID.Put(rec, uint64(slid))
				prReversible.Put(rec, 1)
				prPKey.Put(rec, uint64(smp.DefaultPKey))
				prMTUSel.Put(rec, 2)
				prMTU.Put(rec, uint64(info.mtu))
				prRateSel.Put(rec, 2)
				prRate.Put(rec, uint64(r))
				prPLTSel.Put(rec, 2)
				if info.hops > 0 {
					// OpenSM's packet_life_time (0x12); 0 from a port
					// to itself (mad/sa/testdata/pathrecord_*.hex).
					prPacketLife.Put(rec, saPacketLifeTime)
				}
				prHopLimit.Put(rec, 0)
				prNumbPath.Put(rec, 0)
			})
		}
	}
}

// pathEnds are the source and destination ports of a PathRecord query:
// the one its SLID or SGID (DLID or DGID) names, else the requester's
// port as the source and every endport as the destination. The GID of a
// planarized CA names its aggregated port: every plane port, of which the
// pairs a plane joins give records (planes.go). f.mu is held.
func (f *Fabric) pathEnds(tmpl []byte, mask uint64, from uint16) (srcs, dsts []*port) {
	// Scans of the endports, not three maps of them made for each query
	// (8,000 entries each on a planarized 2,000-node tree); where two
	// endports share a LID or GUID, the last one is taken, as the maps'
	// last write was.
	var all []*port
	for _, n := range f.nodes {
		all = append(all, f.endports(n)...)
	}
	pick := func(lidComp, gidComp int, lidF, gidF mad.Field, def *port) []*port {
		switch {
		case mask&(1<<lidComp) != 0:
			l := uint16(lidF.Get(tmpl))
			for _, p := range all {
				if p.owns(l) {
					return []*port{p}
				}
			}
			return nil
		case mask&(1<<gidComp) != 0:
			g := mad.GID(gidF.Slice(tmpl)).GUID()
			var planes []*port
			var last *port
			for _, p := range all {
				if p.guid == g {
					if p.node.planarized {
						planes = append(planes, p)
					}
					last = p
				}
			}
			switch {
			case planes != nil:
				return planes
			case last != nil:
				return []*port{last}
			}
			return nil
		case def != nil:
			return []*port{def}
		}
		return all
	}
	var requester *port
	for _, p := range all {
		if p.lid == from {
			requester = p
		}
	}
	return pick(5, 3, prSLID, prSGID, requester), pick(4, 2, prDLID, prDGID, nil)
}

// selects applies a PathRecord selector (0 greater than, 1 less than, 2
// exactly, 3 largest available) when its value component is in mask.
func selects(mask uint64, selComp, valComp int, selF, valF mad.Field, tmpl []byte, have uint8, isRate bool) bool {
	if mask&(1<<valComp) == 0 {
		return true
	}
	want := uint8(valF.Get(tmpl))
	sel := uint8(2)
	if mask&(1<<selComp) != 0 {
		sel = uint8(selF.Get(tmpl))
	}
	h, w := int(have), int(want)
	if isRate {
		h, w = rateGbps[have], rateGbps[want]
	}
	switch sel {
	case 0:
		return h > w
	case 1:
		return h < w
	case 2:
		return h == w
	}
	return true
}

func gidOf(p *port) []byte {
	g := mad.NewGID(p.get(piGIDPrefix), p.guid)
	return g[:]
}
