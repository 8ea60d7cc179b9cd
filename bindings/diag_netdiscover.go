package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.netdiscover: ibnetdiscover's data (diag/ibnetdiscover.go).
func init() {
	const fn = "diag.netdiscover"
	registerDiag(Func{"netdiscover", func(e *Env, L *lua.LState) int {
		diagOptions(L, fn)
		nd, err := diag.NetDiscoverOf(L.Context(), e.diagEnv(), diag.NetDiscoverOptions{})
		return e.diagResult(L, fn, nd, err)
	}, "netdiscover() -> {nodes = {{type, guid, system_guid, vendor_id, device_id, ports, name, lid, links = {{port, guid, lid, width, speed, remote = {type, node_guid, guid, port, lid, name}}}}}} [, missed]: what ibnetdiscover prints, as data (its ports report's widths and speeds)"},
		`for _, n in ipairs(diag.netdiscover().nodes) do
  for _, l in ipairs(n.links) do
    if l.remote then print(n.name, l.port, l.width, l.speed, "->", l.remote.name, l.remote.port) end
  end
end`)
}
