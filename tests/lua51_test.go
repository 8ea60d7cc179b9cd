package tests

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/plan"
)

// The Lua 5.1 semantics suite: tests/lua51/*.lua, written from the Lua 5.1
// reference manual and gopher-lua's wrong-answer issues (docs/lua.md). Each
// file checks itself with the helpers of lua51/prelude.lua and ends with
// "return finish()". TestLua51 runs every file in the state plans get
// (bindings.NewState on the simulator) as a script and inside plan.check;
// cmd/ibscript's TestREPLLua51 runs them through the REPL's evaluator.
// TestLua51Reference runs the same files under the reference interpreter,
// lua5.1, so that every expectation is Lua 5.1's own.

// lua51Files lists the suite's files.
func lua51Files(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("lua51", "*.lua"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if filepath.Base(f) != "prelude.lua" {
			out = append(out, f)
		}
	}
	if len(out) < 10 {
		t.Fatalf("tests/lua51 has %d suite files, want at least 10", len(out))
	}
	return out
}

// lua51State is the state a plan gets, with the suite's prelude loaded.
func lua51State(t *testing.T) *lua.LState {
	t.Helper()
	var out strings.Builder
	L, _, done := defaultPlanState(t, bindings.Options{Stdout: &out, PlanName: "lua51"})
	t.Cleanup(func() {
		done()
		if out.Len() > 0 {
			t.Logf("output:\n%s", out.String())
		}
	})
	if err := bindings.DoFile(L, filepath.Join("lua51", "prelude.lua")); err != nil {
		t.Fatal(err)
	}
	return L
}

func TestLua51(t *testing.T) {
	for _, file := range lua51Files(t) {
		name := strings.TrimSuffix(filepath.Base(file), ".lua")
		t.Run(name+"/script", func(t *testing.T) {
			L := lua51State(t)
			if err := bindings.DoFile(L, file); err != nil {
				t.Fatalf("%s:\n%v", file, err)
			}
			if n := L.Get(-1); n.Type() != lua.LTNumber || lua.LVAsNumber(n) < 5 {
				t.Fatalf("%s: finish() returned %v, want the number of checks (5 or more)", file, n)
			}
		})
		t.Run(name+"/plan.check", func(t *testing.T) {
			L := lua51State(t)
			src := fmt.Sprintf(`return plan.check(%q, function(c) c:pass("ran", dofile(%q) .. " checks") end)`, name, file)
			if err := bindings.DoString(L, src); err != nil {
				t.Fatal(err)
			}
			if got := L.Get(-1).String(); got != string(plan.Pass) {
				t.Fatalf("plan.check of %s: %s", file, got)
			}
		})
	}
}

// TestLua51Reference runs the suite under lua5.1, the reference
// interpreter (Debian's lua5.1). IBSCRIPT_TEST_LUA51=1 (set by .ci/run
// after installing it) makes its absence a failure.
func TestLua51Reference(t *testing.T) {
	lua51, err := exec.LookPath("lua5.1")
	if err != nil {
		if os.Getenv("IBSCRIPT_TEST_LUA51") == "1" {
			t.Fatal("lua5.1 not found and IBSCRIPT_TEST_LUA51=1")
		}
		t.Skip("lua5.1 (Debian package lua5.1) not installed")
	}
	for _, file := range lua51Files(t) {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".lua"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), perTestTimeout)
			defer cancel()
			cmd := exec.CommandContext(ctx, lua51, "-e", "package.path='lua51/?.lua'", "-l", "prelude", file)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("lua5.1 %s: %v\n%s", file, err, out)
			}
		})
	}
}
