package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// A Handler answers one request a Session serves (Serve): it returns the
// whole response MAD, or nil to answer nothing. It runs on the Session's
// receive path: it must not block.
type Handler func(req *fabric.Packet) []byte

// servers are the agents a Session serves, by agent.
type servers struct {
	mu sync.Mutex
	h  map[fabric.AgentID]Handler
	// While a Serve registers its agent (pending), requests for agents
	// without a handler wait in early: the transport may deliver one for
	// the new agent before Serve has its id, and the kernel would have
	// queued it on the fd for the C server to read.
	pending int
	early   []fabric.Packet
}

// maxEarly bounds the requests kept while Serves register.
const maxEarly = 64

// Serve registers agent a (its class, version, OUI and the request
// methods it takes) and answers each request the port receives for it
// with what h returns, sent back to the requester (same TID, the
// request's address) until stop is called or the Session closes. It is
// how a Session is a responder: ibping -S, a vendor class's server.
func (s *Session) Serve(ctx context.Context, a fabric.Agent, h Handler) (stop func() error, err error) {
	if h == nil || a.Class == 0 {
		return nil, fmt.Errorf("engine: serve %s: %w (need a class and a handler)", a, fabric.ErrInvalid)
	}
	s.srv.mu.Lock()
	s.srv.pending++
	s.srv.mu.Unlock()
	id, err := s.tr.Register(ctx, a)
	if err != nil {
		s.replayEarly(-1, nil)
		return nil, fmt.Errorf("engine: serve %s: %w", a, err)
	}
	// One call of h at a time: the requests that came early are answered
	// here, beside the receive path's.
	var hmu sync.Mutex
	s.replayEarly(id, func(req *fabric.Packet) []byte {
		hmu.Lock()
		defer hmu.Unlock()
		return h(req)
	})
	var once sync.Once
	return func() error {
		var err error
		once.Do(func() {
			s.srv.mu.Lock()
			delete(s.srv.h, id)
			s.srv.mu.Unlock()
			err = s.tr.Unregister(context.Background(), id)
		})
		return err
	}, nil
}

// replayEarly ends a Serve's registration: it installs h for agent id
// (none when h is nil) and answers the requests that came for id while
// it registered; when no other Serve is registering, the requests left
// go where a request no server owns goes.
func (s *Session) replayEarly(id fabric.AgentID, h Handler) {
	s.srv.mu.Lock()
	s.srv.pending--
	if h != nil {
		if s.srv.h == nil {
			s.srv.h = map[fabric.AgentID]Handler{}
		}
		s.srv.h[id] = h
	}
	// The requests for id are answered now; when no other Serve is
	// registering, so are the others (or handed on).
	var now []fabric.Packet
	keep := s.srv.early[:0]
	for _, p := range s.srv.early {
		if s.srv.pending == 0 || (h != nil && p.Agent == id) {
			now = append(now, p)
		} else {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		keep = nil // the copies' buffers go
	}
	s.srv.early = keep
	s.srv.mu.Unlock()
	for i := range now {
		if !s.serve(&now[i]) {
			s.unsolicited(&now[i])
		}
	}
}

// serve answers p when one of the Session's servers owns its agent, and
// reports whether it did. While a Serve registers, a request no server
// owns is kept for it (replayEarly), and reported as taken.
func (s *Session) serve(p *fabric.Packet) bool {
	s.srv.mu.Lock()
	h := s.srv.h[p.Agent]
	if h == nil && s.srv.pending > 0 && len(s.srv.early) < maxEarly {
		q := *p
		q.Data = append([]byte(nil), p.Data...)
		s.srv.early = append(s.srv.early, q)
		s.srv.mu.Unlock()
		return true
	}
	s.srv.mu.Unlock()
	if h == nil {
		return false
	}
	resp := h(p)
	if len(resp) < mad.HeaderSize {
		return true
	}
	to := p.Addr
	if err := s.tr.Send(context.Background(), &fabric.Packet{Agent: p.Agent, Addr: to, Data: resp}); err != nil {
		s.log.Debug("engine: served response not sent", "to", to.LID, "tid", mad.TIDOf(resp), "err", err)
	}
	return true
}

// vendorAgents are the agents Do registers for vendor range 2 classes
// (0x30-0x4f), by class and version. Each carries the OpenIB OUI, as
// libibumad's umad_register registers every agent, whatever OUI the
// requests name (0 too, which no agent may carry): answers come back by
// TID, on the kernel, ibsim and the simulator alike.
type vendorAgents struct {
	mu sync.Mutex
	m  map[uint64]fabric.AgentID
}

// openIBOUI is the OUI umad_register gives a vendor class's agent.
const openIBOUI = 0x001405

// vendorAgent returns the Session's agent for class and version,
// registering it on first use.
func (s *Session) vendorAgent(ctx context.Context, class, version uint8) (fabric.AgentID, error) {
	k := uint64(class)<<8 | uint64(version)
	s.vend.mu.Lock()
	defer s.vend.mu.Unlock()
	if id, ok := s.vend.m[k]; ok {
		return id, nil
	}
	id, err := s.tr.Register(ctx, fabric.Agent{Class: class, Version: version, OUI: openIBOUI})
	if err != nil {
		return -1, fmt.Errorf("engine: register agent class 0x%02x OUI 0x%06x: %w", class, openIBOUI, err)
	}
	if s.vend.m == nil {
		s.vend.m = map[uint64]fabric.AgentID{}
	}
	s.vend.m[k] = id
	return id, nil
}

// isVendorRange2 says whether class is a vendor class with an OUI.
func isVendorRange2(class uint8) bool { return class >= 0x30 && class <= 0x4f }
