package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The two repros of issue 15, as a user runs them: gopher-lua v1.1.2 prints
// 1 and "2 2" and "1 1"; Lua 5.1 prints 3, "2 1" and "1 0".
const (
	pcallUpvalueRepro = `local x = 0
local function f(fn) x = x + 1; pcall(fn, "e") end
f(error); f(error); f(error); print(x)`
	assignRepro = `local a,b=1,2; a,b=b,a; print(a,b)
local c,d=0,0; c, d = c + 1, c + d; print(c,d)`
)

func TestLua51ReprosOnTheCommandLine(t *testing.T) {
	fab := "--fabric=sim:" + topologies + "net.2sw2path4hca"
	for _, tc := range []struct{ chunk, want string }{
		{pcallUpvalueRepro, "3\n"},
		{assignRepro, "2\t1\n1\t0\n"},
	} {
		code, out, errOut := ibscript(t, fab, "-e", tc.chunk)
		if code != exitOK || out != tc.want {
			t.Errorf("ibscript -e %q: status %d, stdout %q, want %q\nstderr: %s", tc.chunk, code, out, tc.want, errOut)
		}
	}
}

// TestLua51PlanCheckCounter is issue 15's plan: a local counted by a helper
// closure around three checks that raise, then once more. gopher-lua
// v1.1.2 reads 1; Lua 5.1 reads 4.
func TestLua51PlanCheckCounter(t *testing.T) {
	script := filepath.Join(t.TempDir(), "count.lua")
	src := `plan.define{name = "count"}
local n = 0
local function bump() n = n + 1 end
for i = 1, 3 do
  plan.check("raises " .. i, function(c) bump(); error("boom " .. i) end)
end
bump()
plan.check("counter", function(c)
  if n == 4 then c:pass("n is 4") else c:fail("n is " .. n .. ", want 4") end
end)
`
	if err := os.WriteFile(script, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := ibscript(t, "--fabric=sim:"+topologies+"net.2sw2path4hca", "run", script, "--format", "tap")
	if code != exitFailed {
		t.Fatalf("status %d, want %d (three checks fail)\n%s\n%s", code, exitFailed, out, errOut)
	}
	if !strings.Contains(out, "ok 4 - general: counter") || strings.Contains(out, "not ok 4") {
		t.Errorf("the counter check did not see n = 4:\n%s\n%s", out, errOut)
	}
}

// TestREPLLua51 runs the Lua 5.1 semantics suite (tests/lua51) through the
// REPL's evaluator: each file is one chunk, evaluated as a typed line is.
func TestREPLLua51(t *testing.T) {
	dir := filepath.Join("..", "..", "tests", "lua51")
	files, err := filepath.Glob(filepath.Join(dir, "*.lua"))
	if err != nil || len(files) < 10 {
		t.Fatalf("tests/lua51: %d files, %v", len(files), err)
	}
	c := &config{fabricURI: "sim:" + topologies + "net.2sw2path4hca"}
	b, L, env, err := newLua(context.Background(), c, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeLua(b, L, env, 0, io.Discard)
	ev := &evaluator{L: L}
	prelude, err := os.ReadFile(filepath.Join(dir, "prelude.lua"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Eval(t.Context(), string(prelude)); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Base(f) == "prelude.lua" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ev.Eval(t.Context(), string(src))
		if err != nil {
			t.Errorf("%s through the REPL: %v", f, err)
			continue
		}
		if out == "" || out == "0" {
			t.Errorf("%s through the REPL: finish() gave %q, want a count of checks", f, out)
		}
	}
}
