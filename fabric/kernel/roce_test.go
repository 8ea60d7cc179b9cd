package kernel_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/internal/rocetest"
	"github.com/ibscript/ibscript/mad"
)

// The TestRoCE* tests run on the real kernel's Soft-RoCE pair that
// tests/kernelvm sets up ($IBSCRIPT_TEST_ROCE); elsewhere they skip.

// roceAddr is how a port reaches the other end e: RoCE needs a GRH on
// every MAD, sent from the local GID index gidIndex.
func roceAddr(gidIndex uint8, e rocetest.End) fabric.Addr {
	return fabric.Addr{QPN: 1, QKey: 0x80010000, GRH: true, GIDIndex: gidIndex, HopLimit: 64, GID: e.GID}
}

// roceModel is umadtest's model of the kernel with the stage's pair:
// rxe0 and rxe1, GID 1 ::ffff:10.0.0.N and GID 2 fd00::N.
func roceModel() (*kernel.Options, [2]rocetest.End) {
	h, ends := rocetest.ModelHost()
	return &kernel.Options{FS: h.FS, Open: h.Open, CMPath: "/nonexistent"}, ends
}

// openRoCE opens both ports of the pair on the real kernel (o nil) or
// on the model.
func openRoCE(t *testing.T, o *kernel.Options, ends [2]rocetest.End) (a, b fabric.Transport) {
	t.Helper()
	f := kernel.New(o)
	t.Cleanup(func() { f.Close() })
	var trs [2]fabric.Transport
	for i, e := range ends {
		tr, err := f.Open(t.Context(), e.CA, e.Port)
		if err != nil {
			t.Fatalf("open %v: %v", e, err)
		}
		if ll := tr.Port().LinkLayer; ll != "Ethernet" {
			t.Fatalf("%v: link layer %q, want Ethernet", e, ll)
		}
		trs[i] = tr
	}
	return trs[0], trs[1]
}

// TestRoCETransportConformance runs the fabric.Transport suite on the
// kernel's umad device of rxe0, its peer an agent on rxe1's, every MAD
// with a GRH between their IPv6 GIDs.
func TestRoCETransportConformance(t *testing.T) {
	roceConformance(t, nil, rocetest.Pair(t), 200*time.Millisecond)
}

// TestModelRoCETransportConformance runs it on the model's RoCE pair.
func TestModelRoCETransportConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time suite in -short mode")
	}
	o, e := roceModel()
	roceConformance(t, o, e, 50*time.Millisecond)
}

func roceConformance(t *testing.T, o *kernel.Options, e [2]rocetest.End, timeout time.Duration) {
	fabrictest.TestTransportOpts(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		tr, ptr := openRoCE(t, o, e)
		peer, err := fabrictest.NewTransportPeer(t.Context(), ptr, roceAddr(e[0].GIDIndex, e[1]), roceAddr(e[1].GIDIndex, e[0]))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { peer.Close() })
		return tr, peer
	}, &fabrictest.SuiteOptions{RealTime: true, Timeout: timeout})
}

// TestRoCEKernelRMPP: an SA GetTable from a send-only agent on rxe0 to an
// SA-class agent on rxe1, answered with a 12-segment GetTableResp; the
// kernels of both ends do the RMPP (segments, ACKs, reassembly) and the
// requester reads the whole message in one Recv.
func TestRoCEKernelRMPP(t *testing.T) {
	roceRMPP(t, nil, rocetest.Pair(t))
}

func TestModelRoCEKernelRMPP(t *testing.T) {
	o, e := roceModel()
	roceRMPP(t, o, e)
}

func roceRMPP(t *testing.T, o *kernel.Options, e [2]rocetest.End) {
	a, b := openRoCE(t, o, e)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	req, err := a.Register(ctx, fabric.Agent{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := b.Register(ctx, fabric.Agent{Class: mad.ClassSubnAdm, Version: 2}.WithMethods(mad.MethodGetTable))
	if err != nil {
		t.Fatalf("register an SA agent on %v (RoCE has no SA of its own): %v", e[1], err)
	}
	q := make([]byte, mad.Size)
	(&mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSubnAdm, ClassVersion: 2, Method: mad.MethodGetTable,
		TID: 0x0000beef, AttrID: 0x0011}).Put(q)
	if err := a.Send(ctx, &fabric.Packet{Agent: req, Timeout: time.Second, Retries: 3, Addr: roceAddr(e[0].GIDIndex, e[1]), Data: q}); err != nil {
		t.Fatalf("send GetTable: %v", err)
	}
	var in fabric.Packet
	if err := b.Recv(ctx, &in); err != nil {
		t.Fatalf("recv GetTable on %v: %v", e[1], err)
	}
	if in.Agent != srv || mad.MethodOf(in.Data) != mad.MethodGetTable || !in.Addr.GRH || in.Addr.GID != e[0].GID {
		t.Fatalf("got agent %d method 0x%02x GRH %v GID %x, want the GetTable from %v", in.Agent, mad.MethodOf(in.Data), in.Addr.GRH, in.Addr.GID, e[0])
	}
	if uint32(mad.TIDOf(in.Data)) != 0xbeef || mad.TIDOf(in.Data)>>32 == 0 {
		t.Errorf("request TID 0x%016x: want the low 32 bits 0xbeef and the kernel's agent tag above", mad.TIDOf(in.Data))
	}
	const saHdr, seg = 56, mad.Size - 56
	const segs = 12
	resp := make([]byte, saHdr+segs*seg)
	copy(resp, in.Data[:saHdr])
	resp[3] = mad.MethodGetTableRes
	resp[24], resp[25], resp[26] = 1, 1, 0x01 // RMPP version 1, DATA, Active: the kernel segments
	for i := saHdr; i < len(resp); i++ {
		resp[i] = byte(i * 7)
	}
	if err := b.Send(ctx, &fabric.Packet{Agent: srv, Addr: in.Addr, Data: resp}); err != nil {
		t.Fatalf("send the %d-byte GetTableResp: %v", len(resp), err)
	}
	var out fabric.Packet
	if err := a.Recv(ctx, &out); err != nil {
		t.Fatalf("recv the GetTableResp: %v", err)
	}
	if out.Status != 0 || out.Agent != req || mad.MethodOf(out.Data) != mad.MethodGetTableRes {
		t.Fatalf("got status %d agent %d method 0x%02x, want the GetTableResp", out.Status, out.Agent, mad.MethodOf(out.Data))
	}
	if len(out.Data) != len(resp) {
		t.Fatalf("reassembled %d bytes, want %d", len(out.Data), len(resp))
	}
	if !bytes.Equal(out.Data[saHdr:], resp[saHdr:]) {
		t.Error("reassembled data differs from what was sent")
	}
	if mad.TIDOf(out.Data) != mad.TIDOf(in.Data) {
		t.Errorf("response TID 0x%016x, want 0x%016x", mad.TIDOf(out.Data), mad.TIDOf(in.Data))
	}
}

// TestRoCEPairs: the stage's Soft-RoCE ports take no part in SMI/GSI
// pairing, as current libibumad has it (rdma-core #1794 skips
// non-InfiniBand link layers in umad_get_smi_gsi_pairs; before it, and
// in the Debian 44 the guest would carry, which has no SMI/GSI API at
// all, nothing says otherwise): Pairs names neither port,
// umad_get_smi_gsi_pair_by_ca_name of either is ENODEV, and opening one
// gives the plain port, not a pair.
func TestRoCEPairs(t *testing.T) { rocePairs(t, nil, rocetest.Pair(t)) }

// TestModelRoCEPairs runs the same checks on the model's pair.
func TestModelRoCEPairs(t *testing.T) {
	o, e := roceModel()
	rocePairs(t, o, e)
}

func rocePairs(t *testing.T, o *kernel.Options, ends [2]rocetest.End) {
	f := kernel.New(o)
	t.Cleanup(func() { f.Close() })
	pairs, err := f.Pairs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ends {
		for _, p := range pairs {
			if p.SMIName == e.CA || p.GSIName == e.CA {
				t.Errorf("%v is in pair %+v; Ethernet ports take no part (#1794)", e, p)
			}
		}
		if p, err := f.Pair(t.Context(), e.CA, e.Port, false); !errors.Is(err, fabric.ErrNoDevice) {
			t.Errorf("Pair(%v) = %+v, %v; want ErrNoDevice", e, p, err)
		}
		tr, err := f.Open(t.Context(), e.CA, e.Port)
		if err != nil {
			t.Fatalf("open %v: %v", e, err)
		}
		if _, ok := tr.(*kernel.Transport); !ok || tr.Port().SMIName != "" || !tr.Port().RoCE() {
			t.Errorf("open %v: %T, SMI side %q, link layer %q; want the plain RoCE port", e, tr, tr.Port().SMIName, tr.Port().LinkLayer)
		}
		tr.Close()
	}
	t.Logf("pairs on this host: %+v", pairs)
}
