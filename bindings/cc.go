package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
)

func ccModule() Module {
	return Module{
		Name:    "cc",
		Summary: "Congestion Control (class 0x21), as ibccquery and ibccconfig reach it",
		Funcs: []Func{
			{"get", ccGet, "get(target, attribute [, modifier]) -> table: a Congestion Control attribute by IBA name (\"CongestionInfo\", \"SwitchPortCongestionSetting\"), ibccquery alias (\"CI\", \"SP\") or ID, with its attribute modifier (a block of 32 switch ports, of 64 CongestionControlTable entries; default 0); CongestionLog is decoded in the switch or CA layout its LogType says. The CC_Key sent is --cckey's or $IBSCRIPT_CCKEY's"},
			{"set", ccSet, "set(target, attribute, fields [, modifier]) -> table: a Set of a Congestion Control attribute (SwitchCongestionSetting, SwitchPortCongestionSetting, CACongestionSetting, CongestionControlTable) built from fields (snake_case keys as cc.get returns them; fields not given are zero), as ibccconfig sends it; returns the agent's answer. CongestionKeyInfo, which holds the CC_Key, is refused"},
		},
	}
}

// ccKeyInfoRefused is why a script cannot Set CongestionKeyInfo.
const ccKeyInfoRefused = "CongestionKeyInfo holds the CC_Key, which scripts never handle (set it with ibccconfig or engine.Set)"

// ccLayout reads an attribute argument: a name, an alias or an ID.
func ccLayout(L *lua.LState, fn string, n int) *mad.Layout {
	var l *mad.Layout
	switch v := L.Get(n).(type) {
	case lua.LString:
		if l = cc.LayoutByName(string(v)); l == nil {
			raise(L, fn, "unknown Congestion Control attribute %q", string(v))
		}
	case lua.LNumber:
		if l = cc.LayoutByID(uint16(v)); l == nil {
			raise(L, fn, "unknown Congestion Control attribute ID 0x%04x", uint16(v))
		}
	default:
		L.ArgError(n, "attribute name or ID expected, got "+v.Type().String())
	}
	return l
}

func ccGet(e *Env, L *lua.LState) int {
	t := checkTarget(L, "cc.get", 1)
	l := ccLayout(L, "cc.get", 2)
	mod := uint32(optUint(L, 3, 0, 0xffffffff))
	data, err := e.sess.CC(L.Context(), t, mad.MethodGet, l.ID, mod, nil)
	if err != nil {
		raise(L, "cc.get", "%v", err)
	}
	if l.ID == cc.AttrCongestionLog {
		if l, err = cc.LogLayout(data); err != nil {
			raise(L, "cc.get", "%s: %v", t, err)
		}
	}
	L.Push(e.layoutTable(l, data))
	return 1
}

func ccSet(e *Env, L *lua.LState) int {
	t := checkTarget(L, "cc.set", 1)
	l := ccLayout(L, "cc.set", 2)
	fields := L.CheckTable(3)
	mod := uint32(optUint(L, 4, 0, 0xffffffff))
	if l.ID == cc.AttrCongestionKeyInfo {
		raise(L, "cc.set", "%s", ccKeyInfoRefused)
	}
	data := make([]byte, l.Size)
	if err := encodeTable(l, fields, data); err != nil {
		raise(L, "cc.set", "bad argument #3 (fields): %v", err)
	}
	resp, err := e.sess.CC(L.Context(), t, mad.MethodSet, l.ID, mod, data)
	if err != nil {
		raise(L, "cc.set", "%v", err)
	}
	L.Push(e.layoutTable(l, resp))
	return 1
}
