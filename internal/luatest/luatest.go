// Package luatest runs ibscript's Lua test suites (tests/lua/*_test.lua)
// under go test, on whatever fabric the caller built: the embedded
// simulator (tests/) or a live ibsim (tests/ibsimdiff). A suite's first
// line names its topology ("--! topology: NAME"); its test_* functions get
// a t object (t:log, t:skip, t:fatal, t:run) and the global
// expect_error(pattern, fn, ...).
package luatest

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
)

// Topology reads the "--! topology: NAME" header of a suite.
func Topology(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	if sc.Scan() {
		if name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "--! topology:"); ok {
			return strings.TrimSpace(name), nil
		}
	}
	return "", fmt.Errorf("%s:1: first line must be \"--! topology: NAME\"", file)
}

// ReadSuite reads a suite file and lists its test_* functions (Tests).
func ReadSuite(file string) (src string, names []string, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", nil, err
	}
	names, err = Tests(string(b))
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", file, err)
	}
	return string(b), names, nil
}

// ExpectPlan fails t unless a plan run ended without error with a
// report whose checks all passed, passed of them, and left no resource
// open; it logs every result of a report that fails.
func ExpectPlan(t *testing.T, env *bindings.Env, runErr error, passed int) {
	t.Helper()
	rep := env.PlanReport(runErr)
	if rep == nil || runErr != nil {
		t.Fatalf("run: %v", runErr)
	}
	if rep.Summary.Failed != 0 || rep.Summary.Passed != passed {
		for _, ch := range rep.Checks {
			for _, r := range ch.Results {
				t.Logf("%s: %s %s", ch.Name, r.Status, r.Message)
			}
		}
		t.Fatalf("summary %+v, want %d passed", rep.Summary, passed)
	}
	if n := env.OpenResources(); n != 0 {
		t.Errorf("%d resources left open", n)
	}
}

// Tests lists the test_* functions a suite defines, sorted by name. It
// runs the suite's top level in a bare state of its own.
func Tests(src string) ([]string, error) {
	L := lua.NewState()
	defer L.Close()
	fn, err := bindings.LoadString(L, src, "suite")
	if err != nil {
		return nil, err
	}
	L.Push(fn)
	if err := bindings.PCall(L, 0, 0); err != nil {
		return nil, err
	}
	var names []string
	L.G.Global.ForEach(func(k, v lua.LValue) {
		if s := k.String(); strings.HasPrefix(s, "test_") && v.Type() == lua.LTFunction {
			names = append(names, s)
		}
	})
	sort.Strings(names)
	return names, nil
}

// Install sets the globals suites use besides ibscript's modules.
func Install(L *lua.LState) {
	L.SetGlobal("expect_error", L.NewFunction(ExpectError))
}

// skipSignal is raised by t:skip.
type skipSignal struct{ msg string }

// Call calls the Lua test function fn with a t object. A t:skip skips t;
// a failure comes back as an error with the Lua message and traceback.
func Call(t *testing.T, L *lua.LState, fn lua.LValue) error {
	t.Helper()
	L.Push(fn)
	L.Push(NewT(L, t))
	err := bindings.PCall(L, 1, 0)
	if err == nil {
		return nil
	}
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		if ud, ok := ae.Object.(*lua.LUserData); ok {
			if s, ok := ud.Value.(skipSignal); ok {
				t.Skip(s.msg)
			}
		}
		if ae.StackTrace != "" {
			return fmt.Errorf("%s\n%s", ae.Object.String(), ae.StackTrace)
		}
		return errors.New(ae.Object.String())
	}
	return err
}

// Run loads the suite src (chunkname in its messages) into L and calls
// its test function name with a t object (Call); the error is the load's,
// the call's, or the resources of env the test left open.
func Run(t *testing.T, L *lua.LState, env *bindings.Env, src, chunkname, name string) error {
	t.Helper()
	fn, err := bindings.LoadString(L, src, chunkname)
	if err != nil {
		return err
	}
	L.Push(fn)
	if err := bindings.PCall(L, 0, 0); err != nil {
		return err
	}
	if err := Call(t, L, L.GetGlobal(name)); err != nil {
		return err
	}
	if n := env.OpenResources(); n > 0 {
		return fmt.Errorf("%s left %d resources open (close what you open)", name, n)
	}
	return nil
}

// NewT makes the Lua view of t: t:log, t:skip, t:fatal (it raises; no
// Goexit inside the VM) and t:run(name, fn) for subtests.
func NewT(L *lua.LState, t *testing.T) *lua.LUserData {
	ud := L.NewUserData()
	ud.Value = t
	mt := L.NewTable()
	methods := L.NewTable()
	L.SetFuncs(methods, map[string]lua.LGFunction{
		"log": func(L *lua.LState) int {
			var parts []string
			for i := 2; i <= L.GetTop(); i++ {
				parts = append(parts, L.ToStringMeta(L.Get(i)).String())
			}
			t.Log(strings.Join(parts, " "))
			return 0
		},
		"skip": func(L *lua.LState) int {
			u := L.NewUserData()
			u.Value = skipSignal{msg: L.OptString(2, "skipped")}
			L.Error(u, 0)
			return 0
		},
		"fatal": func(L *lua.LState) int {
			L.RaiseError("%s", L.OptString(2, "fatal"))
			return 0
		},
		"run": func(L *lua.LState) int {
			name := L.CheckString(2)
			sub := L.CheckFunction(3)
			ok := t.Run(name, func(t *testing.T) {
				if err := Call(t, L, sub); err != nil {
					t.Fatal(err)
				}
			})
			L.Push(lua.LBool(ok))
			return 1
		},
	})
	mt.RawSetString("__index", methods)
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LString("testing.t(" + t.Name() + ")"))
		return 1
	}))
	L.SetMetatable(ud, mt)
	return ud
}

// ExpectError is expect_error(pattern, fn, ...): it calls fn(...) and
// raises unless fn raised an error whose message matches the regular
// expression pattern. It returns the message.
func ExpectError(L *lua.LState) int {
	pattern := L.CheckString(1)
	fn := L.CheckFunction(2)
	re, err := regexp.Compile(pattern)
	if err != nil {
		L.ArgError(1, err.Error())
	}
	args := make([]lua.LValue, 0, L.GetTop()-2)
	for i := 3; i <= L.GetTop(); i++ {
		args = append(args, L.Get(i))
	}
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	if err := bindings.PCall(L, len(args), 0); err != nil {
		msg := err.Error()
		var ae *lua.ApiError
		if errors.As(err, &ae) {
			msg = ae.Object.String()
		}
		if !re.MatchString(msg) {
			L.RaiseError("expect_error: error %q does not match %q", msg, pattern)
		}
		L.Push(lua.LString(msg))
		return 1
	}
	L.RaiseError("expect_error: no error raised (want one matching %q)", pattern)
	return 0
}
