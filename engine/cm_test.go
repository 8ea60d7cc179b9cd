package engine_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cm"
	"github.com/ibscript/ibscript/sim"
)

// cmRig is a CM on the simulated 2sw2path4hca fabric and the LIDs of its
// four CA ports.
type cmRig struct {
	cm    *engine.CM
	f     *sim.Fabric
	lids  []uint16
	names []string // node of each of lids
	guids []uint64 // node GUID of each of lids
}

func newCMRig(tb testing.TB, opts *engine.CMOptions) *cmRig {
	tb.Helper()
	f, err := sim.Load("../tests/topologies/net.2sw2path4hca", nil)
	if err != nil {
		tb.Fatal(err)
	}
	tr, err := f.Open(context.Background(), "", 0)
	if err != nil {
		tb.Fatal(err)
	}
	s, err := engine.New(tr, nil)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := engine.NewCM(f, s, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close(); s.Close(); f.Close() })
	ports, err := f.Ports(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	r := &cmRig{cm: c, f: f}
	for _, p := range ports {
		if p.LID != 0 {
			r.lids = append(r.lids, p.LID)
			r.names = append(r.names, p.CAName)
			r.guids = append(r.guids, p.NodeGUID)
		}
	}
	if len(r.lids) < 3 {
		tb.Fatalf("only %d CA ports with LIDs", len(r.lids))
	}
	return r
}

func mustEvent(tb testing.TB, ch *engine.EventChannel, want engine.CMEventType) *engine.CMEvent {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
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

func ack(tb testing.TB, c *engine.CM, ev *engine.CMEvent) {
	tb.Helper()
	if err := c.AckEvent(ev); err != nil {
		tb.Fatal(err)
	}
}

// listen makes a listener on lid:port with its own channel.
func (r *cmRig) listen(tb testing.TB, lid, port uint16, ps engine.PortSpace) (*engine.EventChannel, *engine.CMID) {
	tb.Helper()
	ch, _ := r.cm.CreateEventChannel()
	id, err := r.cm.CreateID(ch, ps, false)
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.cm.BindAddr(tb.Context(), id, engine.CMAddr{LID: lid, Port: port}); err != nil {
		tb.Fatal(err)
	}
	if err := r.cm.Listen(tb.Context(), id, 0); err != nil {
		tb.Fatal(err)
	}
	return ch, id
}

// route makes an active id from src to dst:port with its route resolved.
func (r *cmRig) route(tb testing.TB, ch *engine.EventChannel, src, dst, port uint16, ps engine.PortSpace) *engine.CMID {
	tb.Helper()
	id, err := r.cm.CreateID(ch, ps, false)
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.cm.ResolveAddr(tb.Context(), id, &engine.CMAddr{LID: src}, engine.CMAddr{LID: dst, Port: port}); err != nil {
		tb.Fatal(err)
	}
	if ch != nil {
		ack(tb, r.cm, mustEvent(tb, ch, engine.EventAddrResolved))
	}
	if err := r.cm.ResolveRoute(tb.Context(), id); err != nil {
		tb.Fatal(err)
	}
	if ch != nil {
		ack(tb, r.cm, mustEvent(tb, ch, engine.EventRouteResolved))
	}
	return id
}

func TestCMConnectAcceptDisconnect(t *testing.T) {
	r := newCMRig(t, nil)
	c := r.cm
	lch, l := r.listen(t, r.lids[0], 7471, engine.PSTCP)
	ach, _ := c.CreateEventChannel()
	a := r.route(t, ach, r.lids[1], r.lids[0], 7471, engine.PSTCP)
	if err := c.Connect(t.Context(), a, engine.ConnParam{PrivateData: []byte("hello"), InitiatorDepth: 4, ResponderResources: 2}); err != nil {
		t.Fatal(err)
	}
	req := mustEvent(t, lch, engine.EventConnectRequest)
	if req.ListenID != l || req.ID == l || string(req.Param.PrivateData[:5]) != "hello" || len(req.Param.PrivateData) != 56 {
		t.Fatalf("CONNECT_REQUEST: %+v", req)
	}
	if req.Param.ResponderResources != 4 || req.Param.InitiatorDepth != 2 {
		t.Errorf("crossed resources: %+v", req.Param)
	}
	if l.Unacked() != 1 || req.ID.Unacked() != 0 {
		t.Errorf("CONNECT_REQUEST is credited to the listener: %d %d", l.Unacked(), req.ID.Unacked())
	}
	p := req.ID
	ack(t, c, req)
	if err := c.Accept(t.Context(), p, engine.ConnParam{PrivateData: []byte("welcome")}); err != nil {
		t.Fatal(err)
	}
	est := mustEvent(t, ach, engine.EventEstablished)
	if string(est.Param.PrivateData[:7]) != "welcome" || len(est.Param.PrivateData) != 196 {
		t.Errorf("ESTABLISHED private data %q", est.Param.PrivateData)
	}
	ack(t, c, est)
	ack(t, c, mustEvent(t, lch, engine.EventEstablished))
	if a.State() != "established" || p.State() != "established" {
		t.Fatalf("states %s %s", a.State(), p.State())
	}
	if err := c.Disconnect(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	ack(t, c, mustEvent(t, lch, engine.EventDisconnected))
	if err := c.Disconnect(t.Context(), p); err != nil {
		t.Fatal(err)
	}
	ack(t, c, mustEvent(t, ach, engine.EventDisconnected))
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
			t.Errorf("%d events left", ch.Pending())
		}
		if err := ch.Close(); err != nil {
			t.Error(err)
		}
	}
}

func TestCMRejectAndNoListener(t *testing.T) {
	r := newCMRig(t, nil)
	c := r.cm
	lch, _ := r.listen(t, r.lids[0], 1, engine.PSTCP)
	ach, _ := c.CreateEventChannel()
	a := r.route(t, ach, r.lids[1], r.lids[0], 1, engine.PSTCP)
	if err := c.Connect(t.Context(), a, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	req := mustEvent(t, lch, engine.EventConnectRequest)
	if err := c.Reject(t.Context(), req.ID, []byte("go away")); err != nil {
		t.Fatal(err)
	}
	ack(t, c, req)
	rej := mustEvent(t, ach, engine.EventRejected)
	if rej.Status != 28 || string(rej.Param.PrivateData[:7]) != "go away" || len(rej.Param.PrivateData) != 148 {
		t.Errorf("REJECTED %d %q", rej.Status, rej.Param.PrivateData)
	}
	ack(t, c, rej)
	b := r.route(t, ach, r.lids[1], r.lids[0], 2, engine.PSTCP)
	if err := c.Connect(t.Context(), b, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	if ev := mustEvent(t, ach, engine.EventRejected); ev.Status != 8 {
		t.Errorf("no listener: status %d, want 8 (invalid service ID)", ev.Status)
	}
	if err := c.Connect(t.Context(), b, engine.ConnParam{PrivateData: make([]byte, 57)}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("57 bytes of private data: %v", err)
	}
}

func TestCMMigrate(t *testing.T) {
	r := newCMRig(t, &engine.CMOptions{AckWait: time.Hour})
	c := r.cm
	lch, l := r.listen(t, r.lids[0], 9, engine.PSTCP)
	ach, _ := c.CreateEventChannel()
	a := r.route(t, ach, r.lids[1], r.lids[0], 9, engine.PSTCP)
	other := r.route(t, ach, r.lids[2], r.lids[0], 9, engine.PSTCP)
	if err := c.Connect(t.Context(), a, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Connect(t.Context(), other, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	// The listener moves with its unread CONNECT_REQUESTs.
	lch2, _ := c.CreateEventChannel()
	waitPending(t, lch, 2)
	if err := c.MigrateID(t.Context(), l, lch2); err != nil {
		t.Fatal(err)
	}
	waitPending(t, lch2, 2)
	if lch.Pending() != 0 || lch2.Pending() != 2 {
		t.Fatalf("pending after migrating the listener: old %d new %d", lch.Pending(), lch2.Pending())
	}
	var passive []*engine.CMID
	for range 2 {
		req := mustEvent(t, lch2, engine.EventConnectRequest)
		passive = append(passive, req.ID)
		if req.ID.Channel() != lch2 {
			t.Error("the new id is not on the listener's new channel")
		}
		if err := c.Accept(t.Context(), req.ID, engine.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		ack(t, c, req)
	}
	// Both ESTABLISHED are queued on ach, then migrate a.
	e1 := mustEvent(t, ach, engine.EventEstablished)
	first := e1.ID
	mover := a
	if first == a {
		mover = other
	}
	ack(t, c, e1)
	waitPending(t, ach, 1)
	bch, _ := c.CreateEventChannel()
	if err := c.MigrateID(t.Context(), mover, bch); err != nil {
		t.Fatal(err)
	}
	if ach.Pending() != 0 || bch.Pending() != 1 {
		t.Fatalf("pending after migrate: old %d new %d", ach.Pending(), bch.Pending())
	}
	ev := mustEvent(t, bch, engine.EventEstablished)
	if ev.ID != mover {
		t.Fatal("moved event names another id")
	}
	// Fetched and not acked: migrate waits for the ack (TestCMMigrateWaitsForAck).
	ack(t, c, ev)
	if err := c.MigrateID(t.Context(), mover, ach); err != nil {
		t.Fatal(err)
	}
	if mover.Channel() != ach {
		t.Error("not on ach after migrate")
	}
	ack(t, c, mustEvent(t, lch2, engine.EventEstablished))
	ack(t, c, mustEvent(t, lch2, engine.EventEstablished))
	for _, p := range passive {
		if err := c.Disconnect(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	ev = mustEvent(t, ach, engine.EventDisconnected)
	if ev.ID != mover {
		ack(t, c, ev)
		ev = mustEvent(t, ach, engine.EventDisconnected)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	err := c.MigrateID(ctx, mover, bch)
	cancel()
	if !errors.Is(err, syscall.ETIMEDOUT) {
		t.Fatalf("migrate with an unacked event and a deadline: %v", err)
	}
	ack(t, c, ev)
	// To nil: synchronous; twice is EINVAL.
	if err := c.MigrateID(t.Context(), mover, nil); err != nil {
		t.Fatal(err)
	}
	if mover.Channel() != nil {
		t.Error("synchronous id has a channel")
	}
	if err := c.MigrateID(t.Context(), mover, nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("sync to nil: %v", err)
	}
}

func TestCMSyncMode(t *testing.T) {
	r := newCMRig(t, nil)
	c := r.cm
	lch, _ := r.listen(t, r.lids[0], 5, engine.PSTCP)
	a := r.route(t, nil, r.lids[1], r.lids[0], 5, engine.PSTCP)
	done := make(chan error, 1)
	go func() { done <- c.Connect(context.Background(), a, engine.ConnParam{}) }()
	req := mustEvent(t, lch, engine.EventConnectRequest)
	if err := c.Accept(t.Context(), req.ID, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	ack(t, c, req)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if a.LastEvent().Type != engine.EventEstablished {
		t.Errorf("sync connect completed with %v", a.LastEvent().Type)
	}
	ack(t, c, mustEvent(t, lch, engine.EventEstablished))
	if err := c.DestroyID(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	ack(t, c, mustEvent(t, lch, engine.EventDisconnected))
}

func TestCMUD(t *testing.T) {
	r := newCMRig(t, nil)
	c := r.cm
	lch, _ := r.listen(t, r.lids[0], 5, engine.PSUDP)
	ach, _ := c.CreateEventChannel()
	a := r.route(t, ach, r.lids[1], r.lids[0], 5, engine.PSUDP)
	if err := c.Connect(t.Context(), a, engine.ConnParam{PrivateData: []byte("ud")}); err != nil {
		t.Fatal(err)
	}
	req := mustEvent(t, lch, engine.EventConnectRequest)
	if err := c.Accept(t.Context(), req.ID, engine.ConnParam{QPNum: 0x4242}); err != nil {
		t.Fatal(err)
	}
	ev := mustEvent(t, ach, engine.EventEstablished)
	if ev.Param.QPNum != 0x4242 || ev.Param.QKey != engine.UDPQKey {
		t.Errorf("UD ESTABLISHED %+v", ev.Param)
	}
}

// TestCMUnreachable: a REQ to a port whose CM never answers (a raw agent
// owns CM Sends there and stays silent) is resent MaxCMRetries times on the
// CM timer, then UNREACHABLE -ETIMEDOUT (fake time).
func TestCMUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newCMRig(t, nil)
		c := r.cm
		hung := newRawPeer(t, r.f, r.names[2])
		ch, _ := c.CreateEventChannel()
		a := r.route(t, ch, r.lids[1], r.lids[2], 1, engine.PSTCP)
		start := time.Now()
		if err := c.Connect(t.Context(), a, engine.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		ev, err := ch.GetEvent(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != engine.EventUnreachable || ev.Status != -int(syscall.ETIMEDOUT) {
			t.Fatalf("%v %d", ev.Type, ev.Status)
		}
		// 16 tries of 4.096us x 2^20 + 2 x 4.096us x 2^18 (the SA's
		// PathRecord PacketLifeTime 0x12, as OpenSM answers).
		if got, want := time.Since(start), 16*(4294967296+2147483648)*time.Nanosecond; got != want {
			t.Errorf("UNREACHABLE after %v, want %v", got, want)
		}
		c.AckEvent(ev)
		// What the peer got: the 16 REQs and nothing else (Linux's CM
		// sends no REJ when its REQ times out).
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		var attrs []string
		for {
			var pk fabric.Packet
			if err := hung.tr.Recv(ctx, &pk); err != nil {
				break
			}
			attrs = append(attrs, cm.Name(mad.AttrIDOf(pk.Data)))
		}
		if want := strings.Repeat("REQ ", 16); strings.Join(attrs, " ")+" " != want {
			t.Errorf("the silent peer got %v, want 16 REQs", attrs)
		}
	})
}

// TestCMNoListenerAnywhere: a port of the fabric where no id of the CM was
// ever bound answers as Linux's CM does on every port: a REQ gets REJ 8
// (invalid service ID) at once, a SIDR_REQ SIDR_REP status 1, instead of
// silence and UNREACHABLE after the CM retries (fake time: no timer runs).
func TestCMNoListenerAnywhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newCMRig(t, nil)
		c := r.cm
		ch, _ := c.CreateEventChannel()
		start := time.Now()
		a := r.route(t, ch, r.lids[1], r.lids[2], 7, engine.PSTCP)
		if err := c.Connect(t.Context(), a, engine.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		ev, err := ch.GetEvent(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != engine.EventRejected || ev.Status != int(cm.RejInvalidServiceID) {
			t.Fatalf("connect to a port where nothing listens: %v status %d, want REJECTED 8", ev.Type, ev.Status)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("REJECTED after %v of CM timers, want at once", d)
		}
		c.AckEvent(ev)
		if st := a.State(); st != "route resolved" {
			t.Errorf("after REJ: %s", st)
		}
		if err := c.DestroyID(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		u2, err := c.CreateID(ch, engine.PSUDP, true)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.ResolveAddr(t.Context(), u2, &engine.CMAddr{LID: r.lids[0]}, engine.CMAddr{LID: r.lids[len(r.lids)-1], Port: 9}); err != nil {
			t.Fatal(err)
		}
		ack(t, c, mustEvent(t, ch, engine.EventAddrResolved))
		if err := c.ResolveRoute(t.Context(), u2); err != nil {
			t.Fatal(err)
		}
		ack(t, c, mustEvent(t, ch, engine.EventRouteResolved))
		if err := c.Connect(t.Context(), u2, engine.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		ev = mustEvent(t, ch, engine.EventUnreachable)
		if ev.Status != int(cm.SIDRUnsupportedSID) || time.Since(start) != 0 {
			t.Errorf("SIDR_REQ to a port where nothing listens: UNREACHABLE status %d after %v, want 1 at once", ev.Status, time.Since(start))
		}
		ack(t, c, ev)
	})
}

func TestCMErrors(t *testing.T) {
	r := newCMRig(t, nil)
	c := r.cm
	if _, err := c.CreateID(nil, 0x999, false); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("bad port space: %v", err)
	}
	ch, _ := c.CreateEventChannel()
	id, _ := c.CreateID(ch, engine.PSTCP, false)
	if err := c.Connect(t.Context(), id, engine.ConnParam{}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("connect before route: %v", err)
	}
	if err := ch.Close(); !errors.Is(err, syscall.EBUSY) {
		t.Errorf("close a channel in use: %v", err)
	}
	if err := c.BindAddr(t.Context(), id, engine.CMAddr{LID: 0xbeef}); !errors.Is(err, syscall.EADDRNOTAVAIL) {
		t.Errorf("bind to a foreign lid: %v", err)
	}
	if err := c.AckEvent(nil); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("ack nil: %v", err)
	}
	_, _ = r.listen(t, r.lids[0], 3, engine.PSTCP)
	id2, _ := c.CreateID(ch, engine.PSTCP, false)
	if err := c.BindAddr(t.Context(), id2, engine.CMAddr{LID: r.lids[0], Port: 3}); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("bind to a listener's port: %v", err)
	}
}

// waitPending waits until ch has n unread events.
func waitPending(tb testing.TB, ch *engine.EventChannel, n int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ch.WaitPending(ctx, n); err != nil {
		tb.Fatalf("%d events pending, want %d: %v", ch.Pending(), n, err)
	}
}

// TestCMMigrateWaitsForAck: migrate_id blocks while the id has an event
// fetched and not acked, and returns once it is acked (fake time: the
// wait is durable, nothing else runs).
func TestCMMigrateWaitsForAck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newCMRig(t, nil)
		c := r.cm
		a1, _ := c.CreateEventChannel()
		a2, _ := c.CreateEventChannel()
		id, _ := c.CreateID(a1, engine.PSTCP, false)
		if err := c.ResolveAddr(t.Context(), id, nil, engine.CMAddr{LID: r.lids[0], Port: 1}); err != nil {
			t.Fatal(err)
		}
		ev, err := a1.GetEvent(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- c.MigrateID(context.Background(), id, a2) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("migrate returned with an unacked event: %v", err)
		default:
		}
		time.Sleep(time.Second) // fake time: a second passes, migrate still waits
		synctest.Wait()
		if len(done) != 0 {
			t.Fatal("migrate returned with an unacked event")
		}
		ack(t, c, ev)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if id.Channel() != a2 || time.Since(start) != time.Second {
			t.Errorf("channel %p (a2 %p), waited %v", id.Channel(), a2, time.Since(start))
		}
		// Without an ack, the bound: DefaultAckWait.
		if err := c.ResolveRoute(t.Context(), id); err != nil {
			t.Fatal(err)
		}
		if _, err := a2.GetEvent(t.Context()); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		err = c.MigrateID(context.Background(), id, a1)
		if !errors.Is(err, syscall.ETIMEDOUT) || time.Since(start) != engine.DefaultAckWait {
			t.Errorf("after %v: %v", time.Since(start), err)
		}
	})
}

// TestCMSyncListener: a synchronous listener's new ids are synchronous,
// each on a private channel of its own: accept returns once the RTU came.
func TestCMSyncListener(t *testing.T) {
	r := newCMRig(t, nil)
	c := r.cm
	l, _ := c.CreateID(nil, engine.PSTCP, false)
	if err := c.BindAddr(t.Context(), l, engine.CMAddr{LID: r.lids[0], Port: 4}); err != nil {
		t.Fatal(err)
	}
	if err := c.Listen(t.Context(), l, 0); err != nil {
		t.Fatal(err)
	}
	ach, _ := c.CreateEventChannel()
	a := r.route(t, ach, r.lids[1], r.lids[0], 4, engine.PSTCP)
	if err := c.Connect(t.Context(), a, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	p, err := c.GetRequest(t.Context(), l)
	if err != nil {
		t.Fatal(err)
	}
	if p.Channel() != nil || l.Unacked() != 0 {
		t.Errorf("new id on channel %p, listener unacked %d", p.Channel(), l.Unacked())
	}
	if err := c.Accept(t.Context(), p, engine.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	if p.State() != "established" || p.LastEvent().Type != engine.EventEstablished {
		t.Errorf("after a synchronous accept: %s, %v", p.State(), p.LastEvent().Type)
	}
	ack(t, c, mustEvent(t, ach, engine.EventEstablished))
	if _, err := c.GetRequest(t.Context(), a); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("get_request on an active id: %v", err)
	}
	for _, id := range []*engine.CMID{p, a, l} {
		if err := c.DestroyID(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
}

// rawPeer is a CM peer played by hand on a transport of its own.
type rawPeer struct {
	tr    fabric.Transport
	agent fabric.AgentID
	lid   uint16
}

func newRawPeer(tb testing.TB, f *sim.Fabric, node string) *rawPeer {
	tb.Helper()
	tr, err := f.Attach(node, 1)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tr.Close() })
	ag := fabric.Agent{Class: mad.ClassCM, Version: cm.ClassVersion}.WithMethods(mad.MethodSend)
	id, err := tr.Register(context.Background(), ag)
	if err != nil {
		tb.Fatal(err)
	}
	return &rawPeer{tr: tr, agent: id, lid: tr.Port().LID}
}

func (p *rawPeer) send(tb testing.TB, dlid uint16, b []byte) {
	tb.Helper()
	if err := p.tr.Send(context.Background(), &fabric.Packet{Agent: p.agent, Addr: fabric.Addr{LID: dlid, QPN: 1, QKey: cm.QKey}, Data: b}); err != nil {
		tb.Fatal(err)
	}
}

// recv returns the next CM message's attribute and body.
func (p *rawPeer) recv(tb testing.TB) (uint16, []byte) {
	tb.Helper()
	var pk fabric.Packet
	if err := p.tr.Recv(tb.Context(), &pk); err != nil {
		tb.Fatal(err)
	}
	return mad.AttrIDOf(pk.Data), append([]byte(nil), pk.Data[mad.HeaderSize:]...)
}

// TestCMTimersAgainstSilentPeer: a hand-played active peer sends a REQ and
// then stays silent: the CM's REP is resent MaxCMRetries times and the
// passive id gets UNREACHABLE -ETIMEDOUT; on a second connection the peer
// answers with an RTU, then ignores the DREQ, which ends in DISCONNECTED
// -ETIMEDOUT. Fake time.
func TestCMTimersAgainstSilentPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := sim.Load("../tests/topologies/net.2sw2path4hca", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tr, _ := f.Open(context.Background(), "", 0)
		s, _ := engine.New(tr, nil)
		defer s.Close()
		c, _ := engine.NewCM(f, s, nil)
		defer c.Close()
		peer := newRawPeer(t, f, "Hca2")
		srv, _ := f.Attach("Hca1", 1)
		srvLID := srv.Port().LID
		srv.Close()
		lch, _ := c.CreateEventChannel()
		l, _ := c.CreateID(lch, engine.PSTCP, false)
		if err := c.BindAddr(t.Context(), l, engine.CMAddr{LID: srvLID, Port: 99}); err != nil {
			t.Fatal(err)
		}
		if err := c.Listen(t.Context(), l, 0); err != nil {
			t.Fatal(err)
		}
		req := func(comm uint32) {
			r := cm.REQ{LocalCommID: comm, ServiceID: uint64(engine.PSTCP)<<16 | 99, LocalQPN: 0x77,
				LocalCMResponseTimeout: 16, RemoteCMResponseTimeout: 16, MaxCMRetries: 2, PKey: 0xffff,
				PrimaryLocalLID: peer.lid, PrimaryRemoteLID: srvLID, PrimaryLocalACKTimeout: 1}
			b, body := cm.NewMAD(cm.AttrREQ, uint64(comm))
			r.AppendBinary(body[:0])
			peer.send(t, srvLID, b)
		}
		// Connection 1: no RTU.
		req(0x1001)
		if attr, _ := peer.recv(t); attr != cm.AttrMRA {
			t.Fatalf("after REQ: %s, want MRA", cm.Name(attr))
		}
		ev := mustEvent(t, lch, engine.EventConnectRequest)
		ack(t, c, ev)
		start := time.Now()
		if err := c.Accept(t.Context(), ev.ID, engine.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		reps := 0
		for reps < 3 {
			attr, body := peer.recv(t)
			var rep cm.REP
			rep.UnmarshalBinary(body)
			if attr != cm.AttrREP || rep.RemoteCommID != 0x1001 {
				t.Fatalf("%s to comm %#x, want REP", cm.Name(attr), rep.RemoteCommID)
			}
			reps++
		}
		un, err := lch.GetEvent(t.Context())
		if err != nil || un.Type != engine.EventUnreachable || un.Status != -int(syscall.ETIMEDOUT) {
			t.Fatalf("%v %v", un, err)
		}
		// 3 tries of the REQ's LocalCMResponseTimeout (2^16 x 4.096 us)
		// alone, as Linux's cm_req_handler times the REP.
		if got, want := time.Since(start), 3*cm.Duration(16); got != want {
			t.Errorf("UNREACHABLE after %v, want %v", got, want)
		}
		ack(t, c, un)
		// Connection 2: RTU, then a DREQ nobody answers.
		req(0x2002)
		peer.recv(t) // MRA
		ev = mustEvent(t, lch, engine.EventConnectRequest)
		ack(t, c, ev)
		c.Accept(t.Context(), ev.ID, engine.ConnParam{})
		_, body := peer.recv(t)
		var rep cm.REP
		rep.UnmarshalBinary(body)
		rtu := cm.RTU{LocalCommID: 0x2002, RemoteCommID: rep.LocalCommID}
		b, rb := cm.NewMAD(cm.AttrRTU, 1)
		rtu.AppendBinary(rb[:0])
		peer.send(t, srvLID, b)
		ack(t, c, mustEvent(t, lch, engine.EventEstablished))
		if err := c.Disconnect(t.Context(), ev.ID); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if attr, _ := peer.recv(t); attr != cm.AttrDREQ {
				t.Fatalf("%s, want DREQ", cm.Name(attr))
			}
		}
		dis := mustEvent(t, lch, engine.EventDisconnected)
		if dis.Status != -int(syscall.ETIMEDOUT) {
			t.Errorf("DISCONNECTED status %d, want -110", dis.Status)
		}
		ack(t, c, dis)
	})
}

// TestCMMigrateSameChannelAndAddrError: migrating to the channel the id
// already uses requeues its unread events at the tail; an unknown
// destination GID is ADDR_ERROR -EHOSTUNREACH.
func TestCMMigrateSameChannelAndAddrError(t *testing.T) {
	r := newCMRig(t, nil)
	c := r.cm
	ch, _ := c.CreateEventChannel()
	a, _ := c.CreateID(ch, engine.PSTCP, false)
	b, _ := c.CreateID(ch, engine.PSUDP, false)
	if err := c.ResolveAddr(t.Context(), a, nil, engine.CMAddr{LID: r.lids[0]}); err != nil {
		t.Fatal(err)
	}
	// A LID resolves as it is (its route may not); an unknown GID does not.
	if err := c.ResolveAddr(t.Context(), b, nil, engine.CMAddr{GID: mad.NewGID(0xfe80<<48, 0x1234)}); err != nil {
		t.Fatal(err)
	}
	if err := c.MigrateID(t.Context(), a, ch); err != nil {
		t.Fatal(err)
	}
	ev := mustEvent(t, ch, engine.EventAddrError)
	if ev.ID != b || ev.Status != -int(syscall.EHOSTUNREACH) {
		t.Errorf("ADDR_ERROR of id %d status %d", ev.ID.Handle(), ev.Status)
	}
	ack(t, c, ev)
	if ev := mustEvent(t, ch, engine.EventAddrResolved); ev.ID != a {
		t.Error("a's event was not requeued at the tail")
	} else {
		ack(t, c, ev)
	}
	if got := a.PeerAddr(); got.LID != r.lids[0] || got.GID == (mad.GID{}) {
		t.Errorf("peer address %v", got)
	}
	if s := fmt.Sprint(a.LocalAddr()); !strings.HasPrefix(s, "lid:") {
		t.Errorf("local address %s", s)
	}
}

// TestCMPassiveSideAsLinux plays the active side by hand against a listener
// and checks what Linux's CM does (drivers/infiniband/core/cm.c): a
// duplicate REQ after the REP is not answered (the REP's own timer resends
// it), an MRA of the REP adds its service time to the REP's try, and a REJ
// on an established connection is reported as REJECTED. Fake time.
func TestCMPassiveSideAsLinux(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newCMRig(t, nil)
		c := r.cm
		peer := newRawPeer(t, r.f, r.names[1])
		srvLID := r.lids[0]
		lch, _ := r.listen(t, srvLID, 99, engine.PSTCP)
		reqMAD := func(comm uint32) []byte {
			q := cm.REQ{LocalCommID: comm, ServiceID: uint64(engine.PSTCP)<<16 | 99, LocalQPN: 0x77,
				LocalCMResponseTimeout: 16, RemoteCMResponseTimeout: 16, MaxCMRetries: 3, PKey: 0xffff,
				PrimaryLocalLID: peer.lid, PrimaryRemoteLID: srvLID, PrimaryLocalACKTimeout: 1}
			b, body := cm.NewMAD(cm.AttrREQ, uint64(comm))
			q.AppendBinary(body[:0])
			return b
		}
		try := cm.Duration(16) // the REQ's LocalCMResponseTimeout
		peer.send(t, srvLID, reqMAD(0x1001))
		if attr, _ := peer.recv(t); attr != cm.AttrMRA {
			t.Fatalf("after REQ: %s, want MRA", cm.Name(attr))
		}
		ev := mustEvent(t, lch, engine.EventConnectRequest)
		ack(t, c, ev)
		if err := c.Accept(t.Context(), ev.ID, engine.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		attr, body := peer.recv(t)
		var rep cm.REP
		rep.UnmarshalBinary(body)
		if attr != cm.AttrREP {
			t.Fatalf("after accept: %s, want REP", cm.Name(attr))
		}
		// A duplicate REQ now: nothing comes back before the REP's timer.
		peer.send(t, srvLID, reqMAD(0x1001))
		if attr, _ := peer.recv(t); attr != cm.AttrREP || time.Since(start) != try {
			t.Fatalf("after a duplicate REQ: %s at %v, want the REP's resend at %v", cm.Name(attr), time.Since(start), try)
		}
		// MRA of the REP with service timeout 20: the next resend waits
		// 4.096us x 2^20 longer.
		start = time.Now()
		mra := cm.MRA{LocalCommID: 0x1001, RemoteCommID: rep.LocalCommID, MessageMRAed: cm.MsgREP, ServiceTimeout: 20}
		b, mb := cm.NewMAD(cm.AttrMRA, 0x1001)
		mra.AppendBinary(mb[:0])
		peer.send(t, srvLID, b)
		if attr, _ := peer.recv(t); attr != cm.AttrREP || time.Since(start) != cm.Duration(20)+try {
			t.Fatalf("after an MRA of the REP: %s at %v, want the REP's resend at %v", cm.Name(attr), time.Since(start), cm.Duration(20)+try)
		}
		rtu := cm.RTU{LocalCommID: 0x1001, RemoteCommID: rep.LocalCommID}
		b, rb := cm.NewMAD(cm.AttrRTU, 0x1001)
		rtu.AppendBinary(rb[:0])
		peer.send(t, srvLID, b)
		ack(t, c, mustEvent(t, lch, engine.EventEstablished))
		// A REJ on the established connection: REJECTED, and the id is
		// out of the connection.
		rej := cm.REJ{LocalCommID: 0x1001, RemoteCommID: rep.LocalCommID, MessageRejected: cm.MsgOther, Reason: cm.RejStaleConn}
		b, jb := cm.NewMAD(cm.AttrREJ, 0x1001)
		rej.AppendBinary(jb[:0])
		peer.send(t, srvLID, b)
		got := mustEvent(t, lch, engine.EventRejected)
		if got.Status != int(cm.RejStaleConn) {
			t.Errorf("REJECTED status %d, want 10", got.Status)
		}
		ack(t, c, got)
		if err := c.Disconnect(t.Context(), ev.ID); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("disconnect after the REJ: %v, want EINVAL (not connected)", err)
		}
		// Destroying an id whose REP is out: REJ 28 naming no message
		// ("other"), as cm_format_rej does from REP_SENT.
		peer.send(t, srvLID, reqMAD(0x2002))
		peer.recv(t) // MRA
		ev = mustEvent(t, lch, engine.EventConnectRequest)
		ack(t, c, ev)
		c.Accept(t.Context(), ev.ID, engine.ConnParam{})
		peer.recv(t) // REP
		if err := c.DestroyID(t.Context(), ev.ID); err != nil {
			t.Fatal(err)
		}
		attr, body = peer.recv(t)
		var got2 cm.REJ
		got2.UnmarshalBinary(body)
		if attr != cm.AttrREJ || got2.Reason != cm.RejConsumerDefined || got2.MessageRejected != cm.MsgOther || got2.RemoteCommID != 0x2002 {
			t.Errorf("destroy after the REP: %s %+v, want REJ 28 of message 'other'", cm.Name(attr), got2)
		}
	})
}

// TestCMDestroyWhileConnecting: destroying an id whose REQ is out sends
// REJ 4 (timeout) with the local CA's GUID as ARI, as cm_destroy_id does.
func TestCMDestroyWhileConnecting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newCMRig(t, nil)
		c := r.cm
		hung := newRawPeer(t, r.f, r.names[2])
		ch, _ := c.CreateEventChannel()
		a := r.route(t, ch, r.lids[1], r.lids[2], 1, engine.PSTCP)
		if err := c.Connect(t.Context(), a, engine.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		if attr, _ := hung.recv(t); attr != cm.AttrREQ {
			t.Fatalf("%s, want REQ", cm.Name(attr))
		}
		if err := c.DestroyID(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		attr, body := hung.recv(t)
		var rej cm.REJ
		rej.UnmarshalBinary(body)
		if attr != cm.AttrREJ || rej.Reason != cm.RejTimeout || rej.MessageRejected != cm.MsgOther || rej.RejectInfoLength != 8 ||
			binary.BigEndian.Uint64(rej.ARI[:]) != r.guids[1] {
			t.Fatalf("%s %+v, want REJ 4 of message 'other' with the GUID %#x as ARI", cm.Name(attr), rej, r.guids[1])
		}
	})
}
