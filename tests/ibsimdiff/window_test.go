package ibsimdiff

import (
	"context"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
)

// TestDiscoverWideWindow: with far more MADs in flight than a unix
// datagram socket queues (net.unix.max_dgram_qlen, 10 by default),
// discovery neither deadlocks nor loses a MAD. The client once delivered
// from its socket reader: a completion handler's send blocked on ibsim's
// full socket while ibsim blocked writing to ours, and the sweep hung for
// good (reproduced here: fattree-2000 with OpenSM, 256 in flight, hung in
// the first sweeps).
func TestDiscoverWideWindow(t *testing.T) {
	s := privateSM(t, "../topologies/fattree-2000.net")
	sess, tr := session(t, s, "", nil, &engine.Options{Timeout: time.Second, Window: 256})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for range 3 {
		d, err := sess.Discover(ctx, nil)
		if err != nil {
			t.Fatalf("discover with 256 in flight: %v", err)
		}
		if len(d.Errors) > 0 || len(d.Fabric.Nodes) != 2000 {
			t.Fatalf("discover with 256 in flight: %d nodes, errors %v", len(d.Fabric.Nodes), d.Errors)
		}
	}
	if st := tr.Stats(); st.Timeouts != 0 || st.Dropped != 0 {
		t.Errorf("stats %+v: want no timeouts or bounces", st)
	}
}
