// Package bindings is ibscript's Lua environment: the modules scripts
// use (umad, smp, perf, sa, fabric, rdmacm, plan, mad, bit, and sim on
// the embedded simulator), the REPL's helpers (help, ls, show), and the
// corrections that make gopher-lua answer as Lua 5.1 does (docs/lua.md).
// The command line is one host of it; a Go program can be another.
//
// # Embedding
//
// A host opens a fabric and an engine.Session on one of its ports, then
// makes a state with NewState:
//
//	L, env, err := bindings.NewState(ctx, &bindings.Options{
//		Session:   sess,         // required: answers smp, perf, sa, fabric
//		Fabric:    fab,          // umad.open_port, rdmacm; nil disables them
//		Stdout:    os.Stdout,    // print
//		ScriptDir: "scripts",    // require finds scripts/*.lua and scripts/checks/*.lua
//	})
//	defer L.Close()
//	defer env.Close() // first: closes the ports the script left open
//	err = bindings.DoFile(L, "scripts/validate.lua")
//	rep := env.PlanReport(err) // *plan.Report: write it with plan.Write
//
// Run chunks with DoString and DoFile, and call functions with PCall, not
// gopher-lua's own: they run callees the way that keeps pcall and error
// answering as in Lua 5.1 (docs/lua.md). ctx bounds every call: cancel it
// and the running script ends with an error.
//
// Errors a script raises come back as *lua.ApiError. AsExit tells a
// script's os.exit(n) apart, AsRunError an error that ends the run
// whatever the script does (the MAD budget used up, a refused
// allocation). A plan's report: PlanReport returns it, finished, with the
// run's error recorded; it is nil only when the script neither called
// plan.* nor failed (HasPlan tells them apart).
//
// Options.Progress receives the progress of long sweeps (discovery, bulk
// queries, plan.sleep), Options.NodeNames names nodes as a node-name-map
// does, Options.Sim adds the sim module over the embedded simulator
// (Options.Sim = simmod.Of(f) for a *sim.Fabric f).
// Modules returns every module's registration table: the API reference
// (docs/lua-api.md) is generated from it, and a host may preload modules
// of its own beside them (L.PreloadModule).
//
// An LState and its Env belong to one goroutine at a time, as gopher-lua
// requires.
package bindings
