package main

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/native/umad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

func TestParseUMAD(t *testing.T) {
	tests := []struct {
		in   string
		ca   string
		port int
		err  string
	}{
		{"", "", 0, ""},
		{"mlx5_0", "mlx5_0", 0, ""},
		{"mlx5_0/2", "mlx5_0", 2, ""},
		{"/2", "", 2, ""},
		{"mlx5_0/x", "", 0, `bad port "x"`},
		{"mlx5_0/300", "", 0, `bad port "300"`},
		{"mlx5_0?node=a", "", 0, "bad CA name"},
	}
	for _, tt := range tests {
		ca, port, err := parseUMAD(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("parseUMAD(%q) error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || ca != tt.ca || port != tt.port {
			t.Errorf("parseUMAD(%q) = %q, %d, %v; want %q, %d", tt.in, ca, port, err, tt.ca, tt.port)
		}
	}
}

func umadHost() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5},
		umadtest.HostPort{Num: 2, LID: 3, State: 1, PhysState: 2})
	return h
}

func TestOpenUMAD(t *testing.T) {
	h := umadHost()
	o := &kernel.Options{FS: h.FS, Open: h.Open}
	var stderr bytes.Buffer
	c := &config{fabricURI: "umad:", timeout: engine.DefaultTimeout, retries: 1}
	b, err := openUMADWith(t.Context(), c, "", &stderr, o)
	if err != nil {
		t.Fatal(err)
	}
	if a := b.tr.Port(); a.CAName != "mlx5_0" || a.PortNum != 1 {
		t.Errorf("default port %s/%d", a.CAName, a.PortNum)
	}
	if !strings.Contains(stderr.String(), "using mlx5_0 port 1") {
		t.Errorf("stderr %q", stderr.String())
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	c.fabricURI = "umad:mlx5_0/2"
	b, err = openUMADWith(t.Context(), c, "mlx5_0/2", &stderr, o)
	if err != nil {
		t.Fatal(err)
	}
	if a := b.tr.Port(); a.PortNum != 2 {
		t.Errorf("port %d, want 2", a.PortNum)
	}
	b.Close()
}

func TestOpenUMADErrors(t *testing.T) {
	ctx := t.Context()
	c := &config{fabricURI: "umad:", timeout: engine.DefaultTimeout}
	none := umadtest.NewHost(umadtest.New(nil))
	_, err := openUMADWith(ctx, c, "", &bytes.Buffer{}, &kernel.Options{FS: none.FS, Open: none.Open})
	if err == nil || !strings.Contains(err.Error(), "kernel: no InfiniBand devices: /sys/class/infiniband_mad has no umad ports") {
		t.Errorf("no devices: %v", err)
	}
	h := umadHost()
	h.Deny(umad.DevDir + "/umad0")
	_, err = openUMADWith(ctx, c, "", &bytes.Buffer{}, &kernel.Options{FS: h.FS, Open: h.Open})
	if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "/dev/infiniband/umad0") || !strings.Contains(err.Error(), "root or as a member of the rdma group") {
		t.Errorf("permission: %v", err)
	}
	_, err = openUMADWith(ctx, c, "mlx9", &bytes.Buffer{}, &kernel.Options{FS: umadHost().FS, Open: umadHost().Open})
	if !errors.Is(err, syscall.ENODEV) {
		t.Errorf("unknown CA: %v", err)
	}
}
