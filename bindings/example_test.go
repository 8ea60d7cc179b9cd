package bindings_test

import (
	"context"
	"fmt"
	"log"
	"os"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/sim"
)

// Embedding ibscript's Lua environment in a Go tool: open a port, make the
// state, add a module of the host's own, run a chunk.
func Example() {
	f, err := sim.Load("../tests/topologies/net.2sw2path4hca", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		log.Fatal(err)
	}
	sess, err := engine.New(tr, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	L, env, err := bindings.NewState(ctx, &bindings.Options{Session: sess, Fabric: f, Stdout: os.Stdout})
	if err != nil {
		log.Fatal(err)
	}
	defer L.Close()
	defer env.Close() // closes what the script left open

	// A module of the host's: site.rack(guid) names the rack a node is in.
	L.PreloadModule("site", func(L *lua.LState) int {
		L.Push(L.SetFuncs(L.NewTable(), map[string]lua.LGFunction{
			"rack": func(L *lua.LState) int {
				L.Push(lua.LString("rack-" + L.CheckString(1)[16:]))
				return 1
			},
		}))
		return 1
	})

	err = bindings.DoString(L, `
		local site = require "site"
		for _, n in ipairs(fabric.discover().nodes) do
			if n.type == "Switch" then print(n.desc, site.rack(n.guid)) end
		end`)
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// Switch1	rack-00
	// Switch2	rack-01
}

// Running a shipped plan from Go: ScriptDir lets require find the checks
// beside it, PlanReport gives the report (never nil once the script ran
// and failed or planned) and its exit status. The router of this fabric
// has GUID 0, which the SM refuses as OpenSM does: its link stays in Init
// and its counters cannot be read (it has no LID), so the status is 2.
func ExampleEnv_PlanReport() {
	f, err := sim.Load("../tests/topologies/net.2sw2path4hca-faulty", nil)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	ctx := context.Background()
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		log.Fatal(err)
	}
	sess, err := engine.New(tr, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()
	L, env, err := bindings.NewState(ctx, &bindings.Options{Session: sess, Fabric: f, Stdout: os.Stdout,
		PlanName: "validate", ScriptDir: "../scripts"})
	if err != nil {
		log.Fatal(err)
	}
	defer L.Close()
	defer env.Close()

	runErr := bindings.DoFile(L, "../scripts/validate.lua")
	rep := env.PlanReport(runErr)
	for _, c := range rep.Checks {
		if c.Status == "fail" {
			fmt.Println(c.Category, c.Name, c.Failed)
		}
	}
	fmt.Println("exit status", rep.ExitCode())
	// Output:
	// links links ACTIVE 1
	// ids no zero GUIDs 1
	// exit status 2
}
