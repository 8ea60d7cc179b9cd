// Package mux gives umad semantics to a raw MAD wire: agents and their
// method ownership, TID ownership, matching of responses, timeouts and
// retries, and the receive queue of an umad file descriptor. The ibsim
// client and the embedded simulator are raw wires (ibsim never times
// anything out); a Mux on top makes each of them a fabric.Transport that
// keeps the whole contract.
//
// # Model
//
// A Mux is one umad file descriptor: 32 agent slots, a table of
// outstanding requests and a FIFO receive queue. A Port is the local port
// the descriptors are open on: method ownership and the per-agent hi_tid
// tags are exclusive across every Mux of one Port, and a received MAD is
// routed through the Port to the Mux whose agent it is for, as the kernel's
// MAD layer routes between the files open on one port. A Mux created
// without Options.Port has a Port of its own.
//
// A backend hands every MAD received on the port to Deliver, once, on any
// Mux of the Port (the one it attached is the natural choice). Deliver may
// be called from inside Wire.Transmit on the same goroutine: the Mux never
// holds a lock while it calls the Wire.
//
// # Deviations from the kernel
//
//   - A request that times out comes back with the whole request MAD (as
//     sent, with the rewritten TID), not only its 24-byte header; Timeout
//     and Retries are those of the request.
//   - Responses are matched by TID and management class only, not by the
//     responder's address.
//   - RMPP is not done here: Caps().RMPP is false and every MAD is
//     delivered as received (like an agent with IB_USER_MAD_USER_RMPP).
//   - A Get or Set nobody owns is answered with status 0x000C only when
//     Options.AnswerUnowned is set (the embedded simulator's SMA and PMA
//     answer SMPs and PerfMgt before the Mux sees them, as a driver does).
//
// # Timers
//
// A Mux runs no goroutine. Each Mux has one time.AfterFunc timer, armed for
// the earliest deadline of a heap of outstanding requests; it fires, times
// out or retransmits every expired request, and re-arms itself. Timers are
// created lazily by Send, so a Mux created inside a testing/synctest bubble
// runs on the bubble's clock.
//
// # Concurrency
//
// A Mux is safe for concurrent use. Lock order: Port.mu before Mux.mu.
package mux

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/internal/intmap"
	"github.com/ibscript/ibscript/mad"
)

// Wire is the raw side of a port. It transmits MADs and hands every MAD
// received for the port to the Mux with Mux.Deliver; it knows nothing of
// agents, TIDs or timeouts.
type Wire interface {
	// Transmit sends p.Data to p.Addr. It must not keep p or p.Data after
	// it returns. A Wire may call Mux.Deliver from inside Transmit (the
	// embedded simulator answers synchronously).
	Transmit(p *fabric.Packet) error
	// Close releases the wire; it is called once, by Mux.Close.
	Close() error
}

// DefaultQueueLimit is the number of received MADs a Mux queues before it
// drops new ones, as the kernel's umad receive queue.
const DefaultQueueLimit = 200000

// Options configure a Mux. A nil *Options means defaults.
type Options struct {
	// Port is the registry shared by every Mux open on the same local
	// port. Nil gives the Mux a port of its own.
	Port *Port
	// AnswerUnowned makes the Mux answer a Get or Set request that no
	// agent of the port owns with a GetResp of status 0x000C (a DR SMP's
	// with the D bit), as the kernel does. Off by default.
	AnswerUnowned bool
	// QueueLimit bounds the receive queue; 0 means DefaultQueueLimit.
	// Timeout records are queued past it, as in the kernel.
	QueueLimit int
	// Logger gets a debug line for every malformed MAD the wire delivers
	// (see Stats.Malformed); nil discards them.
	Logger *slog.Logger
	// Intact is the wire's fabric.Caps.Intact: whether its answers
	// arrive undamaged. nil: not known.
	Intact func() bool
}

// Stats counts what a Mux dropped or did on its own. Counters only grow.
type Stats struct {
	Unmatched   uint64 // responses that matched no outstanding request
	Unowned     uint64 // requests no agent owned
	Answered    uint64 // of those, answered with status 0x000C
	QueueDrops  uint64 // MADs dropped because the receive queue was full
	Malformed   uint64 // MADs shorter than their header, longer than 256 bytes or with BaseVersion != 1
	Retransmits uint64 // request retransmissions after a timeout
	Timeouts    uint64 // requests completed with StatusTimeout
}

// Port is the registry of one local port shared by the Muxes open on it:
// who owns which (class, version, method), and which agent each hi_tid
// belongs to. The zero value is not usable; call NewPort. A Port is safe
// for concurrent use.
type Port struct {
	mu     sync.Mutex // guards the fields below and writes of routes
	tag    uint32     // fixed bits 16..31 of every hi_tid (NewPortTagged)
	tagged bool
	nextHi uint32
	owners map[uint64]*agent
	byHi   map[uint32]*agent

	routes atomic.Pointer[routes] // copy-on-write snapshot for Deliver
}

type routes struct {
	owners map[uint64]*agent // ownerKey -> agent
	byHi   map[uint32]*agent // hi_tid -> agent
}

// NewPort returns an empty port registry.
func NewPort() *Port {
	p := &Port{owners: map[uint64]*agent{}, byHi: map[uint32]*agent{}}
	p.publish()
	return p
}

// NewPortTagged returns an empty port registry whose hi_tids all carry tag
// in their upper 16 bits, so request TIDs carry it in bits 48..63. It is for
// a wire that overwrites those bits in every request it carries (ibsim
// writes the client's slot there): with the tag equal to what the wire
// writes, the TID the peer sees, the response's and the Mux's agree.
func NewPortTagged(tag uint16) *Port {
	p := NewPort()
	p.tag, p.tagged = uint32(tag)<<16, true
	return p
}

// publish stores a snapshot of the tables; p.mu is held (or p is new).
func (p *Port) publish() {
	r := &routes{
		owners: make(map[uint64]*agent, len(p.owners)),
		byHi:   make(map[uint32]*agent, len(p.byHi)),
	}
	for k, v := range p.owners {
		r.owners[k] = v
	}
	for k, v := range p.byHi {
		r.byHi[k] = v
	}
	p.routes.Store(r)
}

// ownerKey names one unsolicited (class, version, method, OUI). Classes
// 0x01 and 0x81 share one table, as in the kernel.
func ownerKey(class, version, method uint8, oui uint32) uint64 {
	if class == mad.ClassSubnDR {
		class = mad.ClassSubnLID
	}
	return uint64(class)<<48 | uint64(version)<<40 | uint64(method)<<32 | uint64(oui&0xffffff)
}

func isSMPClass(c uint8) bool { return c == mad.ClassSubnLID || c == mad.ClassSubnDR }

func isVendorOUIClass(c uint8) bool { return c >= mad.ClassVendorLo && c <= mad.ClassVendorHi }

// rmppClass reports whether the kernel allows rmpp_version on class c.
func rmppClass(c uint8) bool {
	switch c {
	case mad.ClassSubnAdm, mad.ClassDevMgt, 0x10, 0x12:
		return true
	}
	return isVendorOUIClass(c)
}

type agent struct {
	mux   *Mux
	id    fabric.AgentID
	hiTID uint32
	qpn   uint32
	desc  fabric.Agent
}

// request is one outstanding request of a Mux.
type request struct {
	key      uint64 // TID | class<<56
	agent    *agent
	addr     fabric.Addr
	timeout  time.Duration
	retries  int
	tries    int           // attempts made
	seq      atomic.Uint64 // which use of this request this is (bumped by freeReq); see Send
	deadline time.Time
	hidx     int // index in the deadline heap, -1 when not in it
	// lost: the fabric bounced the first try before Send put the request
	// in the heap (Lost); Send starts it expired.
	lost bool
	// bounced: the current try ended by Lost, not by its deadline.
	bounced bool
	n       int
	buf     [mad.Size]byte
}

// record is one entry of the receive queue.
type record struct {
	agent   fabric.AgentID
	status  int
	bounced bool
	timeout time.Duration
	retries int
	addr    fabric.Addr
	data    []byte
}

// txBuf is a packet handed to Wire.Transmit; pooled so Send does not
// allocate.
type txBuf struct {
	p   fabric.Packet
	buf [mad.Size]byte
}

var txPool = sync.Pool{New: func() any { return new(txBuf) }}

func getTx(addr fabric.Addr, data []byte) *txBuf {
	t := txPool.Get().(*txBuf)
	t.p = fabric.Packet{Addr: addr, Data: t.buf[:copy(t.buf[:], data)]}
	return t
}

func putTx(t *txBuf) {
	t.p.Data = nil
	txPool.Put(t)
}

// Mux is one umad file descriptor on a Wire; it implements
// fabric.Transport. See the package doc.
type Mux struct {
	wire       Wire
	attr       fabric.PortAttr
	port       *Port
	answer     bool
	queueLimit int
	log        *slog.Logger
	intact     func() bool   // Caps().Intact
	ready      chan struct{} // cap 1: "the queue may be non-empty"; never closed
	done       chan struct{} // closed by Close
	failc      chan struct{} // closed by Fail, or Close
	failOnce   sync.Once

	closeOnce sync.Once

	handler atomic.Pointer[func(*fabric.Packet)]
	lost    atomic.Pointer[func(*fabric.Packet)] // SetLost's h

	unmatched, unowned, answered, queueDrops atomic.Uint64
	malformed, retransmits, timeouts         atomic.Uint64

	mu      sync.Mutex // guards the fields below
	closed  bool
	failed  error // set by Fail
	agents  [fabric.MaxAgents]*agent
	out     intmap.Map[*request] // outstanding requests by key
	heap    []*request           // deadline min-heap of requests with Timeout > 0
	timer   *time.Timer
	timerAt time.Time // when timer fires; zero when not armed
	reqFree []*request
	q       []record // ring buffer
	qHead   int
	qLen    int
	qRecv   int // received MADs in q (bounded by queueLimit)
	bufFree [][]byte
}

var _ fabric.Transport = (*Mux)(nil)

// New returns a Mux on w for the local port described by port. The Mux
// owns w: Close closes it.
func New(w Wire, port fabric.PortAttr, opts *Options) *Mux {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Port == nil {
		o.Port = NewPort()
	}
	if o.QueueLimit <= 0 {
		o.QueueLimit = DefaultQueueLimit
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Mux{
		wire:       w,
		attr:       port,
		port:       o.Port,
		answer:     o.AnswerUnowned,
		queueLimit: o.QueueLimit,
		log:        o.Logger,
		intact:     o.Intact,
		ready:      make(chan struct{}, 1),
		done:       make(chan struct{}),
		failc:      make(chan struct{}),
	}
}

// Port describes the local port.
func (m *Mux) Port() fabric.PortAttr { return m.attr }

// Caps reports the Mux's capabilities: it counts retransmissions, can
// hand completions to a handler (SetHandler) and says when its wire's
// peer is gone (Fail); RMPP is left to the engine, and the window is the
// wire's business (a Transport built on a Mux adds MaxWindow).
func (m *Mux) Caps() fabric.Caps {
	return fabric.Caps{Retransmits: m.Retransmits, SetHandler: m.SetHandler, Failed: m.failc, FailErr: m.FailErr, Intact: m.intact, SetLost: m.SetLost}
}

// SetLost sets who hears of a bounced request Lost finds no try of (one
// sent with Timeout 0, whose tries a layer above keeps): fabric.Caps'
// SetLost. nil h: no one.
func (m *Mux) SetLost(h func(p *fabric.Packet)) {
	if h == nil {
		m.lost.Store(nil)
		return
	}
	m.lost.Store(&h)
}

// SetHandler makes the Mux hand everything Recv would return (responses,
// timeout records, unsolicited MADs) to h instead of queueing it, on the
// goroutine that produced it: inside Deliver (so inside Wire.Transmit for
// a wire that answers synchronously) or on the Mux's timer. It saves a
// consumer the wake-up of a goroutine blocked in Recv. p and p.Data are
// valid only during the call. The Mux holds no lock while it calls h, so h
// may call Send, and h may therefore be entered again from inside itself.
// Set the handler before traffic starts; nil restores the queue.
func (m *Mux) SetHandler(h func(p *fabric.Packet)) {
	if h == nil {
		m.handler.Store(nil)
		return
	}
	m.handler.Store(&h)
}

// handle calls the handler with a pooled packet.
func (m *Mux) handle(h func(*fabric.Packet), r record, data []byte) {
	tx := txPool.Get().(*txBuf)
	tx.p = fabric.Packet{Agent: r.agent, Status: r.status, Bounced: r.bounced, Timeout: r.timeout, Retries: r.retries, Addr: r.addr, Data: data}
	h(&tx.p)
	putTx(tx)
}

// Stats returns the Mux's counters.
func (m *Mux) Stats() Stats {
	return Stats{
		Unmatched:   m.unmatched.Load(),
		Unowned:     m.unowned.Load(),
		Answered:    m.answered.Load(),
		QueueDrops:  m.queueDrops.Load(),
		Malformed:   m.malformed.Load(),
		Retransmits: m.retransmits.Load(),
		Timeouts:    m.timeouts.Load(),
	}
}

// lockOpen takes the port's lock, then m's, for op on the agent tables;
// on a closed Mux it releases both and returns op's error.
func (m *Mux) lockOpen(op string) error {
	m.port.mu.Lock()
	m.mu.Lock()
	if m.closed {
		m.unlock()
		return errClosed(op)
	}
	return nil
}

// unlock releases m's lock, then the port's (lockOpen's).
func (m *Mux) unlock() {
	m.mu.Unlock()
	m.port.mu.Unlock()
}

func errClosed(op string) error { return fmt.Errorf("mux: %s: %w", op, fabric.ErrPortClosed) }

// Register adds an agent as umad_register2 does: the lowest free id, a
// hi_tid unique on the port, and exclusive ownership of a.Methods for
// (class, version[, OUI]) across every Mux of the port.
func (m *Mux) Register(ctx context.Context, a fabric.Agent) (fabric.AgentID, error) {
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	if err := validAgent(a); err != nil {
		return -1, fmt.Errorf("mux: register agent %v: %w", a, err)
	}
	if err := m.lockOpen("register"); err != nil {
		return -1, err
	}
	defer m.unlock()
	p := m.port
	if m.failed != nil {
		return -1, fmt.Errorf("mux: register: %w", m.failed)
	}
	id := -1
	for i, s := range m.agents {
		if s == nil {
			id = i
			break
		}
	}
	if id < 0 {
		return -1, fmt.Errorf("mux: register agent %v: %w (%d in use)", a, fabric.ErrTooManyAgents, fabric.MaxAgents)
	}
	if a.Class != 0 {
		for meth := 0; meth < 128; meth++ {
			if a.HasMethod(uint8(meth)) && p.owners[ownerKey(a.Class, a.Version, uint8(meth), a.OUI)] != nil {
				return -1, fmt.Errorf("mux: register agent %v: method 0x%02x: %w", a, meth, fabric.ErrMethodInUse)
			}
		}
	}
	hi, mask := p.nextHi, uint32(0xffffff)
	if p.tagged {
		mask = 0xffff
	}
	for n := 0; ; n++ {
		hi = (hi + 1) & mask
		if hi != 0 && p.byHi[hi|p.tag] == nil {
			break
		}
		if n > int(mask) {
			return -1, fmt.Errorf("mux: register agent %v: %w (no free hi_tid)", a, fabric.ErrTooManyAgents)
		}
	}
	p.nextHi = hi
	hi |= p.tag
	ag := &agent{mux: m, id: fabric.AgentID(id), hiTID: hi, desc: a, qpn: 1}
	if isSMPClass(a.Class) {
		ag.qpn = 0
	}
	m.agents[id] = ag
	p.byHi[hi] = ag
	if a.Class != 0 {
		for meth := 0; meth < 128; meth++ {
			if a.HasMethod(uint8(meth)) {
				p.owners[ownerKey(a.Class, a.Version, uint8(meth), a.OUI)] = ag
			}
		}
	}
	p.publish()
	return fabric.AgentID(id), nil
}

func validAgent(a fabric.Agent) error {
	if a.Class == 0 {
		if a.RMPPVersion > 1 {
			return fmt.Errorf("rmpp version %d: %w", a.RMPPVersion, fabric.ErrInvalid)
		}
		return nil
	}
	switch {
	case a.Class >= 0x50 && a.Class != mad.ClassSubnDR:
		return fmt.Errorf("class 0x%02x out of range: %w", a.Class, fabric.ErrInvalid)
	case a.Version >= 0x83:
		return fmt.Errorf("class version %d out of range: %w", a.Version, fabric.ErrInvalid)
	case isVendorOUIClass(a.Class) && (a.OUI == 0 || a.OUI > 0xffffff):
		return fmt.Errorf("vendor class needs a 24-bit OUI: %w", fabric.ErrInvalid)
	case a.RMPPVersion > 1, a.RMPPVersion == 1 && !rmppClass(a.Class):
		return fmt.Errorf("rmpp version %d: %w", a.RMPPVersion, fabric.ErrInvalid)
	case a.Methods[1]>>63 != 0:
		return fmt.Errorf("method mask has bit 127: %w", fabric.ErrInvalid)
	}
	return nil
}

// Unregister removes an agent; its outstanding requests are dropped
// without completion. MADs already queued for it stay queued.
func (m *Mux) Unregister(ctx context.Context, id fabric.AgentID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := m.lockOpen("unregister"); err != nil {
		return err
	}
	defer m.unlock()
	p := m.port
	if id < 0 || int(id) >= len(m.agents) || m.agents[id] == nil {
		return fmt.Errorf("mux: unregister agent %d: %w", id, fabric.ErrNoAgent)
	}
	a := m.agents[id]
	m.agents[id] = nil
	m.dropAgentLocked(a)
	p.forget(a)
	p.publish()
	return nil
}

// forget removes a's entries; p.mu is held.
func (p *Port) forget(a *agent) {
	delete(p.byHi, a.hiTID)
	for k, v := range p.owners {
		if v == a {
			delete(p.owners, k)
		}
	}
}

// dropAgentLocked cancels a's outstanding requests; m.mu is held.
func (m *Mux) dropAgentLocked(a *agent) {
	var drop []*request
	m.out.All(func(_ uint64, r *request) bool {
		if r.agent == a {
			drop = append(drop, r)
		}
		return true
	})
	for _, r := range drop {
		m.out.Delete(r.key)
		m.heapRemove(r)
		m.freeReq(r)
	}
}

// Send transmits p.Data from agent p.Agent to p.Addr. For a request (not
// mad.IsResponse) the TID's upper 32 bits are replaced by the agent's
// hi_tid, and with p.Timeout != 0 the request is outstanding until its
// response or its timeout completes it; a request whose TID and class are
// already outstanding is refused with an error wrapping fabric.ErrInvalid.
// p is not modified.
func (m *Mux) Send(ctx context.Context, p *fabric.Packet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n := len(p.Data)
	if n < mad.HeaderSize || n > mad.Size {
		return fmt.Errorf("mux: send %d bytes: %w (need %d..%d)", n, fabric.ErrInvalid, mad.HeaderSize, mad.Size)
	}
	tx := getTx(p.Addr, p.Data)
	tx.p.Agent, tx.p.Timeout, tx.p.Retries = p.Agent, p.Timeout, p.Retries
	b := tx.p.Data
	class := mad.MgmtClassOf(b)
	resp := mad.IsResponse(b)

	var (
		sent *request // the outstanding request, if Send made one
		seq  uint64
	)
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		putTx(tx)
		return errClosed("send")
	}
	if m.failed != nil {
		err := m.failed
		m.mu.Unlock()
		putTx(tx)
		return fmt.Errorf("mux: send: %w", err)
	}
	if p.Agent < 0 || int(p.Agent) >= len(m.agents) || m.agents[p.Agent] == nil {
		m.mu.Unlock()
		putTx(tx)
		return fmt.Errorf("mux: send from agent %d: %w", p.Agent, fabric.ErrNoAgent)
	}
	a := m.agents[p.Agent]
	if isSMPClass(class) != (a.qpn == 0) {
		m.mu.Unlock()
		putTx(tx)
		return fmt.Errorf("mux: send class 0x%02x from agent %d on QP%d: %w", class, p.Agent, a.qpn, fabric.ErrInvalid)
	}
	if !resp {
		tid := uint64(a.hiTID)<<32 | mad.TIDOf(b)&0xffffffff
		mad.SetTID(b, tid)
		if p.Timeout != 0 {
			key := tid | uint64(class)<<56
			if _, busy := m.out.Get(key); busy {
				m.mu.Unlock()
				putTx(tx)
				return fmt.Errorf("mux: send TID 0x%016x class 0x%02x: already outstanding: %w", tid, class, fabric.ErrInvalid)
			}
			r := m.newReq()
			r.key, r.agent, r.addr = key, a, p.Addr
			r.timeout, r.retries, r.tries = p.Timeout, max(p.Retries, 0), 1
			r.n = copy(r.buf[:], b)
			m.out.Set(key, r)
			sent, seq = r, r.seq.Load()
		}
	}
	m.mu.Unlock()

	// p is not read past this point: the response may complete the
	// request, and the caller reuse p, before Transmit returns.
	timeout := p.Timeout
	err := m.wire.Transmit(&tx.p)
	if sent != nil && sent.seq.Load() == seq {
		// The deadline starts once the request is out. A wire that
		// answers inside Transmit (the embedded simulator) has completed
		// it already (freeReq moved seq on), and then no lock is taken,
		// no clock read and no timer touched.
		m.mu.Lock()
		if sent.seq.Load() == seq && sent.agent != nil && !m.closed && m.failed == nil {
			switch {
			case err != nil:
				// Nothing went out: withdraw the request without a
				// completion.
				m.out.Delete(sent.key)
				m.heapRemove(sent)
				m.freeReq(sent)
			case timeout > 0:
				sent.deadline = time.Now().Add(timeout)
				if sent.lost {
					// Bounced already (Lost): this try is over.
					sent.deadline, sent.lost = time.Now(), false
				}
				m.heapPush(sent)
				m.armLocked()
			}
		}
		m.mu.Unlock()
	}
	putTx(tx)
	if err != nil {
		return fmt.Errorf("mux: send: %w", err)
	}
	return nil
}

func (m *Mux) newReq() *request {
	if n := len(m.reqFree); n > 0 {
		r := m.reqFree[n-1]
		m.reqFree = m.reqFree[:n-1]
		return r
	}
	return &request{hidx: -1}
}

func (m *Mux) freeReq(r *request) {
	r.agent = nil
	r.hidx = -1
	r.lost, r.bounced = false, false
	r.seq.Add(1)
	m.reqFree = append(m.reqFree, r)
}

// Recv waits for the next received MAD or completion and stores it in p,
// reusing p.Data's capacity. A timed-out request comes back as the whole
// request MAD with Status fabric.StatusTimeout.
func (m *Mux) Recv(ctx context.Context, p *fabric.Packet) error {
	for {
		m.mu.Lock()
		if m.closed {
			m.mu.Unlock()
			return errClosed("recv")
		}
		if m.qLen > 0 {
			r := &m.q[m.qHead]
			p.Agent, p.Status, p.Timeout, p.Retries, p.Addr = r.agent, r.status, r.timeout, r.retries, r.addr
			p.Bounced = r.bounced
			p.Data = append(p.Data[:0], r.data...)
			m.bufFree = append(m.bufFree, r.data[:0])
			if r.status == 0 {
				m.qRecv--
			}
			*r = record{}
			m.qHead = (m.qHead + 1) % len(m.q)
			m.qLen--
			more := m.qLen > 0
			m.mu.Unlock()
			if more {
				m.signal() // another Recv caller may be waiting
			}
			return nil
		}
		if m.failed != nil {
			err := m.failed
			m.mu.Unlock()
			return fmt.Errorf("mux: recv: %w", err)
		}
		m.mu.Unlock()
		select {
		case <-m.ready:
		case <-m.done:
		case <-m.failc:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Failed is closed once Fail or Close was called.
func (m *Mux) Failed() <-chan struct{} { return m.failc }

// FailErr is the error Fail was called with, or nil.
func (m *Mux) FailErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.failed
}

// Fail is what a Wire calls when its peer is gone (ibsim exited): the
// outstanding requests are dropped without completion, and Recv (once the
// MADs already queued are read), Send and Register fail with an error
// wrapping err until Close. Only the first call counts; it does not close
// the Wire.
func (m *Mux) Fail(err error) {
	m.failOnce.Do(func() {
		m.mu.Lock()
		if !m.closed {
			m.failed = err
			m.out.Clear()
			m.heap = nil
			if m.timer != nil {
				m.timer.Stop()
			}
		}
		m.mu.Unlock()
		close(m.failc)
	})
}

func (m *Mux) signal() {
	select {
	case m.ready <- struct{}{}:
	default:
	}
}

// enqueueLocked appends a record, copying data; m.mu is held. It reports
// whether the record was queued.
func (m *Mux) enqueueLocked(r record, data []byte) bool {
	if r.status == 0 && m.qRecv >= m.queueLimit {
		m.queueDrops.Add(1)
		return false
	}
	if m.qLen == len(m.q) {
		nq := make([]record, max(16, 2*len(m.q)))
		for i := 0; i < m.qLen; i++ {
			nq[i] = m.q[(m.qHead+i)%len(m.q)]
		}
		m.q, m.qHead = nq, 0
	}
	var buf []byte
	if n := len(m.bufFree); n > 0 {
		buf = m.bufFree[n-1]
		m.bufFree = m.bufFree[:n-1]
	} else {
		buf = make([]byte, 0, mad.Size)
	}
	r.data = append(buf, data...)
	m.q[(m.qHead+m.qLen)%len(m.q)] = r
	m.qLen++
	if r.status == 0 {
		m.qRecv++
	}
	return true
}

// Deliver hands the Mux a MAD received on its port. The Mux routes it
// through its Port: a response to the Mux that sent the request, an
// unsolicited MAD to the owner of its method; others are dropped (or
// answered, see Options.AnswerUnowned). Deliver does not keep p or p.Data.
// It may be called from inside Wire.Transmit.
func (m *Mux) Deliver(p *fabric.Packet) {
	b := p.Data
	if len(b) < mad.HeaderSize || len(b) > mad.Size || b[0] != 1 {
		m.dropMalformed(p)
		return
	}
	rt := m.port.routes.Load()
	class := mad.MgmtClassOf(b)
	if mad.IsResponse(b) {
		tid := mad.TIDOf(b)
		a := rt.byHi[uint32(tid>>32)]
		if a == nil || !a.mux.complete(a, tid|uint64(class)<<56, p) {
			if a != nil && a.desc.RMPPVersion == 1 {
				// The Mux does no RMPP: an RMPP agent gets every
				// response of its TIDs raw, as a kernel agent with
				// USER_RMPP does, and the engine's RMPP driver matches
				// segments and ACKs to its transfers.
				a.mux.unsolicited(a, p)
				return
			}
			m.unmatched.Add(1)
		}
		return
	}
	var oui uint32
	if isVendorOUIClass(class) {
		if len(b) < 40 {
			m.dropMalformed(p)
			return
		}
		oui = mad.VendorOUIOf(b)
	}
	if a := rt.owners[ownerKey(class, b[2], mad.MethodOf(b), oui)]; a != nil {
		a.mux.unsolicited(a, p)
		return
	}
	m.unowned.Add(1)
	meth := mad.MethodOf(b)
	if !m.answer || (meth != mad.MethodGet && meth != mad.MethodSet) || len(b) < mad.HeaderSize {
		return
	}
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return
	}
	tx := getTx(p.Addr, b)
	r := tx.p.Data
	r[3] = mad.MethodGetResp
	st := mad.StatusMethodAttrUnsup
	if class == mad.ClassSubnDR {
		st |= mad.StatusDirection
	}
	r[4], r[5] = byte(st>>8), byte(st)
	if m.wire.Transmit(&tx.p) == nil {
		m.answered.Add(1)
	}
	putTx(tx)
}

// Lost ends, now, the try of the outstanding request that p is a copy of
// (a request the fabric bounced back as undeliverable: ibsim's status-110
// echo), as if its timeout had passed: the next try is sent at once, or,
// when none is left, the request completes with a timeout record. This is
// what umad2sim does with the bounce (libibmad sees an ETIMEDOUT receive
// at once and tries again), so a MAD the fabric says it cannot deliver
// costs no wait; the retries are kept. It reports whether p matched an
// outstanding request. A request of one of this Mux's agents that it keeps
// no try of (sent with Timeout 0) goes to SetLost's handler, with its
// agent, and counts as matched when there is one. Lost does not keep p or
// p.Data.
func (m *Mux) Lost(p *fabric.Packet) bool {
	b := p.Data
	if len(b) < mad.HeaderSize || mad.IsResponse(b) {
		return false
	}
	tid := mad.TIDOf(b)
	a := m.port.routes.Load().byHi[uint32(tid>>32)]
	if a == nil {
		return false
	}
	am := a.mux
	key := tid | uint64(mad.MgmtClassOf(b))<<56
	am.mu.Lock()
	r, _ := am.out.Get(key)
	switch {
	case am.closed:
		am.mu.Unlock()
		return false
	case r == nil || r.agent != a:
		am.mu.Unlock()
		h := m.lost.Load()
		if h == nil || am != m {
			return false
		}
		q := fabric.Packet{Agent: a.id, Addr: p.Addr, Data: b}
		(*h)(&q)
		return true
	case r.hidx < 0:
		// Bounced before Send put it in the heap: Send starts it
		// expired.
		r.lost, r.bounced = true, true
	default:
		r.deadline, r.bounced = time.Now(), true
		am.heapFix(r)
		am.armLocked()
	}
	am.mu.Unlock()
	return true
}

// complete matches a response to an outstanding request of agent a.
func (m *Mux) complete(a *agent, key uint64, p *fabric.Packet) bool {
	m.mu.Lock()
	r, _ := m.out.Get(key)
	if m.closed || r == nil || r.agent != a {
		m.mu.Unlock()
		return false
	}
	m.out.Delete(key)
	m.heapRemove(r)
	m.freeReq(r)
	if h := m.handler.Load(); h != nil {
		m.mu.Unlock()
		m.handle(*h, record{agent: a.id, addr: p.Addr}, p.Data)
		return true
	}
	m.enqueueLocked(record{agent: a.id, addr: p.Addr}, p.Data)
	m.mu.Unlock()
	m.signal()
	return true
}

func (m *Mux) unsolicited(a *agent, p *fabric.Packet) {
	m.mu.Lock()
	if m.closed || m.agents[a.id] != a {
		m.mu.Unlock()
		m.unowned.Add(1)
		return
	}
	if h := m.handler.Load(); h != nil {
		m.mu.Unlock()
		m.handle(*h, record{agent: a.id, addr: p.Addr}, p.Data)
		return
	}
	m.enqueueLocked(record{agent: a.id, addr: p.Addr}, p.Data)
	m.mu.Unlock()
	m.signal()
}

// Close releases the port: outstanding requests are dropped, queued MADs
// discarded, blocked Recv calls return an error wrapping net.ErrClosed,
// the agents are unregistered and the Wire is closed. Close is idempotent;
// later calls return nil.
func (m *Mux) Close() error {
	var err error
	m.closeOnce.Do(func() {
		p := m.port
		p.mu.Lock()
		m.mu.Lock()
		m.closed = true
		for i, a := range m.agents {
			if a != nil {
				p.forget(a)
				m.agents[i] = nil
			}
		}
		p.publish()
		m.out.Clear()
		m.heap = nil
		if m.timer != nil {
			m.timer.Stop()
		}
		m.q, m.qLen, m.qHead, m.qRecv = nil, 0, 0, 0
		m.bufFree, m.reqFree = nil, nil
		m.mu.Unlock()
		p.mu.Unlock()
		close(m.done)
		// A consumer waiting on Caps.Failed (a driver above, its handler
		// set) learns of the close: FailErr stays nil.
		m.failOnce.Do(func() { close(m.failc) })
		if werr := m.wire.Close(); werr != nil {
			err = fmt.Errorf("mux: close: %w", werr)
		}
	})
	return err
}

// ---- timers ----

// armLocked makes sure the timer fires no later than the earliest
// deadline; m.mu is held.
func (m *Mux) armLocked() {
	if len(m.heap) == 0 {
		return
	}
	at := m.heap[0].deadline
	if !m.timerAt.IsZero() && !at.Before(m.timerAt) {
		return
	}
	m.timerAt = at
	d := time.Until(at)
	if m.timer == nil {
		m.timer = time.AfterFunc(d, m.fire)
	} else {
		m.timer.Reset(d)
	}
}

// fire handles every expired request: a retransmission while attempts
// remain, else a timeout record carrying the request.
func (m *Mux) fire() {
	var (
		stack  [8]*txBuf
		resend = stack[:0]
		tstack [8]*txBuf
		timed  = tstack[:0] // timeout records for the handler
		queued bool
	)
	h := m.handler.Load()
	now := time.Now()
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.timerAt = time.Time{}
	for len(m.heap) > 0 && !m.heap[0].deadline.After(now) {
		r := m.heap[0]
		if r.tries <= r.retries {
			r.tries++
			r.deadline, r.bounced = now.Add(r.timeout), false
			m.heapFix(r)
			tx := getTx(r.addr, r.buf[:r.n])
			tx.p.Agent, tx.p.Timeout, tx.p.Retries = r.agent.id, r.timeout, r.retries
			resend = append(resend, tx)
			continue
		}
		m.out.Delete(r.key)
		m.heapRemove(r)
		if h != nil {
			tx := getTx(r.addr, r.buf[:r.n])
			tx.p.Agent, tx.p.Status, tx.p.Timeout, tx.p.Retries = r.agent.id, fabric.StatusTimeout, r.timeout, r.retries
			tx.p.Bounced = r.bounced
			timed = append(timed, tx)
		} else {
			m.enqueueLocked(record{agent: r.agent.id, status: fabric.StatusTimeout, bounced: r.bounced,
				timeout: r.timeout, retries: r.retries, addr: r.addr}, r.buf[:r.n])
		}
		m.freeReq(r)
		m.timeouts.Add(1)
		queued = true
	}
	m.armLocked()
	m.mu.Unlock()
	if queued {
		m.signal()
	}
	for _, tx := range timed {
		(*h)(&tx.p)
		putTx(tx)
	}
	for _, tx := range resend {
		m.retransmits.Add(1)
		// A local send error is dropped, as the kernel does; the request
		// then times out.
		_ = m.wire.Transmit(&tx.p)
		putTx(tx)
	}
}

// ---- deadline heap (m.mu held) ----

func (m *Mux) heapLess(i, j int) bool { return m.heap[i].deadline.Before(m.heap[j].deadline) }

func (m *Mux) heapSwap(i, j int) {
	h := m.heap
	h[i], h[j] = h[j], h[i]
	h[i].hidx = i
	h[j].hidx = j
}

func (m *Mux) heapUp(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !m.heapLess(i, parent) {
			break
		}
		m.heapSwap(i, parent)
		i = parent
	}
}

func (m *Mux) heapDown(i int) bool {
	start := i
	n := len(m.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && m.heapLess(r, l) {
			j = r
		}
		if !m.heapLess(j, i) {
			break
		}
		m.heapSwap(i, j)
		i = j
	}
	return i > start
}

func (m *Mux) heapPush(r *request) {
	r.hidx = len(m.heap)
	m.heap = append(m.heap, r)
	m.heapUp(r.hidx)
}

func (m *Mux) heapFix(r *request) {
	if !m.heapDown(r.hidx) {
		m.heapUp(r.hidx)
	}
}

func (m *Mux) heapRemove(r *request) {
	i := r.hidx
	if i < 0 || i >= len(m.heap) || m.heap[i] != r {
		return
	}
	last := len(m.heap) - 1
	if i != last {
		m.heapSwap(i, last)
	}
	m.heap[last] = nil
	m.heap = m.heap[:last]
	r.hidx = -1
	if i != last {
		m.heapFix(m.heap[i])
	}
}
