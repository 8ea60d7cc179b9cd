package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ibscript/ibscript/internal/intmap"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// ErrNotFound is wrapped when a GUID target names nothing the last
// discovery found.
var ErrNotFound = errors.New("not found")

// DiscoverOptions tune Discover. A nil *DiscoverOptions means defaults.
type DiscoverOptions struct {
	// MaxHops limits the directed routes followed; 0 means 63, the IBA
	// limit.
	MaxHops int
	// Timeout and Retries override the Session's per-try timeout and
	// retries for the sweep's SMPs (0: the Session's; Retries NoRetries:
	// one try).
	Timeout time.Duration
	Retries int
	// Progress, when set, is called from the sweep's goroutine after each
	// batch of answers with the nodes found so far and the queries still
	// outstanding (the host rate-limits what it shows).
	Progress func(nodes, pending int)
}

// Discovery is the result of a sweep.
type Discovery struct {
	// Fabric holds the nodes in discovery order, with their ports and the
	// links between them (both directions).
	Fabric *topo.Fabric
	// Errors lists the queries that failed, one per target; the sweep
	// went on around them.
	Errors []TargetError
	// MADs is the number of SMPs the sweep sent (retries not counted).
	MADs int
	// Elapsed is the sweep's duration.
	Elapsed time.Duration
	// Retransmits is how many times the transport resent a request of the
	// session after a timeout during the sweep, when it counts them
	// (Retransmitter); other traffic on the session in the meantime is
	// included.
	Retransmits uint64

	paths *intmap.Map[[]uint8] // node and port GUIDs -> directed route; read-only once done
}

// Path returns the directed route (smpquery -D convention) through which
// the sweep reached the node or port with the given GUID.
func (d *Discovery) Path(guid uint64) ([]uint8, bool) {
	if d.paths == nil {
		return nil, false
	}
	return d.paths.Get(guid)
}

// Target returns a directed-route target for a node or port GUID.
func (d *Discovery) Target(guid uint64) (Target, bool) {
	p, ok := d.Path(guid)
	if !ok {
		return Target{}, false
	}
	return Target{Kind: ByDR, Path: p}, true
}

// LastDiscovery returns the result of the Session's last successful
// Discover, or nil.
func (s *Session) LastDiscovery() *Discovery {
	s.discMu.Lock()
	defer s.discMu.Unlock()
	return s.lastDisc
}

// resolve turns a GUID target into a directed route through the last
// discovery, sweeping the fabric first if it is unknown.
func (s *Session) resolve(ctx context.Context, t Target) (Target, error) {
	if t.Kind != ByGUID {
		return t, nil
	}
	if d := s.LastDiscovery(); d != nil {
		if r, ok := d.Target(t.GUID); ok {
			return r, nil
		}
	}
	d, err := s.Discover(ctx, nil)
	if err != nil {
		return t, fmt.Errorf("engine: resolve %s: %w", t, err)
	}
	if r, ok := d.Target(t.GUID); ok {
		return r, nil
	}
	return t, fmt.Errorf("engine: %s: no such node or port GUID in the fabric: %w", t, ErrNotFound)
}

// Discover sweeps the fabric from the local port by directed route, as
// ibnetdiscover does: NodeInfo on every new route, then NodeDescription,
// SwitchInfo and the PortInfo of every port of each new switch (of the
// port reached on a CA or router), following every linked switch port
// (PortState Init or above, or PhysState LinkUp) to its neighbour. Nodes
// are deduplicated by node GUID; links are recorded at both ends. The
// queries are pipelined: many routes in flight (the Session's Window), one
// SMP per node at a time once its GUID is known.
//
// A failed query is recorded in Discovery.Errors and the sweep goes on;
// Discover returns an error only when the local node cannot be read, or
// ctx ends (ctx.Err()).
func (s *Session) Discover(ctx context.Context, opts *DiscoverOptions) (*Discovery, error) {
	var o DiscoverOptions
	if opts != nil {
		o = *opts
	}
	if o.MaxHops <= 0 || o.MaxHops > maxHops {
		o.MaxHops = maxHops
	}
	c := s.defaults
	if o.Timeout != 0 {
		c.timeout = o.Timeout
	}
	switch {
	case o.Retries > 0:
		c.retries = o.Retries
	case o.Retries < 0:
		c.retries = 0
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	sw := &sweep{
		s:        s,
		c:        c,
		maxHops:  o.MaxHops,
		done:     make(chan struct{}),
		f:        &topo.Fabric{},
		paths:    new(intmap.Map[[]uint8]),
		start:    time.Now(),
		progress: o.Progress,
	}
	if last := s.LastDiscovery(); last != nil && last.paths != nil {
		// Most sweeps find what the last one found: size the tables
		// for it rather than growing them step by step.
		sw.nodes.Grow(len(last.Fabric.Nodes))
		sw.paths.Grow(last.paths.Len())
	}
	rt0, _ := s.Retransmits()
	sw.mu.Lock()
	sw.probeNode([]uint8{0}, nil, 0)
	sw.p.send = sw.takeLocked()
	sw.mu.Unlock()
	sw.p.hwake, sw.p.swake = make(chan struct{}, 1), make(chan struct{}, 1)
	// The sweep's two goroutines outlive a cancelled Discover until the
	// queries already made complete; Close waits for them.
	s.sweeps.Go(sw.handler)
	s.sweeps.Go(sw.sender)

	select {
	case <-sw.done:
	case <-ctx.Done():
		sw.mu.Lock()
		sw.canceled = true
		sw.mu.Unlock()
		return nil, ctx.Err()
	}
	for _, te := range sw.errs {
		if errors.Is(te.Err, ErrMADBudget) {
			return nil, fmt.Errorf("engine: discover: %w", te)
		}
	}
	d := &Discovery{Fabric: sw.f, Errors: sw.errs, MADs: sw.mads, Elapsed: time.Since(sw.start), paths: sw.paths}
	rt1, _ := s.Retransmits()
	d.Retransmits = rt1 - rt0
	if len(sw.f.Nodes) > 0 {
		finish(sw.f, sw.originPort)
	}
	if len(sw.f.Nodes) == 0 {
		err := errors.New("no node answered")
		if len(sw.errs) > 0 {
			err = sw.errs[0].Err
		}
		return d, fmt.Errorf("engine: discover: local node: %w", err)
	}
	s.discMu.Lock()
	s.lastDisc = d
	s.discMu.Unlock()
	return d, nil
}

// sweep is one discovery in progress. Its callbacks run on the Session's
// reader goroutine (or whichever goroutine fails an op); mu guards the
// state, and new ops are started only after mu is released, since
// starting one can complete another synchronously.
//
// A sweep runs as a pipeline of two goroutines, so that it uses two cores
// where the transport answers inside Send (the embedded simulator, where
// one goroutine would do everything): the sender starts the queries and,
// through the transport and the Session, runs their completion callbacks,
// which only queue the completed op; the handler decodes the answers,
// builds the topology and makes the next queries for the sender. Each
// side takes the other's whole queue at a time.
type sweep struct {
	s       *Session
	c       callOpts
	maxHops int
	done    chan struct{} // closed by the handler when no query is left
	start   time.Time
	p       pipe
	// progress is DiscoverOptions.Progress.
	progress func(nodes, pending int)

	mu       sync.Mutex // guards the fields below
	pending  int
	canceled bool
	f        *topo.Fabric
	nodes    intmap.Map[*dnode] // by node GUID
	paths    *intmap.Map[[]uint8]
	// Slabs: the sweep allocates its many small objects in blocks.
	qslab    []query
	qfree    []*query // done queries, for reuse
	nslab    []dnode
	pslab    []topo.Port
	pathSlab []uint8
	errs     []TargetError
	mads     int
	queue    []*op // built under mu, handed to the sender after
	// originPort is the local port number NodeInfo gave on the empty
	// route.
	originPort int
}

// pipe is the hand-over between a sweep's sender and handler.
type pipe struct {
	mu           sync.Mutex
	done         []*op // completed queries, for the handler
	send         []*op // new queries, for the sender
	stop         bool  // no query is left: the sender ends
	hwake, swake chan struct{}
}

func wake(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// sender starts the queries the handler makes, until none is left.
func (sw *sweep) sender() {
	var ops []*op
	for {
		sw.p.mu.Lock()
		ops, sw.p.send = sw.p.send, ops[:0]
		stop := sw.p.stop
		sw.p.mu.Unlock()
		if len(ops) == 0 {
			if stop {
				return
			}
			<-sw.p.swake
			continue
		}
		for _, o := range ops {
			sw.s.start(o)
		}
		clear(ops)
	}
}

// handler handles completed queries in batches and hands the queries they
// lead to to the sender, until none is left.
func (sw *sweep) handler() {
	var batch []*op
	for {
		sw.p.mu.Lock()
		batch, sw.p.done = sw.p.done, batch[:0]
		sw.p.mu.Unlock()
		if len(batch) == 0 {
			<-sw.p.hwake
			continue
		}
		sw.mu.Lock()
		for _, o := range batch {
			q := o.ctx.(*query)
			sw.pending--
			if !sw.canceled {
				sw.handleLocked(q, o)
			}
			*q = query{}
			sw.qfree = append(sw.qfree, q)
		}
		ops := sw.takeLocked()
		last := sw.pending == 0
		nodes, pending := len(sw.f.Nodes), sw.pending
		sw.mu.Unlock()
		if sw.progress != nil {
			sw.progress(nodes, pending)
		}
		for _, o := range batch {
			sw.s.release(o) // handle's reference
		}
		clear(batch)
		sw.p.mu.Lock()
		sw.p.send = append(sw.p.send, ops...)
		sw.p.stop = last
		sw.p.mu.Unlock()
		wake(sw.p.swake)
		if last {
			close(sw.done)
			return
		}
	}
}

type dnode struct {
	n       *topo.Node
	path    []uint8
	key     destKey
	queried [4]uint64 // PortInfo asked, a bit per port (ports 0..254)
}

// newQuery returns a zeroed query from the sweep's slab. sw.mu is held.
func (sw *sweep) newQuery() *query {
	if n := len(sw.qfree); n > 0 {
		q := sw.qfree[n-1]
		sw.qfree = sw.qfree[:n-1]
		q.sw = sw
		return q
	}
	if len(sw.qslab) == 0 {
		sw.qslab = make([]query, 1024)
	}
	q := &sw.qslab[0]
	sw.qslab = sw.qslab[1:]
	q.sw = sw
	return q
}

// newPorts returns n zeroed ports from the sweep's slab. sw.mu is held.
func (sw *sweep) newPorts(n int) []topo.Port {
	if len(sw.pslab) < n {
		sw.pslab = make([]topo.Port, max(n, 1024))
	}
	p := sw.pslab[:n:n]
	sw.pslab = sw.pslab[n:]
	return p
}

// extend returns path with port appended, in new memory from the sweep's
// slab. sw.mu is held.
func (sw *sweep) extend(path []uint8, port uint8) []uint8 {
	n := len(path) + 1
	if len(sw.pathSlab) < n {
		sw.pathSlab = make([]uint8, max(n, 16<<10))
	}
	p := sw.pathSlab[:n:n]
	sw.pathSlab = sw.pathSlab[n:]
	copy(p, path)
	p[n-1] = port
	return p
}

type query struct {
	sw     *sweep
	path   []uint8 // the route the SMP takes
	node   *dnode  // nil for a NodeInfo probe of a new route
	parent *dnode  // probe: the node and port it leaves from
	pport  uint8
	port   uint8 // PortInfo
}

// probeNode queues a NodeInfo on a new route. sw.mu is held.
func (sw *sweep) probeNode(path []uint8, parent *dnode, pport uint8) {
	q := sw.newQuery()
	q.path, q.parent, q.pport = path, parent, pport
	sw.queueOp(q, smp.AttrNodeInfo, 0, Target{Kind: ByDR, Path: path}.key())
}

// queueOp builds an SMP op for q. sw.mu is held.
func (sw *sweep) queueOp(q *query, attr uint16, mod uint32, key destKey) {
	t := Target{Kind: ByDR, Path: q.path}
	o, err := sw.s.smpOp(context.Background(), t, mad.MethodGet, attr, mod, nil, sw.c)
	if err != nil {
		sw.errs = append(sw.errs, TargetError{Path: t.String(), Err: err})
		return
	}
	o.key = key
	o.cb = handle
	o.ctx = q
	sw.pending++
	sw.mads++
	sw.queue = append(sw.queue, o)
}

func (sw *sweep) takeLocked() []*op {
	ops := sw.queue
	sw.queue = nil
	return ops
}

// handle is every sweep op's completion callback, on whichever goroutine
// completes the op: it hands the op, kept past the callback, to the
// sweep's handler.
func handle(o *op) {
	sw := o.ctx.(*query).sw
	o.refs.Add(1)
	sw.p.mu.Lock()
	sw.p.done = append(sw.p.done, o)
	sw.p.mu.Unlock()
	wake(sw.p.hwake)
}

func (sw *sweep) handleLocked(q *query, o *op) {
	err := o.result()
	if err == nil && o.rn < mad.Size {
		err = fmt.Errorf("response: %w", mad.ErrTruncated)
	}
	if err == nil {
		err = o.madStatus()
	}
	if err != nil {
		sw.errs = append(sw.errs, TargetError{Path: Target{Kind: ByDR, Path: q.path}.String(), Err: err})
		return
	}
	data := smp.Data(o.resp[:])
	switch o.attrID {
	case smp.AttrNodeInfo:
		var ni smp.NodeInfo
		if err := ni.UnmarshalBinary(data); err != nil {
			sw.errs = append(sw.errs, TargetError{Path: Target{Kind: ByDR, Path: q.path}.String(), Err: err})
			return
		}
		sw.nodeInfo(q, &ni)
	case smp.AttrNodeDescription:
		var nd smp.NodeDescription
		if nd.UnmarshalBinary(data) == nil {
			q.node.n.Desc = nd.NodeString
		}
	case smp.AttrSwitchInfo:
		var si smp.SwitchInfo
		if si.UnmarshalBinary(data) == nil {
			q.node.n.EnhancedPort0 = si.EnhancedPort0
		}
	case smp.AttrPortInfo:
		var pi smp.PortInfo
		if err := pi.UnmarshalLink(data); err != nil {
			sw.errs = append(sw.errs, TargetError{Path: Target{Kind: ByDR, Path: q.path}.String(), Err: err})
			return
		}
		sw.portInfo(q, &pi)
	}
}

func (sw *sweep) nodeInfo(q *query, ni *smp.NodeInfo) {
	d, _ := sw.nodes.Get(ni.NodeGUID)
	isNew := d == nil
	if isNew {
		n := &topo.Node{
			ID:       topo.NodeIDFor(topo.NodeType(ni.NodeType), ni.NodeGUID),
			Type:     topo.NodeType(ni.NodeType),
			NumPorts: int(ni.NumPorts),
			GUID:     ni.NodeGUID,
			SysGUID:  ni.SystemImageGUID,
			VendorID: ni.VendorID,
			DeviceID: ni.DeviceID,
			Revision: ni.Revision,
			Ports:    make([]*topo.Port, int(ni.NumPorts)+1),
		}
		if len(sw.nslab) == 0 {
			sw.nslab = make([]dnode, 256)
		}
		d = &sw.nslab[0]
		sw.nslab = sw.nslab[1:]
		d.n, d.path, d.key = n, q.path, guidKey(ni.NodeGUID)
		if n.Type == topo.Switch {
			ports := sw.newPorts(len(n.Ports))
			for i := range n.Ports {
				ports[i] = topo.Port{Node: n, Num: i, GUID: ni.PortGUID}
				n.Ports[i] = &ports[i]
			}
		}
		sw.nodes.Set(ni.NodeGUID, d)
		sw.f.Nodes = append(sw.f.Nodes, n)
		sw.paths.Set(ni.NodeGUID, q.path)
	}
	lp := int(ni.LocalPortNum)
	if lp >= len(d.n.Ports) {
		sw.errs = append(sw.errs, TargetError{Path: Target{Kind: ByDR, Path: q.path}.String(),
			Err: fmt.Errorf("NodeInfo: LocalPortNum %d of %d ports", lp, ni.NumPorts)})
		return
	}
	port := d.n.Ports[lp]
	if port == nil {
		port = &sw.newPorts(1)[0]
		*port = topo.Port{Node: d.n, Num: lp, GUID: ni.PortGUID}
		d.n.Ports[lp] = port
	}
	if _, ok := sw.paths.Get(ni.PortGUID); !ok {
		sw.paths.Set(ni.PortGUID, q.path)
	}
	if len(q.path) == 1 {
		sw.originPort = lp
	}
	if q.parent != nil {
		if pp := q.parent.n.Ports[q.pport]; pp != nil && pp.Remote == nil && port.Remote == nil {
			pp.Remote, port.Remote = port, pp
		}
	}
	if isNew {
		sw.queueOp(sw.nodeQuery(d, d.path, 0), smp.AttrNodeDescription, 0, d.key)
		if d.n.Type == topo.Switch {
			sw.queueOp(sw.nodeQuery(d, d.path, 0), smp.AttrSwitchInfo, 0, d.key)
			for p := 0; p <= d.n.NumPorts; p++ {
				sw.queryPort(d, uint8(p), d.path)
			}
			return
		}
	}
	if d.n.Type != topo.Switch {
		sw.queryPort(d, uint8(lp), q.path)
	}
}

// queryPort queues the PortInfo of port p of d, once, through path.
func (sw *sweep) queryPort(d *dnode, p uint8, path []uint8) {
	if d.queried[p/64]&(1<<(p%64)) != 0 {
		return
	}
	d.queried[p/64] |= 1 << (p % 64)
	sw.queueOp(sw.nodeQuery(d, path, p), smp.AttrPortInfo, uint32(p), d.key)
}

// nodeQuery returns a query of a known node. sw.mu is held.
func (sw *sweep) nodeQuery(d *dnode, path []uint8, port uint8) *query {
	q := sw.newQuery()
	q.path, q.node, q.port = path, d, port
	return q
}

func (sw *sweep) portInfo(q *query, pi *smp.PortInfo) {
	n := q.node.n
	port := n.Ports[q.port]
	if port == nil {
		port = &sw.newPorts(1)[0]
		*port = topo.Port{Node: n, Num: int(q.port)}
		n.Ports[q.port] = port
	}
	if n.Type != topo.Switch || q.port == 0 {
		port.LID, port.LMC = pi.LID, pi.LMC
	}
	port.WidthEnabled, port.WidthActive = pi.LinkWidthEnabled, pi.LinkWidthActive
	port.SpeedEnabled, port.SpeedActive = pi.LinkSpeedEnabled, pi.LinkSpeedActive
	port.SpeedExtEnabled, port.SpeedExtActive = pi.LinkSpeedExtEnabled, pi.LinkSpeedExtActive
	port.State, port.PhysState = pi.PortState, pi.PortPhysicalState
	port.CapMask = pi.CapabilityMask

	linked := pi.PortState >= smp.PortStateInit || pi.PortPhysicalState == smp.PhysStateLinkUp
	if !linked || port.Remote != nil || len(q.path)-1 >= sw.maxHops {
		return
	}
	switch {
	case n.Type == topo.Switch && q.port > 0:
	case n.Type != topo.Switch && len(q.path) == 1: // the local CA's port
	default:
		return
	}
	sw.probeNode(sw.extend(q.node.path, q.port), q.node, q.port)
}

// finish puts a completed sweep in the form ibnetdiscover gives it: nodes
// in the order libibnetdisc finds them (breadth first from the local node,
// each node's ports in ascending order, through switches only), the local
// port as Origin, and extended speeds cleared where the node does not
// advertise them (PortInfo.CapabilityMask bit 14, read from port 0 on a
// switch), as ibnetdiscover ignores those bits then.
func finish(f *topo.Fabric, originPort int) {
	origin := f.Nodes[0]
	if p := origin.EndPort(originPort); p != nil {
		f.Origin = p
	} else if originPort < len(origin.Ports) {
		f.Origin = origin.Ports[originPort]
	}
	seen := make(map[*topo.Node]bool, len(f.Nodes))
	order := make([]*topo.Node, 0, len(f.Nodes))
	seen[origin] = true
	order = append(order, origin)
	for i := 0; i < len(order); i++ {
		n := order[i]
		if n.Type != topo.Switch && n != origin {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || seen[p.Remote.Node] {
				continue
			}
			if n == origin && n.Type != topo.Switch && p.Num != originPort {
				continue
			}
			seen[p.Remote.Node] = true
			order = append(order, p.Remote.Node)
		}
	}
	for _, n := range f.Nodes {
		if !seen[n] {
			order = append(order, n)
		}
	}
	f.Nodes = order

	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			capPort := p
			if n.Type == topo.Switch && n.Ports[0] != nil {
				capPort = n.Ports[0]
			}
			if capPort.CapMask&smp.CapIsExtendedSpeedsSupported == 0 {
				p.SpeedExtActive = 0
			}
		}
	}
}
