// Package tests runs the Lua suites in tests/lua against the embedded
// simulator. Each suite's first line names its topology
// ("--! topology: net.2sw2path4hca", a file in tests/topologies, or
// "default" for the bundled one). Every test_* function runs, sorted by
// name, in a fresh LState on a fresh fabric, as a Go subtest.
package tests

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/internal/luatest"
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

func openFabric(name string) (*sim.Fabric, error) {
	if name == "default" {
		return sim.Default(nil)
	}
	return sim.Load(filepath.Join("topologies", name), nil)
}

func runSuite(t *testing.T, file string) {
	topology, err := luatest.Topology(file)
	if err != nil {
		t.Fatal(err)
	}
	src, names, err := luatest.ReadSuite(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatalf("%s defines no test_* functions", file)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			withState(t, topology, func(L *lua.LState, env *bindings.Env) {
				if err := luatest.Run(t, L, env, src, filepath.Base(file), name); err != nil {
					t.Fatal(err)
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
	var out strings.Builder
	L, env, done := planState(t, ctx, f, nil, bindings.Options{Stdout: &out})
	defer done()
	luatest.Install(L)
	fn(L, env)
	if out.Len() > 0 {
		t.Logf("output:\n%s", out.String())
	}
}
