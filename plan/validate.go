package plan

import (
	"fmt"
	"math"
)

// Validate checks what a report read from elsewhere claims against the
// rules Finish follows, so a merge never trusts a count it cannot
// account for: every check is present, named, and has a known status;
// results have known statuses; failures and skips are all listed
// (failed and skipped equal the listed ones), passed is at least the
// listed passes; the status follows from the counts; the summary counts
// the checks; durations are finite and not negative. The error names the
// check (checks[i] "name") and the field. Error results (what a check
// could not read) are always listed too.
func (r *Report) Validate() error {
	if r.Schema != Schema {
		return fmt.Errorf("plan: report schema %q, want %q", r.Schema, Schema)
	}
	if bad(r.Duration) {
		return fmt.Errorf("plan: report duration_seconds %v: want a finite number >= 0", r.Duration)
	}
	var sum Summary
	for i, c := range r.Checks {
		if c == nil {
			return fmt.Errorf("plan: report checks[%d] is null", i)
		}
		if err := c.validate(); err != nil {
			return fmt.Errorf("plan: report checks[%d] %q: %w", i, c.Name, err)
		}
		switch c.Status {
		case Pass:
			sum.Passed++
		case Fail:
			sum.Failed++
		case Skip:
			sum.Skipped++
		case Error:
			sum.Errors++
		}
	}
	sum.Checks = len(r.Checks)
	if r.Summary != sum {
		return fmt.Errorf("plan: report summary %+v does not count its checks (%+v)", r.Summary, sum)
	}
	return nil
}

func bad(f float64) bool { return f < 0 || math.IsNaN(f) || math.IsInf(f, 0) }

func (c *Check) validate() error {
	if c.Name == "" {
		return fmt.Errorf("no name")
	}
	if c.Category == "" {
		return fmt.Errorf("no category")
	}
	if c.Passed < 0 || c.Failed < 0 || c.Skipped < 0 || c.Errors < 0 {
		return fmt.Errorf("negative count (passed %d, failed %d, skipped %d, errors %d)", c.Passed, c.Failed, c.Skipped, c.Errors)
	}
	if bad(c.Duration) {
		return fmt.Errorf("duration_seconds %v: want a finite number >= 0", c.Duration)
	}
	var p, f, s, e int
	for j, res := range c.Results {
		switch res.Status {
		case Pass:
			p++
		case Fail:
			f++
		case Skip:
			s++
		case Error:
			e++
		default:
			return fmt.Errorf("results[%d]: status %q (want pass, fail, skip or error)", j, res.Status)
		}
		if o := res.Object; o != nil && (o.Port < 0 || o.Port > 255 || o.LID < 0 || o.LID > 0xffff) {
			return fmt.Errorf("results[%d]: object port %d lid %d out of range", j, o.Port, o.LID)
		}
	}
	if c.Failed != f {
		return fmt.Errorf("failed %d but %d failed results listed (failures are always listed)", c.Failed, f)
	}
	if c.Skipped != s {
		return fmt.Errorf("skipped %d but %d skipped results listed (skips are always listed)", c.Skipped, s)
	}
	if c.Errors != e {
		return fmt.Errorf("errors %d but %d error results listed (errors are always listed)", c.Errors, e)
	}
	if c.Passed < p {
		return fmt.Errorf("passed %d but %d passed results listed", c.Passed, p)
	}
	want := c.status()
	if c.Passed+c.Failed+c.Skipped+c.Errors == 0 && c.Status == Pass {
		want = Pass // a report of ibscript before 0.1.0: a check with no result passed
	}
	switch c.Status {
	case Pass, Fail, Skip, Error:
	default:
		return fmt.Errorf("status %q (want pass, fail, skip or error)", c.Status)
	}
	if c.Status != want {
		return fmt.Errorf("status %s, but its counts (passed %d, failed %d, skipped %d, errors %d) make it %s", c.Status, c.Passed, c.Failed, c.Skipped, c.Errors, want)
	}
	return nil
}
