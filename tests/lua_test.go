// Package tests runs the Lua suites in tests/lua against the embedded
// simulator. Each suite's first line names its topology
// ("--! topology: net.2sw2path4hca", a file in tests/topologies, or
// "default" for the bundled one). Every test_* function runs, sorted by
// name, in a fresh LState on a fresh fabric, as a Go subtest.
package tests

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/sim"
)

const perTestTimeout = 60 * time.Second

func TestLua(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("lua", "*_test.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no Lua suites found in tests/lua (want lua/*_test.lua)")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".lua"), func(t *testing.T) {
			runSuite(t, file)
		})
	}
}

// topologyOf reads the "--! topology: NAME" header of a suite.
func topologyOf(file string) (string, error) {
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

func openFabric(name string) (*sim.Fabric, error) {
	if name == "default" {
		return sim.Default(nil)
	}
	return sim.Load(filepath.Join("topologies", name), nil)
}

func runSuite(t *testing.T, file string) {
	topology, err := topologyOf(file)
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	// List the tests in a state of its own.
	var names []string
	withState(t, topology, func(L *lua.LState, _ *bindings.Env) {
		if err := L.DoString(string(src)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		L.G.Global.ForEach(func(k, v lua.LValue) {
			if s := k.String(); strings.HasPrefix(s, "test_") && v.Type() == lua.LTFunction {
				names = append(names, s)
			}
		})
	})
	if len(names) == 0 {
		t.Fatalf("%s defines no test_* functions", file)
	}
	sort.Strings(names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			withState(t, topology, func(L *lua.LState, env *bindings.Env) {
				fn, err := L.Load(strings.NewReader(string(src)), filepath.Base(file))
				if err != nil {
					t.Fatal(err)
				}
				L.Push(fn)
				if err := L.PCall(0, 0, nil); err != nil {
					t.Fatal(err)
				}
				runLuaTest(t, L, L.GetGlobal(name))
				if n := env.OpenResources(); n > 0 {
					t.Errorf("%s left %d resources open (close what you open)", name, n)
				}
			})
		})
	}
}

// withState builds a fabric, session and LState for one test.
func withState(t *testing.T, topology string, fn func(*lua.LState, *bindings.Env)) {
	t.Helper()
	f, err := openFabric(topology)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithTimeout(t.Context(), perTestTimeout)
	defer cancel()
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	sess, err := engine.New(tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var out strings.Builder
	L, env, err := bindings.NewState(ctx, &bindings.Options{Session: sess, Fabric: f, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	defer L.Close()
	defer env.Close()
	L.SetGlobal("expect_error", L.NewFunction(expectError))
	fn(L, env)
	if out.Len() > 0 {
		t.Logf("output:\n%s", out.String())
	}
}

// errSkip is raised by t:skip.
type skipSignal struct{ msg string }

// runLuaTest calls a Lua test function with a t object.
func runLuaTest(t *testing.T, L *lua.LState, fn lua.LValue) {
	t.Helper()
	L.Push(fn)
	L.Push(newT(L, t))
	err := L.PCall(1, 0, nil)
	if err == nil {
		return
	}
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		if ud, ok := ae.Object.(*lua.LUserData); ok {
			if s, ok := ud.Value.(skipSignal); ok {
				t.Skip(s.msg)
			}
		}
		t.Fatalf("%s\n%s", ae.Object.String(), ae.StackTrace)
	}
	t.Fatal(err)
}

// newT makes the Lua view of *testing.T: t:log, t:skip, t:fatal, t:run.
func newT(L *lua.LState, t *testing.T) *lua.LUserData {
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
			ok := t.Run(name, func(t *testing.T) { runLuaTest(t, L, sub) })
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

// expectError(pattern, fn, ...) calls fn(...) and raises unless it raised
// an error whose message matches the regular expression pattern. It
// returns the message.
func expectError(L *lua.LState) int {
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
	if err := L.PCall(len(args), 0, nil); err != nil {
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
