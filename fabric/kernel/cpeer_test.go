package kernel_test

import (
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/internal/rocetest"
	cma "github.com/ibscript/ibscript/rdmacm"
)

// TestRoCECPeerCM connects ibscript's RDMA CM (package rdmacm through
// fabric/kernel, the kernel's rdma_cm) with librdmacm itself
// (tests/kernelvm/cpeer.c) on the other Soft-RoCE port, by IPv4 and by
// IPv6 address, each way: private data both ways, accept or reject,
// migrate_id on both sides once connected, disconnect. Each side's events
// are compared with what they must be, librdmacm's as it prints them. A
// family librdmacm cannot connect by itself in the guest skips, naming
// what it met (rocetest.LibrdmacmConnects). Elsewhere it skips.
func TestRoCECPeerCM(t *testing.T) { rocetest.EachCPeer(t, 7570, cmGoConnects, cmCConnects) }

func cmReal(t *testing.T) *cma.CM {
	f := kernel.New(nil)
	t.Cleanup(func() { f.Close() })
	c := cmOn(t, f, f, nil, &cma.Options{AckWait: 5 * time.Second})
	if !c.Platform() {
		t.Fatal("the CM does not drive the kernel's rdma_cm")
	}
	return c
}

// cmEvent waits for the next event on ch, acks it, and checks it reads
// want as cpeer prints events: name, status, private data up to its NUL.
func cmEvent(t *testing.T, c *cma.CM, ch *cma.EventChannel, want string) *cma.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	ev, err := ch.GetEvent(ctx)
	if err != nil {
		t.Fatalf("get_event, want %q: %v", want, err)
	}
	pd := ev.Param.PrivateData
	if i := bytes.IndexByte(pd, 0); i >= 0 {
		pd = pd[:i]
	}
	s := string(pd)
	if s == "" {
		s = "-"
	}
	got := fmt.Sprintf("event %v status %d pd %s", ev.Type, ev.Status, s)
	if err := c.AckEvent(ev); err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("event %q, want %q", got, want)
	}
	return ev
}

func cmParam(pd string) cma.ConnParam {
	return cma.ConnParam{PrivateData: append([]byte(pd), 0), ResponderResources: 1, InitiatorDepth: 1,
		RetryCount: 7, RNRRetryCount: 7}
}

// cmGoConnects: ibscript on rxe0 connects to librdmacm listening on rxe1.
func cmGoConnects(t *testing.T, cpeer string, ip [2]netip.Addr, port uint16, accept bool) {
	how := "reject"
	if accept {
		how = "accept"
	}
	p := rocetest.StartCPeer(t, cpeer, "server", ip[1].String(), fmt.Sprint(port), how)
	p.Expect("listening")
	c := cmReal(t)
	ctx := t.Context()
	a, err := c.CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	id, err := c.CreateID(a, cma.PSTCP, false)
	if err != nil {
		t.Fatal(err)
	}
	src := cma.IPAddr(ip[0], 0)
	if err := c.ResolveAddr(ctx, id, &src, cma.IPAddr(ip[1], port)); err != nil {
		t.Fatalf("resolve_addr %v -> %v: %v", ip[0], ip[1], err)
	}
	cmEvent(t, c, a, "event RDMA_CM_EVENT_ADDR_RESOLVED status 0 pd -")
	if err := c.ResolveRoute(ctx, id); err != nil {
		t.Fatal(err)
	}
	cmEvent(t, c, a, "event RDMA_CM_EVENT_ROUTE_RESOLVED status 0 pd -")
	if err := c.Connect(ctx, id, cmParam("go-connect")); err != nil {
		t.Fatalf("connect: %v", err)
	}
	p.Expect("event RDMA_CM_EVENT_CONNECT_REQUEST status 0 pd go-connect")
	if !accept {
		cmEvent(t, c, a, "event RDMA_CM_EVENT_REJECTED status 28 pd c-reject")
		p.Expect("rejected")
		p.Exit()
		return
	}
	// As librdmacm with a QP: the RTU goes when the CONNECT_RESPONSE is
	// fetched, which reads ESTABLISHED.
	cmEvent(t, c, a, "event RDMA_CM_EVENT_ESTABLISHED status 0 pd c-accept")
	p.Expect("event RDMA_CM_EVENT_ESTABLISHED status 0 pd -", "migrated")
	b, err := c.CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MigrateID(ctx, id, b); err != nil {
		t.Fatalf("migrate_id: %v", err)
	}
	if err := c.Disconnect(ctx, id); err != nil {
		t.Fatalf("disconnect: %v", err)
	}
	p.Expect("event RDMA_CM_EVENT_DISCONNECTED status 0 pd -", "disconnect")
	cmEvent(t, c, b, "event RDMA_CM_EVENT_DISCONNECTED status 0 pd -")
	p.Exit()
	if err := c.DestroyID(ctx, id); err != nil {
		t.Fatal(err)
	}
}

// cmCConnects: librdmacm on rxe1 connects to ibscript listening on rxe0.
func cmCConnects(t *testing.T, cpeer string, ip [2]netip.Addr, port uint16, accept bool) {
	c := cmReal(t)
	ctx := t.Context()
	a, err := c.CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.CreateID(a, cma.PSTCP, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.BindAddr(ctx, l, cma.IPAddr(ip[0], port)); err != nil {
		t.Fatalf("bind %v port %d: %v", ip[0], port, err)
	}
	if err := c.Listen(ctx, l, 1); err != nil {
		t.Fatal(err)
	}
	p := rocetest.StartCPeer(t, cpeer, "client", ip[1].String(), ip[0].String(), fmt.Sprint(port))
	p.Expect("event RDMA_CM_EVENT_ADDR_RESOLVED status 0 pd -", "event RDMA_CM_EVENT_ROUTE_RESOLVED status 0 pd -")
	ev := cmEvent(t, c, a, "event RDMA_CM_EVENT_CONNECT_REQUEST status 0 pd c-connect")
	id := ev.ID
	if ev.ListenID != l || id == l {
		t.Fatalf("CONNECT_REQUEST: listener %v, id %v; want the listener and a new id", ev.ListenID, id)
	}
	if pa := id.PeerAddr(); pa.IP != ip[1] {
		t.Errorf("the new id's peer address %v, want %v", pa, ip[1])
	}
	if !accept {
		if err := c.Reject(ctx, id, append([]byte("go-reject"), 0)); err != nil {
			t.Fatal(err)
		}
		p.Expect("event RDMA_CM_EVENT_REJECTED status 28 pd go-reject")
		p.Exit()
		return
	}
	if err := c.Accept(ctx, id, cmParam("go-accept")); err != nil {
		t.Fatalf("accept: %v", err)
	}
	p.Expect("event RDMA_CM_EVENT_CONNECT_RESPONSE status 0 pd go-accept", "established", "migrated", "disconnect")
	cmEvent(t, c, a, "event RDMA_CM_EVENT_ESTABLISHED status 0 pd -")
	b, err := c.CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.MigrateID(ctx, id, b); err != nil {
		t.Fatalf("migrate_id: %v", err)
	}
	cmEvent(t, c, b, "event RDMA_CM_EVENT_DISCONNECTED status 0 pd -")
	if err := c.Disconnect(ctx, id); err != nil {
		t.Fatalf("disconnect (DREP): %v", err)
	}
	p.Expect("event RDMA_CM_EVENT_DISCONNECTED status 0 pd -")
	p.Exit()
	for _, x := range []*cma.ID{id, l} {
		if err := c.DestroyID(ctx, x); err != nil {
			t.Error(err)
		}
	}
}
