package bindings

import (
	"maps"
	"reflect"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Decoded records are the hottest Lua values: a NodeInfo loop builds one
// table per SMP. gopher-lua's RawSetString boxes each key twice and grows
// three containers per new key (the string map, the key-order slice and
// its index map), which was half the CPU of such a loop. A record table
// of one layout always has the same keys in the same order, so the
// key-order slice is shared (read-only, capacity clipped so that a key a
// script adds reallocates it) and the index map is cloned from a template;
// only the string map is filled per record.
//
// That needs LTable's unexported fields. ltableMirror is their layout in
// gopher-lua v1.1.2 (go.mod pins it); fastTables is true only when reflect
// finds exactly that layout at start-up, and layoutTable falls back to
// RawSetString otherwise, so a gopher-lua upgrade that moves the fields
// costs speed, never correctness (TestFastTablesEnabled says which).
type ltableMirror struct {
	Metatable lua.LValue
	array     []lua.LValue
	dict      map[lua.LValue]lua.LValue
	strdict   map[string]lua.LValue
	keys      []lua.LValue
	k2i       map[lua.LValue]int
}

var fastTables = sameLayout(reflect.TypeFor[lua.LTable](), reflect.TypeFor[ltableMirror]())

// sameLayout reports whether a and b are structs with the same field
// names, types and offsets.
func sameLayout(a, b reflect.Type) bool {
	if a.Kind() != reflect.Struct || a.NumField() != b.NumField() || a.Size() != b.Size() {
		return false
	}
	for i := range a.NumField() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Type != fb.Type || fa.Offset != fb.Offset {
			return false
		}
	}
	return true
}

// tableTemplate is the shared key order of one kind of table: a layout's
// records, or the fixed-key tables of fabric.discover (nodes, ports).
type tableTemplate struct {
	names []string     // the keys
	keys  []lua.LValue // the same as LStrings; len == cap
	k2i   map[lua.LValue]int
	share bool // fastTables and no key twice: tables share keys
}

func newTableTemplate(names []string) *tableTemplate {
	t := &tableTemplate{names: names, keys: make([]lua.LValue, len(names)), k2i: make(map[lua.LValue]int, len(names))}
	for i, k := range names {
		t.keys[i] = lua.LString(k)
		t.k2i[t.keys[i]] = i
	}
	t.share = fastTables && len(t.k2i) == len(names)
	return t
}

// table returns a table holding values under the template's keys, in its
// order, with meta (nil: none) as metatable; a nil value leaves its key
// unset (pairs skips it until it is set). Tables share the key order when
// they can (see above), else they are built with RawSetString.
func (tpl *tableTemplate) table(L *lua.LState, values []lua.LValue, meta lua.LValue) *lua.LTable {
	if meta == nil {
		meta = lua.LNil
	}
	if tpl.share {
		sd := make(map[string]lua.LValue, len(tpl.names))
		for i, k := range tpl.names {
			if values[i] != nil {
				sd[k] = values[i]
			}
		}
		t := new(lua.LTable)
		m := (*ltableMirror)(unsafe.Pointer(t))
		m.Metatable = meta
		m.strdict = sd
		m.keys = tpl.keys
		m.k2i = maps.Clone(tpl.k2i)
		return t
	}
	t := L.CreateTable(0, len(tpl.names))
	for i, k := range tpl.names {
		if values[i] != nil {
			t.RawSetString(k, values[i])
		}
	}
	t.Metatable = meta
	return t
}

// template returns the Env's template for a kind of table with keys,
// made once.
func (e *Env) template(kind string, keys ...string) *tableTemplate {
	if t, ok := e.tpls[kind]; ok {
		return t
	}
	if e.tpls == nil {
		e.tpls = make(map[string]*tableTemplate)
	}
	t := newTableTemplate(keys)
	e.tpls[kind] = t
	return t
}
