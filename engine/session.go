package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/rmppdriver"
	"github.com/ibscript/ibscript/internal/intmap"
	"github.com/ibscript/ibscript/mad"
)

// Defaults of Options.
const (
	// DefaultTimeout is the per-try response timeout: OpenSM's default
	// transaction_timeout. SMAs answer in microseconds to a few
	// milliseconds; 200ms tolerates slow firmware while a dead node costs
	// a sweep at most (1+DefaultRetries)*200ms, in parallel with the rest.
	DefaultTimeout = 200 * time.Millisecond
	// DefaultRetries is the number of retries after the first try
	// (OpenSM's transaction_retries, libibmad's default).
	DefaultRetries = 3
	// DefaultWindow is the number of MADs in flight at once, over all
	// destinations; each destination node still gets at most one SMP.
	DefaultWindow = 64
)

// NoRetries as Options.Retries asks for a single try.
const NoRetries = -1

// Options configure a Session. A nil *Options means defaults.
type Options struct {
	// Timeout is the per-try response timeout; 0 means DefaultTimeout,
	// negative waits forever.
	Timeout time.Duration
	// Retries is the number of retries after the first try; 0 means
	// DefaultRetries, NoRetries (or any negative value) none.
	Retries int
	// Window is the number of MADs in flight at once; 0 means
	// DefaultWindow, or less when the transport says its peer needs it
	// (fabric.Caps.MaxWindow).
	Window int
	// Logger gets debug records of dropped completions and an info record
	// of every Set sent. nil discards.
	Logger *slog.Logger
	// MKey is put in every SMP.
	MKey uint64
	// SMKey is put in every SA request's SM_Key (OpenSM answers a
	// record's SM_Key, and what it guards, only to a request carrying its
	// own).
	SMKey uint64
	// CCKey is put in every Congestion Control request's CC_Key
	// (ibccquery -c): an agent whose CongestionKeyInfo protects its key
	// answers only requests carrying it.
	CCKey uint64
	// PKeyIndex is the P_Key table index every MAD but an SMP goes out
	// on (SA, PerfMgt, CC, vendor classes, Do's): infiniband-diags' -Y
	// (rdma-core #1759; its libibmad sets it for every class but the
	// SMPs', which always use index 0, as here). 0 is the default
	// partition's index.
	PKeyIndex uint16
	// AllowSet lets Set methods out on a production transport (see
	// Production); without it they fail with ErrSetRefused. Other
	// transports (the simulators) always allow them.
	AllowSet bool
	// Audit, when set, is called with every Set before it is sent. When
	// it returns an error (the audit line could not be written) the Set
	// is not sent: it fails with that error and ErrAuditFailed.
	Audit func(AuditEntry) error
	// AuditUser names who runs the session in audit entries.
	AuditUser string
	// MaxMADs, when positive, is the most requests the Session sends
	// (retransmissions not counted); later ones fail with ErrMADBudget,
	// so a runaway loop cannot flood a fabric.
	MaxMADs uint64
	// RMPP bounds the memory of multi-packet answers being received by
	// the Session's RMPP driver (zero fields take the defaults).
	RMPP rmppdriver.Limits
}

// CallOption overrides an Options default for one call.
type CallOption func(*callOpts)

type callOpts struct {
	timeout time.Duration
	retries int
	mkey    uint64
	smkey   uint64
	cckey   uint64
	saMod   uint32
	saLID   uint16 // the SA's LID; 0: the port's SMLID
	pkeyIdx uint16 // P_Key index of GMPs (Options.PKeyIndex)
	passes  int    // Sweep: passes over the queries that could not be read; 0: defaultSweepPasses
}

// Timeout sets the per-try timeout of one call (negative: forever).
func Timeout(d time.Duration) CallOption { return func(c *callOpts) { c.timeout = d } }

// Retries sets the number of retries of one call (0: one try only).
func Retries(n int) CallOption { return func(c *callOpts) { c.retries = max(n, 0) } }

// MKey sets the M_Key of one call's SMPs.
func MKey(key uint64) CallOption { return func(c *callOpts) { c.mkey = key } }

// SMKey sets the SM_Key of one SA call.
func SMKey(key uint64) CallOption { return func(c *callOpts) { c.smkey = key } }

// CCKey sets the CC_Key of one Congestion Control call.
func CCKey(key uint64) CallOption { return func(c *callOpts) { c.cckey = key } }

// PKeyIndex sets the P_Key table index one call's MAD (not an SMP) goes
// out on, as Options.PKeyIndex does for every call.
func PKeyIndex(idx uint16) CallOption { return func(c *callOpts) { c.pkeyIdx = idx } }

// SAAttrMod sets the attribute modifier of one SA request (0 by
// default). OpenSM reads bit 31 of a PortInfoRecord query's as "match any
// of the template's CapabilityMask bits", as saquery -s asks.
func SAAttrMod(mod uint32) CallOption { return func(c *callOpts) { c.saMod = mod } }

// SALID sends one SA request (SAQuery, SAGetTable ...) to the SA at lid
// instead of the port's SM's (PortAttr.SMLID): on a planarized port, the
// SM of another plane, each plane being a subnet of its own with its own
// SM (the GSI side sends it on the plane that routes lid).
func SALID(lid uint16) CallOption { return func(c *callOpts) { c.saLID = lid } }

// Passes sets how many passes Session.Sweep makes over queries that
// could not be read (Unreadable: timed out after every try, or never
// verified): 1 asks each query once, as the C tools do; the default is
// 2, a second pass once the first is over.
func Passes(n int) CallOption { return func(c *callOpts) { c.passes = max(n, 1) } }

func (s *Session) callOpts(opts []CallOption) callOpts {
	if len(opts) == 0 {
		return s.defaults
	}
	c := s.defaults
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Session is ibscript's MAD engine on one Transport: typed queries,
// transactions matched by TID, a scheduler keeping a window of MADs in
// flight with at most one SMP per destination node, and discovery. It is
// safe for concurrent use; see the package doc.
type Session struct {
	opts     Options            // as New was given them (DiscoverPlanes opens more sessions with them)
	tr       fabric.Transport   // rmpp, as a Transport
	rmpp     *rmppdriver.Driver // RMPP and the SA calls on every backend
	log      *slog.Logger
	defaults callOpts
	window   int
	pool     sync.Pool // *op; per Session, so ops never cross synctest bubbles

	production, allowSet bool                   // safety gate (safety.go)
	roce                 bool                   // the port is RoCE (link layer Ethernet): no LIDs, no QP0, a GRH on every MAD
	intact               func() bool            // the transport's Caps().Intact
	audit                func(AuditEntry) error // nil: no audit
	auditUser            string
	maxMADs              uint64
	madsSent             atomic.Uint64
	wg                   sync.WaitGroup
	sweeps               sync.WaitGroup // discovery pipelines (discover.go)

	agentMu sync.Mutex // guards agents
	agents  map[uint16]fabric.AgentID
	// agentByClass caches one agent per class for the lock-free path:
	// version<<16 | AgentID+1, or 0.
	agentByClass [256]atomic.Uint32

	subs subState     // trap subscriptions (subscribe.go)
	srv  servers      // agents answered by Serve (serve.go)
	vend vendorAgents // Do's agents of vendor classes with an OUI (serve.go)

	discMu   sync.Mutex // guards lastDisc
	lastDisc *Discovery

	// dispatching is set while some goroutine is inside dispatch; it is
	// taken without dmu (the uncontended fast path) and given up under
	// dmu, once dq is empty.
	dispatching atomic.Bool
	dmu         sync.Mutex // guards the dispatch fields below
	dq          []*pending // completions waiting for it, from dqHead on
	dqHead      int
	pfree       []*pending

	mu       sync.Mutex // guards the scheduler fields below
	closed   bool
	gone     error // the transport's peer-gone error, once it said so
	inflight int
	nextTID  uint32
	ops      intmap.Map[*op]      // sent, by TID low 32 bits
	dests    intmap.Map[*opQueue] // by destKey
	ready    opQueue              // hold their destination, wait for the window
	qFree    []*opQueue
}

// New returns a Session on tr and starts its reader goroutine. The Session
// owns tr: Close closes it.
func New(tr fabric.Transport, opts *Options) (*Session, error) {
	if tr == nil {
		return nil, errors.New("engine: nil transport")
	}
	caps := tr.Caps()
	production := caps.Production
	var o Options
	if opts != nil {
		o = *opts
	}
	// A peer that stalls with more requests in flight (fabric.Caps.MaxWindow)
	// sets the default window; an explicit Options.Window is kept as given.
	if n := caps.MaxWindow; o.Window <= 0 && n > 0 && n < DefaultWindow {
		o.Window = n
	}
	d := rmppdriver.New(tr, &rmppdriver.Options{Limits: o.RMPP, Logger: o.Logger})
	tr = d
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.Window <= 0 {
		o.Window = DefaultWindow
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Session{
		opts:       o,
		tr:         tr,
		rmpp:       d,
		log:        o.Logger,
		defaults:   callOpts{timeout: o.Timeout, retries: o.Retries, mkey: o.MKey, smkey: o.SMKey, cckey: o.CCKey, pkeyIdx: o.PKeyIndex},
		window:     o.Window,
		production: production, roce: tr.Port().RoCE(), intact: caps.Intact, allowSet: o.AllowSet, audit: o.Audit, auditUser: o.AuditUser, maxMADs: o.MaxMADs,
		agents: map[uint16]fabric.AgentID{},
	}
	s.pool.New = func() any { return &op{s: s, done: make(chan struct{}, 1)} }
	if set := tr.Caps().SetHandler; set != nil {
		set(s.dispatch)
	}
	s.wg.Go(s.read)
	return s, nil
}

// RMPPStats returns what the Session's RMPP driver refused or ended.
func (s *Session) RMPPStats() rmppdriver.Stats {
	return s.rmpp.Stats()
}

// pending is a completion copied for a dispatch in progress.
type pending struct {
	p   fabric.Packet
	buf [mad.Size]byte
}

// dispatch routes a completion handed over by the transport. Routing may
// send the next queued MADs, whose synchronous completions re-enter
// dispatch on the same goroutine: those, and completions arriving on other
// goroutines meanwhile, are queued and routed by the goroutine already
// dispatching, so the stack never grows with the length of a chain.
func (s *Session) dispatch(p *fabric.Packet) {
	if s.dispatching.CompareAndSwap(false, true) {
		s.runDispatch(p)
		return
	}
	s.dmu.Lock()
	if s.dispatching.CompareAndSwap(false, true) {
		// The dispatcher left between the two looks.
		s.dmu.Unlock()
		s.runDispatch(p)
		return
	}
	var q *pending
	if n := len(s.pfree); n > 0 {
		q, s.pfree = s.pfree[n-1], s.pfree[:n-1]
	} else {
		q = new(pending)
	}
	q.p = *p
	// A completion longer than one MAD (a transport that hands over a
	// whole reassembled RMPP message) gets its own copy: the buffer is
	// only kept for the common case.
	q.p.Data = append(q.buf[:0], p.Data...)
	s.dq = append(s.dq, q)
	s.dmu.Unlock()
}

// runDispatch routes p, then the completions queued meanwhile, and gives
// up dispatching. The caller has set s.dispatching.
func (s *Session) runDispatch(p *fabric.Packet) {
	s.complete(p)
	for {
		s.dmu.Lock()
		if s.dqHead == len(s.dq) {
			clear(s.dq)
			s.dq, s.dqHead = s.dq[:0], 0
			s.dispatching.Store(false)
			s.dmu.Unlock()
			return
		}
		q := s.dq[s.dqHead]
		s.dqHead++
		s.dmu.Unlock()
		s.complete(&q.p)
		s.dmu.Lock()
		s.pfree = append(s.pfree, q)
		s.dmu.Unlock()
	}
}

// Port describes the local port.
func (s *Session) Port() fabric.PortAttr { return s.tr.Port() }

// ReceivesRequests reports whether requests other ports send to this
// port's QP1 reach the Session: an SA's Reports of the traps Subscribe
// asked for. False on ibsim without issm (fabric.Caps.NoRequests), where
// the SA accepts a subscription whose Reports never arrive.
func (s *Session) ReceivesRequests() bool { return !s.tr.Caps().NoRequests }

// SilentTimeouts reports whether the fabric times nothing out itself
// (fabric.Caps.NoTimeouts: ibsim): there a request delivered and left
// unanswered reaches a libibumad caller as nothing at all, where the
// kernel completes it with ETIMEDOUT; the Session's timer ends it with a
// *TimeoutError whose Bounced is false.
func (s *Session) SilentTimeouts() bool { return s.tr.Caps().NoTimeouts }

// Production reports whether the session's port is on a real fabric (the
// transport's fabric.Caps.Production: the kernel's umad devices).
func (s *Session) Production() bool { return s.production }

// Close closes the transport, waits for the reader goroutine and fails the
// calls still pending with an error wrapping net.ErrClosed. It is
// idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if !closed {
		s.closeSubscriptions() // unsubscribes while the transport is open
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	err := s.tr.Close()
	s.wg.Wait()
	s.failPending(fmt.Errorf("engine: %w", net.ErrClosed))
	s.sweeps.Wait() // their queries have all completed now
	if err != nil {
		return fmt.Errorf("engine: close: %w", err)
	}
	return nil
}

// failPending completes every call still pending (sent, queued, waiting
// for its destination) with err.
func (s *Session) failPending(err error) {
	var failed []*op
	s.mu.Lock()
	s.ops.All(func(_ uint64, o *op) bool {
		failed = append(failed, o)
		return true
	})
	s.ops.Clear()
	s.ready.each(func(o *op) { failed = append(failed, o) })
	s.ready = opQueue{}
	s.dests.All(func(_ uint64, q *opQueue) bool {
		q.each(func(o *op) { failed = append(failed, o) })
		return true
	})
	s.dests.Clear()
	for _, o := range failed {
		o.err = err
		o.state = stateDone
	}
	s.mu.Unlock()
	for _, o := range failed {
		s.deliver(o)
	}
}

// read is the reader goroutine: it routes every completion to its op.
func (s *Session) read() {
	p := fabric.Packet{Data: make([]byte, 0, mad.Size)}
	for {
		if err := s.tr.Recv(context.Background(), &p); err != nil {
			if errors.Is(err, fabric.ErrPeerGone) {
				// The transport lost its peer: every call pending, and
				// every later one, fails with its one error.
				s.mu.Lock()
				s.gone = err
				s.mu.Unlock()
				s.failPending(fmt.Errorf("engine: %w", err))
				return
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("engine: recv", "err", err)
			continue
		}
		s.complete(&p)
	}
}

// agent returns the Session's send-only agent for (class, version),
// registering it on first use.
func (s *Session) agent(ctx context.Context, class, version uint8) (fabric.AgentID, error) {
	if v := s.agentByClass[class].Load(); v != 0 && uint8(v>>16) == version {
		return fabric.AgentID(v&0xffff) - 1, nil
	}
	k := uint16(class)<<8 | uint16(version)
	s.agentMu.Lock()
	defer s.agentMu.Unlock()
	if id, ok := s.agents[k]; ok {
		return id, nil
	}
	id, err := s.tr.Register(ctx, fabric.Agent{Class: class, Version: version})
	if err != nil {
		return -1, fmt.Errorf("engine: register agent class 0x%02x: %w", class, err)
	}
	s.agents[k] = id
	s.agentByClass[class].CompareAndSwap(0, uint32(version)<<16|uint32(id+1))
	return id, nil
}

// doOpts checks a request of Do or DoRMPP (what) and returns its call
// options: the Session's, opts, then req's Timeout and Retries when set.
func (s *Session) doOpts(what string, req *fabric.Packet, opts []CallOption) (callOpts, error) {
	if len(req.Data) < mad.HeaderSize || len(req.Data) > mad.Size {
		return callOpts{}, fmt.Errorf("engine: %s: %d-byte MAD: %w", what, len(req.Data), fabric.ErrInvalid)
	}
	if s.roce && !req.Addr.GRH {
		return callOpts{}, fmt.Errorf("engine: %s: %w (give the MAD a GRH: fabric.Addr.GRH and GID)", what, s.roceErr(Target{Kind: ByLID, LID: req.Addr.LID}))
	}
	c := s.callOpts(opts)
	if req.Timeout != 0 {
		c.timeout = req.Timeout
	}
	if req.Retries != 0 {
		c.retries = req.Retries
	}
	return c, nil
}

// Do runs one transaction: it sends req.Data (a whole MAD, which Do does
// not keep) to req.Addr from a Session agent for its class and version,
// and returns the response. req.Agent is ignored; req.TID's low 32 bits
// are replaced by the Session's. req.Timeout 0 and req.Retries 0 take the
// Session's defaults (use CallOptions to say otherwise). A response with
// a non-zero MAD status is returned without error, as umad_recv would;
// a request with no response returns a *TimeoutError. A MAD of a class
// other than the SMPs' whose Addr.PKeyIndex is 0 goes out on the
// Session's P_Key index (Options.PKeyIndex, the PKeyIndex call option),
// as libibmad's portid carries -Y's index. Do is not
// serialized per destination; SMP and the typed helpers are.
func (s *Session) Do(ctx context.Context, req *fabric.Packet, opts ...CallOption) (*fabric.Packet, error) {
	c, err := s.doOpts("do", req, opts)
	if err != nil {
		return nil, err
	}
	class := mad.MgmtClassOf(req.Data)
	var id fabric.AgentID
	if isVendorRange2(class) && len(req.Data) >= 40 {
		id, err = s.vendorAgent(ctx, class, mad.ClassVersionOf(req.Data))
	} else {
		id, err = s.agent(ctx, class, mad.ClassVersionOf(req.Data))
	}
	if err != nil {
		return nil, err
	}
	o := s.getOp()
	o.n = copy(o.req[:], req.Data)
	o.pkt.Addr = req.Addr
	if o.pkt.Addr.PKeyIndex == 0 && class != mad.ClassSubnLID && class != mad.ClassSubnDR {
		o.pkt.Addr.PKeyIndex = c.pkeyIdx
	}
	o.setup(id, c, Target{Kind: ByLID, LID: req.Addr.LID}, false)
	if err := s.call(ctx, o); err != nil {
		return nil, err
	}
	defer s.release(o)
	if err := o.result(); err != nil {
		return nil, err
	}
	return &fabric.Packet{Agent: id, Status: o.status, Addr: o.raddr, Data: append([]byte(nil), o.resp[:o.rn]...)}, nil
}
