package kernel_test

import (
	"context"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/internal/rocetest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/native/rdmacm"
	cma "github.com/ibscript/ibscript/rdmacm"
	"github.com/ibscript/ibscript/rdmacm/cmtest"
)

// TestHardwareCM runs package rdmacm's CM through fabric/kernel on the host's
// /dev/infiniband/rdma_cm: channels, ids, migrate to another channel and
// to synchronous mode and back, an empty channel's poll and get_event
// timing out, bind to the default port's GID (an ephemeral port; on a
// RoCE port its IP address), listen, destroy. It skips without the rdma_cm device or an umad port (the
// engine's session needs one); IBSCRIPT_TEST_HW=1 makes that a failure.
func TestHardwareCM(t *testing.T) {
	if _, err := os.Stat(rdmacm.DevicePath); err != nil {
		hwSkip(t, "no RDMA CM device: %v", err)
	}
	tr := openHW(t)
	f := kernel.New(nil)
	defer f.Close()
	cmSmoke(t, f, tr)
}

// TestCMSmokeOnModel runs TestHardwareCM's steps on the model, so they
// are known to pass where the kernel follows the model.
func TestCMSmokeOnModel(t *testing.T) {
	f, _ := CMHosts(t)
	tr, err := f.Open(t.Context(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	cmSmoke(t, f, tr)
}

func cmSmoke(t *testing.T, f *kernel.Fabric, tr fabric.Transport) {
	s, err := engine.New(tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, err := cma.New(f, s, &cma.Options{AckWait: time.Second})
	if errors.Is(err, fs.ErrPermission) {
		hwSkip(t, "%v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !c.Platform() {
		t.Fatal("the CM does not drive the kernel's rdma_cm")
	}
	ctx := t.Context()
	a, err := c.CreateEventChannel()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := c.CreateEventChannel()
	id, err := c.CreateID(a, cma.PSTCP, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, to := range []*cma.EventChannel{b, nil, a} {
		if err := c.MigrateID(ctx, id, to); err != nil {
			t.Fatalf("migrate to %v: %v", to, err)
		}
	}
	if err := c.MigrateID(ctx, id, a); err != nil {
		t.Fatalf("migrate to the channel it is on: %v", err)
	}
	if a.Pending() != 0 {
		t.Error("an event on a channel whose id did nothing")
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := a.GetEvent(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("get_event with nothing queued: %v", err)
	}
	attr := tr.Port()
	if roce(attr) {
		// An AF_IB address does not bind on RoCE (ENODEV): the port's
		// IP address does, as its RoCE v2 GIDs show it.
		ip := portIP(attr)
		if !ip.IsValid() {
			t.Skipf("port %s/%d is RoCE with no IP address in its GID table: nothing to bind", attr.CAName, attr.PortNum)
		}
		if err := c.BindAddr(ctx, id, cma.IPAddr(ip, 0)); err != nil {
			t.Fatalf("bind to %v: %v", ip, err)
		}
		if la := id.LocalAddr(); la.IP != ip || la.Port == 0 {
			t.Errorf("bound address %v, want %v with an ephemeral port", la, ip)
		}
	} else {
		gid := mad.NewGID(attr.GIDPrefix, attr.PortGUID)
		if err := c.BindAddr(ctx, id, cma.Addr{GID: gid}); err != nil {
			t.Fatalf("bind to %v: %v", gid, err)
		}
		if la := id.LocalAddr(); la.GID != gid || la.Port == 0 || la.LID != attr.LID {
			t.Errorf("bound address %v, want %v with an ephemeral port and lid %d", la, gid, attr.LID)
		}
	}
	if err := c.Listen(ctx, id, 0); err != nil {
		t.Fatal(err)
	}
	if err := c.DestroyID(ctx, id); err != nil {
		t.Fatal(err)
	}
	if err := c.DestroyID(ctx, id); !errors.Is(err, syscall.ENOENT) {
		t.Errorf("destroy twice: %v", err)
	}
	for _, ch := range []*cma.EventChannel{a, b} {
		if err := ch.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestHardwareConformance runs the CM conformance suite on the host's
// rdma_cm, between its Active ports with LIDs (one port plays every role
// when the host has one: the kernel's CM connects a port to itself). It
// skips as TestHardwareCM does.
func TestHardwareConformance(t *testing.T) {
	if _, err := os.Stat(rdmacm.DevicePath); err != nil {
		hwSkip(t, "no RDMA CM device: %v", err)
	}
	openHW(t)
	f := kernel.New(nil)
	defer f.Close()
	ports, err := f.Ports(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var lids [4]uint16
	n, nroce := 0, 0
	for _, p := range ports {
		if roce(p) {
			nroce++
		}
		if p.LID != 0 && n < len(lids) {
			lids[n] = p.LID
			n++
		}
	}
	// The ports' IP addresses, as RoCE v2 GIDs show them (an IPv4-mapped
	// GID is the IPv4 address of the port's netdev): the suite's IP cases
	// connect between them. IPoIB ports show none this way.
	var v4, v6 []netip.Addr
	for _, p := range ports {
		for _, g := range p.GIDs {
			a := netip.AddrFrom16(g)
			switch {
			case g == [16]byte{} || a.IsLinkLocalUnicast():
			case a.Is4In6():
				v4 = append(v4, a.Unmap())
			default:
				v6 = append(v6, a)
			}
		}
	}
	if n == 0 && nroce > 0 && len(v4) < 2 && len(v6) < 2 {
		t.Skipf("the suite connects by LID (AF_IB) or by IP address; the host's %d port(s) with no LID are RoCE with fewer than two IP addresses", nroce)
	}
	if n == 0 && nroce == 0 {
		hwSkip(t, "no port with a LID")
	}
	for i := n; i < len(lids) && n > 0; i++ {
		lids[i] = lids[i%n]
	}
	var noIPv6 string
	if len(v6) >= 2 {
		// The suite connects from the second address to the first.
		noIPv6 = rocetest.LibrdmacmConnects(t, v6[1], v6[0], 7459)
	}
	cmtest.Run(t, cmtest.Hosts{LIDs: lids, IPv4: v4, IPv6: v6, NoIPv6: noIPv6, New: func(t *testing.T, o *cma.Options) *cma.CM {
		hf := kernel.New(nil)
		t.Cleanup(func() { hf.Close() })
		c := cmOn(t, hf, hf, nil, o)
		if !c.Platform() {
			t.Fatal("the CM does not drive the kernel's rdma_cm")
		}
		return c
	}})
}

// portIP is a RoCE port's IP address as its RoCE v2 GIDs show it: the
// first GID that is neither zero nor link-local, IPv4-mapped ones as
// IPv4. The zero Addr when there is none.
func portIP(a fabric.PortAttr) netip.Addr {
	for _, g := range a.GIDs {
		ip := netip.AddrFrom16(g)
		if g != ([16]byte{}) && !ip.IsLinkLocalUnicast() {
			return ip.Unmap()
		}
	}
	return netip.Addr{}
}
