package ibsimdiff

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/ibsimtest"
)

// ibdiagPerl runs one of infiniband-diags' Perl scripts (script, its
// path) under umad2sim with its cache directory (IBswcountlimits'
// cache_dir, /var/cache/infiniband-diags, where the scripts keep
// ibnetdiscover -g's output) moved to dir; "--" keeps its options from
// perl.
func ibdiagPerl(t *testing.T, s *ibsimtest.Sim, host, dir, script string, args ...string) toolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	prog := fmt.Sprintf(`use IBswcountlimits; $IBswcountlimits::cache_dir = %q; $0 = %q; do $0; die $@ if $@;`, dir, script)
	cmd, err := s.Command(ctx, host, "perl", append([]string{"-e", prog, "--"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, "PATH=/usr/sbin:/usr/bin:/sbin:/bin")
	return runCmd(t, cmd)
}

// diffIDsVerify compares the script and `ibscript ibidsverify` on args:
// stdout and status. The script's cache is remade each time (a fresh
// directory), as ibscript always discovers.
func diffIDsVerify(t *testing.T, s *ibsimtest.Sim, host string, args ...string) toolResult {
	t.Helper()
	want := ibdiagPerl(t, s, host, t.TempDir(), "/usr/sbin/ibidsverify", args...)
	got := ibscriptTool(t, s, host, "ibidsverify", args...)
	if string(want.stdout) != string(got.stdout) || want.code != got.code {
		t.Errorf("ibidsverify %s: exit %d, the script's %d (stderr %s):\n%s", strings.Join(args, " "), got.code, want.code, got.stderr, lineDiff(string(want.stdout), string(got.stdout)))
	}
	return want
}

// TestIDsVerifyMatchesPerl: `ibscript ibidsverify` prints what
// ibidsverify.pl prints, with its status, on the diag fabrics (switches,
// a router, multi-port CAs), with -R, -h, an unknown option, -C without
// its value and arguments the script ignores.
func TestIDsVerifyMatchesPerl(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/ibidsverify"); err != nil {
		t.Skip("infiniband-diags' ibidsverify is not installed")
	}
	for _, dt := range diagTopologies {
		t.Run(topoName(dt.path), func(t *testing.T) {
			s := diagSim(t, dt.path)
			for _, args := range [][]string{nil, {"-R"}, {"-h"}, {"-Rh"}, {"-x"}, {"-C"}, {"-R", "extra"}} {
				diffIDsVerify(t, s, dt.host, args...)
			}
		})
	}
}

// TestIDsVerifyFaultsMatchPerl: with two switches of one GUID (which
// libibnetdisc, and so the script, takes as one node: nothing to say),
// then a CA port given LID 1 again through ibsim's console (ibsim keeps
// a port's LID when told 0), the script's complaints and status 1 are ibscript's too.
func TestIDsVerifyFaultsMatchPerl(t *testing.T) {
	if _, err := os.Stat("/usr/sbin/ibidsverify"); err != nil {
		t.Skip("infiniband-diags' ibidsverify is not installed")
	}
	s, _ := privateSim(t, "../topologies/net.dup-guid")
	if out, err := s.Console(t.Context(), `Guid "SwC" 0x200001`); err != nil {
		t.Fatalf("Guid: %v (%s)", err, out)
	}
	r := diffIDsVerify(t, s, "H1")
	t.Logf("duplicate switch GUID: status %d\n%s", r.code, r.stdout)
	if out, err := s.Console(t.Context(), `Baselid "H2"[1] 1`); err != nil {
		t.Fatalf("Baselid: %v (%s)", err, out)
	}
	r = diffIDsVerify(t, s, "H1")
	t.Logf("a CA port with LID 1 again: status %d\n%s", r.code, r.stdout)
	if r.code != 1 || !strings.Contains(string(r.stdout), "LID 1 already defined") {
		t.Errorf("the script did not find the duplicate LID (status %d): no fault compared", r.code)
	}
}
