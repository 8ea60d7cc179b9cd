package fabrictest_test

import (
	"testing"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/internal/leaktest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

func TestPipe(t *testing.T) {
	fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		p := fabrictest.NewPipe(nil)
		t.Cleanup(func() { p.Close() })
		return p.Transport(), p
	})
}

func TestPipeDelayed(t *testing.T) {
	fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		p := fabrictest.NewPipe(&fabrictest.PipeOptions{Delay: 3e6})
		t.Cleanup(func() { p.Close() })
		return p.Transport(), p
	})
}

// A second Mux of the same port, used as the Transport under test, gets
// its MADs routed through the shared mux.Port.
func TestPipeSecondMux(t *testing.T) {
	fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		p := fabrictest.NewPipe(nil)
		t.Cleanup(func() { p.Close() })
		return p.Open(), p
	})
}
