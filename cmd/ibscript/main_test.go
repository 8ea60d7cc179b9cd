package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/mad/madtest"
	lua "github.com/yuin/gopher-lua"
)

// ibscript runs the command in-process and returns its exit status and
// output.
func ibscript(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

const topologies = "../../tests/topologies/"

func TestValidateDefaultFabric(t *testing.T) {
	code, out, errOut := ibscript(t, "run", "../../scripts/validate.lua")
	if code != exitOK {
		t.Fatalf("exit %d, want 0\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "embedded simulated fabric") {
		t.Errorf("auto fell back to the simulator without saying so on stderr: %q", errOut)
	}
	if !regexp.MustCompile(`\d+ checks passed, 0 failed`).MatchString(out) {
		t.Errorf("report has no summary line:\n%s", out)
	}
}

// TestValidatePlantedFault: the router of GUID 0 is refused by the SM as
// OpenSM refuses it (ERR 0D16): the zero GUID and its link left in Init
// fail, its counters cannot be read (no LID: not asked at LID 0), so the run exits 2; the
// links whose ends enable different sets still pass.
func TestValidatePlantedFault(t *testing.T) {
	code, out, errOut := ibscript(t, "run", "--fabric", "sim:"+topologies+"net.2sw2path4hca-faulty", "../../scripts/validate.lua")
	if code != exitError {
		t.Fatalf("exit %d, want 2\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{
		`FAIL  no zero GUIDs`,
		`"Rtr" \(0x0000000000000000\): node GUID is zero`,
		`PASS  link width and speed`,
		`FAIL  links ACTIVE +6 ok, 1 failed`,
		`Switch2 port 4 <-> Rtr port 1: state Initialize/Initialize`,
		`ERROR error counters within thresholds +20 ok, 1 could not be read`,
		`could not read: Rtr port 1: has no LID: the SM did not configure it`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

func TestChunkPrintsNodeCount(t *testing.T) {
	for _, args := range [][]string{
		{"--fabric", "sim:" + topologies + "net.2sw2path4hca", "-e", "print(#fabric.discover().nodes)"},
		{"-e", "print(#fabric.discover().nodes)", "--fabric", "sim:" + topologies + "net.2sw2path4hca"},
	} {
		code, out, errOut := ibscript(t, args...)
		if code != exitOK || out != "6\n" {
			t.Errorf("ibscript %q: exit %d, stdout %q, stderr %q; want 0 and \"6\\n\"", args, code, out, errOut)
		}
	}
}

func TestFlagsAfterCommand(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "count.lua")
	if err := os.WriteFile(script, []byte("print(#fabric.discover().nodes, arg[1])\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := ibscript(t, "run", "--fabric", "sim:"+topologies+"net.2sw2path4hca", script, "x")
	if code != exitOK || out != "6\tx\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, _ = ibscript(t, "run", script, "--fabric", "sim:"+topologies+"net.2sw2path4hca")
	if code != exitOK || !strings.HasPrefix(out, "6\t") {
		t.Fatalf("flag after the script: exit %d, stdout %q", code, out)
	}
}

func TestScriptErrorsExit2WithLocation(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "bad.lua")
	os.WriteFile(script, []byte("local x = 1\nsmp.portinfo(\"lid:nope\")\n"), 0o644)
	code, _, errOut := ibscript(t, "run", "--fabric", "sim:"+topologies+"net.2sw2path4hca", script)
	if code != exitError {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(errOut, "bad.lua:2:") || !strings.Contains(errOut, "smp.portinfo") || !strings.Contains(errOut, "nope") {
		t.Errorf("error should name file:line, function and the bad target:\n%s", errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--no-such-flag"},
		{"frobnicate"},
		{"--fabric", "nope:x", "-e", "print(1)"},
		{"--fabric", "sim:/no/such/file", "-e", "print(1)"},
		{"run"},
	} {
		code, _, errOut := ibscript(t, args...)
		if code != exitError || errOut == "" {
			t.Errorf("ibscript %q: exit %d, stderr %q; want 2 and a message", args, code, errOut)
		}
	}
}

func TestHelpAndVersion(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"help"}, {"run", "--help"}, {"discover", "-h"}, {"help", "run"}} {
		code, out, _ := ibscript(t, args...)
		if code != exitOK || !strings.Contains(out, "usage: ibscript") {
			t.Errorf("ibscript %q: exit %d, stdout %q", args, code, out)
		}
	}
	code, out, _ := ibscript(t, "--version")
	if code != exitOK || !strings.HasPrefix(out, "ibscript ") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
}

func TestDiscoverIBNetDiscoverFormat(t *testing.T) {
	code, out, errOut := ibscript(t, "discover", "--fabric", "sim:"+topologies+"net.2sw2path4hca")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Switch\t8 \"S-0000000000200000\"\t\t# \"Switch1\" base port 0 lid 1 lmc 0\n",
		"[1](100001) \t\"S-0000000000200000\"[1]\t\t# lid 2 lmc 0 \"Switch1\" lid 1 4xSDR\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// replState is a Lua state of the CLI's on net.2sw2path4hca, closed when
// the test ends.
func replState(t *testing.T) *lua.LState {
	t.Helper()
	c := &config{fabricURI: "sim:" + topologies + "net.2sw2path4hca"}
	b, L, env, err := newLua(context.Background(), c, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeLua(b, L, env, 0, io.Discard) })
	return L
}

func TestEvaluator(t *testing.T) {
	L := replState(t)
	ev := &evaluator{L: L}
	ctx := t.Context()

	if out, err := ev.Eval(ctx, "1 + 1"); err != nil || out != "2" {
		t.Errorf("expression: %q, %v", out, err)
	}
	if _, err := ev.Eval(ctx, "function f(x)"); err != errIncomplete {
		t.Errorf("incomplete chunk: %v, want errIncomplete", err)
	}
	if _, err := ev.Eval(ctx, "function f(x)\n  return x * 2\nend"); err != nil {
		t.Errorf("multi-line definition: %v", err)
	}
	if out, err := ev.Eval(ctx, "f(21)"); err != nil || out != "42" {
		t.Errorf("call: %q, %v", out, err)
	}
	out, err := ev.Eval(ctx, `smp.nodeinfo("lid:1")`)
	if err != nil || !strings.HasPrefix(out, "NodeInfo\n") || !strings.Contains(out, "node_guid") {
		t.Errorf("nodeinfo: %q, %v", out, err)
	}
	if got := completions(L, "x = smp.por"); len(got) != 2 || got[0] != "x = smp.portinfo" || got[1] != "x = smp.portinfo_ext" {
		t.Errorf("completion of smp.por: %q", got)
	}
	if got := completions(L, "fab"); len(got) != 1 || got[0] != "fabric" {
		t.Errorf("completion of fab: %q", got)
	}
	if _, err := ev.Eval(ctx, `ni = smp.nodeinfo("lid:1"); port = umad.open_port()`); err != nil {
		t.Fatal(err)
	}
	if got := completions(L, "ni.node_g"); len(got) != 1 || got[0] != "ni.node_guid" {
		t.Errorf("completion of a decoded field: %q", got)
	}
	if got := completions(L, "port:cl"); len(got) != 1 || got[0] != "port:close" {
		t.Errorf("completion of a userdata method: %q", got)
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ev.Eval(ctx2, "while true do end"); err == nil {
		t.Error("cancelled evaluation returned no error")
	}
}

// TestDiscoverMatchesIBNetDiscover is the differential test against the C
// tool: ibnetdiscover's output, captured against ibsim + OpenSM on the same
// topology file (tests/testdata/ibnetdiscover/README.md), and ours must be
// identical but for the "generated on" line.
func TestDiscoverMatchesIBNetDiscover(t *testing.T) {
	refs, err := filepath.Glob("../../tests/testdata/ibnetdiscover/*.txt")
	if err != nil || len(refs) == 0 {
		t.Fatalf("no reference outputs: %v", err)
	}
	for _, ref := range refs {
		name := strings.TrimSuffix(filepath.Base(ref), ".txt")
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			// ibnetdiscover ran on the first node of the file, where the SM is.
			code, got, errOut := ibscript(t, "discover", "--fabric", "sim:"+topologies+name)
			if code != exitOK {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			date := regexp.MustCompile(`(?m)^# Topology file: generated on .*$`)
			w := date.ReplaceAllString(string(want), "# Topology file: generated on DATE")
			g := date.ReplaceAllString(got, "# Topology file: generated on DATE")
			if w != g {
				t.Errorf("ibscript discover differs from ibnetdiscover:\n%s", lineDiff(w, g))
			}
		})
	}
}

// lineDiff shows where two texts differ, (-want +got) with context.
var lineDiff = madtest.TextDiff

// updateMan reports -update, which also rewrites docs/ibscript.1; the
// flag is mad/madtest's (this package's tests import it, and a second
// flag of the name panics at init).
func updateMan() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestManPage keeps docs/ibscript.1 what 'ibscript help man' prints.
func TestManPage(t *testing.T) {
	code, out, _ := ibscript(t, "help", "man")
	if code != exitOK || !strings.HasPrefix(out, ".TH IBSCRIPT 1") {
		t.Fatalf("help man: exit %d\n%s", code, out)
	}
	const path = "../../docs/ibscript.1"
	if updateMan() {
		if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil || string(have) != out {
		t.Errorf("docs/ibscript.1 is stale (%v): run go test ./cmd/ibscript -run TestManPage -update", err)
	}
}

// TestTimeLimit: --time-limit ends a busy Lua loop, a call blocked on the
// fabric and a plan, with status 2 and a message naming the flag; a run
// that finishes in time is untouched; a bad value is refused.
func TestTimeLimit(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"busy loop", []string{"--time-limit", "300ms", "-e", "while true do end"}},
		{"blocked recv", []string{"--time-limit", "300ms", "-e", `local p = umad.open_port(); umad.recv(p, -1)`}},
		{"plan", []string{"--time-limit", "300ms", "-e", `plan.check("spins", function() while true do end end)`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			code, out, errOut := ibscript(t, tc.args...)
			if code != exitError || !strings.Contains(errOut, "time limit reached (--time-limit 300ms)") {
				t.Errorf("exit %d, stderr %q, stdout %q; want %d and the time limit named", code, errOut, out, exitError)
			}
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("took %v to stop", d) // a hang, not a timing check
			}
		})
	}
	if code, out, errOut := ibscript(t, "--time-limit", "1m", "-e", "print(smp.nodeinfo('lid:1').node_type)"); code != exitOK || strings.TrimSpace(out) == "" {
		t.Errorf("a quick chunk under --time-limit 1m: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if code, _, errOut := ibscript(t, "--time-limit", "-5s", "-e", "print(1)"); code != exitError || !strings.Contains(errOut, "--time-limit") {
		t.Errorf("--time-limit -5s: exit %d, stderr %q", code, errOut)
	}
}

// TestCLIFirstHour: what a new user types on the first day (issue 22
// item 7): a flag error said once, help on an unknown topic refused, a
// plan on stdin, infiniband-diags' millisecond --timeout.
func TestCLIFirstHour(t *testing.T) {
	code, _, errOut := ibscript(t, "--no-such-flag")
	if code != exitError || strings.Count(errOut, "no-such-flag") != 1 {
		t.Errorf("flag error: exit %d, said %d times: %q", code, strings.Count(errOut, "no-such-flag"), errOut)
	}
	code, out, errOut := ibscript(t, "help", "nonsense")
	if code != exitError || out != "" || !strings.Contains(errOut, `no help on "nonsense"`) || !strings.Contains(errOut, "run") {
		t.Errorf("help nonsense: exit %d %q %q", code, out, errOut)
	}
	var stdout, stderr bytes.Buffer
	plan := "plan.define{}\nplan.check('from stdin', function(r) r:pass('ok') end)\n"
	code = run([]string{"run", "-", "--format", "tap"}, strings.NewReader(plan), &stdout, &stderr)
	if code != exitOK || !strings.Contains(stdout.String(), "ok 1 - general: from stdin") {
		t.Errorf("run -: exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	code = run([]string{"run", "-"}, strings.NewReader("\nerror('x')"), &stdout, &stderr)
	if code != exitError || !strings.Contains(stderr.String(), "stdin:2:") {
		t.Errorf("run - error: exit %d %q", code, stderr.String())
	}
	for _, c := range []struct {
		in   string
		want time.Duration
	}{{"5", 5 * time.Millisecond}, {"1500", 1500 * time.Millisecond}, {"0.5", 500 * time.Microsecond}, {"2s", 2 * time.Second}, {"250ms", 250 * time.Millisecond}} {
		cfg, err := parseArgs([]string{"--timeout", c.in}, io.Discard)
		if err != nil || cfg.timeout != c.want {
			t.Errorf("--timeout %s: %v, %v; want %v", c.in, cfg.timeout, err, c.want)
		}
	}
	for _, bad := range []string{"0", "-5", "soon", "1e300"} {
		if code, _, errOut := ibscript(t, "--timeout", bad, "-e", "print(1)"); code != exitError || !strings.Contains(errOut, "timeout") {
			t.Errorf("--timeout %s: exit %d %q", bad, code, errOut)
		}
	}
	// A bare number is milliseconds (500, not 50: four 50 ms tries could
	// all miss on a loaded machine).
	if code, out, _ := ibscript(t, "--timeout", "500", "-e", `print(smp.nodeinfo("lid:1").node_type)`); code != exitOK || out != "1\n" {
		t.Errorf("--timeout 500: exit %d %q", code, out)
	}
	if code, _, errOut := ibscript(t, "--fabric", "sim:", "-e", `smp.nodeinf(1)`); code != exitError || !strings.Contains(errOut, "attempt to call field 'nodeinf' (a nil value); did you mean smp.nodeinfo?") {
		t.Errorf("-e with a missing function: exit %d %q", code, errOut)
	}
	// An unknown discover format is refused before the backend opens.
	if code, _, errOut := ibscript(t, "discover", "--format", "json"); code != exitError || !strings.Contains(errOut, `unknown --format "json"`) || strings.Contains(errOut, "simulated fabric") {
		t.Errorf("discover --format json: exit %d %q", code, errOut)
	}
}

// TestCompletionsFollowIndexes: Tab after f.nodes[1]. offers the node's
// fields, never the globals; internal keys are never offered.
func TestCompletionsFollowIndexes(t *testing.T) {
	L := replState(t)
	if _, err := (&evaluator{L: L}).Eval(t.Context(), `f = fabric.discover()`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		line string
		want []string
	}{
		{"f.nodes[1].des", []string{"f.nodes[1].desc"}},
		{`f["nodes"][1].ports[1].remote.node.num_`, []string{`f["nodes"][1].ports[1].remote.node.num_ports`}},
		{"f.links[1].", []string{"f.links[1].a", "f.links[1].b"}},
		{"f.", []string{"f.errors", "f.links", "f.nodes"}},
		{"f.nodes[1]", nil},
		{"x(f).", nil},
		{"print(f.nodes[2].ty", []string{"print(f.nodes[2].type"}},
	} {
		got := completions(L, c.line)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("completions(%q) = %q, want %q", c.line, got, c.want)
		}
	}
}

// TestREPLPiped: with stdin not a terminal, no banner and no prompts;
// values print; the first error ends the session with status 2.
func TestREPLPiped(t *testing.T) {
	var stdout, stderr bytes.Buffer
	code := run([]string{"--fabric", "sim:"}, strings.NewReader("x = 1 + 1\nfunction f()\n  return x * 21\nend\nf()\nsmp.nodeinf('lid:1')\nprint('never')\n"), &stdout, &stderr)
	if code != exitError || stdout.String() != "42\n" || !strings.Contains(stderr.String(), "attempt to call field 'nodeinf' (a nil value); did you mean smp.nodeinfo?") || strings.Contains(stderr.String(), "traceback") {
		t.Errorf("exit %d\nstdout %q\nstderr %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	if code := run([]string{"--fabric", "sim:"}, strings.NewReader("print('ok')\n"), &stdout, &stderr); code != exitOK || stdout.String() != "ok\n" {
		t.Errorf("clean input: exit %d %q", code, stdout.String())
	}
}
