package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/internal/jsonschema"
)

// parserTool has options of every kind getopt_long knows.
var parserTool = &Tool{
	Name: "parsertool",
	Options: []Option{
		{Short: 'x', Long: "extended", Help: "a flag"},
		{Short: 'a', Long: "all", Help: "a flag"},
		{Short: 'n', Long: "hops", Arg: "<hops>", Help: "a value"},
		{Long: "switches-only", Help: "long only"},
		{Long: "switch", Arg: "<guid>", Help: "long only with a value"},
		{Short: 'q', Arg: "<v>", Optional: true, Help: "optional value"},
		{Short: 'G', Long: "port-guid", Arg: "<port_guid>", Help: "replaces the common -G"},
	},
	Exclude: "s,e",
}

// TestToolOptionParser: the command line is read as getopt_long reads
// the C tools' (GNU permutation, combined flags, attached values, long
// options with = or a separate value, unambiguous prefixes, --), with the
// tool's options replacing the common ones they reuse and the excluded
// ones refused.
func TestToolOptionParser(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		vals map[string][]string
		args []string
		err  string
	}{
		{argv: []string{"-xa"}, vals: map[string][]string{"extended": {""}, "all": {""}}},
		{argv: []string{"-xn3", "arg"}, vals: map[string][]string{"extended": {""}, "hops": {"3"}}, args: []string{"arg"}},
		{argv: []string{"-n", "3", "-t100"}, vals: map[string][]string{"hops": {"3"}, "timeout": {"100"}}},
		{argv: []string{"--hops=4", "--hops", "5"}, vals: map[string][]string{"hops": {"4", "5"}}},
		{argv: []string{"a", "-x", "b", "--", "-a", "--hops"}, vals: map[string][]string{"extended": {""}}, args: []string{"a", "b", "-a", "--hops"}},
		{argv: []string{"--switches"}, vals: map[string][]string{"switches-only": {""}}},  // unique prefix
		{argv: []string{"--switch", "0x1"}, vals: map[string][]string{"switch": {"0x1"}}}, // exact wins over a longer one
		{argv: []string{"--swi"}, err: "option '--swi' is ambiguous; possibilities: '--switches-only' '--switch'"},
		{argv: []string{"--bogus"}, err: "unrecognized option '--bogus'"},
		{argv: []string{"-n"}, err: "option requires an argument -- 'n' <hops>"},
		{argv: []string{"--hops"}, err: "option '--hops' requires an argument <hops>"},
		{argv: []string{"--all=1"}, err: "option '--all' doesn't allow an argument"},
		{argv: []string{"-q", "x"}, vals: map[string][]string{"q": {""}}, args: []string{"x"}},
		{argv: []string{"-qx"}, vals: map[string][]string{"q": {"x"}}},
		{argv: []string{"-", "-vvv"}, vals: map[string][]string{"verbose": {"", "", ""}}, args: []string{"-"}},
		{argv: []string{"-G", "0x2"}, vals: map[string][]string{"port-guid": {"0x2"}}},
		{argv: []string{"--Guid"}, err: "unrecognized option '--Guid'"}, // -G is the tool's: the common one is gone
		{argv: []string{"-s", "1"}, err: "invalid option -- 's'"},       // excluded
		{argv: []string{"--errors"}, err: "unrecognized option '--errors'"},
		{argv: []string{"--node-name-map", "f", "--fabric=sim:", "--format", "json"}, vals: map[string][]string{"node-name-map": {"f"}, "fabric": {"sim:"}, "format": {"json"}}},
		// ibscript's --fabric after "--" is still ibscript's; nothing else.
		{argv: []string{"-x", "--", "-a", "--fabric", "ibsim:s", "b", "--fabric=sim:", "--format", "json"}, vals: map[string][]string{"extended": {""}, "fabric": {"ibsim:s", "sim:"}}, args: []string{"-a", "b", "--format", "json"}},
		{argv: []string{"--", "a", "--fabric"}, args: []string{"a", "--fabric"}},
		// An option's missing value is missing, not ibscript's --fabric.
		{argv: []string{"-n", "--fabric", "sim:"}, err: "option requires an argument -- 'n' <hops>"},
		{argv: []string{"--hops", "--fabric=sim:"}, err: "option '--hops' requires an argument <hops>"},
		{argv: []string{"-n", "--fab"}, vals: map[string][]string{"hops": {"--fab"}}},
	} {
		vals, args, err := parseToolArgs(parserTool, tc.argv)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.argv, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.argv, err)
			continue
		}
		if tc.vals == nil {
			tc.vals = map[string][]string{}
		}
		if d := cmp.Diff(tc.vals, vals); d != "" {
			t.Errorf("%q: values (-want +got):\n%s", tc.argv, d)
		}
		if !slices.Equal(tc.args, args) {
			t.Errorf("%q: arguments %q, want %q", tc.argv, args, tc.args)
		}
	}
}

// TestToolTargets: -L (default), -G and -D read a destination argument
// as LID, GUID or directed route, through engine.ParseTarget; errors
// name the argument.
func TestToolTargets(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		arg   string
		want  string
		err   string
	}{
		{nil, "5", "lid:5", ""},
		{[]string{"-L"}, "0x10", "lid:16", ""},
		{[]string{"-G"}, "0x0002c90300001234", "guid:0x0002c90300001234", ""},
		{[]string{"-D"}, "0,1,3", "dr:0,1,3", ""},
		{[]string{"-D"}, "0", "dr:0", ""},
		{nil, "0", "", `<lid>: target "lid:0"`},
		// As str2drpath reads them: the first element stands for the
		// local port and is kept as typed (libibmad sends and prints
		// it), each is a byte (said on stderr where not as typed).
		{[]string{"-D"}, "1,3", "dr:1,3", ""},
		{[]string{"-D"}, "0,259", "dr:0,3", ""},
		{[]string{"-D"}, "7,259", "dr:7,3", ""},
		{nil, "5x", "lid:5", ""},
		{[]string{"-D"}, "0,x", "dr:0,0", ""},
		{[]string{"-D"}, "0,1,", "dr:0,1", ""},
		{[]string{"-D"}, "0,1,,5", "dr:0,1,0,5", ""},
		{[]string{"-D"}, "", "", "<dr_path>: empty"},
		{[]string{"-D"}, strings.Repeat("0,", 64) + "1", "", "64 hops"},
		// The last of -L, -G, -D wins, as ibd_dest_type.
		{[]string{"-D", "-G"}, "0x10", "guid:0x0000000000000010", ""},
		{[]string{"-G", "-D"}, "0,1", "dr:0,1", ""},
		{[]string{"-D", "-L"}, "7", "lid:7", ""},
	} {
		plain := &Tool{Name: "plain"}
		vals, _, order, err := parseToolArgsOrdered(plain, tc.flags)
		if err != nil {
			t.Fatal(err)
		}
		what := "<lid>"
		if tc.flags != nil && tc.flags[len(tc.flags)-1] == "-D" {
			what = "<dr_path>"
		}
		var stderr strings.Builder
		inv := &Invocation{Tool: plain, Prog: "plain", vals: vals, order: order, Stderr: &stderr}
		got, err := inv.Target(what, tc.arg)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v %q: error %v, want one containing %q", tc.flags, tc.arg, err, tc.err)
			}
		case err != nil:
			t.Errorf("%v %q: %v", tc.flags, tc.arg, err)
		case got.String() != tc.want:
			t.Errorf("%v %q: %s, want %s", tc.flags, tc.arg, got, tc.want)
		}
		// Read otherwise than as typed: said on stderr.
		asTyped := tc.arg == strings.TrimPrefix(strings.TrimPrefix(tc.want, "lid:"), "dr:") || strings.HasPrefix(tc.want, "guid:") || tc.arg == "0x10"
		if warned := strings.Contains(stderr.String(), "warning"); tc.err == "" && warned == asTyped {
			t.Errorf("%v %q: stderr %q", tc.flags, tc.arg, stderr.String())
		}
	}
}

// TestToolCommandLine: a tool runs as `ibscript TOOL`, after ibscript's
// own flags too, and through a link named like it (argv[0]); help,
// version and bad options answer as documented.
func TestToolCommandLine(t *testing.T) {
	fab := "sim:" + topologies + "net.mixed-router"
	// SwB's LID 3, as ibswitches prints through ibsim + OpenSM: the
	// router of GUID 0 before it gets none.
	want := "Switch\t: 0x0000000000200001 ports 8 \"SwB\" base port 0 lid 3 lmc 0\n" +
		"Switch\t: 0x0000000000200000 ports 8 \"SwA\" base port 0 lid 1 lmc 0\n"
	for _, argv := range [][]string{
		{"ibswitches", "--fabric", fab},
		{"--fabric", fab, "ibswitches"},
		{"ibswitches", "--fabric=" + fab, "-t", "100"},
		toolArgv([]string{"/usr/local/bin/ibswitches", "--fabric", fab}),
	} {
		code, out, errOut := ibscript(t, argv...)
		if code != exitOK || out != want {
			t.Errorf("%q: exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", argv, code, out, want, errOut)
		}
	}
	if got := toolArgv([]string{"/usr/bin/ibscript", "run", "x"}); !slices.Equal(got, []string{"run", "x"}) {
		t.Errorf("toolArgv of ibscript itself: %q", got)
	}
	for _, tc := range []struct {
		argv []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{[]string{"tools"}, exitOK, "ibswitches", ""},
		{[]string{"help", "tools"}, exitOK, "ibhosts", ""},
		{[]string{"help", "ibswitches"}, exitOK, "Usage: ibswitches [options] [<topology-file>]", ""},
		{[]string{"ibswitches", "--help"}, exitIBExit, "Usage: ibswitches [-h] [<topology-file> | -y mkey -C ca_name -P ca_port -t timeout_ms]\n", "--timeout, -t <ms>"},
		{[]string{"ibnodes", "-h"}, exitIBExit, "Usage: ibhosts [-h] [<topology-file> | -y mkey -C ca_name -P ca_port -t timeout_ms]\nUsage: ibswitches [-h]", "--timeout, -t <ms>"},
		{[]string{"smpquery", "--help"}, exitError, "", "Usage: smpquery [options] <op> <dest dr_path|lid|guid> [op params]"},
		{[]string{"help", "smpquery"}, exitOK, "Usage: smpquery [options]", ""},
		{[]string{"ibswitches", "-V"}, exitIBExit, "Usage: ibswitches [-h]", `option "-V" is not the script's`},
		{[]string{"smpquery", "-V"}, exitOK, "", "smpquery (ibscript "},
		// Common options' values read as process_opt reads them: a bad
		// one is IBEXIT while reading the options.
		{[]string{"smpquery", "-t", "2s", "nodedesc", "1"}, exitIBExit, "smpquery: iberror: failed: Invalid timeout \"2s\".  Timeout requires a positive integer value < 2147483647.\n", ""},
		{[]string{"perfquery", "-t", "0"}, exitIBExit, "perfquery: iberror: failed: Invalid timeout \"0\"", ""},
		{[]string{"smpquery", "-y", "12z", "nodedesc", "1"}, exitIBExit, "smpquery: iberror: failed: Bad M_Key\n", ""},
		{[]string{"smpquery", "-s", "0", "nodedesc", "1"}, exitIBExit, "smpquery: iberror: failed: cannot resolve SM destination port 0\n", ""},
		{[]string{"ibnodes", "-t", "x"}, exitIBExit, "/usr/sbin/ibnetdiscover: iberror: failed: Invalid timeout \"x\".  Timeout requires a positive integer value < 2147483647.\n/usr/sbin/ibnetdiscover: iberror:", ""},
		{[]string{"dump_lfts", "-t", "x"}, exitOK, "/usr/sbin/dump_fts: iberror: failed: Invalid timeout \"x\"", ""},
		{[]string{"--help"}, exitOK, "TOOL [OPTIONS]", ""},
		{[]string{"ibswitches", "-x"}, exitIBExit, "Usage: ibswitches [-h]", `option "-x" is not the script's`},
		{[]string{"ibswitches", "-G"}, exitIBExit, "Usage: ibswitches [-h]", `option "-G" is not the script's`},
		{[]string{"ibswitches", "-Cmlx5_0"}, exitIBExit, "Usage: ibswitches [-h]", `option "-Cmlx5_0" is not the script's`},
		{[]string{"ibswitches", "-y", "-1"}, exitIBExit, "Usage: ibswitches [-h]", "option -y wants a value"},
		{[]string{"ibswitches", "--format=json", "--fabric", fab, "-t", "100"}, exitOK, `"nodes"`, ""},
		{[]string{"ibswitches", "--format", "xml"}, exitError, "", `--format "xml": want text or json`},
		{[]string{"ibswitches", "-t", "-5"}, exitIBExit, "Usage: ibswitches [-h]", "option -t wants a value"},
		{[]string{"ibswitches", "-C", "mlx5_0", "--fabric", fab}, exitIBExit, "/usr/sbin/ibnetdiscover: iberror: failed: discover failed\n", `--fabric ` + fab + ` opened SwA port 0`},
		{[]string{"ibswitches", "-P", "300", "--fabric", "umad:"}, exitIBExit, "/usr/sbin/ibnetdiscover: iberror: failed: discover failed\n", "-P 300: no umad port"},
		{[]string{"ibswitches", "a", "b", "--fabric", fab}, exitIBExit, "Usage: ibswitches [-h]", "a second topology file"},
		// -C/-P name the port the backend opened, as libibumad decides.
		{[]string{"smpquery", "-C", "SwA", "-P", "0", "nodedesc", "1", "--fabric", fab}, exitOK, "Node Description:", ""},
		{[]string{"smpquery", "-P", "7", "nodedesc", "1", "--fabric", fab}, exitOK, "Node Description:", ""},
		{[]string{"smpquery", "-C", "SwA", "-P", "1", "nodedesc", "1", "--fabric", fab}, exitIBExit, "smpquery: iberror: failed: Failed to open 'SwA' port '1'\n", ""},
		{[]string{"smpquery", "-C", "foo", "nodedesc", "1", "--fabric", fab}, exitIBExit, "smpquery: iberror: failed: Failed to open 'foo' port '0'\n", ""},
		{[]string{"perfquery", "-P", "-1", "-C", "foo", "--fabric", fab}, exitIBExit, "perfquery: iberror: failed: Failed to open 'foo' port '-1'\n", ""},
		{[]string{"iblinkinfo", "-C", "foo", "--fabric", fab}, exitFailed, "", "Failed to open foo port 0\n"},
		{[]string{"ibnetdiscover", "-C", "foo", "--fabric", fab}, exitIBExit, "ibnetdiscover: iberror: failed: discover failed\n\n", ""},
		{[]string{"ibqueryerrors", "-C", "foo", "--fabric", fab}, exitIBExit, "ibqueryerrors: iberror: failed: Failed to open port; foo:0\n\n", ""},
		{[]string{"saquery", "-P", "300", "--fabric", "umad:"}, exitIBExit, "", "ibpanic: main: Failed to bind to the SA"},
		{[]string{"dump_fts", "-C", "foo", "--fabric", fab}, exitIBExit, "", "Failed to discover fabric"},
		{[]string{"ibswitches", "/nonexistent/topo", "--fabric", fab}, exitFailed, "", "/nonexistent/topo"}, // the script's cat fails: 1
		{[]string{"ibswitches", "--fabric", "sim:/nonexistent/topo"}, exitError, "", "/nonexistent/topo"},
	} {
		code, out, errOut := ibscript(t, tc.argv...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errOut, tc.err) {
			t.Errorf("%q: exit %d (want %d)\nstdout: %s\nstderr: %s\nwant %q in stdout, %q in stderr", tc.argv, code, tc.code, out, errOut, tc.out, tc.err)
		}
	}
	// Every registered tool is listed.
	_, out, _ := ibscript(t, "tools")
	for _, n := range toolNames() {
		if !strings.Contains(out, "  "+n+" ") {
			t.Errorf("ibscript tools does not list %s:\n%s", n, out)
		}
	}
}

// TestToolGUIDDestination: -G resolves the GUID to its port's LID before
// any query, as the C tools' resolve_portid_str does through the SA, so
// the headers say "Lid N" as theirs do; an unknown GUID is their IBEXIT
// with the argument as typed, and `ibscript TOOL` names itself TOOL there
// (checked against infiniband-diags on ibsim: `smpquery -G nodeinfo
// 0x1234` prints "smpquery: iberror: failed: can't resolve destination
// port 0x1234", after libibmad's "ibwarn: [pid] ib_path_query_via: sa
// call path_query failed" on stderr, which ibscript prints less the
// pid).
func TestToolGUIDDestination(t *testing.T) {
	fab := "sim:" + topologies + "net.mixed-router"
	for _, tc := range []struct {
		argv []string
		code int
		out  string
	}{
		{[]string{"smpquery", "-G", "nodeinfo", "0x100002"}, exitOK, "# Node info: Lid "},
		{[]string{"smpquery", "-G", "portinfo", "0x100002", "2"}, exitOK, "# Port info: Lid "},
		{[]string{"perfquery", "-G", "0x100002", "2"}, exitOK, "# Port counters: Lid "},
		{[]string{"ibportstate", "-G", "0x100002", "2"}, exitOK, "CA/RT PortInfo:\n# Port info: Lid "},
		{[]string{"smpquery", "-G", "nodeinfo", "0x1234"}, exitIBExit, "smpquery: iberror: failed: can't resolve destination port 0x1234\n"},
		{[]string{"perfquery", "-G", "0x1234"}, exitIBExit, "perfquery: iberror: failed: can't resolve destination port 0x1234\n"},
		{[]string{"ibccquery", "-G", "CI", "0x1234"}, exitIBExit, "ibccquery: iberror: failed: can't resolve destination 0x1234\n"},
		{[]string{"ibroute", "-G", "0x1234"}, exitIBExit, "ibroute: iberror: failed: can't resolve destination port 0x1234\n"},
		{[]string{"ibtracert", "-G", "0x1234", "0x100002"}, exitIBExit, "ibtracert: iberror: failed: Failed to get route information\n"},
	} {
		code, out, errOut := ibscript(t, append(tc.argv, "--fabric", fab)...)
		if code != tc.code || !strings.HasPrefix(out, tc.out) {
			t.Errorf("%q: exit %d (want %d)\nstdout: %s\nstderr: %s\nwant stdout to start with %q", tc.argv, code, tc.code, out, errOut, tc.out)
		}
		warned := strings.HasPrefix(errOut, "ibwarn: ib_path_query_via: sa call path_query failed\n")
		if warned != (tc.code != exitOK) {
			t.Errorf("%q: stderr %q: libibmad's path_query warning first %v, want %v", tc.argv, errOut, warned, tc.code != exitOK)
		}
	}
}

// TestToolLinkNames: through a link named like the tool, messages start
// with the tool's name, as the C tool's do.
func TestToolLinkNames(t *testing.T) {
	linkedTool = true
	defer func() { linkedTool = false }()
	code, _, errOut := ibscript(t, "smpquery", "-j")
	if code != exitError || !strings.HasPrefix(errOut, "smpquery: invalid option -- 'j'") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = ibscript(t, "ibhosts", "-x")
	if code != exitIBExit || !strings.HasPrefix(errOut, `ibhosts: option "-x" is not the script's`) {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

// TestToolSchemas: every tool has an example run and a JSON schema in
// docs/diag/, and its --format json output on the bundled simulated
// fabric is valid against it.
func TestToolSchemas(t *testing.T) {
	for _, name := range toolNames() {
		tool := tools[name]
		t.Run(name, func(t *testing.T) {
			if tool.Example == nil {
				t.Fatalf("%s has no Example: every tool needs one for this test", name)
			}
			schema := tool.Schema
			if schema == "" {
				schema = name
			}
			s := jsonschema.Load(t, "../../docs/diag/"+schema+".schema.json")
			argv := []string{name, "--fabric", "sim:", "--format", "json"}
			tmp := ""
			for _, a := range tool.Example {
				if strings.Contains(a, "$TMP") && tmp == "" {
					tmp = t.TempDir() // a tool that writes a file (ibcacheedit)
				}
				argv = append(argv, strings.ReplaceAll(a, "$TMP", tmp))
			}
			code, out, errOut := ibscript(t, argv...)
			if code != exitOK {
				t.Fatalf("%q: exit %d: %s", argv, code, errOut)
			}
			if errs := s.Validate([]byte(out)); len(errs) > 0 {
				t.Errorf("%q: output not valid against docs/diag/%s.schema.json:\n%s\n%s", argv, schema, strings.Join(errs, "\n"), out)
			}
		})
	}
}

// TestNodeListsAwkQuirks: on a topology file, ibswitches, ibhosts,
// ibrouters and ibnodes print what the infiniband-diags scripts' awk
// prints, also for lines that trip it: descriptions containing "port 0",
// "base port 0" or "enhanced port 0", a line without '#', "ib..." lines
// and ibwarn:/iberror:/ibpanic: anywhere, fields missing.
func TestNodeListsAwkQuirks(t *testing.T) {
	const text = `# a topology file with lines that trip the scripts' awk
Switch	24 "S-0002c90200403b80"		# "export 0 switch" base port 0 lid 2 lmc 0
Switch	8 "S-0000000000000002"		# "sw enhanced port 0" enhanced port 0 lid 3 lmc 1
Switch	8 "S-0000000000000003"		#"base port 0 first" base port 0 lid 4 lmc 0
Switch	8 "S-0000000000000004"		# "no port zero here"
Switch	8 "S-0000000000000005"	no hash port 0 here
Switch
Ca	2 "H-0002c90300001234"		# "host # with hash"
Ca	1 "H-0000000000000009"		#	"tab after hash" ibwarn: inside
Cable	1 "H-00"	# "Ca at the start of a word"
Rt	2 "R-0000000000000007"		# "router port 0"
ibwarn: [123] a warning line
ib at the start
  iberror: indented ibpanic: twice
`
	p := filepath.Join(t.TempDir(), "quirks.topo")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"ibswitches", "ibhosts", "ibrouters", "ibnodes"} {
		script := "/usr/sbin/" + tool
		if _, err := os.Stat(script); err != nil {
			if os.Getenv(ibsimtest.EnvRequire) == "1" {
				t.Fatalf("%s: %v, and %s=1", script, err, ibsimtest.EnvRequire)
			}
			t.Skipf("%s: %v (infiniband-diags is not installed)", script, err)
		}
		var want bytes.Buffer
		cmd := exec.Command(script, p)
		cmd.Stdout = &want
		if err := cmd.Run(); err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatal(err)
			}
		}
		code, got, errOut := ibscript(t, tool, p)
		if code != exitOK || got != want.String() {
			t.Errorf("%s FILE: exit %d (%s), stdout:\n%s\nthe script's:\n%s", tool, code, errOut, got, want.String())
		}
	}
}

// FuzzToolOptionParser: any command line is parsed or refused with an
// error, never a panic; every value parsed is an argument of the command
// line or a part of one, and the positional arguments are arguments.
func FuzzToolOptionParser(f *testing.F) {
	f.Add("-xa\x00--hops=3\x00arg\x00--\x00-a")
	f.Add("-n\x00")
	f.Add("--swi\x00-qx\x00-\x00-vvv\x00--node-name-map\x00f")
	f.Add("--=\x00---\x00-G0x2")
	f.Fuzz(func(t *testing.T, line string) {
		argv := strings.Split(line, "\x00")
		vals, args, order, err := parseToolArgsOrdered(parserTool, argv)
		if err != nil {
			return
		}
		joined := strings.Join(argv, "\x00")
		n := 0
		for k, vs := range vals {
			for _, v := range vs {
				if !strings.Contains(joined, v) {
					t.Fatalf("%s=%q is not in the command line %q", k, v, argv)
				}
				n++
			}
		}
		if n != len(order) {
			t.Fatalf("%d values, %d in order", n, len(order))
		}
		for _, a := range args {
			if !slices.Contains(argv, a) {
				t.Fatalf("argument %q is not one of %q", a, argv)
			}
		}
	})
}

// TestToolTimeoutTries: a tool's -t is a per-try timeout of libibmad's 3
// tries (2 retries), so an unanswered MAD costs what it costs the C tool;
// without -t the engine's default retries stay, and --retries wins over
// both.
func TestToolTimeoutTries(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{
		{[]string{"-t", "1000", "1"}, 2},
		{[]string{"1"}, engine.DefaultRetries},
		{[]string{"-t", "1000", "--retries", "5", "1"}, 5},
		{[]string{"--retries", "0", "1"}, 0},
	} {
		c := &config{tool: tools["perfquery"], args: tc.args, retries: engine.DefaultRetries, timeout: engine.DefaultTimeout}
		var out, errb strings.Builder
		if _, code, done := prepareTool(c, &out, &errb); done {
			t.Fatalf("perfquery %v: ended with %d: %s", tc.args, code, errb.String())
		}
		if c.retries != tc.want {
			t.Errorf("perfquery %v: %d retries, want %d", tc.args, c.retries, tc.want)
		}
	}
}

// TestDiagsVersion: --diags-version (or $IBSCRIPT_DIAGS_VERSION) picks
// the infiniband-diags the tools behave as; 44, the default, as Debian's
// infiniband-diags 44 prints; current as current rdma-core: iblinkinfo
// -S starts its partial scan from build_dr_path_to_lid's route (#1755),
// so it prints what -D with that route prints (from the SM's switch,
// Switch1, LID 4 is out of port 3 to Switch2, then port 1 to Hca2).
func TestDiagsVersion(t *testing.T) {
	fab := "sim:" + topologies + "net.2sw2path4hca"
	lk := func(args ...string) (int, string, string) {
		return ibscript(t, append([]string{"iblinkinfo", "--fabric", fab, "--quiet"}, args...)...)
	}
	_, old, _ := lk("-S", "0x100004")
	_, viaRoute, _ := lk("-D", "0,3,1")
	if old == viaRoute {
		t.Fatalf("44's -S prints what -D 0,3,1 prints: the test shows nothing:\n%s", old)
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", nil, old},
		{"", []string{"--diags-version", "44"}, old},
		{"", []string{"--diags-version=current"}, viaRoute},
		{"current", nil, viaRoute},
		{"current", []string{"--diags-version", "44"}, old},
		{"44", nil, old},
	} {
		t.Setenv("IBSCRIPT_DIAGS_VERSION", tc.env)
		code, stdout, stderr := lk(append(tc.args, "-S", "0x100004")...)
		if code != 0 || stdout != tc.want {
			t.Errorf("$IBSCRIPT_DIAGS_VERSION=%q %q: status %d, stdout:\n%s\nwant:\n%s(stderr %s)", tc.env, tc.args, code, stdout, tc.want, stderr)
		}
	}
	t.Setenv("IBSCRIPT_DIAGS_VERSION", "")
	// ibstat: current rdma-core's Effective speed line (#1769) after Rate;
	// Hca1's port runs 4x SDR (Rate 10).
	_, cur, _ := ibscript(t, "ibstat", "--fabric", fab+"?node=Hca1&port=1", "--quiet", "--diags-version", "current")
	_, def, _ := ibscript(t, "ibstat", "--fabric", fab+"?node=Hca1&port=1", "--quiet")
	if want := strings.Replace(def, "\t\tRate: 10\n", "\t\tRate: 10\n\t\tEffective speed: 10\n", -1); cur != want || cur == def {
		t.Errorf("ibstat --diags-version current:\n%s\nwant 44's with the line:\n%s", cur, want)
	}
	// Lua's diag module follows $IBSCRIPT_DIAGS_VERSION too.
	for env, want := range map[string]string{"current": "100\n", "": "nil\n"} {
		t.Setenv("IBSCRIPT_DIAGS_VERSION", env)
		code, stdout, stderr := ibscript(t, "--fabric", fab+"?node=Hca1&port=1", "--quiet", "-e", "print(diag.stat().cas[1].ports[1].effective_speed)")
		if code != 0 || stdout != want {
			t.Errorf("$IBSCRIPT_DIAGS_VERSION=%q: Lua diag.stat's effective_speed: status %d, %q (%s); want %q", env, code, stdout, stderr, want)
		}
	}
	t.Setenv("IBSCRIPT_DIAGS_VERSION", "")
	for _, tc := range []struct{ env, arg, want string }{
		{"", "--diags-version=45", `ibscript iblinkinfo: --diags-version "45": want 44 or current`},
		{"Current", "", `ibscript iblinkinfo: $IBSCRIPT_DIAGS_VERSION "Current": want 44 or current`},
	} {
		t.Setenv("IBSCRIPT_DIAGS_VERSION", tc.env)
		args := []string{"-S", "0x100004"}
		if tc.arg != "" {
			args = append(args, tc.arg)
		}
		code, stdout, stderr := lk(args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, tc.want) {
			t.Errorf("%q %q: status %d, stdout %q, stderr %q; want 2 and %q", tc.env, tc.arg, code, stdout, stderr, tc.want)
		}
	}
}

// TestToolGUIDFullScan: a -S/-G GUID the SA does not resolve makes
// iblinkinfo and ibqueryerrors scan the whole fabric after the two lines
// the C tools print on ibsim ("ibwarn: [pid] ib_path_query_via: sa call
// path_query failed", "ibwarn: [pid] main: Failed to resolve 0x01234;
// attempting full scan", iblinkinfo's with a newline more), the GUID as
// typed; neither finds the port, status 0.
func TestToolGUIDFullScan(t *testing.T) {
	const pq = "ibwarn: ib_path_query_via: sa call path_query failed\n"
	for _, tc := range []struct {
		argv   []string
		stderr string
	}{
		{[]string{"iblinkinfo", "-S", "0x01234"}, pq + "ibwarn: main: Failed to resolve 0x01234; attempting full scan\n\nFailed to find port: 0x1234\n"},
		{[]string{"ibqueryerrors", "-G", "0x01234"}, pq + "ibwarn: main: Failed to resolve 0x01234; attempting full scan\nFailed to find node: 0x1234\n"},
	} {
		code, _, errOut := ibscript(t, append(tc.argv, "--fabric", "sim:", "--quiet")...)
		if code != exitOK || errOut != tc.stderr {
			t.Errorf("%q: exit %d, stderr %q; want 0, %q", tc.argv, code, errOut, tc.stderr)
		}
	}
}

// TestToolOptionSuggest: a mistyped long option is getopt_long's
// "unrecognized option" (status 2, as the C tool's), and the hint after
// it names the nearest options the tool has, as ibscript's own flags do.
func TestToolOptionSuggest(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		near string // the hint's option, "" when none is near
	}{
		{[]string{"smpquery", "--extendd", "nodeinfo", "1"}, "--extended"},
		{[]string{"saquery", "--node-name-mpa", "x"}, "--node-name-map"},
		{[]string{"iblinkinfo", "--swich", "1"}, "--switch"},
		{[]string{"smpquery", "--zzzzzzz"}, ""},
	} {
		line := "ibscript " + tc.argv[0] + ": unrecognized option '" + tc.argv[1] + "'\n("
		if tc.near != "" {
			line += "did you mean " + tc.near + "? "
		}
		line += "ibscript " + tc.argv[0] + " --help lists the options)\n"
		code, out, errOut := ibscript(t, append(tc.argv, "--fabric", "sim:")...)
		if code != exitError || out != "" || errOut != line {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", tc.argv, code, out, errOut, line)
		}
	}
}
