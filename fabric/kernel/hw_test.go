package kernel_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"testing"
	"time"

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
