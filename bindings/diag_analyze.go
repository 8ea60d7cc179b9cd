package bindings

import (
	"os"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
)

// diag.analyze{checks=, load=, no_sl2vl=}: ibscript analyze
// (diag/analyze.go); diag.nodes_using{switch=, port=}: who uses a link;
// diag.ibfindnodesusing{switch=, port=}: ibfindnodesusing.
func init() {
	registerDiag(Func{"analyze", func(e *Env, L *lua.LState) int {
		const fn = "diag.analyze"
		o := diagOptions(L, fn, "checks", "load", "no_sl2vl")
		ao := diag.AnalyzeOptions{Checks: diagStrings(L, fn, o, "checks"), NoSL2VL: optBool(L, fn, o, "no_sl2vl")}
		if v := o.RawGetString("load"); v != lua.LNil {
			s, ok := v.(lua.LString)
			if !ok {
				raise(L, fn, "load: want a file name, got %s", v.Type())
			}
			ao.Load = string(s)
			if err := filesOf(L).Check(ao.Load); err != nil {
				raise(L, fn, "%v", err)
			}
			if st, err := os.Stat(ao.Load); err == nil && st.Mode().IsRegular() {
				e.checkAlloc(L, fn, mulSize(uint64(st.Size()), 3))
			}
			// A topology's included files go through the same rules.
			f, err := diag.LoadSavedWith(ao.Load, func(path string) (*topo.Fabric, error) { return filesOf(L).LoadTopology(L.Context(), path) })
			if err != nil {
				raise(L, fn, "%v", err)
			}
			ao.Fabric = f
		}
		r, err := diag.Analyze(L.Context(), e.diagEnv(), ao)
		return e.diagResult(L, fn, r, err)
	}, `analyze({checks = {"credit-loops", "routes", "multicast", "balance", "fat-tree"} | "routes", load = nil | "fabric.json", no_sl2vl = false}) -> {schema, source, nodes, credit_loops, routes, multicast, balance, fat_tree, errors}: routing analytics of the live fabric (its LFTs, MFTs and SL2VL tables) or a saved one, as ibscript analyze --format json (docs/diag/analyze.schema.json)`},
		`local a = diag.analyze{checks = {"credit-loops", "routes"}}
print(a.credit_loops.count, a.routes.max_hops)`)
	registerDiag(Func{"nodes_using", func(e *Env, L *lua.LState) int {
		const fn = "diag.nodes_using"
		o := diagOptions(L, fn, "switch", "port")
		sw, ok := o.RawGetString("switch").(lua.LString)
		if !ok {
			raise(L, fn, "switch: want a GUID or a node description")
		}
		r, err := diag.NodesUsing(L.Context(), e.diagEnv(), diag.NodesUsingOptions{Switch: string(sw), Port: int(diagNum(L, fn, o, "port", 0, 255))})
		return e.diagResult(L, fn, r, err)
	}, `nodes_using({switch = "0x..." | "desc", port = N}) -> {out = {node, port, remote, destinations = {{lid, port}, ...}, sources = {port, ...}}, ["in"] = {...}}: the LIDs a switch routes out of a port and the CA ports whose routes cross the link, and the same for the other direction`},
		`local u = diag.nodes_using{switch = "leaf01", port = 33}
print(#u.out.destinations, #u.out.sources)`)
	registerDiag(Func{"ibfindnodesusing", func(e *Env, L *lua.LState) int {
		const fn = "diag.ibfindnodesusing"
		o := diagOptions(L, fn, "switch", "port")
		sw, ok := o.RawGetString("switch").(lua.LString)
		if !ok {
			raise(L, fn, "switch: want a GUID or a name")
		}
		r, err := diag.FindNodesUsingRun(L.Context(), e.diagEnv(), diag.FindNodesUsingOptions{Switch: string(sw), Port: lua.LVAsString(o.RawGetString("port"))})
		return e.diagResult(L, fn, r, err)
	}, `ibfindnodesusing({switch = "0x...", port = N}) -> {target, found, switch_guid, port, desc, remote_guid, remote_port, remote_desc, out, ["in"]}: the hosts a switch routes out of a port and those routed back, as ibfindnodesusing finds them`},
		`local r = diag.ibfindnodesusing{switch = "0x0002c90300f00000", port = 33}
print(r.found, #r.out, #r["in"])`)
}
