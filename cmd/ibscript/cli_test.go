package main

import (
	"bytes"
	"flag"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFirstHourCommandLine (issue 36 items 4-9): what a new user mistypes
// gets exit status 2 and a message naming the flag (two dashes), the
// value and what was wanted, with the nearest flag or command; extra
// arguments are refused; a missing topology says which file and where.
func TestFirstHourCommandLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fromat", "json", "discover"}, "ibscript: unknown flag --fromat (did you mean --format?)\n"},
		{[]string{"--fabirc=sim:", "discover"}, "unknown flag --fabirc (did you mean --fabric?)"},
		{[]string{"--time-limt", "1s", "discover"}, "unknown flag --time-limt (did you mean --time-limit?)"},
		{[]string{"iblinkinf"}, `unknown command "iblinkinf" (did you mean iblinkinfo?)`},
		{[]string{"discovr"}, `unknown command "discovr" (did you mean discover?)`},
		{[]string{"validate.lua"}, `unknown command "validate.lua" (did you mean ibscript run validate.lua?)`},
		{[]string{"--retries", "abc", "discover"}, "ibscript: --retries abc: not a number\n"},
		{[]string{"--interval", "banana", "exporter"}, "ibscript: --interval banana: want milliseconds (500) or a duration (500ms, 10s, 5m)\n"},
		{[]string{"--time-limit", "9999999h", "discover"}, "ibscript: --time-limit 9999999h: out of range (at most 2562047h)\n"},
		{[]string{"--timeout", "1.5x", "discover"}, "ibscript: --timeout 1.5x: want milliseconds (500) or a duration (500ms, 10s, 5m)\n"},
		{[]string{"--traps=maybe", "exporter"}, "--traps maybe: want true or false"},
		{[]string{"discover", "--fabric"}, "ibscript: --fabric needs URI\n"},
		{[]string{"--fabric", "sim:", "discover", "extra", "args"}, "ibscript discover: unexpected arguments extra args (discover takes none; ibscript help discover)\n"},
		{[]string{"--fabric", "sim:", "tools", "x"}, "unexpected arguments x"},
		{[]string{"--fabric", "sim:", "-e", "print(1)", "x"}, "unexpected arguments x after -e CHUNK"},
		{[]string{"help", "run", "x"}, "unexpected arguments x (help takes 1"},
		// A flag of another command is refused, not passed over: discover
		// --load read no file, run PLAN --interval 5 set no interval.
		{[]string{"--fabric", "sim:", "discover", "--load", "fabric.topo"}, "ibscript: --load does not apply to ibscript discover (only to analyze, topology)\n"},
		{[]string{"--fabric", "sim:", "run", "plan.lua", "--interval", "5"}, "--interval does not apply to ibscript run (only to exporter)"},
		{[]string{"--fabric", "sim:", "-e", "print(1)", "--format", "json"}, "--format does not apply to the REPL or -e (only to run, discover, analyze, topology, report)"},
		{[]string{"--fabric", "sim:", "discover", "--arg", "x=1"}, "--arg does not apply to ibscript discover (only to run, -e)"},
		{[]string{"completion"}, "want one shell: bash, zsh, fish"},
		{[]string{"completion", "tcsh"}, "want one shell: bash, zsh, fish"},
		{[]string{"--fabric", "sim:" + filepath.Join(dir, "nosuch.net"), "discover"}, "ibscript: --fabric sim:" + filepath.Join(dir, "nosuch.net") + ": no topology file " + filepath.Join(dir, "nosuch.net") + ": no such file or directory\n"},
		{[]string{"--fabric", "sim:nosuch.net", "discover"}, "--fabric sim:nosuch.net: no topology file nosuch.net (in "},
		{[]string{"--fabric", "sim:" + dir, "discover"}, ": no topology file " + dir + ": it is a directory"},
	} {
		code, out, errOut := ibscript(t, tc.args...)
		if code != exitError || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
		if strings.Contains(errOut, "flag provided") || regexp.MustCompile(`(^| )-[a-z]{2,}`).MatchString(errOut) {
			t.Errorf("%q: a flag with one dash, or the flag package's words: %q", tc.args, errOut)
		}
	}
}

// TestOneDurationRule (issue 36 item 6): every duration flag reads a bare
// number as milliseconds, as --timeout and infiniband-diags' -t, and a Go
// duration otherwise; --interval 5 was a parse error.
func TestOneDurationRule(t *testing.T) {
	for _, name := range []string{"timeout", "time-limit", "interval", "discover-interval"} {
		for in, want := range map[string]time.Duration{"5": 5 * time.Millisecond, "2500": 2500 * time.Millisecond, "1.5": 1500 * time.Microsecond, "10s": 10 * time.Second, "5m": 5 * time.Minute} {
			c, err := parseArgs([]string{"--" + name, in}, io.Discard)
			if err != nil {
				t.Errorf("--%s %s: %v", name, in, err)
				continue
			}
			got := map[string]time.Duration{"timeout": c.timeout, "time-limit": c.timeLimit, "interval": c.exporter.interval, "discover-interval": c.exporter.discoverInterval}[name]
			if got != want {
				t.Errorf("--%s %s: %v, want %v", name, in, got, want)
			}
		}
	}
}

// TestToolDurationRule: a tool's --time-limit follows the same rule
// (it was a Go duration only).
func TestToolDurationRule(t *testing.T) {
	if code, out, errOut := ibscript(t, "ibswitches", "--fabric", "sim:", "--time-limit", "60000"); code != 0 || !strings.Contains(out, "Switch") {
		t.Errorf("ibswitches --time-limit 60000: exit %d, %q, %q", code, out, errOut)
	}
	if code, _, errOut := ibscript(t, "ibswitches", "--fabric", "sim:", "--time-limit", "soon"); code != exitError || !strings.Contains(errOut, `--time-limit "soon": want a positive duration`) {
		t.Errorf("ibswitches --time-limit soon: exit %d, %q", code, errOut)
	}
}

// TestFlagEdges (issue 31 item 7, the command line's share): every flag
// value is checked before anything runs, exit status 2 naming the flag.
func TestFlagEdges(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exporter", "--interval", "1ns"}, "--interval 1ns: want at least 10ms between sweeps (a bare number is milliseconds: 10s is 10000)"},
		{[]string{"exporter", "--interval", "5"}, "--interval 5ms: want at least 10ms"},
		{[]string{"exporter", "--discover-interval", "10ms"}, "--discover-interval 10ms: want at least 1s"},
		{[]string{"exporter", "--web.listen-address", ""}, `--web.listen-address '': want HOST:PORT or :PORT (default :9315)`},
		{[]string{"exporter", "--web.listen-address", "localhost"}, `--web.listen-address localhost: want HOST:PORT or :PORT`},
		{[]string{"exporter", "--web.listen-address", "127.0.0.1:70000"}, `--web.listen-address 127.0.0.1:70000: want a port number 0..65535`},
		{[]string{"--timeout", "0", "-e", "print(1)"}, "--timeout 0s: want a positive duration"},
		{[]string{"--time-limit", "-5", "-e", "print(1)"}, "--time-limit -5ms: want a positive duration"},
	} {
		code, out, errOut := ibscript(t, append([]string{"--fabric", "sim:"}, tc.args...)...)
		if code != exitError || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestQuietNotice (issue 36 item 8): --quiet and IBSCRIPT_QUIET=1 silence
// the notice that auto mode fell back to the simulator; the notice is
// there without them.
func TestQuietNotice(t *testing.T) {
	if _, err := os.Stat("/sys/class/infiniband_mad"); err == nil {
		t.Skip("this host may have InfiniBand ports: auto would not use the simulator")
	}
	const notice = "using the embedded simulated fabric"
	if code, _, errOut := ibscript(t, "-e", "print(1)"); code != 0 || !strings.Contains(errOut, notice) {
		t.Fatalf("no --quiet: exit %d, stderr %q", code, errOut)
	}
	if code, out, errOut := ibscript(t, "--quiet", "-e", "print(1)"); code != 0 || errOut != "" || out != "1\n" {
		t.Errorf("--quiet: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The notice names --quiet; the diags tools take it too.
	for _, tool := range [][]string{{"iblinkinfo"}, {"ibstatus"}, {"sminfo"}, {"perfquery"}} {
		if code, _, errOut := ibscript(t, append(tool, "--quiet")...); code != 0 || errOut != "" {
			t.Errorf("%s --quiet: exit %d, stderr %q", tool[0], code, errOut)
		}
	}
	t.Setenv("IBSCRIPT_QUIET", "1")
	if code, _, errOut := ibscript(t, "-e", "print(1)"); code != 0 || errOut != "" {
		t.Errorf("IBSCRIPT_QUIET=1: exit %d, stderr %q", code, errOut)
	}
	t.Setenv("IBSCRIPT_QUIET", "0")
	if _, _, errOut := ibscript(t, "-e", "print(1)"); !strings.Contains(errOut, notice) {
		t.Errorf("IBSCRIPT_QUIET=0 silenced the notice")
	}
}

// TestVersion (issue 36 item 11): --version names the release, the
// commit and the Go version.
func TestVersion(t *testing.T) {
	code, out, _ := ibscript(t, "--version")
	if code != 0 || !regexp.MustCompile(`^ibscript 0\.\d+\.\d+\S* \(commit \S+, go1\.\d+\S*, linux/\w+\)\n$`).MatchString(out) {
		t.Errorf("--version: exit %d, %q", code, out)
	}
	// A binary built as release/build builds it knows its commit
	// (from Go's build information in a clone, else from -ldflags).
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "ibscript")
	if out, err := exec.Command("go", "build", "-buildvcs=true", "-ldflags", "-X main.buildCommit="+strings.TrimSpace(string(head)), "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	v, err := exec.Command(bin, "--version").Output()
	if err != nil || !strings.Contains(string(v), "commit "+string(head[:12])) {
		t.Errorf("built binary --version: %q %v, want commit %s", v, err, head[:12])
	}
}

// TestFlagTableMatchesFlagSet: the command table the manual page and the
// completions are made from lists every flag newFlagSet defines, and no
// other.
func TestFlagTableMatchesFlagSet(t *testing.T) {
	fs := newFlagSet(&config{}, io.Discard)
	var defined []string
	fs.VisitAll(func(f *flag.Flag) { defined = append(defined, f.Name) })
	var table []string
	for _, f := range flagTable {
		table = append(table, f.name)
		fl := fs.Lookup(f.name)
		if fl == nil {
			continue
		}
		_, isBool := fl.Value.(interface{ IsBoolFlag() bool })
		if isBool != (f.arg == "") {
			t.Errorf("--%s: boolean %v, but the table gives it the value %q", f.name, isBool, f.arg)
		}
	}
	slices.Sort(defined)
	slices.Sort(table)
	if !slices.Equal(defined, table) {
		t.Errorf("flags %v, table %v", defined, table)
	}
	for _, f := range flagTable {
		if !strings.Contains(usage, dash(f.name)) && !strings.Contains(commandHelp["exporter"], dash(f.name)) {
			t.Errorf("%s is in no help text", dash(f.name))
		}
	}
}

// TestCompletions (issue 36 item 11): the bash completion, sourced in
// bash, completes commands, tools, flags and flag values; zsh's and
// fish's name every command and flag, and parse in their shells when
// installed.
func TestCompletions(t *testing.T) {
	scripts := map[string]string{}
	for _, sh := range completionShells {
		code, out, errOut := ibscript(t, "completion", sh)
		if code != 0 || errOut != "" {
			t.Fatalf("completion %s: exit %d, %q", sh, code, errOut)
		}
		for _, w := range append(commandNames()[:len(commandTable)], "iblinkinfo", "smpquery", "web.listen-address", "node-name-map", "quiet") {
			if !strings.Contains(out, w) {
				t.Errorf("completion %s lacks %q", sh, w)
			}
		}
		scripts[sh] = out
	}
	if code, out, _ := ibscript(t, "help", "completion"); code != 0 || !strings.HasPrefix(out, "usage: ibscript completion bash|zsh|fish") {
		t.Errorf("help completion: exit %d, %q", code, out)
	}
	dir := t.TempDir()
	for sh, s := range scripts {
		p := filepath.Join(dir, sh)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := exec.LookPath(sh); err != nil {
			t.Logf("%s not installed: its completion is not parsed", sh)
			continue
		}
		if out, err := exec.Command(sh, "-n", p).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", sh, err, out)
		}
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct {
		line string // the words typed; the last is completed
		want []string
		not  []string
	}{
		{"ibscript di", []string{"discover"}, []string{"run"}},
		{"ibscript iblink", []string{"iblinkinfo"}, nil},
		{"ibscript --fro", nil, []string{"--format"}},
		{"ibscript --for", []string{"--format"}, nil},
		{"ibscript --format j", []string{"json", "junit"}, []string{"text"}},
		{"ibscript --fabric s", []string{"sim:"}, nil},
		{"ibscript --quiet ex", []string{"exporter"}, nil},
		{"ibscript --fabric sim: r", []string{"run", "report"}, nil},
		{"ibscript exporter --web.l", []string{"--web.listen-address"}, nil},
		{"ibscript completion b", []string{"bash"}, nil},
		{"ibscript report m", []string{"merge"}, nil},
		{"ibscript help iblinki", []string{"iblinkinfo"}, nil},
	} {
		words := strings.Fields(tc.line)
		script := "source " + filepath.Join(dir, "bash") + "\nCOMP_WORDBREAKS=$' \\t\\n\"\\'><=;|&('\nCOMP_WORDS=(" + tc.line + ")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_ibscript\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		out, err := exec.Command("bash", "--norc", "-c", script).CombinedOutput()
		if err != nil {
			t.Errorf("%q: %v\n%s", tc.line, err, out)
			continue
		}
		got := strings.Fields(string(out))
		for _, w := range tc.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q completes to %v, want %q among them", tc.line, got, w)
			}
		}
		for _, w := range tc.not {
			if slices.Contains(got, w) {
				t.Errorf("%q completes to %v, not %q", tc.line, got, w)
			}
		}
	}
}

// TestManSynopsis (issue 36 item 9): the manual page's SYNOPSIS is made
// from the command table, so it names every command (exporter was
// missing) and every flag; its REPL text names the keys the README names.
func TestManSynopsis(t *testing.T) {
	var b bytes.Buffer
	if err := writeMan(&b); err != nil {
		t.Fatal(err)
	}
	man := b.String()
	i, j := strings.Index(man, ".SH SYNOPSIS"), strings.Index(man, ".SH DESCRIPTION")
	if i < 0 || j < i {
		t.Fatalf("no SYNOPSIS:\n%s", man)
	}
	syn := strings.ReplaceAll(man[i:j], `\-`, "-")
	for _, c := range commandTable {
		if !strings.Contains(syn, `\fB`+c.name+`\fR`) {
			t.Errorf("SYNOPSIS lacks %s:\n%s", c.name, syn)
		}
	}
	for _, f := range flagTable {
		if f.name == "h" {
			continue // --help's
		}
		if !strings.Contains(syn, `\fB`+dash(f.name)+`\fR`) {
			t.Errorf("SYNOPSIS lacks %s", dash(f.name))
		}
	}
	if !strings.Contains(man, "m_key, mkey, sm_key, cc_key") {
		t.Errorf("the manual page's REPL text does not name cc_key as the README does")
	}
}

// TestPlanHelp (issue 36 item 3): run PLAN --help lists the arguments the
// plan declares, with their help, what they take and their defaults,
// without running the plan (its output is discarded, no fabric but the
// embedded simulator is opened), where it printed the generic help.
func TestPlanHelp(t *testing.T) {
	code, out, errOut := ibscript(t, "--fabric", "umad:nosuch/1", "run", "../../scripts/validate.lua", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"usage: ibscript run [flags] ../../scripts/validate.lua [--arg KEY=VALUE]...\n",
		"fabric validation\n",
		"  width\n      expected active width of every link; empty: not checked\n      one of 1X, 2X, 4X, 8X, 12X; default \"\"\n",
		"  interval\n", "a number, 0 to 86400; default 0\n",
		"  max_hops\n", "an integer, 0 to 64; default 0\n",
		"  save\n", "a file to write (its directory must exist); default \"\"\n",
		"  reference\n", "a readable file; default \"\"\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	// A plan that prints before plan.define: nothing of it shows.
	dir := t.TempDir()
	p := filepath.Join(dir, "p.lua")
	os.WriteFile(p, []byte(`print("ran") local a = plan.define{description="d", args={n={default=3, help="how many", min=1}}} print("ran after")`), 0o644)
	code, out, errOut = ibscript(t, "run", p, "-h")
	if code != 0 || strings.Contains(out, "ran") || !strings.Contains(out, "  n\n      how many\n      a number, at least 1; default 3\n") || errOut != "" {
		t.Errorf("plan help: exit %d, %q, %q", code, out, errOut)
	}
	// A plain script (no plan.define) says it takes no --arg; its output
	// is discarded.
	os.WriteFile(p, []byte(`print("ran")`), 0o644)
	code, out, _ = ibscript(t, "run", p, "--help")
	if code != 0 || strings.Contains(out, "ran\n") || !strings.Contains(out, "defines no plan") {
		t.Errorf("plain script help: exit %d, %q", code, out)
	}
	// Without a file, the help of run.
	if code, out, _ := ibscript(t, "run", "--help"); code != 0 || !strings.HasPrefix(out, "usage: ibscript run [flags] FILE") {
		t.Errorf("run --help: exit %d, %q", code, out)
	}
}

// TestPlanArgsChecked (issue 36 item 4, issue 31 item 7): --arg values are
// checked against what the plan declares before any check runs: exit 2
// with the value and what was wanted, where width=5X failed every link
// (exit 1), interval=99999999 and save=/ were failed checks and
// max_hops=-1 was taken.
func TestPlanArgsChecked(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		arg, want string
	}{
		{"width=5X", "--arg width=5X: want one of 1X, 2X, 4X, 8X, 12X"},
		{"width=banana", "--arg width=banana: want one of"},
		{"speed=FAST", "--arg speed=FAST: want one of SDR, DDR, QDR, FDR, EDR, HDR, NDR"},
		{"interval=99999999", "--arg interval=99999999: want a number, 0 to 86400"},
		{"interval=abc", "--arg interval=abc: number expected"},
		{"max_hops=-1", "--arg max_hops=-1: want an integer, 0 to 64"},
		{"max_hops=2.5", "--arg max_hops=2.5: want an integer"},
		{"save=/", "--arg save=/: want a file to write, not a directory"},
		{"save=" + dir + "/no/such/dir/f.json", "its directory " + dir + "/no/such/dir: no such file or directory"},
		{"thresholds=" + dir, "--arg thresholds=" + dir + ": want a readable file, not a directory"},
		{"widht=4X", "--arg widht=4X: unknown argument; did you mean width?"},
	} {
		code, out, errOut := ibscript(t, "--fabric", "sim:", "run", "../../scripts/validate.lua", "--arg", tc.arg)
		if code != exitError || out != "" || !strings.Contains(errOut, tc.want) || strings.Contains(errOut, "traceback") {
			t.Errorf("--arg %s: exit %d, stdout %q, stderr %q; want 2 and %q", tc.arg, code, out, errOut, tc.want)
		}
	}
	// Accepted: a declared spelling in another case, the bounds, a file
	// to create.
	code, out, errOut := ibscript(t, "--fabric", "sim:", "run", "../../scripts/validate.lua", "--arg", "width=4x", "--arg", "max_hops=64", "--arg", "save="+filepath.Join(dir, "snap.json"), "--format", "json")
	if code != 0 || !strings.Contains(out, `"width": "4X"`) {
		t.Errorf("good --arg values: exit %d, stderr %q\n%s", code, errOut, out)
	}
	// A declaration the plan gets wrong is the plan's error.
	p := filepath.Join(dir, "bad.lua")
	os.WriteFile(p, []byte(`plan.define{args={n={default=1, choices="a"}}}`), 0o644)
	if code, _, errOut := ibscript(t, "--fabric", "sim:", "run", p); code != exitError || !strings.Contains(errOut, "args.n.choices: table expected, got string") {
		t.Errorf("bad declaration: exit %d, %q", code, errOut)
	}
	// With --format, the refusal is in the report too.
	code, out, _ = ibscript(t, "--fabric", "sim:", "run", "../../scripts/validate.lua", "--arg", "width=5X", "--format", "json")
	if code != exitError || !strings.Contains(out, `"error": "--arg width=5X: want one of`) {
		t.Errorf("--format json: exit %d\n%s", code, out)
	}
}

// TestCheckWithNoResult (issue 36 item 10): a check that records nothing
// is skipped, "no result recorded", where it printed "PASS ... 0 ok".
func TestCheckWithNoResult(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p.lua")
	os.WriteFile(p, []byte(`plan.define{} plan.check("nothing", "c", function(r) end) plan.check("one", "c", function(r) r:pass() end)`), 0o644)
	code, out, errOut := ibscript(t, "--fabric", "sim:", "run", p)
	if code != 0 || !regexp.MustCompile(`SKIP  nothing +no result recorded\n`).MatchString(out) || strings.Contains(out, "0 ok") ||
		!strings.Contains(out, "1 checks passed, 0 failed, 1 skipped") {
		t.Errorf("exit %d, stderr %q\n%s", code, errOut, out)
	}
}
