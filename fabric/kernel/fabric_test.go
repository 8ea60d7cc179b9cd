package kernel_test

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/native/umad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// twoCA is the realistic tree: a CA with port 1 Active (LID 1) and
// port 2 Down/Polling, and a switch (port 0, LID 2).
func twoCA() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5},
		umadtest.HostPort{Num: 2, State: 1, PhysState: 2})
	h.AddCA("sw0", 2, 0x0002c90300002000, umadtest.HostPort{Num: 0, LID: 2, State: 4, PhysState: 5})
	return h
}

func newFabric(t *testing.T, h *umadtest.Host) *kernel.Fabric {
	f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open})
	t.Cleanup(func() { f.Close() })
	return f
}

func TestFabricPorts(t *testing.T) {
	f := newFabric(t, twoCA())
	ports, err := f.Ports(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ports {
		got = append(got, p.CAName+"/"+string(rune('0'+p.PortNum)))
	}
	// MapFS lists directories sorted; the order is libibumad's readdir
	// order, which os.DirFS gives unsorted (umad.CADeviceList).
	if strings.Join(got, " ") != "mlx5_0/1 mlx5_0/2 sw0/0" {
		t.Errorf("Ports = %v", got)
	}
	p := ports[0]
	if p.NodeType != 1 || p.NodeGUID != 0x0002c90300001000 || p.PortGUID != 0x0002c90300001001 ||
		p.GIDPrefix != 0xfe80000000000000 || p.LID != 1 || p.State != 4 || p.Rate != 100 || p.CapMask != 0x2659e848 {
		t.Errorf("port attributes %+v", p)
	}
	if ports[2].NodeType != 2 {
		t.Errorf("switch node type %d", ports[2].NodeType)
	}
}

func TestFabricOpen(t *testing.T) {
	ctx := t.Context()
	tests := []struct {
		ca       string
		port     int
		wantCA   string
		wantPort int
	}{
		{"", 0, "mlx5_0", 1}, // first active port in directory order
		{"mlx5_0", 0, "mlx5_0", 1},
		{"mlx5_0", 2, "mlx5_0", 2}, // given: no state check
		{"sw0", 0, "sw0", 0},
		{"", 2, "sw0", 0}, // port 2 of mlx5_0 is only usable; the switch is "active" at port 0 whatever the filter
	}
	for _, tt := range tests {
		f := newFabric(t, twoCA())
		tr, err := f.Open(ctx, tt.ca, tt.port)
		if err != nil {
			t.Errorf("Open(%q, %d): %v", tt.ca, tt.port, err)
			continue
		}
		if a := tr.Port(); a.CAName != tt.wantCA || a.PortNum != tt.wantPort {
			t.Errorf("Open(%q, %d) = %s/%d, want %s/%d", tt.ca, tt.port, a.CAName, a.PortNum, tt.wantCA, tt.wantPort)
		}
		if !tr.Caps().RMPP {
			t.Errorf("Transport does not report kernel RMPP")
		}
	}
	// Fabric.Close closes the open Transports.
	f := newFabric(t, twoCA())
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	var p fabric.Packet
	if err := tr.Recv(ctx, &p); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Recv after Fabric.Close: %v", err)
	}
	if _, err := f.Open(ctx, "", 0); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Open after Close: %v", err)
	}
}

func TestFabricOpenErrors(t *testing.T) {
	ctx := t.Context()
	empty := umadtest.NewHost(umadtest.New(nil))
	delete(empty.FS, umad.SysInfinibandMAD+"/abi_version")
	_, err := newFabric(t, empty).Open(ctx, "", 0)
	if !errors.Is(err, kernel.ErrNoDevices) || !strings.Contains(err.Error(), "no InfiniBand devices: /sys/class/infiniband_mad has no umad ports") {
		t.Errorf("no devices: %v", err)
	}
	h := twoCA()
	h.Deny("/dev/infiniband/umad0")
	_, err = newFabric(t, h).Open(ctx, "", 0)
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "/dev/infiniband/umad0") || !strings.Contains(err.Error(), "rdma group") {
		t.Errorf("permission: %v", err)
	}
	h = twoCA()
	h.FS[umad.SysInfinibandMAD+"/abi_version"] = &fstest.MapFile{Data: []byte("3\n")}
	_, err = newFabric(t, h).Open(ctx, "", 0)
	if !errors.Is(err, syscall.EOPNOTSUPP) || !strings.Contains(err.Error(), "version 3") {
		t.Errorf("old ABI: %v", err)
	}
	_, err = newFabric(t, twoCA()).Open(ctx, "mlx9", 0)
	if !errors.Is(err, syscall.ENODEV) {
		t.Errorf("unknown CA: %v", err)
	}
	if !kernel.HasPorts(twoCA().FS) || kernel.HasPorts(empty.FS) {
		t.Error("HasPorts")
	}
}

// TestFabricConformance runs the suite on Transports from Fabric.Open:
// the default port of a host, with its peer on the switch's port 0.
func TestFabricConformance(t *testing.T) {
	fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		f := newFabric(t, twoCA())
		tr, err := f.Open(t.Context(), "", 0)
		if err != nil {
			t.Fatal(err)
		}
		ptr, err := f.Open(t.Context(), "sw0", 0)
		if err != nil {
			t.Fatal(err)
		}
		peer, err := fabrictest.NewTransportPeer(t.Context(), ptr, fabric.Addr{LID: 2, QPN: 1}, fabric.Addr{LID: 1, QPN: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { peer.Close() })
		return tr, peer
	})
}

// TestFabricErrnoContract holds the kernel backend (over the umadtest
// host's sysfs and fds) to fabrictest.TestFabric: ENODEV for unknown CAs
// and ports, the P_Keys of sysfs in PortAttr, EINVAL after Close.
func TestFabricErrnoContract(t *testing.T) {
	fabrictest.TestFabric(t, newFabric(t, twoCA()))
}

// Packet <-> header conversion details.
func TestTransportConversion(t *testing.T) {
	h := twoCA()
	f := newFabric(t, h)
	ctx := t.Context()
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	sa, err := tr.Register(ctx, fabric.Agent{Class: 0x03, Version: 2})
	if err != nil {
		t.Fatalf("SA agent (rmpp_version 1): %v", err)
	}
	if _, err := tr.Register(ctx, fabric.Agent{Class: 0x03, Version: 2, RMPPVersion: 2}); !errors.Is(err, fabric.ErrInvalid) {
		t.Errorf("rmpp_version 2: %v", err)
	}
	id, err := tr.Register(ctx, fabric.Agent{Class: 0x09, Version: 1}.WithMethods(0x05))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Register(ctx, fabric.Agent{Class: 0x09, Version: 1}.WithMethods(0x05)); !errors.Is(err, fabric.ErrMethodInUse) {
		t.Errorf("same transport conflict: %v", err)
	}
	// Another fd of the port owns the method: the kernel's EINVAL.
	other, err := f.Open(ctx, "mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Register(ctx, fabric.Agent{Class: 0x09, Version: 1}.WithMethods(0x05)); !errors.Is(err, fabric.ErrMethodInUse) || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("cross-fd conflict: %v", err)
	}
	if err := tr.Send(ctx, &fabric.Packet{Agent: id, Data: make([]byte, 35)}); !errors.Is(err, fabric.ErrInvalid) {
		t.Errorf("35-byte send: %v", err)
	}
	if err := tr.Send(ctx, &fabric.Packet{Agent: 9, Data: make([]byte, 256)}); !errors.Is(err, fabric.ErrNoAgent) {
		t.Errorf("send from agent 9: %v", err)
	}
	_ = sa
	// Received header fields map to Addr.
	kp := h.Port("/dev/infiniband/umad0")
	m := fabrictest.NewMAD(1, 0x05, 0x1234)
	kp.Inject(umadtest.Addr{LID: 77, QPN: 1, SL: 4, PKeyIndex: 3}, m)
	var p fabric.Packet
	if err := tr.Recv(ctx, &p); err != nil {
		t.Fatal(err)
	}
	if p.Agent != id || p.Addr.LID != 77 || p.Addr.QPN != 1 || p.Addr.SL != 4 || p.Addr.PKeyIndex != 3 || p.Addr.QKey != 0x80010000 || len(p.Data) != 256 {
		t.Errorf("received %+v", p)
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if err := tr.Recv(ctx2, &p); !errors.Is(err, context.Canceled) {
		t.Errorf("Recv(canceled) = %v", err)
	}
}
