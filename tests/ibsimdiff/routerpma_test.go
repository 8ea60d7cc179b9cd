package ibsimdiff

import (
	"bytes"
	"testing"
)

// TestRouterPMAMatchesCTools: ibqueryerrors on fabrics with a router whose
// ports have no LID (OpenSM leaves a router's links in Init): both tools
// send its ClassPortInfo and PortCounters queries to LID 0, which ibsim
// bounces at once; the C tool (umad2sim hands the bounce to libibmad as
// an immediate ETIMEDOUT) tries again and gives up at once, and so does
// ibscript's ibsim client, whatever -t says: with -t 30000 a try left to
// time out would outlast the run's minute. Same text ("3 PMA query
// failures") and status. Before ibsim's bounce ended the try, each query
// waited its -t (4 tries of 30 s here) and the run was killed.
func TestRouterPMAMatchesCTools(t *testing.T) {
	for _, c := range []struct{ topo, host string }{
		{"../topologies/net.mixed-router", "HcaX"},
		{topoMlnx, "CX3"},
	} {
		// Its own ibsim and OpenSM: with -t 30000 any query left
		// unanswered ends the run, and the shared fabric's OpenSM was
		// seen not to answer ibscript's PathRecord GetTable after
		// TestPerfQueryMatchesC (a fault of its own, not yet understood).
		s, _ := privateSim(t, c.topo)
		for _, args := range [][]string{
			{"-t", "30000"}, {"-t", "30000", "--router"}, {"-t", "30000", "--router", "-r", "--details"},
			{"-t", "30000", "--skip-sl", "--router"},
		} {
			r := diffTool(t, s, c.host, "ibqueryerrors", args...)
			if !bytes.Contains(r.stdout, []byte("PMA query failures")) {
				t.Errorf("ibqueryerrors %v on %s: the C tool reports no PMA query failure: the router was not compared\n%s", args, c.topo, r.stdout)
			}
		}
	}
}

// TestQueryErrorsSilentSAMatchesC: where the SA does not answer (OpenSM
// paused), ibqueryerrors' PathRecord query waits its own 3 s once,
// whatever -t says (path_record_query sets DEFAULT_HALF_WORLD_PR_TIMEOUT
// and sa_query sends once), then prints nothing, status 0; so does
// ibscript. Before, ibscript waited -t per try for each of its tries: with
// -t 30000, past the run's minute.
func TestQueryErrorsSilentSAMatchesC(t *testing.T) {
	s, _ := privateSim(t, "../topologies/net.mixed-router")
	t.Cleanup(s.PauseSM())
	for _, args := range [][]string{{"-t", "30000"}, {"-t", "100", "-r"}} {
		r := diffTool(t, s, "HcaX", "ibqueryerrors", args...)
		if !bytes.Contains(r.stderr, []byte("path_query failed")) {
			t.Errorf("ibqueryerrors %v: the C tool's PathRecord query did not fail: the silent SA was not compared (stderr %q)", args, r.stderr)
		}
	}
}

// TestSAQueryGoneSMMatchesC: with OpenSM stopped, its client is gone from
// ibsim, which bounces the SA queries sent to its LID at once; the C tool
// (umad2sim: an immediate ETIMEDOUT) fails in milliseconds, and so does
// ibscript, whose RMPP driver keeps the SA query's tries and ends the
// bounced one at once (fabric.Caps.SetLost): same stdout and status
// ("Query SA failed", 110). With -t 100000 a try left to time out would
// outlast the run's minute; before, ibscript waited -t per try (1 s by
// default).
func TestSAQueryGoneSMMatchesC(t *testing.T) {
	s, _ := privateSim(t, "../topologies/net.mixed-router")
	s.StopSM()
	for _, args := range [][]string{{"-t", "100000"}, {"-t", "100000", "-p"}, {"-t", "100000", "NR", "1"}, {"-t", "100000", "-g"}} {
		r := diffTool(t, s, "HcaX", "saquery", args...)
		if r.code != 110 {
			t.Errorf("saquery %v: the C tool's status %d, want 110 (Query SA failed): the bounce was not compared (stderr %q)", args, r.code, r.stderr)
		}
	}
}
