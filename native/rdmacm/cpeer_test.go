package rdmacm_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/rocetest"
	"github.com/ibscript/ibscript/native/rdmacm"
)

// TestRoCECPeer connects the kernel's rdma_cm, driven through this
// package, with librdmacm itself (tests/kernelvm/cpeer.c, /bin/cpeer in
// the real-kernel stage's guest) on the other Soft-RoCE port, by IPv4 and
// by IPv6 address, each way: private data both ways, accept or reject,
// rdma_migrate_id on both sides once connected, disconnect. The events
// each side sees are compared with what they must be; librdmacm's are
// the ones it prints. Elsewhere it skips (rocetest.Pair).
func TestRoCECPeer(t *testing.T) { rocetest.EachCPeer(t, 7470, goConnects, cConnects) }

// sockaddr is struct sockaddr_in or sockaddr_in6 of ip and port.
func sockaddr(ip netip.Addr, port uint16) []byte {
	if ip.Is4() {
		b := make([]byte, 16)
		binary.NativeEndian.PutUint16(b[0:], 2) // AF_INET
		binary.BigEndian.PutUint16(b[2:], port)
		a := ip.As4()
		copy(b[4:8], a[:])
		return b
	}
	b := make([]byte, 28)
	binary.NativeEndian.PutUint16(b[0:], 10) // AF_INET6
	binary.BigEndian.PutUint16(b[2:], port)
	a := ip.As16()
	copy(b[8:24], a[:])
	return b
}

// eventNames are rdma_event_str's names, by event number.
var eventNames = []string{"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR", "RDMA_CM_EVENT_ROUTE_RESOLVED",
	"RDMA_CM_EVENT_ROUTE_ERROR", "RDMA_CM_EVENT_CONNECT_REQUEST", "RDMA_CM_EVENT_CONNECT_RESPONSE",
	"RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE", "RDMA_CM_EVENT_REJECTED",
	"RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED", "RDMA_CM_EVENT_DEVICE_REMOVAL",
	"RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR", "RDMA_CM_EVENT_ADDR_CHANGE",
	"RDMA_CM_EVENT_TIMEWAIT_EXIT"}

// line is an event as cpeer prints it: name, status, private data up to
// its first NUL ("-" for none).
func line(e rdmacm.Event) string {
	name := fmt.Sprintf("event %d", e.Event)
	if int(e.Event) < len(eventNames) {
		name = eventNames[e.Event]
	}
	pd := e.Conn.PrivateData
	if i := bytes.IndexByte(pd, 0); i >= 0 {
		pd = pd[:i]
	}
	s := string(pd)
	if s == "" {
		s = "-"
	}
	return fmt.Sprintf("event %s status %d pd %s", name, e.Status, s)
}

func openCh(t *testing.T) *rdmacm.Channel {
	t.Helper()
	ch, err := rdmacm.Open("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	return ch
}

// event waits for the next event on ch and checks it is want.
func event(t *testing.T, ch *rdmacm.Channel, want string) rdmacm.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	e, err := ch.GetEvent(ctx)
	if err != nil {
		t.Fatalf("get_event, want %q: %v", want, err)
	}
	if got := line(e); got != want {
		t.Fatalf("event %q, want %q", got, want)
	}
	return e
}

func connParam(pd string) *rdmacm.ConnParam {
	return &rdmacm.ConnParam{QPNum: 0x456, PrivateData: append([]byte(pd), 0), ResponderResources: 1,
		InitiatorDepth: 1, RetryCount: 7, RNRRetryCount: 7, Valid: 1}
}

// goConnects: ibscript on rxe0 connects to librdmacm listening on rxe1.
func goConnects(t *testing.T, cpeer string, ip [2]netip.Addr, port uint16, accept bool) {
	how := "reject"
	if accept {
		how = "accept"
	}
	c := rocetest.StartCPeer(t, cpeer, "server", ip[1].String(), fmt.Sprint(port), how)
	c.Expect("listening")
	a := openCh(t)
	const uid = 11
	id, err := a.CreateID(uid, rdmacm.PSTCP, rdmacm.QPTypeRC)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ResolveAddr(id, sockaddr(ip[0], 0), sockaddr(ip[1], port), 5000); err != nil {
		t.Fatalf("resolve_addr %v -> %v: %v", ip[0], ip[1], err)
	}
	event(t, a, "event RDMA_CM_EVENT_ADDR_RESOLVED status 0 pd -")
	if err := a.ResolveRoute(id, 5000); err != nil {
		t.Fatal(err)
	}
	event(t, a, "event RDMA_CM_EVENT_ROUTE_RESOLVED status 0 pd -")
	if err := a.Connect(id, connParam("go-connect")); err != nil {
		t.Fatalf("connect: %v", err)
	}
	c.Expect("event RDMA_CM_EVENT_CONNECT_REQUEST status 0 pd go-connect")
	if !accept {
		event(t, a, "event RDMA_CM_EVENT_REJECTED status 28 pd c-reject")
		c.Expect("rejected")
		c.Exit()
		return
	}
	event(t, a, "event RDMA_CM_EVENT_CONNECT_RESPONSE status 0 pd c-accept")
	// librdmacm's RTU after CONNECT_RESPONSE: ACCEPT on the active id.
	if err := a.Accept(id, uid, &rdmacm.ConnParam{}); err != nil {
		t.Fatalf("accept (RTU): %v", err)
	}
	c.Expect("event RDMA_CM_EVENT_ESTABLISHED status 0 pd -", "migrated")
	b := openCh(t)
	if n, err := b.MigrateID(id, a); err != nil || n != 3 {
		t.Fatalf("migrate_id: events reported %d, %v; want 3", n, err)
	}
	if err := b.Disconnect(id); err != nil {
		t.Fatalf("disconnect: %v", err)
	}
	c.Expect("event RDMA_CM_EVENT_DISCONNECTED status 0 pd -", "disconnect")
	event(t, b, "event RDMA_CM_EVENT_DISCONNECTED status 0 pd -")
	c.Exit()
	if _, err := b.DestroyID(id); err != nil {
		t.Fatal(err)
	}
}

// cConnects: librdmacm on rxe1 connects to ibscript listening on rxe0.
func cConnects(t *testing.T, cpeer string, ip [2]netip.Addr, port uint16, accept bool) {
	a := openCh(t)
	const luid, cuid = 21, 22
	lid, err := a.CreateID(luid, rdmacm.PSTCP, rdmacm.QPTypeRC)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Bind(lid, sockaddr(ip[0], port)); err != nil {
		t.Fatalf("bind %v port %d: %v", ip[0], port, err)
	}
	if err := a.Listen(lid, 1); err != nil {
		t.Fatal(err)
	}
	c := rocetest.StartCPeer(t, cpeer, "client", ip[1].String(), ip[0].String(), fmt.Sprint(port))
	c.Expect("event RDMA_CM_EVENT_ADDR_RESOLVED status 0 pd -", "event RDMA_CM_EVENT_ROUTE_RESOLVED status 0 pd -")
	e := event(t, a, "event RDMA_CM_EVENT_CONNECT_REQUEST status 0 pd c-connect")
	if e.UID != luid || e.ID == lid {
		t.Fatalf("CONNECT_REQUEST uid %d id %d: want the listener's uid %d and a new id", e.UID, e.ID, luid)
	}
	id := e.ID
	if !accept {
		if err := a.Reject(id, append([]byte("go-reject"), 0)); err != nil {
			t.Fatal(err)
		}
		c.Expect("event RDMA_CM_EVENT_REJECTED status 28 pd go-reject")
		c.Exit()
		return
	}
	if err := a.Accept(id, cuid, connParam("go-accept")); err != nil {
		t.Fatalf("accept: %v", err)
	}
	c.Expect("event RDMA_CM_EVENT_CONNECT_RESPONSE status 0 pd go-accept", "established", "migrated", "disconnect")
	if e := event(t, a, "event RDMA_CM_EVENT_ESTABLISHED status 0 pd -"); e.UID != cuid || e.ID != id {
		t.Errorf("ESTABLISHED uid %d id %d, want %d %d", e.UID, e.ID, cuid, id)
	}
	b := openCh(t)
	if _, err := b.MigrateID(id, a); err != nil {
		t.Fatalf("migrate_id: %v", err)
	}
	event(t, b, "event RDMA_CM_EVENT_DISCONNECTED status 0 pd -")
	if err := b.Disconnect(id); err != nil {
		t.Fatalf("disconnect (DREP): %v", err)
	}
	c.Expect("event RDMA_CM_EVENT_DISCONNECTED status 0 pd -")
	c.Exit()
	for _, x := range []struct {
		ch *rdmacm.Channel
		id uint32
	}{{b, id}, {a, lid}} {
		if _, err := x.ch.DestroyID(x.id); err != nil {
			t.Error(err)
		}
	}
}
