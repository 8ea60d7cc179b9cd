package main

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/jsonschema"
	"github.com/ibscript/ibscript/plan"
)

func schema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	return jsonschema.Load(t, "../../docs/plan-report.schema.json")
}

// TestValidateFormats runs validate.lua on the planted-fault fabric in
// every format: the same two checks fail in each, and the same one could
// not read the router (the SM gives its GUID 0 no LID, as OpenSM).
func TestValidateFormats(t *testing.T) {
	fab := "sim:" + topologies + "net.2sw2path4hca-faulty"
	for _, c := range []struct {
		format string
		want   []string
	}{
		{"text", []string{`(?m)^  FAIL  links ACTIVE`, `(?m)^  FAIL  no zero GUIDs`, `(?m)^  ERROR error counters within thresholds`,
			`(?m)^\d+ checks passed, 2 failed, \d+ skipped, 1 could not complete`}},
		{"json", []string{`"name": "no zero GUIDs",\s+"category": "ids",\s+"status": "fail"`, `"failed": 2,`,
			`"name": "error counters within thresholds",\s+"category": "counters",\s+"status": "error"`}},
		{"tap", []string{`(?m)^TAP version 13$`, `(?m)^not ok \d+ - links: links ACTIVE$`, `(?m)^not ok \d+ - ids: no zero GUIDs$`,
			`(?m)^not ok \d+ - counters: error counters within thresholds$`, `node_desc: "Rtr"`}},
		{"junit", []string{`<testsuite name="ids" tests="3" failures="1"`, `<testcase name="no zero GUIDs"[^>]*>\s*<failure message="1 failed: `,
			`<testsuite name="links" tests="3" failures="1"`, `<testsuite name="counters" tests="2" failures="0" errors="1"`}},
	} {
		t.Run(c.format, func(t *testing.T) {
			code, out, errOut := ibscript(t, "run", "--fabric", fab, "--format", c.format, "../../scripts/validate.lua")
			if code != exitError {
				t.Fatalf("exit %d, want 2\n%s\n%s", code, out, errOut)
			}
			for _, w := range c.want {
				if !regexp.MustCompile(w).MatchString(out) {
					t.Errorf("%s output lacks %s:\n%s", c.format, w, out)
				}
			}
			switch c.format {
			case "json":
				if errs := schema(t).Validate([]byte(out)); len(errs) > 0 {
					t.Errorf("schema: %s", strings.Join(errs, "\n"))
				}
				r, err := plan.ReadJSON(strings.NewReader(out))
				if err != nil {
					t.Fatal(err)
				}
				var failed []string
				for _, ch := range r.Checks {
					if ch.Status == plan.Fail {
						failed = append(failed, ch.Name)
					}
				}
				if !slices.Equal(failed, []string{"links ACTIVE", "no zero GUIDs"}) {
					t.Errorf("failed checks %v", failed)
				}
			case "junit":
				var v struct{}
				if err := xml.Unmarshal([]byte(out), &v); err != nil {
					t.Errorf("not XML: %v", err)
				}
			}
		})
	}
}

func TestRunArgs(t *testing.T) {
	code, out, errOut := ibscript(t, "run", "../../scripts/checks/links.lua", "--arg", "widht=4X")
	// A usage error: no report (unless --format asks for one).
	if code != exitError || !strings.Contains(errOut, `--arg widht=4X: unknown argument; did you mean width? (known: speed, width)`) || out != "" {
		t.Errorf("unknown arg: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = ibscript(t, "run", "../../scripts/checks/links.lua", "--arg", "width=4X", "--arg", "speed=QDR")
	if code != exitOK || !strings.Contains(out, "PASS  expected width and speed") {
		t.Errorf("expected 4X QDR: exit %d\n%s", code, out)
	}
	code, out, _ = ibscript(t, "run", "../../scripts/checks/links.lua", "--arg", "width=1X")
	if code != exitFailed || !strings.Contains(out, "FAIL  expected width and speed") {
		t.Errorf("expected 1X: exit %d\n%s", code, out)
	}
	for _, bad := range [][]string{{"--arg", "nokey"}, {"--format", "yaml"}} {
		code, _, errOut := ibscript(t, append([]string{"run", "../../scripts/checks/links.lua"}, bad...)...)
		if code != exitError || errOut == "" {
			t.Errorf("%v: exit %d %q", bad, code, errOut)
		}
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "plain.lua")
	os.WriteFile(script, []byte("print('hi')"), 0o644)
	if code, _, errOut := ibscript(t, "run", script, "--arg", "a=1"); code != exitError || !strings.Contains(errOut, "defines no plan") {
		t.Errorf("--arg to a script without a plan: exit %d %q", code, errOut)
	}
	if code, out, _ := ibscript(t, "run", script); code != exitOK || out != "hi\n" {
		t.Errorf("a script without plan.*: exit %d %q", code, out)
	}
}

func TestReportMerge(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for i, fab := range []string{"net.2sw2path4hca", "net.2sw2path4hca-degraded"} {
		_, out, _ := ibscript(t, "run", "--fabric", "sim:"+topologies+fab, "--format", "json", "../../scripts/checks/links.lua", "--arg", "width=4X")
		f := filepath.Join(dir, fab+".json")
		// Two hosts of one cluster run.
		out = strings.Replace(out, `"host": "`, `"host": "host`+string(rune('1'+i)), 1)
		os.WriteFile(f, []byte(out), 0o644)
		files = append(files, f)
	}
	code, out, errOut := ibscript(t, append([]string{"report", "merge"}, files...)...)
	if code != exitFailed {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if errs := schema(t).Validate([]byte(out)); len(errs) > 0 {
		t.Errorf("merged report: %s", strings.Join(errs, "\n"))
	}
	r, err := plan.ReadJSON(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if r.Summary.Checks != 8 || r.Summary.Failed != 1 {
		t.Errorf("merged summary %+v", r.Summary)
	}
	if code, _, _ := ibscript(t, "report", "merge", "/nonexistent.json"); code != exitError {
		t.Errorf("missing file: exit %d", code)
	}
	// A command line that is not a merge says what is missing or wrong
	// before the usage.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "ibscript report: want a subcommand: merge REPORT.json...\nusage:"},
		{[]string{"report", "mrege", files[0]}, "ibscript report: unknown subcommand \"mrege\" (want merge)\nusage:"},
		{[]string{"report", "merge"}, "ibscript report merge: want one or more JSON reports"},
		{[]string{"report", "merge", "--format", "xml", "/nonexistent.json"}, "ibscript report merge: unknown --format \"xml\" (want text, json, tap or junit)\n"},
	} {
		code, out, errOut := ibscript(t, c.args...)
		if code != exitError || out != "" || !strings.HasPrefix(errOut, c.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and %q", c.args, code, out, errOut, c.want)
		}
	}
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, []byte(`{"schema":"ibscript.plan.v1","checks":[null]}`), 0o644)
	if code, out, errOut := ibscript(t, "report", "merge", files[0], bad); code != exitError || out != "" || !strings.Contains(errOut, "bad.json: plan: report checks[0] is null") {
		t.Errorf("null check: exit %d %q %q", code, out, errOut)
	}
	// Two reports of one host (two rails) stay apart.
	code, out, _ = ibscript(t, "report", "merge", files[0], files[0])
	if code != exitOK || !regexp.MustCompile(`"category": "host1[^"/]*:Switch1/0/links"`).MatchString(out) || !strings.Contains(out, `#2/links"`) {
		t.Errorf("one host twice: exit %d\n%s", code, out)
	}
}

// TestTopologyReference: a reference written by discover, compared with a
// fabric that lost a cable, and a JSON snapshot saved and used as the
// reference of the clean fabric.
func TestTopologyReference(t *testing.T) {
	dir := t.TempDir()
	ref := filepath.Join(dir, "fabric.topo")
	code, out, errOut := ibscript(t, "discover", "--fabric", "sim:"+topologies+"net.2sw2path4hca")
	if code != exitOK {
		t.Fatalf("discover: %d %s", code, errOut)
	}
	os.WriteFile(ref, []byte(out), 0o644)
	code, out, _ = ibscript(t, "run", "--fabric", "sim:"+topologies+"net.2sw2path4hca-nocable", "../../scripts/checks/topology.lua", "--arg", "reference="+ref)
	if code != exitFailed || !regexp.MustCompile(`\[critical\] missing-cable: "Switch[12]" port 5 <-> "Switch[12]" port 5: not cabled`).MatchString(out) {
		t.Errorf("missing cable: exit %d\n%s", code, out)
	}
	snap := filepath.Join(dir, "fabric.json")
	code, out, _ = ibscript(t, "run", "--fabric", "sim:"+topologies+"net.2sw2path4hca", "../../scripts/checks/topology.lua", "--arg", "save="+snap, "--arg", "reference="+ref)
	if code != exitOK {
		t.Fatalf("clean against its own reference: exit %d\n%s", code, out)
	}
	code, out, _ = ibscript(t, "run", "--fabric", "sim:"+topologies+"net.2sw2path4hca", "../../scripts/checks/topology.lua", "--arg", "reference="+snap)
	if code != exitOK || !strings.Contains(out, "PASS  topology matches the reference") {
		t.Errorf("against the snapshot: exit %d\n%s", code, out)
	}
}

func TestProgressLine(t *testing.T) {
	var b strings.Builder
	now := time.Unix(0, 0)
	p := &progressLine{w: &b, now: func() time.Time { return now }}
	p.update(1, 100, "portcounters")
	now = now.Add(50 * time.Millisecond)
	p.update(2, 100, "portcounters")   // within 100 ms: not shown
	p.update(100, 100, "portcounters") // the last one always is
	p.clear()
	want := "\r\x1b[Kportcounters 1/100 (1%)\r\x1b[Kportcounters 100/100 (100%)\r\x1b[K"
	if b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	// No total (a discovery): the count alone, rate-limited too.
	b.Reset()
	now = now.Add(time.Second)
	p.update(7, 0, "nodes found")
	p.update(9, 0, "nodes found")
	if want := "\r\x1b[Knodes found 7"; b.String() != want {
		t.Errorf("no total: got %q, want %q", b.String(), want)
	}
}

// TestRunErrorReports: a run that fails before or outside its checks (a
// syntax error, an unreachable fabric, a setup mistake) still writes a
// valid report carrying the error in the format asked for, and exits 2.
func TestRunErrorReports(t *testing.T) {
	dir := t.TempDir()
	syntax := filepath.Join(dir, "broken.lua")
	os.WriteFile(syntax, []byte("plan.define{}\nplan.check('x', function(r) r:pass() end\n"), 0o644)
	early := filepath.Join(dir, "early.lua")
	os.WriteFile(early, []byte("error('gave up early')\nplan.define{}\n"), 0o644)
	th := filepath.Join(dir, "thresholds")
	os.WriteFile(th, []byte("SymbolErrors=1\n"), 0o644)
	for _, c := range []struct {
		name string
		args []string
		want string // in the report's error
	}{
		{"syntax", []string{syntax}, "broken.lua"},
		{"error before plan.define", []string{early}, "gave up early"},
		{"unreachable fabric", []string{"--fabric", "sim:" + filepath.Join(dir, "none.net"), "../../scripts/validate.lua"}, "none.net"},
		{"missing reference", []string{"../../scripts/checks/topology.lua", "--arg", "reference=" + filepath.Join(dir, "fabric.topo")}, "fabric.topo"},
		{"bad thresholds", []string{"../../scripts/validate.lua", "--arg", "thresholds=" + th}, "SymbolErrors"},
		{"bad --arg", []string{"../../scripts/validate.lua", "--arg", "nokey"}, "nokey"},
	} {
		for _, format := range []string{"json", "junit", "tap", "text"} {
			t.Run(c.name+"/"+format, func(t *testing.T) {
				code, out, errOut := ibscript(t, append([]string{"run", "--format", format}, c.args...)...)
				if code != exitError {
					t.Fatalf("exit %d, want 2\n%s\n%s", code, out, errOut)
				}
				if !strings.Contains(errOut, c.want) {
					t.Errorf("stderr lacks %q: %s", c.want, errOut)
				}
				switch format {
				case "json":
					if errs := schema(t).Validate([]byte(out)); len(errs) > 0 {
						t.Errorf("schema: %s\n%s", strings.Join(errs, "\n"), out)
					}
					r, err := plan.ReadJSON(strings.NewReader(out))
					if err != nil {
						t.Fatalf("%v\n%s", err, out)
					}
					if !strings.Contains(r.Error, c.want) || r.Summary.Failed != 0 {
						t.Errorf("report error %q (want %q), summary %+v", r.Error, c.want, r.Summary)
					}
				case "junit":
					var v struct {
						Errors int `xml:"errors,attr"`
					}
					if err := xml.Unmarshal([]byte(out), &v); err != nil || v.Errors != 1 {
						t.Errorf("JUnit: %v, errors=%d\n%s", err, v.Errors, out)
					}
					if !regexp.MustCompile(`<error message="[^"]*` + regexp.QuoteMeta(c.want)).MatchString(out) {
						t.Errorf("JUnit has no <error> naming %q:\n%s", c.want, out)
					}
				case "tap":
					if !regexp.MustCompile(`(?m)^Bail out! .*` + regexp.QuoteMeta(c.want)).MatchString(out) {
						t.Errorf("TAP has no Bail out! naming %q:\n%s", c.want, out)
					}
				case "text":
					if !strings.Contains(out, "run failed: ") || !strings.Contains(out, c.want) {
						t.Errorf("text report lacks the run error:\n%s", out)
					}
				}
			})
		}
	}
	// Without --format, a plain script that fails writes only stderr.
	plain := filepath.Join(dir, "plain.lua")
	os.WriteFile(plain, []byte("error('plain failure')\n"), 0o644)
	if code, out, errOut := ibscript(t, "run", plain); code != exitError || out != "" || !strings.Contains(errOut, "plain failure") {
		t.Errorf("plain script: exit %d %q %q", code, out, errOut)
	}
}

// TestJUnitTimes: no exponents in JUnit times, whatever the durations.
func TestJUnitTimes(t *testing.T) {
	_, out, _ := ibscript(t, "run", "--format", "junit", "../../scripts/checks/ids.lua")
	if m := regexp.MustCompile(`time="[^"]*"`).FindAllString(out, -1); len(m) == 0 {
		t.Fatalf("no times:\n%s", out)
	}
	if regexp.MustCompile(`time="[^"]*[eE]`).MatchString(out) {
		t.Errorf("exponent in a time:\n%s", out)
	}
}

// TestNodeNameMap: --node-name-map names nodes in discover's output and
// in a plan's messages and report objects; a bad map is a run error
// naming file and line.
func TestNodeNameMap(t *testing.T) {
	dir := t.TempDir()
	m := filepath.Join(dir, "names")
	os.WriteFile(m, []byte("# spine\n0x0000000000200000 \"spine-a\"\n"), 0o644)
	fab := "sim:" + topologies + "net.2sw2path4hca-degraded"
	code, out, errOut := ibscript(t, "discover", "--fabric", fab, "--node-name-map", m)
	if code != exitOK || !strings.Contains(out, `# "spine-a" base port 0 lid 1`) || strings.Contains(out, `"Switch1"`) {
		t.Errorf("discover: exit %d %s\n%s", code, errOut, out)
	}
	code, out, _ = ibscript(t, "run", "--fabric", fab, "--node-name-map", m, "--format", "json", "../../scripts/checks/links.lua", "--arg", "width=4X")
	r, err := plan.ReadJSON(strings.NewReader(out))
	if code != exitFailed || err != nil {
		t.Fatalf("run: exit %d %v\n%s", code, err, out)
	}
	var named bool
	for _, c := range r.Checks {
		for _, res := range c.Results {
			if res.Status == plan.Fail && res.Object != nil && res.Object.NodeGUID == "0x0000000000200000" {
				named = res.Object.NodeDesc == "spine-a" && strings.Contains(res.Message, "spine-a port")
				if !named {
					t.Errorf("result %+v %+v", res, res.Object)
				}
			}
		}
	}
	if !named {
		t.Errorf("no failure on spine-a:\n%s", out)
	}
	os.WriteFile(m, []byte("0x1 \"a\"\nzz \"b\"\n"), 0o644)
	if code, _, errOut := ibscript(t, "discover", "--node-name-map", m); code != exitError || !strings.Contains(errOut, m+":2:") {
		t.Errorf("bad map: exit %d %q", code, errOut)
	}
}

// TestCheckDescriptions: each shipped check run alone heads its text
// report "NAME: DESCRIPTION", so a description does not say its name
// again ("topology: topology: differences from a reference" was the
// first line a new user saw of scripts/checks/topology.lua).
func TestCheckDescriptions(t *testing.T) {
	files, err := filepath.Glob("../../scripts/checks/*.lua")
	if err != nil {
		t.Fatal(err)
	}
	ran := 0
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".lua")
		if name == "common" {
			continue
		}
		ran++
		code, out, errOut := ibscript(t, "--fabric", "sim:", "run", f, "--help")
		lines := strings.Split(out, "\n")
		if code != exitOK || len(lines) < 3 || lines[2] == "" {
			t.Errorf("%s --help: exit %d, stdout %q, stderr %q", f, code, out, errOut)
			continue
		}
		if desc := strings.ToLower(lines[2]); strings.HasPrefix(desc, name+":") || strings.HasPrefix(desc, name+" ") {
			t.Errorf("%s: description %q repeats the plan's name", f, lines[2])
		}
	}
	if ran < 7 {
		t.Errorf("%d checks in scripts/checks, want the 7 shipped", ran)
	}
}
