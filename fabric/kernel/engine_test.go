package kernel_test

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/sim/simtest"
)

// TestEngineOnKernel runs an engine Session on a kernel Transport over the
// model: an SMP nobody answers times out after 1+retries tries (the
// kernel's 24-byte timeout record is enough for the engine), and a
// PerfMgt Get that no agent of the far port owns gets the kernel's
// status 0x000C answer.
func TestEngineOnKernel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFabric(t, twoCA())
		s := simtest.Session(t, f, &engine.Options{Timeout: 100 * time.Millisecond, Retries: 2})
		start := time.Now()
		_, err := s.NodeInfo(t.Context(), engine.LID(2))
		var te *engine.TimeoutError
		if !errors.As(err, &te) || !errors.Is(err, fabric.ErrTimeout) || te.Tries != 3 || time.Since(start) != 300*time.Millisecond {
			t.Errorf("NodeInfo of a silent LID after %v: %v", time.Since(start), err)
		}
		_, err = s.Perf(t.Context(), engine.LID(2), mad.MethodGet, perf.AttrPortCounters, 1, nil)
		var se *engine.StatusError
		if !errors.As(err, &se) || se.Status != 0x000c {
			t.Errorf("Perf Get of an unowned class: %v, want status 0x000c", err)
		}
	})
}
