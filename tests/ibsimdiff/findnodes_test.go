package ibsimdiff

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/topo"
)

// findNodesUsingPerl runs infiniband-diags' ibfindnodesusing.pl under
// umad2sim with its cache directory (IBswcountlimits' cache_dir,
// /var/cache/infiniband-diags, where the script keeps ibnetdiscover -g's
// output) moved to dir: the same script, its ibnetdiscover and ibroute
// runs, on the test's fabric.
func findNodesUsingPerl(t *testing.T, s *ibsimtest.Sim, host, dir string, args ...string) toolResult {
	t.Helper()
	return ibdiagPerl(t, s, host, dir, "/usr/sbin/ibfindnodesusing", args...)
}

// TestFindNodesUsingMatchesPerl: `ibscript ibfindnodesusing` prints what
// ibfindnodesusing.pl prints, with its status, for every port of the
// first two switches (CA ports, switch links, unlinked ports), a port
// typed "01" (the script looks it up as typed), a switch the fabric does
// not have, a GUID without its leading zeros, and no port (usage).
func TestFindNodesUsingMatchesPerl(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/ibfindnodesusing"); err != nil {
		t.Skip("infiniband-diags' ibfindnodesusing is not installed")
	}
	type fabricCase struct {
		path, host string
		lmc        bool // OpenSM --lmc 1: ibroute names a CA's second LID "(path #2 out of 2: ...", which the script's pattern skips
	}
	cases := []fabricCase{{path: "../topologies/net.route-ring", host: "h2", lmc: true}}
	for _, rt := range routeTopologies[:3] {
		cases = append(cases, fabricCase{path: rt.path, host: rt.host})
	}
	for _, rt := range cases {
		name := topoName(rt.path)
		if rt.lmc {
			name += "-lmc1"
		}
		t.Run(name, func(t *testing.T) {
			var s *ibsimtest.Sim
			if rt.lmc {
				ibsimtest.Require(t)
				var err error
				if s, err = ibsimtest.Start(t.Context(), t.TempDir(), rt.path, &ibsimtest.Options{OSMArgs: []string{"--lmc", "1"}}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(s.Stop)
			} else {
				s, _ = routeSim(t, rt.path, rt.host)
			}
			sess, _ := session(t, s, rt.host, nil, nil)
			d, err := sess.Discover(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			var cases [][]string
			sws := 0
			for _, n := range d.Fabric.Nodes {
				if n.Type != topo.Switch || sws == 2 {
					continue
				}
				sws++
				g := fmt.Sprintf("0x%016x", n.GUID)
				for p := 1; p <= n.NumPorts; p++ {
					cases = append(cases, []string{g, fmt.Sprint(p)})
				}
				cases = append(cases, []string{strings.ToUpper(fmt.Sprintf("%x", n.GUID)), "1"}, []string{g, "01"})
			}
			cases = append(cases, []string{"0x1234", "1"}, []string{"0x1234"}, []string{n0(d.Fabric), "1"})
			for _, c := range cases {
				diffFindNodesUsing(t, s, rt.host, dir, c...)
			}
		})
	}
}

// diffFindNodesUsing compares ibfindnodesusing.pl (its cache in dir) and
// `ibscript ibfindnodesusing` on args: stdout and status.
func diffFindNodesUsing(t *testing.T, s *ibsimtest.Sim, host, dir string, args ...string) {
	t.Helper()
	want := findNodesUsingPerl(t, s, host, dir, args...)
	got := ibscriptTool(t, s, host, "ibfindnodesusing", args...)
	if string(want.stdout) != string(got.stdout) || want.code != got.code {
		t.Errorf("ibfindnodesusing %s: exit %d, the script's %d; stdout:\n%s", strings.Join(args, " "), got.code, want.code, lineDiff(string(want.stdout), string(got.stdout)))
	}
}

// n0 is the first switch's description: a name argument.
func n0(f *topo.Fabric) string {
	for _, n := range f.Nodes {
		if n.Type == topo.Switch {
			return n.Desc
		}
	}
	return ""
}
