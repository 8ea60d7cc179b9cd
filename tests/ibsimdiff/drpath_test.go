package ibsimdiff

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
)

// TestDirectedRoutesMatchCTools: iblinkinfo's and ibqueryerrors' -D with
// routes of several hops, as libibmad's str2drpath reads them: the first
// element stands for the local port whatever it says (5,1 is 0,1), each
// element is atoi'd into a byte (257 is 1), a trailing comma ends the
// route; to a switch two hops away, a CA and a router behind it, the
// local CA again, out of an unused switch port and a port past the
// switch's (the route leaves the fabric), with an egress port 0 (sent as
// typed: ibsim takes it as the port the SMP is on, or the switch itself),
// with the options that change what the partial scan prints.
func TestDirectedRoutesMatchCTools(t *testing.T) {
	s := diagSim(t, "../topologies/net.mixed-router")
	const host = "HcaX" // its port 1 is cabled to SwA[1]
	routes := []string{
		"5,1", "9", "0,1,5", "7,1,5", "0,1,5,7", "0,1,2", "0,1,3", "3,1,3",
		"0,1,5,1", "0,257", "0,1,", "0,1,4", "0,1,9", "0,1,5,9", "0,2,5",
		",1", "x", "0,0", "0,1,0", "0,1,,5", "0,1,0,2", "0,0,2", "0,1,0,5,7",
	}
	// Each command line is a parallel subtest: they only read the
	// fabric, and most of their time is the C tools waiting out the
	// SMPs of routes that leave it (93 s one after another).
	diff := func(tool string, args ...string) {
		t.Run(tool+" "+strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			diffTool(t, s, host, tool, args...)
		})
	}
	for _, tool := range []string{"iblinkinfo", "ibqueryerrors"} {
		for _, r := range routes {
			diff(tool, "-D", r)
		}
		for _, args := range [][]string{
			{"-D", "5,1", "-a"}, {"-D", "0,1,5", "-a"}, {"-D", "4,1,5,7", "-a", "-n", "1"},
			{"-D", "0,1,9", "-a"}, {"-D", "0,1,3", "-a"}, {"-D", "0,0", "-a"}, {"-D", "0,1,0,5", "-a", "-n", "2"},
		} {
			if tool == "ibqueryerrors" && args[2] == "-a" {
				continue // ibqueryerrors has no -a
			}
			diff(tool, args...)
		}
	}
	for _, args := range [][]string{
		{"-D", "5,1", "-p"}, {"-D", "0,1,5", "-l", "-p"}, {"-D", "6,1,5", "--switches-only"},
		{"-D", "0,1,5,7", "--switches-only"}, {"-D", "2,1,2", "--cas-only", "-l"}, {"-D", "0,1,5", "-d"},
	} {
		diff("iblinkinfo", args...)
	}
	for _, args := range [][]string{
		{"-D", "5,1", "-r"}, {"-D", "0,1,5", "--details"}, {"-D", "6,1,5", "--switch", "-r"},
		{"-D", "0,1,3", "--router"}, {"-D", "0,1,5,7", "-c"}, {"-D", "1,1,5", "--skip-sl"},
	} {
		diff("ibqueryerrors", args...)
	}
	// Refused, where the C tools go on: an empty route (str2drpath reads
	// no element; iblinkinfo then fails its NodeInfo, status 1).
	for _, args := range [][]string{
		{"iblinkinfo", "-D", ""}, {"ibqueryerrors", "-D", ""},
	} {
		r := ibscriptTool(t, s, host, args[0], args[1:]...)
		if r.code != 2 || len(r.stdout) != 0 || !strings.Contains(string(r.stderr), "-D") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want status 2 and -D named on stderr", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		}
	}
	// The tools that address one port by -D read it with the same parser.
	for _, args := range [][]string{
		{"smpquery", "-D", "nodedesc", "7,1,5"}, {"smpquery", "-D", "nodeinfo", "0,1,5,7"},
		{"smpquery", "-D", "portinfo", "3,1,5", "5"}, {"smpdump", "-D", "2,1,5", "0x11"},
		{"ibaddr", "-D", "4,1,5"}, {"ibportstate", "-D", "8,1", "3"}, {"ibroute", "-D", "9,1,0,5"},
		{"smpquery", "-D", "nodedesc", "0,1,"}, {"smpquery", "-D", "nodedesc", "0,0"}, {"smpquery", "-D", "nodedesc", "0,1,0"},
		{"smpquery", "-D", "nodedesc", "0,1,0,5"}, {"smpdump", "-D", "0,1,0", "0x11"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			if r := diffTool(t, s, host, args[0], args[1:]...); r.code == 0 && len(strings.TrimSpace(string(r.stdout))) == 0 {
				t.Errorf("%s: the C tool printed nothing: nothing was compared", strings.Join(args, " "))
			}
		})
	}
}

// TestDRPathToLIDOnIbsim: current rdma-core's build_dr_path_to_lid
// (#1755), engine.Session.DRPathToLID, on live ibsim: the route it builds
// through the LFTs OpenSM set reaches the port of every LID (its
// NodeInfo's PortGUID). And iblinkinfo --diags-version=current -S GUID,
// which starts its partial scan from that route as current rdma-core's
// iblinkinfo does, prints what infiniband-diags 44's C iblinkinfo prints
// for -D with the route (the same libibnetdisc scan from a directed
// route), with and without -a.
func TestDRPathToLIDOnIbsim(t *testing.T) {
	for _, dt := range diagTopologies[:2] {
		t.Run(filepath.Base(dt.path), func(t *testing.T) {
			// An ibsim of its own: the shared one's OpenSM may no longer
			// answer the SA after the perfquery tests, and -S needs it.
			s, _ := privateSim(t, dt.path)
			sess, _ := session(t, s, dt.host, nil, nil)
			compared := 0
			for _, n := range fabricNodes(t, sess) {
				for num, p := range n.Ports {
					if p == nil || p.LID == 0 || (n.Type == topo.Switch && num != 0) {
						continue
					}
					route, err := sess.DRPathToLID(t.Context(), nil, p.LID)
					if err != nil {
						t.Errorf("%s port %d: lid %d: %v", n.Desc, num, p.LID, err)
						continue
					}
					ni, err := sess.NodeInfo(t.Context(), engine.Target{Kind: engine.ByDR, Path: route})
					if err != nil || ni.PortGUID != p.GUID {
						t.Errorf("%s port %d: lid %d: route %v reaches port GUID %#x (%v)", n.Desc, num, p.LID, route, ni.PortGUID, err)
						continue
					}
					// The tools for one port in three (each C run costs
					// an ibsim attach).
					if compared++; compared%3 != 1 {
						continue
					}
					for _, extra := range [][]string{nil, {"-a"}} {
						guid := fmt.Sprintf("0x%x", p.GUID)
						var want, got toolResult
						// A difference that goes away when both run again
						// was the loaded machine's (an SA or SMP answer
						// too late: -S then scans the whole fabric), as
						// diffTool takes it.
						for try := 0; try < loadTries; try++ {
							want = cTool(t, s, dt.host, "iblinkinfo", append([]string{"-D", pathString(route)}, extra...)...)
							got = ibscriptTool(t, s, dt.host, "iblinkinfo", append([]string{"--diags-version=current", "-S", guid}, extra...)...)
							if string(want.stdout) == string(got.stdout) && want.code == got.code {
								break
							}
							t.Logf("-S %s %v: the two differ (try %d of %d); both run again", guid, extra, try+1, loadTries)
						}
						if string(want.stdout) != string(got.stdout) || want.code != got.code {
							t.Errorf("iblinkinfo --diags-version=current -S %s %v (status %d) against C -D %s (status %d):\n%s",
								guid, extra, got.code, pathString(route), want.code, lineDiff(string(want.stdout), string(got.stdout)))
						}
					}
				}
			}
			if compared == 0 {
				t.Fatal("no LID compared")
			}
		})
	}
}

func pathString(route []uint8) string {
	s := make([]string, len(route))
	for i, p := range route {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ",")
}
