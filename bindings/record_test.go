package bindings

import (
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

// TestRecordsBehaveAsTables builds records of several layouts as views and
// as the plain tables they stand for, and checks that Lua sees the same
// thing: every key and value, pairs and next order (wire order), length,
// tostring; that a key a script adds to one record shows up in its pairs
// after the fields (1, 2, ... first, as a table's) and nowhere else; that a removed field reads nil and
// leaves pairs, and an overridden one reads the new value.
func TestRecordsBehaveAsTables(t *testing.T) {
	layouts := []*mad.Layout{smp.NodeInfoLayout(), smp.PortInfoLayout(), smp.SwitchInfoLayout(), mad.HeaderLayout(), sa.PathRecordLayout(), perf.LayoutByID(perf.AttrPortCounters), smp.SMInfoLayout()}
	L := lua.NewState()
	defer L.Close()
	e := &Env{L: L}
	installPairs(L)
	for _, l := range layouts {
		b := make([]byte, l.Size)
		for i := range b {
			b[i] = byte(i*37 + 11)
		}
		view := e.layoutTable(l, b)
		r := e.record(l)
		plain := L.CreateTable(0, len(l.Fields))
		for i, f := range l.Fields {
			v := fieldValue(f, b)
			if mad.IsKeyField(f.Name) && v != zeroKey {
				v = maskedKey // keys reach no script
			}
			plain.RawSet(r.keys[i], v)
		}
		L.SetGlobal("view", view)
		L.SetGlobal("plain", plain)
		L.SetGlobal("other", e.layoutTable(l, b))
		L.SetGlobal("name", lua.LString(l.Name))
		script := `
			local function order(t)
				local ks = {}
				for k, v in pairs(t) do ks[#ks + 1] = tostring(k) .. "=" .. tostring(v) end
				return table.concat(ks, ",")
			end
			local function nextorder(t)
				local ks, k, v = {}, next(t)
				while k ~= nil do ks[#ks + 1] = tostring(k) .. "=" .. tostring(v); k, v = next(t, k) end
				return table.concat(ks, ",")
			end
			assert(order(view) == order(plain), "pairs differs:\n" .. order(view) .. "\n" .. order(plain))
			assert(nextorder(view) == order(plain), "next differs:\n" .. nextorder(view))
			for k, v in pairs(plain) do assert(view[k] == v, k) end
			assert(view.no_such_field == nil and view[1] == nil)
			assert(#view == 0)
			local s = tostring(view)
			assert(s:sub(1, #name) == name, s)
			local first = next(view)
			local _, second = next(view, first)
			view.added_by_script = 7
			view[1] = "one"
			assert(#view == 1 and view[1] == "one" and view.added_by_script == 7)
			local ks = {}
			for k, v in pairs(view) do ks[#ks + 1] = k end
			assert(ks[1] == first, "fields first")
			assert(ks[#ks - 1] == 1 and ks[#ks] == "added_by_script", "added keys last, as a table yields them: " .. tostring(ks[#ks - 1]))
			for k in pairs(other) do assert(k ~= "added_by_script" and k ~= 1, "added key leaked into another record") end
			assert(other.added_by_script == nil)
			view[first] = nil
			assert(view[first] == nil)
			for k in pairs(view) do assert(k ~= first, "removed field still in pairs") end
			assert(next(view) ~= first)
			view[first] = "back"
			assert(view[first] == "back")
			view.added_by_script = nil
			for k in pairs(view) do assert(k ~= "added_by_script", "removed key still in pairs") end
			assert(not pcall(function() view[nil] = 1 end))
			assert(tostring(other) == s, "tostring of an untouched record")
		`
		if err := DoString(L, script); err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
	}
}

// TestRecordKeysMasked: a record never holds a key field's bytes, and
// reads it as "<masked>" or the zero GUID.
func TestRecordKeysMasked(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	e := &Env{L: L}
	b := make([]byte, smp.PortInfoLayout().Size)
	f, _ := smp.PortInfoLayout().Field("M_Key")
	f.Put(b, 0x1122334455667788)
	v := e.layoutTable(smp.PortInfoLayout(), b)
	if got := asView(v).get(lua.LString("m_key")); got != maskedKey {
		t.Errorf("m_key = %v, want %v", got, maskedKey)
	}
	if f.Get(asView(v).b) != 0 {
		t.Error("the record keeps the M_Key's bytes")
	}
	v = e.layoutTable(smp.PortInfoLayout(), make([]byte, smp.PortInfoLayout().Size))
	if got := asView(v).get(lua.LString("m_key")); got != zeroKey {
		t.Errorf("zero m_key = %v, want %v", got, zeroKey)
	}
}

// TestPairsMetamethod: the global pairs ignores __pairs on tables, as Lua
// 5.1 does (records are walked by next; TestRecord* covers them).
func TestPairsMetamethod(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	installPairs(L)
	err := DoString(L, `
		local t = setmetatable({x = 1}, {__pairs = function(self) return function(_, k) if k == nil then return "only", 1 end end, self, nil end})
		local n = 0
		for k, v in pairs(t) do assert(k == "x" and v == 1); n = n + 1 end
		assert(n == 1)
		local plain, seen = {a = 1, 2}, 0
		for k, v in pairs(plain) do seen = seen + 1 end
		assert(seen == 2 and next(plain) == 1)
		assert(not pcall(pairs, 5))
	`)
	if err != nil {
		t.Fatal(err)
	}
}

// TestSweepFieldsMasked: fabric.sweep's fields option picks fields from a
// PortInfo that carries an M_Key; the key reads "<masked>", as in a record
// (it read the raw key before).
func TestSweepFieldsMasked(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	e := &Env{L: L}
	l := smp.PortInfoLayout()
	b := make([]byte, l.Size)
	f, _ := l.Field("M_Key")
	f.Put(b, 0x1122334455667788)
	var only []int
	for j, g := range l.Fields {
		if g.Name == "M_Key" || g.Name == "LID" {
			only = append(only, j)
		}
	}
	for _, nonzero := range []bool{false, true} {
		tb := e.someFields(l, b, only, nonzero)
		if got := tb.RawGetString("m_key"); got != maskedKey {
			t.Errorf("nonzero=%v: m_key = %v, want %v", nonzero, got, maskedKey)
		}
		if got := tb.RawGetString("lid"); (got == lua.LNil) != nonzero {
			t.Errorf("nonzero=%v: lid = %v", nonzero, got)
		}
	}
}
