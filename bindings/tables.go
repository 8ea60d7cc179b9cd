package bindings

import lua "github.com/yuin/gopher-lua"

// fixedTable returns a table holding values under keys, in that order
// (pairs yields them so), with meta (nil: none) as metatable; a nil value
// leaves its key unset. It is how the tables of fabric.discover (nodes,
// ports, links) are built: gopher-lua's public API only.
func fixedTable(L *lua.LState, keys []string, values []lua.LValue, meta lua.LValue) *lua.LTable {
	t := L.CreateTable(0, len(keys))
	for i, k := range keys {
		if values[i] != nil {
			t.RawSetString(k, values[i])
		}
	}
	if meta != nil {
		t.Metatable = meta
	}
	return t
}
