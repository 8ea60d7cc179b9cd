package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/host"
	"github.com/ibscript/ibscript/native/umad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// umadHost is a fake kernel with one CA: port 1 Active, port 2 down.
func umadHost() *umadtest.Host {
	h := umadtest.NewHost(umadtest.New(nil))
	h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5},
		umadtest.HostPort{Num: 2, LID: 3, State: 1, PhysState: 2})
	return h
}

// openFake is openBackend on the fake kernel h.
func openFake(ctx context.Context, c *config, stderr io.Writer, h *umadtest.Host) (*host.Host, error) {
	c.testHost = func(o *host.Options) { o.Kernel = &kernel.Options{FS: h.FS, Open: h.Open} }
	return openBackend(ctx, c, stderr)
}

// TestOpenUMADMessages: what the command line says opening umad: (the
// library's cases are host's tests): the default port on stderr, errors
// naming --fabric, auto's pointing at sim:.
func TestOpenUMADMessages(t *testing.T) {
	var stderr bytes.Buffer
	c := &config{fabricURI: "umad:", timeout: engine.DefaultTimeout, retries: 1}
	b, err := openFake(t.Context(), c, &stderr, umadHost())
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if got, want := stderr.String(), "ibscript: using mlx5_0 port 1 (LID 0x1)\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
	stderr.Reset()
	c.fabricURI = "umad:mlx5_0/2"
	b, err = openFake(t.Context(), c, &stderr, umadHost())
	if err != nil {
		t.Fatal(err)
	}
	b.Close()
	if stderr.Len() != 0 {
		t.Errorf("umad:mlx5_0/2: stderr %q, want nothing", stderr.String())
	}
	denied := umadHost()
	denied.Deny(umad.DevDir + "/umad0")
	for _, tc := range []struct {
		uri  string
		h    *umadtest.Host
		want string
	}{
		{"umad:mlx5_0/x", umadHost(), `--fabric umad:mlx5_0/x: bad port "x" (want 0..254)`},
		{"umad:", umadtest.NewHost(umadtest.New(nil)), "--fabric umad:: kernel: no InfiniBand devices: /sys/class/infiniband_mad has no umad ports"},
		{"auto", denied, "--fabric auto: kernel: umad: open /dev/infiniband/umad0 (mlx5_0 port 1): permission denied"},
	} {
		c.fabricURI = tc.uri
		_, err := openFake(t.Context(), c, io.Discard, tc.h)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.uri, err, tc.want)
		}
		if tc.uri == "auto" && (err == nil || !strings.HasSuffix(err.Error(), " (--fabric sim: uses the simulator)")) {
			t.Errorf("auto: %v, want it to point at sim:", err)
		}
	}
}
