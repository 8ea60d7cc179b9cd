package bindings

import (
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

// TestFastTablesEnabled fails when gopher-lua's LTable no longer has the
// layout fasttable.go mirrors: records still work (through RawSetString)
// but at half the speed, so whoever upgrades gopher-lua should know.
func TestFastTablesEnabled(t *testing.T) {
	if !fastTables {
		t.Fatal("gopher-lua's LTable layout differs from ltableMirror: decoded records take the slow path; update fasttable.go")
	}
}

// TestRecordTablesBehaveAsTables builds records of several layouts both
// ways and checks that Lua sees the same thing: every key, pairs order,
// length, and that a key one script adds to one record shows up in its
// pairs and nowhere else.
func TestRecordTablesBehaveAsTables(t *testing.T) {
	if !fastTables {
		t.Skip("fast record tables disabled: TestFastTablesEnabled says why")
	}
	layouts := []*mad.Layout{&smp.NodeInfoLayout, &smp.PortInfoLayout, &smp.SwitchInfoLayout, &mad.HeaderLayout, &sa.PathRecordLayout, perf.LayoutByID(perf.AttrPortCounters)}
	L := lua.NewState()
	defer L.Close()
	e := &Env{L: L}
	for _, l := range layouts {
		b := make([]byte, l.Size)
		for i := range b {
			b[i] = byte(i*37 + 11)
		}
		fast := e.layoutTable(l, b)
		r := e.record(l)
		slow := L.CreateTable(0, len(l.Fields))
		for i, f := range l.Fields {
			v := fieldValue(f, b)
			if mad.IsKeyField(f.Name) && v != zeroKey {
				v = maskedKey // keys reach no script
			}
			slow.RawSetString(r.keys[i], v)
		}
		L.SetMetatable(slow, r.meta)
		L.SetGlobal("fast", fast)
		L.SetGlobal("slow", slow)
		L.SetGlobal("other", e.layoutTable(l, b))
		script := `
			local function order(t)
				local ks = {}
				for k, v in pairs(t) do ks[#ks + 1] = k .. "=" .. tostring(v) end
				return table.concat(ks, ",")
			end
			assert(order(fast) == order(slow), "pairs order differs:\n" .. order(fast) .. "\n" .. order(slow))
			assert(#fast == #slow and next(fast) == next(slow))
			assert(tostring(fast) == tostring(slow), "tostring differs")
			fast.added_by_script = 7
			fast[1] = "one"
			local k1 = next(fast)
			assert(k1 == 1, "array part first")
			local seen = false
			for k, v in pairs(fast) do if k == "added_by_script" then seen = (v == 7) end end
			assert(seen, "added key missing from pairs")
			for k in pairs(other) do assert(k ~= "added_by_script", "added key leaked into another record") end
			assert(other.added_by_script == nil)
			local first = next(slow)
			fast[first] = nil
			for k in pairs(fast) do assert(k ~= first, "deleted key still in pairs") end
		`
		if err := DoString(L, script); err != nil {
			t.Fatalf("%s: %v", l.Name, err)
		}
	}
}

// TestTemplateDuplicateKeys: a key list with a key twice cannot share its
// order (pairs would yield the key twice); such tables are built key by
// key, the last value winning, as RawSetString does.
func TestTemplateDuplicateKeys(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	tpl := newTableTemplate([]string{"a", "b", "a"})
	if tpl.share {
		t.Fatal("a template with a duplicate key shares its key order")
	}
	L.SetGlobal("t", tpl.table(L, []lua.LValue{lua.LNumber(1), lua.LNumber(2), lua.LNumber(3)}, nil))
	if err := DoString(L, `local n = 0; for k in pairs(t) do n = n + 1 end; assert(n == 2 and t.a == 3 and t.b == 2)`); err != nil {
		t.Fatal(err)
	}
}
