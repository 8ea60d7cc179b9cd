package ibsimdiff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/ibsimtest"
)

// The infiniband-diags tools (issue 19), differentially: the C tool under
// umad2sim and `ibscript TOOL` on the ibsim: backend, attached to the same
// node of the same live fabric, must print the same stdout bytes and exit
// with the same status. Each tool's test lists its option combinations;
// diagTopologies are the fabrics every tool is compared on.

// diagTopologies: the two mixed fabrics of issue 18, a ring of three
// switches with descriptions that trip the scripts' awk, and descriptions
// with quotes, backslash escapes (the scripts' dash echo), '#' and
// trailing spaces beside enhanced and base port 0 switches; host is the
// CA both tools run on.
var diagTopologies = []struct{ path, host string }{
	{"../topologies/net.mixed-router", "HcaX"},
	{"../topologies/net.mixed-3sw", "Host1"},
	{"../topologies/net.odd-ring", "h1 port 0"},
	{"../topologies/net.odd-desc", "H2"},
}

// diagSim is the shared ibsim (with OpenSM) of a diag topology.
func diagSim(t *testing.T, path string) *ibsimtest.Sim {
	t.Helper()
	return shared.Get(t, path, &ibsimtest.Options{InitPorts: initPorts(path)})
}

var (
	builtOnce sync.Once
	builtDir  string
	builtBin  string
	builtErr  error
)

// ibscriptBinary builds cmd/ibscript once for the package (the tools are
// compared as a user runs them: command line, exit status, stdout).
func ibscriptBinary(t testing.TB) string {
	t.Helper()
	builtOnce.Do(func() {
		builtDir, builtErr = os.MkdirTemp("", "ibscript-diag-")
		if builtErr != nil {
			return
		}
		builtBin = filepath.Join(builtDir, "ibscript")
		// A hang bound: on a fresh clone under CI the build compiles
		// cmd/ibscript and its dependencies without -race (the test
		// binaries have those with it) while every package's tests
		// build and run on the same 2 cores.
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", builtBin, "../../cmd/ibscript")
		if out, err := cmd.CombinedOutput(); err != nil {
			builtErr = errors.New("go build ./cmd/ibscript: " + err.Error() + ": " + string(out))
		}
	})
	if builtErr != nil {
		t.Fatal(builtErr)
	}
	return builtBin
}

// removeBuilt removes the binary ibscriptBinary built (TestMain).
func removeBuilt() {
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
}

// toolResult is what one run of a tool printed and its exit status.
type toolResult struct {
	stdout, stderr []byte
	code           int
}

// runCmd runs cmd bounded by 60s and returns its output and status; a
// command that could not start fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) toolResult {
	t.Helper()
	r, err := execCmd(cmd)
	if err != nil {
		t.Fatalf("%s: %v; stderr: %s", strings.Join(cmd.Args, " "), err, r.stderr)
	}
	return r
}

// execCmd runs cmd; err is what ended it other than an exit status (a
// signal, the context's deadline).
func execCmd(cmd *exec.Cmd) (toolResult, error) {
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return toolResult{out.Bytes(), errb.Bytes(), 0}, nil
	case errors.As(err, &ee) && ee.Exited():
		return toolResult{out.Bytes(), errb.Bytes(), ee.ExitCode()}, nil
	}
	return toolResult{stderr: errb.Bytes()}, err
}

// cTool runs the C tool under umad2sim attached to host. A C tool killed
// by a signal is run again, twice at most: ibqueryerrors --ca --router
// segfaulted once in a CI run (and in none of 60 runs by hand); a crash
// of the reference is not what these tests compare.
func cTool(t *testing.T, s *ibsimtest.Sim, host, tool string, args ...string) toolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	for try := 1; ; try++ {
		cmd, err := s.Command(ctx, host, tool, args...)
		if err != nil {
			t.Fatal(err)
		}
		r, err := execCmd(cmd)
		var ee *exec.ExitError
		if err == nil {
			return r
		}
		// Ended by a signal (a crash, or ctx's SIGTERM and SIGKILL):
		// umad2sim kept its ibsim slot, of the 10.
		if rerr := s.Release(t.Context(), cmd); rerr != nil {
			t.Log(rerr)
		}
		if try == 3 || ctx.Err() != nil || !errors.As(err, &ee) {
			t.Fatalf("%s: %v; stderr: %s", strings.Join(cmd.Args, " "), err, r.stderr)
		}
		t.Logf("%s: the C tool ended by %v; run again", strings.Join(cmd.Args, " "), err)
	}
}

// ibscriptTool runs `ibscript TOOL ARGS --fabric ibsim:SOCK?node=HOST`.
func ibscriptTool(t *testing.T, s *ibsimtest.Sim, host, tool string, args ...string) toolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	return runCmd(t, ibscriptCmd(ctx, t, s, host, tool, args...))
}

// ibscriptCmd prepares `ibscript TOOL ARGS --fabric ibsim:SOCK?node=HOST`;
// when ctx ends it gets SIGTERM, on which ibscript disconnects from ibsim
// (its slot is free again), and SIGKILL only if it is still running
// ibsimtest.KillGrace later.
func ibscriptCmd(ctx context.Context, t testing.TB, s *ibsimtest.Sim, host, tool string, args ...string) *exec.Cmd {
	argv := append([]string{tool}, args...)
	argv = append(argv, "--fabric", "ibsim:"+s.Sock+"?"+url.Values{"node": {host}}.Encode())
	cmd := exec.CommandContext(ctx, ibscriptBinary(t), argv...)
	ibsimtest.Terminate(cmd)
	return cmd
}

// loadTries is how many times a comparison whose two sides differ is
// made in all: a C tool or ibscript whose MAD timed out on a loaded
// machine (ibsim answers late) fails where the other did not, or prints
// what it could not read as the tools do and exits 0 (ibroute's
// "unknown node and type" for a LID whose NodeInfo timed out: seed 50 of
// TestRandomTopologies at load 20, not again by itself). A difference
// that stays is a difference; one that goes away was the load's.
const loadTries = 3

// diffTool compares the C tool and ibscript's on the same arguments:
// stdout byte for byte, and the exit status. It returns the C tool's.
func diffTool(t *testing.T, s *ibsimtest.Sim, host, tool string, args ...string) toolResult {
	t.Helper()
	what := tool + " " + strings.Join(args, " ")
	want := cTool(t, s, host, tool, args...)
	// -S/-G/-D: when the C tool cannot resolve the port (its SA query or
	// SMP timed out on a loaded machine) it says so and scans the whole
	// fabric instead, which prints more than its partial scan: asked
	// again, and not compared when it falls back every time.
	for try := 0; try < 3 && bytes.Contains(want.stderr, []byte("attempting full scan")); try++ {
		want = cTool(t, s, host, tool, args...)
	}
	if bytes.Contains(want.stderr, []byte("attempting full scan")) {
		t.Logf("%s: the C tool fell back to a full scan four times (%s); not compared", what, bytes.TrimSpace(want.stderr))
		return want
	}
	got := ibscriptTool(t, s, host, tool, args...)
	// ibnetdiscover's topology header says when: the two runs may be a
	// second apart.
	for try := 1; try < loadTries && (normDate(string(want.stdout)) != normDate(string(got.stdout)) || want.code != got.code); try++ {
		t.Logf("%s: the two differ (exit %d, the C tool's %d): a MAD may have timed out on the loaded machine; both run again", what, got.code, want.code)
		want = cTool(t, s, host, tool, args...)
		got = ibscriptTool(t, s, host, tool, args...)
	}
	if w, g := normDate(string(want.stdout)), normDate(string(got.stdout)); w != g {
		t.Errorf("%s: stdout differs:\n%s", what, lineDiff(w, g))
	}
	if want.code != got.code {
		t.Errorf("%s: exit status %d, the C tool's %d (ibscript's stderr: %s)", what, got.code, want.code, got.stderr)
	}
	return want
}

// TestNodeListsMatchScripts: ibhosts, ibswitches, ibrouters and ibnodes
// print what the infiniband-diags scripts print, from discovery and from
// a topology file (ibnetdiscover's output, and the ibsim file itself,
// which the scripts' awk filters too).
func TestNodeListsMatchScripts(t *testing.T) {
	for _, dt := range diagTopologies {
		t.Run(filepath.Base(dt.path), func(t *testing.T) {
			s := diagSim(t, dt.path)
			topoFile := filepath.Join(t.TempDir(), "fabric.topo")
			ibnd := cTool(t, s, dt.host, "ibnetdiscover")
			if ibnd.code != 0 {
				t.Fatalf("ibnetdiscover: status %d: %s", ibnd.code, ibnd.stderr)
			}
			if err := os.WriteFile(topoFile, ibnd.stdout, 0o644); err != nil {
				t.Fatal(err)
			}
			abs, err := filepath.Abs(dt.path)
			if err != nil {
				t.Fatal(err)
			}
			for _, tool := range []string{"ibhosts", "ibswitches", "ibrouters", "ibnodes"} {
				if r := diffTool(t, s, dt.host, tool); len(r.stdout) == 0 && tool != "ibrouters" {
					t.Errorf("%s: the C tool printed nothing: nothing was compared", tool)
				}
				diffTool(t, s, dt.host, tool, "-t", "500")
				diffTool(t, s, dt.host, tool, topoFile)
				diffTool(t, s, dt.host, tool, abs)
				diffTool(t, s, dt.host, tool, "/nonexistent/topology")
				// The script's own option loop: usage on stdout, 255;
				// a port that does not open: ibnetdiscover's iberror.
				for _, args := range [][]string{{"-h"}, {"-x"}, {"-t"}, {"-y", "-1"}, {"-Cibsim0"}, {"--"}, {topoFile, abs},
					{"-C", "ibsim0", "-P", "0"}, {"-C", "nosuch"}, {"-P", "9"}, {"-t", "x"}, {"-y", "zz"}} {
					diffTool(t, s, dt.host, tool, args...)
				}
			}
		})
	}
}

var (
	// nodeGUIDLine is a node line of ibnetdiscover's output: its GUID
	// (from the id) and name.
	nodeGUIDLine = regexp.MustCompile(`(?m)^(?:Switch|Ca|Rt)\s+\d+ "[SHR]-([0-9a-f]{16})"\s+# "([^"]*)"`)
	// caPortLine is a CA's link line: its port GUID and the CA's name
	// (the last node line before it).
	caPortLine = regexp.MustCompile(`(?m)^caguid=0x[0-9a-f]+\nCa\s+\d+ "H-[0-9a-f]+"\s+# "([^"]*)"\n\[\d+\]\(([0-9a-f]+)\)`)
)

// nameMap writes a node-name-map naming every other node of an
// ibnetdiscover output (from the first, parity 0, or the second, 1): the
// name keeps the description after a "mapped-N " prefix.
func nameMap(t *testing.T, ibnd []byte, parity int) string {
	t.Helper()
	var nm strings.Builder
	for i, m := range nodeGUIDLine.FindAllStringSubmatch(string(ibnd), -1) {
		if i%2 == parity {
			fmt.Fprintf(&nm, "0x%s \"mapped-%d %s\"\n", m[1], i, m[2])
		}
	}
	p := filepath.Join(t.TempDir(), "node-name-map")
	if err := os.WriteFile(p, []byte(nm.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// hostLink is a CA's first port line in ibnetdiscover's output: the
// switch (or node) id and port it is cabled to.
var hostLink = regexp.MustCompile(`(?m)^\[(\d+)\](?:\([0-9a-f]+\))?\s+"([SHR]-[0-9a-f]{16})"\[(\d+)\]`)

// initiatedFrom is ibnetdiscover's header line naming the local node and
// port GUIDs.
var initiatedFrom = regexp.MustCompile(`(?m)^# Initiated from node ([0-9a-f]{16}) port ([0-9a-f]{16})`)

// remoteCARoute is a directed route "0,P,Q" from the local CA's first
// cabled port through the switch it is cabled to, out of that switch's
// first port that leads to another CA (ibnetdiscover's output ibnd).
func remoteCARoute(t *testing.T, ibnd []byte, host string) string {
	t.Helper()
	text := string(ibnd)
	from := initiatedFrom.FindStringSubmatch(text)
	if from == nil {
		t.Fatalf("%s: no 'Initiated from' line in ibnetdiscover's output", host)
	}
	local := "\"H-" + from[1] + "\""
	i := nodeLine(text, "Ca", local)
	if i < 0 {
		t.Fatalf("%s: no node %s in ibnetdiscover's output", host, local)
	}
	m := hostLink.FindStringSubmatch(text[i:])
	if m == nil || !strings.HasPrefix(m[2], "S-") {
		t.Fatalf("%q: no switch on its first port", host)
	}
	j := nodeLine(text, "Switch", "\""+m[2]+"\"")
	if j < 0 {
		t.Fatalf("no switch %s in ibnetdiscover's output", m[2])
	}
	block := strings.SplitN(text[j:], "\n\n", 2)[0]
	for _, l := range hostLink.FindAllStringSubmatch(block, -1) {
		if strings.HasPrefix(l[2], "H-") {
			if "\""+l[2]+"\"" != local {
				return "0," + m[1] + "," + l[1]
			}
		}
	}
	t.Fatalf("switch %s: no other CA on it", m[2])
	return ""
}

// TestLinkinfoMatchesIBLinkInfo: iblinkinfo's output and exit status for
// its main option combinations, node-name-map and partial selections
// included.
func TestLinkinfoMatchesIBLinkInfo(t *testing.T) {
	for _, dt := range diagTopologies {
		t.Run(filepath.Base(dt.path), func(t *testing.T) {
			s := diagSim(t, dt.path)
			ibnd := cTool(t, s, dt.host, "ibnetdiscover")
			// A node-name-map naming every other node; a CA's port GUID
			// (not the host's) for -G/-S.
			nmFile := nameMap(t, ibnd.stdout, 0)
			var caGUID, hostGUID string
			if m := initiatedFrom.FindSubmatch(ibnd.stdout); m != nil {
				hostGUID = "0x" + string(m[2])
			}
			for _, m := range caPortLine.FindAllStringSubmatch(string(ibnd.stdout), -1) {
				if "0x"+m[2] != hostGUID && caGUID == "" {
					caGUID = "0x" + m[2]
				}
			}
			if caGUID == "" || hostGUID == "" {
				t.Fatalf("no CA port in ibnetdiscover's output:\n%s", ibnd.stdout)
			}
			for _, args := range [][]string{
				nil,
				{"-l"},
				{"-d"},
				{"-p"},
				{"-l", "-p"},
				{"--switches-only"},
				{"--cas-only", "-l"},
				{"--node-name-map", nmFile},
				{"--node-name-map", nmFile, "-l"},
				{"-t", "500", "-dl"},
				{"-S", caGUID},
				{"-G", caGUID, "-l"},
				{"-G", caGUID, "--switches-only"},
				{"-G", "0x1234"},
				{"-D", "0,1"},
				{"-D", "0", "-p"},
				// The local port by GUID (no peer: LID-addressed) and a
				// CA beyond the first switch by route (libibnetdisc's
				// peer: the port the route entered the switch by).
				{"-S", hostGUID},
				{"-D", remoteCARoute(t, ibnd.stdout, dt.host)},
				{"-D", remoteCARoute(t, ibnd.stdout, dt.host), "-l"},
				// Hostile: a route out of a port the local CA lacks
				// (status 1), a GUID that reads as 0, an argument the
				// C tool ignores.
				{"-D", "0,9"},
				{"-S", "zz"},
				{"--switches-only", "extra"},
			} {
				r := diffTool(t, s, dt.host, "iblinkinfo", args...)
				if len(args) == 0 && len(r.stdout) == 0 {
					t.Errorf("iblinkinfo printed nothing: nothing was compared")
				}
			}
			// -n: libibnetdisc stops extending every route once one
			// passed n hops, in its own query order (ibsim answers in
			// send order); -a: every node a partial scan holds (-n hops
			// from the start, 1 by default), the retracted route of a
			// remote CA's included.
			caRoute := remoteCARoute(t, ibnd.stdout, dt.host)
			for _, args := range [][]string{
				{"-n", "1"}, {"-n", "2"}, {"-n", "3", "-l"}, {"-n", "1", "--switches-only"},
				{"-a"}, {"-a", "-n", "1"},
				{"-a", "-D", "0,1"}, {"-a", "-D", "0,1", "-n", "2"}, {"-a", "-D", "0"}, {"-a", "-D", "0", "-n", "1", "-l"},
				{"-a", "-D", caRoute}, {"-a", "-D", caRoute, "-n", "2"}, {"-a", "-D", "0,9"},
				{"-a", "-S", caGUID}, {"-a", "-G", "0x1234", "-n", "1"},
				// -n and -o as strtoul reads them, never refused: "abc"
				// and "-1" are no hop limit, "1x" is 1.
				{"-n", "abc"}, {"-n", "1x", "-l"}, {"-n", "-1", "--switches-only"}, {"-o", "x"},
			} {
				diffTool(t, s, dt.host, "iblinkinfo", args...)
			}
		})
	}
}

// dataCounter is a data counter in ibqueryerrors' output: its value moves
// with the MADs the tools themselves send, so two runs are compared with
// the values masked.
var dataCounter = regexp.MustCompile(`\[(Port(?:Unicast|Multicast)?(?:Xmit|Rcv)(?:Data|Pkts)) == \d+ \([^)]*\)\]`)

// qeErrors are the error counters TestQueryErrorsMatchesIBQueryErrors sets
// through ibsim's console on each diag topology: a linked switch port, an
// unused switch port, PortXmitWait on another, a CA port, a router's.
var qeErrors = map[string][]string{
	"net.mixed-router": {
		`"SwA"[1] PortCounters.SymbolErrorCounter=3`, `"SwA"[1] PortCounters.PortRcvErrors=20`,
		`"SwA"[4] PortCounters.PortXmitDiscards=7`, `"SwB"[2] PortCounters.PortXmitWait=11`,
		`"HcaY"[1] PortCounters.LinkDownedCounter=2`, `"Rt1"[1] PortCounters.VL15Dropped=5`,
		`"SwB"[5] PortCounters.PortRcvSwitchRelayErrors=9`,
	},
	"net.mixed-3sw": {
		`"Core"[1] PortCounters.SymbolErrorCounter=3`, `"Core"[10] PortCounters.PortXmitDiscards=700`,
		`"Leaf2"[4] PortCounters.PortXmitWait=1500`, `"Host2"[1] PortCounters.LinkDownedCounter=2`,
		`"Leaf1"[6] PortCounters.PortRcvSwitchRelayErrors=9`, `"Leaf1"[6] PortCounters.ExcessiveBufferOverrunErrors=4`,
	},
	"net.odd-ring": {
		`"ring A port 0"[2] PortCounters.SymbolErrorCounter=30`, `"ring B base port 0"[6] PortCounters.PortXmitDiscards=7`,
		`"ring C export 0"[3] PortCounters.PortXmitWait=11`, `"export 0"[1] PortCounters.LocalLinkIntegrityErrors=1`,
	},
	"net.odd-desc": {
		`"S1"[0] PortCounters.SymbolErrorCounter=3`, `"S1"[4] PortCounters.PortRcvErrors=20`,
		`"S2"[5] PortCounters.PortXmitDiscards=7`, `"H1"[1] PortCounters.LinkDownedCounter=2`,
		`"H3"[1] PortCounters.PortXmitWait=1500`, `"H4"[1] PortCounters.SymbolErrorCounter=9`,
	},
}

// TestQueryErrorsMatchesIBQueryErrors: with error counters set through
// ibsim's console, ibqueryerrors' output and exit status (1: errors beyond
// threshold) for its main option combinations, thresholds, suppressions,
// node types, -r, --details, partial selections; --data and --counters
// with the data counters' values masked.
func TestQueryErrorsMatchesIBQueryErrors(t *testing.T) {
	ibsimtest.Require(t)
	for _, dt := range diagTopologies {
		t.Run(filepath.Base(dt.path), func(t *testing.T) {
			s, dir := privateSim(t, dt.path) // its counters change
			for _, c := range qeErrors[filepath.Base(dt.path)] {
				if out, err := s.Console(t.Context(), "PerformanceSet "+c); err != nil || !strings.Contains(out, "has been set") {
					t.Fatalf("PerformanceSet %s: %q %v", c, out, err)
				}
			}
			ibnd := cTool(t, s, dt.host, "ibnetdiscover")
			var caGUID, hostGUID string
			if m := initiatedFrom.FindSubmatch(ibnd.stdout); m != nil {
				hostGUID = "0x" + string(m[2])
			}
			for _, m := range caPortLine.FindAllStringSubmatch(string(ibnd.stdout), -1) {
				if "0x"+m[2] != hostGUID {
					caGUID = "0x" + m[2]
					break
				}
			}
			th := filepath.Join(dir, "thresholds")
			if err := os.WriteFile(th, []byte("# test\nSymbolErrorCounter=5\nPortXmitWait=100\n\nPortXmitDiscards=8\nSymbolErrorCounter=4\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{
				nil,
				{"-s", "PortXmitWait,SymbolErrorCounter"},
				{"-c"},
				{"-c", "-s", "LinkDownedCounter"},
				{"--threshold-file", th},
				{"-r"},
				{"--switch"},
				{"--ca", "--router"},
				{"--details"},
				{"-G", caGUID},
				{"-S", caGUID, "-r"},
				{"-D", "0,1"},
				{"-D", "0"},
				{"-D", remoteCARoute(t, ibnd.stdout, dt.host)},
				{"-D", "0,9"},
				{"-S", "zz"},
				{"-r", "extra"},
				{"-t", "500", "-R", "--skip-sl"},
				{"-o", "2x", "-r"},
			} {
				r := diffTool(t, s, dt.host, "ibqueryerrors", args...)
				if len(args) == 0 && (r.code != 1 || !bytes.Contains(r.stdout, []byte("Errors for"))) {
					t.Errorf("ibqueryerrors found no errors (exit %d): nothing was compared\n%s", r.code, r.stdout)
				}
			}
			for _, args := range [][]string{{"--data"}, {"--counters"}, {"--counters", "-r", "--switch"}} {
				want := cTool(t, s, dt.host, "ibqueryerrors", args...)
				got := ibscriptTool(t, s, dt.host, "ibqueryerrors", args...)
				w := dataCounter.ReplaceAllString(string(want.stdout), "[$1 == N]")
				g := dataCounter.ReplaceAllString(string(got.stdout), "[$1 == N]")
				if w != g || want.code != got.code {
					t.Errorf("ibqueryerrors %s (data counters masked): exit %d, the C tool's %d:\n%s", strings.Join(args, " "), got.code, want.code, lineDiff(w, g))
				}
			}
			// -k clears the error counters after reading them: the C
			// tool finds none left.
			if r := ibscriptTool(t, s, dt.host, "ibqueryerrors", "-k"); r.code != 1 {
				t.Fatalf("ibscript ibqueryerrors -k: exit %d: %s", r.code, r.stderr)
			}
			if r := cTool(t, s, dt.host, "ibqueryerrors"); r.code != 0 {
				t.Errorf("after ibscript ibqueryerrors -k, ibqueryerrors still finds errors (exit %d):\n%s", r.code, r.stdout)
			}
		})
	}
}

// TestNetDiscoverMatchesIBNetDiscover: ibnetdiscover's topology (the date
// line aside), node lists and ports report, with and without a
// node-name-map, to stdout and to a file.
func TestNetDiscoverMatchesIBNetDiscover(t *testing.T) {
	for _, dt := range diagTopologies {
		t.Run(filepath.Base(dt.path), func(t *testing.T) {
			s := diagSim(t, dt.path)
			ibnd := cTool(t, s, dt.host, "ibnetdiscover")
			nmFile := nameMap(t, ibnd.stdout, 1)
			dir := t.TempDir()
			for _, args := range [][]string{
				{"-l"}, {"-H"}, {"-S"}, {"-R"}, {"-p"}, {"-l", "-S"}, {"-g", "-l"}, {"-g", "-p"},
				{"-l", "--node-name-map", nmFile}, {"-p", "--node-name-map", nmFile},
				{"-t", "500", "-o", "16", "-S"}, {"-o", "abc", "-p"},
			} {
				diffTool(t, s, dt.host, "ibnetdiscover", args...)
			}
			for _, args := range [][]string{nil, {"--node-name-map", nmFile}, {"-g"}, {"-g", "--node-name-map", nmFile},
				{"-f"}, {"-f", "-g"}, {"-m"}, {"-m", "-f", "-g"}, {"-s"}, {"-s", "-l"}, {"-s", "-p"}} {
				want := cTool(t, s, dt.host, "ibnetdiscover", args...)
				got := ibscriptTool(t, s, dt.host, "ibnetdiscover", args...)
				if w, g := normDate(string(want.stdout)), normDate(string(got.stdout)); w != g || got.code != want.code {
					t.Errorf("ibnetdiscover %s: exit %d, the C tool's %d:\n%s", strings.Join(args, " "), got.code, want.code, lineDiff(w, g))
				}
			}
			// The topology file argument: the output goes there.
			wantFile, gotFile := filepath.Join(dir, "c.topo"), filepath.Join(dir, "ibscript.topo")
			cTool(t, s, dt.host, "ibnetdiscover", "-S", wantFile)
			if r := ibscriptTool(t, s, dt.host, "ibnetdiscover", "-S", gotFile); r.code != 0 || len(r.stdout) != 0 {
				t.Errorf("ibnetdiscover -S FILE: exit %d, stdout %q", r.code, r.stdout)
			}
			w, _ := os.ReadFile(wantFile)
			g, err := os.ReadFile(gotFile)
			if err != nil || len(w) == 0 || !bytes.Equal(w, g) {
				t.Errorf("ibnetdiscover -S FILE wrote %q (%v), the C tool %q", g, err, w)
			}
		})
	}
}

// TestNetDiscoverMaxHopsEveryTopology: ibnetdiscover -m's two figures,
// libibnetdisc's longest route and the SMPs it sent, and -s's progress
// lines, which ibscript works out by replaying libibnetdisc's query order
// over its own discovery, are the C tool's on every net.* topology (net.mlx-epi adds libibnetdisc's
// MlnxExtPortInfo queries), from the first CA and the first switch of
// each; so is what iblinkinfo -n 1 and -n 2 print (the same replay,
// stopped by the hop limit), and ibnetdiscover -g (net.chassis has
// chassis of shared system image GUIDs, a Topspin one among them).
func TestNetDiscoverMaxHopsEveryTopology(t *testing.T) {
	paths, err := filepath.Glob("../topologies/net*")
	if err != nil || len(paths) < 10 {
		t.Fatalf("topologies: %v %v", paths, err)
	}
	// A node header line of an ibsim topology: its type and its id.
	header := regexp.MustCompile(`(?m)^(Hca|Switch)\s+\d+\s+"([^"]+)"`)
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			s := diagSim(t, path)
			text, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			hosts := map[string]string{}
			for _, m := range header.FindAllStringSubmatch(string(text), -1) {
				if _, ok := hosts[m[1]]; !ok {
					hosts[m[1]] = m[2]
				}
			}
			if len(hosts) != 2 {
				t.Fatalf("no CA or no switch in ibnetdiscover -l: %v", hosts)
			}
			for _, host := range hosts {
				for _, args := range [][]string{{"-m", "-s"}, {"-g"}} {
					want := cTool(t, s, host, "ibnetdiscover", args...)
					got := ibscriptTool(t, s, host, "ibnetdiscover", args...)
					if w, g := normDate(string(want.stdout)), normDate(string(got.stdout)); w != g || got.code != want.code || !strings.Contains(w, "# Initiated from ") {
						t.Errorf("ibnetdiscover %s from %q: exit %d, the C tool's %d:\n%s", strings.Join(args, " "), host, got.code, want.code, lineDiff(w, g))
					}
				}
				// Where libibnetdisc's hop limit stops it.
				diffTool(t, s, host, "iblinkinfo", "-n", "1")
				diffTool(t, s, host, "iblinkinfo", "-n", "2")
				if strings.HasSuffix(path, "net.mlx-epi") {
					// libibnetdisc meets the nodes in another order there.
					diffTool(t, s, host, "iblinkinfo")
					diffTool(t, s, host, "ibnetdiscover", "-p")
				}
			}
		})
	}
}

// privateSim starts an ibsim (with OpenSM) of its own on a copy of the
// topology in a temporary directory, for a test that changes the fabric;
// it returns the Sim and the directory.
func privateSim(t *testing.T, topology string) (*ibsimtest.Sim, string) {
	t.Helper()
	src, err := os.ReadFile(topology)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tp := filepath.Join(dir, filepath.Base(topology))
	if err := os.WriteFile(tp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ibsimtest.Start(t.Context(), dir, tp, &ibsimtest.Options{InitPorts: initPorts(tp)})
	t.Cleanup(s.Stop)
	if err != nil {
		t.Fatal(err)
	}
	return s, dir
}

// nodeLine is the offset in ibnetdiscover's text of the node header line
// of kind ("Ca", "Switch") that holds name, -1 when there is none.
func nodeLine(text, kind, name string) int {
	for off := 0; off < len(text); {
		line, _, _ := strings.Cut(text[off:], "\n")
		if strings.HasPrefix(line, kind+"\t") && strings.Contains(line, name) {
			return off
		}
		off += len(line) + 1
	}
	return -1
}
