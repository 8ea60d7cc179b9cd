// Package ibsimdiff runs ibscript against a live ibsim fabric (started by
// internal/ibsimtest, with OpenSM under umad2sim) and compares what it
// sees with what infiniband-diags sees on the same fabric.
package ibsimdiff

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/ibscript/ibscript/internal/ibsimtest"
)

// shared holds one ibsim per topology for the whole package.
var shared ibsimtest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	shared.StopAll(code != 0)
	removeBuilt()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

const (
	topo2sw    = "../topologies/net.2sw2path4hca"
	topo2sw2p  = "../topologies/net.2sw2path4hca2port"
	topoFat500 = "../topologies/fattree-500.net"
)

// parallelTopologies: the tests that compare tools on several topologies
// run their per-topology subtests in parallel (t.Parallel; at most
// -parallel, GOMAXPROCS by default, at once). Each topology has its own
// ibsim (shared.Get), so no subtest sees another's fabric, and the suite
// spends most of its time waiting on ibsim and the C tools: side by side,
// the package ends well inside go test's default 10-minute timeout on a
// loaded 2-core machine, where one after another it took 9m50s alone.
