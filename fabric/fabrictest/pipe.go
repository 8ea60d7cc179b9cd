package fabrictest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/mux"
	"github.com/ibscript/ibscript/mad"
)

// Responder answers a MAD that reached the far side of a Pipe (or a
// TransportPeer): it returns the MAD to send back and true, or false to
// send nothing. req is valid only during the call; resp is copied before
// the Responder's caller returns.
type Responder func(req []byte, from fabric.Addr) (resp []byte, ok bool)

// PacketResponder is a Responder that sees the whole packet as side A
// sent it: p.Addr is the destination (a LID-routed fake needs the DLID).
// p is valid only during the call.
type PacketResponder func(p *fabric.Packet) (resp []byte, ok bool)

// GetResp returns a copy of the request req turned into its response: the
// method gets the R bit (Get and Set become GetResp) and the status is
// status (a directed-route SMP also gets the D bit). The TID and the rest
// of the MAD are kept.
func GetResp(req []byte, status uint16) []byte {
	r := append([]byte(nil), req...)
	if len(r) < mad.HeaderSize {
		return r
	}
	m := mad.MethodOf(r)
	if m == mad.MethodGet || m == mad.MethodSet {
		m = mad.MethodGetResp
	} else {
		m |= mad.MethodResp
	}
	r[3] = m
	if mad.MgmtClassOf(r) == mad.ClassSubnDR {
		status |= mad.StatusDirection
	}
	r[4], r[5] = byte(status>>8), byte(status)
	return r
}

// Echo is a Responder answering every request with GetResp(req, 0).
func Echo(req []byte, _ fabric.Addr) ([]byte, bool) {
	if mad.IsResponse(req) {
		return nil, false
	}
	return GetResp(req, 0), true
}

// PipeOptions configure a Pipe. A nil *PipeOptions means defaults.
type PipeOptions struct {
	// Port describes side A's local port (Transport.Port).
	Port fabric.PortAttr
	// PeerAddr is the source address of MADs coming from side B; its LID
	// defaults to 2.
	PeerAddr fabric.Addr
	// Responder answers what side A sends; nil drops everything.
	Responder Responder
	// PacketResponder, when set, is used instead of Responder.
	PacketResponder PacketResponder
	// DropFirst drops the first n requests side A sends, before side B
	// sees them.
	DropFirst int
	// Delay delays every MAD from side B to side A (time.AfterFunc, so a
	// Pipe made in a testing/synctest bubble runs on the bubble's clock).
	Delay time.Duration
	// Duplicate delivers every MAD from side B to side A twice.
	Duplicate bool
	// Mux configures side A's Muxes (Port is set by the Pipe).
	Mux mux.Options
}

// Pipe is an in-memory port pair. Side A is one or more mux.Mux
// transports sharing a mux.Port, as umad files open on one port; side B is
// scripted: a Responder answers what A sends, with fault knobs, and Send
// injects MADs into A. A Pipe implements Peer, so TestTransport can run
// against side A.
//
// A Pipe runs no goroutine of its own; with Delay it uses timers. It is
// safe for concurrent use.
type Pipe struct {
	reg   *mux.Port
	delay time.Duration
	dup   bool
	mopts mux.Options
	attr  fabric.PortAttr

	mu        sync.Mutex // guards the fields below
	first     *mux.Mux   // delivery point for side B's MADs
	muxes     []*mux.Mux
	responder Responder
	presp     PacketResponder
	peerAddr  fabric.Addr
	dropLeft  int
	seen      int
	requests  int
	closed    bool
}

var _ Peer = (*Pipe)(nil)

// NewPipe returns a Pipe with one Mux on side A (Transport).
func NewPipe(opts *PipeOptions) *Pipe {
	var o PipeOptions
	if opts != nil {
		o = *opts
	}
	if o.PeerAddr.LID == 0 {
		o.PeerAddr.LID = 2
	}
	p := &Pipe{
		reg:       mux.NewPort(),
		delay:     o.Delay,
		dup:       o.Duplicate,
		mopts:     o.Mux,
		attr:      o.Port,
		responder: o.Responder,
		presp:     o.PacketResponder,
		peerAddr:  o.PeerAddr,
		dropLeft:  o.DropFirst,
	}
	p.mopts.Port = p.reg
	if p.mopts.Intact == nil {
		// What the Responder builds arrives as built: nothing on
		// the way damages it (fabric.Caps.Intact).
		p.mopts.Intact = fabric.Always
	}
	p.first = p.Open()
	return p
}

// Transport returns side A's first Mux.
func (p *Pipe) Transport() *mux.Mux { return p.first }

// Open opens another Mux on side A's port: it shares method ownership and
// hi_tid tags with the others, like a second umad file on one port.
func (p *Pipe) Open() *mux.Mux {
	m := mux.New(pipeWire{p}, p.attr, &p.mopts)
	p.mu.Lock()
	p.muxes = append(p.muxes, m)
	p.mu.Unlock()
	return m
}

// Addr is side B's address, to which side A sends.
func (p *Pipe) Addr() fabric.Addr {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.peerAddr
}

// Handle replaces the Responder (and clears a PacketResponder) and resets
// the Seen count.
func (p *Pipe) Handle(r Responder) {
	p.mu.Lock()
	p.responder, p.presp = r, nil
	p.seen = 0
	p.mu.Unlock()
}

// HandlePacket replaces the responder with a PacketResponder and resets
// the Seen count.
func (p *Pipe) HandlePacket(r PacketResponder) {
	p.mu.Lock()
	p.responder, p.presp = nil, r
	p.seen = 0
	p.mu.Unlock()
}

// Seen returns how many requests side B received since the last Handle.
func (p *Pipe) Seen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen
}

// Requests returns how many requests side A transmitted in all, dropped
// ones included.
func (p *Pipe) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// Send injects a MAD from side B into side A.
func (p *Pipe) Send(ctx context.Context, b []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return fmt.Errorf("fabrictest: pipe send: %w", fabric.ErrPortClosed)
	}
	p.deliver(append([]byte(nil), b...))
	return nil
}

// Close closes every Mux of side A.
func (p *Pipe) Close() error {
	p.mu.Lock()
	p.closed = true
	ms := p.muxes
	p.mu.Unlock()
	for _, m := range ms {
		m.Close()
	}
	return nil
}

// deliver hands b to side A, with the delay and duplication knobs; b must
// stay unchanged until the delivery (Deliver copies it).
func (p *Pipe) deliver(b []byte) {
	p.mu.Lock()
	first, from := p.first, p.peerAddr
	p.mu.Unlock()
	n := 1
	if p.dup {
		n = 2
	}
	if p.delay > 0 {
		time.AfterFunc(p.delay, func() { deliverN(first, from, b, n) })
		return
	}
	deliverN(first, from, b, n)
}

func deliverN(m *mux.Mux, from fabric.Addr, b []byte, n int) {
	pk := fabric.Packet{Addr: from, Data: b}
	for range n {
		m.Deliver(&pk)
	}
}

// transmit is side B receiving what side A sent.
func (p *Pipe) transmit(pk *fabric.Packet) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return fmt.Errorf("fabrictest: pipe: %w", fabric.ErrPortClosed)
	}
	req := !mad.IsResponse(pk.Data)
	if req {
		p.requests++
		if p.dropLeft > 0 {
			p.dropLeft--
			p.mu.Unlock()
			return nil
		}
		p.seen++
	}
	r, pr := p.responder, p.presp
	p.mu.Unlock()
	var (
		resp []byte
		ok   bool
	)
	switch {
	case pr != nil:
		resp, ok = pr(pk)
	case r != nil:
		resp, ok = r(pk.Data, fabric.Addr{LID: p.attr.LID, QPN: pk.Addr.QPN})
	default:
		return nil
	}
	if ok && resp != nil {
		if p.delay > 0 {
			resp = append([]byte(nil), resp...) // the Responder may reuse resp
		}
		p.deliver(resp)
	}
	return nil
}

type pipeWire struct{ p *Pipe }

func (w pipeWire) Transmit(pk *fabric.Packet) error { return w.p.transmit(pk) }
func (w pipeWire) Close() error                     { return nil }

// WithCaps returns tr reporting the capabilities change makes of its own
// (fabric.Caps), tr otherwise unchanged: a test's stand-in for a backend
// that can do other things, such as a production fabric (the kernel's) or
// one whose peer limits the window (ibsim's).
func WithCaps(tr fabric.Transport, change func(c *fabric.Caps)) fabric.Transport {
	return withCaps{tr, change}
}

type withCaps struct {
	fabric.Transport
	change func(c *fabric.Caps)
}

func (w withCaps) Caps() fabric.Caps {
	c := w.Transport.Caps()
	w.change(&c)
	return c
}
