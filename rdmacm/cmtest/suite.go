// Package cmtest is the conformance suite of package rdmacm over a
// fabric.CMDevice: what librdmacm's layer and the device under it must do
// together, whichever device it is (the kernel's rdma_cm, its model in
// native/rdmacm/rdmacmtest, the user-space IB CM over the embedded
// simulator or ibsim). Run it from a test with Run.
//
// The suite checks behaviour, not timing: where an implementation answers
// through a fabric (the IB CM), it waits for events with generous
// deadlines, never a fixed sleep.
package cmtest

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/rdmacm"
)

// Hosts is an implementation under test.
type Hosts struct {
	// New returns a fresh CM with opts on a fabric whose ports include
	// LIDs; the suite closes it (New may also register cleanups).
	New func(t *testing.T, opts *rdmacm.Options) *rdmacm.CM
	// LIDs are four CA ports the CM can bind to and connect between; all
	// zero (RoCE ports have no LIDs) skips the cases that connect by LID.
	LIDs [4]uint16
	// IPv4 and IPv6 are IP addresses of two or more of those ports (their
	// IPoIB or RoCE netdevs), which New's CM resolves: the IP cases run
	// between IPv4[0] and IPv4[1] (IPv6[0] and IPv6[1]), and skip naming
	// the reason when they are not given.
	IPv4, IPv6 []netip.Addr
	// NoIPv6, when set, says why the host's kernel cannot connect by
	// IPv6 address (what librdmacm itself met there): the IPv6 cases
	// skip with it.
	NoIPv6 string
}

// wait is how long the suite waits for an event that must come.
const wait = 10 * time.Second

// Run runs every case of the suite on h.
func Run(t *testing.T, h Hosts) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, *suite)
	}{
		{"ConnectAcceptDisconnect", connectAcceptDisconnect},
		{"RejectAndNoListener", rejectAndNoListener},
		{"MigrateWithPendingEvents", migrateWithPendingEvents},
		{"MigrateWhileUnacked", migrateWhileUnacked},
		{"MigrateToNilSynchronous", migrateToNilSynchronous},
		{"DestroyWithUnackedEvents", destroyWithUnackedEvents},
		{"SyncListener", syncListener},
		{"UD", ud},
		{"ConnectError", connectError},
		{"CloseUnblocks", closeUnblocks},
		{"Errors", errorCases},
		{"RouteError", routeError},
		{"WildcardListener", wildcardListener},
		{"IPv4", func(t *testing.T, s *suite) { ipConnect(t, s, s.ip(false)) }},
		{"IPv6", func(t *testing.T, s *suite) { ipConnect(t, s, s.ip(true)) }},
		{"IPListeners", ipListeners},
		{"IPUD", ipUD},
		{"IPErrors", ipErrors},
	} {
		t.Run(c.name, func(t *testing.T) {
			if h.LIDs == ([4]uint16{}) && !strings.HasPrefix(c.name, "IP") {
				t.Skip("the hosts under test have no LIDs (RoCE ports): this case connects by LID (AF_IB)")
			}
			c.fn(t, newSuite(t, h, &rdmacm.Options{AckWait: time.Hour}))
		})
	}
}

// suite is one case's CM and helpers.
type suite struct {
	t          *testing.T
	c          *rdmacm.CM
	lids       [4]uint16
	ipv4, ipv6 []netip.Addr
	noIPv6     string
}

func newSuite(t *testing.T, h Hosts, opts *rdmacm.Options) *suite {
	c := h.New(t, opts)
	t.Cleanup(func() { c.Close() })
	return &suite{t: t, c: c, lids: h.LIDs, ipv4: h.IPv4, ipv6: h.IPv6, noIPv6: h.NoIPv6}
}

// ip returns two IP addresses of the family, skipping the case when the
// implementation gave fewer.
func (s *suite) ip(v6 bool) [2]netip.Addr {
	s.t.Helper()
	ips, fam := s.ipv4, "IPv4"
	if v6 {
		ips, fam = s.ipv6, "IPv6"
		if s.noIPv6 != "" {
			s.t.Skip(s.noIPv6)
		}
	}
	if len(ips) < 2 {
		s.t.Skipf("the hosts under test have fewer than two %s addresses (Hosts.%s)", fam, fam)
	}
	return [2]netip.Addr{ips[0], ips[1]}
}

func (s *suite) channel() *rdmacm.EventChannel {
	s.t.Helper()
	ch, err := s.c.CreateEventChannel()
	if err != nil {
		s.t.Fatal(err)
	}
	return ch
}

// event fetches ch's next event and checks its type.
func (s *suite) event(ch *rdmacm.EventChannel, want rdmacm.EventType) *rdmacm.Event {
	s.t.Helper()
	return Event(s.t, ch, want)
}

func (s *suite) ack(ev *rdmacm.Event) {
	s.t.Helper()
	Ack(s.t, s.c, ev)
}

// Event fetches ch's next event, waiting up to 10 s, and checks its type.
func Event(tb testing.TB, ch *rdmacm.EventChannel, want rdmacm.EventType) *rdmacm.Event {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), wait)
	defer cancel()
	ev, err := ch.GetEvent(ctx)
	if err != nil {
		tb.Fatalf("waiting for %v: %v", want, err)
	}
	if ev.Type != want {
		tb.Fatalf("event %v status %d, want %v", ev.Type, ev.Status, want)
	}
	return ev
}

// Ack acknowledges ev on c.
func Ack(tb testing.TB, c *rdmacm.CM, ev *rdmacm.Event) {
	tb.Helper()
	if err := c.AckEvent(ev); err != nil {
		tb.Fatal(err)
	}
}

// none checks that no event is queued on ch now.
func (s *suite) none(ch *rdmacm.EventChannel) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), 5*time.Millisecond)
	defer cancel()
	if ev, err := ch.GetEvent(ctx); err == nil {
		s.t.Fatalf("unexpected %v of id %d", ev.Type, ev.ID.Handle())
	}
}

// queued waits until n events are queued on ch; on a channel that reports
// only readiness (the kernel's), until one is.
func (s *suite) queued(ch *rdmacm.EventChannel, n int) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(s.t.Context(), wait)
	defer cancel()
	err := ch.WaitPending(ctx, n)
	if errors.Is(err, syscall.EOPNOTSUPP) {
		err = ch.Poll(ctx)
	}
	if err != nil {
		s.t.Fatalf("waiting for %d events: %v (%d queued)", n, err, ch.Pending())
	}
}

// eventually polls cond until it holds, failing after a generous deadline.
func (s *suite) eventually(what string, cond func() bool) {
	s.t.Helper()
	for deadline := time.Now().Add(wait); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			s.t.Fatalf("%s: not within %v", what, wait)
		}
	}
}

func (s *suite) listen(lid, port uint16, ps rdmacm.PortSpace) (*rdmacm.EventChannel, *rdmacm.ID) {
	s.t.Helper()
	ch := s.channel()
	id, err := s.c.CreateID(ch, ps, false)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.BindAddr(s.t.Context(), id, rdmacm.Addr{LID: lid, Port: port}); err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.Listen(s.t.Context(), id, 0); err != nil {
		s.t.Fatal(err)
	}
	return ch, id
}

// route makes an id on ch (nil: synchronous) from lid src to dst:port with
// its route resolved.
func (s *suite) route(ch *rdmacm.EventChannel, src, dst, port uint16, ps rdmacm.PortSpace) *rdmacm.ID {
	s.t.Helper()
	id, err := s.c.CreateID(ch, ps, false)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.ResolveAddr(s.t.Context(), id, &rdmacm.Addr{LID: src}, rdmacm.Addr{LID: dst, Port: port}); err != nil {
		s.t.Fatal(err)
	}
	if ch != nil {
		s.ack(s.event(ch, rdmacm.EventAddrResolved))
	}
	if err := s.c.ResolveRoute(s.t.Context(), id); err != nil {
		s.t.Fatal(err)
	}
	if ch != nil {
		s.ack(s.event(ch, rdmacm.EventRouteResolved))
	}
	return id
}

func (s *suite) connect(id *rdmacm.ID, p rdmacm.ConnParam) {
	s.t.Helper()
	if err := s.c.Connect(s.t.Context(), id, p); err != nil {
		s.t.Fatal(err)
	}
}

func (s *suite) accept(id *rdmacm.ID, p rdmacm.ConnParam) {
	s.t.Helper()
	if err := s.c.Accept(s.t.Context(), id, p); err != nil {
		s.t.Fatal(err)
	}
}

func (s *suite) destroy(ids ...*rdmacm.ID) {
	s.t.Helper()
	for _, id := range ids {
		if err := s.c.DestroyID(s.t.Context(), id); err != nil {
			s.t.Fatal(err)
		}
	}
}

// connectAcceptDisconnect: a whole connection, AF_IB private data (the
// messages' whole fields, no RDMA CM header), crossed resources, the
// CONNECT_REQUEST credited to the listener, the RTU sent only when the
// active side fetches the response, disconnect from both ends.
func connectAcceptDisconnect(t *testing.T, s *suite) {
	c, l0, l1 := s.c, s.lids[0], s.lids[1]
	lch, l := s.listen(l0, 7471, rdmacm.PSTCP)
	if a := l.LocalAddr(); a.LID != l0 || a.Port != 7471 {
		t.Errorf("listener address %v", a)
	}
	ach := s.channel()
	a := s.route(ach, l1, l0, 7471, rdmacm.PSTCP)
	if src, dst := a.LocalAddr(), a.PeerAddr(); src.LID != l1 || src.Port < 32768 || dst.LID != l0 || dst.Port != 7471 {
		t.Errorf("active addresses %v -> %v", src, dst)
	}
	s.connect(a, rdmacm.ConnParam{PrivateData: []byte("hello"), InitiatorDepth: 4, ResponderResources: 2})
	req := s.event(lch, rdmacm.EventConnectRequest)
	if req.ListenID != l || req.ID == l || string(req.Param.PrivateData[:5]) != "hello" || len(req.Param.PrivateData) != rdmacm.MaxConnectPrivateData {
		t.Fatalf("CONNECT_REQUEST of id %d (listener %d) private data %d bytes %q", req.ID.Handle(), l.Handle(), len(req.Param.PrivateData), req.Param.PrivateData)
	}
	if req.Param.ResponderResources != 4 || req.Param.InitiatorDepth != 2 {
		t.Errorf("crossed resources: %+v", req.Param)
	}
	if l.Unacked() != 1 || req.ID.Unacked() != 0 {
		t.Errorf("the CONNECT_REQUEST is credited to the listener: %d %d", l.Unacked(), req.ID.Unacked())
	}
	p := req.ID
	if pa := p.PeerAddr(); pa.LID != l1 {
		t.Errorf("passive peer address %v, want lid %d", pa, l1)
	}
	s.ack(req)
	s.accept(p, rdmacm.ConnParam{PrivateData: []byte("welcome")})
	s.queued(ach, 1)
	s.none(lch) // the RTU goes when the active side fetches the response
	est := s.event(ach, rdmacm.EventEstablished)
	if est.ID != a || string(est.Param.PrivateData[:7]) != "welcome" || len(est.Param.PrivateData) != rdmacm.MaxAcceptPrivateData {
		t.Errorf("ESTABLISHED of id %d private data %q", est.ID.Handle(), est.Param.PrivateData)
	}
	s.ack(est)
	s.ack(s.event(lch, rdmacm.EventEstablished))
	if a.State() != "established" || p.State() != "established" {
		t.Fatalf("states %s %s", a.State(), p.State())
	}
	if err := c.Disconnect(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	s.ack(s.event(lch, rdmacm.EventDisconnected))
	if err := c.Disconnect(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	s.ack(s.event(ach, rdmacm.EventDisconnected))
	if err := c.Disconnect(t.Context(), a); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("disconnect twice: %v", err)
	}
	s.destroy(a, p, l)
	if err := c.DestroyID(t.Context(), a); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("destroy twice: %v", err)
	}
	for _, ch := range []*rdmacm.EventChannel{ach, lch} {
		if ch.Pending() != 0 {
			t.Error("events left")
		}
		if err := ch.Close(); err != nil {
			t.Error(err)
		}
	}
}

// rejectAndNoListener: reject with private data, the REQ's private data
// limit, REJ 8 where nobody listens, and errors that name the call, the
// id and its state.
func rejectAndNoListener(t *testing.T, s *suite) {
	c, l0, l2 := s.c, s.lids[0], s.lids[2]
	lch, _ := s.listen(l0, 1, rdmacm.PSTCP)
	ach := s.channel()
	a := s.route(ach, l2, l0, 1, rdmacm.PSTCP)
	if err := c.Connect(t.Context(), a, rdmacm.ConnParam{PrivateData: make([]byte, rdmacm.MaxConnectPrivateData+1)}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("%d bytes of private data: %v", rdmacm.MaxConnectPrivateData+1, err)
	}
	s.connect(a, rdmacm.ConnParam{})
	req := s.event(lch, rdmacm.EventConnectRequest)
	if err := c.Reject(t.Context(), req.ID, []byte("go away")); err != nil {
		t.Fatal(err)
	}
	s.ack(req)
	rej := s.event(ach, rdmacm.EventRejected)
	if rej.ID != a || rej.Status != 28 || string(rej.Param.PrivateData[:7]) != "go away" || len(rej.Param.PrivateData) != rdmacm.MaxRejectPrivateData {
		t.Errorf("REJECTED %d %q", rej.Status, rej.Param.PrivateData)
	}
	s.ack(rej)
	if a.State() != "route resolved" {
		t.Errorf("state after REJECTED: %s", a.State())
	}
	if err := c.Reject(t.Context(), req.ID, nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("reject twice: %v", err)
	}
	// Nobody listens on port 2: the peer's CM answers REJ 8.
	b := s.route(ach, l2, l0, 2, rdmacm.PSTCP)
	s.connect(b, rdmacm.ConnParam{})
	if ev := s.event(ach, rdmacm.EventRejected); ev.ID != b || ev.Status != 8 {
		t.Errorf("no listener: status %d, want 8 (invalid service ID)", ev.Status)
	}
	idle, _ := c.CreateID(ach, rdmacm.PSTCP, false)
	err := c.Connect(t.Context(), idle, rdmacm.ConnParam{})
	if !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "rdmacm: connect: id ") || !strings.Contains(err.Error(), " is idle, not route resolved") {
		t.Errorf("connect of an idle id: %v", err)
	}
	if err := c.BindAddr(t.Context(), idle, rdmacm.Addr{LID: 0xbeef}); !errors.Is(err, syscall.EADDRNOTAVAIL) {
		t.Errorf("bind to a LID no port has: %v", err)
	}
	if err := c.BindAddr(t.Context(), idle, rdmacm.Addr{LID: l0, Port: 1}); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("bind to the listener's port: %v", err)
	}
}

// migrateWithPendingEvents: a listener moves with its unread
// CONNECT_REQUESTs (their new ids with it), an id with its unread events,
// in order, and later events follow the id.
func migrateWithPendingEvents(t *testing.T, s *suite) {
	c, l0 := s.c, s.lids[0]
	lch, l := s.listen(l0, 9, rdmacm.PSTCP)
	ach := s.channel()
	a := s.route(ach, s.lids[1], l0, 9, rdmacm.PSTCP)
	other := s.route(ach, s.lids[2], l0, 9, rdmacm.PSTCP)
	s.connect(a, rdmacm.ConnParam{})
	s.queued(lch, 1)
	s.connect(other, rdmacm.ConnParam{})
	s.queued(lch, 2)
	lch2 := s.channel()
	if err := c.MigrateID(t.Context(), l, lch2); err != nil {
		t.Fatal(err)
	}
	if lch.Pending() != 0 || lch2.Pending() == 0 {
		t.Fatalf("after migrating the listener: old %d, new %d", lch.Pending(), lch2.Pending())
	}
	for range 2 {
		req := s.event(lch2, rdmacm.EventConnectRequest)
		if req.ID.Channel() != lch2 || req.ListenID != l {
			t.Error("the new id is not on the listener's new channel")
		}
		s.accept(req.ID, rdmacm.ConnParam{})
		s.ack(req)
	}
	// Both responses unread on ach; a's moves with a, in order.
	s.queued(ach, 2)
	bch := s.channel()
	if err := c.MigrateID(t.Context(), a, bch); err != nil {
		t.Fatal(err)
	}
	if ev := s.event(bch, rdmacm.EventEstablished); ev.ID != a {
		t.Errorf("moved event of id %d", ev.ID.Handle())
	} else {
		s.ack(ev)
	}
	if ev := s.event(ach, rdmacm.EventEstablished); ev.ID != other {
		t.Errorf("stayed event of id %d", ev.ID.Handle())
	} else {
		s.ack(ev)
	}
	s.none(ach)
	s.ack(s.event(lch2, rdmacm.EventEstablished))
	s.ack(s.event(lch2, rdmacm.EventEstablished))
	if err := c.Disconnect(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	dis := s.event(lch2, rdmacm.EventDisconnected)
	s.ack(dis)
	if err := c.Disconnect(t.Context(), dis.ID); err != nil {
		t.Fatal(err)
	}
	s.ack(s.event(bch, rdmacm.EventDisconnected)) // later events of a go to bch
	s.none(ach)
	// Migrating to the channel the id is on loses nothing.
	if err := c.MigrateID(t.Context(), a, bch); err != nil {
		t.Fatal(err)
	}
	if err := lch2.Close(); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("closing a channel with ids: %v", err)
	}
}

// migrateWhileUnacked: migrate waits for the acks of the id's fetched
// events: with a short ctx it moves the id and fails with ETIMEDOUT;
// without, it returns after the ack; others' unacked events hold nothing.
func migrateWhileUnacked(t *testing.T, s *suite) {
	c, l0 := s.c, s.lids[0]
	lch, _ := s.listen(l0, 10, rdmacm.PSTCP)
	ach := s.channel()
	a := s.route(ach, s.lids[1], l0, 10, rdmacm.PSTCP)
	s.connect(a, rdmacm.ConnParam{})
	req := s.event(lch, rdmacm.EventConnectRequest)
	s.ack(req)
	s.accept(req.ID, rdmacm.ConnParam{})
	est := s.event(ach, rdmacm.EventEstablished) // fetched, not acked
	bch := s.channel()
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err := c.MigrateID(short, a, bch)
	if !errors.Is(err, syscall.ETIMEDOUT) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("migrate with an unacked event: %v", err)
	}
	if a.Channel() != bch {
		t.Error("the id did not move")
	}
	done := make(chan error, 1)
	go func() { done <- c.MigrateID(t.Context(), a, ach) }()
	s.ack(est)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if a.Unacked() != 0 || a.Channel() != ach {
		t.Errorf("unacked %d", a.Unacked())
	}
	// The passive side's ESTABLISHED, unacked on another id, holds nothing up.
	s.event(lch, rdmacm.EventEstablished)
	short2, cancel2 := context.WithTimeout(t.Context(), wait)
	defer cancel2()
	if err := c.MigrateID(short2, a, bch); err != nil {
		t.Errorf("migrate with others' unacked events: %v", err)
	}
}

// migrateToNilSynchronous: rdma_migrate_id(id, NULL) makes the id
// synchronous (its calls return with their event, a REJ is
// ECONNREFUSED); back to a channel, the parked event is acked.
func migrateToNilSynchronous(t *testing.T, s *suite) {
	c, l0 := s.c, s.lids[0]
	_, l := s.listen(l0, 11, rdmacm.PSTCP)
	ach := s.channel()
	a, _ := c.CreateID(ach, rdmacm.PSTCP, false)
	if err := c.ResolveAddr(t.Context(), a, &rdmacm.Addr{LID: s.lids[1]}, rdmacm.Addr{LID: l0, Port: 12}); err != nil {
		t.Fatal(err)
	}
	s.ack(s.event(ach, rdmacm.EventAddrResolved))
	if err := c.MigrateID(t.Context(), a, nil); err != nil {
		t.Fatal(err)
	}
	if a.Channel() != nil {
		t.Error("a synchronous id reports a channel")
	}
	if err := c.MigrateID(t.Context(), a, nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("migrate a synchronous id to nil: %v", err)
	}
	if err := c.ResolveRoute(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	if a.State() != "route resolved" || a.LastEvent().Type != rdmacm.EventRouteResolved {
		t.Errorf("state %s", a.State())
	}
	// connect blocks until the answer: REJ 8, nobody listens on port 12.
	err := c.Connect(t.Context(), a, rdmacm.ConnParam{})
	if !errors.Is(err, syscall.ECONNREFUSED) || a.LastEvent().Status != 8 {
		t.Errorf("synchronous connect to no listener: %v", err)
	}
	s.none(ach)
	if err := c.MigrateID(t.Context(), a, ach); err != nil {
		t.Fatal(err)
	}
	if a.Unacked() != 0 {
		t.Errorf("the parked event was not acked: %d", a.Unacked())
	}
	sy := s.route(nil, s.lids[2], l0, 11, rdmacm.PSTCP)
	if sy.State() != "route resolved" {
		t.Errorf("synchronous id: %s", sy.State())
	}
	s.destroy(sy, a, l)
}

// destroyWithUnackedEvents: destroy removes the id at once (its unread
// requests with it, rejecting their peers) and waits for the acks of the
// events already fetched.
func destroyWithUnackedEvents(t *testing.T, s *suite) {
	c, l0 := s.c, s.lids[0]
	lch, l := s.listen(l0, 14, rdmacm.PSTCP)
	ach := s.channel()
	a := s.route(ach, s.lids[1], l0, 14, rdmacm.PSTCP)
	b := s.route(ach, s.lids[2], l0, 14, rdmacm.PSTCP)
	s.connect(a, rdmacm.ConnParam{})
	s.queued(lch, 1)
	s.connect(b, rdmacm.ConnParam{})
	s.queued(lch, 2)
	req := s.event(lch, rdmacm.EventConnectRequest) // fetched, not acked
	done := make(chan error, 1)
	go func() { done <- c.DestroyID(t.Context(), l) }()
	// The id is gone at once; its unread request went with it, rejecting
	// its peer (consumer defined).
	s.eventually("the destroyed listener's unread request dropped", func() bool { return lch.Pending() == 0 })
	rej := s.event(ach, rdmacm.EventRejected)
	if rej.ID == req.ID || rej.Status != 28 {
		t.Errorf("REJECTED of id %d status %d", rej.ID.Handle(), rej.Status)
	}
	s.ack(rej)
	select {
	case err := <-done:
		t.Fatalf("destroy returned with an unacked event: %v", err)
	default:
	}
	s.ack(req)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The fetched request's id lives on; rejecting it answers its peer.
	if err := c.Reject(t.Context(), req.ID, nil); err != nil {
		t.Fatal(err)
	}
	s.ack(s.event(ach, rdmacm.EventRejected))
	// An id destroyed with a short ctx reports the unacked event.
	x := s.route(ach, s.lids[3], l0, 99, rdmacm.PSTCP)
	s.connect(x, rdmacm.ConnParam{})
	s.event(ach, rdmacm.EventRejected)
	short, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := c.DestroyID(short, x); !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("destroy with an unacked event: %v", err)
	}
}

// syncListener: a synchronous listener hands out synchronous ids, and a
// synchronous accept returns once the active side (another goroutine)
// has fetched the response and so sent the RTU.
func syncListener(t *testing.T, s *suite) {
	c, l0 := s.c, s.lids[0]
	l, _ := c.CreateID(nil, rdmacm.PSTCP, false)
	if err := c.BindAddr(t.Context(), l, rdmacm.Addr{LID: l0, Port: 40}); err != nil {
		t.Fatal(err)
	}
	if err := c.Listen(t.Context(), l, 0); err != nil {
		t.Fatal(err)
	}
	ach := s.channel()
	a := s.route(ach, s.lids[3], l0, 40, rdmacm.PSTCP)
	s.connect(a, rdmacm.ConnParam{PrivateData: []byte("sync")})
	ctx, cancel := context.WithTimeout(t.Context(), wait)
	defer cancel()
	p, err := c.GetRequest(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if l.Unacked() != 0 || p.Channel() != nil {
		t.Errorf("listener unacked %d, new id synchronous %v", l.Unacked(), p.Channel() == nil)
	}
	active := make(chan error, 1)
	go func() {
		ev, err := ach.GetEvent(ctx)
		if err == nil && ev.Type != rdmacm.EventEstablished {
			err = errors.New("active side got " + ev.Type.String())
		}
		if err == nil {
			err = c.AckEvent(ev)
		}
		active <- err
	}()
	if err := c.Accept(ctx, p, rdmacm.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	if err := <-active; err != nil {
		t.Fatal(err)
	}
	if p.State() != "established" {
		t.Errorf("state after a synchronous accept: %s", p.State())
	}
	s.destroy(a, p, l)
}

// ud: SIDR: the SIDR_REQ's whole private data field, the UDP port space's
// Q_Key and the passive side's QP number in the active side's ESTABLISHED,
// no event on the passive side.
func ud(t *testing.T, s *suite) {
	l0 := s.lids[0]
	lch, l := s.listen(l0, 20, rdmacm.PSUDP)
	ach := s.channel()
	a := s.route(ach, s.lids[3], l0, 20, rdmacm.PSUDP)
	s.connect(a, rdmacm.ConnParam{PrivateData: []byte("ud")})
	req := s.event(lch, rdmacm.EventConnectRequest)
	if string(req.Param.PrivateData[:2]) != "ud" || len(req.Param.PrivateData) != rdmacm.MaxUDPrivateData {
		t.Errorf("SIDR_REQ private data %d bytes", len(req.Param.PrivateData))
	}
	s.ack(req)
	s.accept(req.ID, rdmacm.ConnParam{QPNum: 0x4242})
	est := s.event(ach, rdmacm.EventEstablished)
	if est.Param.QPNum != 0x4242 || est.Param.QKey != rdmacm.UDPQKey {
		t.Errorf("UD ESTABLISHED qp_num %#x qkey %#x", est.Param.QPNum, est.Param.QKey)
	}
	s.ack(est)
	s.none(lch)
	s.destroy(a, req.ID, l)
}

// connectError: when the passive id goes away between its REP and the
// active side's fetch of the response, the RTU fails and librdmacm reports
// CONNECT_ERROR, then the REJ's REJECTED.
func connectError(t *testing.T, s *suite) {
	l0 := s.lids[0]
	lch, _ := s.listen(l0, 6, rdmacm.PSTCP)
	ach := s.channel()
	a := s.route(ach, s.lids[1], l0, 6, rdmacm.PSTCP)
	s.connect(a, rdmacm.ConnParam{})
	req := s.event(lch, rdmacm.EventConnectRequest)
	s.ack(req)
	s.accept(req.ID, rdmacm.ConnParam{})
	s.queued(ach, 1)
	s.destroy(req.ID)
	s.queued(ach, 2) // the response and the REJ
	ev := s.event(ach, rdmacm.EventConnectError)
	if ev.Status != -int(syscall.EINVAL) || a.State() != "route resolved" {
		t.Errorf("CONNECT_ERROR status %d, state %s", ev.Status, a.State())
	}
	s.ack(ev)
	if ev := s.event(ach, rdmacm.EventRejected); ev.Status != 28 {
		t.Errorf("REJECTED status %d, want 28", ev.Status)
	}
}

// closeUnblocks: closing a channel, or the CM, ends a get_cm_event
// waiting on it with net.ErrClosed; a closed CM makes nothing.
func closeUnblocks(t *testing.T, s *suite) {
	c := s.c
	ch := s.channel()
	other := s.channel()
	if _, err := c.CreateID(other, rdmacm.PSTCP, false); err != nil {
		t.Fatal(err)
	}
	for _, close := range []func() error{ch.Close, c.Close} {
		target := ch
		got := make(chan error, 1)
		go func() {
			_, err := target.GetEvent(t.Context())
			got <- err
		}()
		if err := close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-got:
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("get_cm_event after close: %v", err)
			}
		case <-time.After(wait):
			t.Fatal("get_cm_event still blocked after close")
		}
		ch = other
	}
	if _, err := c.CreateEventChannel(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("create_event_channel after Close: %v", err)
	}
}

// errorCases: librdmacm's argument and state errors.
func errorCases(t *testing.T, s *suite) {
	c := s.c
	if _, err := c.CreateID(nil, 0x999, false); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("bad port space: %v", err)
	}
	ch := s.channel()
	id, _ := c.CreateID(ch, rdmacm.PSTCP, false)
	if err := c.Connect(t.Context(), id, rdmacm.ConnParam{}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("connect before route: %v", err)
	}
	if err := c.Accept(t.Context(), id, rdmacm.ConnParam{}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("accept without a request: %v", err)
	}
	if err := ch.Close(); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("close a channel in use: %v", err)
	}
	if err := c.AckEvent(nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("ack nil: %v", err)
	}
	if err := c.ResolveAddr(t.Context(), id, nil, rdmacm.Addr{}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("resolve the wildcard: %v", err)
	}
	// Migrating to the same channel keeps the unread events, at the tail.
	a, _ := c.CreateID(ch, rdmacm.PSTCP, false)
	b, _ := c.CreateID(ch, rdmacm.PSTCP, false)
	for _, x := range []*rdmacm.ID{a, b} {
		if err := c.ResolveAddr(t.Context(), x, &rdmacm.Addr{LID: s.lids[1]}, rdmacm.Addr{LID: s.lids[0], Port: 5}); err != nil {
			t.Fatal(err)
		}
	}
	s.queued(ch, 2)
	if err := c.MigrateID(t.Context(), a, ch); err != nil {
		t.Fatal(err)
	}
	if ev := s.event(ch, rdmacm.EventAddrResolved); ev.ID != b {
		t.Errorf("first event of id %d, want b's (a's requeued at the tail)", ev.ID.Handle())
	} else {
		s.ack(ev)
	}
	if ev := s.event(ch, rdmacm.EventAddrResolved); ev.ID != a {
		t.Errorf("second event of id %d, want a's", ev.ID.Handle())
	} else {
		s.ack(ev)
	}
	if got := a.PeerAddr(); got.LID != s.lids[0] || got.Port != 5 || got.GID == ([16]byte{}) {
		t.Errorf("peer address %v", got)
	}
	if got := a.LocalAddr(); got.LID != s.lids[1] || got.GID == ([16]byte{}) {
		t.Errorf("local address %v", got)
	}
	// rdma_migrate_id(3) "returns -1 on error": to a closed channel
	// (EINVAL, the id stays where it was) and of a destroyed id (ENOENT).
	closed := s.channel()
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.MigrateID(t.Context(), a, closed); !errors.Is(err, syscall.EINVAL) || a.Channel() != ch {
		t.Errorf("migrate to a closed channel: %v, the id on %p (want %p)", err, a.Channel(), ch)
	}
	d, _ := c.CreateID(ch, rdmacm.PSTCP, false)
	if err := c.DestroyID(t.Context(), d); err != nil {
		t.Fatal(err)
	}
	if err := c.MigrateID(t.Context(), d, nil); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("migrate a destroyed id: %v, want ENOENT", err)
	}
	if err := ch.Close(); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("close with ids: %v", err)
	}
}

// NoPathGID returns a GID no port of the suite's fabrics has (and no SA knows).
func NoPathGID() mad.GID { return mad.NewGID(0xfe80000000000000, 0x0002c903deadbeef) }

// routeError: an AF_IB destination needs no lookup (ADDR_RESOLVED), and a
// route to a GID nobody has is ROUTE_ERROR with a negative errno, leaving
// the id addr resolved, so it may resolve again.
func routeError(t *testing.T, s *suite) {
	ch := s.channel()
	a, err := s.c.CreateID(ch, rdmacm.PSTCP, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.c.ResolveAddr(t.Context(), a, &rdmacm.Addr{LID: s.lids[1]}, rdmacm.Addr{GID: NoPathGID(), Port: 5}); err != nil {
		t.Fatal(err)
	}
	s.ack(s.event(ch, rdmacm.EventAddrResolved))
	if pa := a.PeerAddr(); pa.GID != NoPathGID() || pa.Port != 5 {
		t.Errorf("peer address %v", pa)
	}
	if err := s.c.ResolveRoute(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	ev := s.event(ch, rdmacm.EventRouteError)
	if ev.Status >= 0 || ev.ID != a {
		t.Errorf("ROUTE_ERROR of id %d status %d, want a negative errno", ev.ID.Handle(), ev.Status)
	}
	s.ack(ev)
	if a.State() != "addr resolved" {
		t.Errorf("state after ROUTE_ERROR: %s", a.State())
	}
	if err := s.c.Connect(t.Context(), a, rdmacm.ConnParam{}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("connect without a route: %v", err)
	}
}

// wildcardListener: a listener bound to the wildcard address (no LID or
// GID) says so and answers requests to every port of its host, each new id
// on the port its request came in on; the port number is then taken on
// every address.
func wildcardListener(t *testing.T, s *suite) {
	c := s.c
	lch := s.channel()
	l, err := c.CreateID(lch, rdmacm.PSTCP, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.BindAddr(t.Context(), l, rdmacm.Addr{Port: 31}); err != nil {
		t.Fatal(err)
	}
	if a := l.LocalAddr(); a.LID != 0 || a.GID != (mad.GID{}) || a.Port != 31 {
		t.Errorf("wildcard listener's address %v", a)
	}
	if err := c.Listen(t.Context(), l, 0); err != nil {
		t.Fatal(err)
	}
	ach := s.channel()
	for _, dst := range []uint16{s.lids[0], s.lids[2]} {
		a := s.route(ach, s.lids[1], dst, 31, rdmacm.PSTCP)
		s.connect(a, rdmacm.ConnParam{})
		req := s.event(lch, rdmacm.EventConnectRequest)
		if req.ListenID != l || req.ID.LocalAddr().LID != dst {
			t.Errorf("request to lid %d: listener %v, new id on %v", dst, req.ListenID == l, req.ID.LocalAddr())
		}
		s.ack(req)
		if err := c.Reject(t.Context(), req.ID, nil); err != nil {
			t.Fatal(err)
		}
		s.ack(s.event(ach, rdmacm.EventRejected))
	}
	o, _ := c.CreateID(lch, rdmacm.PSTCP, false)
	if err := c.BindAddr(t.Context(), o, rdmacm.Addr{LID: s.lids[0], Port: 31}); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("bind a port the wildcard listener has: %v", err)
	}
}

// listenIP listens on ip:port (the wildcard when ip is 0.0.0.0 or ::).
func (s *suite) listenIP(ip netip.Addr, port uint16, ps rdmacm.PortSpace) (*rdmacm.EventChannel, *rdmacm.ID) {
	s.t.Helper()
	ch := s.channel()
	id, err := s.c.CreateID(ch, ps, false)
	if err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.BindAddr(s.t.Context(), id, rdmacm.IPAddr(ip, port)); err != nil {
		s.t.Fatal(err)
	}
	if err := s.c.Listen(s.t.Context(), id, 0); err != nil {
		s.t.Fatal(err)
	}
	return ch, id
}

// routeIP makes an id on ch from src (invalid: the CM picks) to dst:port
// with its route resolved.
func (s *suite) routeIP(ch *rdmacm.EventChannel, src, dst netip.Addr, port uint16, ps rdmacm.PortSpace) *rdmacm.ID {
	s.t.Helper()
	id, err := s.c.CreateID(ch, ps, false)
	if err != nil {
		s.t.Fatal(err)
	}
	var sa *rdmacm.Addr
	if src.IsValid() {
		a := rdmacm.IPAddr(src, 0)
		sa = &a
	}
	if err := s.c.ResolveAddr(s.t.Context(), id, sa, rdmacm.IPAddr(dst, port)); err != nil {
		s.t.Fatal(err)
	}
	s.ack(s.event(ch, rdmacm.EventAddrResolved))
	if err := s.c.ResolveRoute(s.t.Context(), id); err != nil {
		s.t.Fatal(err)
	}
	s.ack(s.event(ch, rdmacm.EventRouteResolved))
	return id
}

// ipConnect: a connection between two IP addresses as librdmacm's callers
// make one: the active id's addresses after ADDR_RESOLVED, the REQ's
// private data limit with RDMA CM's IP header in front (56 bytes), the
// CONNECT_REQUEST reporting the 56 bytes after the header and its new
// id's addresses from the header (the listener's address and port, the
// peer's address and port), both ids migrated to new channels with their
// events, and the disconnect.
func ipConnect(t *testing.T, s *suite, ip [2]netip.Addr) {
	c := s.c
	lch, l := s.listenIP(ip[0], 7471, rdmacm.PSTCP)
	if a := l.LocalAddr(); a.IP != ip[0] || a.Port != 7471 {
		t.Errorf("listener address %v, want %v", a, netip.AddrPortFrom(ip[0], 7471))
	}
	ach := s.channel()
	a := s.routeIP(ach, ip[1], ip[0], 7471, rdmacm.PSTCP)
	src, dst := a.LocalAddr(), a.PeerAddr()
	if src.IP != ip[1] || src.Port == 0 || dst.IP != ip[0] || dst.Port != 7471 {
		t.Errorf("active addresses %v -> %v, want %v:* -> %v:7471", src, dst, ip[1], ip[0])
	}
	if err := c.Connect(t.Context(), a, rdmacm.ConnParam{PrivateData: make([]byte, rdmacm.MaxConnectPrivateDataIP+1)}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("%d bytes of private data with IP addresses: %v, want EINVAL", rdmacm.MaxConnectPrivateDataIP+1, err)
	}
	pd := bytes.Repeat([]byte("ip"), rdmacm.MaxConnectPrivateDataIP/2)
	s.connect(a, rdmacm.ConnParam{PrivateData: pd, InitiatorDepth: 1, ResponderResources: 1})
	req := s.event(lch, rdmacm.EventConnectRequest)
	if req.ListenID != l || !bytes.Equal(req.Param.PrivateData, pd) {
		t.Fatalf("CONNECT_REQUEST private data %d bytes %q, want the %d sent (RDMA CM's IP header stripped)", len(req.Param.PrivateData), req.Param.PrivateData, len(pd))
	}
	p := req.ID
	if la, pa := p.LocalAddr(), p.PeerAddr(); la.IP != ip[0] || la.Port != 7471 || pa.IP != ip[1] || pa.Port != src.Port {
		t.Errorf("new id's addresses %v <- %v, want %v:7471 <- %v", la, pa, ip[0], netip.AddrPortFrom(ip[1], src.Port))
	}
	s.ack(req)
	s.accept(p, rdmacm.ConnParam{PrivateData: []byte("welcome")})
	est := s.event(ach, rdmacm.EventEstablished)
	if est.ID != a || string(est.Param.PrivateData[:7]) != "welcome" || len(est.Param.PrivateData) != rdmacm.MaxAcceptPrivateData {
		t.Errorf("ESTABLISHED private data %d bytes %q", len(est.Param.PrivateData), est.Param.PrivateData)
	}
	s.ack(est)
	s.ack(s.event(lch, rdmacm.EventEstablished))
	// Both ids to new channels; the DISCONNECTED events come there.
	ach2, pch2 := s.channel(), s.channel()
	if err := c.MigrateID(t.Context(), a, ach2); err != nil {
		t.Fatal(err)
	}
	if err := c.MigrateID(t.Context(), p, pch2); err != nil {
		t.Fatal(err)
	}
	if err := c.Disconnect(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	if ev := s.event(pch2, rdmacm.EventDisconnected); ev.ID != p {
		t.Errorf("DISCONNECTED of id %d on the passive id's new channel", ev.ID.Handle())
	} else {
		s.ack(ev)
	}
	if err := c.Disconnect(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	s.ack(s.event(ach2, rdmacm.EventDisconnected))
	s.none(lch)
	s.none(ach)
	s.destroy(a, p, l)
}

// ipListeners: a wildcard AF_INET listener takes IPv4 requests and gives
// each new id the address the request named; with IPv6 addresses too,
// listeners of one port number on a port's IPv4 and IPv6 addresses at
// once (AF_INET and AF_INET6 ids never clash), each taking requests to
// its own address, and an IPv6 request to the AF_INET wildcard REJECTED
// 28 (cma finds no id, ib_cm rejects as consumer defined).
func ipListeners(t *testing.T, s *suite) {
	v4 := s.ip(false)
	var v6 [2]netip.Addr
	haveV6 := len(s.ipv6) >= 2 && s.noIPv6 == ""
	if haveV6 {
		v6 = [2]netip.Addr{s.ipv6[0], s.ipv6[1]}
	}
	c := s.c
	ach := s.channel()
	if haveV6 {
		l4ch, l4 := s.listenIP(v4[0], 7000, rdmacm.PSTCP)
		l6ch, l6 := s.listenIP(v6[0], 7000, rdmacm.PSTCP)
		for _, x := range []struct {
			src, dst netip.Addr
			ch       *rdmacm.EventChannel
			l        *rdmacm.ID
		}{{v4[1], v4[0], l4ch, l4}, {v6[1], v6[0], l6ch, l6}} {
			a := s.routeIP(ach, x.src, x.dst, 7000, rdmacm.PSTCP)
			s.connect(a, rdmacm.ConnParam{PrivateData: []byte(x.dst.String())})
			req := s.event(x.ch, rdmacm.EventConnectRequest)
			if req.ListenID != x.l || string(req.Param.PrivateData[:len(x.dst.String())]) != x.dst.String() {
				t.Errorf("request to %v reached the wrong listener", x.dst)
			}
			if err := c.Reject(t.Context(), req.ID, nil); err != nil {
				t.Fatal(err)
			}
			s.ack(req)
			s.ack(s.event(ach, rdmacm.EventRejected))
			s.destroy(a, req.ID)
		}
		s.destroy(l4, l6)
	}

	// The AF_INET wildcard on port 7001: IPv4 in, IPv6 REJECTED 28.
	wch, w := s.listenIP(netip.IPv4Unspecified(), 7001, rdmacm.PSTCP)
	a := s.routeIP(ach, v4[1], v4[0], 7001, rdmacm.PSTCP)
	s.connect(a, rdmacm.ConnParam{})
	req := s.event(wch, rdmacm.EventConnectRequest)
	if la, pa := req.ID.LocalAddr(), req.ID.PeerAddr(); la.IP != v4[0] || la.Port != 7001 || pa.IP != v4[1] {
		t.Errorf("wildcard listener's new id %v <- %v, want %v:7001 <- %v", la, pa, v4[0], v4[1])
	}
	s.ack(req)
	s.destroy(req.ID)
	if ev := s.event(ach, rdmacm.EventRejected); ev.ID != a || ev.Status != 28 {
		t.Errorf("destroying the new id: REJECTED status %d, want 28", ev.Status)
	} else {
		s.ack(ev)
	}
	ids := []*rdmacm.ID{a, w}
	if haveV6 {
		b := s.routeIP(ach, v6[1], v6[0], 7001, rdmacm.PSTCP)
		s.connect(b, rdmacm.ConnParam{})
		if ev := s.event(ach, rdmacm.EventRejected); ev.ID != b || ev.Status != 28 {
			t.Errorf("IPv6 request to an AF_INET wildcard listener: status %d, want 28", ev.Status)
		} else {
			s.ack(ev)
		}
		ids = append(ids, b)
	}
	s.none(wch)
	s.destroy(ids...)
}

// ipUD: a UD exchange between IP addresses: SIDR_REQ with RDMA CM's IP
// header, 180 bytes of private data at most and reported, the Q_Key of
// the UDP port space.
func ipUD(t *testing.T, s *suite) {
	ip := s.ip(false)
	c := s.c
	lch, l := s.listenIP(ip[0], 9000, rdmacm.PSUDP)
	ach := s.channel()
	a := s.routeIP(ach, ip[1], ip[0], 9000, rdmacm.PSUDP)
	if err := c.Connect(t.Context(), a, rdmacm.ConnParam{PrivateData: make([]byte, rdmacm.MaxUDPrivateDataIP+1)}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("%d bytes of UD private data with IP addresses: %v, want EINVAL", rdmacm.MaxUDPrivateDataIP+1, err)
	}
	pd := bytes.Repeat([]byte{0xa5}, rdmacm.MaxUDPrivateDataIP)
	s.connect(a, rdmacm.ConnParam{PrivateData: pd})
	req := s.event(lch, rdmacm.EventConnectRequest)
	if req.ListenID != l || !bytes.Equal(req.Param.PrivateData, pd) {
		t.Errorf("UD CONNECT_REQUEST private data %d bytes, want the %d sent", len(req.Param.PrivateData), len(pd))
	}
	if pa := req.ID.PeerAddr(); pa.IP != ip[1] {
		t.Errorf("UD new id's peer %v, want %v", pa, ip[1])
	}
	s.ack(req)
	s.accept(req.ID, rdmacm.ConnParam{QPNum: 0x77})
	est := s.event(ach, rdmacm.EventEstablished)
	if est.Param.QPNum != 0x77 || est.Param.QKey != rdmacm.UDPQKey {
		t.Errorf("UD ESTABLISHED qpn %#x qkey %#x", est.Param.QPNum, est.Param.QKey)
	}
	s.ack(est)
	s.destroy(a, req.ID, l)
}

// ipErrors: an address no local interface has (EADDRNOTAVAIL), the same
// address and port twice (EADDRINUSE), families mixed (EINVAL), and an IP
// address with a LID beside it.
func ipErrors(t *testing.T, s *suite) {
	ip := s.ip(false)
	c := s.c
	ch := s.channel()
	id, err := c.CreateID(ch, rdmacm.PSTCP, false)
	if err != nil {
		t.Fatal(err)
	}
	nowhere := netip.MustParseAddr("192.0.2.77") // TEST-NET-1: no host has it
	if err := c.BindAddr(t.Context(), id, rdmacm.IPAddr(nowhere, 1)); !errors.Is(err, syscall.EADDRNOTAVAIL) {
		t.Errorf("bind to %v: %v, want EADDRNOTAVAIL", nowhere, err)
	}
	if err := c.BindAddr(t.Context(), id, rdmacm.Addr{IP: ip[0], LID: 1, Port: 1}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("bind to an IP and a LID: %v, want EINVAL", err)
	}
	if err := c.BindAddr(t.Context(), id, rdmacm.IPAddr(ip[0], 7100)); err != nil {
		t.Fatal(err)
	}
	o, err := c.CreateID(ch, rdmacm.PSTCP, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.BindAddr(t.Context(), o, rdmacm.IPAddr(ip[0], 7100)); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("the same address and port twice: %v, want EADDRINUSE", err)
	}
	if len(s.ipv6) > 0 && s.noIPv6 == "" {
		if err := c.ResolveAddr(t.Context(), id, nil, rdmacm.IPAddr(s.ipv6[0], 1)); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("an IPv4-bound id resolving an IPv6 address: %v, want EINVAL", err)
		}
	}
	s.destroy(id, o)
}
