package kernel_test

import (
	"fmt"
	"testing"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/internal/leaktest"
	"github.com/ibscript/ibscript/native/umad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// modelTransport opens a Transport on a fresh fd of port kp.
func modelTransport(t testing.TB, kp *umadtest.Port, name string) *kernel.Transport {
	t.Helper()
	path := fmt.Sprintf("/dev/infiniband/%s", name)
	fd, err := kp.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := umad.NewPort(fd, path, "mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	if p.HeaderSize() != umad.HeaderSize {
		t.Fatalf("header size %d after ENABLE_PKEY, want %d", p.HeaderSize(), umad.HeaderSize)
	}
	return kernel.NewTransport(p, fabric.PortAttr{CAName: "mlx5_0", PortNum: 1, LID: kp.LID()})
}

// openPair builds a two-port model kernel: the Transport under test on
// LID 1, and a TransportPeer on LID 2.
func openPair(t *testing.T) (fabric.Transport, fabrictest.Peer) {
	k := umadtest.New(nil)
	a, b := k.AddPort(1), k.AddPort(2)
	tr := modelTransport(t, a, "umad0")
	ptr := modelTransport(t, b, "umad1")
	peer, err := fabrictest.NewTransportPeer(t.Context(), ptr,
		fabric.Addr{LID: 2, QPN: 1, QKey: 0x80010000}, fabric.Addr{LID: 1, QPN: 1, QKey: 0x80010000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	return tr, peer
}

func TestTransportConformance(t *testing.T) {
	fabrictest.TestTransport(t, openPair)
}

// TestTransportConformanceRealTime runs the suite on the real clock, as
// it would run against a device, with short timeouts.
func TestTransportConformanceRealTime(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time suite in -short mode")
	}
	fabrictest.TestTransportOpts(t, openPair, &fabrictest.SuiteOptions{RealTime: true})
}
