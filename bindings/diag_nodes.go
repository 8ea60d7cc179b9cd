package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
)

// diag.hosts, diag.switches, diag.routers, diag.nodes: the node lists of
// ibhosts, ibswitches, ibrouters and ibnodes (diag/nodes.go).
func init() {
	for _, l := range []struct {
		name, tool string
		types      []topo.NodeType
		example    string
	}{
		{"hosts", "ibhosts", []topo.NodeType{topo.CA}, `for _, n in ipairs(diag.hosts().nodes) do print(n.guid, n.ports, n.description) end`},
		{"switches", "ibswitches", []topo.NodeType{topo.Switch}, `local sw = diag.switches().nodes[1]
print(sw.description, sw.lid, sw.port0)   -- port0: "base" or "enhanced"`},
		{"routers", "ibrouters", []topo.NodeType{topo.Router}, `print(#diag.routers().nodes)`},
		{"nodes", "ibnodes", []topo.NodeType{topo.CA, topo.Switch}, `for _, n in ipairs(diag.nodes().nodes) do print(n.type, n.description) end`},
	} {
		fn := "diag." + l.name
		o := diag.NodesOptions{Types: l.types}
		registerDiag(Func{l.name, func(e *Env, L *lua.LState) int {
			diagOptions(L, fn)
			nl, err := diag.Nodes(L.Context(), e.diagEnv(), o)
			return e.diagResult(L, fn, nl, err)
		}, l.name + "() -> {nodes = {{type, guid, ports, description [, lid, lmc, port0]}, ...}} [, missed]: the nodes " + l.tool + " lists, in its order; missed says which routes discovery could not read"}, l.example)
	}
}
