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
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
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
}

// PortSample is what one sweep read of one switch port.
type PortSample struct {
	Port *topo.Port // the switch port; Port.Remote is its link partner
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
	// Switches are the switches of Fabric; Ports the samples of their
	// linked ports, by switch then port number.
	Switches []*topo.Node
	Ports    []PortSample
	// Errors counts the queries that failed (timeouts included) and the
	// targets discovery could not reach; Timeouts those that timed out.
	Errors   int
	Timeouts int
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
}

// New returns an Exporter sweeping through sess. It sends nothing until
// Sweep or Run.
func New(sess *engine.Session, opts *Options) *Exporter {
	e := &Exporter{sess: sess, now: time.Now}
	if opts != nil {
		e.opts = *opts
	}
	if e.opts.Interval <= 0 {
		e.opts.Interval = DefaultInterval
	}
	if e.opts.DiscoverInterval <= 0 {
		e.opts.DiscoverInterval = DefaultDiscoverInterval
	}
	return e
}

// Snapshot returns the last complete sweep, or nil before the first.
func (e *Exporter) Snapshot() *Snapshot { return e.snap.Load() }

// Run sweeps at once and then every Interval until ctx ends; a sweep
// that takes longer than Interval is followed by the next at once. It
// returns ctx's error. A failed sweep keeps the previous snapshot.
func (e *Exporter) Run(ctx context.Context) error {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		start := e.now()
		if _, err := e.Sweep(ctx); err != nil && ctx.Err() == nil && e.opts.Logger != nil {
			e.opts.Logger.Warn("exporter: sweep failed", "err", err)
		}
		t.Reset(max(e.opts.Interval-e.now().Sub(start), 0))
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
	if e.disc == nil || start.Sub(e.lastDisc) >= e.opts.DiscoverInterval {
		d, err := e.sess.Discover(ctx, nil)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if e.disc == nil {
				return nil, fmt.Errorf("exporter: discovery: %w", err)
			}
			// Keep sweeping the last topology; count the failure.
			s.Errors++
			if errors.Is(err, fabric.ErrTimeout) {
				s.Timeouts++
			}
		} else {
			d.Fabric.Rename(e.opts.Names)
			e.disc, e.lastDisc = d, start
			e.caps = e.readCaps(ctx, d)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for _, c := range e.caps {
				if c.err != nil {
					s.Errors++
					if errors.Is(c.err, fabric.ErrTimeout) {
						s.Timeouts++
					}
				}
			}
			s.Discovered = true
			for _, te := range d.Errors {
				s.Errors++
				if errors.Is(te.Err, fabric.ErrTimeout) {
					s.Timeouts++
				}
			}
		}
	}
	d := e.disc
	s.Fabric = d.Fabric

	var reqs []engine.SweepReq
	var at []int // per sample, its first request; -1: none
	for _, n := range d.Fabric.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		s.Switches = append(s.Switches, n)
		t, ok := nodeTarget(d, n)
		for num := 1; num < len(n.Ports); num++ {
			p := n.Ports[num]
			if p == nil || p.Remote == nil {
				continue
			}
			if !ok {
				err := fmt.Errorf("switch 0x%016x: no LID and no route from discovery", n.GUID)
				s.Ports = append(s.Ports, PortSample{Port: p, ExtErr: err, PCErr: err})
				at = append(at, -1)
				continue
			}
			c := e.caps[n]
			s.Ports = append(s.Ports, PortSample{Port: p, Caps: c.mask, CapsErr: c.err})
			at = append(at, len(reqs))
			reqs = append(reqs,
				engine.SweepReq{Target: t, Class: engine.SweepPerf, Method: mad.MethodGet, AttrID: perf.AttrPortCountersExtended, AttrMod: uint32(num)},
				engine.SweepReq{Target: t, Class: engine.SweepPerf, Method: mad.MethodGet, AttrID: perf.AttrPortCounters, AttrMod: uint32(num)})
		}
	}
	res := e.sess.Sweep(ctx, reqs, nil)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i := range s.Ports {
		ps := &s.Ports[i]
		if at[i] < 0 { // no target: counted once per query
			s.Errors += 2
			continue
		}
		ext, pc := res[at[i]], res[at[i]+1]
		ps.ExtErr = decodeInto(ext, &ps.Ext)
		ps.PCErr = decodeInto(pc, &ps.PC)
		for _, err := range []error{ps.ExtErr, ps.PCErr} {
			if err != nil {
				s.Errors++
				if errors.Is(err, fabric.ErrTimeout) {
					s.Timeouts++
				}
			}
		}
	}
	e.seq++
	s.Seq = e.seq
	s.Time = e.now()
	s.Duration = s.Time.Sub(start)
	e.snap.Store(s)
	return s, nil
}

// capsResult is one switch PMA's CapabilityMask, or why it is unknown.
type capsResult struct {
	mask uint16
	err  error
}

// readCaps reads the PMA ClassPortInfo of every switch of d, concurrently.
func (e *Exporter) readCaps(ctx context.Context, d *engine.Discovery) map[*topo.Node]capsResult {
	var sws []*topo.Node
	var reqs []engine.SweepReq
	out := map[*topo.Node]capsResult{}
	for _, n := range d.Fabric.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		t, ok := nodeTarget(d, n)
		if !ok {
			out[n] = capsResult{err: fmt.Errorf("switch 0x%016x: no LID and no route from discovery", n.GUID)}
			continue
		}
		sws = append(sws, n)
		reqs = append(reqs, engine.SweepReq{Target: t, Class: engine.SweepPerf, Method: mad.MethodGet, AttrID: perf.AttrClassPortInfo})
	}
	for i, r := range e.sess.Sweep(ctx, reqs, nil) {
		var cpi mad.ClassPortInfo
		err := decodeInto(r, &cpi)
		if err != nil {
			err = fmt.Errorf("PMA ClassPortInfo: %w", err)
		}
		out[sws[i]] = capsResult{mask: cpi.CapabilityMask, err: err}
	}
	return out
}

// decodeInto decodes a sweep result into v, or returns its error.
func decodeInto(r engine.SweepResult, v interface{ UnmarshalBinary([]byte) error }) error {
	if r.Err != nil {
		return r.Err
	}
	return v.UnmarshalBinary(r.Data)
}

// nodeTarget addresses a switch's PMA by its LID (port 0's), else by the
// directed route discovery reached it through.
func nodeTarget(d *engine.Discovery, n *topo.Node) (engine.Target, bool) {
	if len(n.Ports) > 0 && n.Ports[0] != nil && n.Ports[0].LID != 0 {
		return engine.LID(n.Ports[0].LID), true
	}
	return d.Target(n.GUID)
}
