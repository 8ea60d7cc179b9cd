package engine_test

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/sim"
)

// TestDiscoverDelayed is issue 9's delay fault end to end, on the
// bubble's clock: every response arrives 11-19 ms after its request, past
// the 10 ms MAD timeout, so every SMP is retransmitted once and is then
// answered by the late response to its first try (the TID is the same).
// Discovery finds the whole fabric and reports the retransmissions.
func TestDiscoverDelayed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, f := simSessionOpts(t, "../tests/topologies/net.2sw2path4hca", "", 0, &engine.Options{Timeout: 10 * time.Millisecond, Retries: 3})
		ref := f.Topology()
		if err := f.SetFaults(sim.Faults{Seed: 1, Delay: 15 * time.Millisecond, Jitter: 4 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		disc, err := s.Discover(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		st := f.FaultStats()
		t.Logf("%d nodes, %d SMPs, %d retransmits in %v (bubble time); faults %+v",
			len(disc.Fabric.Nodes), disc.MADs, disc.Retransmits, time.Since(start), st)
		if len(disc.Errors) != 0 {
			t.Errorf("%d errors, first %v", len(disc.Errors), disc.Errors[0])
		}
		if len(disc.Fabric.Nodes) != len(ref.Nodes) {
			t.Errorf("%d nodes, want %d", len(disc.Fabric.Nodes), len(ref.Nodes))
		}
		if w, g := linkSet(ref), linkSet(disc.Fabric); !slices.Equal(w, g) {
			t.Errorf("links %v, want %v", g, w)
		}
		if disc.Retransmits < uint64(disc.MADs) || st.Delayed == 0 {
			t.Errorf("%d retransmits for %d SMPs (%d delayed): want every SMP retransmitted", disc.Retransmits, disc.MADs, st.Delayed)
		}
	})
}
