package ibsimdiff

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/topo"
)

// sbinIBError is the C tools' iberror line, which names the tool as it
// was run (/usr/sbin/TOOL here); `ibscript TOOL` names it TOOL.
var sbinIBError = regexp.MustCompile(`(?m)^/usr/sbin/([a-z_]+): iberror: `)

// diffQuery is diffTool for the point-query tools: the same stdout bytes
// (the iberror line's program name aside) and exit status.
func diffQuery(t *testing.T, what string, want, got toolResult) {
	t.Helper()
	w := sbinIBError.ReplaceAllString(string(want.stdout), "$1: iberror: ")
	if d := cmp.Diff(w, string(got.stdout)); d != "" {
		t.Errorf("%s: stdout differs (-C +ibscript):\n%s", what, d)
	}
	if want.code != got.code {
		t.Errorf("%s: exit status %d, the C tool's %d (ibscript's stderr: %s)", what, got.code, want.code, got.stderr)
	}
}

// TestQueryToolsCommandLine runs the point-query tools as a user types
// them, `ibscript TOOL ARGS` against the C tool on each fabric: the main
// invocations of smpquery, perfquery, sminfo, ibaddr, smpdump and
// ibportstate, their failures (an unknown op, a LID nobody has) and
// smpquery nodedesc through a --node-name-map. The data and text are
// compared far more widely at the diag level (diagquery_test.go).
func TestQueryToolsCommandLine(t *testing.T) {
	for _, tp := range queryTopologies {
		t.Run(filepath.Base(tp.path), func(t *testing.T) {
			t.Parallel() // one ibsim per topology: the topologies run side by side (parallelTopologies)
			s := diagSim(t, tp.path)
			sess, _ := session(t, s, tp.host, nil, nil)
			var sw, ca *lidTarget
			for _, lt := range lidTargets(t, sess) {
				lt := lt
				if lt.node.Type == topo.Switch && sw == nil {
					sw = &lt
				}
				if lt.node.Type == topo.CA && ca == nil {
					ca = &lt
				}
			}
			if sw == nil || ca == nil {
				t.Fatal("no switch or no CA with a LID")
			}
			sl, cl := strconv.Itoa(int(sw.lid)), strconv.Itoa(int(ca.lid))
			cp := strconv.Itoa(ca.ports[len(ca.ports)-1])
			// -G takes a port GUID (the SA's PathRecord); a CA's node
			// GUID is no port's: every C tool fails to resolve it.
			caNodeGUID := fmt.Sprintf("%#x", ca.node.GUID)
			caPortGUID := fmt.Sprintf("%#x", ca.node.Ports[ca.ports[len(ca.ports)-1]].GUID)
			nameMap := filepath.Join(t.TempDir(), "names")
			if err := os.WriteFile(nameMap, []byte("# a map\n"+fmt.Sprintf("0x%016x", sw.node.GUID)+" \"mapped switch name\"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, c := range [][]string{
				{"smpquery", "nodeinfo", sl}, {"smpquery", "NI", cl}, {"smpquery", "nodedesc", sl},
				{"smpquery", "--node-name-map", nameMap, "nodedesc", sl}, {"smpquery", "portinfo", cl, cp},
				{"smpquery", "-x", "portinfo", sl, "1"}, {"smpquery", "switchinfo", sl}, {"smpquery", "pkeys", cl, cp},
				{"smpquery", "sl2vl", sl, "1"}, {"smpquery", "vlarb", cl}, {"smpquery", "GI", cl},
				{"smpquery", "-D", "nodeinfo", "0,1"}, {"smpquery", "-D", "portinfo", "0", "1"},
				{"smpquery", "bogus", sl}, {"smpquery", "-t", "100", "nodeinfo", "999"},
				{"perfquery"}, {"perfquery", "-x"}, {"perfquery", sl, "1"}, {"perfquery", "-x", sl, "2"},
				{"perfquery", "-a", sl}, {"perfquery", "-xa", sl}, {"perfquery", "-l", sl}, {"perfquery", "-a", sl, "1-3"},
				{"perfquery", "-l", sl, "1,3"}, {"perfquery", "--all_ports", cl}, {"perfquery", "-t", "100", "-X", cl, cp},
				{"sminfo"}, {"sminfo", sl}, {"sminfo", "-D", "0"},
				{"ibaddr"}, {"ibaddr", sl}, {"ibaddr", "-g", cl}, {"ibaddr", "-l", cl}, {"ibaddr", "-L", cl}, {"ibaddr", "-D", "0,1"},
				{"smpdump", sl, "0x11"}, {"smpdump", "-s", cl, "16"}, {"smpdump", "-D", "0,1", "0x15", "1"},
				{"ibportstate", "-D", "0", "1"}, {"ibportstate", cl, cp}, {"ibportstate", sl, "0"},
				// Addresses read as strtol and str2drpath read them.
				{"smpquery", "nodedesc", sl + "abc"}, {"smpquery", "-D", "nodedesc", "0,257"}, {"smpquery", "nodedesc", "zz"},
				{"smpquery", "-G", "nodedesc", "zz"}, {"perfquery", sl + "x", "1"}, {"ibaddr", cl + "x"},
				{"smpquery", "-G", "nodeinfo", caNodeGUID}, {"smpquery", "-G", "nodeinfo", caPortGUID},
				{"perfquery", "-G", caNodeGUID, cp}, {"ibaddr", "-G", caNodeGUID}, {"ibaddr", "-G", caPortGUID},
				{"ibportstate", "-G", caNodeGUID, cp}, {"ibroute", "-G", caNodeGUID},
				{"ibtracert", "-G", caNodeGUID, caPortGUID}, {"ibccquery", "-G", "CongestionInfo", caNodeGUID},
				// "--" ends the options (the harness's --fabric after it
				// is still ibscript's).
				{"smpquery", "--", "nodeinfo", sl}, {"perfquery", "-x", "--", cl, cp},
				// An option without its value (the harness's --fabric
				// follows): a usage error as the C tool's.
				{"perfquery", cl, "-t"}, {"smpquery", "nodeinfo", sl, "--timeout"}, {"saquery", "-N", "--node-name-map"},
				// A map that cannot be read: the C tools warn and go on.
				{"smpquery", "--node-name-map", "/nonexistent/map", "nodedesc", sl},
				{"saquery", "--node-name-map", t.TempDir(), "-N", cl},
				// A route's first element as typed (sent as InitialPath[0],
				// which the SMA skips; printed in the header); smpdump's
				// LID read by strtoul and sent whatever it is: 0 for text,
				// the permissive LID, a multicast LID.
				{"smpquery", "-D", "nodeinfo", "5,1"}, {"smpquery", "-D", "nodedesc", "7"}, {"smpdump", "-D", "9,1", "0x11"},
				{"smpdump", "abc", "0x11"}, {"smpdump", "0", "0x11"}, {"smpdump", "0xffff", "0x11"}, {"smpdump", "0xc001", "0x11"},
				// -C/-P name the port umad2sim shows (CA ibsim0), as
				// libibumad decides; one that does not open is each
				// tool's mad_rpc_open_port failure.
				{"smpquery", "-C", "ibsim0", "-P", "1", "nodedesc", sl}, {"smpquery", "-P", "0", "nodedesc", sl},
				{"smpquery", "-P", "-1", "nodedesc", sl}, {"smpquery", "-P", "x", "nodedesc", sl},
				{"smpquery", "-C", "nosuch", "nodedesc", sl}, {"smpquery", "-C", "ibsim0", "-P", "9", "nodedesc", sl},
				{"perfquery", "-P", "300"}, {"sminfo", "-C", "nosuch"}, {"ibaddr", "-C", "nosuch"},
				{"smpdump", "-C", "nosuch", sl, "0x11"}, {"ibportstate", "-C", "nosuch", cl, cp},
				{"iblinkinfo", "-C", "nosuch"}, {"ibnetdiscover", "-P", "9"}, {"ibqueryerrors", "-C", "nosuch"},
				{"saquery", "-C", "nosuch"}, {"dump_fts", "-C", "nosuch"}, {"dump_lfts", "-C", "nosuch"},
				{"ibtracert", "-C", "nosuch", sl, cl}, {"ibroute", "-C", "nosuch", sl},
				// Common options' values as process_opt reads them.
				{"smpquery", "-t", "abc", "nodedesc", sl}, {"perfquery", "-t", "0"}, {"smpquery", "-t", "0x7d0", "nodedesc", sl},
				{"ibaddr", "-y", "zz"}, {"smpquery", "-y", "-1", "nodedesc", sl}, {"smpquery", "-s", "0", "nodedesc", sl},
				{"ibtracert", "-s", "x", sl, cl}, {"iblinkinfo", "-t", "1x"}, {"ibnetdiscover", "-y", "0x1g"},
				{"saquery", "-t", "2s"}, {"sminfo", "-V"}, {"ibqueryerrors", "-t", "99999999999"},
				// The last of -L, -G, -D says how the destination is read
				// (ibd_dest_type).
				{"smpquery", "-GD", "nodeinfo", "0"}, {"smpquery", "-D", "-G", "nodeinfo", caPortGUID},
				{"smpquery", "-D", "-L", "nodedesc", sl}, {"perfquery", "-G", "-L", cl, cp},
				{"ibaddr", "-G", "-D", "0,1"}, {"smpdump", "-D", "-L", sl, "0x11"}, {"smpdump", "-L", "-D", "0,1", "0x11"},
				{"ibroute", "-G", "-D", "0,1"}, {"ibtracert", "-G", "-L", sl, cl},
			} {
				diffCommandLine(t, s, tp.host, c)
				n++
			}
			t.Logf("%d command lines compared", n)
		})
	}
}

// diffCommandLine compares `ibscript TOOL ARGS` (c) with the C tool on
// host as diffQuery does, with the SM's activity count and perfquery's
// moving counters settled, both run again while they differ (a MAD may
// have timed out on a loaded machine), loadTries times in all.
func diffCommandLine(t *testing.T, s *ibsimtest.Sim, host string, c []string) {
	t.Helper()
	what := strings.Join(c, " ")
	var want, got toolResult
	for try := 1; ; try++ {
		want = cTool(t, s, host, c[0], c[1:]...)
		got = ibscriptTool(t, s, host, c[0], c[1:]...)
		if c[0] == "sminfo" {
			// The SM's activity count moves between the two.
			want.stdout = activity.ReplaceAll(want.stdout, []byte("activity count N"))
			got.stdout = activity.ReplaceAll(got.stdout, []byte("activity count N"))
		}
		if c[0] == "perfquery" {
			got.stdout = []byte(settle(t, what, want.stdout, string(got.stdout)))
		}
		w := sbinIBError.ReplaceAllString(string(want.stdout), "$1: iberror: ")
		if try == loadTries || (w == string(got.stdout) && want.code == got.code) {
			break
		}
		t.Logf("%s: the two differ (exit %d, the C tool's %d): a MAD may have timed out on the loaded machine; both run again", what, got.code, want.code)
	}
	diffQuery(t, what, want, got)
}
