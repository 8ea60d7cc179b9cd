package fabrictest

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// OpenFunc opens a fresh Transport under test and its Peer. It registers
// on t whatever cleanup the Peer needs; the suite closes the Transport.
type OpenFunc func(t *testing.T) (tr fabric.Transport, peer Peer)

// SuiteOptions tune TestTransportOpts. A nil *SuiteOptions means defaults.
type SuiteOptions struct {
	// RealTime runs every case on the real clock instead of inside a
	// testing/synctest bubble: for backends doing real I/O (kernel,
	// ibsim), which cannot run in a bubble.
	RealTime bool
	// Timeout is the per-attempt MAD timeout the cases use; 0 means 50ms.
	Timeout time.Duration
}

// TestTransport checks every point of the fabric.Transport contract
// against the Transports open returns. Each case runs inside a
// testing/synctest bubble, so open must build the Transport and its Peer
// from in-process parts (Pipe, sim). The cases:
//
//   - a request with Timeout > 0 completes exactly once with its response;
//     a duplicate response is dropped;
//   - a request nobody answers completes once, after 1+Retries attempts
//     each waiting Timeout, with Status StatusTimeout, the request's
//     header and its TID as transmitted; a late response is dropped;
//   - Timeout == 0 gets no completion; Timeout < 0 waits for the response;
//   - the Transport owns the upper 32 bits of request TIDs, per agent;
//     a duplicate outstanding TID is refused with fabric.ErrInvalid;
//   - unsolicited MADs reach the agent owning (class, version, method),
//     others are dropped; a second owner gets fabric.ErrMethodInUse;
//   - MaxAgents agents fit, one more gets fabric.ErrTooManyAgents, and
//     Unregister frees the slot, the methods and the outstanding requests;
//   - Recv returns ctx.Err(), reuses Packet.Data, and after Close an error
//     wrapping fabric.ErrPortClosed (net.ErrClosed and syscall.EINVAL), as
//     Send and Register do; Close is idempotent and unblocks Recv;
//   - Send runs concurrently with Recv (run the suite with -race);
//   - Caps holds what the Transport does: a Retransmits count grows by
//     exactly the retries of a request nobody answers; a handler given to
//     SetHandler gets the completions Recv would (and Recv again once it
//     is removed); Failed is open while the peer is there, with FailErr;
//     MaxWindow is not negative.
func TestTransport(t *testing.T, open OpenFunc) { TestTransportOpts(t, open, nil) }

// TestTransportOpts is TestTransport with options.
func TestTransportOpts(t *testing.T, open OpenFunc, opts *SuiteOptions) {
	var o SuiteOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = 50 * time.Millisecond
	}
	for _, c := range suiteCases {
		t.Run(c.name, func(t *testing.T) {
			run := func(t *testing.T) {
				tr, peer := open(t)
				defer tr.Close()
				s := &suite{t: t, tr: tr, peer: peer, to: o.Timeout, bubble: !o.RealTime}
				c.fn(s)
			}
			if o.RealTime {
				run(t)
			} else {
				synctest.Test(t, run)
			}
		})
	}
}

type suite struct {
	t      *testing.T
	tr     fabric.Transport
	peer   Peer
	to     time.Duration
	bubble bool
}

var suiteCases = []struct {
	name string
	fn   func(s *suite)
}{
	{"Response", (*suite).response},
	{"TimeoutAfterRetries", (*suite).timeoutAfterRetries},
	{"TimeoutZero", (*suite).timeoutZero},
	{"TimeoutForever", (*suite).timeoutForever},
	{"TIDOwnership", (*suite).tidOwnership},
	{"DuplicateTID", (*suite).duplicateTID},
	{"Unsolicited", (*suite).unsolicited},
	{"AgentLimit", (*suite).agentLimit},
	{"Unregister", (*suite).unregister},
	{"RecvContext", (*suite).recvContext},
	{"Close", (*suite).close},
	{"ConcurrentSendRecv", (*suite).concurrent},
	{"Caps", (*suite).caps},
}

// NewMAD returns a 256-byte MAD of TestClass with the given class version,
// method and TID.
func NewMAD(version, method uint8, tid uint64) []byte {
	b := make([]byte, mad.Size)
	h := mad.Header{BaseVersion: 1, MgmtClass: TestClass, ClassVersion: version, Method: method, TID: tid, AttrID: 0xff00}
	h.Put(b)
	binary.BigEndian.PutUint64(b[mad.HeaderSize:], tid) // payload to check data integrity
	return b
}

func (s *suite) register(a fabric.Agent) fabric.AgentID {
	s.t.Helper()
	id, err := s.tr.Register(s.t.Context(), a)
	if err != nil {
		s.t.Fatalf("Register(%v): %v", a, err)
	}
	if id < 0 || id >= fabric.MaxAgents {
		s.t.Fatalf("Register(%v) = %d, want 0..%d", a, id, fabric.MaxAgents-1)
	}
	return id
}

func (s *suite) sendOnly() fabric.AgentID {
	s.t.Helper()
	return s.register(fabric.Agent{Class: TestClass, Version: TestVersion})
}

func (s *suite) send(id fabric.AgentID, b []byte, timeout time.Duration, retries int) {
	s.t.Helper()
	p := &fabric.Packet{Agent: id, Timeout: timeout, Retries: retries, Addr: s.peer.Addr(), Data: b}
	if err := s.tr.Send(s.t.Context(), p); err != nil {
		s.t.Fatalf("Send(TID 0x%016x): %v", mad.TIDOf(b), err)
	}
}

func (s *suite) recv(within time.Duration) (fabric.Packet, error) {
	ctx, cancel := context.WithTimeout(s.t.Context(), within)
	defer cancel()
	var p fabric.Packet
	err := s.tr.Recv(ctx, &p)
	return p, err
}

func (s *suite) mustRecv(within time.Duration) fabric.Packet {
	s.t.Helper()
	p, err := s.recv(within)
	if err != nil {
		s.t.Fatalf("Recv: %v", err)
	}
	return p
}

// expectNone checks that nothing is received for d.
func (s *suite) expectNone(d time.Duration, why string) {
	s.t.Helper()
	p, err := s.recv(d)
	if err == nil {
		s.t.Fatalf("%s: got a MAD (agent %d, status %d, method 0x%02x, TID 0x%016x), want none",
			why, p.Agent, p.Status, mad.MethodOf(p.Data), mad.TIDOf(p.Data))
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		s.t.Fatalf("%s: Recv: %v, want context.DeadlineExceeded", why, err)
	}
}

// settle lets a goroutine-based peer catch up before counting.
func (s *suite) settle() {
	if s.bubble {
		synctest.Wait()
	}
}

// recorder is a Responder that keeps what it saw and answers with answer.
type recorder struct {
	mu     sync.Mutex
	reqs   [][]byte
	answer Responder
}

func (r *recorder) respond(req []byte, from fabric.Addr) ([]byte, bool) {
	r.mu.Lock()
	if !mad.IsResponse(req) {
		r.reqs = append(r.reqs, append([]byte(nil), req...))
	}
	a := r.answer
	r.mu.Unlock()
	if a == nil {
		return nil, false
	}
	return a(req, from)
}

func (r *recorder) seen() [][]byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]byte(nil), r.reqs...)
}

func (s *suite) response() {
	id := s.sendOnly()
	rec := &recorder{answer: Echo}
	s.peer.Handle(rec.respond)
	const tid = 0xdeadbeef_12345678
	s.send(id, NewMAD(TestVersion, mad.MethodGet, tid), s.to, 2)
	p := s.mustRecv(10 * s.to)
	if p.Status != 0 || p.Agent != id || mad.MethodOf(p.Data) != mad.MethodGetResp {
		s.t.Fatalf("completion: agent %d status %d method 0x%02x, want agent %d status 0 GetResp",
			p.Agent, p.Status, mad.MethodOf(p.Data), id)
	}
	s.settle()
	seen := rec.seen()
	if len(seen) != 1 {
		s.t.Fatalf("peer saw %d requests, want 1", len(seen))
	}
	if got, want := mad.TIDOf(p.Data), mad.TIDOf(seen[0]); got != want {
		s.t.Errorf("response TID 0x%016x, want 0x%016x (as transmitted)", got, want)
	}
	if got := mad.TIDOf(p.Data) & 0xffffffff; got != tid&0xffffffff {
		s.t.Errorf("response TID low bits 0x%08x, want 0x%08x", got, uint32(tid&0xffffffff))
	}
	if got := binary.BigEndian.Uint64(p.Data[mad.HeaderSize:]); got != tid {
		s.t.Errorf("response payload 0x%016x, want 0x%016x", got, uint64(tid))
	}
	// Exactly once: a duplicate response is dropped, and no timeout follows.
	if err := s.peer.Send(s.t.Context(), p.Data); err != nil {
		s.t.Fatalf("peer Send: %v", err)
	}
	s.expectNone(5*s.to, "after the response")

	// Recv reuses the caller's buffer.
	s.send(id, NewMAD(TestVersion, mad.MethodGet, 2), s.to, 0)
	q := fabric.Packet{Data: make([]byte, 0, 2*mad.Size)}
	base := &q.Data[:1][0]
	ctx, cancel := context.WithTimeout(s.t.Context(), 10*s.to)
	defer cancel()
	if err := s.tr.Recv(ctx, &q); err != nil {
		s.t.Fatalf("Recv: %v", err)
	}
	if len(q.Data) != mad.Size || &q.Data[0] != base {
		s.t.Errorf("Recv: len %d, buffer reused %v; want %d, true", len(q.Data), &q.Data[0] == base, mad.Size)
	}
}

func (s *suite) timeoutAfterRetries() {
	id := s.sendOnly()
	rec := &recorder{}
	s.peer.Handle(rec.respond)
	const retries = 3
	const tid = 0x00000001_00c0ffee
	req := NewMAD(TestVersion, mad.MethodGet, tid)
	start := time.Now()
	s.send(id, req, s.to, retries)
	p := s.mustRecv(100 * s.to)
	elapsed := time.Since(start)
	if p.Status != fabric.StatusTimeout || p.Agent != id {
		s.t.Fatalf("completion: agent %d status %d, want agent %d status %d", p.Agent, p.Status, id, fabric.StatusTimeout)
	}
	if elapsed < (1+retries)*s.to {
		s.t.Errorf("timed out after %v, want >= %v", elapsed, (1+retries)*s.to)
	}
	s.settle()
	seen := rec.seen()
	if len(seen) != 1+retries || s.peer.Seen() != 1+retries {
		s.t.Fatalf("peer saw %d attempts (Seen %d), want %d", len(seen), s.peer.Seen(), 1+retries)
	}
	for i, r := range seen {
		if mad.TIDOf(r) != mad.TIDOf(seen[0]) {
			s.t.Errorf("attempt %d TID 0x%016x, want 0x%016x", i, mad.TIDOf(r), mad.TIDOf(seen[0]))
		}
	}
	if len(p.Data) < mad.HeaderSize {
		s.t.Fatalf("timeout record has %d bytes, want the request header at least", len(p.Data))
	}
	if got, want := mad.TIDOf(p.Data), mad.TIDOf(seen[0]); got != want {
		s.t.Errorf("timeout TID 0x%016x, want 0x%016x (as transmitted)", got, want)
	}
	if got := uint32(mad.TIDOf(p.Data)); got != uint32(tid&0xffffffff) {
		s.t.Errorf("timeout TID low bits 0x%08x, want 0x%08x", got, uint32(tid&0xffffffff))
	}
	if mad.MethodOf(p.Data) != mad.MethodGet || mad.AttrIDOf(p.Data) != mad.AttrIDOf(req) {
		s.t.Errorf("timeout record is not the request: method 0x%02x attr 0x%04x", mad.MethodOf(p.Data), mad.AttrIDOf(p.Data))
	}
	s.expectNone(5*s.to, "after the timeout")
	// A late response is dropped.
	if err := s.peer.Send(s.t.Context(), GetResp(seen[0], 0)); err != nil {
		s.t.Fatalf("peer Send: %v", err)
	}
	s.expectNone(5*s.to, "late response")
}

func (s *suite) timeoutZero() {
	id := s.sendOnly()
	s.peer.Handle(Echo)
	s.send(id, NewMAD(TestVersion, mad.MethodGet, 7), 0, 3)
	s.expectNone(20*s.to, "Timeout 0 (the response must be dropped, no timeout record)")
	s.settle()
	if n := s.peer.Seen(); n != 1 {
		s.t.Errorf("peer saw %d requests, want 1 (no retries with Timeout 0)", n)
	}
}

func (s *suite) timeoutForever() {
	id := s.sendOnly()
	s.peer.Handle(nil)
	s.send(id, NewMAD(TestVersion, mad.MethodGet, 8), -1, 0)
	s.expectNone(20*s.to, "Timeout < 0 never times out")
	s.peer.Handle(Echo)
	s.send(id, NewMAD(TestVersion, mad.MethodGet, 9), -1, 0)
	p := s.mustRecv(20 * s.to)
	if p.Status != 0 || uint32(mad.TIDOf(p.Data)) != 9 {
		s.t.Errorf("got status %d TID 0x%016x, want the response to TID 9", p.Status, mad.TIDOf(p.Data))
	}
}

func (s *suite) tidOwnership() {
	a, b := s.sendOnly(), s.sendOnly()
	rec := &recorder{answer: Echo}
	s.peer.Handle(rec.respond)
	const tid = 0xdeadbeef_00000042
	s.send(a, NewMAD(TestVersion, mad.MethodGet, tid), 10*s.to, 0)
	s.send(b, NewMAD(TestVersion, mad.MethodGet, tid), 10*s.to, 0)
	got := map[fabric.AgentID]uint64{}
	for range 2 {
		p := s.mustRecv(20 * s.to)
		if p.Status != 0 {
			s.t.Fatalf("agent %d: status %d", p.Agent, p.Status)
		}
		got[p.Agent] = mad.TIDOf(p.Data)
	}
	s.settle()
	seen := rec.seen()
	if len(seen) != 2 {
		s.t.Fatalf("peer saw %d requests, want 2", len(seen))
	}
	if mad.TIDOf(seen[0]) == mad.TIDOf(seen[1]) {
		s.t.Errorf("two agents transmitted the same TID 0x%016x: the upper bits must be the agent's", mad.TIDOf(seen[0]))
	}
	for _, r := range seen {
		if uint32(mad.TIDOf(r)) != uint32(tid&0xffffffff) {
			s.t.Errorf("transmitted TID 0x%016x lost the low 32 bits 0x%08x", mad.TIDOf(r), uint32(tid&0xffffffff))
		}
	}
	if len(got) != 2 || got[a] == got[b] {
		s.t.Errorf("completions per agent = %x, want one each with distinct TIDs", got)
	}
}

func (s *suite) duplicateTID() {
	id := s.sendOnly()
	s.peer.Handle(nil)
	s.send(id, NewMAD(TestVersion, mad.MethodGet, 0x1_00000005), s.to, 0)
	// Same low 32 bits, other user high bits: the transport replaces the
	// high bits, so this is the same TID.
	err := s.tr.Send(s.t.Context(), &fabric.Packet{Agent: id, Timeout: s.to, Addr: s.peer.Addr(),
		Data: NewMAD(TestVersion, mad.MethodGet, 0x2_00000005)})
	if !errors.Is(err, fabric.ErrInvalid) {
		s.t.Fatalf("second Send of an outstanding TID: %v, want an error wrapping fabric.ErrInvalid", err)
	}
	p := s.mustRecv(10 * s.to)
	if p.Status != fabric.StatusTimeout {
		s.t.Fatalf("status %d, want timeout", p.Status)
	}
	s.expectNone(5*s.to, "the refused duplicate")
	// Once completed, the TID is free again.
	s.send(id, NewMAD(TestVersion, mad.MethodGet, 5), s.to, 0)
	if p := s.mustRecv(10 * s.to); p.Status != fabric.StatusTimeout {
		s.t.Fatalf("status %d, want timeout", p.Status)
	}
}

func (s *suite) unsolicited() {
	x := s.register(fabric.Agent{Class: TestClass, Version: TestVersion}.WithMethods(mad.MethodSend, mad.MethodTrap))
	y := s.register(fabric.Agent{Class: TestClass, Version: TestVersion + 1}.WithMethods(mad.MethodSend))
	_, err := s.tr.Register(s.t.Context(), fabric.Agent{Class: TestClass, Version: TestVersion}.WithMethods(mad.MethodSet, mad.MethodSend))
	if !errors.Is(err, fabric.ErrMethodInUse) {
		s.t.Fatalf("Register of an owned method: %v, want fabric.ErrMethodInUse", err)
	}
	ctx := s.t.Context()
	inject := func(b []byte) {
		s.t.Helper()
		if err := s.peer.Send(ctx, b); err != nil {
			s.t.Fatalf("peer Send: %v", err)
		}
	}
	expect := func(id fabric.AgentID, method uint8, tid uint32) {
		s.t.Helper()
		p := s.mustRecv(20 * s.to)
		if p.Agent != id || p.Status != 0 || mad.MethodOf(p.Data) != method || uint32(mad.TIDOf(p.Data)) != tid {
			s.t.Fatalf("got agent %d status %d method 0x%02x TID 0x%016x, want agent %d method 0x%02x TID low 0x%08x",
				p.Agent, p.Status, mad.MethodOf(p.Data), mad.TIDOf(p.Data), id, method, tid)
		}
	}
	inject(NewMAD(TestVersion, mad.MethodSend, 0x101))
	expect(x, mad.MethodSend, 0x101)
	inject(NewMAD(TestVersion+1, mad.MethodSend, 0x102))
	expect(y, mad.MethodSend, 0x102)
	// Nobody owns Report, version 3, or this response: all dropped.
	inject(NewMAD(TestVersion, mad.MethodReport, 0x103))
	inject(NewMAD(TestVersion+2, mad.MethodSend, 0x104))
	inject(GetResp(NewMAD(TestVersion, mad.MethodGet, 0x77777777_00000105), 0))
	inject(NewMAD(TestVersion, mad.MethodTrap, 0x106))
	expect(x, mad.MethodTrap, 0x106)
	s.expectNone(5*s.to, "unowned MADs")
}

func (s *suite) agentLimit() {
	ids := map[fabric.AgentID]bool{}
	for range fabric.MaxAgents {
		id := s.sendOnly()
		if ids[id] {
			s.t.Fatalf("agent id %d given twice", id)
		}
		ids[id] = true
	}
	_, err := s.tr.Register(s.t.Context(), fabric.Agent{Class: TestClass, Version: TestVersion})
	if !errors.Is(err, fabric.ErrTooManyAgents) {
		s.t.Fatalf("agent %d: %v, want fabric.ErrTooManyAgents", fabric.MaxAgents+1, err)
	}
	if err := s.tr.Unregister(s.t.Context(), 5); err != nil {
		s.t.Fatalf("Unregister(5): %v", err)
	}
	if id := s.sendOnly(); id != 5 {
		s.t.Errorf("Register after freeing 5 = %d, want 5", id)
	}
}

func (s *suite) unregister() {
	x := s.register(fabric.Agent{Class: TestClass, Version: TestVersion}.WithMethods(mad.MethodSend))
	s.peer.Handle(nil)
	s.send(x, NewMAD(TestVersion, mad.MethodGet, 0x201), s.to, 1)
	ctx := s.t.Context()
	if err := s.tr.Unregister(ctx, x); err != nil {
		s.t.Fatalf("Unregister: %v", err)
	}
	s.expectNone(10*s.to, "an unregistered agent's request")
	err := s.tr.Send(ctx, &fabric.Packet{Agent: x, Addr: s.peer.Addr(), Data: NewMAD(TestVersion, mad.MethodGet, 0x202)})
	if !errors.Is(err, fabric.ErrNoAgent) {
		s.t.Errorf("Send from an unregistered agent: %v, want fabric.ErrNoAgent", err)
	}
	if err := s.tr.Unregister(ctx, x); !errors.Is(err, fabric.ErrNoAgent) {
		s.t.Errorf("second Unregister: %v, want fabric.ErrNoAgent", err)
	}
	if err := s.tr.Unregister(ctx, fabric.MaxAgents); !errors.Is(err, fabric.ErrNoAgent) {
		s.t.Errorf("Unregister(%d): %v, want fabric.ErrNoAgent", fabric.MaxAgents, err)
	}
	if err := s.peer.Send(ctx, NewMAD(TestVersion, mad.MethodSend, 0x203)); err != nil {
		s.t.Fatalf("peer Send: %v", err)
	}
	s.expectNone(5*s.to, "a MAD for an unregistered agent's method")
	y := s.register(fabric.Agent{Class: TestClass, Version: TestVersion}.WithMethods(mad.MethodSend))
	if err := s.peer.Send(ctx, NewMAD(TestVersion, mad.MethodSend, 0x204)); err != nil {
		s.t.Fatalf("peer Send: %v", err)
	}
	if p := s.mustRecv(20 * s.to); p.Agent != y || uint32(mad.TIDOf(p.Data)) != 0x204 {
		s.t.Errorf("got agent %d TID 0x%016x, want agent %d TID 0x204", p.Agent, mad.TIDOf(p.Data), y)
	}
}

func (s *suite) recvContext() {
	ctx, cancel := context.WithCancel(s.t.Context())
	cancel()
	var p fabric.Packet
	if err := s.tr.Recv(ctx, &p); !errors.Is(err, context.Canceled) {
		s.t.Errorf("Recv(canceled ctx) = %v, want context.Canceled", err)
	}
	ctx, cancel = context.WithCancel(s.t.Context())
	errc := make(chan error, 1)
	go func() { errc <- s.tr.Recv(ctx, &p) }()
	s.settle()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		s.t.Errorf("Recv canceled while blocked = %v, want context.Canceled", err)
	}
	s.expectNone(s.to, "empty queue")
}

func (s *suite) close() {
	id := s.sendOnly()
	errc := make(chan error, 1)
	go func() {
		var p fabric.Packet
		errc <- s.tr.Recv(context.Background(), &p)
	}()
	s.settle()
	if err := s.tr.Close(); err != nil {
		s.t.Fatalf("Close: %v", err)
	}
	if err := <-errc; !errors.Is(err, net.ErrClosed) || !errors.Is(err, syscall.EINVAL) {
		s.t.Errorf("blocked Recv after Close = %v, want net.ErrClosed and EINVAL", err)
	}
	if err := s.tr.Close(); err != nil {
		s.t.Errorf("second Close = %v, want nil", err)
	}
	var p fabric.Packet
	if err := s.tr.Recv(context.Background(), &p); !errors.Is(err, net.ErrClosed) || !errors.Is(err, syscall.EINVAL) {
		s.t.Errorf("Recv after Close = %v, want net.ErrClosed and EINVAL", err)
	}
	err := s.tr.Send(context.Background(), &fabric.Packet{Agent: id, Addr: s.peer.Addr(), Data: NewMAD(TestVersion, mad.MethodGet, 1)})
	if !errors.Is(err, net.ErrClosed) || !errors.Is(err, syscall.EINVAL) {
		s.t.Errorf("Send after Close = %v, want net.ErrClosed and EINVAL", err)
	}
	if _, err := s.tr.Register(context.Background(), fabric.Agent{}); !errors.Is(err, net.ErrClosed) || !errors.Is(err, syscall.EINVAL) {
		s.t.Errorf("Register after Close = %v, want net.ErrClosed and EINVAL", err)
	}
}

func (s *suite) concurrent() {
	const senders, each = 4, 64
	var ids [senders]fabric.AgentID
	for i := range ids {
		ids[i] = s.sendOnly()
	}
	s.peer.Handle(Echo)
	ctx := s.t.Context()
	var wg sync.WaitGroup
	errc := make(chan error, senders)
	for i := range senders {
		wg.Go(func() {
			for j := range each {
				tid := uint64(i)<<16 | uint64(j)
				p := &fabric.Packet{Agent: ids[i], Timeout: 100 * s.to, Addr: s.peer.Addr(),
					Data: NewMAD(TestVersion, mad.MethodGet, tid)}
				if err := s.tr.Send(ctx, p); err != nil {
					errc <- err
					return
				}
			}
		})
	}
	got := map[uint32]bool{}
	for len(got) < senders*each {
		p := s.mustRecv(200 * s.to)
		tid := uint32(mad.TIDOf(p.Data))
		if p.Status != 0 || got[tid] || p.Agent != ids[tid>>16] {
			s.t.Fatalf("completion agent %d status %d TID 0x%08x (dup %v)", p.Agent, p.Status, tid, got[tid])
		}
		got[tid] = true
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		s.t.Errorf("Send: %v", err)
	}
}

func (s *suite) caps() {
	c := s.tr.Caps()
	if c.MaxWindow < 0 {
		s.t.Errorf("Caps().MaxWindow = %d, want >= 0", c.MaxWindow)
	}
	if c.Failed != nil {
		if c.FailErr == nil {
			s.t.Error("Caps().Failed without FailErr")
		}
		select {
		case <-c.Failed:
			s.t.Error("Caps().Failed is closed while the peer is there")
		default:
		}
	}
	id := s.sendOnly()
	if c.Retransmits != nil {
		s.peer.Handle(nil)
		const retries = 2
		before := c.Retransmits()
		s.send(id, NewMAD(TestVersion, mad.MethodGet, 0x71), s.to, retries)
		if p := s.mustRecv(100 * s.to); p.Status != fabric.StatusTimeout {
			s.t.Fatalf("unanswered request: status %d, want a timeout", p.Status)
		}
		if got := c.Retransmits() - before; got != retries {
			s.t.Errorf("Caps().Retransmits grew by %d over a request timed out after %d retries, want %d", got, retries, retries)
		}
	}
	if c.SetHandler != nil {
		s.peer.Handle(Echo)
		got := make(chan fabric.Packet, 4)
		c.SetHandler(func(p *fabric.Packet) {
			q := *p
			q.Data = append([]byte(nil), p.Data...) // valid during the call only
			got <- q
		})
		s.send(id, NewMAD(TestVersion, mad.MethodGet, 0x72), s.to, 2)
		select {
		case p := <-got:
			if p.Status != 0 || p.Agent != id || mad.MethodOf(p.Data) != mad.MethodGetResp || uint32(mad.TIDOf(p.Data)) != 0x72 {
				s.t.Errorf("handler got agent %d status %d method 0x%02x TID 0x%016x, want the response to TID 0x72",
					p.Agent, p.Status, mad.MethodOf(p.Data), mad.TIDOf(p.Data))
			}
		case <-time.After(100 * s.to):
			s.t.Fatal("the handler got no completion")
		}
		c.SetHandler(nil)
		s.send(id, NewMAD(TestVersion, mad.MethodGet, 0x73), s.to, 2)
		if p := s.mustRecv(100 * s.to); p.Status != 0 || uint32(mad.TIDOf(p.Data)) != 0x73 {
			s.t.Errorf("after SetHandler(nil): status %d TID 0x%016x, want the response to TID 0x73 through Recv", p.Status, mad.TIDOf(p.Data))
		}
		if len(got) != 0 {
			s.t.Error("the handler was called after SetHandler(nil)")
		}
	}
}

// TestCapsPassed checks that a Transport wrapping another reports its
// capabilities (fabric.Caps): the same MaxWindow, Production, Failed, and
// a Retransmits count and a SetHandler exactly where the wrapped one has
// them. RMPP may be added by a wrapper that does it (the engine's RMPP
// driver), never dropped; a wrapper may add a SetHandler of its own.
func TestCapsPassed(t testing.TB, inner, outer fabric.Caps) {
	t.Helper()
	if outer.MaxWindow != inner.MaxWindow {
		t.Errorf("MaxWindow %d, wrapped %d", outer.MaxWindow, inner.MaxWindow)
	}
	if outer.Production != inner.Production {
		t.Errorf("Production %v, wrapped %v", outer.Production, inner.Production)
	}
	if inner.RMPP && !outer.RMPP {
		t.Error("RMPP dropped")
	}
	if (outer.Retransmits == nil) != (inner.Retransmits == nil) {
		t.Errorf("Retransmits counted %v, wrapped %v", outer.Retransmits != nil, inner.Retransmits != nil)
	}
	if inner.SetHandler != nil && outer.SetHandler == nil {
		t.Error("SetHandler dropped")
	}
	if outer.Failed != inner.Failed || (outer.FailErr == nil) != (inner.FailErr == nil) {
		t.Error("Failed/FailErr not passed on")
	}
}
