package bindings

import (
	"math"
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's value conversions, for the library functions ibscript
// replaces (docs/lua.md, "Corrections"). gopher-lua's CheckInt and
// CheckNumber refuse a numeric string and its OptInt refuses an explicit
// nil, where Lua 5.1's luaL_checkinteger, luaL_checknumber and
// luaL_optinteger convert "2" to 2 and take nil as absent; and gopher-lua
// writes a number as Go does (1.2345675e+06, +Inf, -0 as 0), where Lua 5.1
// writes it with "%.14g" (LUAI_NUMFFORMAT).

// NumberText is a number as Lua 5.1 writes it (tostring, print, "..",
// string.format's %s): C's "%.14g", with glibc's inf, -inf, nan and -nan.
func NumberText(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		if math.Signbit(f) {
			return "-nan"
		}
		return "nan"
	case f == 0 && math.Signbit(f):
		return "-0"
	case f == math.Trunc(f) && math.Abs(f) < 1e14:
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 14, 64)
}

// valueText is lua_tolstring: a string, or a number as NumberText writes
// it; ok is false for any other value.
func valueText(v lua.LValue) (string, bool) {
	switch v := v.(type) {
	case lua.LString:
		return string(v), true
	case lua.LNumber:
		return NumberText(float64(v)), true
	}
	return "", false
}

// valueNumber is lua_tonumber: a number, or a string Lua 5.1 reads as one.
func valueNumber(v lua.LValue) (float64, bool) {
	switch v := v.(type) {
	case lua.LNumber:
		return float64(v), true
	case lua.LString:
		return str2number(string(v))
	}
	return 0, false
}

// absent reports whether argument n is none or nil (lua_isnoneornil).
func absent(L *lua.LState, n int) bool {
	return L.Get(n) == lua.LNil
}

// opt is luaL_opt: def when argument n is none or nil, else check's
// reading of it.
func opt[T any](L *lua.LState, n int, def T, check func(*lua.LState, int) T) T {
	if absent(L, n) {
		return def
	}
	return check(L, n)
}

// checkArg is argument n as conv reads it, or luaL_typerror's error
// naming want.
func checkArg[T any](L *lua.LState, n int, conv func(lua.LValue) (T, bool), want lua.LValueType) T {
	v, ok := conv(L.Get(n))
	if !ok {
		L.TypeError(n, want)
	}
	return v
}

// argNumber is luaL_checknumber.
func argNumber(L *lua.LState, n int) float64 { return checkArg(L, n, valueNumber, lua.LTNumber) }

// optNumber is luaL_optnumber.
func optNumber(L *lua.LState, n int, def float64) float64 { return opt(L, n, def, argNumber) }

// toInteger is C's (lua_Integer) cast of a double on x86-64 (cvttsd2si):
// toward zero, and the "integer indefinite" value for NaN and what does
// not fit.
func toInteger(f float64) int64 {
	if math.IsNaN(f) || f >= 1<<63 || f < -(1<<63) {
		return math.MinInt64
	}
	return int64(f)
}

// toInt32 is C's (int) cast of a double on x86-64: toward zero, and
// INT_MIN for NaN and what does not fit.
func toInt32(f float64) int32 {
	if math.IsNaN(f) || f >= 1<<31 || f < -(1<<31) {
		return math.MinInt32
	}
	return int32(f)
}

// toUnsigned is C's (unsigned long) cast of a double as gcc compiles it
// on x86-64: from 2^63 up with 2^63 taken off and put back, anything
// else (NaN too) through the signed conversion.
func toUnsigned(f float64) uint64 {
	if f >= 1<<63 {
		return uint64(toInteger(f-(1<<63))) ^ (1 << 63)
	}
	return uint64(toInteger(f))
}

// argInteger is luaL_checkinteger.
func argInteger(L *lua.LState, n int) int64 {
	return toInteger(argNumber(L, n))
}

// optInteger is luaL_optinteger.
func optInteger(L *lua.LState, n int, def int64) int64 { return opt(L, n, def, argInteger) }

// argInt is luaL_checkint: luaL_checkinteger cut to C's 32-bit int.
func argInt(L *lua.LState, n int) int {
	return int(int32(argInteger(L, n)))
}

// optInt is luaL_optint.
func optInt(L *lua.LState, n int, def int) int { return opt(L, n, def, argInt) }

// argString is luaL_checklstring: a string, or a number as text.
func argString(L *lua.LState, n int) string { return checkArg(L, n, valueText, lua.LTString) }

// optString is luaL_optlstring.
func optString(L *lua.LState, n int, def string) string { return opt(L, n, def, argString) }

// argTable is luaL_checktype(L, n, LUA_TTABLE).
func argTable(L *lua.LState, n int) *lua.LTable {
	t, ok := L.Get(n).(*lua.LTable)
	if !ok {
		L.TypeError(n, lua.LTTable)
	}
	return t
}

// posrelat is lstrlib's posrelat: a negative position counts from the end
// of a string of length l; what is still negative is 0.
func posrelat(pos int64, l int) int64 {
	if pos < 0 {
		pos += int64(l) + 1
	}
	return max(pos, 0)
}
