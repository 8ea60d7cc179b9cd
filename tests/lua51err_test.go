package tests

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/internal/lua51ref"
)

// lua51ErrCases reads the cases of tests/lua51err (runtime.txt, syntax.txt):
// programs and the message Lua 5.1 gives for each.
func lua51ErrCases(t *testing.T) map[string][]lua51ref.Case {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("lua51err", "*.txt"))
	if err != nil || len(files) == 0 {
		t.Fatalf("tests/lua51err: no cases files (%v)", err)
	}
	out := map[string][]lua51ref.Case{}
	for _, f := range files {
		cases, err := lua51ref.ReadCases(f)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(f), ".txt")] = cases
	}
	return out
}

// TestLua51ErrorMessages runs every case of tests/lua51err in the state a
// plan gets, as a script's main chunk and inside plan.check, and compares
// the error message with Lua 5.1's (docs/lua.md): the variable named, the
// chunk and line, 5.1's wording.
func TestLua51ErrorMessages(t *testing.T) {
	for file, cases := range lua51ErrCases(t) {
		t.Run(file, func(t *testing.T) {
			L, env := lua51ErrState(t)
			for _, c := range cases {
				fn, err := bindings.LoadString(L, c.Prog, lua51ref.FileName)
				if err == nil {
					L.Push(fn)
					err = bindings.PCall(L, 0, 0)
				}
				if got := luaErrorText(err); got != c.Want {
					t.Errorf("%s: script: %q\nwant %q (Lua 5.1)", c.Name, got, c.Want)
				}
				if fn == nil {
					continue // a syntax error: no chunk to run in a check
				}
				L.Push(L.NewFunction(func(L *lua.LState) int {
					L.Push(L.GetField(L.GetGlobal("plan"), "check"))
					L.Push(lua.LString(c.Name))
					L.Push(fn)
					L.Call(2, 1)
					return 1
				}))
				if err := bindings.PCall(L, 0, 1); err != nil {
					t.Fatalf("%s: plan.check: %v", c.Name, err)
				}
				L.Pop(1)
				checks := env.PlanReport(nil).Checks
				last := checks[len(checks)-1]
				if len(last.Results) == 0 || last.Results[0].Message != "error: "+c.Want {
					t.Errorf("%s: plan.check recorded %+v\nwant %q", c.Name, last.Results, "error: "+c.Want)
				}
			}
		})
	}
}

// TestLua51ErrorMessagesReference checks the cases' messages against
// lua5.1 itself, run on each program as a file and as -e's chunk.
func TestLua51ErrorMessagesReference(t *testing.T) {
	bin := lua51ref.Binary(t)
	dir := t.TempDir()
	for file, cases := range lua51ErrCases(t) {
		t.Run(file, func(t *testing.T) {
			for _, c := range cases {
				got, err := lua51ref.Message(t.Context(), bin, dir, c.Prog, true)
				if err != nil || got != c.Want {
					t.Errorf("%s: lua5.1 file.lua: %q (%v)\nthe case says %q", c.Name, got, err, c.Want)
				}
				got, err = lua51ref.Message(t.Context(), bin, dir, c.Prog, false)
				if want := lua51ref.Rename(c.Want, "(command line)"); err != nil || got != want {
					t.Errorf("%s: lua5.1 -e: %q (%v)\nwant %q", c.Name, got, err, want)
				}
			}
		})
	}
}

// luaErrorText is the message of a Lua error as a script sees it.
func luaErrorText(err error) string {
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		return ae.Object.String()
	}
	if err == nil {
		return "<no error>"
	}
	return err.Error()
}

// lua51ErrState is the state a plan gets, and its Env.
func lua51ErrState(t *testing.T) (*lua.LState, *bindings.Env) {
	t.Helper()
	var out strings.Builder
	L, env, done := defaultPlanState(t, bindings.Options{Stdout: &out, PlanName: "lua51err"})
	t.Cleanup(done)
	return L, env
}
