package plan

import (
	"bytes"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"
)

// TestReadJSONRefuses: reports that contradict themselves are refused
// with an error naming the check and the field, never merged.
func TestReadJSONRefuses(t *testing.T) {
	good := jsonOf(t, sample())
	for _, c := range []struct{ in, want string }{
		{`{"schema":"ibscript.plan.v1","checks":[null]}`, "checks[0] is null"},
		{`{"schema":"ibscript.plan.v1","checks":[{"name":"a","category":"c","status":"fail","passed":0,"failed":1,"skipped":0,"results":[]}],"summary":{"checks":1,"failed":1}}`, `checks[0] "a": failed 1 but 0 failed results listed`},
		{`{"schema":"ibscript.plan.v1","checks":[{"name":"a","category":"c","status":"fail","passed":0,"failed":0,"skipped":0,"results":[]}],"summary":{"checks":1,"failed":1}}`, `status fail, but its counts`},
		{`{"schema":"ibscript.plan.v1","checks":[{"name":"a","category":"c","status":"pass","passed":-3,"failed":0,"skipped":0,"results":[]}],"summary":{"checks":1,"passed":1}}`, "negative count"},
		{`{"schema":"ibscript.plan.v1","checks":[{"name":"a","category":"c","status":"maybe","passed":1,"failed":0,"skipped":0,"results":[]}],"summary":{"checks":1,"passed":1}}`, `status "maybe"`},
		{`{"schema":"ibscript.plan.v1","checks":[{"name":"a","category":"c","status":"pass","passed":1,"failed":0,"skipped":0,"results":[{"status":"weird"}]}],"summary":{"checks":1,"passed":1}}`, `results[0]: status "weird"`},
		{`{"schema":"ibscript.plan.v1","checks":[{"name":"a","category":"c","status":"pass","passed":1,"failed":0,"skipped":0,"results":[]}],"summary":{"checks":5,"passed":1}}`, "summary"},
		{`{"schema":"ibscript.plan.v1","checks":[{"name":"","category":"c","status":"pass","passed":1,"results":[]}],"summary":{"checks":1,"passed":1}}`, "no name"},
		{`{"schema":"ibscript.plan.v1","duration_seconds":-1}`, "duration_seconds -1"},
		{strings.Replace(good, `"failed": 1,`, `"failed": 0,`, 1), `"link width": failed 0 but 1 failed results listed`},
	} {
		_, err := ReadJSON(strings.NewReader(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.in, err, c.want)
		}
	}
	if _, err := ReadJSON(strings.NewReader(good)); err != nil {
		t.Errorf("a report WriteJSON wrote: %v", err)
	}
	// A check with no result is skipped; reports written before 0.1.0
	// said pass, and still merge.
	for _, st := range []string{"skip", "pass"} {
		in := `{"schema":"ibscript.plan.v1","checks":[{"name":"a","category":"c","status":"` + st + `","passed":0,"failed":0,"skipped":0,"results":[]}],"summary":{"checks":1,"` + map[string]string{"skip": "skipped", "pass": "passed"}[st] + `":1}}`
		if _, err := ReadJSON(strings.NewReader(in)); err != nil {
			t.Errorf("a check with no result, status %s: %v", st, err)
		}
	}
}

// TestMergeSameHost: two reports of one host (two rails) stay apart,
// named by CA and port, and two identical ones by position.
func TestMergeSameHost(t *testing.T) {
	a, b := sample(), sample()
	b.Fabric.CA = "sim1"
	m := Merge(a, b)
	cats := map[string]bool{}
	for _, c := range m.Checks {
		cats[c.Category] = true
	}
	if !cats["h1:sim0/1/links"] || !cats["h1:sim1/1/links"] || len(cats) != 4 {
		t.Errorf("categories %v", cats)
	}
	m = Merge(sample(), sample(), nil)
	if m.Checks[0].Category != "h1:sim0/1/links" || m.Checks[4].Category != "h1:sim0/1#2/links" {
		t.Errorf("identical reports: %q %q", m.Checks[0].Category, m.Checks[4].Category)
	}
	if m.Summary != (Summary{Checks: 8, Passed: 2, Failed: 2, Skipped: 4}) {
		t.Errorf("summary %+v", m.Summary)
	}
}

// TestJUnitTimesAndRunError: times in plain decimals, a run error as an
// <error> element counted in errors.
func TestJUnitTimesAndRunError(t *testing.T) {
	r := sample()
	r.Checks[0].Duration = 5.324e-05
	r.Duration = 1e-7
	r.Error = "plan.lua:3: boom"
	var b bytes.Buffer
	if err := WriteJUnit(&b, r); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if regexp.MustCompile(`time="[^"]*[eE]`).MatchString(out) {
		t.Errorf("exponent in a time:\n%s", out)
	}
	if !strings.Contains(out, `time="0.000053"`) {
		t.Errorf("no time=\"0.000053\":\n%s", out)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	run := got.Suites[len(got.Suites)-1]
	if got.Errors != 1 || run.Name != "run" || run.Errors != 1 || run.Failures != 0 || run.Cases[0].Error == nil || run.Cases[0].Failure != nil || run.Cases[0].Error.Message != r.Error {
		t.Errorf("run error: %+v\n%s", run, out)
	}
}

// FuzzMerge: whatever JSON comes in, ReadJSON refuses it or accepts a
// report that merges and writes in every format without a panic, and the
// merged report is valid itself (it reads back).
func FuzzMerge(f *testing.F) {
	var b bytes.Buffer
	WriteJSON(&b, sample())
	f.Add(b.String())
	b.Reset()
	WriteJSON(&b, Merge(sample(), sample()))
	f.Add(b.String())
	f.Add(`{"schema":"ibscript.plan.v1","checks":[null]}`)
	f.Add(`{"schema":"ibscript.plan.v1","checks":[{"name":"a","category":"c","status":"fail","passed":0,"failed":1,"skipped":0,"results":[]}]}`)
	f.Fuzz(func(t *testing.T, in string) {
		r, err := ReadJSON(strings.NewReader(in))
		if err != nil {
			return
		}
		m := Merge(r, r)
		for _, format := range formats {
			if err := Write(&bytes.Buffer{}, format, m, false); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
		}
		var out bytes.Buffer
		if err := WriteJSON(&out, m); err != nil {
			t.Fatal(err)
		}
		back, err := ReadJSON(&out)
		if err != nil {
			t.Fatalf("merged report does not read back: %v\n%s", err, out.String())
		}
		if back.Summary.Checks != 2*r.Summary.Checks || back.ExitCode() != r.ExitCode() {
			t.Errorf("merged summary %+v from %+v", back.Summary, r.Summary)
		}
	})
}
