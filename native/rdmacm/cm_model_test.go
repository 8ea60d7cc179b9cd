package rdmacm_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/ibscript/ibscript/native/rdmacm"
	"github.com/ibscript/ibscript/native/rdmacm/rdmacmtest"
)

var (
	gidA = [16]byte{0xfe, 0x80, 8: 0x02, 15: 0x01}
	gidB = [16]byte{0xfe, 0x80, 8: 0x02, 15: 0x02}
)

// cmKernel is a model with two ports, a listener channel and a client
// channel.
func cmKernel(t *testing.T) (*rdmacmtest.Kernel, *rdmacm.Channel, *rdmacm.Channel) {
	t.Helper()
	k := rdmacmtest.New()
	k.AddGID(gidA)
	k.AddGID(gidB)
	l, c := rdmacm.NewChannel(k.Open()), rdmacm.NewChannel(k.Open())
	t.Cleanup(func() { l.Close(); c.Close() })
	return k, l, c
}

func next(t *testing.T, ch *rdmacm.Channel, want uint32) rdmacm.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	ev, err := ch.GetEvent(ctx)
	if err != nil {
		t.Fatalf("waiting for event %d: %v", want, err)
	}
	if ev.Event != want {
		t.Fatalf("event %d status %d, want %d", ev.Event, ev.Status, want)
	}
	return ev
}

func none(t *testing.T, ch *rdmacm.Channel) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
	defer cancel()
	if ev, err := ch.GetEvent(ctx); err == nil {
		t.Fatalf("unexpected event %d of id %d", ev.Event, ev.ID)
	}
}

// listenOn makes a listener of ps on gid, port.
func listenOn(t *testing.T, ch *rdmacm.Channel, uid uint64, ps uint16, gid [16]byte, port uint16) uint32 {
	t.Helper()
	id, err := ch.CreateID(uid, ps, rdmacm.QPTypeRC)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.Bind(id, rdmacm.SockaddrIB(gid, 0xffff, uint64(ps)<<16|uint64(port))); err != nil {
		t.Fatal(err)
	}
	if err := ch.Listen(id, 4); err != nil {
		t.Fatal(err)
	}
	return id
}

// routed makes an id of ps on ch with its route to gid, port resolved.
func routed(t *testing.T, ch *rdmacm.Channel, uid uint64, ps uint16, gid [16]byte, port uint16) uint32 {
	t.Helper()
	id, err := ch.CreateID(uid, ps, rdmacm.QPTypeRC)
	if err != nil {
		t.Fatal(err)
	}
	if err := ch.ResolveAddr(id, nil, rdmacm.SockaddrIB(gid, 0xffff, uint64(ps)<<16|uint64(port)), 1000); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ch, rdmacmtest.EventAddrResolved); ev.UID != uid || ev.ID != id {
		t.Fatalf("ADDR_RESOLVED %+v", ev)
	}
	if err := ch.ResolveRoute(id, 1000); err != nil {
		t.Fatal(err)
	}
	next(t, ch, rdmacmtest.EventRouteResolved)
	return id
}

func TestModelCMConnectAcceptDisconnect(t *testing.T) {
	_, lch, ach := cmKernel(t)
	l := listenOn(t, lch, 1, rdmacm.PSTCP, gidA, 7471)
	a := routed(t, ach, 2, rdmacm.PSTCP, gidA, 7471)
	if info, err := ach.QueryAddr(a); err != nil {
		t.Fatal(err)
	} else if g, _, sid, ok := rdmacm.ParseSockaddrIB(info.Src); !ok || g != gidA || sid>>16 != uint64(rdmacm.PSTCP) || sid&0xffff < 32768 {
		t.Errorf("active source: gid % x sid %#x (the first port in the destination's subnet, an ephemeral port)", g, sid)
	}
	if err := ach.Connect(a, &rdmacm.ConnParam{PrivateData: []byte("hello"), InitiatorDepth: 4, ResponderResources: 2, QPNum: 0x11, Valid: 1}); err != nil {
		t.Fatal(err)
	}
	req := next(t, lch, rdmacmtest.EventConnectRequest)
	if req.UID != 1 || req.ID == l || len(req.Conn.PrivateData) != rdmacmtest.REQPrivateData || string(req.Conn.PrivateData[:5]) != "hello" {
		t.Fatalf("CONNECT_REQUEST %+v", req)
	}
	if req.Conn.ResponderResources != 4 || req.Conn.InitiatorDepth != 2 || req.Conn.QPNum != 0x11 {
		t.Errorf("request param %+v: resources are crossed over", req.Conn)
	}
	p := req.ID
	info, err := lch.QueryAddr(p)
	if err != nil {
		t.Fatal(err)
	}
	if g, _, sid, _ := rdmacm.ParseSockaddrIB(info.Src); g != gidA || sid != uint64(rdmacm.PSTCP)<<16|7471 {
		t.Errorf("passive source gid % x sid %#x", g, sid)
	}
	if g, _, _, _ := rdmacm.ParseSockaddrIB(info.Dst); g != gidA {
		t.Errorf("passive destination gid % x", g)
	}
	if err := lch.Accept(p, 30, &rdmacm.ConnParam{PrivateData: []byte("welcome"), QPNum: 0x22, Valid: 1}); err != nil {
		t.Fatal(err)
	}
	resp := next(t, ach, rdmacmtest.EventConnectResponse)
	if resp.ID != a || len(resp.Conn.PrivateData) != rdmacmtest.REPPrivateData || string(resp.Conn.PrivateData[:7]) != "welcome" || resp.Conn.QPNum != 0x22 {
		t.Fatalf("CONNECT_RESPONSE %+v", resp)
	}
	none(t, lch) // ESTABLISHED waits for the RTU
	if err := ach.Accept(a, 2, &rdmacm.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, lch, rdmacmtest.EventEstablished); ev.ID != p || ev.UID != 30 {
		t.Fatalf("passive ESTABLISHED %+v", ev)
	}
	if err := ach.Disconnect(a); err != nil {
		t.Fatal(err)
	}
	next(t, lch, rdmacmtest.EventDisconnected)
	none(t, ach) // DISCONNECTED on the active side waits for the DREP
	if err := lch.Disconnect(p); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ach, rdmacmtest.EventDisconnected); ev.ID != a {
		t.Fatalf("active DISCONNECTED %+v", ev)
	}
	if err := ach.Disconnect(a); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("disconnect after the DREP: %v", err)
	}
	if n, err := ach.DestroyID(a); err != nil || n != 4 {
		t.Errorf("destroy a: events_reported %d %v", n, err)
	}
	if n, err := lch.DestroyID(l); err != nil || n != 1 {
		t.Errorf("destroy listener: events_reported %d %v (the request is counted on it)", n, err)
	}
}

func TestModelCMRejectAndNoListener(t *testing.T) {
	_, lch, ach := cmKernel(t)
	listenOn(t, lch, 1, rdmacm.PSTCP, [16]byte{}, 1) // the wildcard GID listens on every port
	a := routed(t, ach, 2, rdmacm.PSTCP, gidB, 1)
	if err := ach.Connect(a, &rdmacm.ConnParam{Valid: 1, PrivateData: make([]byte, 93)}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("93 bytes of REQ private data: %v", err)
	}
	if err := ach.Connect(a, &rdmacm.ConnParam{}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("connect without valid: %v", err)
	}
	if err := ach.Connect(a, &rdmacm.ConnParam{Valid: 1}); err != nil {
		t.Fatal(err)
	}
	req := next(t, lch, rdmacmtest.EventConnectRequest)
	if err := lch.Reject(req.ID, make([]byte, 149)); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("149 bytes of REJ private data: %v", err)
	}
	if err := lch.Reject(req.ID, []byte("not today")); err != nil {
		t.Fatal(err)
	}
	rej := next(t, ach, rdmacmtest.EventRejected)
	if rej.Status != 28 || len(rej.Conn.PrivateData) != rdmacmtest.REJPrivateData || string(rej.Conn.PrivateData[:9]) != "not today" {
		t.Errorf("REJECTED status %d private data %q", rej.Status, rej.Conn.PrivateData)
	}
	b := routed(t, ach, 3, rdmacm.PSTCP, gidB, 2)
	if err := ach.Connect(b, &rdmacm.ConnParam{Valid: 1}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ach, rdmacmtest.EventRejected); ev.ID != b || ev.Status != 8 {
		t.Errorf("no listener: %+v, want REJECTED status 8", ev)
	}
	// A route to a GID that is no port of the model: ROUTE_ERROR.
	c, _ := ach.CreateID(4, rdmacm.PSTCP, rdmacm.QPTypeRC)
	if err := ach.ResolveAddr(c, nil, rdmacm.SockaddrIB([16]byte{0xfe, 0x80, 15: 9}, 0xffff, 0), 1000); err != nil {
		t.Fatal(err)
	}
	next(t, ach, rdmacmtest.EventAddrResolved)
	if err := ach.ResolveRoute(c, 1000); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ach, rdmacmtest.EventRouteError); ev.Status != -int32(syscall.EINVAL) {
		t.Errorf("ROUTE_ERROR status %d", ev.Status)
	}
	if err := ach.Bind(c, rdmacm.SockaddrIB(gidA, 0xffff, 0)); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("bind of a resolved id: %v", err)
	}
	d, _ := ach.CreateID(5, rdmacm.PSTCP, rdmacm.QPTypeRC)
	if err := ach.Bind(d, rdmacm.SockaddrIB([16]byte{0xfe, 0x80, 15: 9}, 0xffff, 0)); !errors.Is(err, syscall.ENODEV) {
		t.Errorf("bind to a GID no port has: %v", err)
	}
	if err := ach.Bind(d, rdmacm.SockaddrIB(gidA, 0xffff, uint64(rdmacm.PSTCP)<<16|1)); !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("bind to the listener's port: %v", err)
	}
}

// TestModelCMDestroyTeardown: destroying an established id disconnects
// its peer; destroying a listener rejects the peers of its unread
// requests; closing an fd tears its ids down too.
func TestModelCMDestroyTeardown(t *testing.T) {
	_, lch, ach := cmKernel(t)
	l := listenOn(t, lch, 1, rdmacm.PSTCP, gidA, 5)
	a := routed(t, ach, 2, rdmacm.PSTCP, gidA, 5)
	b := routed(t, ach, 3, rdmacm.PSTCP, gidA, 5)
	for _, id := range []uint32{a, b} {
		if err := ach.Connect(id, &rdmacm.ConnParam{Valid: 1}); err != nil {
			t.Fatal(err)
		}
	}
	req := next(t, lch, rdmacmtest.EventConnectRequest)
	if err := lch.Accept(req.ID, 9, &rdmacm.ConnParam{Valid: 1}); err != nil {
		t.Fatal(err)
	}
	resp := next(t, ach, rdmacmtest.EventConnectResponse)
	if err := ach.Accept(resp.ID, resp.UID, &rdmacm.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	if _, err := lch.DestroyID(l); err != nil {
		t.Fatal(err)
	}
	other := a + b - resp.ID
	if ev := next(t, ach, rdmacmtest.EventRejected); ev.ID != other || ev.Status != 28 {
		t.Errorf("the unread request's peer: %+v, want REJECTED 28", ev)
	}
	next(t, lch, rdmacmtest.EventEstablished)
	if _, err := lch.DestroyID(req.ID); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ach, rdmacmtest.EventDisconnected); ev.ID != resp.ID {
		t.Errorf("the established peer: %+v", ev)
	}
}

func TestModelCMUD(t *testing.T) {
	_, lch, ach := cmKernel(t)
	l, _ := lch.CreateID(1, rdmacm.PSUDP, rdmacm.QPTypeUD)
	if err := lch.Bind(l, rdmacm.SockaddrIB(gidA, 0xffff, uint64(rdmacm.PSUDP)<<16|20)); err != nil {
		t.Fatal(err)
	}
	if err := lch.Listen(l, 0); err != nil {
		t.Fatal(err)
	}
	a := routed(t, ach, 2, rdmacm.PSUDP, gidA, 20)
	if err := ach.Connect(a, &rdmacm.ConnParam{Valid: 1, PrivateData: []byte("ud")}); err != nil {
		t.Fatal(err)
	}
	req := next(t, lch, rdmacmtest.EventConnectRequest)
	if len(req.UD.PrivateData) != rdmacmtest.SIDRReqPrivateData || string(req.UD.PrivateData[:2]) != "ud" {
		t.Fatalf("SIDR CONNECT_REQUEST private data %d bytes", len(req.UD.PrivateData))
	}
	if err := lch.Accept(req.ID, 5, &rdmacm.ConnParam{Valid: 1, QPNum: 0x4242}); err != nil {
		t.Fatal(err)
	}
	est := next(t, ach, rdmacmtest.EventEstablished)
	if est.UD.QPNum != 0x4242 || est.UD.QKey != rdmacmtest.UDPQKey {
		t.Errorf("UD ESTABLISHED %+v", est.UD)
	}
	none(t, lch) // no event on the passive side of UD
	b := routed(t, ach, 3, rdmacm.PSUDP, gidA, 21)
	if err := ach.Connect(b, &rdmacm.ConnParam{Valid: 1}); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, ach, rdmacmtest.EventUnreachable); ev.Status != 1 {
		t.Errorf("SIDR with no listener: status %d, want 1", ev.Status)
	}
}

// TestModelCMBacklogAndClose: a request beyond the listener's backlog is
// refused without a REJ (the peer hears nothing; the kernel's peer would
// retry); closing an fd tears its connections down like DESTROY_ID.
func TestModelCMBacklogAndClose(t *testing.T) {
	k, lch, ach := cmKernel(t)
	l, _ := lch.CreateID(1, rdmacm.PSTCP, rdmacm.QPTypeRC)
	if err := lch.Bind(l, rdmacm.SockaddrIB(gidA, 0xffff, uint64(rdmacm.PSTCP)<<16|3)); err != nil {
		t.Fatal(err)
	}
	if err := lch.Listen(l, 1); err != nil {
		t.Fatal(err)
	}
	a := routed(t, ach, 2, rdmacm.PSTCP, gidA, 3)
	b := routed(t, ach, 3, rdmacm.PSTCP, gidA, 3)
	for _, id := range []uint32{a, b} {
		if err := ach.Connect(id, &rdmacm.ConnParam{Valid: 1}); err != nil {
			t.Fatal(err)
		}
	}
	req := next(t, lch, rdmacmtest.EventConnectRequest)
	none(t, lch) // b's REQ found no credit
	none(t, ach) // and got no answer
	if err := lch.Accept(req.ID, 7, &rdmacm.ConnParam{Valid: 1}); err != nil {
		t.Fatal(err)
	}
	resp := next(t, ach, rdmacmtest.EventConnectResponse)
	if err := ach.Accept(resp.ID, resp.UID, &rdmacm.ConnParam{}); err != nil {
		t.Fatal(err)
	}
	next(t, lch, rdmacmtest.EventEstablished)
	// The passive fd closes: its established id sends DREQ.
	lch.Close()
	if ev := next(t, ach, rdmacmtest.EventDisconnected); ev.ID != a {
		t.Errorf("DISCONNECTED of id %d, want %d", ev.ID, a)
	}
	if k.Owner(l) != -1 || k.Owner(req.ID) != -1 {
		t.Error("ids of a closed fd survived")
	}
	if err := ach.Disconnect(a); err != nil {
		t.Errorf("DREP to a peer that is gone: %v", err)
	}
	none(t, ach)
}
