package exporter

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// PortKey names a port across discoveries: its node's GUID and its number.
type PortKey struct {
	GUID uint64
	Port int
}

func keyOf(p *topo.Port) PortKey { return PortKey{p.Node.GUID, p.Num} }

// PortStatus is a port's PortState and PortPhysicalState as the exporter
// re-read them after a trap, since the discovery of the snapshot's Fabric.
type PortStatus struct {
	State, PhysState uint8
	At               time.Time // when they were read
}

// PortState returns the port's PortState and PortPhysicalState: those a
// trap made the exporter re-read since the discovery, else the
// discovery's.
func (s *Snapshot) PortState(p *topo.Port) (state, phys uint8) {
	if st, ok := s.Status[p]; ok {
		return st.State, st.PhysState
	}
	return p.State, p.PhysState
}

// up reports whether a port's state is past Down (Init, Armed, Active).
func up(state uint8) bool { return state >= smp.PortStateInit }

// trapEvent is what one Report names: the trap and the port or node.
type trapEvent struct {
	trap uint16
	lid  uint16 // 128: the switch; 129-131, 144: the port
	port int    // 129-131: the port number; -1 otherwise
	gid  uint64 // 64, 65: the endport's GUID
}

// eventOf reads what a Notice names (smp.Notice's Details accessors).
func eventOf(n *smp.Notice) trapEvent {
	ev := trapEvent{trap: n.TrapNumber, port: -1}
	if !n.IsGeneric {
		ev.trap = 0 // a vendor notice: nothing the exporter reads
		return ev
	}
	if gid, ok := n.DetailsGID(); ok {
		ev.gid = gid.GUID()
	}
	if lid, ok := n.DetailsLID(); ok {
		ev.lid = lid
	}
	if ev.lid == 0 && n.TrapNumber == smp.TrapLinkStateChange {
		ev.lid = n.IssuerLID // the switch raised it
	}
	if p, ok := n.DetailsPort(); ok {
		ev.port = int(p)
	}
	return ev
}

// TrapNumbers returns the traps Options.Traps subscribes to: 64 and 65
// (an endport came or went), 128 (a switch port's link state changed),
// 129 to 131 (a port's link integrity, buffer overrun or flow control
// watchdog threshold) and 144 (a port's CapabilityMask or link attributes
// changed).
func TrapNumbers() []uint16 {
	return []uint16{smp.TrapGIDInService, smp.TrapGIDOutOfService, smp.TrapLinkStateChange,
		smp.TrapLinkIntegrity, smp.TrapBufferOverrun, smp.TrapWatchdog, smp.TrapLocalChanges}
}

// queue adds what a Report names to the events Run handles next.
func (e *Exporter) queue(ev trapEvent) {
	e.evMu.Lock()
	e.pending = append(e.pending, ev)
	e.evMu.Unlock()
}

// takeEvents returns the queued events and empties the queue.
func (e *Exporter) takeEvents() (evs []trapEvent) {
	e.evMu.Lock()
	evs, e.pending = e.pending, nil
	e.evMu.Unlock()
	return evs
}

// portIndex finds the ports of one discovery by LID and by port GUID.
type portIndex struct {
	byLID  map[uint16]*topo.Port   // a switch's port 0, a CA's ports
	byGUID map[uint64][]*topo.Port // endports by port GUID (a planarized CA's plane ports share one)
	sample map[*topo.Port]int      // the plan's sample of each linked port
}

// index returns pl's port index, built at its first trap.
func (pl *sweepPlan) index() *portIndex {
	if pl.idx != nil {
		return pl.idx
	}
	ix := &portIndex{byLID: map[uint16]*topo.Port{}, byGUID: map[uint64][]*topo.Port{}, sample: map[*topo.Port]int{}}
	for _, n := range pl.disc.Fabric.Nodes {
		for _, p := range n.Ports {
			if p == nil || (n.Type == topo.Switch && p.Num != 0) {
				continue
			}
			if p.LID != 0 {
				ix.byLID[p.LID] = p
			}
			ix.byGUID[p.GUID] = append(ix.byGUID[p.GUID], p)
		}
	}
	for i := range pl.base {
		ix.sample[pl.base[i].Port] = i
	}
	pl.idx = ix
	return ix
}

// named returns the ports an event names in discovery d's topology, or
// ok false when the event needs a discovery: an endport came into service
// (64), or a LID the topology does not hold.
func (ix *portIndex) named(ev trapEvent) (ports []*topo.Port, ok bool) {
	switch ev.trap {
	case smp.TrapGIDOutOfService:
		// The endport is out of reach: re-read the switch port facing it
		// (each plane port's, of a planarized CA). None: nothing of it is
		// served.
		for _, p := range ix.byGUID[ev.gid] {
			if p.Remote != nil && p.Remote.Node.Type == topo.Switch {
				ports = append(ports, p.Remote)
			}
		}
		return ports, true
	case smp.TrapLinkStateChange:
		p0 := ix.byLID[ev.lid]
		if p0 == nil || p0.Node.Type != topo.Switch {
			return nil, false
		}
		for _, p := range p0.Node.Ports[1:] {
			if p != nil {
				ports = append(ports, p)
			}
		}
		return ports, true
	case smp.TrapLinkIntegrity, smp.TrapBufferOverrun, smp.TrapWatchdog, smp.TrapLocalChanges:
		p := ix.byLID[ev.lid]
		if p == nil {
			return nil, false
		}
		if ev.port > 0 && p.Node.Type == topo.Switch {
			if ev.port >= len(p.Node.Ports) || p.Node.Ports[ev.port] == nil {
				return nil, false
			}
			p = p.Node.Ports[ev.port]
		}
		return []*topo.Port{p}, true
	}
	return nil, false
}

// onTraps handles the queued events by re-reading just the ports they
// name (their PortInfo, and the counters of those the sweep reads), node
// by node and all at once, each node's publishing a snapshot as soon as
// its answers are in (a node a link change cut off times out without
// holding back the others). It reports whether a sweep with a new
// discovery is needed instead: no topology yet, an event naming something
// the topology does not hold, an endport in service, a port that came up
// (its cable may lead anywhere; the SM has yet to make it Active, which
// the discovery's settling follows) or one that did not answer. The far
// ends of the ports found down are re-read next.
func (e *Exporter) onTraps(ctx context.Context) (discover bool) {
	evs := e.takeEvents()
	if len(evs) == 0 {
		return false
	}
	e.mu.Lock()
	prev := e.snap.Load()
	pl := e.plan
	if e.disc == nil || prev == nil || pl == nil || pl.disc != e.disc || prev.Fabric != e.disc.Fabric {
		e.mu.Unlock()
		e.trapped.Store(true)
		return true
	}
	ix := pl.index()
	e.mu.Unlock()
	var named []*topo.Port
	for _, ev := range evs {
		ps, ok := ix.named(ev)
		if !ok {
			e.trapped.Store(true)
			return true
		}
		named = append(named, ps...)
	}
	// A link gone down at one end is down at the other, which may raise
	// no trap (ibsim's Unlink traps from the switch named only): the far
	// ends of the ports found down are re-read next.
	read := map[*topo.Port]bool{}
	for round := 0; round < 2 && len(named) > 0; round++ {
		var mu sync.Mutex // guards far and again
		var far []*topo.Port
		var again bool
		var wg sync.WaitGroup
		for _, g := range groupByNode(pl, named, read) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.refresh(ctx, pl, g)
				mu.Lock()
				again = again || r.discover
				for _, p := range r.down {
					if p.Remote != nil {
						far = append(far, p.Remote)
					}
				}
				mu.Unlock()
			}()
		}
		wg.Wait()
		if again {
			e.trapped.Store(true)
			return true
		}
		named = far
	}
	return false
}

// groupByNode groups the ports the sweeps can reach by node, leaving out
// those in read (and adding them to it).
func groupByNode(pl *sweepPlan, ports []*topo.Port, read map[*topo.Port]bool) [][]*topo.Port {
	var groups [][]*topo.Port
	for _, p := range ports {
		if _, ok := portTarget(pl.disc, p); !ok || read[p] {
			continue // never reached by the sweeps either, or read already
		}
		read[p] = true
		g := slices.IndexFunc(groups, func(g []*topo.Port) bool { return g[0].Node == p.Node })
		if g < 0 {
			groups = append(groups, []*topo.Port{p})
		} else {
			groups[g] = append(groups[g], p)
		}
	}
	return groups
}

// refreshed is what refresh found: ports that went down, and whether a
// discovery is wanted (a port came up; or one could not be read: a link
// gone down may cut the LID route to it until the SM reroutes, where a
// discovery's directed routes go around).
type refreshed struct {
	down     []*topo.Port
	discover bool
}

// refresh re-reads ports of plan pl's topology (their PortInfo; the
// counters of those pl samples) and publishes the last snapshot with
// them, unless a discovery came meanwhile or a port came up.
func (e *Exporter) refresh(ctx context.Context, pl *sweepPlan, ports []*topo.Port) (r refreshed) {
	start := e.now()
	ix := pl.index()
	reqs := make([]engine.SweepReq, 0, len(ports)*5)
	planes := make([]int, 0, cap(reqs)) // per request: the plane of its port
	at := make([]int, len(ports))       // per port: its PortInfo's request
	for j, p := range ports {
		t, _ := portTarget(pl.disc, p)
		at[j] = len(reqs)
		reqs = append(reqs, engine.SweepReq{Target: t, Class: engine.SweepSMP, Method: mad.MethodGet, AttrID: smp.AttrPortInfo, AttrMod: uint32(p.Num)})
		if i, ok := ix.sample[p]; ok && pl.at[i] >= 0 {
			reqs = append(reqs, pl.reqs[pl.at[i]:pl.at[i]+len(pl.base[i].asked(pl.per(p.Node)))]...)
		}
		for len(planes) < len(reqs) {
			planes = append(planes, int(p.Plane))
		}
	}
	res := e.sweepOnPlanes(ctx, pl, reqs, planes)
	if ctx.Err() != nil {
		return r
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	prev := e.snap.Load()
	if e.plan != pl || prev.Fabric != pl.disc.Fabric {
		return r // a discovery came meanwhile: it read them too
	}
	pis := make([]*smp.PortInfo, len(ports))
	for j, p := range ports {
		var pi smp.PortInfo
		if decodeInto(res[at[j]], &pi) != nil {
			continue
		}
		pis[j] = &pi
		if was, _ := prev.PortState(p); !up(was) && up(pi.PortState) && p.Num != 0 {
			return refreshed{discover: true}
		}
	}
	now := e.now()
	s := *prev
	s.Ports = slices.Clone(prev.Ports)
	s.Refreshed, s.Discovered, s.TrapDiscovery = len(ports), false, false
	for j, p := range ports {
		if pi := pis[j]; pi == nil {
			s.countErr(res[at[j]].Err)
			r.discover = true
		} else {
			if was, _ := prev.PortState(p); up(was) && !up(pi.PortState) {
				e.wentDown(keyOf(p), now) // before the counters: LinkDownedCounter's growth counts it
				r.down = append(r.down, p)
			}
			e.status.set(p, PortStatus{State: pi.PortState, PhysState: pi.PortPhysicalState, At: now})
		}
		if i, ok := ix.sample[p]; ok && pl.at[i] >= 0 {
			e.reread(&s, prev, i, res[at[j]+1:], now)
		}
	}
	e.refreshes++
	e.seq++
	s.Seq, s.Time, s.Duration = e.seq, now, now.Sub(start)
	s.Traps = e.traps.Load()
	e.publishState(&s)
	e.snap.Store(&s)
	if e.opts.Logger != nil {
		e.opts.Logger.Debug("exporter: trap, ports re-read", "node", ports[0].Node.Desc, "ports", len(ports), "down", len(r.down), "seq", s.Seq)
	}
	return r
}

// reread fills sample i of s from the answers r (the sample's queries, in
// sweepAttrs order) read at now, computing its deltas against prev's.
func (e *Exporter) reread(s, prev *Snapshot, i int, r []engine.SweepResult, now time.Time) {
	ps := &s.Ports[i]
	ps.decode(ps.asked(e.plan.per(ps.Port.Node)), r)
	ps.ReadAt = now
	ps.XmitWaitOK = false
	e.portDeltas(&prev.Ports[i], ps, prev.readAt(&prev.Ports[i]), now)
}

// readAt is when sample ps of s was read.
func (s *Snapshot) readAt(ps *PortSample) time.Time {
	if ps.ReadAt.IsZero() {
		return s.Time
	}
	return ps.ReadAt
}

// wentDown records that the exporter saw the port go down at now: its
// went-down time and one flap, unless LinkDownedCounter's growth counts it
// at the next read (see linkDowned).
func (e *Exporter) wentDown(k PortKey, now time.Time) {
	if _, ok := e.downSince.m[k]; !ok {
		e.downSince.set(k, now)
	}
	e.flaps.set(k, e.flaps.m[k]+1)
	if e.credited == nil {
		e.credited = map[PortKey]uint64{}
	}
	e.credited[k]++
}

// linkDowned counts the growth of a port's LinkDownedCounter between two
// reads as flaps, less those the exporter saw itself since (wentDown).
func (e *Exporter) linkDowned(k PortKey, was, cur uint64) {
	seen := e.credited[k]
	if seen > 0 {
		delete(e.credited, k)
	}
	if cur <= was {
		return // none, or reset
	}
	if d := cur - was; d > seen {
		e.flaps.set(k, e.flaps.m[k]+d-seen)
	}
}

// afterDiscovery carries the port history from the topology before
// (prev's, nil at the first) to the new one: a port up before and Down now
// went down; a port up now, or on a node the discovery no longer finds, is
// no longer down; flaps of nodes gone are dropped. It compares the new
// topology with the reference.
func (e *Exporter) afterDiscovery(prev *Snapshot, f *topo.Fabric, now time.Time) {
	e.status = cowMap[*topo.Port, PortStatus]{} // the discovery read every port again
	nodes := f.NodesByGUID()
	if prev != nil {
		old := prev.Fabric.NodesByGUID()
		for _, n := range f.Nodes {
			o := old[n.GUID]
			for _, p := range n.Ports[min(1, len(n.Ports)):] {
				if p == nil {
					continue
				}
				k := keyOf(p)
				if up(p.State) {
					e.downSince.del(k)
					continue
				}
				if o == nil || p.Num >= len(o.Ports) || o.Ports[p.Num] == nil {
					continue
				}
				if was, _ := prev.PortState(o.Ports[p.Num]); up(was) {
					e.wentDown(k, now)
				}
			}
		}
	}
	for k := range e.downSince.m {
		if nodes[k.GUID] == nil {
			e.downSince.del(k)
		}
	}
	for k := range e.flaps.m {
		if nodes[k.GUID] == nil {
			e.flaps.del(k)
			delete(e.credited, k)
		}
	}
	if e.ref == nil {
		e.ref = e.opts.Reference
		if e.ref == nil {
			e.ref = f
		}
		e.refNodes, e.refLinks = e.ref.NodesByGUID(), links(e.ref)
	}
	e.topoDiff = diffTopology(e.refNodes, e.refLinks, nodes, f)
}

// publishState gives s the port history as it is now.
func (e *Exporter) publishState(s *Snapshot) {
	s.Status = e.status.publish()
	s.DownSince = e.downSince.publish()
	s.Flaps = e.flaps.publish()
	s.Topology = e.topoDiff
	s.Refreshes = e.refreshes
}

// cowMap is a map shared with the published snapshots: the first change
// after a publish copies it.
type cowMap[K comparable, V any] struct {
	m     map[K]V
	owned bool // m is not published yet
}

func (c *cowMap[K, V]) own() {
	if !c.owned {
		c.m = maps.Clone(c.m)
		if c.m == nil {
			c.m = map[K]V{}
		}
		c.owned = true
	}
}

func (c *cowMap[K, V]) set(k K, v V) {
	c.own()
	c.m[k] = v
}

func (c *cowMap[K, V]) del(k K) {
	if _, ok := c.m[k]; ok {
		c.own()
		delete(c.m, k)
	}
}

// publish returns the map, which is not changed from now on.
func (c *cowMap[K, V]) publish() map[K]V {
	c.owned = false
	return c.m
}

// linkKey is one cable: its two ends, the lower first.
type linkKey struct{ a, b PortKey }

func linkOf(p *topo.Port) linkKey {
	a, b := keyOf(p), keyOf(p.Remote)
	if b.GUID < a.GUID || b.GUID == a.GUID && b.Port < a.Port {
		a, b = b, a
	}
	return linkKey{a, b}
}

// links are a topology's cables.
func links(f *topo.Fabric) map[linkKey]bool {
	out := map[linkKey]bool{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				out[linkOf(p)] = true
			}
		}
	}
	return out
}

// TopologyDiff compares a discovered topology with the reference
// (Options.Reference, else the first discovery): nodes by GUID, links by
// both ends' GUIDs and port numbers.
type TopologyDiff struct {
	MissingNodes, ExtraNodes int
	MissingLinks, ExtraLinks int
}

// diffTopology compares f (its nodes by GUID) with the reference's nodes
// and links.
func diffTopology(refNodes map[uint64]*topo.Node, refLinks map[linkKey]bool, nodes map[uint64]*topo.Node, f *topo.Fabric) TopologyDiff {
	var d TopologyDiff
	for g := range refNodes {
		if nodes[g] == nil {
			d.MissingNodes++
		}
	}
	for g := range nodes {
		if refNodes[g] == nil {
			d.ExtraNodes++
		}
	}
	now := links(f)
	for l := range refLinks {
		if !now[l] {
			d.MissingLinks++
		}
	}
	for l := range now {
		if !refLinks[l] {
			d.ExtraLinks++
		}
	}
	return d
}
