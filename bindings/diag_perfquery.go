package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.perfquery{...}: perfquery (diag/perfquery.go).
func init() {
	registerDiag(Func{"perfquery", func(e *Env, L *lua.LState) int {
		const fn = "diag.perfquery"
		o := diagOptions(L, fn, "target", "ports", "mask", "extended", "all_ports", "loop", "reset", "reset_only", "groups")
		po := diag.PerfQueryOptions{Target: diagTargetPtr(L, fn, o),
			Extended: lua.LVAsBool(o.RawGetString("extended")), AllPorts: lua.LVAsBool(o.RawGetString("all_ports")),
			Loop: lua.LVAsBool(o.RawGetString("loop")), Reset: lua.LVAsBool(o.RawGetString("reset")),
			ResetOnly: lua.LVAsBool(o.RawGetString("reset_only")), Groups: diagStrings(L, fn, o, "groups")}
		for _, g := range po.Groups {
			if !diag.IsPerfGroup(g) {
				raise(L, fn, "groups: %q is none of perfquery's (xmtsl, rcvsl, xmtdisc, rcverr, extended_speeds, smplctl, oprcvcounters, ...)", g)
			}
		}
		switch v := o.RawGetString("ports").(type) {
		case *lua.LNilType:
		case lua.LNumber:
			po.Ports = []int{int(diagNum(L, fn, o, "ports", 0, 255))}
		case *lua.LTable:
			for i := 1; i <= v.Len(); i++ {
				n, ok := v.RawGetInt(i).(lua.LNumber)
				if !ok || n < 0 || n > 255 {
					raise(L, fn, "ports[%d]: want a port number 0..255", i)
				}
				po.Ports = append(po.Ports, int(n))
			}
		default:
			raise(L, fn, "ports: want a port number or a list of them, got %s", v.Type())
		}
		if o.RawGetString("mask") != lua.LNil {
			m := diagNum(L, fn, o, "mask", 0, 1<<53)
			po.Mask = &m
		}
		q, err := diag.PerfQueryRun(L.Context(), e.diagEnv(), po)
		return e.diagResult(L, fn, q, err)
	}, `perfquery({target = 1, ports = 1 | {1, 3}, extended = false, all_ports = false, loop = false, reset = false, reset_only = false, mask = 0xffff, groups = {"xmtdisc"}}) -> {lid, portid, cap_mask, cap_mask2, blocks = {{title, attribute, port, fields = {{name, value, text}, ...}}, ...}, reset, warnings}: what perfquery reads (and resets: Sets), block by block as it prints them`},
		`local q = diag.perfquery{target = 1, ports = 1}
for _, f in ipairs(q.blocks[1].fields) do if f.name == "SymbolErrorCounter" then print(f.value) end end`)
}
