package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
)

// Helpers of the point-query tools' functions (diag_perfquery.go, ...);
// diag.smpquery itself is a diag.Tool (diag_tool.go).

// diagTarget reads option target as checkTarget reads a target
// argument (luaTarget: a LID as a number, or a target string); required
// makes a missing one an error.
func diagTarget(L *lua.LState, fn string, o *lua.LTable, required bool) engine.Target {
	v := o.RawGetString("target")
	if v == lua.LNil {
		if required {
			raise(L, fn, "target is required (a LID, \"lid:N\", \"dr:0,1\" or \"guid:0x...\")")
		}
		return engine.Target{}
	}
	t, _, err := luaTarget(v)
	if err != nil {
		raise(L, fn, "target: %v", err)
	}
	return t
}

// diagTargetPtr is diagTarget for the tools whose target is optional
// (nil: the local port, or its SM).
func diagTargetPtr(L *lua.LState, fn string, o *lua.LTable) *engine.Target {
	if o.RawGetString("target") == lua.LNil {
		return nil
	}
	t := diagTarget(L, fn, o, true)
	return &t
}

// diagNum reads numeric option key (def when absent), at most limit.
func diagNum(L *lua.LState, fn string, o *lua.LTable, key string, def, limit uint64) uint64 {
	switch v := o.RawGetString(key).(type) {
	case *lua.LNilType:
		return def
	case lua.LNumber:
		if v < 0 || float64(v) > float64(limit) || v != lua.LNumber(uint64(v)) {
			raise(L, fn, "%s %v: want an integer 0..%d", key, v, limit)
		}
		return uint64(v)
	default:
		raise(L, fn, "%s: want a number, got %s", key, v.Type())
	}
	return def
}

// diagStrings reads option key as a sequence of strings.
func diagStrings(L *lua.LState, fn string, o *lua.LTable, key string) []string {
	var out []string
	switch v := o.RawGetString(key).(type) {
	case *lua.LNilType:
	case *lua.LTable:
		for i := 1; i <= v.Len(); i++ {
			out = append(out, lua.LVAsString(v.RawGetInt(i)))
		}
	case lua.LString:
		out = []string{string(v)}
	default:
		raise(L, fn, "%s: want a string or a list of strings, got %s", key, v.Type())
	}
	return out
}
