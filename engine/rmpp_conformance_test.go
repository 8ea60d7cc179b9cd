package engine_test

import (
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
)

// The RMPP driver keeps the whole Transport contract for the traffic it
// passes through, over a transport with SetHandler (the pipe's mux) and
// over one without (its receive goroutine).
func TestRMPPDriverConformance(t *testing.T) {
	t.Run("handler", func(t *testing.T) {
		fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
			p := fabrictest.NewPipe(nil)
			t.Cleanup(func() { p.Close() })
			return engine.WithRMPP(p.Transport()), p
		})
	})
	t.Run("goroutine", func(t *testing.T) {
		fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
			p := fabrictest.NewPipe(nil)
			t.Cleanup(func() { p.Close() })
			return engine.WithRMPP(queueOnly(p.Transport())), p
		})
	})
}
