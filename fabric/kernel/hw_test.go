package kernel_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/mad"
)

// hwSkip skips (or, with IBSCRIPT_TEST_HW=1, fails) with a reason.
func hwSkip(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("IBSCRIPT_TEST_HW") == "1" {
		t.Fatalf("IBSCRIPT_TEST_HW=1: "+format, args...)
	}
	t.Skipf(format, args...)
}

// Port features the hardware tests gate on, as cilium/ebpf gates its
// tests on kernel features: what the port is decides whether a test can
// run there. A missing device is hwSkip (a failure under
// IBSCRIPT_TEST_HW=1); a port that lacks a feature by its nature (RoCE
// has no SM, no SA, no LIDs, no QP0) is a plain t.Skip naming it, even
// under IBSCRIPT_TEST_HW=1, since no setup would give it one.

// roce reports whether the port's link layer is Ethernet (RoCE).
func roce(a fabric.PortAttr) bool { return a.LinkLayer == "Ethernet" }

// needSM skips a test that talks to the SM or SA of the port: on RoCE
// with t.Skip (there is none), on an InfiniBand port that is not Active
// or knows no SM with hwSkip (a fabric without an SM is a setup fault).
func needSM(t *testing.T, a fabric.PortAttr) {
	t.Helper()
	if roce(a) {
		t.Skipf("port %s/%d is RoCE (link layer %s): no SM, SA or LIDs there", a.CAName, a.PortNum, a.LinkLayer)
	}
	if a.State != 4 || a.SMLID == 0 {
		hwSkip(t, "port %s/%d is not Active with an SM (state %d, SM LID %d)", a.CAName, a.PortNum, a.State, a.SMLID)
	}
}

// openHW opens the host's default umad port, or skips.
func openHW(t *testing.T) fabric.Transport {
	t.Helper()
	if _, err := os.Stat("/dev/infiniband/umad0"); err != nil {
		hwSkip(t, "no InfiniBand hardware: %v", err)
	}
	f := kernel.New(nil)
	t.Cleanup(func() { f.Close() })
	tr, err := f.Open(t.Context(), "", 0)
	if errors.Is(err, fs.ErrPermission) {
		hwSkip(t, "%v", err)
	}
	if err != nil {
		t.Fatalf("open the default port: %v", err)
	}
	return tr
}

// TestHardware sends a SubnAdm ClassPortInfo Get to the SM of the
// default port and expects its response; it also checks that a ctx ending
// unblocks Recv on a real fd (the read deadline through the poller).
func TestHardware(t *testing.T) {
	tr := openHW(t)
	ctx := t.Context()
	attr := tr.Port()
	t.Logf("port %s/%d LID 0x%x SM LID 0x%x state %d", attr.CAName, attr.PortNum, attr.LID, attr.SMLID, attr.State)

	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	var p fabric.Packet
	if err := tr.Recv(short, &p); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Recv with nothing queued: %v, want context.DeadlineExceeded", err)
	}

	needSM(t, attr)
	id, err := tr.Register(ctx, fabric.Agent{Class: mad.ClassSubnAdm, Version: 2})
	if err != nil {
		t.Fatalf("register SA agent: %v", err)
	}
	req := make([]byte, mad.Size)
	h := mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSubnAdm, ClassVersion: 2, Method: mad.MethodGet,
		TID: 0x1234, AttrID: mad.AttrClassPortInfo}
	h.Put(req)
	err = tr.Send(ctx, &fabric.Packet{Agent: id, Timeout: 500 * time.Millisecond, Retries: 3,
		Addr: fabric.Addr{LID: attr.SMLID, QPN: 1, QKey: 0x80010000, SL: attr.SMSL}, Data: req})
	if err != nil {
		t.Fatalf("send ClassPortInfo Get: %v", err)
	}
	wait, cancel2 := context.WithTimeout(ctx, 10*time.Second)
	defer cancel2()
	if err := tr.Recv(wait, &p); err != nil {
		t.Fatalf("recv: %v", err)
	}
	if p.Status != 0 || p.Agent != id || mad.MethodOf(p.Data) != mad.MethodGetResp || uint32(mad.TIDOf(p.Data)) != 0x1234 {
		t.Fatalf("got agent %d status %d method 0x%02x TID 0x%x, want the GetResp", p.Agent, p.Status, mad.MethodOf(p.Data), mad.TIDOf(p.Data))
	}
}

// TestHardwarePairs checks the host's SMI/GSI pairs against its sysfs
// as libibumad's rule says they must be: every name is a CA of Ports; the
// CAs of a planarized pair have ports sharing one GUID, the GSI side's
// with IsSMDisabled and the SMI side's without; a normal pair's CA has an
// InfiniBand port with a GUID no other CA has; and opening the default
// port of a planarized pair's CA gives a Transport naming its SMI side.
func TestHardwarePairs(t *testing.T) {
	if _, err := os.Stat("/sys/class/infiniband"); err != nil {
		hwSkip(t, "no InfiniBand devices: %v", err)
	}
	checkPairs(t, kernel.New(nil))
}

// TestModelPairs runs TestHardwarePairs' checks on the model's planarized
// host.
func TestModelPairs(t *testing.T) {
	h := planarHost()
	checkPairs(t, kernel.New(&kernel.Options{FS: h.FS, Open: h.Open}))
}

func checkPairs(t *testing.T, f *kernel.Fabric) {
	t.Cleanup(func() { f.Close() })
	ports, err := f.Ports(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := f.Pairs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	byCA := map[string][]fabric.PortAttr{}
	guidCAs := map[uint64]map[string]bool{}
	for _, p := range ports {
		byCA[p.CAName] = append(byCA[p.CAName], p)
		if p.PortGUID != 0 && !p.RoCE() {
			if guidCAs[p.PortGUID] == nil {
				guidCAs[p.PortGUID] = map[string]bool{}
			}
			guidCAs[p.PortGUID][p.CAName] = true
		}
	}
	// firstIB is the port libibumad pairs a CA by.
	firstIB := func(ca string) (fabric.PortAttr, bool) {
		for _, p := range byCA[ca] {
			if p.PortGUID != 0 && !p.RoCE() {
				return p, true
			}
		}
		return fabric.PortAttr{}, false
	}
	for _, pr := range pairs {
		for _, n := range []string{pr.SMIName, pr.GSIName} {
			if _, ok := firstIB(n); n != "" && !ok {
				t.Errorf("pair %+v: %s has no InfiniBand port with a GUID", pr, n)
			}
		}
		g, _ := firstIB(pr.GSIName)
		if !pr.Planarized() {
			if len(guidCAs[g.PortGUID]) != 1 {
				t.Errorf("pair %+v: port GUID %#x is shared by %v, yet not planarized", pr, g.PortGUID, guidCAs[g.PortGUID])
			}
			continue
		}
		s, _ := firstIB(pr.SMIName)
		if s.PortGUID != g.PortGUID || g.CapMask&fabric.CapIsSMDisabled == 0 || s.CapMask&fabric.CapIsSMDisabled != 0 {
			t.Errorf("planarized pair %+v: SMI GUID %#x cap %#x, GSI GUID %#x cap %#x", pr, s.PortGUID, s.CapMask, g.PortGUID, g.CapMask)
		}
		tr, err := f.Open(t.Context(), pr.GSIName, 0)
		if errors.Is(err, fs.ErrPermission) {
			hwSkip(t, "%v", err)
		}
		if err != nil {
			t.Fatalf("open %s: %v", pr.GSIName, err)
		}
		if a := tr.Port(); a.SMIName != pr.SMIName {
			t.Errorf("open %s: SMI side %q, want %q", pr.GSIName, a.SMIName, pr.SMIName)
		}
		tr.Close()
	}
	t.Logf("%d pairs: %+v", len(pairs), pairs)
}

// TestHardwareSeeds: the seed pages' statements that need no peer, on the
// host's real umad device (the kernelvm stage's Soft-RoCE port): umad_poll
// with nothing there is ETIMEDOUT for 0 and a positive timeout, umad_recv
// EAGAIN for 0 and ETIMEDOUT for a positive one, a length below 256
// EINVAL; umad_send from an agent never registered and umad_unregister of
// one twice EINVAL; the 33rd agent ENOMEM; every call on a closed port
// EINVAL.
func TestHardwareSeeds(t *testing.T) {
	openHW(t) // skips without a device
	f := kernel.New(nil)
	defer f.Close()
	ctx := t.Context()
	p, err := engine.OpenUMADPort(ctx, f, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for _, ms := range []int{0, 20} {
		if err := p.Poll(ctx, ms); !errors.Is(err, syscall.ETIMEDOUT) {
			t.Errorf("umad_poll(%d) = %v, want ETIMEDOUT", ms, err)
		}
	}
	if _, err := p.Recv(ctx, mad.Size, 0); !errors.Is(err, syscall.EAGAIN) {
		t.Errorf("umad_recv(0) = %v, want EAGAIN", err)
	}
	if _, err := p.Recv(ctx, mad.Size, 20); !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("umad_recv(20) = %v, want ETIMEDOUT", err)
	}
	if _, err := p.Recv(ctx, mad.Size-1, 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("umad_recv(length 255) = %v, want EINVAL", err)
	}
	agent, err := p.Register(ctx, mad.ClassPerf, 1, 0, [2]uint64{})
	if err != nil {
		t.Fatal(err)
	}
	req := make([]byte, mad.Size)
	req[0], req[1], req[2], req[3] = 1, mad.ClassPerf, 1, mad.MethodGet
	if err := p.Send(ctx, agent+1, req, fabric.Addr{LID: 1, QPN: 1, QKey: 0x80010000}, 100, 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("umad_send from agent %d, never registered = %v, want EINVAL", agent+1, err)
	}
	if err := p.Unregister(ctx, agent); err != nil {
		t.Fatal(err)
	}
	if err := p.Unregister(ctx, agent); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("umad_unregister twice = %v, want EINVAL", err)
	}
	for n := 1; ; n++ {
		if _, err := p.Register(ctx, mad.ClassPerf, 1, 0, [2]uint64{}); err != nil {
			if n != 33 || !errors.Is(err, syscall.ENOMEM) {
				t.Errorf("agent %d: %v, want ENOMEM for the 33rd", n, err)
			}
			break
		}
		if n > 32 {
			t.Fatal("the port took 33 agents")
		}
	}
	p.Close()
	if err := p.Poll(ctx, 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("umad_poll on a closed port = %v, want EINVAL", err)
	}
}
