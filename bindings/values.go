package bindings

import (
	"encoding/hex"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// Hex64 formats a 64-bit identifier (GUID, key) the way scripts see it,
// "0x%016x": Lua numbers are float64 and would lose bits.
func Hex64(v uint64) lua.LString {
	const digits = "0123456789abcdef"
	var b [18]byte
	b[0], b[1] = '0', 'x'
	for i := 17; i >= 2; i-- {
		b[i] = digits[v&0xf]
		v >>= 4
	}
	return lua.LString(b[:])
}

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
		return number(f.Get(b))
	}
}

// smallNumbers holds the Lua numbers 0..255 already boxed as LValues:
// most decoded fields are small (types, ports, states, widths), and
// boxing a float64 into an interface allocates.
var smallNumbers = func() (t [256]lua.LValue) {
	for i := range t {
		t[i] = lua.LNumber(i)
	}
	return t
}()

// number returns v as a Lua number, without allocating when v < 256.
func number(v uint64) lua.LValue {
	if v < uint64(len(smallNumbers)) {
		return smallNumbers[v]
	}
	return lua.LNumber(v)
}

// layoutTable decodes b through layout l into a Lua table keyed by the
// fields' snake_case names. Its metatable prints it as an aligned table of
// fields in wire order.
func (e *Env) layoutTable(l *mad.Layout, b []byte) *lua.LTable {
	r := e.record(l)
	vals := e.vals[:0]
	for _, f := range l.Fields {
		vals = append(vals, fieldValue(f, b))
	}
	for _, i := range r.secret {
		if vals[i] != zeroKey {
			vals[i] = maskedKey
		}
	}
	t := r.tpl.table(e.L, vals, r.meta)
	clear(vals)
	e.vals = vals
	return t
}

// record is what every decoded table of one layout shares: its keys and
// its metatable, made once per Env.
type record struct {
	keys   []string
	meta   *lua.LTable
	tpl    *tableTemplate // the keys' shared order (fasttable.go)
	secret []int          // indexes of key fields (mad.IsKeyField)
}

// A key field (M_Key, SM_Key, B_Key, CC_Key) reaches a script only as
// zeroKey, when the wire held zero (no key, or one the port would not
// show), or as maskedKey: a plan can check that a key is set, never read
// it.
var (
	zeroKey   = Hex64(0)
	maskedKey = lua.LString("<masked>")
)

func (e *Env) record(l *mad.Layout) *record {
	if r, ok := e.records[l]; ok {
		return r
	}
	if e.records == nil {
		e.records = make(map[*mad.Layout]*record)
	}
	r := &record{keys: make([]string, len(l.Fields)), meta: e.recordMeta(l.Name, l)}
	for i, f := range l.Fields {
		r.keys[i] = mad.SnakeName(f.Name)
		if mad.IsKeyField(f.Name) {
			r.secret = append(r.secret, i)
		}
	}
	r.tpl = newTableTemplate(r.keys)
	e.records[l] = r
	return r
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
	hex := e.L.NewTable()
	names := e.L.NewTable()
	for _, f := range l.Fields {
		k := mad.SnakeName(f.Name)
		keys.Append(lua.LString(k))
		names.RawSetString(k, lua.LString(f.Name))
		if f.Kind == mad.Hex && f.Width < 64 {
			hex.RawSetString(k, lua.LNumber((f.Width+3)/4))
		}
	}
	mt.RawSetString("__name", lua.LString(name))
	mt.RawSetString("__fields", keys)
	mt.RawSetString("__hex", hex)     // numeric fields shown in hex, with their digit count
	mt.RawSetString("__names", names) // IBA field names, for enumeration texts
	mt.RawSetString("__tostring", e.L.NewFunction(recordString))
	e.metas[name] = mt
	return mt
}

// secretKeys are printed as smpquery prints them: not at all (a decoded
// table holds only zeroKey or maskedKey for them anyway).
var secretKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range mad.KeyFieldNames {
		m[mad.SnakeName(k)] = true
	}
	return m
}()

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
	hex, _ := mt.RawGetString("__hex").(*lua.LTable)
	names, _ := mt.RawGetString("__names").(*lua.LTable)
	var sb strings.Builder
	sb.WriteString(lua.LVAsString(mt.RawGetString("__name")))
	width := 0
	if keys != nil {
		keys.ForEach(func(_, k lua.LValue) {
			width = max(width, len(lua.LVAsString(k)))
		})
		keys.ForEach(func(_, k lua.LValue) {
			key := lua.LVAsString(k)
			v := t.RawGetString(key)
			s := L.ToStringMeta(v).String()
			if secretKeys[key] {
				s = "<not displayed>" // as smpquery
			}
			if n, ok := v.(lua.LNumber); ok && n >= 0 {
				if digits, ok := hex.RawGetString(key).(lua.LNumber); ok && hex != nil {
					s = fmt.Sprintf("0x%0*x", int(digits), uint64(n))
				}
				if names != nil {
					if text, ok := smp.FieldText(lua.LVAsString(names.RawGetString(key)), uint64(n)); ok {
						s += " (" + text + ")"
					}
				}
			}
			fmt.Fprintf(&sb, "\n  %-*s  %s", width, key, s)
		})
	}
	L.Push(lua.LString(sb.String()))
	return 1
}
