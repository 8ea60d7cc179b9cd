package kernel_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/native/rdmacm"
	"github.com/ibscript/ibscript/native/rdmacm/rdmacmtest"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// CMHosts is a host with four single-port CAs (Hca1..Hca4, LIDs 1..4) whose
// rdma_cm device is rdmacmtest's model, knowing the four ports' GIDs: the
// model's CM plays the kernel's between them.
func CMHosts(t testing.TB) (*kernel.Fabric, *rdmacmtest.Kernel) {
	t.Helper()
	h := umadtest.NewHost(umadtest.New(nil))
	for i := range 4 {
		h.AddCA(fmt.Sprintf("Hca%d", i+1), 1, 0x0002c90300001000+uint64(i)<<8,
			umadtest.HostPort{Num: 1, LID: uint16(i + 1), State: 4, PhysState: 5})
	}
	k := rdmacmtest.New()
	f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open, OpenCM: func() (rdmacm.Dev, error) { return k.Open(), nil }})
	t.Cleanup(func() { f.Close() })
	ports, err := f.Ports(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ports {
		k.AddGID(mad.NewGID(p.GIDPrefix, p.PortGUID))
	}
	return f, k
}

// kcm is an engine CM on the kernel fabric of CMHosts.
func kcm(t *testing.T, opts *engine.CMOptions) *engine.CM {
	t.Helper()
	f, _ := CMHosts(t)
	c := cmOn(t, f, f, nil, opts)
	if !c.Platform() {
		t.Fatal("the CM does not drive the kernel fabric's rdma_cm")
	}
	return c
}

// cmOn is an engine CM on cmf whose SA session runs on the default port of
// f with sopts; both are closed when the test ends.
func cmOn(t *testing.T, f, cmf fabric.Fabric, sopts *engine.Options, opts *engine.CMOptions) *engine.CM {
	t.Helper()
	tr, err := f.Open(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := engine.New(tr, sopts)
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.NewCM(cmf, s, opts)
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c
}

func kEvent(t *testing.T, ch *engine.EventChannel, want engine.CMEventType) *engine.CMEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	ev, err := ch.GetEvent(ctx)
	if err != nil {
		t.Fatalf("waiting for %v: %v", want, err)
	}
	if ev.Type != want {
		t.Fatalf("event %v status %d, want %v", ev.Type, ev.Status, want)
	}
	return ev
}

func kAck(t *testing.T, c *engine.CM, ev *engine.CMEvent) {
	t.Helper()
	if err := c.AckEvent(ev); err != nil {
		t.Fatal(err)
	}
}

func kNone(t *testing.T, ch *engine.EventChannel) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	if ev, err := ch.GetEvent(ctx); err == nil {
		t.Fatalf("unexpected %v of id %d", ev.Type, ev.ID.Handle())
	}
}

func kListen(t *testing.T, c *engine.CM, lid, port uint16, ps engine.PortSpace) (*engine.EventChannel, *engine.CMID) {
	t.Helper()
	ch, err := c.CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateID(ch, ps, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.BindAddr(t.Context(), id, engine.CMAddr{LID: lid, Port: port}); err != nil {
		t.Fatal(err)
	}
	if err := c.Listen(t.Context(), id, 0); err != nil {
		t.Fatal(err)
	}
	return ch, id
}

// kRoute makes an id on ch (nil: synchronous) from lid src to dst:port
// with its route resolved.
func kRoute(t *testing.T, c *engine.CM, ch *engine.EventChannel, src, dst, port uint16, ps engine.PortSpace) *engine.CMID {
	t.Helper()
	id, err := c.CreateID(ch, ps, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ResolveAddr(t.Context(), id, &engine.CMAddr{LID: src}, engine.CMAddr{LID: dst, Port: port}); err != nil {
		t.Fatal(err)
	}
	if ch != nil {
		kAck(t, c, kEvent(t, ch, engine.EventAddrResolved))
	}
	if err := c.ResolveRoute(t.Context(), id); err != nil {
		t.Fatal(err)
	}
	if ch != nil {
		kAck(t, c, kEvent(t, ch, engine.EventRouteResolved))
	}
	return id
}

func TestCMKernelConnectAcceptDisconnect(t *testing.T) {
	c := kcm(t, nil)
	lch, l := kListen(t, c, 1, 7471, engine.PSTCP)
	if a := l.LocalAddr(); a.LID != 1 || a.Port != 7471 {
		t.Errorf("listener address %v", a)
	}
	ach, _ := c.CreateEventChannel()
	a := kRoute(t, c, ach, 2, 1, 7471, engine.PSTCP)
	if src, dst := a.LocalAddr(), a.PeerAddr(); src.LID != 2 || src.Port < 32768 || dst.LID != 1 || dst.Port != 7471 {
		t.Errorf("active addresses %v -> %v", src, dst)
	}
	if err := c.Connect(t.Context(), a, engine.ConnParam{PrivateData: []byte("hello"), InitiatorDepth: 4, ResponderResources: 2}); err != nil {
		t.Fatal(err)
	}
	req := kEvent(t, lch, engine.EventConnectRequest)
	// AF_IB: the whole REQ private data field, no RDMA CM header.
	if req.ListenID != l || req.ID == l || string(req.Param.PrivateData[:5]) != "hello" || len(req.Param.PrivateData) != 92 {
		t.Fatalf("CONNECT_REQUEST %+v", req)
	}
	if req.Param.ResponderResources != 4 || req.Param.InitiatorDepth != 2 {
		t.Errorf("crossed resources: %+v", req.Param)
	}
	if l.Unacked() != 1 || req.ID.Unacked() != 0 {
		t.Errorf("the CONNECT_REQUEST is credited to the listener: %d %d", l.Unacked(), req.ID.Unacked())
	}
	p := req.ID
	if pa := p.PeerAddr(); pa.LID != 2 || pa.Port != a.LocalAddr().Port {
		t.Errorf("passive peer address %v, want lid 2 port %d", pa, a.LocalAddr().Port)
	}
	kAck(t, c, req)
	if err := c.Accept(t.Context(), p, engine.ConnParam{PrivateData: []byte("welcome")}); err != nil {
		t.Fatal(err)
	}
	kNone(t, lch) // the RTU goes when the active side fetches the response
	est := kEvent(t, ach, engine.EventEstablished)
	if est.ID != a || string(est.Param.PrivateData[:7]) != "welcome" || len(est.Param.PrivateData) != 196 {
		t.Errorf("ESTABLISHED %v private data %q", est.ID.Handle(), est.Param.PrivateData)
	}
	kAck(t, c, est)
	kAck(t, c, kEvent(t, lch, engine.EventEstablished))
	if a.State() != "established" || p.State() != "established" {
		t.Fatalf("states %s %s", a.State(), p.State())
	}
	if err := c.Disconnect(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	kAck(t, c, kEvent(t, lch, engine.EventDisconnected))
	if err := c.Disconnect(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	kAck(t, c, kEvent(t, ach, engine.EventDisconnected))
	if err := c.Disconnect(t.Context(), a); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("disconnect twice: %v", err)
	}
	for _, id := range []*engine.CMID{a, p, l} {
		if err := c.DestroyID(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.DestroyID(t.Context(), a); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("destroy twice: %v", err)
	}
	for _, ch := range []*engine.EventChannel{ach, lch} {
		if ch.Pending() != 0 {
			t.Error("events left")
		}
		if err := ch.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestCMKernelRejectAndNoListener(t *testing.T) {
	c := kcm(t, nil)
	lch, _ := kListen(t, c, 1, 1, engine.PSTCP)
	ach, _ := c.CreateEventChannel()
	a := kRoute(t, c, ach, 3, 1, 1, engine.PSTCP)
	if err := c.Connect(t.Context(), a, engine.ConnParam{PrivateData: make([]byte, 93)}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("93 bytes of private data: %v", err)
	}
	if err := c.Connect(t.Context(), a, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	req := kEvent(t, lch, engine.EventConnectRequest)
	if err := c.Reject(t.Context(), req.ID, []byte("go away")); err != nil {
		t.Fatal(err)
	}
	kAck(t, c, req)
	rej := kEvent(t, ach, engine.EventRejected)
	if rej.ID != a || rej.Status != 28 || string(rej.Param.PrivateData[:7]) != "go away" || len(rej.Param.PrivateData) != 148 {
		t.Errorf("REJECTED %d %q", rej.Status, rej.Param.PrivateData)
	}
	kAck(t, c, rej)
	if a.State() != "route resolved" {
		t.Errorf("state after REJECTED: %s", a.State())
	}
	if err := c.Reject(t.Context(), req.ID, nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("reject twice: %v", err)
	}
	// Nobody listens on port 2: the peer's CM answers REJ 8.
	b := kRoute(t, c, ach, 3, 1, 2, engine.PSTCP)
	if err := c.Connect(t.Context(), b, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	if ev := kEvent(t, ach, engine.EventRejected); ev.ID != b || ev.Status != 8 {
		t.Errorf("no listener: status %d, want 8 (invalid service ID)", ev.Status)
	}
	// Errors name the operation and the id.
	idle, _ := c.CreateID(ach, engine.PSTCP, false)
	err := c.Connect(t.Context(), idle, engine.ConnParam{})
	if !errors.Is(err, syscall.EINVAL) || err.Error() != fmt.Sprintf("rdmacm: connect: id %d is idle, not route resolved: rdmacm: connect %d: invalid argument", idle.Handle(), idle.Handle()) {
		t.Errorf("connect of an idle id: %v", err)
	}
	if err := c.BindAddr(t.Context(), idle, engine.CMAddr{LID: 0xbeef}); !errors.Is(err, syscall.EADDRNOTAVAIL) {
		t.Errorf("bind to a LID no port has: %v", err)
	}
	if err := c.BindAddr(t.Context(), idle, engine.CMAddr{LID: 1, Port: 1}); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("bind to the listener's port: %v", err)
	}
}

func TestCMKernelMigrateWithPendingEvents(t *testing.T) {
	c := kcm(t, &engine.CMOptions{AckWait: time.Hour})
	lch, l := kListen(t, c, 1, 9, engine.PSTCP)
	ach, _ := c.CreateEventChannel()
	a := kRoute(t, c, ach, 2, 1, 9, engine.PSTCP)
	other := kRoute(t, c, ach, 3, 1, 9, engine.PSTCP)
	for _, id := range []*engine.CMID{a, other} {
		if err := c.Connect(t.Context(), id, engine.ConnParam{}); err != nil {
			t.Fatal(err)
		}
	}
	// The listener moves with its two unread CONNECT_REQUESTs (and their
	// new ids, in the kernel).
	lch2, _ := c.CreateEventChannel()
	if err := c.MigrateID(t.Context(), l, lch2); err != nil {
		t.Fatal(err)
	}
	if lch.Pending() != 0 || lch2.Pending() != 1 {
		t.Fatalf("after migrating the listener: old %d, new %d", lch.Pending(), lch2.Pending())
	}
	for range 2 {
		req := kEvent(t, lch2, engine.EventConnectRequest)
		if req.ID.Channel() != lch2 || req.ListenID != l {
			t.Error("the new id is not on the listener's new channel")
		}
		if err := c.Accept(t.Context(), req.ID, engine.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		kAck(t, c, req)
	}
	// Both responses are unread on ach; a's moves with a, in order.
	bch, _ := c.CreateEventChannel()
	if err := c.MigrateID(t.Context(), a, bch); err != nil {
		t.Fatal(err)
	}
	if ev := kEvent(t, bch, engine.EventEstablished); ev.ID != a {
		t.Errorf("moved event of id %d", ev.ID.Handle())
	} else {
		kAck(t, c, ev)
	}
	if ev := kEvent(t, ach, engine.EventEstablished); ev.ID != other {
		t.Errorf("stayed event of id %d", ev.ID.Handle())
	} else {
		kAck(t, c, ev)
	}
	kNone(t, ach)
	// Later events of a go to bch.
	kAck(t, c, kEvent(t, lch2, engine.EventEstablished))
	kAck(t, c, kEvent(t, lch2, engine.EventEstablished))
	if err := c.Disconnect(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	dis := kEvent(t, lch2, engine.EventDisconnected)
	kAck(t, c, dis)
	if err := c.Disconnect(t.Context(), dis.ID); err != nil {
		t.Fatal(err)
	}
	kAck(t, c, kEvent(t, bch, engine.EventDisconnected))
	kNone(t, ach)
	// Migrating to the channel the id is on requeues nothing lost.
	if err := c.MigrateID(t.Context(), a, bch); err != nil {
		t.Fatal(err)
	}
	if err := lch2.Close(); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("closing a channel with ids: %v", err)
	}
}

func TestCMKernelMigrateWhileUnacked(t *testing.T) {
	synctest.Test(t, testCMKernelMigrateWhileUnacked)
}

// testCMKernelMigrateWhileUnacked runs in a synctest bubble: the model's
// waits and the CM's ack waits block on channels, so synctest.Wait tells
// that migrate is blocked, not merely slow.
func testCMKernelMigrateWhileUnacked(t *testing.T) {
	c := kcm(t, &engine.CMOptions{AckWait: time.Hour})
	lch, _ := kListen(t, c, 1, 10, engine.PSTCP)
	ach, _ := c.CreateEventChannel()
	a := kRoute(t, c, ach, 2, 1, 10, engine.PSTCP)
	if err := c.Connect(t.Context(), a, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	req := kEvent(t, lch, engine.EventConnectRequest)
	kAck(t, c, req)
	if err := c.Accept(t.Context(), req.ID, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	est := kEvent(t, ach, engine.EventEstablished) // fetched, not acked
	bch, _ := c.CreateEventChannel()
	// With a short ctx: the id moves, the wait times out.
	short, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err := c.MigrateID(short, a, bch)
	if !errors.Is(err, syscall.ETIMEDOUT) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("migrate with an unacked event: %v", err)
	}
	if a.Channel() != bch {
		t.Error("the id did not move")
	}
	// Without: it waits until the ack.
	done := make(chan error, 1)
	go func() { done <- c.MigrateID(t.Context(), a, ach) }()
	synctest.Wait()
	select {
	case err := <-done:
		t.Fatalf("migrate returned before the ack: %v", err)
	default:
	}
	kAck(t, c, est)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if a.Unacked() != 0 || a.Channel() != ach {
		t.Errorf("unacked %d", a.Unacked())
	}
	// The passive side's ESTABLISHED, unacked on another id, holds nothing up.
	kEvent(t, lch, engine.EventEstablished)
	if err := c.MigrateID(short, a, bch); err != nil {
		t.Errorf("migrate with others' unacked events: %v", err)
	}
}

func TestCMKernelMigrateToNilSynchronous(t *testing.T) {
	c := kcm(t, nil)
	_, l := kListen(t, c, 1, 11, engine.PSTCP)
	ach, _ := c.CreateEventChannel()
	a, _ := c.CreateID(ach, engine.PSTCP, false)
	if err := c.ResolveAddr(t.Context(), a, &engine.CMAddr{LID: 2}, engine.CMAddr{LID: 1, Port: 12}); err != nil {
		t.Fatal(err)
	}
	kAck(t, c, kEvent(t, ach, engine.EventAddrResolved))
	if err := c.MigrateID(t.Context(), a, nil); err != nil {
		t.Fatal(err)
	}
	if a.Channel() != nil {
		t.Error("a synchronous id reports a channel")
	}
	if err := c.MigrateID(t.Context(), a, nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("migrate a synchronous id to nil: %v", err)
	}
	// Synchronous: the call returns once the route is resolved.
	if err := c.ResolveRoute(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	if a.State() != "route resolved" || a.LastEvent().Type != engine.EventRouteResolved {
		t.Errorf("state %s", a.State())
	}
	// connect blocks until the answer: REJ 8, nobody listens on port 12.
	err := c.Connect(t.Context(), a, engine.ConnParam{})
	if !errors.Is(err, syscall.ECONNREFUSED) || a.LastEvent().Status != 8 {
		t.Errorf("synchronous connect to no listener: %v", err)
	}
	kNone(t, ach)
	if err := c.MigrateID(t.Context(), a, ach); err != nil {
		t.Fatal(err)
	}
	if a.Unacked() != 0 {
		t.Errorf("the parked event was not acked: %d", a.Unacked())
	}
	s := kRoute(t, c, nil, 3, 1, 11, engine.PSTCP)
	if s.State() != "route resolved" {
		t.Errorf("synchronous id: %s", s.State())
	}
	for _, id := range []*engine.CMID{s, a, l} {
		if err := c.DestroyID(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCMKernelDestroyWithUnackedEvents(t *testing.T) {
	synctest.Test(t, testCMKernelDestroyWithUnackedEvents)
}

func testCMKernelDestroyWithUnackedEvents(t *testing.T) {
	c := kcm(t, &engine.CMOptions{AckWait: time.Hour})
	lch, l := kListen(t, c, 1, 14, engine.PSTCP)
	ach, _ := c.CreateEventChannel()
	a := kRoute(t, c, ach, 2, 1, 14, engine.PSTCP)
	b := kRoute(t, c, ach, 3, 1, 14, engine.PSTCP)
	for _, id := range []*engine.CMID{a, b} {
		if err := c.Connect(t.Context(), id, engine.ConnParam{}); err != nil {
			t.Fatal(err)
		}
	}
	req := kEvent(t, lch, engine.EventConnectRequest) // fetched, not acked
	done := make(chan error, 1)
	go func() { done <- c.DestroyID(t.Context(), l) }()
	synctest.Wait()
	select {
	case err := <-done:
		t.Fatalf("destroy returned with an unacked event: %v", err)
	default:
	}
	// The id is gone at once; its unread request went with it, rejecting
	// its peer (consumer defined).
	if lch.Pending() != 0 {
		t.Error("the destroyed listener's unread request stayed")
	}
	rej := kEvent(t, ach, engine.EventRejected)
	if rej.ID == req.ID || rej.Status != 28 {
		t.Errorf("REJECTED of id %d status %d", rej.ID.Handle(), rej.Status)
	}
	kAck(t, c, rej)
	kAck(t, c, req)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// The fetched request's id lives on; rejecting it answers its peer.
	if err := c.Reject(t.Context(), req.ID, nil); err != nil {
		t.Fatal(err)
	}
	kAck(t, c, kEvent(t, ach, engine.EventRejected))
	// An id destroyed with a short ctx reports the unacked event.
	x := kRoute(t, c, ach, 4, 1, 99, engine.PSTCP)
	if err := c.Connect(t.Context(), x, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	kEvent(t, ach, engine.EventRejected)
	short, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if err := c.DestroyID(short, x); !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("destroy with an unacked event: %v", err)
	}
}

// TestCMKernelSyncListener: a synchronous listener hands out synchronous
// ids, and a synchronous accept returns once the active side (here another
// goroutine) has fetched the response and sent the RTU.
func TestCMKernelSyncListener(t *testing.T) {
	c := kcm(t, nil)
	l, _ := c.CreateID(nil, engine.PSTCP, false)
	if err := c.BindAddr(t.Context(), l, engine.CMAddr{LID: 1, Port: 40}); err != nil {
		t.Fatal(err)
	}
	if err := c.Listen(t.Context(), l, 0); err != nil {
		t.Fatal(err)
	}
	ach, _ := c.CreateEventChannel()
	a := kRoute(t, c, ach, 4, 1, 40, engine.PSTCP)
	if err := c.Connect(t.Context(), a, engine.ConnParam{PrivateData: []byte("sync")}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
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
		if err == nil && ev.Type != engine.EventEstablished {
			err = fmt.Errorf("active side got %v", ev.Type)
		}
		if err == nil {
			err = c.AckEvent(ev)
		}
		active <- err
	}()
	if err := c.Accept(ctx, p, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	if err := <-active; err != nil {
		t.Fatal(err)
	}
	if p.State() != "established" {
		t.Errorf("state after a synchronous accept: %s", p.State())
	}
	for _, id := range []*engine.CMID{a, p, l} {
		if err := c.DestroyID(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCMKernelUD(t *testing.T) {
	c := kcm(t, nil)
	lch, l := kListen(t, c, 1, 20, engine.PSUDP)
	ach, _ := c.CreateEventChannel()
	a := kRoute(t, c, ach, 4, 1, 20, engine.PSUDP)
	if err := c.Connect(t.Context(), a, engine.ConnParam{PrivateData: []byte("ud")}); err != nil {
		t.Fatal(err)
	}
	req := kEvent(t, lch, engine.EventConnectRequest)
	if string(req.Param.PrivateData[:2]) != "ud" || len(req.Param.PrivateData) != 216 {
		t.Errorf("SIDR_REQ private data %d bytes", len(req.Param.PrivateData))
	}
	kAck(t, c, req)
	if err := c.Accept(t.Context(), req.ID, engine.ConnParam{QPNum: 0x4242}); err != nil {
		t.Fatal(err)
	}
	est := kEvent(t, ach, engine.EventEstablished)
	if est.Param.QPNum != 0x4242 || est.Param.QKey != engine.UDPQKey {
		t.Errorf("UD ESTABLISHED qp_num %#x qkey %#x", est.Param.QPNum, est.Param.QKey)
	}
	kAck(t, c, est)
	kNone(t, lch)
	for _, id := range []*engine.CMID{a, req.ID, l} {
		if err := c.DestroyID(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCMKernelWithoutDevice: a kernel fabric on a host without rdma_cm
// leaves the engine on its own CM.
func TestCMKernelWithoutDevice(t *testing.T) {
	f := newFabric(t, twoCA())
	f2 := kernel.New(&kernel.Options{CMPath: t.TempDir() + "/rdma_cm"})
	defer f2.Close()
	if _, err := f2.OpenCM(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("OpenCM without the device: %v", err)
	}
	if c := cmOn(t, f, f2, nil, nil); c.Platform() {
		t.Error("the CM drives an rdma_cm device that does not exist")
	}
	var _ fabric.CMProvider = f2
}

// TestCMKernelRemoteLID: a destination named by a LID that no local port
// has is turned into a GID by a PathRecord from the SA (here a responder
// on another fd of the SM's port), as AF_IB needs; without an answer the
// call fails with EHOSTUNREACH.
func TestCMKernelRemoteLID(t *testing.T) {
	f, k := CMHosts(t)
	ctx := t.Context()
	remote := mad.GID{0xfe, 0x80, 9: 0x02, 10: 0xc9, 15: 0x77}
	k.AddGID(remote) // a port of another host, known to the model's CM
	c := cmOn(t, f, f, &engine.Options{Timeout: 20 * time.Millisecond, Retries: 1}, nil)
	ach, _ := c.CreateEventChannel()
	a, _ := c.CreateID(ach, engine.PSTCP, false)
	err := c.ResolveAddr(ctx, a, nil, engine.CMAddr{LID: 0x77, Port: 5})
	if !errors.Is(err, syscall.EHOSTUNREACH) {
		t.Fatalf("resolve a remote LID with no SA: %v", err)
	}
	sm, err := f.Open(ctx, "Hca1", 1) // the ports' SM LID is 1
	if err != nil {
		t.Fatal(err)
	}
	agent, err := sm.Register(ctx, fabric.Agent{Class: mad.ClassSubnAdm, Version: sa.ClassVersion}.WithMethods(mad.MethodGet))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		var p fabric.Packet
		for {
			if err := sm.Recv(context.Background(), &p); err != nil {
				return
			}
			var q sa.PathRec
			if mad.AttrIDOf(p.Data) != sa.AttrPathRecord || q.UnmarshalBinary(p.Data[sa.HeaderSize:]) != nil {
				continue
			}
			resp := make([]byte, mad.Size)
			copy(resp, p.Data[:sa.HeaderSize])
			resp[3] = mad.MethodGetResp
			sa.SetAttributeOffset(resp, uint16(sa.PathRecordLayout.Size/8))
			pr := sa.PathRec{SLID: q.SLID, DLID: q.DLID, SGID: mad.NewGID(0xfe80000000000000, 0x0002c90300001001), DGID: remote, PKey: 0xffff, NumbPath: 1}
			if _, err := pr.AppendBinary(resp[sa.HeaderSize:sa.HeaderSize]); err != nil {
				t.Errorf("PathRecord: %v", err)
			}
			if err := sm.Send(ctx, &fabric.Packet{Agent: agent, Addr: p.Addr, Data: resp}); err != nil {
				t.Errorf("SA send: %v", err)
			}
		}
	})
	defer func() { sm.Close(); wg.Wait() }()
	// A listener on every port (the wildcard GID) answers the remote GID.
	lch, _ := c.CreateEventChannel()
	l, _ := c.CreateID(lch, engine.PSTCP, false)
	if err := c.BindAddr(ctx, l, engine.CMAddr{Port: 5}); err != nil {
		t.Fatal(err)
	}
	if err := c.Listen(ctx, l, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.ResolveAddr(ctx, a, nil, engine.CMAddr{LID: 0x77, Port: 5}); err != nil {
		t.Fatal(err)
	}
	kAck(t, c, kEvent(t, ach, engine.EventAddrResolved))
	if pa := a.PeerAddr(); pa.GID != remote || pa.LID != 0x77 || pa.Port != 5 {
		t.Errorf("peer address %v", pa)
	}
	if err := c.ResolveRoute(ctx, a); err != nil {
		t.Fatal(err)
	}
	kAck(t, c, kEvent(t, ach, engine.EventRouteResolved))
	if err := c.Connect(ctx, a, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	if req := kEvent(t, lch, engine.EventConnectRequest); req.ID.LocalAddr().GID != remote {
		t.Errorf("the request came in on %v", req.ID.LocalAddr())
	}
}

// TestCMKernelConnectError: when the passive id goes away between its
// REP and the active side's fetch of the response, the RTU fails and
// librdmacm reports CONNECT_ERROR, then the REJ's REJECTED.
func TestCMKernelConnectError(t *testing.T) {
	c := kcm(t, nil)
	lch, _ := kListen(t, c, 1, 6, engine.PSTCP)
	ach, _ := c.CreateEventChannel()
	a := kRoute(t, c, ach, 2, 1, 6, engine.PSTCP)
	if err := c.Connect(t.Context(), a, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	req := kEvent(t, lch, engine.EventConnectRequest)
	kAck(t, c, req)
	if err := c.Accept(t.Context(), req.ID, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	if err := c.DestroyID(t.Context(), req.ID); err != nil {
		t.Fatal(err)
	}
	ev := kEvent(t, ach, engine.EventConnectError)
	if ev.Status != -int(syscall.EINVAL) || a.State() != "route resolved" {
		t.Errorf("CONNECT_ERROR status %d, state %s", ev.Status, a.State())
	}
	kAck(t, c, ev)
	if ev := kEvent(t, ach, engine.EventRejected); ev.Status != 28 {
		t.Errorf("REJECTED status %d, want 28", ev.Status)
	}
}

// TestCMKernelCloseUnblocks: closing a channel, or the CM, ends a
// get_cm_event blocked on it with net.ErrClosed, as on the engine's CM.
func TestCMKernelCloseUnblocks(t *testing.T) {
	f, k := CMHosts(t)
	c := cmOn(t, f, f, nil, nil)
	ch, _ := c.CreateEventChannel()
	other, _ := c.CreateEventChannel()
	if _, err := c.CreateID(other, engine.PSTCP, false); err != nil {
		t.Fatal(err)
	}
	for _, close := range []func() error{ch.Close, c.Close} {
		target := ch
		got := make(chan error, 1)
		go func() {
			_, err := target.GetEvent(t.Context())
			got <- err
		}()
		// Wait until the call blocks in the fd (the model counts it).
		for deadline := time.Now().Add(5 * time.Second); k.Waiters() == 0; runtime.Gosched() {
			if time.Now().After(deadline) {
				t.Fatal("get_cm_event never blocked")
			}
		}
		if err := close(); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-got:
			if !errors.Is(err, net.ErrClosed) {
				t.Errorf("get_cm_event after close: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("get_cm_event still blocked after close")
		}
		ch = other
	}
	if _, err := c.CreateEventChannel(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("create_event_channel after Close: %v", err)
	}
}

// TestCMDeviceAdapter: the adapter's own rules: a migrate naming a channel
// of another device is EINVAL, channels close once, a closed device opens
// no channel, a closed fabric no device, and the kernel's errnos come
// through.
func TestCMDeviceAdapter(t *testing.T) {
	f, _ := CMHosts(t)
	d1, err := f.OpenCM()
	if err != nil {
		t.Fatal(err)
	}
	d2, _ := f.OpenCM()
	a, err := d1.OpenChannel()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := d2.OpenChannel()
	id, err := a.CreateID(1, uint16(engine.PSTCP), 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.MigrateID(id, a); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("migrate from another device's channel: %v", err)
	}
	if _, err := a.CreateID(1, 0x999, 2); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("bad port space: %v", err)
	}
	if _, err := a.QueryAddr(99); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("query of an unknown id: %v", err)
	}
	if info, err := a.QueryAddr(id); err != nil || info.HasSrc || info.HasDst {
		t.Errorf("query of an unbound id: %+v %v", info, err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if err := d1.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := d1.OpenChannel(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("open a channel of a closed device: %v", err)
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreateID(2, uint16(engine.PSTCP), 2); !errors.Is(err, syscall.EBADF) {
		t.Errorf("a channel of a closed device: %v", err)
	}
	f.Close()
	if _, err := f.OpenCM(); !errors.Is(err, net.ErrClosed) {
		t.Errorf("OpenCM of a closed fabric: %v", err)
	}
}
