// Package plan holds the result model of a validation plan and the
// reporters that write it: readable text, JSON (schema "ibscript.plan.v1",
// docs/plan-report.md and docs/plan-report.schema.json), TAP version 13 and
// JUnit XML. It imports only the standard library: the Lua bindings fill a
// Report, the command line writes it.
package plan

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// Schema is the value of Report.Schema for the JSON layout this package
// writes. A change that breaks readers of the JSON changes it.
const Schema = "ibscript.plan.v1"

// Status is the outcome of a result or a check.
type Status string

const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
	// Error is what could not be read: a query that got no answer after
	// every try, or answers that could not be verified. It is never the
	// fabric's fault, and never a failure: the check could not complete.
	Error Status = "error"
)

// Exit codes of a plan run.
const (
	ExitOK     = 0 // every check passed (skips allowed)
	ExitFailed = 1 // a check failed, and every check could read what it needed
	ExitError  = 2 // the run itself failed, or a check could not read what it needed
)

// Object is what a result concerns: a node, a port of it, or nothing.
type Object struct {
	NodeGUID string `json:"node_guid,omitempty"`
	NodeDesc string `json:"node_desc,omitempty"`
	Port     int    `json:"port,omitempty"`
	LID      int    `json:"lid,omitempty"`
	// Plane is the port's plane in a discovery of every plane of a
	// planarized fabric (docs/planes.md), or a node's whose ports are all
	// on one plane (a plane's switch); 0 elsewhere.
	Plane int `json:"plane,omitempty"`
}

// String names the object as reports print it: "node01" port 1 (0x...),
// "node01" port 3 (plane 3) (0x...) on a planarized fabric.
func (o *Object) String() string {
	if o == nil {
		return ""
	}
	s := fmt.Sprintf("%q", o.NodeDesc)
	if o.NodeDesc == "" {
		s = o.NodeGUID
	}
	if o.Port != 0 {
		s += fmt.Sprintf(" port %d", o.Port)
	}
	if o.Plane != 0 {
		s += fmt.Sprintf(" (plane %d)", o.Plane)
	}
	if o.NodeDesc != "" && o.NodeGUID != "" {
		s += " (" + o.NodeGUID + ")"
	}
	return s
}

// Result is one pass, fail, skip or error recorded by a check.
type Result struct {
	Status  Status  `json:"status"`
	Message string  `json:"message,omitempty"`
	Object  *Object `json:"object,omitempty"`
}

// Check is a named check of a plan and what it recorded. A check that
// recorded nothing passed; one with a failed result failed; otherwise one
// with an error result (something it could not read) is an error; one
// whose results are all skips was skipped.
type Check struct {
	Name     string `json:"name"`
	Category string `json:"category"`
	Status   Status `json:"status"`
	Passed   int    `json:"passed"`
	Failed   int    `json:"failed"`
	Skipped  int    `json:"skipped"`
	// Errors counts the error results: what the check could not read.
	Errors   int      `json:"errors,omitempty"`
	Results  []Result `json:"results"`
	Duration float64  `json:"duration_seconds"`
	// Bare counts passes recorded without a message or object (AddPass):
	// they are in Passed but not in Results, which keeps reports of big
	// fabrics small.
	Bare int `json:"-"`
}

// AddPass records n passes without a message or object.
func (c *Check) AddPass(n int) { c.Bare += n }

// PlanInfo describes the plan that ran.
type PlanInfo struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Categories  []string          `json:"categories,omitempty"`
	Args        map[string]string `json:"args,omitempty"`
}

// FabricInfo says where the plan ran.
type FabricInfo struct {
	Backend string `json:"backend,omitempty"`
	Host    string `json:"host,omitempty"`
	CA      string `json:"ca,omitempty"`
	Port    int    `json:"port,omitempty"`
	Nodes   int    `json:"nodes,omitempty"`
	Links   int    `json:"links,omitempty"`
}

// Summary counts checks by status.
type Summary struct {
	Checks  int `json:"checks"`
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
	// Errors counts the checks whose status is error (they could not
	// read what they needed, and found nothing wrong in what they read).
	Errors int `json:"errors,omitempty"`
}

// Report is the result of one plan run.
type Report struct {
	Schema   string     `json:"schema"`
	Plan     PlanInfo   `json:"plan"`
	Fabric   FabricInfo `json:"fabric"`
	Started  time.Time  `json:"started"`
	Duration float64    `json:"duration_seconds"`
	Checks   []*Check   `json:"checks"`
	Summary  Summary    `json:"summary"`
	// Error is set when the run itself failed (the script raised an
	// error outside any check); the checks before it are kept.
	Error string `json:"error,omitempty"`

	// byName indexes Checks by name and category, so each check is found
	// in O(1) (a linear search made 40,000 checks quadratic); checks
	// appended to Checks behind it are indexed at the next lookup.
	// steps counts the entries looked at, for the test that keeps it
	// linear.
	byName  map[checkKey]*Check
	indexed int // Checks[:indexed] are in byName
	steps   int
}

type checkKey struct{ name, category string }

// New returns an empty report of the plan name, started now.
func New(name string) *Report {
	return &Report{Schema: Schema, Plan: PlanInfo{Name: name}, Started: time.Now().UTC(), Checks: []*Check{}}
}

// Add records a result in the check of that name, creating it (in the
// given category) the first time.
func (r *Report) Add(check, category string, res Result) *Check {
	c := r.check(check, category)
	c.Results = append(c.Results, res)
	return c
}

// Begin returns the check of that name, creating it if needed, so a check
// that records nothing still appears (and passes).
func (r *Report) Begin(check, category string) *Check { return r.check(check, category) }

func (r *Report) check(name, category string) *Check {
	if r.indexed > len(r.Checks) {
		r.byName, r.indexed = nil, 0 // Checks was cut behind the index
	}
	if r.byName == nil {
		r.byName = make(map[checkKey]*Check, len(r.Checks))
	}
	for ; r.indexed < len(r.Checks); r.indexed++ { // checks appended behind the index
		r.steps++
		c := r.Checks[r.indexed]
		if _, dup := r.byName[checkKey{c.Name, c.Category}]; !dup {
			r.byName[checkKey{c.Name, c.Category}] = c // the first of a name, as a search finds it
		}
	}
	find := func(category string) *Check {
		r.steps++
		return r.byName[checkKey{name, category}]
	}
	if c := find(category); c != nil {
		return c
	}
	if category == "" {
		category = "general"
	}
	if c := find(category); c != nil {
		return c
	}
	c := &Check{Name: name, Category: category, Results: []Result{}}
	r.Checks = append(r.Checks, c)
	return c
}

// CheckStatus is the one rule for a check's status from its counts: fail
// when a result failed, else skip when none passed (only skips, or no
// result at all: a check that recorded nothing checked nothing, and the
// text report says NoResult), else pass.
func CheckStatus(passed, failed int) Status {
	switch {
	case failed > 0:
		return Fail
	case passed == 0:
		return Skip
	}
	return Pass
}

// Finish computes every check's status and counts and the summary.
func (r *Report) Finish() {
	r.Summary = Summary{}
	for _, c := range r.Checks {
		c.Passed, c.Failed, c.Skipped, c.Errors = c.Bare, 0, 0, 0
		if c.Results == nil {
			c.Results = []Result{}
		}
		for _, res := range c.Results {
			switch res.Status {
			case Fail:
				c.Failed++
			case Skip:
				c.Skipped++
			case Error:
				c.Errors++
			default:
				c.Passed++
			}
		}
		c.Status = c.status()
		switch c.Status {
		case Fail:
			r.Summary.Failed++
		case Error:
			r.Summary.Errors++
		case Skip:
			r.Summary.Skipped++
		default:
			r.Summary.Passed++
		}
	}
	r.Summary.Checks = len(r.Checks)
}

// status is the status the check's counts make: CheckStatus, but error
// when no result failed and something could not be read (what was read is
// wrong beats what could not be read; what could not be read beats a
// skip or a pass).
func (c *Check) status() Status {
	if c.Failed == 0 && c.Errors > 0 {
		return Error
	}
	return CheckStatus(c.Passed, c.Failed)
}

// StatusOf returns the status a check's results make (its Bare passes
// counted): as Finish sets it, without changing the check.
func StatusOf(c *Check) Status {
	cc := Check{Passed: c.Bare}
	for _, res := range c.Results {
		switch res.Status {
		case Fail:
			cc.Failed++
		case Skip:
			cc.Skipped++
		case Error:
			cc.Errors++
		default:
			cc.Passed++
		}
	}
	return cc.status()
}

// ExitCode is the exit status the report calls for: 2 when the run
// failed or a check could not read what it needed (an error result, even
// in a check that also failed: the report cannot vouch for the whole
// fabric), 1 when a check failed, else 0.
func (r *Report) ExitCode() int {
	switch {
	case r.Error != "":
		return ExitError
	case r.unreadable():
		return ExitError
	case r.Summary.Failed > 0:
		return ExitFailed
	}
	return ExitOK
}

// Categories returns the categories of the checks in the order the plan
// declared them, then in order of first use.
func (r *Report) Categories() []string {
	var out []string
	seen := map[string]bool{}
	add := func(c string) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	used := map[string]bool{}
	for _, c := range r.Checks {
		used[c.Category] = true
	}
	for _, c := range r.Plan.Categories {
		if used[c] {
			add(c)
		}
	}
	for _, c := range r.Checks {
		add(c.Category)
	}
	return out
}

// Formats returns the names Write accepts.
func Formats() []string { return slices.Clone(formats) }

var formats = []string{"text", "json", "tap", "junit"}

// Write writes the report in the named format; color applies to text only
// (the caller knows whether w is a terminal).
func Write(w io.Writer, format string, r *Report, color bool) error {
	switch format {
	case "text", "":
		return WriteText(w, r, color)
	case "json":
		return WriteJSON(w, r)
	case "tap":
		return WriteTAP(w, r)
	case "junit":
		return WriteJUnit(w, r)
	}
	return fmt.Errorf("plan: unknown report format %q (want text, json, tap or junit)", format)
}

// unreadable reports whether a check recorded an error result.
func (r *Report) unreadable() bool {
	if r.Summary.Errors > 0 {
		return true
	}
	for _, c := range r.Checks {
		if c.Errors > 0 {
			return true
		}
	}
	return false
}
