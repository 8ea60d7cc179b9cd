package bindings

import (
	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1 has no bitwise operators; masks (widths, speeds, capability
// bits) need them. The names follow LuaJIT's bit module. Values are
// unsigned 32-bit.
func bitModule() Module {
	return Module{
		Name:    "bit",
		Summary: "bitwise operations on unsigned 32-bit numbers (LuaJIT names)",
		Funcs: []Func{
			{"band", bitFold(func(a, b uint32) uint32 { return a & b }), "band(a, b, ...) -> number: bitwise and"},
			{"bor", bitFold(func(a, b uint32) uint32 { return a | b }), "bor(a, b, ...) -> number: bitwise or"},
			{"bxor", bitFold(func(a, b uint32) uint32 { return a ^ b }), "bxor(a, b, ...) -> number: bitwise exclusive or"},
			{"bnot", bitNot, "bnot(a) -> number: bitwise not"},
			{"lshift", bitShift(func(a uint32, n uint) uint32 { return a << n }), "lshift(a, n) -> number: a shifted left n bits"},
			{"rshift", bitShift(func(a uint32, n uint) uint32 { return a >> n }), "rshift(a, n) -> number: a shifted right n bits"},
		},
	}
}

func checkU32(L *lua.LState, n int) uint32 {
	return uint32(checkUint(L, n, 0xffffffff))
}

func bitFold(op func(a, b uint32) uint32) func(*Env, *lua.LState) int {
	return func(_ *Env, L *lua.LState) int {
		v := checkU32(L, 1)
		for i := 2; i <= L.GetTop(); i++ {
			v = op(v, checkU32(L, i))
		}
		L.Push(lua.LNumber(v))
		return 1
	}
}

func bitNot(_ *Env, L *lua.LState) int {
	L.Push(lua.LNumber(^checkU32(L, 1)))
	return 1
}

func bitShift(op func(uint32, uint) uint32) func(*Env, *lua.LState) int {
	return func(_ *Env, L *lua.LState) int {
		a := checkU32(L, 1)
		n := uint(checkUint(L, 2, 31))
		L.Push(lua.LNumber(op(a, n)))
		return 1
	}
}
