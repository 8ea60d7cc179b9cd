package ibsimdiff

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

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
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	prog := fmt.Sprintf(`use IBswcountlimits; $IBswcountlimits::cache_dir = %q; $0 = "/usr/sbin/ibfindnodesusing"; do $0; die $@ if $@;`, dir)
	cmd, err := s.Command(ctx, host, "perl", append([]string{"-e", prog}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	return runCmd(t, cmd)
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
	for _, rt := range routeTopologies[:3] {
		t.Run(topoName(rt.path), func(t *testing.T) {
			s, sess := routeSim(t, rt.path, rt.host)
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
				want := findNodesUsingPerl(t, s, rt.host, dir, c...)
				got := ibscriptTool(t, s, rt.host, "ibfindnodesusing", c...)
				if string(want.stdout) != string(got.stdout) || want.code != got.code {
					t.Errorf("ibfindnodesusing %s: exit %d, the script's %d; stdout:\n%s", strings.Join(c, " "), got.code, want.code, lineDiff(string(want.stdout), string(got.stdout)))
				}
			}
		})
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
