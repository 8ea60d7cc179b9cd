package fabrictest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// The suite's MADs use a class no backend answers by itself: vendor range
// 1, no OUI.
const (
	TestClass   uint8 = 0x09
	TestVersion uint8 = 1
)

// Peer is the far side of a Transport under test: the port TestTransport's
// requests go to, which it can make answer, stay silent, or send MADs of
// its own. A Pipe is a Peer; NewTransportPeer makes one from a second
// Transport of any backend (another sim node, a second HCA port).
type Peer interface {
	// Addr is where the Transport under test sends MADs to reach the
	// peer (QPN 1; the suite uses GMPs of TestClass).
	Addr() fabric.Addr
	// Handle sets the Responder called for every MAD of TestClass the
	// peer receives (requests and responses), and resets Seen. nil
	// drops everything.
	Handle(r Responder)
	// Seen returns how many request MADs the peer received since the last
	// Handle, dropped ones included.
	Seen() int
	// Send transmits a MAD from the peer to the Transport under test: an
	// unsolicited request, or a (late) response.
	Send(ctx context.Context, mad []byte) error
}

// TransportPeer is a Peer on top of a second Transport. It owns one
// goroutine, which receives and answers; Close stops it and closes the
// Transport.
type TransportPeer struct {
	tr    fabric.Transport
	self  fabric.Addr // the peer's address seen from the Transport under test
	to    fabric.Addr // where the peer's MADs go: the Transport under test
	agent fabric.AgentID
	wg    sync.WaitGroup

	mu        sync.Mutex // guards the fields below
	responder Responder
	seen      int
}

var _ Peer = (*TransportPeer)(nil)

// NewTransportPeer registers an agent owning Get, Set, Send and Trap of
// TestClass on tr, and starts answering with Echo until Handle says
// otherwise. self is tr's own address as seen from the Transport under
// test, and to is the address of the Transport under test. The
// TransportPeer owns tr.
func NewTransportPeer(ctx context.Context, tr fabric.Transport, self, to fabric.Addr) (*TransportPeer, error) {
	id, err := tr.Register(ctx, fabric.Agent{Class: TestClass, Version: TestVersion}.
		WithMethods(mad.MethodGet, mad.MethodSet, mad.MethodSend, mad.MethodTrap))
	if err != nil {
		tr.Close()
		return nil, fmt.Errorf("fabrictest: peer: %w", err)
	}
	p := &TransportPeer{tr: tr, self: self, to: to, agent: id, responder: Echo}
	p.wg.Go(p.serve)
	return p, nil
}

func (p *TransportPeer) serve() {
	var pk fabric.Packet
	for {
		if err := p.tr.Recv(context.Background(), &pk); err != nil {
			if errors.Is(err, net.ErrClosed) || errors.Is(err, fabric.ErrPeerGone) {
				return
			}
			continue
		}
		if pk.Status != 0 || len(pk.Data) < mad.HeaderSize || mad.MgmtClassOf(pk.Data) != TestClass {
			continue
		}
		p.mu.Lock()
		if !mad.IsResponse(pk.Data) {
			p.seen++
		}
		r := p.responder
		p.mu.Unlock()
		if r == nil {
			continue
		}
		resp, ok := r(pk.Data, pk.Addr)
		if !ok {
			continue
		}
		out := fabric.Packet{Agent: p.agent, Addr: pk.Addr, Data: resp}
		_ = p.tr.Send(context.Background(), &out)
	}
}

// Addr implements Peer.
func (p *TransportPeer) Addr() fabric.Addr { return p.self }

// Handle implements Peer.
func (p *TransportPeer) Handle(r Responder) {
	p.mu.Lock()
	p.responder, p.seen = r, 0
	p.mu.Unlock()
}

// Seen implements Peer.
func (p *TransportPeer) Seen() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen
}

// Send implements Peer.
func (p *TransportPeer) Send(ctx context.Context, b []byte) error {
	return p.tr.Send(ctx, &fabric.Packet{Agent: p.agent, Addr: p.to, Data: b})
}

// Close closes the Transport and waits for the goroutine.
func (p *TransportPeer) Close() error {
	err := p.tr.Close()
	p.wg.Wait()
	return err
}
