package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
)

// diag.linkinfo: iblinkinfo's data (diag/linkinfo.go).
func init() {
	const fn = "diag.linkinfo"
	registerDiag(Func{"linkinfo", func(e *Env, L *lua.LState) int {
		t := diagOptions(L, fn, "port_guid", "path", "hops", "all", "down", "only")
		var o diag.LinkinfoOptions
		if v := t.RawGetString("port_guid"); v != lua.LNil {
			o.PortGUID = optGUID(L, fn, "port_guid", v)
		}
		if v := t.RawGetString("path"); v != lua.LNil {
			a, err := diag.ParseAddress(diag.AddrTarget, "dr:"+v.String())
			if err != nil {
				raise(L, fn, "path: %v", err)
			}
			o.Path = a.Target.Path
		}
		o.Hops = int(diagNum(L, fn, t, "hops", 0, 62))
		o.All = lua.LVAsBool(t.RawGetString("all"))
		o.DownOnly = lua.LVAsBool(t.RawGetString("down"))
		o.Additional = true
		switch only := t.RawGetString("only"); only.String() {
		case "nil":
		case "switches":
			o.Only = topo.Switch
		case "cas":
			o.Only = topo.CA
		default:
			raise(L, fn, "only %q: want \"switches\" or \"cas\"", only.String())
		}
		li, err := diag.LinkinfoOf(L.Context(), e.diagEnv(), o)
		return e.diagResult(L, fn, li, err)
	}, "linkinfo([{port_guid=, path=\"0,1\", hops=, all=true, down=true, only=\"switches\"|\"cas\"}]) -> {nodes = {{type, guid, name, lid, ports = {{port, width, speed, state, phys_state, hoq_life, vl_stall_count, remote = {guid, lid, port, name, could_be_width, could_be_speed}}}}}} [, missed]: every port iblinkinfo prints, its link and its neighbour (hops: iblinkinfo -n, where libibnetdisc's hop limit stops it; all: -a, every node the partial scan of port_guid or path holds)"},
		`for _, n in ipairs(diag.linkinfo{only = "switches"}.nodes) do
  for _, p in ipairs(n.ports) do
    if p.remote and p.remote.could_be_width ~= "" then print(n.name, p.port, p.width, p.remote.could_be_width) end
  end
end`)
}

// optGUID reads a GUID option: a "0x..." string or a number.
func optGUID(L *lua.LState, fn, key string, v lua.LValue) uint64 {
	a, err := diag.ParseAddress(diag.AddrTarget, "guid:"+v.String())
	if err != nil {
		raise(L, fn, "%s: %v", key, err)
	}
	return a.Target.GUID
}
