package bindings

import (
	"bytes"
	"os"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
)

// Topology as data: fabric.load reads a saved topology (JSON snapshot,
// ibnetdiscover or ibsim file) into the same tables fabric.discover makes,
// fabric.save writes one, fabric.diff compares two.

func topoOf(L *lua.LState, n int) *topo.Fabric {
	t := L.CheckTable(n)
	if ud, ok := t.RawGetString(fabricKey).(*lua.LUserData); ok {
		if f, ok := ud.Value.(*topo.Fabric); ok {
			return f
		}
	}
	L.ArgError(n, "a fabric from fabric.discover or fabric.load expected")
	return nil
}

func fabricLoad(e *Env, L *lua.LState) int {
	path := L.CheckString(1)
	if err := filesOf(L).Check(path); err != nil {
		raise(L, "fabric.load", "%v", err)
	}
	if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
		// The file, its text and what is decoded from it: about three
		// times its size while it loads.
		e.checkAlloc(L, "fabric.load", mulSize(uint64(st.Size()), 3))
	}
	f, err := filesOf(L).LoadTopology(L.Context(), path)
	if err != nil {
		raise(L, "fabric.load", "%v", err)
	}
	L.Push(e.fabricTable(&engine.Discovery{Fabric: f}))
	return 1
}

func fabricSave(e *Env, L *lua.LState) int {
	f := topoOf(L, 1)
	path := L.CheckString(2)
	opts := L.OptTable(3, L.NewTable())
	checkOptions(L, "fabric.save", opts, map[string]bool{"format": true, "node_name_map": true})
	format := "json"
	if v, ok := opts.RawGetString("format").(lua.LString); ok {
		format = string(v)
	}
	var b bytes.Buffer
	switch format {
	case "json":
		if err := topo.WriteSnapshot(&b, f); err != nil {
			raise(L, "fabric.save", "%s: %v", path, err)
		}
	case "ibnetdiscover":
		wo := &topo.WriteOptions{NameMap: nameMapOption(L, "fabric.save", opts)}
		if err := topo.WriteIBNetDiscover(&b, f, wo); err != nil {
			raise(L, "fabric.save", "%s: %v", path, err)
		}
	default:
		raise(L, "fabric.save", "format %q: want \"json\" or \"ibnetdiscover\"", format)
	}
	if err := filesOf(L).WriteFile(path, b.Bytes(), 0o644); err != nil {
		raise(L, "fabric.save", "%v", err)
	}
	return 0
}

// nameMapOption reads the node-name-map file an option table names
// (node_name_map=path), nil without one.
func nameMapOption(L *lua.LState, fn string, opts *lua.LTable) map[uint64]string {
	v, ok := opts.RawGetString("node_name_map").(lua.LString)
	if !ok {
		return nil
	}
	mf, err := filesOf(L).Open(string(v))
	if err != nil {
		raise(L, fn, "%v", err)
	}
	defer mf.Close()
	names, err := topo.ParseNameMap(mf, string(v))
	if err != nil {
		raise(L, fn, "%v", err)
	}
	return names
}

func fabricDiff(e *Env, L *lua.LState) int {
	ref, cur := topoOf(L, 1), topoOf(L, 2)
	nodeTabs := map[*topo.Node]*lua.LTable{}
	for i, ft := range []*lua.LTable{L.CheckTable(1), L.CheckTable(2)} {
		f := []*topo.Fabric{ref, cur}[i]
		if nodes, ok := ft.RawGetString("nodes").(*lua.LTable); ok {
			for j, n := range f.Nodes {
				if nt, ok := nodes.RawGetInt(j + 1).(*lua.LTable); ok {
					nodeTabs[n] = nt
				}
			}
		}
	}
	changes := topo.Diff(ref, cur)
	out := L.CreateTable(len(changes), 0)
	for _, c := range changes {
		ct := L.CreateTable(0, 5)
		ct.RawSetString("severity", lua.LString(c.Severity.String()))
		ct.RawSetString("kind", lua.LString(c.Kind))
		ct.RawSetString("msg", lua.LString(c.Message))
		if nt := nodeTabs[c.Node]; nt != nil {
			obj := nt
			if c.Port != 0 {
				if ports, ok := nt.RawGetString("ports").(*lua.LTable); ok {
					if pt, ok := ports.RawGetInt(c.Port).(*lua.LTable); ok {
						obj = pt
					}
				}
			}
			ct.RawSetString("object", obj)
		}
		out.Append(ct)
	}
	L.Push(out)
	return 1
}
