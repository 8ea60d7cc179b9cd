package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/ibscript/ibscript/fabric"
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
	// SwitchRead, when set, is called once for each switch the sweep
	// finds, as soon as the PortInfo of every one of its ports (0 to
	// NumPorts) has been answered: the node's port states, widths,
	// speeds and port 0's LID are then set, its links (Port.Remote)
	// perhaps not all yet; path is the directed route the sweep reads it
	// through. It runs on the sweep's goroutine with the sweep's state
	// locked: it must return quickly, read n only during the call (the
	// sweep goes on filling it in) and never call the Session itself; it
	// may start goroutines that do. A caller uses it to start its own
	// queries of the switch while the sweep goes on (the exporter reads
	// the counters of a switch's ports while the rest of the fabric is
	// still being discovered). A switch whose PortInfos did not all
	// answer is not passed.
	SwitchRead func(n *topo.Node, path []uint8)
	// Reference is the topology a failed route is named against (a
	// topology file or snapshot the caller loaded): an error on a route
	// says which node and port it leaves from and what Reference had
	// cabled there. Nil: the Session's last discovery, if any.
	Reference *topo.Fabric
	// MergeSameGUID takes a node GUID met again as the node first met
	// under it, whatever else its answer says, as libibnetdisc does (the
	// infiniband-diags tools' view of a duplicate node GUID): that node is
	// not read again, and the port the GUID answered at is linked to the
	// port it was reached from; the discovery has no error for it. Unset,
	// such an answer is ErrInconsistent, naming both routes: a duplicate
	// GUID is the fault an admin looks for (ibscript discover, the plans).
	MergeSameGUID bool
}

// ErrInconsistent is wrapped by a discovery error when an answer
// contradicts what the sweep already knew (a node GUID answering as
// another kind of node, a port beyond NumPorts, a link whose two ends
// name different partners) or two reads of the same route disagree. Such
// an answer is reported and never turned into topology.
var ErrInconsistent = errors.New("inconsistent answer")

// sweepPasses is how many times a sweep asks for a target: a query that
// failed (after its own retries) is asked again once the pass that
// missed it is over, as ibdiagnet goes back for what it missed.
const sweepPasses = 4

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
	// (fabric.Caps.Retransmits); other traffic on the session in the meantime is
	// included.
	Retransmits uint64
	// Recovered counts the queries that failed a pass of the sweep and
	// were answered when it went back for them.
	Recovered int

	paths *intmap.Map[[]uint8] // node and port GUIDs -> directed route; read-only once done
	// routes, of a merged planarized discovery (DiscoverPlanes), are
	// every plane's routes; ownCA and own are the session's own plane
	// port (own -1: none walked).
	routes *intmap.Map[PlaneRoute]
	ownCA  string
	own    int
	fab    fabric.Fabric // the fabric the plane ports are opened on
}

// Path returns the directed route (smpquery -D convention) through which
// the sweep reached the node or port with the given GUID, from the
// session's port. A merged planarized discovery answers for the nodes
// reached from the session's own plane port; Route has the others.
func (d *Discovery) Path(guid uint64) ([]uint8, bool) {
	if d.routes != nil {
		r, ok := d.routes.Get(guid)
		if !ok || r.PortNum != d.own || r.CAName != d.ownCA {
			return nil, false
		}
		return r.Path, true
	}
	if d.paths == nil {
		return nil, false
	}
	return d.paths.Get(guid)
}

// Target returns a directed-route target for a node or port GUID. From a
// merged planarized discovery, a node of another plane's target is its
// Route from that plane's port: the Session sends it, and sweeps it, from
// a session of its own opened on that port for the call.
func (d *Discovery) Target(guid uint64) (Target, bool) {
	if p, ok := d.Path(guid); ok {
		return Target{Kind: ByDR, Path: p}, true
	}
	if d.routes == nil {
		return Target{}, false
	}
	r, ok := d.routes.Get(guid)
	if !ok {
		return Target{}, false
	}
	return Target{Kind: ByDR, Path: r.Path, Via: &Via{Fabric: d.fab, CAName: r.CAName, PortNum: r.PortNum}}, true
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
// (PhysState LinkUp, as libibnetdisc follows it) to its neighbour. Nodes
// are deduplicated by node GUID; links are recorded at both ends. The
// queries are pipelined: many routes in flight (the Session's Window), one
// SMP per node at a time once its GUID is known.
//
// Answers are checked before they become topology: a route's NodeInfo
// must agree with what the sweep knows, and where the transport does not
// say its answers arrive intact (fabric.Caps.Intact: the simulator
// injecting corruption, a Transport that does not tell) every answer
// (NodeInfo, NodeDescription, SwitchInfo, PortInfo, MlnxExtPortInfo) is
// read until two reads in a row agree (verifyReads at most, then an
// *UnverifiedError, asked again in the next pass); a PortInfo with
// values no port gives is asked again; the two ends of every link must agree on the active width
// and speed (both ends are read again once, then an inconsistency).
//
// A failed query is asked again once the pass that missed it is over (up
// to sweepPasses times), then recorded in Discovery.Errors; the sweep goes on;
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
		merge:    o.MergeSameGUID,
		reread:   s.intact == nil || !s.intact(),
		done:     make(chan struct{}),
		f:        &topo.Fabric{},
		paths:    new(intmap.Map[[]uint8]),
		start:    time.Now(),
		progress: o.Progress,
		onSwitch: o.SwitchRead,
		ref:      o.Reference,
		refName:  "the reference topology",
	}
	if sw.ref == nil {
		if last := s.LastDiscovery(); last != nil {
			sw.ref, sw.refName = last.Fabric, "the last discovery"
		}
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
	sw.mu.Lock()
	sw.finishLinks()
	sw.mu.Unlock()
	for _, te := range sw.errs {
		if errors.Is(te.Err, ErrMADBudget) {
			return nil, fmt.Errorf("engine: discover: %w", te)
		}
		// The transport lost its peer (ibsim exited): one error, no
		// partial topology.
		if pg := (*fabric.PeerGoneError)(nil); errors.As(te.Err, &pg) {
			return nil, fmt.Errorf("engine: discover: %w", pg)
		}
	}
	d := &Discovery{Fabric: sw.f, Errors: sw.errs, MADs: sw.mads, Elapsed: time.Since(sw.start), paths: sw.paths, Recovered: sw.recovered}
	rt1, _ := s.Retransmits()
	d.Retransmits = rt1 - rt0
	if len(sw.f.Nodes) > 0 {
		finish(sw.f, sw.originPort, sw.paths)
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
	// reread: answers may arrive damaged (the transport's Caps().Intact
	// is nil or false), so every answer is read until two reads in a row
	// agree.
	reread bool
	merge  bool          // DiscoverOptions.MergeSameGUID
	done   chan struct{} // closed by the handler when no query is left
	start  time.Time
	p      pipe
	// progress is DiscoverOptions.Progress, onSwitch SwitchRead.
	progress func(nodes, pending int)
	onSwitch func(n *topo.Node, path []uint8)

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
	// missed are the queries that failed this pass, asked again when
	// it is over; recovered counts those a later pass answered.
	missed    []query
	recovered int
	// linksChecked: the ends of every link were compared (checkLinks).
	linksChecked bool
	// ref names what failed routes were expected to reach (refName);
	// refNodes indexes it by GUID, built on the first error.
	ref      *topo.Fabric
	refName  string
	refNodes map[uint64]*topo.Node
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
		if sw.pending == 0 && len(sw.missed) > 0 && !sw.canceled {
			sw.repass()
		}
		if sw.pending == 0 && !sw.linksChecked && !sw.canceled {
			sw.checkLinks()
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
	// answered is the PortInfos answered (a bit per port), left how many
	// of a switch's are still to come (DiscoverOptions.SwitchRead).
	answered [4]uint64
	left     int
	// held is the ports whose probe the hop limit held back (a bit per
	// port): probed when a shorter route to the node is found.
	held [4]uint64
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
	// what queueOp asked, to ask it again in a later pass
	attr uint16
	mod  uint32
	key  destKey
	pass uint8 // 0 on the sweep's first pass
	// where answers may be damaged (sweep.reread): reads of the query
	// so far, and the last answer's status and attribute data
	reads      uint8
	prevStatus uint16
	prev       [mad.SMPDataLen]byte
}

// repass asks again for every query the pass that just ended missed.
// sw.mu is held.
func (sw *sweep) repass() {
	missed := sw.missed
	sw.missed = nil
	for i := range missed {
		q := sw.newQuery()
		*q = missed[i]
		q.sw = sw
		q.pass++
		q.reads = 0
		sw.queueOp(q, q.attr, q.mod, q.key)
	}
}

// again queues q's query anew (a further NodeInfo read of its route).
// sw.mu is held.
func (sw *sweep) again(q *query) {
	nq := sw.newQuery()
	*nq = *q
	nq.sw = sw
	sw.queueOp(nq, q.attr, q.mod, q.key)
}

// fail records a failed query: asked again in the next pass while passes
// are left, else an error naming the target. sw.mu is held.
func (sw *sweep) fail(q *query, err error) {
	if q.pass+1 < sweepPasses && !errors.Is(err, ErrInconsistent) && !errors.Is(err, ErrMADBudget) && !errors.Is(err, fabric.ErrPeerGone) {
		sw.missed = append(sw.missed, *q)
		return
	}
	sw.errs = append(sw.errs, sw.targetError(q, err))
}

// inconsistent records an answer that contradicts the sweep. sw.mu is
// held.
func (sw *sweep) inconsistent(q *query, format string, args ...any) {
	sw.errs = append(sw.errs, sw.targetError(q, fmt.Errorf("%w: "+format, append([]any{ErrInconsistent}, args...)...)))
}

// targetError names q's target: its route, and where that leads when the
// sweep knows (the node it asks, or the port a probe leaves from and what
// the reference had cabled there). sw.mu is held.
func (sw *sweep) targetError(q *query, err error) TargetError {
	te := TargetError{Path: Target{Kind: ByDR, Path: q.path}.String(), Err: err}
	switch {
	case q.node != nil:
		te.Where = "at " + nodeName(q.node.n)
	case q.parent != nil:
		te.Where = fmt.Sprintf("behind %s port %d", nodeName(q.parent.n), q.pport)
		if sw.ref != nil {
			if sw.refNodes == nil {
				sw.refNodes = make(map[uint64]*topo.Node, len(sw.ref.Nodes))
				for _, n := range sw.ref.Nodes {
					sw.refNodes[n.GUID] = n
				}
			}
			if rn := sw.refNodes[q.parent.n.GUID]; rn != nil && int(q.pport) < len(rn.Ports) {
				switch rp := rn.Ports[q.pport]; {
				case rp != nil && rp.Remote != nil:
					te.Where += fmt.Sprintf(", where %s had %s port %d", sw.refName, nodeName(rp.Remote.Node), rp.Remote.Num)
				default:
					te.Where += fmt.Sprintf(", where %s had no cable", sw.refName)
				}
			}
		}
	}
	return te
}

// nodeName names a node in messages: "Switch1" (S-0002c90300000001).
func nodeName(n *topo.Node) string {
	return fmt.Sprintf("%q (%s)", n.Desc, n.ID)
}

// probeNode queues a NodeInfo on a new route. sw.mu is held.
func (sw *sweep) probeNode(path []uint8, parent *dnode, pport uint8) {
	q := sw.newQuery()
	q.path, q.parent, q.pport = path, parent, pport
	sw.queueOp(q, smp.AttrNodeInfo, 0, Target{Kind: ByDR, Path: path}.key())
}

// queueOp builds an SMP op for q. sw.mu is held.
func (sw *sweep) queueOp(q *query, attr uint16, mod uint32, key destKey) {
	q.attr, q.mod, q.key = attr, mod, key
	t := Target{Kind: ByDR, Path: q.path}
	o, err := sw.s.smpOp(context.Background(), t, mad.MethodGet, attr, mod, nil, sw.c)
	if err != nil {
		sw.errs = append(sw.errs, sw.targetError(q, err))
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
	if err == nil && sw.reread {
		// Where answers may be damaged on their way, every answer is
		// read until two in a row agree (its status and its data): one
		// damaged answer never becomes a node, a link, a LID or a
		// description.
		st := mad.StatusOf(o.resp[:o.rn])
		data := smp.Data(o.resp[:])
		same := q.reads > 0 && st == q.prevStatus && bytes.Equal(data, q.prev[:])
		switch {
		case same:
		case q.reads+1 < verifyReads:
			q.reads++
			q.prevStatus = st
			copy(q.prev[:], data)
			sw.again(q)
			return
		default:
			if o.attrID != smp.AttrMlnxExtPortInfo {
				sw.fail(q, &UnverifiedError{Class: o.class, AttrID: o.attrID, AttrMod: o.attrMod, Target: Target{Kind: ByDR, Path: q.path}, Reads: int(q.reads) + 1})
			}
			return
		}
	}
	if err == nil {
		err = o.madStatus()
	}
	if err != nil {
		// A node that does not answer MlnxExtPortInfo after all is
		// one without FDR10, as libibnetdisc takes it: no error.
		if o.attrID != smp.AttrMlnxExtPortInfo {
			sw.fail(q, err)
		}
		return
	}
	if q.pass > 0 {
		sw.recovered++
	}
	data := smp.Data(o.resp[:])
	switch o.attrID {
	case smp.AttrNodeInfo:
		var ni smp.NodeInfo
		if err := ni.UnmarshalBinary(data); err != nil {
			sw.fail(q, err)
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
	case smp.AttrMlnxExtPortInfo:
		var m smp.MlnxExtPortInfo
		if m.UnmarshalBinary(data) == nil {
			if p := q.node.n.Ports[q.port]; p != nil {
				p.MlnxSpeedSupported, p.MlnxSpeedActive = m.LinkSpeedSupported, m.LinkSpeedActive
			}
		}
	case smp.AttrPortInfo:
		var pi smp.PortInfo
		if err := pi.UnmarshalLink(data); err != nil {
			sw.fail(q, err)
			return
		}
		// A switch's port 0 has no link: only external ports checked.
		if q.node.n.Type != topo.Switch || q.port != 0 {
			if err := implausible(&pi); err != nil {
				// Asked again in the next pass, an error after the last.
				sw.fail(q, fmt.Errorf("PortInfo port %d: %w", q.port, err))
				return
			}
		}
		sw.portInfo(q, &pi)
	}
}

// implausible reports PortInfo values no port gives: a state or physical
// state out of range, a LID outside the unicast range, and on a port that is up (Init or above) an active
// width or speed that is not one of the defined single values. Such an
// answer was damaged on its way.
func implausible(pi *smp.PortInfo) error {
	single := func(v uint8) bool { return v != 0 && v&(v-1) == 0 }
	switch {
	case pi.PortState < 1 || pi.PortState > 5:
		return fmt.Errorf("PortState %d out of range", pi.PortState)
	case pi.PortPhysicalState < 1 || pi.PortPhysicalState > 7:
		return fmt.Errorf("PortPhysicalState %d out of range", pi.PortPhysicalState)
	case pi.LID > 0xbfff:
		return fmt.Errorf("LID %#x is no unicast LID", pi.LID)
	case pi.PortState < smp.PortStateInit:
	case !single(pi.LinkWidthActive) || pi.LinkWidthActive > 16:
		return fmt.Errorf("LinkWidthActive %d is no width", pi.LinkWidthActive)
	case pi.LinkSpeedActive != 0 && (!single(pi.LinkSpeedActive) || pi.LinkSpeedActive > 4):
		return fmt.Errorf("LinkSpeedActive %d is no speed", pi.LinkSpeedActive)
	case pi.LinkSpeedExtActive != 0 && !single(pi.LinkSpeedExtActive):
		return fmt.Errorf("LinkSpeedExtActive %d is no speed", pi.LinkSpeedExtActive)
	}
	return nil
}

// checkLinks asks again for the PortInfo of both ends of every link whose
// ends disagree on the active width or speed (a link trains to one of
// each), once; when they still disagree, finishLinks reports it. sw.mu is
// held.
func (sw *sweep) checkLinks() {
	sw.linksChecked = true
	for _, n := range sw.f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil || !linkEndsDisagree(p, p.Remote) || p.Node.GUID > p.Remote.Node.GUID ||
				p.Node == p.Remote.Node && p.Num > p.Remote.Num {
				continue
			}
			for _, e := range []*topo.Port{p, p.Remote} {
				d, _ := sw.nodes.Get(e.Node.GUID)
				if d == nil {
					continue
				}
				q := sw.nodeQuery(d, d.path, uint8(e.Num))
				q.pass = sweepPasses - 1 // a failure now is final
				sw.queueOp(q, smp.AttrPortInfo, uint32(e.Num), d.key)
			}
		}
	}
}

// linkEndsDisagree reports whether the two ends of a link, both known up,
// give different active widths, or speeds where neither runs an extended
// speed.
func linkEndsDisagree(a, b *topo.Port) bool {
	if a.State < smp.PortStateInit || b.State < smp.PortStateInit {
		return false
	}
	return a.WidthActive != b.WidthActive ||
		a.SpeedExtActive == 0 && b.SpeedExtActive == 0 && a.SpeedActive != b.SpeedActive
}

// finishLinks reports the links whose ends still disagree after
// checkLinks. sw.mu is held.
func (sw *sweep) finishLinks() {
	for _, n := range sw.f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			r := p.Remote
			if !linkEndsDisagree(p, r) || n.GUID > r.Node.GUID || n == r.Node && p.Num > r.Num {
				continue
			}
			d, _ := sw.nodes.Get(n.GUID)
			if d == nil {
				continue
			}
			q := query{path: d.path, node: d}
			sw.inconsistent(&q, "the ends of the link %s port %d - %s port %d disagree: width %d/%d, speed %d/%d",
				nodeName(n), p.Num, nodeName(r.Node), r.Num, p.WidthActive, r.WidthActive, p.SpeedActive, r.SpeedActive)
		}
	}
}

func (sw *sweep) nodeInfo(q *query, ni *smp.NodeInfo) {
	d, _ := sw.nodes.Get(ni.NodeGUID)
	isNew := d == nil
	lp := int(ni.LocalPortNum)
	// What the answer says must agree with what the sweep knows before
	// any of it becomes topology.
	if lp > int(ni.NumPorts) || lp == 0 && topo.NodeType(ni.NodeType) != topo.Switch {
		sw.inconsistent(q, "NodeInfo: LocalPortNum %d of %d ports", lp, ni.NumPorts)
		return
	}
	if !isNew && !sw.merge {
		n := d.n
		if n.Type != topo.NodeType(ni.NodeType) || n.NumPorts != int(ni.NumPorts) || n.SysGUID != ni.SystemImageGUID {
			sw.inconsistent(q, "NodeInfo: node GUID 0x%016x answers as a %s with %d ports (system GUID 0x%016x), where %s is a %s with %d ports (system GUID 0x%016x)",
				ni.NodeGUID, topo.NodeType(ni.NodeType), ni.NumPorts, ni.SystemImageGUID,
				Target{Kind: ByDR, Path: d.path}, n.Type, n.NumPorts, n.SysGUID)
			return
		}
		if p := n.Ports[lp]; p != nil && p.GUID != ni.PortGUID {
			sw.inconsistent(q, "NodeInfo: port %d of node GUID 0x%016x has port GUID 0x%016x, where it had 0x%016x",
				lp, ni.NodeGUID, ni.PortGUID, p.GUID)
			return
		}
	}
	if q.parent != nil {
		pp := q.parent.n.Ports[q.pport]
		if pp != nil && pp.Remote != nil && (pp.Remote.Node.GUID != ni.NodeGUID || pp.Remote.Num != lp) {
			sw.inconsistent(q, "%s port %d leads to node GUID 0x%016x port %d, where it led to %s port %d",
				nodeName(q.parent.n), q.pport, ni.NodeGUID, lp, nodeName(pp.Remote.Node), pp.Remote.Num)
			return
		}
		if !isNew && !sw.merge {
			if p := d.n.Ports[lp]; p != nil && p.Remote != nil && p.Remote != pp {
				sw.inconsistent(q, "%s port %d is reached from %s port %d, where it is cabled to %s port %d",
					nodeName(d.n), lp, nodeName(q.parent.n), q.pport, nodeName(p.Remote.Node), p.Remote.Num)
				return
			}
		}
	}
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
	} else {
		sw.shorten(d, q.path)
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
			d.left = d.n.NumPorts + 1
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
	// The LinkSpeedExt*2 fields go above LinkSpeedExt's four bits (XDR 32)
	// until finish aggregates them with the capability masks of the node
	// (topo.AggExtSpeeds).
	port.SpeedExtEnabled = pi.LinkSpeedExtEnabled | pi.LinkSpeedExtEnabled2<<5
	port.SpeedExtActive = pi.LinkSpeedExtActive | pi.LinkSpeedExtActive2<<5
	port.State, port.PhysState = pi.PortState, pi.PortPhysicalState
	port.CapMask, port.CapMask2 = pi.CapabilityMask, pi.CapabilityMask2
	port.WidthSupported, port.SpeedSupported = pi.LinkWidthSupported, pi.LinkSpeedSupported
	port.SpeedExtSupported = pi.LinkSpeedExtSupported | pi.LinkSpeedExtSupported2<<5
	port.HOQLife, port.VLStallCount, port.VLCap = pi.HOQLife, pi.VLStallCount, pi.VLCap
	if !sw.linksChecked && mlnxEPIWanted(n, pi.PortPhysicalState, pi.LinkSpeedActive) {
		sw.queueOp(sw.nodeQuery(q.node, q.path, q.port), smp.AttrMlnxExtPortInfo, uint32(q.port), q.node.key)
	}
	if d := q.node; n.Type == topo.Switch && d.answered[q.port/64]&(1<<(q.port%64)) == 0 {
		d.answered[q.port/64] |= 1 << (q.port % 64)
		if d.left--; d.left == 0 && sw.onSwitch != nil {
			sw.onSwitch(n, d.path)
		}
	}

	// Linked as libibnetdisc reads it: PhysState LinkUp, whatever
	// PortState says (ibsim keeps a disabled port's PortState Active).
	linked := pi.PortPhysicalState == smp.PhysStateLinkUp
	if !linked || port.Remote != nil {
		return
	}
	switch {
	case n.Type == topo.Switch && q.port > 0:
	case n.Type != topo.Switch && len(q.path) == 1: // the local CA's port
	default:
		return
	}
	if len(q.node.path)-1 >= sw.maxHops {
		// The node's route so far is the first answer's, not always the
		// shortest: a shorter one found later probes the port (shorten).
		q.node.held[q.port/64] |= 1 << (q.port % 64)
		return
	}
	sw.probeNode(sw.extend(q.node.path, q.port), q.node, q.port)
}

// shorten takes path, a shorter route to the known node d than the one
// the sweep has, where a hop limit may have held back probes out of d's
// ports (answers come in any order: d was first answered by a longer
// route), and probes those ports the shorter route now lets it reach.
// sw.mu is held.
func (sw *sweep) shorten(d *dnode, path []uint8) {
	if sw.maxHops >= maxHops || len(path) >= len(d.path) {
		return
	}
	d.path = path
	if len(path)-1 >= sw.maxHops {
		return
	}
	for p := 0; p < len(d.n.Ports); p++ {
		if d.held[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		d.held[p/64] &^= 1 << (p % 64)
		if pt := d.n.Ports[p]; pt != nil && pt.Remote == nil {
			sw.probeNode(sw.extend(path, uint8(p)), d, uint8(p))
		}
	}
}

// mlnxEPIWanted reports whether libibnetdisc reads a port's
// MlnxExtPortInfo after its PortInfo: a device ID that has the attribute,
// the port LinkUp at QDR. (libibnetdisc also wants no extended speed
// active; finish drops what was read where one is.)
func mlnxEPIWanted(n *topo.Node, phys, speed uint8) bool {
	return phys == smp.PhysStateLinkUp && speed == 4 && smp.MlnxExtPortInfoSupported(n.VendorID, n.DeviceID)
}

// finish puts a completed sweep in the form ibnetdiscover gives it: nodes
// in the order libibnetdisc finds them, the local port as Origin, and
// extended speeds aggregated as libibnetdisc's ibnd_get_agg_linkspeedext
// does with the capability masks of the port (port 0 on a switch):
// cleared where the node does not advertise extended speeds, XDR where it
// advertises IsExtendedSpeeds2Supported (topo.Port.AggExtSpeeds).
//
// libibnetdisc finds nodes through one queue of SMPs answered in turn
// (ibsim answers in order): a node's NodeInfo queues its PortInfos (a
// switch's port 0 first, which queues the others), and each PortInfo of a
// port with a link queues the NodeInfo behind it, through switches only
// and the local port. Where it reads MlnxExtPortInfo first (mlnxEPIWanted,
// no extended speed), that answer queues the NodeInfo instead, one turn
// later: a neighbour behind such a port is found after those behind the
// node's other ports. finish replays that queue on the finished sweep.
// The directed route of each node and port found that way replaces in
// paths the one the concurrent sweep reached it through first: the route
// libibnetdisc reaches it by, which dump_fts prints and every later query
// by GUID follows.
func finish(f *topo.Fabric, originPort int, paths *intmap.Map[[]uint8]) {
	origin := f.Nodes[0]
	if p := origin.EndPort(originPort); p != nil {
		f.Origin = p
	} else if originPort < len(origin.Ports) {
		f.Origin = origin.Ports[originPort]
	}
	finishSpeeds(f)
	o := &replayOrder{
		seen:   make(map[*topo.Node]bool, len(f.Nodes)),
		order:  make([]*topo.Node, 0, len(f.Nodes)),
		route:  make(map[*topo.Node][]uint8, len(f.Nodes)),
		ported: make(map[uint64]bool, len(f.Nodes)),
		buf:    make([]uint8, 0, 8*len(f.Nodes)),
		paths:  paths,
	}
	o.seen[origin] = true
	o.order = append(o.order, origin)
	o.route[origin] = o.newRoute([]uint8{0}, -1)
	paths.Set(origin.GUID, o.route[origin])
	if f.Origin != nil {
		o.ported[f.Origin.GUID] = true
		paths.Set(f.Origin.GUID, o.route[origin])
	}
	// The queue holds the SMPs that lead somewhere (a NodeDescription
	// or SwitchInfo queues nothing): the NodeInfo behind port of n
	// (turnNI), a switch's port 0 PortInfo (turnPI0: it queues the
	// others), a port's PortInfo (turnPI) and MlnxExtPortInfo (turnMEPI).
	const (
		turnNI = iota
		turnPI0
		turnPI
		turnMEPI
	)
	type turn struct {
		kind int
		n    *topo.Node
		port int
	}
	queue := []turn{{kind: turnPI, n: origin, port: originPort}}
	if origin.Type == topo.Switch {
		queue[0] = turn{kind: turnPI0, n: origin}
	}
	for len(queue) > 0 {
		t := queue[0]
		queue = queue[1:]
		n := t.n
		if t.kind == turnPI0 {
			for i := 1; i < len(n.Ports); i++ {
				queue = append(queue, turn{kind: turnPI, n: n, port: i})
			}
			continue
		}
		if t.port >= len(n.Ports) || n.Ports[t.port] == nil || n.Ports[t.port].Remote == nil {
			continue
		}
		p := n.Ports[t.port]
		switch {
		case t.kind == turnNI:
			if r := o.reach(n, p); r != nil && r.Type == topo.Switch {
				queue = append(queue, turn{kind: turnPI0, n: r})
			}
		case t.kind == turnPI && p.SpeedExtActive == 0 && mlnxEPIWanted(n, p.PhysState, p.SpeedActive):
			queue = append(queue, turn{kind: turnMEPI, n: n, port: t.port})
		case n.Type == topo.Switch || n == origin && p.Num == originPort:
			queue = append(queue, turn{kind: turnNI, n: n, port: t.port})
		}
	}
	for _, n := range f.Nodes {
		if !o.seen[n] {
			o.order = append(o.order, n)
		}
	}
	f.Nodes = o.order
}

// finishSpeeds aggregates the extended speeds as libibnetdisc does
// (topo.Fabric.AggExtSpeeds: none where the node does not advertise them,
// XDR where it does), and keeps Mellanox's extended speeds only where they
// were read.
func finishSpeeds(f *topo.Fabric) {
	f.AggExtSpeeds()
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && (p.SpeedExtActive != 0 || !mlnxEPIWanted(n, p.PhysState, p.SpeedActive)) {
				p.MlnxSpeedSupported, p.MlnxSpeedActive = 0, 0
			}
		}
	}
}

// replayOrder is what finish's replay of the sequential sweep builds: the
// nodes in the order it finds them, the directed route of each node and
// port (also set in paths), routes sharing one buffer.
type replayOrder struct {
	seen   map[*topo.Node]bool
	order  []*topo.Node
	route  map[*topo.Node][]uint8 // by node of order
	ported map[uint64]bool        // port GUIDs given their route
	buf    []uint8
	paths  *intmap.Map[[]uint8]
}

// newRoute is parent extended by port (none if port < 0), in o's buffer.
func (o *replayOrder) newRoute(parent []uint8, port int) []uint8 {
	if cap(o.buf)-len(o.buf) < len(parent)+1 {
		o.buf = make([]uint8, 0, max(4096, 2*(len(parent)+1)))
	}
	start := len(o.buf)
	o.buf = append(o.buf, parent...)
	if port >= 0 {
		o.buf = append(o.buf, uint8(port))
	}
	return o.buf[start:len(o.buf):len(o.buf)]
}

// reach is the NodeInfo read behind port p of n: the remote port and its
// node get their route if they have none, and the node, if new, is
// returned (nil if seen before).
func (o *replayOrder) reach(n *topo.Node, p *topo.Port) *topo.Node {
	r := p.Remote
	if o.seen[r.Node] && o.ported[r.GUID] {
		return nil
	}
	rt := o.newRoute(o.route[n], p.Num)
	if !o.ported[r.GUID] {
		o.ported[r.GUID] = true
		o.paths.Set(r.GUID, rt)
	}
	if o.seen[r.Node] {
		return nil
	}
	o.seen[r.Node] = true
	o.order = append(o.order, r.Node)
	o.route[r.Node] = rt
	o.paths.Set(r.Node.GUID, rt)
	return r.Node
}
