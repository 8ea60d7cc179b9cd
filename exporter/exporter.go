// Package exporter keeps a fabric's port counters fresh for Prometheus:
// it sweeps the fabric in the background with an engine.Session
// (discovery on a slow interval, the counters of every linked switch port
// on every interval, all concurrently), keeps the last complete sweep as
// an immutable Snapshot, and serves each scrape from one Snapshot only
// (Exporter is a prometheus.Collector).
//
// Metric names and labels follow treydock/infiniband_exporter's, so its
// dashboards and alert rules work unchanged (Names lists them).
package exporter

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// Defaults of Options.
const (
	DefaultInterval         = 10 * time.Second
	DefaultDiscoverInterval = 5 * time.Minute
)

// Options tune an Exporter. A nil *Options means defaults.
type Options struct {
	// Interval is the time between the starts of two counter sweeps
	// (DefaultInterval when 0).
	Interval time.Duration
	// DiscoverInterval is how often the topology is discovered again
	// (DefaultDiscoverInterval when 0); the first sweep always discovers,
	// and so does a sweep after a failed discovery.
	DiscoverInterval time.Duration
	// Names renames nodes as a node-name-map does (topo.ParseNameMap).
	Names map[uint64]string
	// Logger gets one line per failed sweep; nil discards.
	Logger *slog.Logger
	// HCA adds the ports of channel adapters (and routers) to the sweep,
	// served as treydock/infiniband_exporter's infiniband_hca_* series;
	// by default only switch ports are swept.
	HCA bool
	// Details adds PortRcvErrorDetails and PortXmitDiscardDetails of every
	// swept switch port (two more queries per port, four instead of two);
	// HCADetails does the same for CA ports (with HCA). Both are off by
	// default, as treydock/infiniband_exporter's
	// --collector.switch.rcv-err-details and --collector.hca.rcv-err-details.
	Details    bool
	HCADetails bool
	// XmitWaitTick is the length of one PortXmitWait tick in symbol times
	// (the time one byte takes on one lane: 4 ns at SDR), the
	// PortSamplesControl.Tick encoding plus one; 1 when 0. See
	// PortSample.XmitWaitRatio.
	XmitWaitTick int
	// ResetSaturated clears, after each sweep, the PortCounters counters
	// the sweep found saturated (at the top of their width), and only
	// those: one PortCounters Set per port, CounterSelect (and
	// CounterSelect2 for PortXmitWait) naming them. The Sets go through
	// the Session, so they are refused on a production transport without
	// engine.Options.AllowSet and audited like every Set. QP1Dropped
	// (IBA 1.3) and the detail counters are shown saturated but never
	// reset. Off by default: the exporter never resets a counter unless
	// asked.
	ResetSaturated bool
	// Traps makes Run subscribe to the SM's traps (TrapNumbers) through
	// InformInfo (on a planarized port with Fabric, at every plane's SM:
	// engine.Session.PlaneSMLIDs) and act on each at once, besides DiscoverInterval: it
	// re-reads just the ports a trap names (a switch's ports for 128, the
	// port for 129-131 and 144, the switch port facing an endport out of
	// service for 65: their PortInfo, and the counters of those it
	// sweeps) and publishes a snapshot with them; a trap naming something
	// the topology does not hold, an endport in service (64) or a port
	// that came up makes a sweep with a new discovery instead. A
	// subscription the SA refuses (or one on a fabric without SA) is
	// logged; Run goes on without it.
	Traps bool
	// Reference is the topology the Snapshot's Topology compares each
	// discovery with (infiniband_topology_* series); nil: the first
	// discovery.
	Reference *topo.Fabric
	// NoSwitch serves no infiniband_switch_* series (treydock's
	// --no-collector.switch); the switches are still discovered and swept,
	// their errors still counted in the collector="switch" gauges.
	NoSwitch bool
	// NoSwitchBase and NoHCABase leave out the base series of switch (CA)
	// ports: the PortCountersExtended and PortCounters counters, the
	// transmit wait ratio, and the info, rate and uplink_info series
	// (treydock's --no-collector.switch.base-metrics and
	// --no-collector.hca.base-metrics, used with the rcv-err-details
	// flags to serve only the detail counters). Port state, width, speed
	// and rate from the discovery are still served.
	NoSwitchBase, NoHCABase bool
	// RunOnce labels the collector gauges as treydock's --exporter.runonce
	// does ("switch-runonce", "hca-runonce") and adds
	// infiniband_exporter_last_execution, for a textfile written once.
	RunOnce bool
	// Fabric is the fabric the Session's port was opened on
	// (host.Host.Fabric). When that port is a planarized CA's (its SMPs go
	// through another CA's port, fabric.PortAttr.SMIName: libibumad's
	// SMI/GSI pair), every plane is swept: each discovery walks every plane
	// port and merges the walks (engine.Session.DiscoverPlanes), the
	// counters of every plane's ports are read (through the GSI side, as
	// every GMP), a trap's re-read of a port on another plane goes out
	// through that plane's port (engine.Session.OnPort), and every port
	// series (and infiniband_link_info) gets a plane label: the port's
	// plane (topo.Port.Plane). Node series (info, rate, node errors) stay
	// one per node: a planarized CA is one node. Nil, or on any other
	// port: one walk, and the series and labels are those without it.
	Fabric fabric.Fabric
	// Settles is how many times, after a trap, Run discovers again while
	// cabled ports are Init or Armed, after 1 s, doubling (DefaultSettles
	// when 0: 1, 2, 4, 8 and 16 s, 31 s in all). A slow SM (one sharing a
	// loaded machine with its fabric's simulator) needs more.
	Settles int
}

// DefaultSettles is Options.Settles's default.
const DefaultSettles = 5

// After a trap, while the new discovery finds cabled ports in Init or
// Armed (the SM has not made them Active yet), Run discovers again after
// settleDelay, doubling it, at most Options.Settles times.
const settleDelay = time.Second

// transitional reports whether a cabled port of f is between Down and
// Active (Init, Armed).
func transitional(f *topo.Fabric) bool {
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && (p.State == smp.PortStateInit || p.State == smp.PortStateArmed) {
				return true
			}
		}
	}
	return false
}

// changedPorts counts the ports of switches in both a and b whose
// PortState differs, and the switches in one only (each a change a trap
// 128, 64 or 65 announces).
func changedPorts(a, b *topo.Fabric) int {
	old := map[uint64]*topo.Node{}
	for _, n := range a.Nodes {
		if n.Type == topo.Switch {
			old[n.GUID] = n
		}
	}
	changed := 0
	for _, n := range b.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		o := old[n.GUID]
		if o == nil {
			changed++
			continue
		}
		delete(old, n.GUID)
		for i := 1; i < len(n.Ports) && i < len(o.Ports); i++ {
			if p, q := n.Ports[i], o.Ports[i]; p != nil && q != nil && p.State != q.State {
				changed++
			}
		}
	}
	return changed + len(old)
}

// PortSample is what one sweep read of one port (a switch port, or a CA
// port with Options.HCA).
type PortSample struct {
	Port *topo.Port // the port; Port.Remote is its link partner
	// Ext holds the 64-bit data and packet counters when ExtErr is nil.
	Ext    perf.PortCountersExtended
	ExtErr error
	// PC holds the error counters and PortXmitWait when PCErr is nil.
	PC    perf.PortCounters
	PCErr error
	// Caps is the CapabilityMask of the switch PMA's ClassPortInfo, read
	// at each discovery; CapsErr says why it is unknown. It decides which
	// fields the PMA fills, as perfquery reads them: PortXmitWait only
	// with CapPortXmitWait, the extended unicast and multicast counters
	// only with CapExtendedWidth (else the NoIETF layout). Unknown: those
	// series are left out.
	Caps    uint16
	CapsErr error
	// Caps2 is the same ClassPortInfo's CapabilityMask2: with
	// Cap2AdditionalPortCounters, the error counters, PortXmitWait and
	// QP1Dropped are served from PortCountersExtended's 64-bit copies,
	// which do not saturate, as perfquery -x reads them.
	Caps2 uint32
	// RcvErr and Discard are the port's PortRcvErrorDetails and
	// PortXmitDiscardDetails when RcvErrErr and DiscardErr are nil (both
	// are errNotAsked without Options.Details or HCADetails).
	RcvErr     perf.PortRcvErrorDetails
	RcvErrErr  error
	Discard    perf.PortXmitDiscardDetails
	DiscardErr error
	// XmitWaitRatio is the fraction of the time since the previous sweep
	// the port had data to send and sent none (0..1), when XmitWaitOK:
	//
	//	ratio = ΔPortXmitWait × tick / Δt
	//	tick  = Options.XmitWaitTick × 8 / lane data rate (bits/s)
	//
	// where ΔPortXmitWait is the counter's growth between the two
	// sweeps, Δt the time between their ends, and the lane data rate
	// that of the port's active speed (2 Gb/s at SDR: a 4 ns tick). Not
	// OK on the first sweep of a port, when either read failed, the PMA
	// lacks CapPortXmitWait, the counter went back (a reset) or is
	// saturated, or the speed is unknown.
	XmitWaitRatio float64
	XmitWaitOK    bool
	// ReadAt is when the counters were read, when not the Snapshot's
	// Time (a port re-read after a trap).
	ReadAt time.Time
}

// sweepAttrs are the attributes a sweep reads of each port, in the order
// of its requests: the last two with Options.Details (HCADetails).
// PortCounters is left out where the PMA has Cap2AdditionalPortCounters
// (PortSample.readsPC): sweepAttrsNoPC.
var (
	sweepAttrs     = [...]uint16{perf.AttrPortCountersExtended, perf.AttrPortCounters, perf.AttrPortRcvErrorDetails, perf.AttrPortXmitDiscardDetails}
	sweepAttrsNoPC = [...]uint16{perf.AttrPortCountersExtended, perf.AttrPortRcvErrorDetails, perf.AttrPortXmitDiscardDetails}
)

// errNotAsked marks the detail counters of a port swept without them
// (Options.Details, HCADetails).
var errNotAsked = errors.New("not asked (Details off)")

// errPCNotRead marks the PortCounters of a port whose PMA has
// Cap2AdditionalPortCounters: its PortCountersExtended carries every
// counter the sweep would read there, at 64 bits, so the sweep asks for
// that attribute alone, as perfquery -x and treydock/infiniband_exporter
// (perfquery -x) read such a port.
var errPCNotRead = errors.New("not read (served from PortCountersExtended: Cap2AdditionalPortCounters)")

// readsPC reports whether a sweep asks ps's port for PortCounters: not
// where its PMA's ClassPortInfo has Cap2AdditionalPortCounters.
func (ps *PortSample) readsPC() bool {
	return ps.CapsErr != nil || ps.Caps2&perf.Cap2AdditionalPortCounters == 0
}

// asked is what a sweep asks ps's port (a port of a node given per
// queries by sweepPlan.per), in the order of its requests.
func (ps *PortSample) asked(per int) []uint16 {
	if ps.readsPC() {
		return sweepAttrs[:per]
	}
	return sweepAttrsNoPC[:per-1]
}

// decode fills ps from r, the answers to asked (in its order), marks
// what was not asked (errPCNotRead, errNotAsked), and returns the asked
// queries' errors.
func (ps *PortSample) decode(asked []uint16, r []engine.SweepResult) []error {
	ps.PCErr, ps.RcvErrErr, ps.DiscardErr = errPCNotRead, errNotAsked, errNotAsked
	errs := make([]error, len(asked))
	for k, id := range asked {
		switch id {
		case perf.AttrPortCountersExtended:
			ps.ExtErr = decodeInto(r[k], &ps.Ext)
			errs[k] = ps.ExtErr
		case perf.AttrPortCounters:
			ps.PCErr = decodeInto(r[k], &ps.PC)
			errs[k] = ps.PCErr
		case perf.AttrPortRcvErrorDetails:
			ps.RcvErrErr = decodeInto(r[k], &ps.RcvErr)
			errs[k] = ps.RcvErrErr
		default:
			ps.DiscardErr = decodeInto(r[k], &ps.Discard)
			errs[k] = ps.DiscardErr
		}
	}
	return errs
}

// Reset is one port's saturated counters cleared (Options.ResetSaturated).
type Reset struct {
	Port     *topo.Port
	Counters []string // IBA field names
	Err      error    // nil when the PMA answered the Set
}

// NodeStat is one swept node's failed queries in one sweep.
type NodeStat struct {
	Node     *topo.Node
	Errors   int // failed queries, timeouts included
	Timeouts int
}

// Snapshot is one complete sweep. It is never changed once published.
type Snapshot struct {
	Seq      uint64        // 1 for the first sweep, then counting up
	Time     time.Time     // when the sweep ended
	Duration time.Duration // how long the counter queries (and discovery, if any) took
	// Fabric is the topology the sweep used; Discovered says whether
	// this sweep discovered it.
	Fabric     *topo.Fabric
	Discovered bool
	// DiscoveryTime is when the topology the sweep used was discovered.
	DiscoveryTime time.Time
	// Switches are the switches of Fabric, HCAs its other nodes when
	// Options.HCA; Ports the samples of their linked ports, by node then
	// port number.
	Switches []*topo.Node
	HCAs     []*topo.Node
	Ports    []PortSample
	// Nodes are the failed queries of each node of Switches and HCAs, in
	// that order.
	Nodes []NodeStat
	// Resets are the resets Options.ResetSaturated sent after the sweep
	// (its counters are the values read before them).
	Resets []Reset
	// Subscribed says whether Run holds a trap subscription
	// (Options.Traps); Traps is the number of traps it received up to
	// the sweep, TrapDiscovery whether one made this sweep discover.
	Subscribed    bool
	Traps         uint64
	TrapDiscovery bool
	// Unannounced counts, up to this sweep, the discoveries made on
	// DiscoverInterval while subscribed that found ports whose state had
	// changed with no trap received since the discovery before: traps
	// that should have come and did not (the SM forwards none, or its
	// Reports are lost on the way).
	Unannounced uint64
	// Errors counts the queries that failed (timeouts included) and the
	// targets discovery could not reach; Timeouts those that timed out.
	Errors   int
	Timeouts int
	// Refreshed is, for a snapshot published after traps (Options.Traps),
	// how many ports were re-read for it (the rest is the snapshot
	// before's); 0 for a sweep. Refreshes counts those snapshots.
	Refreshed int
	Refreshes uint64
	// Status holds the PortState and PortPhysicalState traps made the
	// exporter re-read since the discovery (see PortState); nil when none.
	Status map[*topo.Port]PortStatus
	// DownSince is when the exporter saw each port go down (a trap's
	// re-read, or a discovery finding Down a port that was up), for the
	// ports still down: kept across discoveries until the port comes
	// back or a discovery no longer finds its node.
	DownSince map[PortKey]time.Time
	// Flaps counts each port's links going down since the exporter
	// started: LinkDownedCounter's growth between two reads, or the
	// transitions to Down the exporter saw itself, when more. Dropped
	// when a discovery no longer finds the node.
	Flaps map[PortKey]uint64
	// Topology compares Fabric with Options.Reference (else the first
	// discovery).
	Topology TopologyDiff
}

// Exporter runs the sweeps and serves their snapshots.
type Exporter struct {
	sess *engine.Session
	opts Options

	mu       sync.Mutex // one sweep at a time; guards disc, lastDisc and caps
	disc     *engine.Discovery
	caps     map[*topo.Node]capsResult // the switch PMAs' ClassPortInfo, by switch of disc
	lastDisc time.Time
	seq      uint64

	snap atomic.Pointer[Snapshot]
	now  func() time.Time // time.Now; tests may replace it

	subscribed  atomic.Bool   // Run holds a trap subscription
	traps       atomic.Uint64 // traps received
	trapped     atomic.Bool   // a trap arrived since the last discovery
	discTraps   uint64        // traps received at the last discovery (mu)
	unannounced uint64        // see Snapshot.Unannounced (mu)
	wake        chan struct{} // a trap: sweep now (buffer 1)

	plan     *sweepPlan // of disc; rebuilt after each discovery
	settleAt time.Time  // when a trap's links should have settled: rediscover then (zero: none)
	settles  int        // rediscoveries since the trap, for the backoff

	text      textCache   // the last snapshot rendered (Text)
	serveText atomic.Bool // Text was called: Run renders each sweep

	evMu    sync.Mutex
	pending []trapEvent // what the Reports named, for Run (evMu)

	// The port history (mu), shared with the snapshots (cowMap).
	status    cowMap[*topo.Port, PortStatus]
	downSince cowMap[PortKey, time.Time]
	flaps     cowMap[PortKey, uint64]
	credited  map[PortKey]uint64 // flaps seen since the port's last read
	refreshes uint64
	ref       *topo.Fabric // Options.Reference, or the first discovery's
	refNodes  map[uint64]*topo.Node
	refLinks  map[linkKey]bool
	topoDiff  TopologyDiff

	// planes: the session's port is planarized and Options.Fabric set
	// (every plane swept, the port series labelled); ownPlane is the
	// session's plane port's number.
	planes    bool
	ownPlane  int
	planeMu   sync.Mutex
	planeSess map[planePort]*engine.Session // other planes' ports, for trap re-reads (planeMu)
}

// New returns an Exporter sweeping through sess. It sends nothing until
// Sweep or Run.
func New(sess *engine.Session, opts *Options) *Exporter {
	e := &Exporter{sess: sess, now: time.Now, wake: make(chan struct{}, 1)}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.Interval <= 0 {
		e.opts.Interval = DefaultInterval
	}
	if e.opts.DiscoverInterval <= 0 {
		e.opts.DiscoverInterval = DefaultDiscoverInterval
	}
	if e.opts.XmitWaitTick <= 0 {
		e.opts.XmitWaitTick = 1
	}
	if p := sess.Port(); e.opts.Fabric != nil && p.SMIName != "" && p.SMIName != p.CAName {
		e.planes, e.ownPlane = true, p.SMIPort
	}
	return e
}

// Planes reports whether the exporter sweeps every plane of a planarized
// port, its port series labelled with their plane (Options.Fabric).
func (e *Exporter) Planes() bool { return e.planes }

// Snapshot returns the last complete sweep, or nil before the first.
func (e *Exporter) Snapshot() *Snapshot { return e.snap.Load() }

// Run sweeps at once and then every Interval until ctx ends; a sweep
// that takes longer than Interval is followed by the next at once. It
// returns ctx's error. A failed sweep keeps the previous snapshot.
//
// With Options.Traps it first subscribes to TrapNumbers, and acts on each
// trap at once (see Options.Traps).
func (e *Exporter) Run(ctx context.Context) error {
	if e.opts.Traps {
		stop := e.subscribe(ctx)
		defer stop()
	}
	render := e.renderer(ctx)
	defer render(false)
	defer e.closePlanes()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		case <-e.wake:
			if !e.onTraps(ctx) {
				render(true)
				continue // the ports re-read; the sweeps keep their pace
			}
			if !t.Stop() {
				select {
				case <-t.C:
				default:
				}
			}
		}
		start := e.now()
		if _, err := e.Sweep(ctx); err != nil && ctx.Err() == nil && e.opts.Logger != nil {
			e.opts.Logger.Warn("exporter: sweep failed", "err", err)
		} else if err == nil {
			render(true)
		}
		wait := e.opts.Interval - e.now().Sub(start)
		e.mu.Lock()
		if !e.settleAt.IsZero() {
			wait = min(wait, e.settleAt.Sub(e.now()))
		}
		e.mu.Unlock()
		t.Reset(max(wait, 0))
	}
}

// renderer starts Run's renderer: once Text has been called (scrapes
// come), each snapshot Run publishes is rendered in the background, not
// by the next scrape, and beside the next sweep, which it does not delay
// (on the 16,050-node fat tree a rendering takes longer than a sweep).
// render(true) asks for the last snapshot to be rendered (a rendering
// under way is followed by one more; no more queue up); render(false)
// waits for the renderer to end, after ctx.
func (e *Exporter) renderer(ctx context.Context) (render func(bool)) {
	kick := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-kick:
				e.Text()
			}
		}
	}()
	return func(more bool) {
		if !more {
			<-done
			return
		}
		if e.serveText.Load() {
			select {
			case kick <- struct{}{}:
			default:
			}
		}
	}
}

// Sweep runs one sweep (with a discovery when one is due), publishes its
// Snapshot and returns it. It fails only when there is no topology to
// sweep (the first discovery failed) or ctx ended; failed queries are
// counted in the Snapshot.
func (e *Exporter) Sweep(ctx context.Context) (*Snapshot, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	start := e.now()
	s := &Snapshot{}
	prev := e.snap.Load()
	trapped := e.trapped.Swap(false)
	var pf *prefetch // what a discovery read of its switches as it went
	s.Subscribed, s.Traps = e.subscribed.Load(), e.traps.Load()
	settling := !e.settleAt.IsZero() && !start.Before(e.settleAt)
	if e.disc == nil || start.Sub(e.lastDisc) >= e.opts.DiscoverInterval || trapped || settling {
		var err error
		if pf, err = e.sweepDiscover(ctx, s, prev, start, trapped, settling); err != nil {
			return nil, err
		}
	}
	d := e.disc
	s.Fabric, s.DiscoveryTime = d.Fabric, e.lastDisc

	if e.plan == nil || e.plan.disc != d {
		e.plan = e.makePlan(d)
	}
	pl := e.plan
	s.Switches, s.HCAs = pl.switches, pl.hcas
	s.Ports = slices.Clone(pl.base)
	res := e.sweepResults(ctx, pl, pf)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	fillPorts(s, pl, res)
	if e.opts.ResetSaturated {
		e.resetSaturated(ctx, d, s)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	e.seq++
	s.Seq = e.seq
	s.Time = e.now()
	s.Duration = s.Time.Sub(start)
	e.deltas(prev, s)
	s.Unannounced = e.unannounced
	e.publishState(s)
	e.snap.Store(s)
	return s, nil
}

// sweepDiscover is a Sweep's discovery, with each switch's counters
// read as soon as the discovery has read its ports (the prefetch it
// returns; nil when the discovery failed and the last topology is kept).
// trapped and settling say why it runs (a trap; a look again at links a
// trap reported up).
func (e *Exporter) sweepDiscover(ctx context.Context, s *Snapshot, prev *Snapshot, start time.Time, trapped, settling bool) (*prefetch, error) {
	s.TrapDiscovery = (trapped || settling) && e.disc != nil
	if trapped {
		e.settles = 0
	}
	e.settleAt = time.Time{}
	// Each switch's counters are read as soon as the discovery has
	// read its ports, while it goes on with the rest of the fabric.
	pf := &prefetch{e: e, ctx: ctx, sw: map[*topo.Node]*prefetched{}}
	dopts := &engine.DiscoverOptions{SwitchRead: pf.switchRead}
	var d *engine.Discovery
	var err error
	if e.planes {
		d, err = e.sess.DiscoverPlanes(ctx, e.opts.Fabric, dopts)
	} else {
		d, err = e.sess.Discover(ctx, dopts)
	}
	pf.wg.Wait()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if e.disc == nil {
			return nil, fmt.Errorf("exporter: discovery: %w", err)
		}
		// Keep sweeping the last topology; count the failure.
		s.countErr(err)
		return nil, nil
	}
	d.Fabric.Rename(e.opts.Names)
	e.afterDiscovery(prev, d.Fabric, start)
	if e.disc != nil && !trapped && s.Subscribed && s.Traps == e.discTraps {
		if n := changedPorts(e.disc.Fabric, d.Fabric); n > 0 {
			e.unannounced++
			if e.opts.Logger != nil {
				e.opts.Logger.Warn("exporter: traps may not be arriving: the discovery found ports whose state changed, and no trap came since the last discovery; changes are seen every --discover-interval only", "ports", n, "traps", s.Traps)
			}
		}
	}
	e.discTraps = s.Traps
	e.disc, e.lastDisc = d, start
	// A link a trap reported up is Init until the SM's sweep makes
	// it Active, and no trap says when: look again, a few times,
	// backing off.
	if s.TrapDiscovery && transitional(d.Fabric) && e.settles < e.maxSettles() {
		e.settleAt = start.Add(settleDelay << e.settles)
		e.settles++
	}
	e.caps = e.readCaps(ctx, d, pf)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, c := range e.caps {
		if c.err != nil {
			s.countErr(c.err)
		}
	}
	s.Discovered = true
	for _, te := range d.Errors {
		s.countErr(te.Err)
	}
	return pf, nil
}

// fillPorts decodes a sweep's answers (res, in pl's order) into s's
// ports and counts the errors and timeouts per node and in all.
func fillPorts(s *Snapshot, pl *sweepPlan, res []engine.SweepResult) {
	at := pl.at
	nodeStat := map[*topo.Node]*NodeStat{}
	s.Nodes = make([]NodeStat, 0, len(s.Switches)+len(s.HCAs))
	for _, n := range append(s.Switches[:len(s.Switches):len(s.Switches)], s.HCAs...) {
		s.Nodes = append(s.Nodes, NodeStat{Node: n})
		nodeStat[n] = &s.Nodes[len(s.Nodes)-1]
	}
	for i := range s.Ports {
		ps := &s.Ports[i]
		ns := nodeStat[ps.Port.Node]
		per := pl.per(ps.Port.Node)
		if at[i] < 0 { // no target: counted once per query
			s.Errors += per
			ns.Errors += per
			continue
		}
		for _, err := range ps.decode(ps.asked(per), res[at[i]:]) {
			if err != nil {
				s.Errors++
				ns.Errors++
				if errors.Is(err, fabric.ErrTimeout) {
					s.Timeouts++
					ns.Timeouts++
				}
			}
		}
	}
}

// subscribe subscribes to TrapNumbers and reads the Reports until ctx
// ends: each queues what it names and wakes Run. It returns the
// function that unsubscribes (and waits for the reader).
func (e *Exporter) subscribe(ctx context.Context) func() {
	// On a planarized port, at every plane's SM: each forwards its own
	// plane's traps only.
	lids, err := e.sess.PlaneSMLIDs(ctx, e.opts.Fabric)
	var sub *engine.Subscription
	if err == nil {
		sub, err = e.sess.Subscribe(ctx, engine.SubscribeOptions{Traps: TrapNumbers(), SMLIDs: lids})
	}
	if err != nil {
		if e.opts.Logger != nil && ctx.Err() == nil {
			e.opts.Logger.Warn("exporter: no trap subscription, the topology is rediscovered every --discover-interval only", "err", err)
		}
		return func() {}
	}
	if !e.sess.ReceivesRequests() {
		// The SA took the subscription, but its Reports cannot reach this
		// port (ibsim without issm): holding it would read "subscribed"
		// while no trap ever arrives, and the SM would fail each Report.
		sub.Close()
		if e.opts.Logger != nil {
			e.opts.Logger.Warn("exporter: traps cannot arrive: the SA accepted the subscription, but this port does not receive the SA's Reports (on ibsim, attach with issm=1); unsubscribed, the topology is rediscovered every --discover-interval only", "traps", TrapNumbers())
		}
		return func() {}
	}
	e.subscribed.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			r, err := sub.Next(ctx)
			if err != nil {
				return
			}
			e.traps.Add(1)
			e.queue(eventOf(&r.Notice))
			if e.opts.Logger != nil {
				e.opts.Logger.Info("exporter: trap", "trap", r.Notice.TrapNumber, "issuer_lid", r.Notice.IssuerLID)
			}
			select {
			case e.wake <- struct{}{}:
			default:
			}
		}
	}()
	return func() {
		sub.Close()
		<-done
		e.subscribed.Store(false)
	}
}

// capsResult is one switch PMA's CapabilityMask, or why it is unknown.
type capsResult struct {
	mask  uint16
	mask2 uint32
	err   error
}

// readCaps reads the PMA ClassPortInfo of every switch of d (and every
// other node with Options.HCA), concurrently; those pf read already are
// taken from it.
func (e *Exporter) readCaps(ctx context.Context, d *engine.Discovery, pf *prefetch) map[*topo.Node]capsResult {
	var sws []*topo.Node
	var reqs []engine.SweepReq
	out := map[*topo.Node]capsResult{}
	for _, n := range d.Fabric.Nodes {
		if n.Type != topo.Switch && !e.opts.HCA {
			continue
		}
		if got := pf.get(n); got != nil {
			out[n] = got.caps
			continue
		}
		t, ok := nodeTarget(d, n)
		if !ok {
			out[n] = capsResult{err: fmt.Errorf("%s 0x%016x: no LID and no route from discovery", uplinkType(n.Type), n.GUID)}
			continue
		}
		sws = append(sws, n)
		reqs = append(reqs, engine.SweepReq{Target: t, Class: engine.SweepPerf, Method: mad.MethodGet, AttrID: perf.AttrClassPortInfo})
	}
	for i, r := range e.sess.Sweep(ctx, reqs, nil) {
		out[sws[i]] = capsOf(r)
	}
	return out
}

// capsOf is a PMA ClassPortInfo answer's capabilities.
func capsOf(r engine.SweepResult) capsResult {
	var cpi mad.ClassPortInfo
	err := decodeInto(r, &cpi)
	if err != nil {
		err = fmt.Errorf("PMA ClassPortInfo: %w", err)
	}
	return capsResult{mask: cpi.CapabilityMask, mask2: cpi.CapabilityMask2, err: err}
}

// prefetch is what a discovery's sweep read of each switch as soon as
// the discovery had read the switch's ports
// (engine.DiscoverOptions.SwitchRead), while it went on with the rest of
// the fabric: the PMA's ClassPortInfo and the counters of every port that
// is up. The sweep after the discovery asks only for what it lacks.
type prefetch struct {
	e   *Exporter
	ctx context.Context
	wg  sync.WaitGroup
	mu  sync.Mutex
	sw  map[*topo.Node]*prefetched
}

// prefetched is one switch's answers.
type prefetched struct {
	caps  capsResult
	ports map[int][]engine.SweepResult // by port number, in sweepAttrs order
}

// switchRead starts reading switch n's PMA (see DiscoverOptions.SwitchRead:
// it reads n now, and queries in a goroutine of its own).
func (pf *prefetch) switchRead(n *topo.Node, path []uint8) {
	t := engine.Target{Kind: engine.ByDR, Path: slices.Clone(path)}
	if p0 := n.Ports[0]; p0 != nil && p0.LID != 0 {
		t = engine.LID(p0.LID)
	} else if pf.e.planes {
		return // path is from the plane port of n's plane, perhaps not the session's
	}
	per := 2
	if pf.e.opts.Details {
		per = 4
	}
	reqs := []engine.SweepReq{{Target: t, Class: engine.SweepPerf, Method: mad.MethodGet, AttrID: perf.AttrClassPortInfo}}
	var nums []int
	for num := 1; num < len(n.Ports); num++ {
		p := n.Ports[num]
		if p == nil || p.State < smp.PortStateInit && p.PhysState != smp.PhysStateLinkUp {
			continue // not up: discovery follows no link from it
		}
		nums = append(nums, num)
		for _, id := range sweepAttrs[:per] {
			reqs = append(reqs, engine.SweepReq{Target: t, Class: engine.SweepPerf, Method: mad.MethodGet, AttrID: id, AttrMod: uint32(num)})
		}
	}
	pf.wg.Add(1)
	go func() {
		defer pf.wg.Done()
		res := pf.e.sess.Sweep(pf.ctx, reqs, nil)
		got := &prefetched{caps: capsOf(res[0]), ports: make(map[int][]engine.SweepResult, len(nums))}
		for i, num := range nums {
			got.ports[num] = res[1+i*per : 1+(i+1)*per]
		}
		pf.mu.Lock()
		pf.sw[n] = got
		pf.mu.Unlock()
	}()
}

// get returns what pf read of n, nil when nothing (or pf is nil).
func (pf *prefetch) get(n *topo.Node) *prefetched {
	if pf == nil {
		return nil
	}
	pf.mu.Lock()
	defer pf.mu.Unlock()
	return pf.sw[n]
}

// sweepResults returns the answers to pl.reqs: those pf read already,
// the others asked now, concurrently.
func (e *Exporter) sweepResults(ctx context.Context, pl *sweepPlan, pf *prefetch) []engine.SweepResult {
	if pf == nil {
		return e.sess.Sweep(ctx, pl.reqs, nil)
	}
	res := make([]engine.SweepResult, len(pl.reqs))
	var need []engine.SweepReq
	var at []int
	for i := range pl.base {
		if pl.at[i] < 0 {
			continue
		}
		p := pl.base[i].Port
		per := pl.per(p.Node)
		asked := pl.base[i].asked(per)
		if got := pf.get(p.Node); got != nil {
			if r, ok := got.ports[p.Num]; ok && len(r) == per {
				// The prefetch read sweepAttrs[:per]: this port's share.
				for k, id := range asked {
					res[pl.at[i]+k] = r[slices.Index(sweepAttrs[:], id)]
				}
				continue
			}
		}
		for k := range asked {
			need = append(need, pl.reqs[pl.at[i]+k])
			at = append(at, pl.at[i]+k)
		}
	}
	if len(need) > 0 {
		for k, r := range e.sess.Sweep(ctx, need, nil) {
			res[at[k]] = r
		}
	}
	return res
}

// decodeInto decodes a sweep result into v, or returns its error.
func decodeInto(r engine.SweepResult, v interface{ UnmarshalBinary([]byte) error }) error {
	if r.Err != nil {
		return r.Err
	}
	return v.UnmarshalBinary(r.Data)
}

// nodeTarget addresses a node's PMA by its LID (a switch's port 0, a
// CA's first port with one), else by the directed route discovery
// reached it through.
func nodeTarget(d *engine.Discovery, n *topo.Node) (engine.Target, bool) {
	for _, p := range n.Ports {
		if p == nil {
			continue
		}
		if ep := n.EndPort(p.Num); ep != nil && ep.LID != 0 {
			return engine.LID(ep.LID), true
		}
		if n.Type == topo.Switch {
			break
		}
	}
	return d.Target(n.GUID)
}

// portTarget addresses the PMA answering for port p: a switch's by its
// LID, a CA port's by the port's own LID (a CA's PMA answers for the port
// the query came in on), else by directed route.
func portTarget(d *engine.Discovery, p *topo.Port) (engine.Target, bool) {
	if p.Node.Type == topo.Switch {
		return nodeTarget(d, p.Node)
	}
	if p.LID != 0 {
		return engine.LID(p.LID), true
	}
	if path, ok := d.Path(p.GUID); ok {
		return engine.DR(path...), true
	}
	return engine.Target{}, false
}

// sweepPlan is what every sweep of one discovery asks: the samples'
// ports (and the capabilities or the error each starts with) and the
// requests, built once per discovery. Sweeps only read it.
type sweepPlan struct {
	disc *engine.Discovery
	// The detail counters are asked of switch ports, of CA ports.
	details, hcaDetails bool
	switches            []*topo.Node
	hcas                []*topo.Node
	base                []PortSample      // a sweep's samples before the answers
	reqs                []engine.SweepReq // the queries of every port with a target
	at                  []int             // per sample, its first request; -1: none
	idx                 *portIndex        // built at the first trap (mu)
	// planePorts are the local plane ports of a planarized discovery's
	// planes, by plane (Options.Fabric).
	planePorts map[int]planePort
}

// per is how many queries a port of n gets: 2, or 4 with its detail
// counters.
func (pl *sweepPlan) per(n *topo.Node) int {
	if n.Type == topo.Switch && pl.details || n.Type != topo.Switch && pl.hcaDetails {
		return 4
	}
	return 2
}

// makePlan builds the sweep plan of discovery d (e.caps read for it).
func (e *Exporter) makePlan(d *engine.Discovery) *sweepPlan {
	pl := &sweepPlan{disc: d, details: e.opts.Details, hcaDetails: e.opts.HCADetails}
	if e.planes {
		pl.planePorts = planePortsOf(d)
	}
	nports := 0
	for _, n := range d.Fabric.Nodes {
		if n.Type == topo.Switch || e.opts.HCA {
			for _, p := range n.Ports[min(1, len(n.Ports)):] {
				if p != nil && p.Remote != nil {
					nports++
				}
			}
		}
	}
	pl.base = make([]PortSample, 0, nports)
	pl.reqs = make([]engine.SweepReq, 0, nports*4)
	pl.at = make([]int, 0, nports)
	for _, n := range d.Fabric.Nodes {
		if n.Type == topo.Switch {
			pl.switches = append(pl.switches, n)
		} else if e.opts.HCA {
			pl.hcas = append(pl.hcas, n)
		} else {
			continue
		}
		c := e.caps[n]
		for num := 1; num < len(n.Ports); num++ {
			p := n.Ports[num]
			if p == nil || p.Remote == nil {
				continue
			}
			t, ok := portTarget(d, p)
			if !ok {
				err := fmt.Errorf("%s 0x%016x port %d: no LID and no route from discovery", uplinkType(n.Type), n.GUID, num)
				pl.base = append(pl.base, PortSample{Port: p, ExtErr: err, PCErr: err, RcvErrErr: err, DiscardErr: err})
				pl.at = append(pl.at, -1)
				continue
			}
			pl.base = append(pl.base, PortSample{Port: p, Caps: c.mask, Caps2: c.mask2, CapsErr: c.err})
			pl.at = append(pl.at, len(pl.reqs))
			for _, id := range pl.base[len(pl.base)-1].asked(pl.per(n)) {
				pl.reqs = append(pl.reqs, engine.SweepReq{Target: t, Class: engine.SweepPerf, Method: mad.MethodGet, AttrID: id, AttrMod: uint32(num)})
			}
		}
	}
	return pl
}

// resetSaturated sends one PortCounters Set per port of s with saturated
// resettable counters, clearing those only, and records them in s.Resets.
func (e *Exporter) resetSaturated(ctx context.Context, d *engine.Discovery, s *Snapshot) {
	var reqs []engine.SweepReq
	for i := range s.Ports {
		ps := &s.Ports[i]
		var sel uint32
		var names []string
		for j := range portCounters {
			c := &portCounters[j]
			if c.sel != 0 && c.served(ps) && c.saturated(ps) {
				sel |= 1 << (c.sel - 1)
				names = append(names, c.field)
			}
		}
		if sel == 0 {
			continue
		}
		t, ok := portTarget(d, ps.Port)
		if !ok {
			continue // not read either
		}
		pc := perf.PortCounters{PortSelect: uint8(ps.Port.Num), CounterSelect: uint16(sel), CounterSelect2: uint8(sel >> 16)}
		data, err := pc.MarshalBinary()
		if err != nil {
			panic(err) // a fixed-size encoding
		}
		s.Resets = append(s.Resets, Reset{Port: ps.Port, Counters: names})
		reqs = append(reqs, engine.SweepReq{Target: t, Class: engine.SweepPerf, Method: mad.MethodSet, AttrID: perf.AttrPortCounters, AttrMod: uint32(ps.Port.Num), Data: data})
	}
	if len(reqs) == 0 {
		return
	}
	for i, r := range e.sess.Sweep(ctx, reqs, nil) {
		rs := &s.Resets[i]
		rs.Err = r.Err
		if e.opts.Logger == nil {
			continue
		}
		if r.Err != nil {
			e.opts.Logger.Warn("exporter: reset of saturated counters failed", "guid", hexGUID(rs.Port.Node.GUID), "node", rs.Port.Node.Desc, "port", rs.Port.Num, "counters", rs.Counters, "err", r.Err)
		} else {
			e.opts.Logger.Info("exporter: saturated counters reset", "guid", hexGUID(rs.Port.Node.GUID), "node", rs.Port.Node.Desc, "port", rs.Port.Num, "counters", rs.Counters)
		}
	}
}

// deltas fills s's XmitWaitRatio and counts flaps from the growth of
// PortXmitWait and LinkDownedCounter since prev.
func (e *Exporter) deltas(prev, s *Snapshot) {
	if prev == nil || !s.Time.After(prev.Time) {
		return
	}
	var old map[PortKey]*PortSample
	if prev.Fabric != s.Fabric || len(prev.Ports) != len(s.Ports) {
		old = make(map[PortKey]*PortSample, len(prev.Ports))
		for i := range prev.Ports {
			p := &prev.Ports[i]
			old[keyOf(p.Port)] = p
		}
	}
	for i := range s.Ports {
		ps := &s.Ports[i]
		var pp *PortSample
		if old == nil {
			pp = &prev.Ports[i] // the same topology: the same order
		} else if pp = old[keyOf(ps.Port)]; pp == nil {
			continue
		}
		e.portDeltas(pp, ps, prev.readAt(pp), s.Time)
	}
}

// portDeltas fills ps's XmitWaitRatio (see PortSample.XmitWaitRatio) and
// counts its flaps from its growth since pp, read at was (ps at now).
func (e *Exporter) portDeltas(pp, ps *PortSample, was, now time.Time) {
	ld, xw := &portCounters[linkDownedAt], &portCounters[xmitWaitAt]
	// Each read from PortCounters, or where the PMA has
	// Cap2AdditionalPortCounters from PortCountersExtended's 64-bit copy
	// (the same counter; only its width differs).
	if !ld.served(ps) || !ld.served(pp) || ld.extended(ps) != ld.extended(pp) || !now.After(was) {
		return
	}
	e.linkDowned(keyOf(ps.Port), ld.value(pp), ld.value(ps))
	if !xw.served(ps) || !xw.served(pp) { // served: the PMA has CapPortXmitWait
		return
	}
	cur, prev := xw.value(ps), xw.value(pp)
	full := xw.saturated(ps) // it says nothing of the time since
	st := symbolTime(ps.Port)
	if cur < prev || full || st == 0 {
		return
	}
	ps.XmitWaitRatio = float64(cur-prev) * float64(e.opts.XmitWaitTick) * st / now.Sub(was).Seconds()
	ps.XmitWaitOK = true
}

// countErr counts a failed query in s's Errors, and in its Timeouts when
// it timed out.
func (s *Snapshot) countErr(err error) {
	s.Errors++
	if errors.Is(err, fabric.ErrTimeout) {
		s.Timeouts++
	}
}

// maxSettles is Options.Settles, or its default.
func (e *Exporter) maxSettles() int {
	if e.opts.Settles > 0 {
		return e.opts.Settles
	}
	return DefaultSettles
}
