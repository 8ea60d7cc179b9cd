package rmppdriver

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
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
)

// Driver is a fabric.Transport over one that does no RMPP itself
// (fabric.Caps.RMPP false), which gives agents registered with
// RMPPVersion 1 on an RMPP class what the Linux kernel gives them (rmpp.md
// section 8): Send of a MAD buffer with the RMPP Active flag is segmented
// and sent with windows, ACKs and retransmissions; Recv returns a
// multi-segment message coalesced, with the first segment's 256 bytes (and
// RMPP header) followed by the data of the others; ACK, STOP and ABORT
// packets are consumed. Requests of those agents are timed and retried by
// the driver (the underlying transport sees them with Timeout 0), so that
// a response transferred in many segments completes the request once, when
// it is whole.
//
// Over a transport that does RMPP itself the driver passes everything
// through. Either way Call runs requests on agents of the driver's own
// (the engine's SA queries use it).
//
// A receive transfer starts only for a response to a request outstanding
// on the agent (from the LID the request went to), or for a request to an
// agent registered with RMPPVersion 1; other DATA segments are refused. A
// First segment's PayloadLength reserves at most one window; a message
// longer than Limits.MaxMessage, or one that would take the bytes held
// by all receive transfers past Limits.MaxTotal, is stopped with
// STOP(1) (resources exhausted). Refusals are counted (Stats), logged
// at debug level, and a request whose answer was stopped fails with a
// *LimitError.
//
// Differences from Linux, on purpose: a transfer the peer ends with STOP or
// ABORT, or whose ACKs never come, completes the request with a timeout
// record (status 110) so that every request with a timeout gets exactly one
// completion (the kernel reports nothing for remote aborts); a STOP or
// ABORT from the sender of a response ends the receive transfer at once
// (the kernel passes them to senders only and lets its receiver time out
// after 40 s); the sender sends ABORT(126) when its retries run out, as
// IBA says; and requests of Call are not retransmitted once their
// answer's first segment arrived: the request then fails only when no
// segment arrives for its whole budget (timeout times tries), and the
// receive transfer is aborted with ABORT(118) (a umad caller's request
// expires and is resent mid-transfer, as in Linux). When a request
// completes with a timeout, its receive transfer is dropped, so that
// nothing of it is left to confuse a later transfer with the same TID.
//
// A Driver is safe for concurrent use. It owns the transport it
// wraps; Close closes it. It starts one goroutine only when the wrapped
// transport cannot hand it completions (no SetHandler); Close stops it.
type Driver struct {
	tr     fabric.Transport
	native bool // tr does RMPP itself: pass through
	done   chan struct{}
	stop   context.CancelFunc // ends pump's Recv
	wg     sync.WaitGroup
	ready  chan struct{} // 1-buffered: the queue grew

	mu        sync.Mutex // guards the fields below
	closed    bool
	gone      error // the wrapped transport's peer-gone error (fabric.ErrPeerGone)
	handler   func(p *fabric.Packet)
	agents    [fabric.MaxAgents]rmppAgent
	sends     map[xferKey]*xSend
	recvs     map[recvKey]*xRecv
	reqs      map[xferKey]*xReq
	queue     []*fabric.Packet
	timer     *time.Timer
	timerAt   time.Time
	nextTID   uint32
	ownAgents map[uint16]fabric.AgentID // Call's RMPP agents by class<<8|version

	limits    Limits
	recvBytes int               // bytes held by receive transfers
	failed    map[xferKey]error // why a request of Call failed, read by Call
	log       *slog.Logger      // set by New, then only read

	retx                      atomic.Uint64 // requests the driver resent
	refused, stopped, aborted atomic.Uint64 // see Stats

	// plain has bit id set for agents the driver passes through untouched
	// (no RMPP, no Call requests): the lock-free hot path of Send and
	// handle. Kept by setAgentLocked.
	plain   atomic.Uint32
	hotHand atomic.Pointer[func(p *fabric.Packet)] // handler, for that path
}

// setAgentLocked stores agent id's state and its plain bit; w.mu is held.
func (w *Driver) setAgentLocked(id fabric.AgentID, a rmppAgent) {
	w.agents[id] = a
	bit := uint32(1) << uint(id)
	for {
		old := w.plain.Load()
		nw := old &^ bit
		if !a.on && a.calls == nil {
			nw |= bit
		}
		if w.plain.CompareAndSwap(old, nw) {
			return
		}
	}
}

// isPlain reports whether agent id is passed through untouched.
func (w *Driver) isPlain(id fabric.AgentID) bool {
	return id >= 0 && int(id) < fabric.MaxAgents && w.plain.Load()&(1<<uint(id)) != 0
}

type rmppAgent struct {
	on    bool // registered with RMPPVersion 1 on an RMPP class
	calls map[uint32]chan *fabric.Packet
}

type xferKey struct {
	agent fabric.AgentID
	tid   uint32 // TID low 32 bits (the transport owns the high ones)
}

type recvKey struct {
	agent  fabric.AgentID
	tid    uint64
	lid    uint16
	qpn    uint32
	method uint8
}

type xSend struct {
	s    *rmpp.Sender
	addr fabric.Addr
	hdr  []byte // the message's first 36 bytes, for the direction switch
}

type xRecv struct {
	r         *rmpp.Receiver
	addr      fabric.Addr
	at        time.Time
	held      int  // bytes counted in recvBytes
	overTotal bool // stopped for Limits.MaxTotal
}

// xReq is a request of an RMPP agent waiting for its response.
type xReq struct {
	data     []byte // the request as sent (returned in a timeout record)
	addr     fabric.Addr
	timeout  time.Duration
	retries  int
	deadline time.Time // zero while its RMPP send runs
	forever  bool
	noResp   bool // an RMPP send with timeout 0: only its ACKs are awaited
	bounced  bool // the current try ended by lost, not by its deadline
	// recv is the receive transfer of the answer once its first segment
	// arrived; for a request of Call the request is then not resent, and
	// expires when no segment came for budget.
	recv   recvKey
	recvOn bool // recv is set
	budget time.Duration
}

// Limits bound the memory of the driver's receive transfers.
type Limits struct {
	// MaxMessage is the longest reassembled message accepted, in bytes;
	// 0 means DefaultMaxMessage.
	MaxMessage int
	// MaxTotal is the most bytes all receive transfers may hold at once;
	// 0 means DefaultMaxTotal.
	MaxTotal int
}

// Default Limits: a 16,000-node fabric's whole NodeRecord table is
// about 1.8 MB.
const (
	DefaultMaxMessage = 64 << 20
	DefaultMaxTotal   = 256 << 20
)

// Stats counts what the RMPP driver refused or ended.
type Stats struct {
	// Refused counts DATA segments that would have started a receive
	// transfer nobody asked for (no outstanding request of that TID, or
	// an agent that did not register for RMPP).
	Refused uint64
	// Stopped counts receive transfers ended with STOP(1) because of
	// Limits.
	Stopped uint64
	// Aborted counts receive transfers the peer ended with STOP or ABORT,
	// or the driver gave up on (ABORT 118).
	Aborted uint64
	// Transfers and Held are the receive transfers running now and the
	// bytes they hold.
	Transfers, Held int
}

// LimitError is an RMPP answer the receiver stopped because of its
// memory limits (Limits).
type LimitError struct {
	TID    uint32
	LID    uint16 // the sender
	Limit  string // "MaxMessage" or "MaxTotal"
	Bytes  int    // what the limit is
	Reason string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("rmppdriver: answer of TID 0x%08x from lid %d stopped (STOP 1, resources exhausted): %s over the RMPP %s limit (%d bytes)",
		e.TID, e.LID, e.Reason, e.Limit, e.Bytes)
}

// Options configure a Driver.
type Options struct {
	// Limits bound the memory of receive transfers; zero fields take the
	// defaults.
	Limits Limits
	// Logger gets refused and stopped transfers at debug level; nil
	// discards them.
	Logger *slog.Logger
}

// New returns tr with an RMPP driver in front of it (see Driver), which
// owns tr from now on. o may be nil.
func New(tr fabric.Transport, o *Options) *Driver {
	w := &Driver{
		tr:    tr,
		done:  make(chan struct{}),
		ready: make(chan struct{}, 1),
		sends: map[xferKey]*xSend{},
		recvs: map[recvKey]*xRecv{},
		reqs:  map[xferKey]*xReq{},
	}
	var opts Options
	if o != nil {
		opts = *o
	}
	w.limits = opts.Limits
	if w.limits.MaxMessage <= 0 {
		w.limits.MaxMessage = DefaultMaxMessage
	}
	if w.limits.MaxTotal <= 0 {
		w.limits.MaxTotal = DefaultMaxTotal
	}
	w.log = opts.Logger
	if w.log == nil {
		w.log = slog.New(slog.DiscardHandler)
	}
	c := tr.Caps()
	w.native = c.RMPP
	if c.SetLost != nil {
		c.SetLost(w.lost)
	}
	if c.SetHandler != nil {
		c.SetHandler(w.handle)
		if c.Failed != nil {
			// Nobody reads the wrapped transport: learn from it when
			// its peer is gone.
			w.wg.Go(func() {
				select {
				case <-c.Failed:
					var err error
					if c.FailErr != nil {
						err = c.FailErr()
					}
					if err == nil { // closed under the driver (its Fabric closed)
						err = fmt.Errorf("the transport is closed: %w", fabric.ErrPortClosed)
					}
					w.fail(err)
				case <-w.done:
				}
			})
		}
	} else {
		ctx, cancel := context.WithCancel(context.Background())
		w.stop = cancel
		w.wg.Go(func() { w.pump(ctx) })
	}
	return w
}

// Stats returns what the driver refused or ended so far.
func (w *Driver) Stats() Stats {
	w.mu.Lock()
	n, held := len(w.recvs), w.recvBytes
	w.mu.Unlock()
	return Stats{Refused: w.refused.Load(), Stopped: w.stopped.Load(), Aborted: w.aborted.Load(), Transfers: n, Held: held}
}

// Caps are the wrapped transport's, with RMPP (done by the driver or
// below it), the driver's own SetHandler, and its retransmissions added to
// the wrapped transport's count when that one counts.
func (w *Driver) Caps() fabric.Caps {
	c := w.tr.Caps()
	c.RMPP = true
	c.SetHandler = w.SetHandler
	c.SetLost = nil // the driver's own (lost)
	if inner := c.Retransmits; inner != nil {
		c.Retransmits = func() uint64 { return inner() + w.retx.Load() }
	}
	return c
}

// Port describes the local port.
func (w *Driver) Port() fabric.PortAttr { return w.tr.Port() }

// SetHandler makes the driver hand completions to h instead of queueing
// them for Recv, as mux.Mux.SetHandler; p is valid during the call only.
func (w *Driver) SetHandler(h func(p *fabric.Packet)) {
	w.mu.Lock()
	w.handler = h
	if h == nil {
		w.hotHand.Store(nil)
	} else {
		w.hotHand.Store(&h)
	}
	w.mu.Unlock()
}

// Register registers an agent on the wrapped transport.
func (w *Driver) Register(ctx context.Context, a fabric.Agent) (fabric.AgentID, error) {
	id, err := w.tr.Register(ctx, a)
	if err != nil {
		return id, err
	}
	w.mu.Lock()
	if id >= 0 && int(id) < len(w.agents) {
		w.setAgentLocked(id, rmppAgent{on: !w.native && a.RMPPVersion == 1 && rmpp.ClassUsesRMPP(a.Class)})
	}
	w.mu.Unlock()
	return id, nil
}

// Unregister removes an agent and forgets its transfers.
func (w *Driver) Unregister(ctx context.Context, id fabric.AgentID) error {
	if err := w.tr.Unregister(ctx, id); err != nil {
		return err
	}
	w.mu.Lock()
	if id >= 0 && int(id) < len(w.agents) {
		w.setAgentLocked(id, rmppAgent{})
	}
	for k := range w.sends {
		if k.agent == id {
			delete(w.sends, k)
		}
	}
	for k := range w.reqs {
		if k.agent == id {
			delete(w.reqs, k)
		}
	}
	for k, x := range w.recvs {
		if k.agent == id {
			w.dropRecvLocked(k, x)
		}
	}
	w.mu.Unlock()
	return nil
}

func (w *Driver) rmppAgentLocked(id fabric.AgentID) bool {
	return id >= 0 && int(id) < len(w.agents) && w.agents[id].on
}

// action is I/O decided under w.mu and done after it is released.
type action struct {
	sends   []fabric.Packet
	deliver []*fabric.Packet
}

func (a *action) send(agent fabric.AgentID, addr fabric.Addr, b []byte) {
	a.sends = append(a.sends, fabric.Packet{Agent: agent, Addr: addr, Data: b})
}

// Send transmits p as umad_send does: see Driver.
func (w *Driver) Send(ctx context.Context, p *fabric.Packet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if w.isPlain(p.Agent) {
		return w.tr.Send(ctx, p) // closed or not, the transport says
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return fmt.Errorf("rmppdriver: send: %w", fabric.ErrPortClosed)
	}
	if !w.rmppAgentLocked(p.Agent) {
		w.mu.Unlock()
		return w.tr.Send(ctx, p)
	}
	b := p.Data
	resp := len(b) >= mad.HeaderSize && mad.IsResponse(b)
	key := xferKey{p.Agent, uint32(mad.TIDOf(b))}
	var a action
	now := time.Now()
	if rmpp.IsActive(b) {
		ackWait := p.Timeout
		if ackWait <= 0 || ackWait > rmpp.DefaultAckTimeout {
			ackWait = rmpp.DefaultAckTimeout
		}
		s, err := rmpp.NewSender(b, rmpp.SenderConfig{Timeout: ackWait, Retries: p.Retries})
		if err != nil {
			w.mu.Unlock()
			return fmt.Errorf("rmppdriver: send: %w: %w", err, fabric.ErrInvalid)
		}
		if _, busy := w.sends[key]; busy {
			w.mu.Unlock()
			return fmt.Errorf("rmppdriver: send TID 0x%08x: transfer already running: %w", key.tid, fabric.ErrInvalid)
		}
		x := &xSend{s: s, addr: p.Addr, hdr: append([]byte(nil), b[:rmpp.HeaderEnd]...)}
		w.sends[key] = x
		if !resp {
			// Even with no response expected, ACKs that never come end
			// in a timeout record, as in Linux (rmpp.md section 4).
			w.reqs[key] = &xReq{data: append([]byte(nil), b...), addr: p.Addr, timeout: p.Timeout, retries: p.Retries, forever: p.Timeout < 0, noResp: p.Timeout == 0,
				budget: p.Timeout * time.Duration(max(p.Retries, 0)+1)}
		}
		w.sendOutLocked(&a, key, x, s.Start(now), now)
	} else {
		if !resp && p.Timeout != 0 {
			if _, busy := w.reqs[key]; busy {
				w.mu.Unlock()
				return fmt.Errorf("rmppdriver: send TID 0x%08x: already outstanding: %w", key.tid, fabric.ErrInvalid)
			}
			r := &xReq{data: append([]byte(nil), b...), addr: p.Addr, timeout: p.Timeout, retries: p.Retries, forever: p.Timeout < 0,
				budget: p.Timeout * time.Duration(max(p.Retries, 0)+1)}
			if !r.forever {
				r.deadline = now.Add(r.timeout)
			}
			w.reqs[key] = r
		}
		a.send(p.Agent, p.Addr, append([]byte(nil), b...))
	}
	w.armLocked()
	w.mu.Unlock()
	return w.run(ctx, &a)
}

// run performs a's sends, then its deliveries. The first send error is
// returned.
func (w *Driver) run(ctx context.Context, a *action) error {
	var first error
	for i := range a.sends {
		if err := w.tr.Send(ctx, &a.sends[i]); err != nil && first == nil {
			first = err
		}
	}
	for _, p := range a.deliver {
		w.emit(p)
	}
	return first
}

// emit hands a completion to a Call waiting for it, the handler,
// or the Recv queue.
func (w *Driver) emit(p *fabric.Packet) {
	w.mu.Lock()
	if p.Agent >= 0 && int(p.Agent) < len(w.agents) {
		if ch, ok := w.agents[p.Agent].calls[uint32(mad.TIDOf(p.Data))]; ok {
			delete(w.agents[p.Agent].calls, uint32(mad.TIDOf(p.Data)))
			w.mu.Unlock()
			ch <- p
			return
		}
	}
	if h := w.handler; h != nil {
		w.mu.Unlock()
		h(p)
		return
	}
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.queue = append(w.queue, p)
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// sendOutLocked turns a Sender's output into packets and bookkeeping.
func (w *Driver) sendOutLocked(a *action, key xferKey, x *xSend, o rmpp.Output, now time.Time) {
	o.Each(func(k int) { a.send(key.agent, x.addr, x.s.Segment(nil, k)) })
	if o.Control != 0 {
		a.send(key.agent, x.addr, x.s.Control(nil, o.Control, o.ControlStatus))
	}
	if !o.Done {
		return
	}
	delete(w.sends, key)
	r := w.reqs[key]
	if r == nil {
		return
	}
	if o.Err != nil {
		delete(w.reqs, key)
		a.deliver = append(a.deliver, timeoutRecord(key.agent, r))
		return
	}
	if r.noResp {
		delete(w.reqs, key)
		return
	}
	// The request is out; wait for the response, and tell the responder
	// it may answer (the direction switch, rmpp.md section 7). An RMPP
	// request is not resent, so a Call waits its whole budget
	// (a umad caller its timeout, as in Linux).
	if !r.forever {
		r.deadline = now.Add(r.timeout)
		if _, own := w.agents[key.agent].calls[key.tid]; own {
			r.deadline = now.Add(r.budget)
		}
	}
	a.send(key.agent, x.addr, rmpp.AppendSwitchAck(nil, x.hdr, 1))
}

// endRecvsLocked ends the receive transfers of the answer to request r of
// key, which timed out: each active one is aborted with ABORT(118) sent to
// its sender, and every one is forgotten, so that none is left to answer a
// later transfer of the same TID with the state of this one.
func (w *Driver) endRecvsLocked(a *action, key xferKey, r *xReq, now time.Time) {
	for rk, x := range w.recvs {
		if rk.agent != key.agent || uint32(rk.tid) != key.tid || rk.method&mad.MethodResp == 0 {
			continue
		}
		if x.r.Active() {
			w.aborted.Add(1)
			o := x.r.End(rmpp.TypeAbort, rmpp.StatusT2L, fmt.Sprintf("no segment for %v", r.budget))
			a.send(rk.agent, x.addr, x.r.Control(nil, o.Control, o.ControlStatus))
		}
		w.dropRecvLocked(rk, x)
	}
	if r.recvOn {
		if _, own := w.agents[key.agent].calls[key.tid]; own {
			if w.failed == nil {
				w.failed = map[xferKey]error{}
			}
			w.failed[key] = fmt.Errorf("rmppdriver: answer of TID 0x%08x from lid %d stalled: no segment for %v (aborted with ABORT 118): %w",
				key.tid, r.recv.lid, r.budget, fabric.ErrTimeout)
		}
	}
}

func timeoutRecord(agent fabric.AgentID, r *xReq) *fabric.Packet {
	return &fabric.Packet{Agent: agent, Status: fabric.StatusTimeout, Bounced: r.bounced, Timeout: r.timeout, Retries: r.retries, Addr: r.addr, Data: r.data}
}

// handle processes a packet from the wrapped transport.
func (w *Driver) handle(p *fabric.Packet) {
	if w.isPlain(p.Agent) {
		if h := w.hotHand.Load(); h != nil {
			(*h)(p) // the hot path: no lock, no copy
			return
		}
	}
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	if !w.rmppAgentLocked(p.Agent) || len(p.Data) < mad.HeaderSize || p.Status != 0 {
		h := w.handler
		var calls bool
		if p.Agent >= 0 && int(p.Agent) < len(w.agents) {
			calls = w.agents[p.Agent].calls != nil
		}
		w.mu.Unlock()
		if h != nil && !calls {
			h(p) // the hot path: no copy, as the wrapped transport's handler
			return
		}
		w.emit(clonePacket(p))
		return
	}
	var a action
	now := time.Now()
	b := p.Data
	key := xferKey{p.Agent, uint32(mad.TIDOf(b))}
	if !rmpp.IsActive(b) {
		w.completeLocked(&a, key, clonePacket(p))
		w.armLocked()
		w.mu.Unlock()
		_ = w.run(context.Background(), &a)
		return
	}
	var h rmpp.Header
	_ = h.UnmarshalBinary(b)
	rk := recvKey{p.Agent, mad.TIDOf(b), p.Addr.LID, p.Addr.QPN, mad.MethodOf(b)}
	switch h.Type {
	case rmpp.TypeData:
		x := w.recvs[rk]
		if x == nil {
			if why := w.refuseLocked(p.Agent, key, b, p.Addr); why != "" {
				w.refused.Add(1)
				w.log.Debug("rmppdriver: DATA refused", "why", why, "agent", int(p.Agent),
					"tid", fmt.Sprintf("0x%016x", mad.TIDOf(b)), "slid", p.Addr.LID, "qpn", p.Addr.QPN, "segment", h.Data1)
				break
			}
			x = &xRecv{r: rmpp.NewReceiver(rmpp.ReceiverConfig{MaxLength: w.limits.MaxMessage}), addr: p.Addr}
			w.recvs[rk] = x
		}
		o := x.r.Handle(b, now)
		if r := w.reqs[key]; r != nil && mad.IsResponse(b) && !r.deadline.IsZero() {
			// Requests of Call keep their request alive while
			// its answer arrives, and stop resending it (Linux lets it
			// expire and resends it mid-transfer, rmpp.md section 8;
			// umad callers keep that behaviour).
			if _, own := w.agents[p.Agent].calls[key.tid]; own {
				r.recv, r.recvOn = rk, true
				r.deadline = now.Add(r.budget)
			}
		}
		w.recvOutLocked(&a, rk, x, o, now)
		if x.r.Active() && w.recvBytes > w.limits.MaxTotal {
			x.overTotal = true
			w.recvOutLocked(&a, rk, x, x.r.End(rmpp.TypeStop, rmpp.StatusResX,
				fmt.Sprintf("receive transfers would hold %d bytes", w.recvBytes)), now)
		}
	case 0:
		// RMPP Active with type 0: a peer whose RMPP is left to a kernel
		// it does not have (OpenSM under umad2sim and ibsim) sent its
		// answer's first MAD alone. It is the whole answer that arrives;
		// the SA calls say it may be truncated (SARecords.Truncated).
		w.completeLocked(&a, key, clonePacket(p))
	default:
		if x := w.sends[key]; x != nil {
			w.sendOutLocked(&a, key, x, x.s.Handle(&h, now), now)
		}
		if h.Type == rmpp.TypeStop || h.Type == rmpp.TypeAbort {
			// From the sender of a transfer we receive: it ends there.
			if x := w.recvs[rk]; x != nil {
				w.recvOutLocked(&a, rk, x, x.r.Handle(b, now), now)
			}
		}
	}
	w.armLocked()
	w.mu.Unlock()
	_ = w.run(context.Background(), &a)
}

// refuseLocked says why a DATA segment with no receive transfer must not
// start one ("" when it may): a response needs a request of that TID
// outstanding on the agent, sent to the LID the segment comes from; a
// request needs an agent registered for RMPP by its user.
func (w *Driver) refuseLocked(agent fabric.AgentID, key xferKey, b []byte, from fabric.Addr) string {
	if mad.IsResponse(b) {
		r := w.reqs[key]
		switch {
		case r == nil:
			return "no request of this TID outstanding"
		case r.noResp:
			return "the request expects no response"
		case r.addr.LID != 0 && from.LID != 0 && r.addr.LID != from.LID:
			return fmt.Sprintf("the request went to lid %d", r.addr.LID)
		}
		return ""
	}
	if w.agents[agent].calls != nil {
		return "a request to an agent of Call"
	}
	return ""
}

func (w *Driver) recvOutLocked(a *action, rk recvKey, x *xRecv, o rmpp.Output, now time.Time) {
	if o.Ack {
		a.send(rk.agent, x.addr, x.r.Ack(nil))
	}
	if o.Control != 0 {
		a.send(rk.agent, x.addr, x.r.Control(nil, o.Control, o.ControlStatus))
	}
	key := xferKey{rk.agent, uint32(rk.tid)}
	if o.Complete {
		w.completeLocked(a, key, &fabric.Packet{Agent: rk.agent, Addr: x.addr, Data: x.r.TakeMessage()})
	}
	if o.Done {
		w.dropRecvLocked(rk, x)
		if o.Err != nil {
			w.recvFailedLocked(a, rk, x, o.Err)
		}
		return
	}
	x.at = o.Timer
	n := x.r.Buffered()
	w.recvBytes += n - x.held
	x.held = n
}

// dropRecvLocked forgets a receive transfer.
func (w *Driver) dropRecvLocked(rk recvKey, x *xRecv) {
	if w.recvs[rk] == x {
		delete(w.recvs, rk)
	}
	w.recvBytes -= x.held
	x.held = 0
}

// recvFailedLocked reports a receive transfer that ended with err: the
// request waiting for it completes now (a timeout record; a Call
// gets err).
func (w *Driver) recvFailedLocked(a *action, rk recvKey, x *xRecv, err error) {
	var ae *rmpp.AbortError
	if errors.As(err, &ae) && !ae.Remote && ae.Type == rmpp.TypeStop && ae.Status == rmpp.StatusResX {
		w.stopped.Add(1)
		le := &LimitError{TID: uint32(rk.tid), LID: rk.lid, Limit: "MaxMessage", Bytes: w.limits.MaxMessage, Reason: ae.Reason}
		if x.overTotal {
			le.Limit, le.Bytes = "MaxTotal", w.limits.MaxTotal
		}
		err = le
	} else {
		w.aborted.Add(1)
	}
	w.log.Debug("rmppdriver: receive transfer ended", "err", err, "agent", int(rk.agent),
		"tid", fmt.Sprintf("0x%016x", rk.tid), "slid", rk.lid)
	if rk.method&mad.MethodResp == 0 {
		return
	}
	key := xferKey{rk.agent, uint32(rk.tid)}
	r := w.reqs[key]
	if r == nil {
		return
	}
	delete(w.reqs, key)
	if _, own := w.agents[rk.agent].calls[key.tid]; own {
		if w.failed == nil {
			w.failed = map[xferKey]error{}
		}
		w.failed[key] = err
	}
	a.deliver = append(a.deliver, timeoutRecord(rk.agent, r))
}

// completeLocked delivers a whole message of an RMPP agent: a response
// completes its request (and is dropped when none waits, as the kernel
// drops it); a request is delivered.
func (w *Driver) completeLocked(a *action, key xferKey, p *fabric.Packet) {
	if !mad.IsResponse(p.Data) {
		a.deliver = append(a.deliver, p)
		return
	}
	if _, ok := w.reqs[key]; !ok {
		return
	}
	delete(w.reqs, key)
	if x := w.sends[key]; x != nil {
		delete(w.sends, key) // a response before the final ACK ends the send
	}
	a.deliver = append(a.deliver, p)
}

// armLocked sets the timer to the earliest deadline.
func (w *Driver) armLocked() {
	var next time.Time
	upd := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, x := range w.sends {
		upd(x.s.Deadline())
	}
	for _, x := range w.recvs {
		upd(x.at)
	}
	for _, r := range w.reqs {
		upd(r.deadline)
	}
	if next.IsZero() || w.closed {
		if w.timer != nil {
			w.timer.Stop()
		}
		w.timerAt = time.Time{}
		return
	}
	if next.Equal(w.timerAt) {
		return
	}
	w.timerAt = next
	d := time.Until(next)
	if w.timer == nil {
		w.timer = time.AfterFunc(d, w.tick)
	} else {
		w.timer.Reset(d)
	}
}

// lost ends now the try of the request p, which the wrapped transport's
// fabric handed back as undeliverable (fabric.Caps.SetLost: ibsim's
// bounce of an SA query, whose tries the driver keeps): tick resends it
// at once, or completes it with a timeout record when no try is left, as
// umad2sim hands the bounce to libibmad as an immediate ETIMEDOUT. A
// request whose answer is arriving, or whose RMPP send runs, is left to
// its timers.
func (w *Driver) lost(p *fabric.Packet) {
	if len(p.Data) < mad.HeaderSize || mad.IsResponse(p.Data) || rmpp.IsActive(p.Data) {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	r := w.reqs[xferKey{p.Agent, uint32(mad.TIDOf(p.Data))}]
	if r == nil || r.recvOn || r.deadline.IsZero() {
		return
	}
	r.deadline, r.bounced = time.Now(), true
	w.armLocked()
}

// tick runs the timers that are due.
func (w *Driver) tick() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.timerAt = time.Time{}
	now := time.Now()
	var a action
	for k, x := range w.sends {
		if d := x.s.Deadline(); !d.IsZero() && !now.Before(d) {
			w.sendOutLocked(&a, k, x, x.s.Tick(now), now)
		}
	}
	for k, x := range w.recvs {
		if !x.at.IsZero() && !now.Before(x.at) {
			w.recvOutLocked(&a, k, x, x.r.Tick(now), now)
		}
	}
	for k, r := range w.reqs {
		if r.deadline.IsZero() || now.Before(r.deadline) {
			continue
		}
		if r.retries > 0 && !rmpp.IsActive(r.data) && !r.recvOn {
			r.retries--
			w.retx.Add(1)
			r.deadline, r.bounced = now.Add(r.timeout), false
			a.send(k.agent, r.addr, append([]byte(nil), r.data...))
			continue
		}
		delete(w.reqs, k)
		w.endRecvsLocked(&a, k, r, now)
		a.deliver = append(a.deliver, timeoutRecord(k.agent, r))
	}
	w.armLocked()
	w.mu.Unlock()
	_ = w.run(context.Background(), &a)
}

// fail records that the wrapped transport's peer is gone: Recv returns
// err once the queue is read.
func (w *Driver) fail(err error) {
	w.mu.Lock()
	if w.gone == nil {
		w.gone = err
	}
	w.mu.Unlock()
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// pump reads the wrapped transport when it cannot hand over completions.
func (w *Driver) pump(ctx context.Context) {
	for {
		p := &fabric.Packet{Data: make([]byte, 0, mad.Size)}
		if err := w.tr.Recv(ctx, p); err != nil {
			if ctx.Err() != nil {
				return
			}
			// Gone, or closed under the driver (its Fabric closed): Recv
			// says so instead of waiting for what cannot come.
			if errors.Is(err, fabric.ErrPeerGone) || errors.Is(err, net.ErrClosed) {
				w.fail(err)
				return
			}
			continue
		}
		w.handle(p)
	}
}

// Recv returns the next completion or message, as the wrapped transport's
// Recv would, RMPP messages coalesced.
func (w *Driver) Recv(ctx context.Context, p *fabric.Packet) error {
	for {
		w.mu.Lock()
		if len(w.queue) > 0 {
			q := w.queue[0]
			w.queue[0] = nil
			w.queue = w.queue[1:]
			w.mu.Unlock()
			d := append(p.Data[:0], q.Data...)
			*p = *q
			p.Data = d
			return nil
		}
		closed, gone := w.closed, w.gone
		w.mu.Unlock()
		if closed {
			return fmt.Errorf("rmppdriver: recv: %w", fabric.ErrPortClosed)
		}
		if gone != nil {
			return fmt.Errorf("rmppdriver: recv: %w", gone)
		}
		select {
		case <-w.ready:
		case <-w.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close closes the wrapped transport and stops the driver. It is
// idempotent.
func (w *Driver) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.plain.Store(0) // everything takes the locked path, which sees closed
	if w.timer != nil {
		w.timer.Stop()
	}
	for i := range w.agents {
		for tid, ch := range w.agents[i].calls {
			close(ch)
			delete(w.agents[i].calls, tid)
		}
	}
	w.queue = nil
	w.mu.Unlock()
	close(w.done)
	if w.stop != nil {
		w.stop()
	}
	err := w.tr.Close()
	w.wg.Wait()
	return err
}

func clonePacket(p *fabric.Packet) *fabric.Packet {
	q := *p
	q.Data = append([]byte(nil), p.Data...)
	return &q
}

// Call runs one request on the driver's own RMPP agent for (class,
// version), registered on first use (a vendor class with an OUI,
// 0x30-0x4f, with the OpenIB OUI, as libibumad's umad_register registers
// every agent: answers come back by TID whatever OUI the request names),
// and returns its whole response
// message. The request (its TID is the driver's) has timeout per try and
// retries more tries; a response transferred in many segments keeps it
// alive. When no answer came in all tries, Call returns the timeout record
// (Status fabric.StatusTimeout, the request as Data) and no error; a
// transfer stopped by Limits fails with a *LimitError, one the peer ended
// with an *rmpp.AbortError, one that stalled with an error wrapping
// fabric.ErrTimeout.
func (w *Driver) Call(ctx context.Context, class, version uint8, req []byte, addr fabric.Addr, timeout time.Duration, retries int) (*fabric.Packet, error) {
	id, err := w.ownAgent(ctx, class, version)
	if err != nil {
		return nil, err
	}
	ch := make(chan *fabric.Packet, 1)
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil, fmt.Errorf("rmppdriver: %w", fabric.ErrPortClosed)
	}
	w.nextTID++
	tid := w.nextTID
	if w.agents[id].calls == nil {
		a := w.agents[id]
		a.calls = map[uint32]chan *fabric.Packet{}
		w.setAgentLocked(id, a)
	}
	w.agents[id].calls[tid] = ch
	w.mu.Unlock()
	key := xferKey{id, tid}
	defer func() {
		w.mu.Lock()
		delete(w.agents[id].calls, tid)
		delete(w.failed, key)
		w.mu.Unlock()
	}()
	b := append([]byte(nil), req...)
	mad.SetTID(b, uint64(tid))
	p := &fabric.Packet{Agent: id, Timeout: timeout, Retries: retries, Addr: addr, Data: b}
	if err := w.Send(ctx, p); err != nil {
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("rmppdriver: %w", fabric.ErrPortClosed)
		}
		if r.Status == fabric.StatusTimeout {
			w.mu.Lock()
			err := w.failed[key]
			w.mu.Unlock()
			if err != nil {
				return nil, err
			}
		}
		return r, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// openIBOUI is the OUI libibumad's umad_register gives every agent.
const openIBOUI = 0x001405

// ownAgent returns Call's RMPP agent for (class, version).
func (w *Driver) ownAgent(ctx context.Context, class, version uint8) (fabric.AgentID, error) {
	k := uint16(class)<<8 | uint16(version)
	w.mu.Lock()
	id, ok := w.ownAgents[k]
	w.mu.Unlock()
	if ok {
		return id, nil
	}
	a := fabric.Agent{Class: class, Version: version, RMPPVersion: 1}
	if class >= mad.ClassVendorLo && class <= mad.ClassVendorHi {
		a.OUI = openIBOUI
	}
	id, err := w.Register(ctx, a)
	if err != nil {
		return -1, fmt.Errorf("rmppdriver: register RMPP agent class 0x%02x: %w", class, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ownAgents == nil {
		w.ownAgents = map[uint16]fabric.AgentID{}
	}
	if old, ok := w.ownAgents[k]; ok {
		_ = w.tr.Unregister(ctx, id) // lost a race: keep the first
		w.setAgentLocked(id, rmppAgent{})
		return old, nil
	}
	w.ownAgents[k] = id
	return id, nil
}
