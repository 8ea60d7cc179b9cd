package sim

import (
	"cmp"
	"math/bits"
	"slices"

	"github.com/ibscript/ibscript/mad/smp"
)

// configure brings the fabric to the state OpenSM leaves it in: every
// endport reachable from the SM gets a LID, the cables between reachable
// nodes go ACTIVE, and every reachable switch gets a min-hop linear
// forwarding table.
func (f *Fabric) configure() {
	f.hasSM = true
	eps, switches := f.reach()
	f.smOf = f.planeSMs()
	byGUID := sortedByLEGUID(eps) // assignLIDs' and routingOrder's order
	lids := f.assignLIDs(eps, byGUID)
	inSubnet := make([]bool, len(f.nodes)) // by node.idx
	for _, s := range switches {
		inSubnet[s.idx] = true
	}
	for _, e := range eps {
		inSubnet[e.node.idx] = true
	}
	// The fields are written into PortInfo directly and the port's
	// mirrored fields set to what was written (put syncs after every
	// field: a fifth of a planarized 2,000-node tree's configure; sync
	// reading them back, a twentieth).
	for _, n := range f.nodes {
		nodeIn := inSubnet[n.idx]
		for _, p := range n.ports {
			if p == nil {
				continue
			}
			pi := p.pi[:]
			l := lids[p.idx]
			piLID.Put(pi, uint64(l.lid))
			piLMC.Put(pi, uint64(l.lmc))
			if l.ep && l.lid != 0 {
				piGIDPrefix.Put(pi, gidPrefix)
				piMasterSMLID.Put(pi, uint64(lids[f.smFor(p).idx].lid))
			}
			p.lid, p.lmc = l.lid, l.lmc // the LMC is at most 7, its field's 3 bits
			if nodeIn && p.remote != nil && inSubnet[p.remote.node.idx] {
				piPortState.Put(pi, uint64(smp.PortStateActive))
				p.state = smp.PortStateActive
				// OpenSM's link manager: the leaf HOQ lifetime on
				// router ports and on switch ports facing a CA or
				// router, the other one between switches.
				switch {
				case n.typ == typeRouter || n.typ == typeSwitch && p.remote.node.typ != typeSwitch:
					piHOQLife.Put(pi, osmLeafHOQLife)
				case n.typ == typeSwitch:
					piHOQLife.Put(pi, osmHOQLife)
				}
			}
			if f.isSMPort(p) {
				piCapabilityMask.Put(pi, piCapabilityMask.Get(pi)|uint64(smp.CapIsSM))
			}
		}
	}
	top := f.routeSwitches(switches, eps, byGUID)
	for _, s := range switches {
		si := s.sw.info()
		si.LifeTimeValue = osmLifeTime
		si.PortStateChange = false
		si.LinearFDBTop = uint16(top)
		s.sw.setInfo(&si)
	}
}

// reach returns the endports OpenSM would discover from the SM's port
// (CA ports cabled to a reachable switch or to the SM's own port, and port
// 0 of every reachable switch), the SM's port first, and the reachable
// switches in discovery order. Directed routes only cross switches.
func (f *Fabric) reach() (eps []*port, switches []*node) { return f.reachBy(false) }

// reachBy is reach; with live, cables with an end Down (SetLink) are not
// crossed: what an SM's sweep finds now.
func (f *Fabric) reachBy(live bool) (eps []*port, switches []*node) {
	remote := func(p *port) *port {
		r := p.remote
		if live && r != nil && (p.state == smp.PortStateDown || r.state == smp.PortStateDown) {
			return nil
		}
		return r
	}
	// By node.idx and port.idx (maps were a tenth of a planarized
	// 2,000-node tree's configure).
	seen := make([]bool, len(f.nodes))
	seenPort := make([]bool, f.nports)
	// OpenSM drops a NodeInfo whose node or port GUID is zero (ERR 0D16,
	// 0D17 of osm_ni_rcv_process): such a node gets no LID and, a
	// switch, is not swept through (a router of ibsim's default rtguid
	// 0).
	refused := func(n *node, p *port) bool { return n.guid == 0 || p != nil && p.guid == 0 }
	addEP := func(p *port) {
		if refused(p.node, p) {
			return
		}
		if !seenPort[p.idx] {
			seenPort[p.idx] = true
			eps = append(eps, p)
		}
	}
	var queue []*node
	visit := func(n *node) {
		if !refused(n, nil) && !seen[n.idx] {
			seen[n.idx] = true
			queue = append(queue, n)
			switches = append(switches, n)
		}
	}
	sm := f.smPort
	if sm.node.typ == typeSwitch {
		visit(sm.node)
	} else {
		// An SM on a planarized CA sweeps every plane, each through its
		// plane port (planes.go).
		starts := []*port{sm}
		if sm.node.planarized {
			for _, p := range sm.node.ports[1:] {
				if p != sm {
					starts = append(starts, p)
				}
			}
		}
		for _, s := range starts {
			addEP(s)
			if r := remote(s); r != nil {
				if r.node.typ == typeSwitch {
					visit(r.node)
				} else {
					addEP(r)
				}
			}
		}
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		addEP(s.ports[0])
		for _, p := range s.ports[1:] {
			r := remote(p)
			switch {
			case r == nil:
			case r.node.typ == typeSwitch:
				visit(r.node)
			default:
				addEP(r)
			}
		}
	}
	// eps[0] is the SM's port; a switch SM's port 0 was added first too.
	return eps, switches
}

// assignLIDs gives each endport a LID as OpenSM does on a fresh subnet:
// the SM's port first, then the others ordered by port GUID read as a
// little-endian number (OpenSM's port GUID map compares network-order
// GUIDs that way), each taking the lowest free LID range. LIDs preset by
// the topology file are kept where they are valid and unique.
//
// It returns the LIDs by port.idx, ep set on the endports'. byGUID is
// eps sorted by sortedByLEGUID.
func (f *Fabric) assignLIDs(eps, byGUID []*port) []lidRange {
	lids := make([]lidRange, f.nports)
	if len(eps) == 0 {
		return lids
	}
	// eps[1:] in byGUID's order: the sort is stable and eps[0] first in
	// eps, so leaving it out of byGUID sorts the rest.
	order := make([]*port, 0, len(eps))
	order = append(order, eps[0])
	for _, p := range byGUID {
		if p != eps[0] {
			order = append(order, p)
		}
	}

	used := make([]bool, 1<<16) // by LID
	type want = lidRange
	wants := make([]want, len(order))
	for i, p := range order {
		lmc := min(p.lmc, 7)
		w := want{lid: p.lid, lmc: lmc}
		n := uint32(1) << lmc
		if w.lid != 0 {
			ok := uint32(w.lid)+n-1 <= maxUnicastLID && w.lid%uint16(n) == 0
			for l := uint32(w.lid); ok && l < uint32(w.lid)+n; l++ {
				ok = !used[uint16(l)]
			}
			if ok {
				for l := uint32(w.lid); l < uint32(w.lid)+n; l++ {
					used[uint16(l)] = true
				}
			} else {
				f.log.Warn("sim: preset LID not kept", "port", p.String(), "lid", w.lid, "lmc", lmc)
				w.lid = 0
			}
		}
		wants[i] = w
	}
	next := uint32(1)
	for i, p := range order {
		w := wants[i]
		n := uint32(1) << w.lmc
		if w.lid == 0 {
			for l := next; ; l += n {
				l = (l + n - 1) &^ (n - 1) // aligned to the LMC
				free := l+n-1 <= maxUnicastLID
				for k := l; free && k < l+n; k++ {
					free = !used[uint16(k)]
				}
				if l+n-1 > maxUnicastLID {
					break // out of LIDs: the port stays without one
				}
				if free {
					w.lid = uint16(l)
					for k := l; k < l+n; k++ {
						used[uint16(k)] = true
					}
					if n == 1 {
						next = l + 1
					}
					break
				}
			}
		}
		w.ep = true
		lids[p.idx] = w
	}
	f.smLID = lids[f.smPort.idx].lid
	return lids
}

// sortedByLEGUID returns ps sorted stably by port GUID read as a
// little-endian number, as assignLIDs and routingOrder order ports: keyed
// once and tied by position (a stable sort calling ReverseBytes64 in each
// comparison was a tenth of a planarized 2,000-node tree's load).
func sortedByLEGUID(ps []*port) []*port {
	// A least-significant-digit radix sort, a byte a pass, is stable, so
	// equal keys keep their order; it skips the bytes where every key is
	// the same (most of a fabric's GUIDs share all but their low bytes).
	// pdqsort's comparisons were a twentieth of a planarized 2,000-node
	// tree's load.
	type keyed struct {
		key uint64
		p   *port
	}
	ks := make([]keyed, len(ps))
	var or, and uint64 = 0, ^uint64(0)
	for i, p := range ps {
		k := bits.ReverseBytes64(p.guid)
		ks[i] = keyed{k, p}
		or, and = or|k, and&k
	}
	tmp := make([]keyed, len(ps))
	for shift := 0; shift < 64; shift += 8 {
		if (or^and)>>shift&0xff == 0 {
			continue // every key has this byte
		}
		var count [257]int
		for _, k := range ks {
			count[k.key>>shift&0xff+1]++
		}
		for b := 1; b < len(count); b++ {
			count[b] += count[b-1]
		}
		for _, k := range ks {
			d := k.key >> shift & 0xff
			tmp[count[d]] = k
			count[d]++
		}
		ks, tmp = tmp, ks
	}
	out := make([]*port, len(ps))
	for i, k := range ks {
		out[i] = k.p
	}
	return out
}

// lidRange is a base LID and LMC; ep marks an endport's (assignLIDs).
type lidRange struct {
	lid uint16
	lmc uint8
	ep  bool
}

// routeSwitches fills the linear forwarding tables of the reachable
// switches as OpenSM's min-hop routing engine does (osm_ucast_mgr.c,
// osm_switch_recommend_path): for each switch and each LID in OpenSM's
// port order (routingOrder), the egress port on a shortest path,
// balancing among equal ones by the number of CA and router LIDs already
// routed through each port (switch LIDs are routed but not counted), ties
// to the lowest port; the switch's own LIDs go to port 0. The tables are
// then OpenSM's entry for entry (tests/ibsimdiff).
//
// What the tables are computed from (the links between switches, the
// LIDs' switches) is taken now; the distances within an island of
// switches (a planarized fabric has one per plane) and its tables are
// computed when one of its tables is first read or written
// (swState.table), so a command that uses one plane routes that plane
// alone. The tables are the same whenever that is.
// It returns the tables' top, the highest LID. byGUID is eps sorted by
// sortedByLEGUID.
func (f *Fabric) routeSwitches(switches []*node, eps, byGUID []*port) (top int) {
	if len(switches) == 0 {
		return 0
	}
	ns := len(switches)
	for _, n := range f.nodes {
		n.swIdx = -1
	}
	for i, s := range switches {
		s.swIdx = int32(i)
	}
	rc := &routeContext{f: f, switches: switches, adj: switchLinks(switches), linkStart: make([]int32, ns+1)}
	island := islandsOf(rc.adj)
	var maxLID int
	rc.dests, maxLID = lidDests(eps)
	rc.orderOf = islandOrders(island, rc.dests, f.routingOrder(switches, eps, byGUID))
	rc.hasCA = make([]bool, ns)
	for _, d := range rc.dests {
		if d.sw >= 0 && d.port >= 0 {
			rc.hasCA[d.sw] = true
		}
	}
	// Whole blocks of 64 LIDs, the LIDs past maxLID dropped.
	rc.lftLen = (maxLID + smp.LIDsPerLFTBlock) / smp.LIDsPerLFTBlock * smp.LIDsPerLFTBlock
	islands := map[int]*islandRoute{}
	for si, s := range switches {
		for _, p := range s.ports[1:] {
			if p.up(false) && p.remote.node.swIdx >= 0 {
				rc.links = append(rc.links, uplink{uint8(p.num), int(p.remote.node.swIdx)})
			}
		}
		rc.linkStart[si+1] = int32(len(rc.links))
		id := int(island[si])
		r := islands[id]
		if r == nil {
			r = &islandRoute{rc: rc}
			islands[id] = r
		}
		r.members = append(r.members, int32(si))
		s.sw.pending = r
	}
	return maxLID
}

// uplink is a switch's link to another switch: its port, and the index
// of the switch at the other end.
type uplink struct {
	port uint8
	rsw  int
}

// routeContext is what routeSwitches' tables are computed from.
type routeContext struct {
	f         *Fabric
	switches  []*node
	adj       [][]int32 // switchLinks
	dests     []dest    // lidDests
	orderOf   func(si int) []int32
	hasCA     []bool   // per switch: a CA hangs off it
	links     []uplink // per switch si: links[linkStart[si]:linkStart[si+1]]
	linkStart []int32
	lftLen    int // a table's length
}

// islandRoute is an island's switches whose tables are still to be
// filled.
type islandRoute struct {
	rc      *routeContext
	members []int32 // switch indices, ascending
}

// run fills the island's tables. f.mu is held.
func (r *islandRoute) run() {
	rc := r.rc
	switches := rc.switches
	ns, nm := len(switches), len(r.members)
	const inf = noHops
	// The island's switches reach each other and no other (configure
	// makes both ends of a cable Active or neither): distances between
	// members, by their position in members, are all a table needs.
	local := make([]int32, ns) // a member's position in members, -1 for others
	for t := range local {
		local[t] = -1
	}
	for j, m := range r.members {
		local[m] = int32(j)
	}
	dist := switchDistances(rc.adj, r.members, local)
	candStart := make([]int32, ns+1)
	var cands []uint8
	best := make([]uint16, ns) // by switch index; inf outside the island
	for t := range best {
		best[t] = inf
	}
	rr := &roundRobin{}
	for _, si32 := range r.members {
		si := int(si32)
		s := switches[si]
		s.sw.pending = nil
		s.sw.lft = make([]byte, rc.lftLen)
		for i := range s.sw.lft {
			s.sw.lft[i] = smp.DropPort
		}
		links := rc.links[rc.linkStart[si]:rc.linkStart[si+1]]
		for _, t := range r.members {
			best[t] = inf
		}
		for _, l := range links {
			row := dist[int(local[l.rsw])*nm : int(local[l.rsw]+1)*nm]
			for j, h := range row {
				if t := r.members[j]; h != inf && h+1 < best[t] {
					best[t] = h + 1
				}
			}
		}
		cands = cands[:0]
		for t := range switches {
			candStart[t] = int32(len(cands))
			if best[t] == inf || t == si {
				continue
			}
			for _, l := range links {
				if dist[int(local[l.rsw])*nm+int(local[t])]+1 == best[t] {
					cands = append(cands, l.port)
				}
			}
		}
		candStart[ns] = int32(len(cands))
		if !naiveRouting && rr.prepare(cands, candStart[:ns+1], rc.hasCA) {
			rc.f.rrSwitches++
			rr.route(s.sw.lft, rc.dests, rc.orderOf(si), si)
		} else {
			minHopNaive(s.sw.lft, rc.dests, rc.orderOf(si), si, cands, candStart)
		}
	}
}

// islandOrders returns, for a switch, the LIDs of order it routes: those
// on its island (the switches it reaches; a planarized fabric has one per
// plane), as the others have no egress port and are skipped anyway. With
// one island that is order itself.
// island is islandsOf's.
func islandOrders(island []int32, dests []dest, order []int32) func(si int) []int32 {
	one := true
	for _, id := range island {
		one = one && id == 0
	}
	if one {
		return func(int) []int32 { return order }
	}
	orders := map[int32][]int32{}
	return func(si int) []int32 {
		id := island[si]
		if o, ok := orders[id]; ok {
			return o
		}
		var o []int32
		for _, lid := range order {
			if int(lid) < len(dests) && dests[lid].sw >= 0 && island[dests[lid].sw] == id {
				o = append(o, lid)
			}
		}
		orders[id] = o
		return o
	}
}

// noHops is the distance between switches that do not reach each other.
const noHops = ^uint16(0)

// switchLinks returns each switch's neighbour switches (by swIdx) over
// its active links, in port order.
func switchLinks(switches []*node) [][]int32 {
	adj := make([][]int32, len(switches))
	for u, s := range switches {
		for _, p := range s.ports[1:] {
			if p.remote != nil && p.state == smp.PortStateActive && p.remote.node.swIdx >= 0 {
				adj[u] = append(adj[u], p.remote.node.swIdx)
			}
		}
	}
	return adj
}

// islandsOf returns, for each switch, its island's id: the lowest switch
// index it reaches over adj's links.
func islandsOf(adj [][]int32) []int32 {
	island := make([]int32, len(adj))
	for i := range island {
		island[i] = -1
	}
	var queue []int32
	for src := range adj {
		if island[src] >= 0 {
			continue
		}
		island[src] = int32(src)
		queue = append(queue[:0], int32(src))
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			for _, v := range adj[u] {
				if island[v] < 0 {
					island[v] = int32(src)
					queue = append(queue, v)
				}
			}
		}
	}
	return island
}

// switchDistances returns the hop counts between an island's switches
// over adj's links: row i of the len(members)² matrix is a breadth-first
// search from members[i], column j the distance to members[j]; local is
// each member's position in members (-1 for another switch).
func switchDistances(adj [][]int32, members, local []int32) []uint16 {
	nm := len(members)
	dist := make([]uint16, nm*nm)
	for i := range dist {
		dist[i] = noHops
	}
	queue := make([]int32, 0, nm)
	for src := range members {
		d := dist[src*nm : (src+1)*nm]
		d[src] = 0
		queue = append(queue[:0], members[src])
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			du := d[local[u]]
			for _, v := range adj[u] {
				if lv := local[v]; lv >= 0 && d[lv] == noHops {
					d[lv] = du + 1
					queue = append(queue, v)
				}
			}
		}
	}
	return dist
}

// lidDests returns, by LID, the switch a LID's port hangs off and, for a
// CA port, the switch port it is cabled to; and the highest LID.
func lidDests(eps []*port) (dests []dest, maxLID int) {
	for _, e := range eps {
		if e.lid != 0 {
			maxLID = max(maxLID, int(e.lid)+(1<<e.lmc)-1)
		}
	}
	dests = make([]dest, maxLID+1)
	for i := range dests {
		dests[i] = dest{sw: -1}
	}
	for _, e := range eps {
		if e.lid == 0 {
			continue
		}
		d := dest{sw: -1, port: -1}
		if e.node.typ == typeSwitch {
			d.sw = e.node.swIdx
		} else if r := e.remote; r != nil && r.node.swIdx >= 0 && e.state == smp.PortStateActive {
			d = dest{sw: r.node.swIdx, port: int16(r.num)}
		}
		for l := int(e.lid); l < int(e.lid)+(1<<e.lmc); l++ {
			dests[l] = d
		}
	}
	return dests, maxLID
}

// naiveRouting makes routeSwitches always use minHopNaive (tests).
var naiveRouting = false

// dest is where a LID is: the switch it hangs off (an index among the
// routed switches; -1 unreachable) and, for a CA's LID, that switch's port
// to the CA (-1 for the switch's own LID).
type dest struct {
	sw   int32
	port int16
}

// routingOrder returns the LIDs in the order OpenSM's unicast manager
// routes them (ucast_mgr_build_lfts' port_order_list, without a GUID
// routing order file): the switches by GUID (its switch table's order:
// network-order GUIDs compared as little-endian numbers), stably sorted
// by how many CA and router ports hang off each, most first
// (sort_ports_by_switch_load); the CA and router ports cabled to each
// switch in that order, by switch port; then every other endport (switch
// port 0s, CA ports cabled to no switch) by port GUID, as its port table
// holds them. With an LMC, every port's base LIDs come first, then each
// port's next LID, and so on. byGUID is eps sorted by sortedByLEGUID.
func (f *Fabric) routingOrder(switches []*node, eps, byGUID []*port) []int32 {
	le := func(a, b uint64) int { return cmp.Compare(bits.ReverseBytes64(a), bits.ReverseBytes64(b)) }
	// By port.idx and node.idx, not maps keyed by pointer (a
	// twentieth of a planarized 2,000-node tree's load).
	const isEP, added = 1, 2
	mark := make([]uint8, f.nports)
	for _, e := range eps {
		mark[e.idx] = isEP
	}
	leaf := func(p *port) bool {
		return p != nil && p.remote != nil && mark[p.remote.idx]&isEP != 0 && p.remote.node.typ != typeSwitch
	}
	sws := slices.Clone(switches)
	slices.SortFunc(sws, func(a, b *node) int { return le(a.guid, b.guid) })
	load := make([]int, len(f.nodes))
	for _, s := range sws {
		for _, p := range s.ports[1:] {
			if leaf(p) {
				load[s.idx]++
			}
		}
	}
	slices.SortStableFunc(sws, func(a, b *node) int { return load[b.idx] - load[a.idx] })
	ports := make([]*port, 0, len(eps))
	for _, s := range sws {
		for _, p := range s.ports[1:] {
			if leaf(p) && mark[p.remote.idx]&added == 0 {
				mark[p.remote.idx] |= added
				ports = append(ports, p.remote)
			}
		}
	}
	rest := byGUID
	maxLMC := uint8(0)
	for _, e := range rest {
		if mark[e.idx]&added == 0 {
			ports = append(ports, e)
		}
		maxLMC = max(maxLMC, e.lmc)
	}
	order := make([]int32, 0, len(ports))
	for off := 0; off < 1<<maxLMC; off++ {
		for _, p := range ports {
			if p.lid != 0 && off < 1<<p.lmc {
				order = append(order, int32(p.lid)+int32(off))
			}
		}
	}
	return order
}

// minHopNaive fills the forwarding table lft of switch si: for each LID in
// order (routingOrder), among the min-hop ports toward its switch
// (cands[candStart[t]:candStart[t+1]], in port order) the one with the
// fewest CA LIDs routed through it so far, ties to the lowest port.
func minHopNaive(lft []byte, dests []dest, order []int32, si int, cands []uint8, candStart []int32) {
	var count [256]int32 // CA LIDs routed through each port
	for _, lid := range order {
		d, t, ok := remoteDest(lft, dests, lid, si, &count)
		if !ok {
			continue
		}
		c := cands[candStart[t]:candStart[t+1]]
		if len(c) == 0 {
			continue
		}
		pick, least := c[0], count[c[0]]
		for _, p := range c[1:] {
			if n := count[p]; n < least {
				pick, least = p, n
			}
		}
		lft[lid] = pick
		if d.port >= 0 {
			count[pick]++
		}
	}
}

// remoteDest is lid's destination and the index of its switch, ok when
// that is another switch than si. Otherwise lid has no destination, or
// si routes it itself and remoteDest fills its entry of lft: port 0 for
// the switch's own LID, a CA's port for a CA LID (counted in count).
func remoteDest(lft []byte, dests []dest, lid int32, si int, count *[256]int32) (d dest, t int, ok bool) {
	if int(lid) >= len(dests) {
		return dest{}, 0, false
	}
	d = dests[lid]
	if d.sw < 0 {
		return d, 0, false
	}
	t = int(d.sw)
	if t != si {
		return d, t, true
	}
	if d.port < 0 {
		lft[lid] = 0
	} else {
		lft[lid] = uint8(d.port)
		count[d.port]++
	}
	return d, t, false
}

// roundRobin is minHopNaive for the common case (fat trees) where the
// candidate sets toward switches with CAs are pairwise identical or
// disjoint. Only CA LIDs count, so such a set's counts change through its
// own picks alone, all from 0, and its port with the fewest CA LIDs (ties
// to the lowest port) is simply the next one in turn: O(1) per LID. Sets
// toward switches without CAs (only their own LIDs, which do not count)
// are scanned as minHopNaive does.
type roundRobin struct {
	setOf []int32    // per destination switch: its round-robin set, -1 none
	owner [256]int32 // per port: the set it belongs to, -1 none
	sets  [][2]int32 // per set: its range in cands
	next  []int32    // per set: the position of the next pick
	cands []uint8
	start []int32
}

// prepare sorts the candidate ranges toward switches with CAs (hasCA) into
// sets; it reports false when two of them overlap without being equal.
func (r *roundRobin) prepare(cands []uint8, candStart []int32, hasCA []bool) bool {
	nt := len(candStart) - 1
	r.setOf = slices.Grow(r.setOf[:0], nt)[:nt]
	r.sets, r.next, r.cands, r.start = r.sets[:0], r.next[:0], cands, candStart
	for i := range r.owner {
		r.owner[i] = -1
	}
	for t := range nt {
		c := cands[candStart[t]:candStart[t+1]]
		r.setOf[t] = -1
		if len(c) == 0 || !hasCA[t] {
			continue
		}
		if id := r.owner[c[0]]; id >= 0 {
			rg := r.sets[id]
			if !slices.Equal(cands[rg[0]:rg[1]], c) {
				return false
			}
			r.setOf[t] = id
			continue
		}
		id := int32(len(r.sets))
		for _, p := range c {
			if r.owner[p] >= 0 {
				return false
			}
			r.owner[p] = id
		}
		r.sets = append(r.sets, [2]int32{candStart[t], candStart[t+1]})
		r.next = append(r.next, 0)
		r.setOf[t] = id
	}
	return true
}

func (r *roundRobin) route(lft []byte, dests []dest, order []int32, si int) {
	var count [256]int32 // CA LIDs routed through each port
	for _, lid := range order {
		d, t, ok := remoteDest(lft, dests, lid, si, &count)
		if !ok {
			continue
		}
		var pick uint8
		if id := r.setOf[t]; id >= 0 {
			rg := r.sets[id]
			pick = r.cands[rg[0]+r.next[id]]
			if d.port >= 0 {
				if r.next[id]++; rg[0]+r.next[id] == rg[1] {
					r.next[id] = 0
				}
			}
		} else {
			c := r.cands[r.start[t]:r.start[t+1]]
			if len(c) == 0 {
				continue
			}
			pick = c[0]
			for _, p := range c[1:] {
				if count[p] < count[pick] {
					pick = p
				}
			}
		}
		lft[lid] = pick
		if d.port >= 0 {
			count[pick]++
		}
	}
}
