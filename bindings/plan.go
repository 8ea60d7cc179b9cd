package bindings

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/plan"
)

func planModule() Module {
	return Module{
		Name:    "plan",
		Summary: "validation plans: arguments, named checks recording pass / fail / skip, progress",
		Funcs: []Func{
			{"define", planDefine, "define({description=, categories={...}, args={key={default=, help=, choices=, min=, max=, integer=, file=}}}) -> table: declares the plan once and returns its arguments, defaults overridden by the command line's --arg key=value (converted to the default's type, then checked: one of choices, within min..max, whole when integer, file=\"read\" an existing regular file, file=\"write\" one whose directory exists); an unknown or refused --arg ends the run (status 2) before any check; ibscript run PLAN --help lists the arguments"},
			{"check", planCheck, "check(name, [category,] fn) -> string: runs fn(r) and returns its status (\"pass\", \"fail\", \"skip\", \"error\"); r:pass(msg [, obj]), r:fail(msg [, obj]), r:skip(msg), r:unreadable(msg [, obj]) record results; what could not be read (a query that timed out after every try, or whose answers could not be verified) is an error result, never a failure: raised inside fn, or given to r:fail as the err of a sweep, a discovery or a route; any other error inside fn is a failed result; neither stops the plan; a check that records nothing is skipped (\"no result recorded\")"},
			{"progress", planProgress, "progress(done, total [, what]) -> nil: reports progress of a long sweep (shown on stderr when it is a terminal, rate-limited by the host)"},
			{"thresholds", planThresholds, "thresholds([path]) -> table: error-counter thresholds by counter key (symbol_error_counter=10, ...) from an ibqueryerrors threshold file (Name=value lines, # comments); every error counter is present, 0 unless the file says otherwise; no path means all 0"},
			{"sleep", planSleep, "sleep(seconds) -> nil: waits, e.g. between two counter sweeps; interrupted when the run is"},
			{"report", planReportFn, "report() -> table: the results so far: {checks={{name, category, status, passed, failed, skipped, errors}}, passed, failed, skipped, errors}"},
		},
	}
}

// planState is the plan of one Env: created by the first plan.* call.
type planState struct {
	report    *plan.Report
	defined   bool
	start     time.Time
	cats      map[string]bool
	recMeta   *lua.LTable
	inCheck   bool
	nodes     int
	links     int
	hasFabric bool
}

func (e *Env) planState() *planState {
	if e.plan == nil {
		name := e.planName
		if name == "" {
			name = "plan"
		}
		e.plan = &planState{report: plan.New(name), start: time.Now()}
	}
	return e.plan
}

// PlanReport returns the report of the plan the script ran, finished
// (statuses, summary, duration). runErr, when not nil, is the error that
// ended the script outside any check; it is recorded as the run's error,
// and a script that failed before any plan.* call gets a report with no
// checks that carries it. PlanReport returns nil only when the script
// neither called plan.* nor failed (HasPlan tells the two reports apart).
func (e *Env) PlanReport(runErr error) *plan.Report {
	if e.plan == nil {
		if runErr == nil {
			return nil
		}
		r := plan.New(e.planName)
		if e.planName == "" {
			r.Plan.Name = "plan"
		}
		r.Error = runErr.Error()
		r.Finish()
		return r
	}
	r := e.plan.report
	if runErr != nil {
		r.Error = runErr.Error()
	}
	if e.plan.hasFabric {
		r.Fabric.Nodes, r.Fabric.Links = e.plan.nodes, e.plan.links
	}
	r.Duration = time.Since(e.plan.start).Seconds()
	r.Finish()
	return r
}

// HasPlan reports whether the script called plan.* (it is a plan, whose
// report the host writes whatever happens).
func (e *Env) HasPlan() bool { return e.plan != nil }

// noteFabric records the size of a discovered fabric for the report.
func (e *Env) noteFabric(nodes, links int) {
	if e.plan != nil {
		e.plan.nodes, e.plan.links, e.plan.hasFabric = nodes, links, true
	}
}

func planDefine(e *Env, L *lua.LState) int {
	t := L.CheckTable(1)
	checkOptions(L, "plan.define", t, map[string]bool{"description": true, "categories": true, "args": true, "name": true})
	ps := e.planState()
	if ps.defined {
		raise(L, "plan.define", "the plan is already defined (call plan.define once, in the plan's main script)")
	}
	ps.defined = true
	r := ps.report
	if v, ok := t.RawGetString("name").(lua.LString); ok {
		r.Plan.Name = string(v)
	}
	switch v := t.RawGetString("description").(type) {
	case lua.LString:
		r.Plan.Description = string(v)
	case *lua.LNilType:
	default:
		raise(L, "plan.define", "description: string expected, got %s", v.Type())
	}
	planCategories(L, ps, t.RawGetString("categories"))
	out := L.NewTable()
	decl := planArgDecls(L, t.RawGetString("args"))
	known := make([]string, 0, len(decl))
	for k := range decl {
		known = append(known, k)
	}
	sort.Strings(known)
	if e.planHelp != nil {
		// ibscript run PLAN --help: the plan says what it takes, and
		// ends there.
		spec := PlanSpec{Name: r.Plan.Name, Description: r.Plan.Description}
		for _, k := range known {
			spec.Args = append(spec.Args, *decl[k])
		}
		e.planHelp(spec)
		ud := L.NewUserData()
		ud.Value = &ExitError{Code: 0}
		L.Error(ud, 0)
	}
	e.refuseUnknownPlanArgs(L, decl, known)
	r.Plan.Args = map[string]string{}
	for _, k := range known {
		a := decl[k]
		val := a.Default
		if s, ok := e.planArgs[k]; ok {
			var err error
			if val, err = a.check(s); err != nil {
				raiseArgError(L, &ArgError{Key: k, Value: s, Msg: err.Error()})
			}
		}
		if val != lua.LNil {
			r.Plan.Args[k] = L.ToStringMeta(val).String()
		}
		out.RawSetString(k, val)
	}
	L.Push(out)
	return 1
}

// planCategories reads plan.define's categories (a list of names, or nil)
// into the report and ps.cats.
func planCategories(L *lua.LState, ps *planState, v lua.LValue) {
	r := ps.report
	switch v := v.(type) {
	case *lua.LTable:
		ps.cats = map[string]bool{}
		for i := 1; i <= v.Len(); i++ {
			s, ok := v.RawGetInt(i).(lua.LString)
			if !ok {
				raise(L, "plan.define", "categories[%d]: string expected, got %s", i, v.RawGetInt(i).Type())
			}
			r.Plan.Categories = append(r.Plan.Categories, string(s))
			ps.cats[string(s)] = true
		}
	case *lua.LNilType:
	default:
		raise(L, "plan.define", "categories: table expected, got %s", v.Type())
	}
}

// planArgDecls reads plan.define's args ({name = {default=, help=}}, or
// nil) by name.
func planArgDecls(L *lua.LState, v lua.LValue) map[string]*PlanArg {
	decl := map[string]*PlanArg{}
	switch v := v.(type) {
	case *lua.LTable:
		v.ForEach(func(k, spec lua.LValue) {
			name, ok := k.(lua.LString)
			if !ok {
				raise(L, "plan.define", "args: keys must be names, got %s", k.Type())
			}
			st, ok := spec.(*lua.LTable)
			if !ok {
				raise(L, "plan.define", "args.%s: table {default=, help=} expected, got %s", name, spec.Type())
			}
			a := readPlanArg(L, string(name), st)
			decl[string(name)] = &a
		})
	case *lua.LNilType:
	default:
		raise(L, "plan.define", "args: table expected, got %s", v.Type())
	}
	return decl
}

// refuseUnknownPlanArgs raises an argument error for the first argument
// given (in name order) that the plan does not declare; known are the
// declared names, sorted.
func (e *Env) refuseUnknownPlanArgs(L *lua.LState, decl map[string]*PlanArg, known []string) {
	given := make([]string, 0, len(e.planArgs))
	for k := range e.planArgs {
		given = append(given, k)
	}
	sort.Strings(given)
	for _, k := range given {
		if _, ok := decl[k]; !ok {
			msg := "the plan takes no arguments"
			if len(known) > 0 {
				msg = "unknown argument (known: " + strings.Join(known, ", ") + ")"
				if sug := Suggest(k, known); len(sug) > 0 {
					msg = fmt.Sprintf("unknown argument; did you mean %s? (known: %s)", strings.Join(sug, " or "), strings.Join(known, ", "))
				}
			}
			raiseArgError(L, &ArgError{Key: k, Value: e.planArgs[k], Msg: msg})
		}
	}
}

// convertArg turns a command-line value into the type of the default.
func convertArg(def lua.LValue, s string) (lua.LValue, error) {
	switch def.(type) {
	case lua.LNumber:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("number expected (the default is a number)")
		}
		return lua.LNumber(f), nil
	case lua.LBool:
		switch strings.ToLower(s) {
		case "1", "true", "yes", "on":
			return lua.LTrue, nil
		case "0", "false", "no", "off":
			return lua.LFalse, nil
		}
		return nil, fmt.Errorf("true or false expected")
	}
	return lua.LString(s), nil
}

// recorder is the r a check function gets.
type recorder struct {
	check *plan.Check
}

func (e *Env) recorderMeta() *lua.LTable {
	ps := e.planState()
	if ps.recMeta != nil {
		return ps.recMeta
	}
	L := e.L
	mt := L.NewTable()
	mt.RawSetString("__name", lua.LString("plan.recorder"))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		r := checkRecorder(L, 1)
		L.Push(lua.LString(fmt.Sprintf("plan.recorder %q", r.check.Name)))
		return 1
	}))
	methods := L.NewTable()
	add := func(name string, st plan.Status, withObj bool) {
		methods.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			r := checkRecorder(L, 1)
			if st == plan.Pass && L.GetTop() < 2 {
				r.check.AddPass(1) // a bare pass: counted, not listed
				return 0
			}
			res := plan.Result{Status: st, Message: L.OptString(2, "")}
			if st == plan.Fail && res.Message != "" && isUnread(L, res.Message) {
				// the err of a read that could not be done: not the
				// fabric's fault
				res.Status = plan.Error
			}
			if withObj && L.GetTop() >= 3 && L.Get(3) != lua.LNil {
				if s, ok := L.Get(3).(lua.LString); ok {
					res.Object = &plan.Object{NodeDesc: string(s)} // an object named in words
				} else {
					res.Object = objectOf(L, "r:"+name, L.CheckTable(3))
				}
			}
			r.check.Results = append(r.check.Results, res)
			return 0
		}))
	}
	add("pass", plan.Pass, true)
	add("fail", plan.Fail, true)
	add("skip", plan.Skip, true)
	add("unreadable", plan.Error, true)
	mt.RawSetString("__index", methods)
	ps.recMeta = mt
	return mt
}

func checkRecorder(L *lua.LState, n int) *recorder {
	ud, ok := L.Get(n).(*lua.LUserData)
	if ok {
		if r, ok := ud.Value.(*recorder); ok {
			return r
		}
	}
	L.ArgError(n, "plan.recorder expected, got "+L.Get(n).Type().String())
	return nil
}

// objectOf reads what a result concerns: a node or port table of
// fabric.discover, or {guid=, desc=, port=, lid=}.
func objectOf(L *lua.LState, fn string, t *lua.LTable) *plan.Object {
	str := func(t *lua.LTable, k string) string {
		if s, ok := t.RawGetString(k).(lua.LString); ok {
			return string(s)
		}
		return ""
	}
	num := func(t *lua.LTable, k string) int {
		if n, ok := t.RawGetString(k).(lua.LNumber); ok {
			return int(n)
		}
		return 0
	}
	name := ""
	if mt, ok := L.GetMetatable(t).(*lua.LTable); ok {
		name = lua.LVAsString(mt.RawGetString("__name"))
	}
	switch name {
	case "fabric.port":
		o := &plan.Object{Port: num(t, "num"), LID: num(t, "lid"), Plane: num(t, "plane")}
		if n, ok := t.RawGetString("node").(*lua.LTable); ok {
			o.NodeGUID, o.NodeDesc = str(n, "guid"), str(n, "desc")
			if o.LID == 0 {
				o.LID = num(n, "lid")
			}
		}
		return o
	case "fabric.node":
		return &plan.Object{NodeGUID: str(t, "guid"), NodeDesc: str(t, "desc"), LID: num(t, "lid"), Plane: nodeTablePlane(t)}
	}
	checkOptions(L, fn, t, map[string]bool{"guid": true, "desc": true, "port": true, "lid": true})
	o := &plan.Object{NodeGUID: str(t, "guid"), NodeDesc: str(t, "desc"), Port: num(t, "port"), LID: num(t, "lid")}
	if o.NodeGUID != "" {
		g, err := strconv.ParseUint(strings.TrimPrefix(o.NodeGUID, "0x"), 16, 64)
		if err != nil {
			raise(L, fn, "object guid %q: hex GUID expected", o.NodeGUID)
		}
		o.NodeGUID = string(Hex64(g))
	}
	return o
}

// nodeTablePlane is the plane of a fabric.node table's ports when they all
// have the same one (a plane's switch, an ordinary CA on a plane: what a
// discovery of every plane of a planarized fabric gives them), else 0 (a
// planarized CA, or any node of an ordinary fabric).
func nodeTablePlane(t *lua.LTable) int {
	ports, ok := t.RawGetString("ports").(*lua.LTable)
	if !ok {
		return 0
	}
	plane := 0
	mixed := false
	ports.ForEach(func(_, v lua.LValue) {
		pt, ok := v.(*lua.LTable)
		if !ok {
			return
		}
		n, ok := pt.RawGetString("plane").(lua.LNumber)
		if !ok || n == 0 {
			return
		}
		if plane != 0 && int(n) != plane {
			mixed = true
		}
		plane = int(n)
	})
	if mixed {
		return 0
	}
	return plane
}

func planCheck(e *Env, L *lua.LState) int {
	name := L.CheckString(1)
	category := "general"
	fnIdx := 2
	if L.Get(2).Type() == lua.LTString {
		category = L.CheckString(2)
		fnIdx = 3
	}
	fn := L.CheckFunction(fnIdx)
	ps := e.planState()
	if ps.cats != nil && category != "general" && !ps.cats[category] {
		cats := slices.Clone(ps.report.Plan.Categories)
		raise(L, "plan.check", "check %q: category %q is not declared (plan.define categories: %s)", name, category, strings.Join(cats, ", "))
	}
	if ps.inCheck {
		raise(L, "plan.check", "check %q: checks do not nest", name)
	}
	c := ps.report.Begin(name, category)
	ud := L.NewUserData()
	ud.Value = &recorder{check: c}
	L.SetMetatable(ud, e.recorderMeta())
	start := time.Now()
	ps.inCheck = true
	L.Push(fn)
	L.Push(ud)
	err := PCall(L, 1, 0)
	ps.inCheck = false
	c.Duration += time.Since(start).Seconds()
	if err != nil {
		_, isExit := AsExit(err)
		if _, endsRun := AsRunError(err); isExit || endsRun {
			// os.exit ends the script, and the MAD budget the run,
			// check or not.
			L.Error(err.(*lua.ApiError).Object, 0)
		}
		if ctxErr := L.Context().Err(); ctxErr != nil {
			raise(L, "plan.check", "check %q: %v", name, ctxErr)
		}
		msg := err.Error()
		if ae, ok := err.(*lua.ApiError); ok {
			msg = ae.Object.String()
		}
		st := plan.Fail
		if isUnread(L, msg) {
			st = plan.Error // a read raised it: the check could not complete
		}
		c.Results = append(c.Results, plan.Result{Status: st, Message: "error: " + msg})
	}
	L.Push(lua.LString(checkStatus(c)))
	return 1
}

func checkStatus(c *plan.Check) plan.Status { return plan.StatusOf(c) }

func planProgress(e *Env, L *lua.LState) int {
	done := L.CheckInt(1)
	total := L.CheckInt(2)
	what := L.OptString(3, "")
	if e.progress != nil {
		e.progress(done, total, what)
	}
	return 0
}

func planReportFn(e *Env, L *lua.LState) int {
	ps := e.planState()
	t := L.NewTable()
	checks := L.NewTable()
	var p, f, s, x int
	for _, c := range ps.report.Checks {
		st := checkStatus(c)
		ct := L.CreateTable(0, 7)
		ct.RawSetString("name", lua.LString(c.Name))
		ct.RawSetString("category", lua.LString(c.Category))
		ct.RawSetString("status", lua.LString(st))
		np, nf, ns, nx := c.Bare, 0, 0, 0
		for _, r := range c.Results {
			switch r.Status {
			case plan.Fail:
				nf++
			case plan.Skip:
				ns++
			case plan.Error:
				nx++
			default:
				np++
			}
		}
		ct.RawSetString("passed", lua.LNumber(np))
		ct.RawSetString("failed", lua.LNumber(nf))
		ct.RawSetString("skipped", lua.LNumber(ns))
		ct.RawSetString("errors", lua.LNumber(nx))
		checks.Append(ct)
		switch st {
		case plan.Fail:
			f++
		case plan.Skip:
			s++
		case plan.Error:
			x++
		default:
			p++
		}
	}
	t.RawSetString("checks", checks)
	t.RawSetString("passed", lua.LNumber(p))
	t.RawSetString("failed", lua.LNumber(f))
	t.RawSetString("skipped", lua.LNumber(s))
	t.RawSetString("errors", lua.LNumber(x))
	L.Push(t)
	return 1
}

func planThresholds(e *Env, L *lua.LState) int {
	path := L.OptString(1, "")
	th := map[string]uint64{}
	if path != "" {
		f, err := filesOf(L).Open(path)
		if err != nil {
			raise(L, "plan.thresholds", "%v", err)
		}
		defer f.Close()
		if th, err = diag.ParseThresholds(f, path); err != nil {
			raise(L, "plan.thresholds", "%v", err)
		}
	}
	names := diag.ThresholdNames()
	t := L.CreateTable(0, len(names))
	for _, key := range names {
		t.RawSetString(key, lua.LNumber(th[key]))
	}
	L.Push(t)
	return 1
}

// maxSleep bounds plan.sleep: a day between two sweeps is already more
// than a plan needs.
const maxSleep = 24 * time.Hour

func planSleep(e *Env, L *lua.LState) int {
	sec := float64(L.CheckNumber(1))
	if sec < 0 || sec != sec {
		L.ArgError(1, "seconds must not be negative")
	}
	if sec > maxSleep.Seconds() {
		// time.Duration would overflow into a negative wait, that is
		// none at all.
		L.ArgError(1, fmt.Sprintf("seconds must be at most %.0f (%v), got %g", maxSleep.Seconds(), maxSleep, sec))
	}
	d := time.Duration(sec * float64(time.Second))
	tm := time.NewTimer(d)
	defer tm.Stop()
	var tick <-chan time.Time
	total := int(math.Ceil(sec))
	if e.progress != nil && total > 1 {
		// A long wait (the interval between two counter sweeps) shows
		// the seconds gone by on a terminal, like a sweep.
		t := time.NewTicker(time.Second)
		defer t.Stop()
		tick = t.C
		e.progress(0, total, "plan.sleep: seconds")
	}
	start := time.Now()
	for {
		select {
		case <-tm.C:
			if tick != nil {
				e.progress(total, total, "plan.sleep: seconds")
			}
			return 0
		case <-tick:
			e.progress(min(total, int(time.Since(start).Seconds())), total, "plan.sleep: seconds")
		case <-L.Context().Done():
			raise(L, "plan.sleep", "%v", L.Context().Err())
		}
	}
}
