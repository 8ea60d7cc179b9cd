package ibsimdiff

import (
	"strings"
	"testing"
)

// TestCombinedRoutesMatchCTools: smpquery -c, libibmad's combined route
// (IB_DEST_DRSLID: "<lid> <route>", the two arguments joined by a space,
// LID-routed to the LID, then directed, DrSLID the local LID). ibsim
// drops DR SMPs whose DrSLID is not permissive, so the C tool times out
// on every one it sends ("node info query failed", status 255), and so
// must ibscript; what the C tool refuses before it sends (a LID of 0, an
// empty route), -D given after -c (the last of -L, -G, -D, -c wins) and
// the op's port one place on are compared too. What a combined route
// reaches is engine's TestCombinedRoute and cmd/ibscript's
// TestSMPQueryCombined, on the embedded simulator, which follows them.
func TestCombinedRoutesMatchCTools(t *testing.T) {
	s := diagSim(t, "../topologies/net.mixed-router")
	for _, args := range [][]string{
		{"-c", "nodedesc", "1", "0,5"}, {"-c", "nodeinfo", "2", "0,1"}, {"-c", "nodedesc", "3", "0"},
		{"-c", "portinfo", "1", "0,5", "2"}, {"-c", "nodedesc", "1"}, {"-c", "nodedesc", "1,0,5"},
		{"-c", "nodedesc", "0", "0,1"}, {"-c", "nodedesc", "0xc000", "0,1"}, {"-c", "nodedesc", "x", "0,1"},
		{"-c", "nodedesc", "1", ""}, {"-c", "-D", "nodedesc", "1", "0,5"}, {"-D", "-c", "nodedesc", "0", "0"},
		{"-c", "-L", "nodedesc", "1", "0,5"}, {"-c", "bogus", "1", "0,5"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			diffToolIBExit(t, s, "HcaX", "smpquery", args...)
		})
	}
}
