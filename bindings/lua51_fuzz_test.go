package bindings

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// fuzzState is the string library a plan gets (with ibscript's
// replacements and protected calls), without the modules that
// NewState adds: a fuzz input costs a few microseconds, not a state.
func fuzzState(tb testing.TB) *lua.LState {
	tb.Helper()
	L := lua.NewState(stateOptions)
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	installPcall(L, poolOf(L))
	installErrorFn(L, poolOf(L))
	installLibFixes(L)
	tb.Cleanup(L.Close)
	return L
}

// goLeak reports whether err shows a Go panic that reached Lua: gopher-lua
// turns a recovered Go panic into an ApiErrorPanic, and its text names a
// runtime error, a goroutine or a panic (unless an input said so).
func goLeak(err error, inputs ...string) bool {
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Type == lua.ApiErrorPanic {
		return true
	}
	msg := err.Error()
	for _, s := range []string{"runtime error", "goroutine", "panic"} {
		if strings.Contains(msg, s) && !slices.ContainsFunc(inputs, func(in string) bool { return strings.Contains(in, s) }) {
			return true
		}
	}
	return false
}

// FuzzStringPatterns calls string.find, match, gmatch, gsub and format
// with random patterns, formats, subjects and arguments: whatever they
// get, they return or raise a Lua error; no Go panic (an index out of
// range, a nil map) reaches the script as an error message
// (docs/lua.md). Seeds in testdata/fuzz/FuzzStringPatterns.
func FuzzStringPatterns(f *testing.F) {
	for _, seed := range []struct {
		pat, subj, repl string
		init            float64
	}{
		{"()%1", "abc", "x", 1},
		{"(a)%1", "aab", "%1", 1},
		{"%f[%w]%w+", "hello world", "<%0>", 1},
		{"[%a-z]", "-", "%%", 0},
		{"(()", "x", "%2", -10},
		{"%b()", "(a(b)c)", "", 100},
		{"[^]]", "]a", "%9", 2},
		{"%5.2f|%q|%s|%d", "a\x00b\n", "%x", 3.5},
		{"%-+ #05.3g%c%o%X%e%E%i%u", "z", "%G", 1e300},
		{"%", "", "%", 0},
	} {
		f.Add(seed.pat, seed.subj, seed.repl, seed.init)
	}
	L := fuzzState(f)
	f.Fuzz(func(t *testing.T, pat, subj, repl string, init float64) {
		if len(pat) > 64 || len(subj) > 256 || len(repl) > 64 {
			return // the cost is in backtracking; longer inputs add none
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		L.SetContext(ctx)
		defer L.RemoveContext()
		str := L.GetGlobal("string").(*lua.LTable)
		calls := []struct {
			fn   string
			args []lua.LValue
		}{
			{"find", []lua.LValue{lua.LString(subj), lua.LString(pat), lua.LNumber(init)}},
			{"find", []lua.LValue{lua.LString(subj), lua.LString(pat), lua.LNumber(init), lua.LTrue}},
			{"match", []lua.LValue{lua.LString(subj), lua.LString(pat), lua.LNumber(init)}},
			{"gsub", []lua.LValue{lua.LString(subj), lua.LString(pat), lua.LString(repl), lua.LNumber(init)}},
			{"gsub", []lua.LValue{lua.LString(subj), lua.LString(pat), L.NewTable()}},
			{"format", []lua.LValue{lua.LString(pat), lua.LNumber(init), lua.LString(subj), lua.LNumber(init)}},
			{"format", []lua.LValue{lua.LString(repl), lua.LString(subj), lua.LNumber(init), lua.LNil, lua.LTrue}},
			{"rep", []lua.LValue{lua.LString(subj[:min(len(subj), 8)]), lua.LNumber(min(init, 64))}},
			{"sub", []lua.LValue{lua.LString(subj), lua.LNumber(init), lua.LNumber(-init)}},
			{"byte", []lua.LValue{lua.LString(subj), lua.LNumber(init), lua.LNumber(init + 3)}},
		}
		for _, c := range calls {
			L.Push(str.RawGetString(c.fn))
			for _, a := range c.args {
				L.Push(a)
			}
			err := PCall(L, len(c.args), lua.MultRet)
			L.SetTop(0)
			if err != nil && goLeak(err, pat, subj, repl) {
				t.Fatalf("string.%s%v: %v", c.fn, c.args, err)
			}
		}
		// gmatch: the iterator, called until it ends (at most 300 times).
		L.Push(str.RawGetString("gmatch"))
		L.Push(lua.LString(subj))
		L.Push(lua.LString(pat))
		err := PCall(L, 2, 1)
		if err == nil {
			iter := L.Get(-1)
			L.SetTop(0)
			for range 300 {
				L.Push(iter)
				if err = PCall(L, 0, 1); err != nil || L.Get(-1) == lua.LNil {
					break
				}
				L.SetTop(0)
			}
		}
		L.SetTop(0)
		if err != nil && goLeak(err, pat, subj) {
			t.Fatalf("string.gmatch(%q, %q): %v", subj, pat, err)
		}
	})
}

// FuzzCheck51 feeds random chunks to the Lua 5.1 syntax check: it accepts
// or returns a message that names the chunk and a line, and never panics
// or recurses without bound. Seeds in testdata/fuzz/FuzzCheck51.
func FuzzCheck51(f *testing.F) {
	for _, seed := range []string{
		"print((1 + 2\n  * 3)", "local a = 1;;", "goto done", "::top::", `local s = "\300"`,
		"return 1e", "f\n(g)", "local goto = 1 return goto", "--[==[ x ]==] a = [[\n]]",
		"for i = 1, 2 do break end", "function t.a.b:c(...) return ... end", "x = {[1]=2; y=3, 4}",
		"a = '\\", "a = [=[", "return -#not 1 .. 2 ^ 3", "(a) = 1", "a, f() = 1",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			return
		}
		gotos, err := check51(src, "c")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "c:") {
				t.Fatalf("%q: %v: no chunk name", src, err)
			}
			return
		}
		if len(gotos) > 0 {
			renamed, name := renameGotos(src, gotos)
			if strings.Count(renamed, name) != len(gotos) {
				t.Fatalf("%q: %d gotos, %d renamed", src, len(gotos), strings.Count(renamed, name))
			}
		}
	})
}
