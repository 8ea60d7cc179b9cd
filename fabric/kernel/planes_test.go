package kernel_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// Model LIDs: the planarized HCA's GSI side (mlx5_0, IsSMDisabled), its
// SMI side (mlx5_1), and a far port (mlx5_9).
const (
	gsiLID  = 1
	smiLID  = 3
	farLID  = 2
	planeID = 0x0002c903000a0001
)

// planarHost has a planarized HCA, GSI side first in directory order
// (umad_open_port's default picks it), and a normal far port.
func planarHost() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: gsiLID, State: 4, PhysState: 5,
		GUID: planeID, CapMask: 0x2659e848 | umadtest.IsSMDisabled})
	h.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, LID: smiLID, State: 4, PhysState: 5, GUID: planeID})
	h.AddCA("mlx5_9", 1, 0x0002c90300009000, umadtest.HostPort{Num: 1, LID: farLID, State: 4, PhysState: 5})
	return h
}

// mustOpen opens (ca, port) of f; the Fabric's cleanup closes it.
func mustOpen(t *testing.T, f *kernel.Fabric, ca string, port int) fabric.Transport {
	t.Helper()
	tr, err := f.Open(t.Context(), ca, port)
	if err != nil {
		t.Fatalf("Open(%q, %d): %v", ca, port, err)
	}
	return tr
}

func TestFabricPairs(t *testing.T) {
	f := newFabric(t, planarHost())
	got, err := f.Pairs(t.Context())
	want := []fabric.PortPair{{SMIName: "mlx5_1", GSIName: "mlx5_0"}, {SMIName: "mlx5_9", GSIName: "mlx5_9"}}
	if err != nil || !cmp.Equal(got, want) {
		t.Errorf("Pairs = %+v, %v; want %+v", got, err, want)
	}
	if pp, err := fabric.PairsOf(t.Context(), f); err != nil || !cmp.Equal(pp, want) {
		t.Errorf("PairsOf = %+v, %v; want the Pairer's", pp, err)
	}
	p, err := f.Pair(t.Context(), "mlx5_0", 0, false)
	if w := (fabric.PortPair{SMIName: "mlx5_1", SMIPort: 1, GSIName: "mlx5_0", GSIPort: 1}); err != nil || p != w {
		t.Errorf("Pair(mlx5_0, 0) = %+v, %v; want %+v", p, err, w)
	}
	if _, err := f.Pair(t.Context(), "mlx5_7", 0, false); !errors.Is(err, fabric.ErrNoDevice) || !errors.Is(err, syscall.ENODEV) {
		t.Errorf("Pair(mlx5_7) = %v; want ErrNoDevice", err)
	}
}

// TestPlanarOpen: opening either side of a planarized port gives one
// Transport of both; its Port is the GSI side's, naming the SMI side.
func TestPlanarOpen(t *testing.T) {
	for _, tt := range []struct{ ca string }{{""}, {"mlx5_0"}, {"mlx5_1"}} {
		tr := mustOpen(t, newFabric(t, planarHost()), tt.ca, 0)
		a := tr.Port()
		if a.CAName != "mlx5_0" || a.LID != gsiLID || a.SMIName != "mlx5_1" || a.SMIPort != 1 || a.PortGUID != planeID {
			t.Errorf("Open(%q).Port() = %s/%d LID %d SMI %s/%d GUID %#x; want GSI mlx5_0/1 LID 1, SMI mlx5_1/1", tt.ca, a.CAName, a.PortNum, a.LID, a.SMIName, a.SMIPort, a.PortGUID)
		}
		tr.Close()
	}
	tr := mustOpen(t, newFabric(t, planarHost()), "mlx5_9", 0)
	if _, ok := tr.(*kernel.Transport); !ok || tr.Port().SMIName != "" {
		t.Errorf("a normal port: %T SMI %q; want the plain *kernel.Transport", tr, tr.Port().SMIName)
	}
}

// TestPlanarConformance runs the Transport suite on a planarized port's
// pair: the suite's GMPs go through the GSI side (LID 1).
func TestPlanarConformance(t *testing.T) {
	fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		f := newFabric(t, planarHost())
		tr, far := mustOpen(t, f, "mlx5_1", 1), mustOpen(t, f, "mlx5_9", 1)
		peer, err := fabrictest.NewTransportPeer(t.Context(), far,
			fabric.Addr{LID: farLID, QPN: 1, QKey: 0x80010000}, fabric.Addr{LID: gsiLID, QPN: 1, QKey: 0x80010000})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { peer.Close() })
		return tr, peer
	})
}

// farResponder answers Gets of the SMP, PerfMgt and SA classes on a
// Transport, recording the source LID of each request by class.
type farResponder struct {
	tr     fabric.Transport
	agents map[uint8]fabric.AgentID
	wg     sync.WaitGroup

	mu   sync.Mutex // guards from
	from map[uint8][]uint16
}

func newFarResponder(t *testing.T, tr fabric.Transport) *farResponder {
	r := &farResponder{tr: tr, agents: map[uint8]fabric.AgentID{}, from: map[uint8][]uint16{}}
	for _, c := range []struct{ class, version uint8 }{{mad.ClassSubnLID, 1}, {mad.ClassSubnDR, 1}, {mad.ClassPerf, 1}, {mad.ClassSubnAdm, 2}} {
		id, err := tr.Register(t.Context(), fabric.Agent{Class: c.class, Version: c.version}.WithMethods(mad.MethodGet))
		if err != nil {
			t.Fatalf("far port: register class 0x%02x: %v", c.class, err)
		}
		r.agents[c.class] = id
	}
	r.wg.Go(r.serve)
	t.Cleanup(func() { tr.Close(); r.wg.Wait() })
	return r
}

// serve answers until the Transport is closed.
func (r *farResponder) serve() {
	ctx := context.Background()
	var p fabric.Packet
	for err := r.tr.Recv(ctx, &p); !errors.Is(err, fabric.ErrPortClosed); err = r.tr.Recv(ctx, &p) {
		if err != nil {
			continue
		}
		c := mad.MgmtClassOf(p.Data)
		r.mu.Lock()
		r.from[c] = append(r.from[c], p.Addr.LID)
		r.mu.Unlock()
		_ = r.tr.Send(ctx, &fabric.Packet{Agent: r.agents[c], Addr: p.Addr, Data: fabrictest.GetResp(p.Data, 0)})
	}
}

func (r *farResponder) sources() map[uint8][]uint16 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.from
}

// TestEngineOnPlanes: an engine Session on a planarized port sends its
// SMPs through the SMI device (they reach the far port from the SMI
// side's LID 3) and PerfMgt and SA through the GSI device (LID 1), and
// gets every answer back on the device it left from.
func TestEngineOnPlanes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFabric(t, planarHost())
		r := newFarResponder(t, mustOpen(t, f, "mlx5_9", 1))
		s, err := engine.New(mustOpen(t, f, "", 0), &engine.Options{Timeout: 100 * time.Millisecond, Retries: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		askFar(t, s)
		if diff := cmp.Diff(bySide(smiLID, gsiLID), r.sources()); diff != "" {
			t.Errorf("source LIDs of the requests by class (-want +got):\n%s", diff)
		}
	})
}

// askFar sends the far port (farLID) a LID-routed SMP, a PerfMgt Get, an
// SA Get and a DR SMP through s; each must be answered.
func askFar(t *testing.T, s *engine.Session) {
	t.Helper()
	ctx := t.Context()
	if _, err := s.NodeInfo(ctx, engine.LID(farLID)); err != nil {
		t.Errorf("NodeInfo by LID: %v", err)
	}
	if _, err := s.Perf(ctx, engine.LID(farLID), mad.MethodGet, perf.AttrPortCounters, 1, nil); err != nil {
		t.Errorf("PortCounters: %v", err)
	}
	sa := make([]byte, mad.Size)
	sa[0], sa[1], sa[2], sa[3] = 1, mad.ClassSubnAdm, 2, mad.MethodGet
	sa[16], sa[17] = 0x00, 0x11 // NodeRecord
	if _, err := s.Do(ctx, &fabric.Packet{Addr: fabric.Addr{LID: farLID, QPN: 1, QKey: 0x80010000}, Data: sa}); err != nil {
		t.Errorf("SA Get: %v", err)
	}
	dr := make([]byte, mad.Size)
	dr[0], dr[1], dr[2], dr[3] = 1, mad.ClassSubnDR, 1, mad.MethodGet
	dr[16], dr[17] = 0x00, 0x11
	if _, err := s.Do(ctx, &fabric.Packet{Addr: fabric.Addr{LID: farLID}, Data: dr}); err != nil {
		t.Errorf("DR SMP Get: %v", err)
	}
}

// bySide is the source LIDs the far responder sees from askFar when the
// SMPs leave from LID smi and the rest from LID gsi.
func bySide(smi, gsi uint16) map[uint8][]uint16 {
	return map[uint8][]uint16{mad.ClassSubnLID: {smi}, mad.ClassSubnDR: {smi}, mad.ClassPerf: {gsi}, mad.ClassSubnAdm: {gsi}}
}

// loneGSIHost has a lone IsSMDisabled port first in directory order
// (mlx5_0: a GSI side with no SMI device), a planarized HCA (mlx5_1 GSI,
// mlx5_2 SMI) and a normal port (mlx5_9).
func loneGSIHost() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300000100, umadtest.HostPort{Num: 1, LID: 5, State: 4, PhysState: 5,
		CapMask: 0x2659e848 | umadtest.IsSMDisabled})
	h.AddCA("mlx5_1", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: gsiLID, State: 4, PhysState: 5,
		GUID: planeID, CapMask: 0x2659e848 | umadtest.IsSMDisabled})
	h.AddCA("mlx5_2", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, LID: smiLID, State: 4, PhysState: 5, GUID: planeID})
	h.AddCA("mlx5_9", 1, 0x0002c90300009000, umadtest.HostPort{Num: 1, LID: farLID, State: 4, PhysState: 5})
	return h
}

// TestOpenPort2: OpenPort2 opens as mad_rpc_open_port2 (libibmad/rpc.c
// get_smi_gsi_pair, get_port_for_class): the pair first, enforce_smi
// skipping pairs without an SMI side (the default port moves past the lone
// GSI port) and refusing one named, or an SMI side that cannot be opened;
// without it, the GSI side alone carries the SMPs.
func TestOpenPort2(t *testing.T) {
	type side struct {
		ca, smi string
		lid     uint16
	}
	for _, tc := range []struct {
		name    string
		ca      string
		port    int
		enforce bool
		deny    string // a device path that cannot be opened
		want    side   // the Transport's port: its CA, SMI side, LID
		wantErr string
	}{
		{name: "default", want: side{"mlx5_0", "", 5}},
		{name: "default enforced", enforce: true, want: side{"mlx5_1", "mlx5_2", gsiLID}},
		{name: "lone GSI", ca: "mlx5_0", port: 1, want: side{"mlx5_0", "", 5}},
		{name: "lone GSI enforced", ca: "mlx5_0", port: 1, enforce: true, wantErr: "umad: no SMI/GSI pair for mlx5_0 with an SMI port 1"},
		{name: "GSI named", ca: "mlx5_1", port: 1, enforce: true, want: side{"mlx5_1", "mlx5_2", gsiLID}},
		{name: "SMI named", ca: "mlx5_2", enforce: true, want: side{"mlx5_1", "mlx5_2", gsiLID}},
		{name: "normal", ca: "mlx5_9", port: 1, enforce: true, want: side{"mlx5_9", "", farLID}},
		{name: "SMI denied", ca: "mlx5_1", port: 1, deny: "/dev/infiniband/umad2", want: side{"mlx5_1", "", gsiLID}},
		{name: "SMI denied enforced", ca: "mlx5_1", port: 1, enforce: true, deny: "/dev/infiniband/umad2",
			wantErr: "umad2: permission denied (the SMI side of mlx5_1 port 1; enforce_smi sends SMPs through it alone)"},
		{name: "GSI denied", ca: "mlx5_2", port: 1, deny: "/dev/infiniband/umad1", wantErr: "permission denied (the GSI side of mlx5_2 port 1)"},
		{name: "no such CA", ca: "mlx5_7", wantErr: "no SMI/GSI pair"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := loneGSIHost()
			if tc.deny != "" {
				h.Deny(tc.deny)
			}
			f := newFabric(t, h)
			tr, err := f.OpenPort2(t.Context(), tc.ca, tc.port, tc.enforce)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("OpenPort2 = %v; want an error with %q", err, tc.wantErr)
				}
				if strings.HasPrefix(tc.wantErr, "umad: no SMI") && !errors.Is(err, fabric.ErrNoDevice) {
					t.Errorf("error %v does not wrap fabric.ErrNoDevice", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tr.Close()
			a := tr.Port()
			if got := (side{a.CAName, a.SMIName, a.LID}); got != tc.want {
				t.Errorf("port %+v; want %+v", got, tc.want)
			}
		})
	}
}

// planesHost is a planarized HCA of four planes as libibumad's pairing
// sees it: its SMI device mlx5_1 has a port per plane (umad1..umad4, LIDs
// 11..14), its GSI device mlx5_0 one port (umad0, LID 1, IsSMDisabled),
// all five sharing one port GUID; mlx5_9 is a far port (LID 2).
func planesHost() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddPlanarized("mlx5_0", "mlx5_1", 0x0002c90300001000, planeID, gsiLID, 11, 12, 13, 14)
	h.AddCA("mlx5_9", 1, 0x0002c90300009000, umadtest.HostPort{Num: 1, LID: farLID, State: 4, PhysState: 5})
	return h
}

// TestEngineOnEveryPlane: on a planarized HCA with an SMI device per
// plane (one umad device per port of the SMI CA), opening plane P (the
// SMI side's port P, by Open as 44's tools and by OpenPort2 as current
// rdma-core's, with or without enforce_smi) gives the pair of plane P's
// SMI device and the GSI device: an engine Session's LID-routed and DR
// SMPs reach the far port from plane P's LID (10+P), its PerfMgt and SA
// from the GSI device's (1). Were the sides swapped, or every plane's
// SMPs sent through one device, the source LIDs would differ. fabric's
// PairOf gives the same pair.
func TestEngineOnEveryPlane(t *testing.T) {
	opens := map[string]func(f *kernel.Fabric, ctx context.Context, port int) (fabric.Transport, error){
		"Open": func(f *kernel.Fabric, ctx context.Context, port int) (fabric.Transport, error) {
			return f.Open(ctx, "mlx5_1", port)
		},
		"OpenPort2": func(f *kernel.Fabric, ctx context.Context, port int) (fabric.Transport, error) {
			return f.OpenPort2(ctx, "mlx5_1", port, false)
		},
		"OpenPort2 enforce_smi": func(f *kernel.Fabric, ctx context.Context, port int) (fabric.Transport, error) {
			return f.OpenPort2(ctx, "mlx5_1", port, true)
		},
	}
	for _, how := range []string{"Open", "OpenPort2", "OpenPort2 enforce_smi"} {
		for plane := 1; plane <= 4; plane++ {
			synctest.Test(t, func(t *testing.T) {
				f := newFabric(t, planesHost())
				r := newFarResponder(t, mustOpen(t, f, "mlx5_9", 1))
				pp, err := fabric.PairOf(t.Context(), f, "mlx5_1", plane, true)
				if want := (fabric.PortPair{SMIName: "mlx5_1", SMIPort: plane, GSIName: "mlx5_0", GSIPort: 1}); err != nil || pp != want {
					t.Errorf("%s plane %d: PairOf = %+v, %v; want %+v", how, plane, pp, err, want)
				}
				tr, err := opens[how](f, t.Context(), plane)
				if err != nil {
					t.Fatalf("%s plane %d: %v", how, plane, err)
				}
				a := tr.Port()
				if a.CAName != "mlx5_0" || a.SMIName != "mlx5_1" || a.SMIPort != plane {
					t.Errorf("%s plane %d: port %s/%d, SMI side %s/%d; want the GSI device mlx5_0/1 with SMI mlx5_1/%d", how, plane, a.CAName, a.PortNum, a.SMIName, a.SMIPort, plane)
				}
				s, err := engine.New(tr, &engine.Options{Timeout: 100 * time.Millisecond, Retries: 1})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				askFar(t, s)
				want := bySide(uint16(10+plane), gsiLID)
				if diff := cmp.Diff(want, r.sources()); diff != "" {
					t.Errorf("%s plane %d: source LIDs of the requests by class (-want +got):\n%s", how, plane, diff)
				}
			})
		}
	}
}

// TestPlaneDevicesPairedAsLibibumad: were each plane its own SMI CA
// (mlx5_1 and mlx5_2, one port each, sharing the GSI device mlx5_0's port
// GUID), libibumad's pairing keeps one SMI name per port GUID, the last
// device's (umad_get_smi_gsi_pairs overwrites smi_name): the pair is
// (mlx5_2, mlx5_0) and no pair names mlx5_1. OpenPort2 of mlx5_1 then
// fails as mad_rpc_open_port2 does (ENODEV); Open (umad_open_port) opens
// it alone, its SMPs and GMPs both through it.
func TestPlaneDevicesPairedAsLibibumad(t *testing.T) {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: gsiLID, State: 4, PhysState: 5,
		GUID: planeID, CapMask: 0x2659e848 | umadtest.IsSMDisabled})
	h.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, LID: 11, State: 4, PhysState: 5, GUID: planeID})
	h.AddCA("mlx5_2", 1, 0x0002c90300003000, umadtest.HostPort{Num: 1, LID: 12, State: 4, PhysState: 5, GUID: planeID})
	f := newFabric(t, h)
	pairs, err := f.Pairs(t.Context())
	if want := []fabric.PortPair{{SMIName: "mlx5_2", GSIName: "mlx5_0"}}; err != nil || !cmp.Equal(pairs, want) {
		t.Errorf("Pairs = %+v, %v; want %+v", pairs, err, want)
	}
	for _, enforce := range []bool{false, true} {
		if tr, err := f.OpenPort2(t.Context(), "mlx5_1", 1, enforce); !errors.Is(err, fabric.ErrNoDevice) {
			t.Errorf("OpenPort2(mlx5_1, enforce_smi %v) = %v, %v; want ErrNoDevice", enforce, tr, err)
		}
	}
	tr := mustOpen(t, f, "mlx5_1", 1)
	if _, ok := tr.(*kernel.Transport); !ok || tr.Port().SMIName != "" || tr.Port().LID != 11 {
		t.Errorf("Open(mlx5_1) = %T SMI %q LID %d; want mlx5_1 alone", tr, tr.Port().SMIName, tr.Port().LID)
	}
	tr = mustOpen(t, f, "mlx5_2", 1)
	defer tr.Close()
	if a := tr.Port(); a.CAName != "mlx5_0" || a.SMIName != "mlx5_2" {
		t.Errorf("Open(mlx5_2) = %s with SMI %q; want the pair (mlx5_2, mlx5_0)", a.CAName, a.SMIName)
	}
}
