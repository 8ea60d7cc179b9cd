package bindings

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.ibroute and diag.dump_fts: forwarding tables as ibroute and
// dump_fts dump them (diag/ibroute.go, diag/dump_fts.go).
func init() {
	registerDiag(Func{"ibroute", func(e *Env, L *lua.LState) int {
		const fn = "diag.ibroute"
		t := checkTarget(L, fn, 1)
		L.Remove(1) // the option table is argument 1 for diagOptions
		o := routeOptions(L, fn)
		env := e.diagEnv()
		t, addr, err := env.RouteAddress(L.Context(), t)
		if err != nil {
			raise(L, fn, "%v", err)
		}
		ft, err := diag.IBRoute(L.Context(), env, t, addr, &o)
		return e.diagResult(L, fn, ft, err)
	}, "ibroute(switch [, {multicast, all, no_dests, start, last}]) -> {switch, guid, name, lids = {{lid, port, valid, info, dest = {type, port_guid, name}}, ...} | mlids = {{mlid, ports, masks}, ...}}: a switch's forwarding table (LID, \"dr:...\" or \"guid:...\") as ibroute dumps it; multicast = ibroute -M"},
		`local t = diag.ibroute("lid:2")
for _, e in ipairs(t.lids) do if e.dest then print(e.lid, e.port, e.dest.name) end end`)
	registerDiag(Func{"dump_fts", func(e *Env, L *lua.LState) int {
		const fn = "diag.dump_fts"
		o := routeOptions(L, fn)
		fts, err := diag.DumpFTs(L.Context(), e.diagEnv(), nil, &o)
		return e.diagResult(L, fn, map[string]any{"switches": fts}, err)
	}, "dump_fts([{multicast, all, no_dests, start, last}]) -> {switches = {ibroute's table, ...}}: every switch's forwarding table from one discovery, in dump_fts' order"},
		`for _, sw in ipairs(diag.dump_fts().switches) do print(sw.name, #sw.lids) end`)
}

// routeOptions reads ibroute's and dump_fts' option table (argument 1).
func routeOptions(L *lua.LState, fn string) diag.RouteOptions {
	t := diagOptions(L, fn, "multicast", "all", "no_dests", "start", "last")
	return diag.RouteOptions{
		Multicast: optBool(L, fn, t, "multicast"), All: optBool(L, fn, t, "all"), NoDests: optBool(L, fn, t, "no_dests"),
		StartLID: uint32(optField(L, fn, t, "start", 0xffff)), EndLID: uint32(optField(L, fn, t, "last", 0xffff)),
	}
}

// optBool reads an option table's boolean (false when absent).
func optBool(L *lua.LState, fn string, t *lua.LTable, key string) bool {
	switch v := t.RawGetString(key).(type) {
	case *lua.LNilType:
		return false
	case lua.LBool:
		return bool(v)
	default:
		raise(L, fn, "option %s: boolean expected, got %s", key, v.Type())
		return false
	}
}

// optField reads an option table's integer 0..limit (0 when absent).
func optField(L *lua.LState, fn string, t *lua.LTable, key string, limit uint64) uint64 {
	switch v := t.RawGetString(key).(type) {
	case *lua.LNilType:
		return 0
	case lua.LNumber:
		f := float64(v)
		if f < 0 || f != float64(uint64(f)) || uint64(f) > limit {
			raise(L, fn, "option %s: integer 0..%d expected, got %v", key, limit, v)
		}
		return uint64(f)
	default:
		raise(L, fn, "option %s: %s", key, fmt.Sprintf("number expected, got %s", v.Type()))
		return 0
	}
}
