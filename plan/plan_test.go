package plan

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/jsonschema"
)

func sample() *Report {
	r := New("validate")
	r.Plan.Description = "fabric checks"
	r.Plan.Categories = []string{"links", "sm"}
	r.Plan.Args = map[string]string{"width": "4x"}
	r.Fabric = FabricInfo{Backend: "sim", Host: "h1", CA: "sim0", Port: 1, Nodes: 4, Links: 3}
	r.Started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r.Add("links ACTIVE", "links", Result{Status: Pass})
	r.Add("link width", "links", Result{Status: Fail, Message: "1X, want 4X # degraded", Object: &Object{NodeGUID: "0x0002c90300000001", NodeDesc: "sw1", Port: 3, LID: 2}})
	r.Add("one MASTER", "sm", Result{Status: Skip, Message: "no SM"})
	r.Begin("empty", "sm")
	r.Finish()
	return r
}

func TestFinishAndExitCode(t *testing.T) {
	r := sample()
	// "empty" recorded nothing: skipped (NoResult), never passed.
	if got := r.Summary; got != (Summary{Checks: 4, Passed: 1, Failed: 1, Skipped: 2}) {
		t.Errorf("summary %+v", got)
	}
	if r.ExitCode() != ExitFailed {
		t.Errorf("exit %d, want 1", r.ExitCode())
	}
	bare := New("b")
	bare.Begin("many", "c").AddPass(1000)
	bare.Finish()
	if c := bare.Checks[0]; c.Passed != 1000 || c.Status != Pass || len(c.Results) != 0 {
		t.Errorf("bare passes: %+v", c)
	}
	ok := New("x")
	ok.Add("a", "", Result{Status: Skip})
	ok.Finish()
	if ok.ExitCode() != ExitOK || ok.Checks[0].Category != "general" {
		t.Errorf("skips only: exit %d category %q", ok.ExitCode(), ok.Checks[0].Category)
	}
	ok.Error = "boom"
	if ok.ExitCode() != ExitError {
		t.Errorf("run error: exit %d, want 2", ok.ExitCode())
	}
}

func TestText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, sample(), false); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"validate: fabric checks", "[links]", "  PASS  links ACTIVE", "  FAIL  link width", `"sw1" port 3 (0x0002c90300000001): 1X, want 4X`, "  SKIP  one MASTER", "  SKIP  empty                            no result recorded\n", "1 checks passed, 1 failed, 2 skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("text lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("colour without a terminal")
	}
	b.Reset()
	WriteText(&b, sample(), true)
	if !strings.Contains(b.String(), ansiRed+"FAIL"+ansiReset) {
		t.Errorf("no colour on a terminal:\n%q", b.String())
	}
}

func TestJSONMatchesSchemaAndRoundTrips(t *testing.T) {
	s := jsonschema.Load(t, "../docs/plan-report.schema.json")
	for _, r := range []*Report{sample(), New("empty"), Merge(sample(), sample())} {
		r.Finish()
		var b bytes.Buffer
		if err := WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		if errs := s.Validate(b.Bytes()); len(errs) > 0 {
			t.Errorf("%s: schema violations:\n%s\n%s", r.Plan.Name, strings.Join(errs, "\n"), b.String())
		}
		back, err := ReadJSON(&b)
		if err != nil {
			t.Fatal(err)
		}
		if back.Summary != r.Summary || len(back.Checks) != len(r.Checks) {
			t.Errorf("round trip: %+v, want %+v", back.Summary, r.Summary)
		}
	}
	// The validator does reject what the schema forbids.
	for _, bad := range []string{
		`{"schema":"ibscript.plan.v2"}`,
		strings.Replace(jsonOf(t, sample()), `"status": "fail"`, `"status": "broken"`, 1),
		strings.Replace(jsonOf(t, sample()), `"node_guid": "0x0002c90300000001"`, `"node_guid": "12"`, 1),
		strings.Replace(jsonOf(t, sample()), `"passed": 1`, `"passed": 1.5`, 1),
		strings.Replace(jsonOf(t, sample()), `"plan": {`, `"plan": {"extra": 1,`, 1),
	} {
		if errs := s.Validate([]byte(bad)); len(errs) == 0 {
			t.Errorf("schema accepted %s", bad)
		}
	}
}

func jsonOf(t *testing.T, r *Report) string {
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestTAP(t *testing.T) {
	var b bytes.Buffer
	WriteTAP(&b, sample())
	out := b.String()
	for _, want := range []string{"TAP version 13\n1..4\n", "ok 1 - links: links ACTIVE\n", "not ok 2 - links: link width\n  ---\n", `    - message: "1X, want 4X # degraded"`, "      port: 3\n", "  ...\n", "ok 3 - sm: one MASTER # SKIP no SM\n", "ok 4 - sm: empty # SKIP no result recorded\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("TAP lacks %q:\n%s", want, out)
		}
	}
}

func TestJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sample()); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if got.Tests != 4 || got.Failures != 1 || got.Skipped != 2 || len(got.Suites) != 2 {
		t.Fatalf("counts %d/%d/%d suites %d\n%s", got.Tests, got.Failures, got.Skipped, len(got.Suites), b.String())
	}
	f := got.Suites[0].Cases[1].Failure
	if got.Suites[0].Name != "links" || f == nil || !strings.Contains(f.Text, `"sw1" port 3`) {
		t.Errorf("failure element: %+v", got.Suites[0])
	}
}

func TestWriteUnknownFormat(t *testing.T) {
	if err := Write(&bytes.Buffer{}, "yaml", sample(), false); err == nil || !strings.Contains(err.Error(), `"yaml"`) {
		t.Errorf("err %v", err)
	}
}

func TestMerge(t *testing.T) {
	a, b := sample(), sample()
	b.Fabric.Host = "h2"
	b.Error = "timeout"
	m := Merge(a, b)
	if m.Summary.Checks != 8 || m.Checks[4].Category != "h2/links" || m.ExitCode() != ExitError || !strings.Contains(m.Error, "h2: timeout") {
		t.Errorf("merged %+v %q %q", m.Summary, m.Checks[4].Category, m.Error)
	}
}

// TestCheckLookupLinear: finding a check by name was a linear search, so
// a plan of 40,000 checks did 800 million comparisons; now each Begin or
// Add looks at O(1) entries: 40k checks cost 4 times 10k's (with
// room: under 5 times), counted, not timed.
func TestCheckLookupLinear(t *testing.T) {
	steps := func(n int) int {
		r := New("p")
		for i := range n {
			name := fmt.Sprintf("check %d", i)
			r.Begin(name, "")
			r.Add(name, "general", Result{Status: Pass})
		}
		if len(r.Checks) != n {
			t.Fatalf("%d checks, want %d", len(r.Checks), n)
		}
		return r.steps
	}
	small, big := steps(10000), steps(40000)
	if big > 5*small {
		t.Errorf("40k checks took %d steps, 10k %d: not linear", big, small)
	}
	// Checks appended behind the index are found.
	r := New("p")
	r.Begin("a", "x")
	r.Checks = append(r.Checks, &Check{Name: "b", Category: "y"})
	if c := r.Begin("b", "y"); c != r.Checks[1] || len(r.Checks) != 2 {
		t.Errorf("an appended check was not found")
	}
}

// unreadableSample is sample with a check that could not read a port and
// one that failed and could not read another.
func unreadableSample() *Report {
	r := sample()
	o := &Object{NodeGUID: "0x0002c90300000009", NodeDesc: "leaf9", Port: 4, LID: 9}
	r.Add("P_Keys match", "links", Result{Status: Pass})
	r.Add("P_Keys match", "links", Result{Status: Error, Message: "lid:9 P_KeyTable block 0: timeout after 4 tries", Object: o})
	r.Add("link width", "links", Result{Status: Error, Message: "lid:9 PortInfo port 4: 6 reads, no two in a row alike"})
	r.Finish()
	return r
}

// TestUnreadable: a check that could not read something has status
// error, counted apart from failures; the run exits 2 (even with a failed
// check beside it); every format says it; JSON round-trips and matches
// the schema; ReadJSON and Merge keep it.
func TestUnreadable(t *testing.T) {
	r := unreadableSample()
	if got := r.Summary; got != (Summary{Checks: 5, Passed: 1, Failed: 1, Skipped: 2, Errors: 1}) {
		t.Errorf("summary %+v", got)
	}
	var pk, lw *Check
	for _, c := range r.Checks {
		switch c.Name {
		case "P_Keys match":
			pk = c
		case "link width":
			lw = c
		}
	}
	if pk.Status != Error || pk.Errors != 1 || pk.Passed != 1 || lw.Status != Fail || lw.Errors != 1 {
		t.Errorf("P_Keys %+v, link width %+v", pk, lw)
	}
	if r.ExitCode() != ExitError {
		t.Errorf("exit %d, want 2", r.ExitCode())
	}
	// A failed check that could not read everything still exits 2.
	only := New("x")
	only.Add("a", "c", Result{Status: Fail, Message: "wrong"})
	only.Add("a", "c", Result{Status: Error, Message: "no answer"})
	only.Finish()
	if only.ExitCode() != ExitError || only.Summary.Errors != 0 || only.Summary.Failed != 1 {
		t.Errorf("fail with an error result: exit %d, summary %+v", only.ExitCode(), only.Summary)
	}
	want := map[string][]string{
		"text": {"  ERROR P_Keys match", "1 ok, 1 could not be read", "could not read: \"leaf9\" port 4 (0x0002c90300000009): lid:9 P_KeyTable block 0: timeout",
			"1 failed, 1 could not be read", "1 checks passed, 1 failed, 2 skipped, 1 could not complete"},
		"json": {`"status": "error"`, `"errors": 1`},
		"tap":  {"not ok 5 - links: P_Keys match\n  ---\n  status: error", "  errors: 1\n  unreadable:\n    - message: \"lid:9 P_KeyTable"},
		"junit": {`errors="1"`, `<error message="1 could not be read: &#34;leaf9&#34; port 4`, `type="unreadable"`,
			"could not read: lid:9 PortInfo port 4"},
	}
	for _, format := range Formats() {
		var b bytes.Buffer
		if err := Write(&b, format, r, false); err != nil {
			t.Fatal(err)
		}
		for _, w := range want[format] {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: no %q in\n%s", format, w, b.String())
			}
		}
	}
	s := jsonschema.Load(t, "../docs/plan-report.schema.json")
	j := jsonOf(t, r)
	if errs := s.Validate([]byte(j)); len(errs) > 0 {
		t.Errorf("schema: %s", strings.Join(errs, "\n"))
	}
	back, err := ReadJSON(strings.NewReader(j))
	if err != nil {
		t.Fatal(err)
	}
	if back.Summary != r.Summary || back.ExitCode() != ExitError {
		t.Errorf("round trip: %+v exit %d", back.Summary, back.ExitCode())
	}
	m := Merge(back, sample())
	if m.Summary.Errors != 1 || m.ExitCode() != ExitError {
		t.Errorf("merged: %+v exit %d", m.Summary, m.ExitCode())
	}
	// Reports that contradict themselves about errors are refused.
	for _, bad := range []string{
		strings.Replace(j, `"errors": 1,`, `"errors": 0,`, 1),
		strings.Replace(j, `"status": "error",`, `"status": "pass",`, 1),
	} {
		if _, err := ReadJSON(strings.NewReader(bad)); err == nil {
			t.Errorf("ReadJSON accepted %s", bad)
		}
	}
}
