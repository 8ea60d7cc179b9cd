package bindings

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/plan"
	"github.com/ibscript/ibscript/sim/simtest"
)

func newPlanState(t *testing.T, args map[string]string) (*lua.LState, *Env) {
	t.Helper()
	f := simtest.Default(t, nil)
	sess := simtest.Session(t, f, nil)
	L, env, err := NewState(t.Context(), &Options{Session: sess, Stdout: &discard{}, PlanName: "t", PlanArgs: args})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close(); L.Close() })
	return L, env
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

func TestPlanChecks(t *testing.T) {
	L, env := newPlanState(t, map[string]string{"width": "1X", "n": "3", "strict": "yes"})
	err := DoString(L, `
		local a = plan.define{description = "d", categories = {"links", "sm"},
			args = {width = {default = "4X"}, n = {default = 1}, strict = {default = false}, other = {default = "x"}}}
		assert(a.width == "1X" and a.n == 3 and a.strict == true and a.other == "x")
		local f = fabric.discover()
		assert(plan.check("passes", "links", function(r) r:pass("ok", f.nodes[1].ports[1]) end) == "pass")
		assert(plan.check("fails", "links", function(r) r:pass() r:fail("bad", f.nodes[2]) end) == "fail")
		assert(plan.check("raises", "sm", function(r) r:pass() error("boom") end) == "fail")
		assert(plan.check("skips", "sm", function(r) r:skip("no SM") end) == "skip")
		assert(plan.check("empty", function(r) end) == "skip") -- nothing recorded: nothing checked
		plan.check("object", "sm", function(r) r:fail("x", {guid = "0x1", desc = "n", port = 2, lid = 3}) end)
		assert(plan.report().failed == 3)`)
	if err != nil {
		t.Fatal(err)
	}
	r := env.PlanReport(nil)
	if r.Summary != (plan.Summary{Checks: 6, Passed: 1, Failed: 3, Skipped: 2}) || r.ExitCode() != plan.ExitFailed {
		t.Errorf("summary %+v", r.Summary)
	}
	if r.Fabric.Nodes == 0 || r.Plan.Args["width"] != "1X" || r.Plan.Description != "d" || r.Plan.Name != "t" {
		t.Errorf("report header %+v %+v", r.Plan, r.Fabric)
	}
	if o := r.Checks[0].Results[0].Object; o == nil || o.Port != 1 || o.NodeGUID == "" || o.LID == 0 {
		t.Errorf("port object %+v", o)
	}
	if m := r.Checks[2].Results[0].Message; !regexp.MustCompile(`^error: .*boom`).MatchString(m) {
		t.Errorf("error result %q", m)
	}
	if o := r.Checks[5].Results[0].Object; *o != (plan.Object{NodeGUID: "0x0000000000000001", NodeDesc: "n", Port: 2, LID: 3}) {
		t.Errorf("table object %+v", o)
	}
}

func TestPlanNotUsed(t *testing.T) {
	L, env := newPlanState(t, nil)
	if err := DoString(L, `print(1)`); err != nil {
		t.Fatal(err)
	}
	if env.PlanReport(nil) != nil || env.HasPlan() {
		t.Errorf("a script without plan.* has a report")
	}
}

// TestPlanReportEarlyError: a script that fails before any plan.* call
// still has a report (no checks, the error, exit 2), never nil.
func TestPlanReportEarlyError(t *testing.T) {
	L, env := newPlanState(t, nil)
	err := L.DoString(`error("before the plan")`)
	if err == nil {
		t.Fatal("no error")
	}
	r := env.PlanReport(err)
	if r == nil {
		t.Fatal("nil report")
	}
	if r.ExitCode() != plan.ExitError || !strings.Contains(r.Error, "before the plan") || len(r.Checks) != 0 || env.HasPlan() {
		t.Errorf("exit %d error %q checks %d", r.ExitCode(), r.Error, len(r.Checks))
	}
}

func TestPlanErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		args  map[string]string
		chunk string
		want  string
	}{
		{"unknown arg", map[string]string{"widht": "4X"}, `plan.define{args = {width = {default = "4X"}, speed = {}}}`, `^plan.define: --arg widht=4X: unknown argument; did you mean width\? \(known: speed, width\)$`},
		{"no args", map[string]string{"x": "1"}, `plan.define{}`, `^plan.define: --arg x=1: the plan takes no arguments$`},
		{"number", map[string]string{"n": "many"}, `plan.define{args = {n = {default = 1}}}`, `^plan.define: --arg n=many: number expected`},
		{"choices", map[string]string{"w": "5X"}, `plan.define{args = {w = {default = "", choices = {"1X", "4X"}}}}`, `^plan.define: --arg w=5X: want one of 1X, 4X$`},
		{"range", map[string]string{"n": "65"}, `plan.define{args = {n = {default = 0, integer = true, min = 0, max = 64}}}`, `^plan.define: --arg n=65: want an integer, 0 to 64$`},
		{"not whole", map[string]string{"n": "1.5"}, `plan.define{args = {n = {default = 0, integer = true}}}`, `^plan.define: --arg n=1.5: want an integer$`},
		{"not a file", map[string]string{"f": "/"}, `plan.define{args = {f = {default = "", file = "read"}}}`, `^plan.define: --arg f=/: want a readable file, not a directory$`},
		{"through pcall", map[string]string{"n": "x"}, `print(pcall(plan.define, {args = {n = {default = 1}}})) error("pcall caught it")`, `^plan.define: --arg n=x: number expected`},
		{"bad spec", nil, `plan.define{args = {n = {default = 1, min = "0"}}}`, `args.n.min: number expected, got string`},
		{"bad file spec", nil, `plan.define{args = {n = {default = "", file = "rw"}}}`, `args.n.file: "read" or "write" expected, got "rw"`},
		{"unknown option", nil, `plan.define{descripton = "x"}`, `plan.define: unknown option "descripton"`},
		{"twice", nil, `plan.define{} plan.define{}`, `already defined`},
		{"category", nil, `plan.define{categories = {"links"}} plan.check("x", "link", function() end)`, `category "link" is not declared`},
		{"object key", nil, `plan.check("x", function(r) r:fail("m", {gid = 1}) end) assert(plan.report().failed == 1) error(plan.report().checks[1].status)`, `fail`},
	} {
		t.Run(c.name, func(t *testing.T) {
			L, _ := newPlanState(t, c.args)
			err := DoString(L, c.chunk)
			msg := fmt.Sprint(err)
			if re, ok := AsRunError(err); ok {
				msg = re.Error() // a refused --arg ends the run: a RunError
				if _, ok := AsArgError(err); !ok {
					t.Errorf("a RunError that is no ArgError: %v", re)
				}
			}
			if err == nil || !regexp.MustCompile(c.want).MatchString(msg) {
				t.Errorf("error %s, want %s", msg, c.want)
			}
		})
	}
}

func TestPlanRunErrorAndExit(t *testing.T) {
	L, env := newPlanState(t, nil)
	err := DoString(L, `plan.check("a", function(r) r:pass() end) error("outside")`)
	if err == nil {
		t.Fatal("no error")
	}
	if r := env.PlanReport(err); r.ExitCode() != plan.ExitError || r.Summary.Passed != 1 {
		t.Errorf("exit %d summary %+v", r.ExitCode(), r.Summary)
	}
	L2, _ := newPlanState(t, nil)
	err = DoString(L2, `plan.check("a", function(r) os.exit(3) end)`)
	if code, ok := AsExit(err); !ok || code != 3 {
		t.Errorf("os.exit inside a check: %v", err)
	}
}

// TestPlanUnreadable: what could not be read is an error result (status
// "error", exit 2), never a failure: a read raised inside a check, the
// err of a sweep, a discovery or a route given to r:fail, and
// r:unreadable. An answer that refuses (a MAD status) and any other error
// still fail. Before, every one of these was a failure (exit 1): a node
// that did not answer was reported as the fabric's fault.
func TestPlanUnreadable(t *testing.T) {
	f := simtest.Default(t, nil)
	sess := simtest.Session(t, f, &engine.Options{Timeout: 5 * time.Millisecond, Retries: engine.NoRetries})
	L, env, err := NewState(t.Context(), &Options{Session: sess, Stdout: &discard{}, PlanName: "t", Fabric: f, Sim: SimulatorOf(f)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { env.Close(); L.Close() })
	err = DoString(L, `
		plan.define{categories = {"x"}}
		local f = fabric.discover()
		local leaf
		for _, n in ipairs(f.nodes) do if n.desc == "leaf02" then leaf = n end end
		assert(leaf, "no leaf02")
		sim.faults{dead = {"leaf02"}}
		assert(plan.check("raised", "x", function(r) r:pass() smp.nodedesc("lid:" .. leaf.lid) end) == "error")
		assert(plan.check("pcall and fail", "x", function(r)
			local ok, e = pcall(smp.nodedesc, "lid:" .. leaf.lid)
			assert(not ok)
			r:fail(e)
		end) == "error")
		assert(plan.check("sweep err", "x", function(r)
			local res = fabric.sweep("portinfo", {leaf.ports[0]})
			assert(res[1].err and res[1].unreadable, "want an unreadable sweep result")
			r:fail(res[1].err, res[1].port)
		end) == "error")
		assert(plan.check("with context", "x", function(r)
			local res = fabric.sweep("portinfo", {leaf.ports[0]})
			r:fail("leaf02: " .. res[1].err)
		end) == "error")
		local g = fabric.discover()
		assert(#g.errors > 0 and g.errors[1].unreadable)
		assert(plan.check("discovery errors", "x", function(r)
			for _, e in ipairs(g.errors) do r:fail(e.path .. ": " .. e.err) end
		end) == "error")
		assert(plan.check("explicit", "x", function(r) r:unreadable("no answer", leaf) end) == "error")
		sim.faults{}
		-- a refusal (MAD status) is an answer: it fails
		assert(plan.check("refused", "x", function(r)
			local ok, e = pcall(smp.portinfo, "lid:" .. leaf.lid, 250)
			assert(not ok)
			r:fail(e)
		end) == "fail")
		assert(plan.check("other error", "x", function(r) error("boom") end) == "fail")
		assert(plan.check("fail beats error", "x", function(r) r:unreadable("x") r:fail("wrong") end) == "fail")
		local rep = plan.report()
		assert(rep.errors == 6 and rep.failed == 3, rep.errors .. " errors, " .. rep.failed .. " failed")`)
	if err != nil {
		t.Fatal(err)
	}
	r := env.PlanReport(nil)
	if r.Summary.Errors != 6 || r.Summary.Failed != 3 || r.ExitCode() != plan.ExitError {
		t.Errorf("summary %+v, exit %d: want 6 errors, 3 failed, exit 2", r.Summary, r.ExitCode())
	}
	for _, c := range r.Checks {
		if c.Status != plan.Error {
			continue
		}
		for _, res := range c.Results {
			if res.Status == plan.Fail {
				t.Errorf("check %q: a failed result %q", c.Name, res.Message)
			}
		}
	}
	if err := r.Validate(); err != nil {
		t.Error(err)
	}
}
