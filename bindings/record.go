package bindings

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// Decoded attributes and SA records are the hottest Lua values: a NodeInfo
// loop makes one per SMP, and building a table of a dozen string keys
// through gopher-lua's public API costs more than the SMP itself (three
// allocations per key). So a decoded record is a view: a userdata over a
// copy of the attribute's bytes, each field decoded when a script reads
// it. Its metatable (one per layout) gives it the behaviour of the table
// it stands for:
//
//   - r.field reads a field (nil for a key the layout lacks);
//   - r.field = v overrides it, r.field = nil removes it, and other keys
//     are stored as in a table (the view keeps them beside the bytes);
//   - pairs(r) and next(r, k) yield the fields in wire order, then the
//     keys a script added, as a table yields them (1, 2, ... first, then
//     the others in the order they were added; pairs honours a
//     __pairs metamethod and next knows records: Open installs both);
//   - #r is the length of what a script stored at 1, 2, ...;
//   - tostring(r) prints the aligned field list smpquery prints.
//
// type(r) is "userdata", and functions that need a real table (rawget,
// rawset, setmetatable, ipairs, table.*) refuse a record; the bindings'
// own functions take a record wherever they take a table of fields.
// Only gopher-lua's exported API is used: embedders pick their own
// gopher-lua version.

// record is what every view of one layout shares, made once per Env.
type record struct {
	layout *mad.Layout
	keys   []lua.LValue   // the fields' snake_case names as LStrings, wire order
	index  map[string]int // field index by snake_case name
	secret []int          // field index -> bit in recordView.masked, or -1
	meta   *lua.LTable
}

// recordView is one decoded attribute or record.
type recordView struct {
	r *record
	b []byte // the attribute's bytes; key fields zeroed
	// masked has bit s set when the key field with secret index s held a
	// key: it reads as maskedKey, else as zeroKey. Keys reach no script.
	masked uint64
	set    *lua.LTable // what the script stored; nil until it stores something
}

// removed marks, in recordView.set, a field a script set to nil.
var removed lua.LValue = &lua.LUserData{}

// A key field (M_Key, SM_Key, B_Key, CC_Key) reaches a script only as
// zeroKey, when the wire held zero (no key, or one the port would not
// show), or as maskedKey: a plan can check that a key is set, never read
// it.
var (
	zeroKey   = Hex64(0)
	maskedKey = lua.LString("<masked>")
)

// layoutTable decodes b through layout l into a record view (see above).
// b is copied: the caller may reuse it.
func (e *Env) layoutTable(l *mad.Layout, b []byte) lua.LValue {
	r := e.record(l)
	v := &recordView{r: r, b: make([]byte, l.Size)}
	copy(v.b, b)
	for i, s := range r.secret {
		if s < 0 {
			continue
		}
		f := l.Fields[i]
		if f.Get(v.b) != 0 {
			v.masked |= 1 << uint(s)
		}
		clear(f.Slice(v.b))
	}
	ud := e.L.NewUserData()
	ud.Value = v
	ud.Metatable = r.meta
	return ud
}

func (e *Env) record(l *mad.Layout) *record {
	if r, ok := e.records[l]; ok {
		return r
	}
	if e.records == nil {
		e.records = make(map[*mad.Layout]*record)
	}
	r := &record{layout: l, keys: make([]lua.LValue, len(l.Fields)), index: make(map[string]int, len(l.Fields)),
		secret: make([]int, len(l.Fields))}
	n := 0
	for i, f := range l.Fields {
		k := f.Key()
		r.keys[i] = lua.LString(k)
		if _, dup := r.index[k]; !dup {
			r.index[k] = i
		}
		r.secret[i] = -1
		if mad.IsKeyField(f.Name) && n < 64 {
			r.secret[i] = n
			n++
		}
	}
	r.meta = e.recordMeta(l)
	e.records[l] = r
	return r
}

// recordMeta returns the metatable of l's views: the behaviour above, and
// __name (the attribute name), __fields (its keys in wire order), __hex
// (numeric fields shown in hex, with their digit count) and __names (IBA
// field names, for enumeration texts) for tostring.
func (e *Env) recordMeta(l *mad.Layout) *lua.LTable {
	L := e.L
	mt := L.NewTable()
	keys := L.NewTable()
	hex := L.NewTable()
	names := L.NewTable()
	for _, f := range l.Fields {
		k := f.Key()
		keys.Append(lua.LString(k))
		names.RawSetString(k, lua.LString(f.Name))
		if f.Kind == mad.Hex && f.Width < 64 {
			hex.RawSetString(k, lua.LNumber((f.Width+3)/4))
		}
	}
	mt.RawSetString("__name", lua.LString(l.Name))
	mt.RawSetString("__fields", keys)
	mt.RawSetString("__hex", hex)
	mt.RawSetString("__names", names)
	mt.RawSetString("__tostring", L.NewFunction(recordString))
	mt.RawSetString("__index", L.NewFunction(recordIndex))
	mt.RawSetString("__newindex", L.NewFunction(recordNewIndex))
	mt.RawSetString("__len", L.NewFunction(recordLen))
	if e.recNext == nil {
		e.recNext = L.NewFunction(recordNext)
	}
	mt.RawSetString("__pairs", L.NewClosure(recordPairs, e.recNext))
	return mt
}

// asView returns v's record view, or nil when v is not one.
func asView(v lua.LValue) *recordView {
	if ud, ok := v.(*lua.LUserData); ok {
		rv, _ := ud.Value.(*recordView)
		return rv
	}
	return nil
}

func checkView(L *lua.LState, n int) *recordView {
	v := asView(L.Get(n))
	if v == nil {
		L.ArgError(n, "record expected, got "+L.Get(n).Type().String())
	}
	return v
}

// field returns field i as Lua sees it, ignoring what the script stored.
func (v *recordView) field(i int) lua.LValue {
	if s := v.r.secret[i]; s >= 0 {
		if v.masked&(1<<uint(s)) != 0 {
			return maskedKey
		}
		return zeroKey
	}
	return fieldValue(v.r.layout.Fields[i], v.b)
}

// get is v[key].
func (v *recordView) get(key lua.LValue) lua.LValue {
	if v.set != nil {
		if x := v.set.RawGet(key); x != lua.LNil {
			if x == removed {
				return lua.LNil
			}
			return x
		}
	}
	if s, ok := key.(lua.LString); ok {
		if i, ok := v.r.index[string(s)]; ok {
			return v.field(i)
		}
	}
	return lua.LNil
}

// isField reports whether key names one of the layout's fields.
func (v *recordView) isField(key lua.LValue) (int, bool) {
	if s, ok := key.(lua.LString); ok {
		i, ok := v.r.index[string(s)]
		return i, ok
	}
	return 0, false
}

// next is next(v, key): the fields in wire order (those the script did not
// remove), then the other keys it stored.
func (v *recordView) next(L *lua.LState, key lua.LValue) (lua.LValue, lua.LValue) {
	from := 0
	if key != lua.LNil {
		i, ok := v.isField(key)
		if !ok {
			return v.nextStored(L, key)
		}
		from = i + 1
	}
	for i := from; i < len(v.r.keys); i++ {
		k := v.r.keys[i]
		if j := v.r.index[string(k.(lua.LString))]; j != i {
			continue // a name twice in a layout is one key
		}
		if x := v.get(k); x != lua.LNil {
			return k, x
		}
	}
	return v.nextStored(L, lua.LNil)
}

// nextStored walks the keys the script stored that are not fields.
func (v *recordView) nextStored(L *lua.LState, key lua.LValue) (lua.LValue, lua.LValue) {
	if v.set == nil {
		if key != lua.LNil {
			L.RaiseError("invalid key to 'next'")
		}
		return lua.LNil, lua.LNil
	}
	for {
		k, x := v.set.Next(key)
		if k == lua.LNil {
			return lua.LNil, lua.LNil
		}
		if _, field := v.isField(k); !field && x != removed {
			return k, x
		}
		key = k
	}
}

// table returns a plain table with v's keys and values, in pairs order:
// for the bindings' functions that read a table of fields.
func (v *recordView) table(L *lua.LState) *lua.LTable {
	t := L.CreateTable(0, len(v.r.keys))
	for k, x := v.next(L, lua.LNil); k != lua.LNil; k, x = v.next(L, k) {
		t.RawSet(k, x)
	}
	return t
}

// RecordFields returns the keys and values of a decoded attribute or SA
// record as a plain table (what pairs yields), or nil when v is not one.
// It runs no Lua code (the REPL completes field names with it).
func RecordFields(L *lua.LState, v lua.LValue) *lua.LTable {
	if rv := asView(v); rv != nil {
		return rv.table(L)
	}
	return nil
}

// fieldsTable returns the table of fields at argument n: a table, or a
// record (as a table of its keys); nil when the argument is absent and
// optional.
func fieldsTable(L *lua.LState, n int, optional bool) *lua.LTable {
	switch x := L.Get(n).(type) {
	case *lua.LTable:
		return x
	case *lua.LUserData:
		if v := asView(x); v != nil {
			return v.table(L)
		}
	case *lua.LNilType:
		if optional {
			return nil
		}
	}
	L.TypeError(n, lua.LTTable)
	return nil
}

// asFields is fieldsTable for a value found inside another table: a table
// or a record as a table, else nil.
func asFields(L *lua.LState, x lua.LValue) *lua.LTable {
	if t, ok := x.(*lua.LTable); ok {
		return t
	}
	if v := asView(x); v != nil {
		return v.table(L)
	}
	return nil
}

func recordIndex(L *lua.LState) int {
	v := checkView(L, 1)
	L.Push(v.get(L.Get(2)))
	return 1
}

func recordNewIndex(L *lua.LState) int {
	v := checkView(L, 1)
	key, x := L.Get(2), L.Get(3)
	if key == lua.LNil {
		L.RaiseError("table index is nil")
	}
	if n, ok := key.(lua.LNumber); ok && n != n {
		L.RaiseError("table index is NaN")
	}
	v.store(L, key, x)
	return 0
}

// store is v[key] = x.
func (v *recordView) store(L *lua.LState, key, x lua.LValue) {
	_, field := v.isField(key)
	if v.set == nil {
		if x == lua.LNil && !field {
			return
		}
		v.set = L.CreateTable(0, 0)
	}
	if field && x == lua.LNil {
		x = removed
	}
	v.set.RawSet(key, x)
}

func recordLen(L *lua.LState) int {
	v := checkView(L, 1)
	n := 0
	if v.set != nil {
		n = v.set.Len()
	}
	L.Push(lua.LNumber(n))
	return 1
}

// recordPairs is __pairs: next over the record.
func recordPairs(L *lua.LState) int {
	checkView(L, 1)
	L.Push(L.Get(lua.UpvalueIndex(1)))
	L.Push(L.Get(1))
	L.Push(lua.LNil)
	return 3
}

func recordNext(L *lua.LState) int {
	v := checkView(L, 1)
	k, x := v.next(L, L.Get(2))
	if k == lua.LNil {
		L.Push(lua.LNil)
		return 1
	}
	L.Push(k)
	L.Push(x)
	return 2
}

// installPairs makes the global pairs and next walk records, so both work
// on records as on tables. pairs honours no __pairs of other values (Lua
// 5.2's rule; Lua 5.1 has none). Other values go to the functions they
// replace.
func installPairs(L *lua.LState) {
	if pairs, ok := L.GetGlobal("pairs").(*lua.LFunction); ok {
		L.SetGlobal("pairs", L.NewFunction(func(L *lua.LState) int {
			if mm := L.GetMetaField(L.Get(1), "__pairs"); mm != lua.LNil && asView(L.Get(1)) != nil {
				L.Push(mm)
				L.Push(L.Get(1))
				L.Call(1, 3)
				return 3
			}
			L.CheckTable(1) // raised here, the error names pairs as its caller called it
			return callWith(L, pairs)
		}))
	}
	if next, ok := L.GetGlobal("next").(*lua.LFunction); ok {
		L.SetGlobal("next", L.NewFunction(func(L *lua.LState) int {
			if asView(L.Get(1)) != nil {
				return recordNext(L)
			}
			L.CheckTable(1)
			return callWith(L, next)
		}))
	}
}

// callWith calls fn with the current arguments and returns all it returns.
func callWith(L *lua.LState, fn *lua.LFunction) int {
	n := L.GetTop()
	L.Insert(fn, 1)
	L.Call(n, lua.MultRet)
	return L.GetTop()
}

// secretKeys are printed as smpquery prints them: not at all (a record
// holds only zeroKey or maskedKey for them anyway).
var secretKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range mad.KeyFieldKeys() {
		m[k] = true
	}
	return m
}()

// recordString renders a record: its name, then one aligned "key  value"
// line per field.
func recordString(L *lua.LState) int {
	v := checkView(L, 1)
	mt := v.r.meta
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
			x := v.get(k)
			s := L.ToStringMeta(x).String()
			if secretKeys[key] {
				s = "<not displayed>" // as smpquery
			}
			if n, ok := x.(lua.LNumber); ok && n >= 0 {
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
