package bindings

import (
	"encoding/hex"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
)

// Hex64 formats a 64-bit identifier (GUID, key) the way scripts see it:
// Lua numbers are float64 and would lose bits.
func Hex64(v uint64) lua.LString { return lua.LString(fmt.Sprintf("0x%016x", v)) }

// fieldValue converts one field of b to its Lua value.
func fieldValue(f mad.Field, b []byte) lua.LValue {
	switch {
	case f.Kind == mad.String:
		s := f.Slice(b)
		if i := strings.IndexByte(string(s), 0); i >= 0 {
			s = s[:i]
		}
		return lua.LString(s)
	case f.Kind == mad.Bytes || f.Width > 64:
		return lua.LString("0x" + hex.EncodeToString(f.Slice(b)))
	case f.Width == 64 && f.Kind == mad.Hex:
		return Hex64(f.Get(b))
	default:
		return lua.LNumber(f.Get(b))
	}
}

// layoutTable decodes b through layout l into a Lua table keyed by the
// fields' snake_case names. Its metatable prints it as an aligned table of
// fields in wire order.
func (e *Env) layoutTable(l *mad.Layout, b []byte) *lua.LTable {
	t := e.L.CreateTable(0, len(l.Fields))
	for _, f := range l.Fields {
		t.RawSetString(mad.SnakeName(f.Name), fieldValue(f, b))
	}
	e.L.SetMetatable(t, e.recordMeta(l.Name, l))
	return t
}

// recordMeta returns the metatable shared by every decoded l: __name is
// the attribute name and __fields its keys in wire order.
func (e *Env) recordMeta(name string, l *mad.Layout) *lua.LTable {
	if e.metas == nil {
		e.metas = make(map[string]*lua.LTable)
	}
	if mt, ok := e.metas[name]; ok {
		return mt
	}
	mt := e.L.NewTable()
	keys := e.L.NewTable()
	for _, f := range l.Fields {
		keys.Append(lua.LString(mad.SnakeName(f.Name)))
	}
	mt.RawSetString("__name", lua.LString(name))
	mt.RawSetString("__fields", keys)
	mt.RawSetString("__tostring", e.L.NewFunction(recordString))
	e.metas[name] = mt
	return mt
}

// recordString renders a decoded record: its name, then one aligned
// "key  value" line per field.
func recordString(L *lua.LState) int {
	t := L.CheckTable(1)
	mt, _ := L.GetMetatable(t).(*lua.LTable)
	if mt == nil {
		L.Push(lua.LString(t.String()))
		return 1
	}
	keys, _ := mt.RawGetString("__fields").(*lua.LTable)
	var sb strings.Builder
	sb.WriteString(lua.LVAsString(mt.RawGetString("__name")))
	width := 0
	if keys != nil {
		keys.ForEach(func(_, k lua.LValue) {
			width = max(width, len(lua.LVAsString(k)))
		})
		keys.ForEach(func(_, k lua.LValue) {
			key := lua.LVAsString(k)
			fmt.Fprintf(&sb, "\n  %-*s  %s", width, key, L.ToStringMeta(t.RawGetString(key)).String())
		})
	}
	L.Push(lua.LString(sb.String()))
	return 1
}
