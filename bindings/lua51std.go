package bindings

import (
	"math"
	"runtime"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Lua 5.1's string, table, math and base functions, each as lstrlib.c,
// ltablib.c, lmathlib.c and lbaselib.c of Lua 5.1.5 define it, where
// gopher-lua v1.1.2's differ (docs/lua.md, "Corrections"): arguments are
// converted as luaL_checkinteger, luaL_optinteger, luaL_checknumber and
// luaL_checklstring convert them (lua51args.go), numbers become text as
// "%.14g", and the table functions move elements exactly as 5.1 does.

// installStd51 replaces those functions in L's libraries.
func installStd51(L *lua.LState) {
	set := func(lib string, fns map[string]lua.LGFunction) {
		t, ok := L.GetGlobal(lib).(*lua.LTable)
		if !ok {
			return
		}
		for name, fn := range fns {
			t.RawSetString(name, L.NewFunction(fn))
		}
	}
	set("string", map[string]lua.LGFunction{
		"len":     strLen,
		"sub":     strSub,
		"rep":     strRep,
		"reverse": strReverse,
	})
	set("table", map[string]lua.LGFunction{
		"concat": tabConcat,
		"insert": tabInsert,
		"remove": tabRemove,
		"sort":   tabSort,
		"setn":   func(L *lua.LState) int { L.RaiseError("'setn' is obsolete"); return 0 },
	})
	if m, ok := L.GetGlobal("math").(*lua.LTable); ok {
		installMath51(L, m)
	}
	gc := &gcState{pause: 200, stepmul: 200}
	for name, fn := range map[string]lua.LGFunction{
		"tostring":       baseToString,
		"select":         baseSelect,
		"unpack":         baseUnpack,
		"assert":         baseAssert,
		"collectgarbage": gc.collectgarbage,
		"gcinfo":         baseGcinfo,
		"newproxy":       baseNewproxy,
	} {
		L.SetGlobal(name, L.NewFunction(fn))
	}
	if t, ok := L.GetGlobal("table").(*lua.LTable); ok {
		t.RawSetString("unpack", lua.LNil) // 5.2's name; 5.1 has only the global
	}
	if os, ok := L.GetGlobal("os").(*lua.LTable); ok && os.RawGetString("difftime") != lua.LNil {
		os.RawSetString("difftime", L.NewFunction(func(L *lua.LState) int {
			L.Push(lua.LNumber(argNumber(L, 1) - optNumber(L, 2, 0)))
			return 1
		}))
	}
	installStringArith(L)
}

func strLen(L *lua.LState) int {
	L.Push(lua.LNumber(len(argString(L, 1))))
	return 1
}

func strSub(L *lua.LState) int {
	s := argString(L, 1)
	l := len(s)
	start := posrelat(argInteger(L, 2), l)
	end := posrelat(optInteger(L, 3, -1), l)
	start = max(start, 1)
	end = min(end, int64(l))
	if start <= end {
		L.Push(lua.LString(s[start-1 : end]))
	} else {
		L.Push(lua.LString(""))
	}
	return 1
}

func strRep(L *lua.LState) int {
	s := argString(L, 1)
	n := argInt(L, 2)
	if n <= 0 || s == "" {
		L.Push(lua.LString(""))
		return 1
	}
	L.Push(lua.LString(strings.Repeat(s, n)))
	return 1
}

func strReverse(L *lua.LState) int {
	s := []byte(argString(L, 1))
	for i, j := 0, len(s)-1; i < j; i, j = i+1, j-1 {
		s[i], s[j] = s[j], s[i]
	}
	L.Push(lua.LString(s))
	return 1
}

// geti is lua_rawgeti (gopher-lua's RawGetInt sees only the array part:
// t[0] and t[-1] read nil).
func geti(t *lua.LTable, i int) lua.LValue { return t.RawGet(lua.LNumber(i)) }

// seti is lua_rawseti.
func seti(t *lua.LTable, i int, v lua.LValue) { t.RawSet(lua.LNumber(i), v) }

// tabLen is luaL_getn: the table's length without __len.
func tabLen(t *lua.LTable) int { return t.Len() }

// call2 calls fn(a, b) unprotected and returns its first result.
func call2(L *lua.LState, fn, a, b lua.LValue) lua.LValue {
	L.Push(fn)
	L.Push(a)
	L.Push(b)
	L.Call(2, 1)
	r := L.Get(-1)
	L.Pop(1)
	return r
}

// optEnd is table.concat's and unpack's last-index argument n:
// luaL_opt(L, luaL_checkint, n, luaL_getn(L, 1)).
func optEnd(L *lua.LState, n int, t *lua.LTable) int { return opt(L, n, tabLen(t), argInt) }

func tabConcat(L *lua.LState) int {
	sep := optString(L, 2, "")
	t := argTable(L, 1)
	i := optInt(L, 3, 1)
	last := optEnd(L, 4, t)
	var b strings.Builder
	field := func(i int) {
		v := geti(t, i)
		s, ok := valueText(v)
		if !ok {
			// Debian's lua5.1 (5.1.5) names the value's type
			L.RaiseError("invalid value (%s) at index %d in table for 'concat'", v.Type().String(), i)
		}
		b.WriteString(s)
	}
	for ; i < last; i++ {
		field(i)
		b.WriteString(sep)
	}
	if i == last {
		field(i)
	}
	L.Push(lua.LString(b.String()))
	return 1
}

func tabInsert(L *lua.LState) int {
	t := argTable(L, 1)
	e := tabLen(t) + 1
	var pos int
	switch L.GetTop() {
	case 2:
		pos = e
	case 3:
		pos = argInt(L, 2)
		e = max(e, pos)
		shiftUp(t, pos, e)
	default:
		L.RaiseError("wrong number of arguments to 'insert'")
	}
	seti(t, pos, L.Get(L.GetTop()))
	return 0
}

// shiftUp is ltablib's "for (i = e; i > pos; i--) t[i] = t[i-1]": every
// key from pos to e-1 moves up by one. A range far longer than the table
// (table.insert(t, -2^31, v) walks two billion keys in Lua 5.1) moves
// only the keys the table has, to the same result.
func shiftUp(t *lua.LTable, pos, e int) {
	if e-pos <= 4096 || e-pos <= 4*t.Len() {
		for i := e; i > pos; i-- {
			seti(t, i, geti(t, i-1))
		}
		return
	}
	type kv struct {
		k int
		v lua.LValue
	}
	var moved []kv
	for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
		if n, ok := k.(lua.LNumber); ok && float64(n) == math.Trunc(float64(n)) && int(n) >= pos && int(n) < e {
			moved = append(moved, kv{int(n), v})
		}
	}
	for _, m := range moved {
		seti(t, m.k, lua.LNil)
	}
	for _, m := range moved {
		seti(t, m.k+1, m.v)
	}
}

func tabRemove(L *lua.LState) int {
	t := argTable(L, 1)
	e := tabLen(t)
	pos := optInt(L, 2, e)
	if pos < 1 || pos > e {
		return 0
	}
	v := geti(t, pos)
	for ; pos < e; pos++ {
		seti(t, pos, geti(t, pos+1))
	}
	seti(t, e, lua.LNil)
	L.Push(v)
	return 1
}

// tabSort is ltablib's auxsort, step for step, so that a comparison
// function sees the same pairs and equal elements end in the same order
// as in Lua 5.1.
func tabSort(L *lua.LState) int {
	t := argTable(L, 1)
	n := tabLen(t)
	var cmp lua.LValue
	if !absent(L, 2) {
		if L.Get(2).Type() != lua.LTFunction {
			L.TypeError(2, lua.LTFunction)
		}
		cmp = L.Get(2)
	}
	less := func(a, b lua.LValue) bool {
		if cmp == nil {
			return lessThan51(L, a, b)
		}
		return lua.LVAsBool(call2(L, cmp, a, b))
	}
	if cmp == nil && sortDistinct(t, n) {
		return 0
	}
	get := func(i int) lua.LValue { return geti(t, i) }
	set := func(i int, v lua.LValue) { seti(t, i, v) }
	var auxsort func(l, u int)
	auxsort = func(l, u int) {
		for l < u {
			if a, b := get(l), get(u); less(b, a) {
				set(l, b)
				set(u, a)
			}
			if u-l == 1 {
				break
			}
			i := (l + u) / 2
			if a, b := get(i), get(l); less(a, b) {
				set(i, b)
				set(l, a)
			} else if c := get(u); less(c, a) {
				set(i, c)
				set(u, a)
			}
			if u-l == 2 {
				break
			}
			p := get(i)
			set(i, get(u-1))
			set(u-1, p)
			i, j := l, u-1
			for {
				for i++; less(get(i), p); i++ {
					if i > u {
						L.RaiseError("invalid order function for sorting")
					}
				}
				for j--; less(p, get(j)); j-- {
					if j < l {
						L.RaiseError("invalid order function for sorting")
					}
				}
				if j < i {
					break
				}
				a, b := get(i), get(j)
				set(i, b)
				set(j, a)
			}
			a, b := get(u-1), get(i)
			set(u-1, b)
			set(i, a)
			if i-l < u-i {
				j, i, l = l, i-1, i+1
			} else {
				j, i, u = i+1, u, i-1
			}
			auxsort(j, i)
		}
	}
	auxsort(1, n)
	return 0
}

// sortDistinct sorts t[1..n] with Go's sort when every element is a
// number (no NaN, no -0) or every one a string: then equal elements cannot
// be told apart, any sort gives auxsort's result, and no comparison can
// fail. It reports whether it did.
func sortDistinct(t *lua.LTable, n int) bool {
	if n < 2 {
		return false
	}
	switch geti(t, 1).(type) {
	case lua.LNumber:
		nums := make([]float64, n)
		for i := range nums {
			v, ok := geti(t, i+1).(lua.LNumber)
			f := float64(v)
			if !ok || math.IsNaN(f) || (f == 0 && math.Signbit(f)) {
				return false
			}
			nums[i] = f
		}
		slices.Sort(nums)
		for i, f := range nums {
			seti(t, i+1, lua.LNumber(f))
		}
		return true
	case lua.LString:
		strs := make([]string, n)
		for i := range strs {
			v, ok := geti(t, i+1).(lua.LString)
			if !ok {
				return false
			}
			strs[i] = string(v)
		}
		slices.Sort(strs)
		for i, s := range strs {
			seti(t, i+1, lua.LString(s))
		}
		return true
	}
	return false
}

// lessThan51 is lua_lessthan called from a C function: an error has no
// position (luaG_ordererror adds one only in a Lua function).
func lessThan51(L *lua.LState, a, b lua.LValue) bool {
	switch x := a.(type) {
	case lua.LNumber:
		if y, ok := b.(lua.LNumber); ok {
			return x < y
		}
	case lua.LString:
		if y, ok := b.(lua.LString); ok {
			return x < y
		}
	}
	if a.Type() == b.Type() {
		if tm := L.GetMetaField(a, "__lt"); tm != lua.LNil && tm == L.GetMetaField(b, "__lt") {
			return lua.LVAsBool(call2(L, tm, a, b))
		}
	}
	t1, t2 := a.Type().String(), b.Type().String()
	if t1 == t2 {
		L.Error(lua.LString("attempt to compare two "+t1+" values"), 0)
	}
	L.Error(lua.LString("attempt to compare "+t1+" with "+t2), 0)
	return false
}

// baseToString is Lua 5.1's tostring: __tostring, else numbers as
// "%.14g" and other values as gopher-lua names them.
func baseToString(L *lua.LState) int {
	v := L.CheckAny(1)
	if mm := L.GetMetaField(v, "__tostring"); mm != lua.LNil {
		L.Push(mm)
		L.Push(v)
		L.Call(1, 1)
		return 1
	}
	L.Push(lua.LString(toStringBasic(v)))
	return 1
}

// toStringBasic is tostring without __tostring.
func toStringBasic(v lua.LValue) string {
	if n, ok := v.(lua.LNumber); ok {
		return NumberText(float64(n))
	}
	return v.String()
}

// tostringOf calls the global tostring on v, as Lua 5.1's print does,
// and wants a string back.
func tostringOf(L *lua.LState, tostring, v lua.LValue) string {
	L.Push(tostring)
	L.Push(v)
	L.Call(1, 1)
	r := L.Get(-1)
	L.Pop(1)
	s, ok := r.(lua.LString)
	if !ok {
		if n, isNum := r.(lua.LNumber); isNum {
			return NumberText(float64(n))
		}
		L.RaiseError("'tostring' must return a string to 'print'")
	}
	return string(s)
}

func baseSelect(L *lua.LState) int {
	n := L.GetTop()
	if s, ok := L.Get(1).(lua.LString); ok && strings.HasPrefix(string(s), "#") {
		L.Push(lua.LNumber(n - 1))
		return 1
	}
	i := argInt(L, 1)
	if i < 0 {
		i = n + i
	} else if i > n {
		i = n
	}
	if i < 1 {
		L.ArgError(1, "index out of range")
	}
	return n - i
}

// maxCStack is LUAI_MAXCSTACK, the most values a C function may push.
const maxCStack = 8000

func baseUnpack(L *lua.LState) int {
	t := argTable(L, 1)
	i := optInt(L, 2, 1)
	e := optEnd(L, 3, t)
	if i > e {
		return 0
	}
	n := int64(e) - int64(i) + 1
	if n <= 0 || n > int64(maxCStack-L.GetTop()) {
		L.RaiseError("too many results to unpack")
	}
	for k := int64(i); k <= int64(e); k++ {
		L.Push(geti(t, int(k)))
	}
	return int(n)
}

// baseAssert: the message is a string (a number becomes one), with the
// caller's position, as luaL_error writes it.
func baseAssert(L *lua.LState) int {
	L.CheckAny(1)
	if !lua.LVAsBool(L.Get(1)) {
		L.RaiseError("%s", optString(L, 2, "assertion failed!"))
	}
	return L.GetTop()
}

// gcState is what collectgarbage keeps: the pause and step multiplier
// settings (Go's collector has no such knobs, so they are only kept and
// given back, as 5.1 gives back the previous value).
type gcState struct{ pause, stepmul int }

func (g *gcState) collectgarbage(L *lua.LState) int {
	opts := []string{"stop", "restart", "collect", "count", "step", "setpause", "setstepmul"}
	opt := optString(L, 1, "collect")
	ex := optInt(L, 2, 0)
	switch opt {
	case "stop", "restart":
		L.Push(lua.LNumber(0))
	case "collect":
		runtime.GC()
		L.Push(lua.LNumber(0))
	case "count":
		L.Push(lua.LNumber(float64(HeapInUse()) / 1024))
	case "step":
		// Lua 5.1 runs one step and says whether it finished a cycle; a
		// step of Go's collector is a whole cycle.
		runtime.GC()
		L.Push(lua.LTrue)
	case "setpause":
		L.Push(lua.LNumber(g.pause))
		g.pause = ex
	case "setstepmul":
		L.Push(lua.LNumber(g.stepmul))
		g.stepmul = ex
	default:
		_ = opts
		L.ArgError(1, "invalid option '"+opt+"'")
	}
	return 1
}

func baseGcinfo(L *lua.LState) int {
	L.Push(lua.LNumber(HeapInUse() / 1024))
	return 1
}

// baseNewproxy is 5.1's undocumented newproxy: a userdata, with a new
// metatable when the argument is true, or another proxy's metatable.
func baseNewproxy(L *lua.LState) int {
	ud := L.NewUserData()
	switch v := L.Get(1).(type) {
	case lua.LBool:
		if v {
			L.SetMetatable(ud, L.NewTable())
		}
	case *lua.LNilType:
	case *lua.LUserData:
		L.SetMetatable(ud, L.GetMetatable(v))
	default:
		L.ArgError(1, "boolean or proxy expected")
	}
	L.Push(ud)
	return 1
}

// installMath51 replaces the math library: every argument converted as
// luaL_checknumber does, C's results (math.modf of an infinity), and
// math.random as glibc's rand() under 5.1's formula, so that a seed gives
// the numbers it gives under lua5.1.
func installMath51(L *lua.LState, m *lua.LTable) {
	f1 := func(fn func(float64) float64) lua.LGFunction {
		return func(L *lua.LState) int {
			L.Push(lua.LNumber(fn(argNumber(L, 1))))
			return 1
		}
	}
	f2 := func(fn func(a, b float64) float64) lua.LGFunction {
		return func(L *lua.LState) int {
			// gcc evaluates fmod(luaL_checknumber(L, 1),
			// luaL_checknumber(L, 2))'s arguments right to left: a bad
			// second argument is the one reported
			b := argNumber(L, 2)
			L.Push(lua.LNumber(fn(argNumber(L, 1), b)))
			return 1
		}
	}
	// glibc's NaNs: a NaN argument comes back as it is (sign included),
	// and an invalid operation gives the x86 default NaN, -nan
	nanIn := func(fn func(float64) float64) func(float64) float64 {
		return func(x float64) float64 {
			if math.IsNaN(x) {
				return x
			}
			return fn(x)
		}
	}
	trig := func(fn func(float64) float64) func(float64) float64 {
		return nanIn(func(x float64) float64 {
			if math.IsInf(x, 0) {
				return negNaN
			}
			return fn(x)
		})
	}
	rng := &math51Rand{newGlibcRand(1)}
	for name, fn := range map[string]lua.LGFunction{
		"abs": f1(math.Abs), "acos": f1(nanIn(math.Acos)), "asin": f1(nanIn(math.Asin)), "atan": f1(nanIn(math.Atan)),
		"ceil": f1(math.Ceil), "cos": f1(trig(math.Cos)), "cosh": f1(nanIn(func(x float64) float64 { return hyperbolic(math.Cosh, x, false) })), "exp": f1(nanIn(exp51)),
		"floor": f1(math.Floor), "sin": f1(trig(math.Sin)),
		"log": f1(nanIn(func(x float64) float64 {
			if x < 0 {
				return negNaN
			}
			return log51(x)
		})),
		"log10": f1(nanIn(func(x float64) float64 { return log51(x) * (1 / math.Ln10) })),
		"sinh":  f1(nanIn(func(x float64) float64 { return hyperbolic(math.Sinh, x, true) })), "sqrt": f1(math.Sqrt), "tan": f1(trig(math.Tan)), "tanh": f1(nanIn(math.Tanh)),
		"deg": f1(func(x float64) float64 { return x / (math.Pi / 180) }),
		"rad": f1(func(x float64) float64 { return x * (math.Pi / 180) }),
		"atan2": f2(func(y, x float64) float64 {
			if math.IsNaN(x) {
				return x // glibc's x + y: the first NaN operand
			}
			if math.IsNaN(y) {
				return y
			}
			r := math.Atan2(y, x)
			if x < 0 && y != 0 && math.Signbit(r) != math.Signbit(y) {
				// Go computes atan(y/x) first: for y/x underflowing to
				// +0 it gives pi where C gives -pi (y = -5e-324, x = -2^63)
				r = -r
			}
			return r
		}),
		"fmod": f2(fmod51), "mod": f2(fmod51), "pow": f2(pow51),
		"modf": math51Modf, "frexp": math51Frexp, "ldexp": math51Ldexp,
		"max":    math51Extreme(func(v, d float64) bool { return v > d }),
		"min":    math51Extreme(func(v, d float64) bool { return v < d }),
		"random": rng.random, "randomseed": rng.randomseed,
	} {
		m.RawSetString(name, L.NewFunction(fn))
	}
	m.RawSetString("pi", lua.LNumber(math.Pi))
	m.RawSetString("huge", lua.LNumber(math.Inf(1)))
}

// math51Modf is math.modf: the integral part and the fractional part with
// x's sign (+-0 for an infinity), as C's modf.
func math51Modf(L *lua.LState) int {
	x := argNumber(L, 1)
	ip := math.Trunc(x)
	fp := math.Copysign(x-ip, x)
	if math.IsInf(x, 0) {
		fp = math.Copysign(0, x)
	}
	L.Push(lua.LNumber(ip))
	L.Push(lua.LNumber(fp))
	return 2
}

// math51Frexp is math.frexp.
func math51Frexp(L *lua.LState) int {
	f, e := math.Frexp(argNumber(L, 1))
	L.Push(lua.LNumber(f))
	L.Push(lua.LNumber(e))
	return 2
}

// math51Ldexp is math.ldexp.
func math51Ldexp(L *lua.LState) int {
	e := argInt(L, 2) // right to left, as gcc evaluates them
	L.Push(lua.LNumber(math.Ldexp(argNumber(L, 1), e)))
	return 1
}

// math51Extreme is math.max (better: v > d) or math.min (v < d): every
// argument checked, the first kept on ties and NaNs, as lmathlib's loop.
func math51Extreme(better func(v, d float64) bool) lua.LGFunction {
	return func(L *lua.LState) int {
		d := argNumber(L, 1)
		for i := 2; i <= L.GetTop(); i++ {
			if v := argNumber(L, i); better(v, d) {
				d = v
			}
		}
		L.Push(lua.LNumber(d))
		return 1
	}
}

// math51Rand is one Lua state's math.random and math.randomseed: glibc's
// rand() as lua5.1 on Linux calls it.
type math51Rand struct{ rng *glibcRand }

func (r *math51Rand) random(L *lua.LState) int {
	x := float64(r.rng.next()%2147483647) / 2147483647
	switch L.GetTop() {
	case 0:
		L.Push(lua.LNumber(x))
	case 1:
		u := argInt(L, 1)
		if u < 1 {
			L.ArgError(1, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(x*float64(u)) + 1))
	case 2:
		l, u := argInt(L, 1), argInt(L, 2)
		if l > u {
			L.ArgError(2, "interval is empty")
		}
		L.Push(lua.LNumber(math.Floor(x*float64(u-l+1)) + float64(l)))
	default:
		L.RaiseError("wrong number of arguments")
	}
	return 1
}

func (r *math51Rand) randomseed(L *lua.LState) int {
	r.rng = newGlibcRand(uint32(argInt(L, 1)))
	return 0
}

// negNaN is the x86 default NaN, what an invalid operation gives: C
// prints it as -nan.
var negNaN = math.Float64frombits(0xfff8000000000000)

// exp51 is e^x to C's overflow point: Go's amd64 math.Exp gives +Inf
// from about 709.09 on (math.Exp(709.5)), where C's exp is finite to
// 709.78 (1.3549863193146e+308 for 709.5).
func exp51(x float64) float64 {
	if x > 709 && x < 710 {
		return math.Exp(x-1) * math.E
	}
	return math.Exp(x)
}

// hyperbolic is sinh (odd) or cosh past Go's range: Go computes
// exp(x)/2, which overflows from 709.78 on, where C's sinh(710) is
// 1.1169973830809e+308; exp(|x| - ln 2) stays finite to 710.47.
func hyperbolic(fn func(float64) float64, x float64, odd bool) float64 {
	if a := math.Abs(x); a > 709 && !math.IsInf(a, 0) {
		r := exp51(a - math.Ln2)
		if odd && x < 0 {
			r = -r
		}
		return r
	}
	return fn(x)
}

// log51 is the natural logarithm, subnormal numbers included: Go's
// assembly math.Log on amd64 gives -709.09 for 5e-324 (C: -744.44).
func log51(x float64) float64 {
	if x > 0 && x < 0x1p-1022 {
		f, e := math.Frexp(x)
		return math.Log(f) + float64(e)*math.Ln2
	}
	return math.Log(x)
}

// fmod51 is glibc's fmod.
func fmod51(a, b float64) float64 {
	switch {
	case math.IsNaN(a):
		return a
	case math.IsNaN(b):
		return b
	case math.IsInf(a, 0) || b == 0:
		return negNaN
	}
	return math.Mod(a, b)
}

// pow51 is glibc's pow.
func pow51(x, y float64) float64 {
	switch {
	case y == 0 || x == 1:
		return 1
	case math.IsNaN(y):
		if math.IsNaN(x) {
			return x // glibc's x + y: the first NaN operand
		}
		return y
	case math.IsNaN(x):
		// glibc squares x, and negates it for a negative x and an odd y
		if math.Signbit(x) && !math.IsInf(y, 0) && y == math.Trunc(y) && math.Mod(y, 2) != 0 {
			return -x
		}
		return x
	case x < 0 && !math.IsInf(x, 0) && !math.IsInf(y, 0) && y != math.Trunc(y):
		return negNaN
	case x != 0 && math.Abs(x) < 0x1p-1022 && !math.IsInf(y, 0):
		// Go's Pow is wrong for a subnormal x (5e-324 ^ 0.1 gives
		// 1.6e-31, C 4.7e-33): scale x into the normal range first
		return math.Pow(x*0x1p64, y) * math.Pow(2, -64*y)
	}
	return math.Pow(x, y)
}

// glibcRand is glibc's rand(): the TYPE_3 additive feedback generator
// random_r uses, seeded as srand seeds it.
type glibcRand struct {
	r    [34]int32
	f, b int
}

func newGlibcRand(seed uint32) *glibcRand {
	if seed == 0 {
		seed = 1
	}
	g := &glibcRand{}
	var r [344]int32
	r[0] = int32(seed)
	for i := 1; i < 31; i++ {
		// 16807 * r[i-1] % 2147483647 by Schrage's method, as glibc
		hi, lo := r[i-1]/127773, r[i-1]%127773
		w := 16807*lo - 2836*hi
		if w < 0 {
			w += 2147483647
		}
		r[i] = w
	}
	for i := 31; i < 34; i++ {
		r[i] = r[i-31]
	}
	for i := 34; i < 344; i++ {
		r[i] = int32(uint32(r[i-31]) + uint32(r[i-3]))
	}
	// keep the last 34 values as a ring
	copy(g.r[:], r[344-34:])
	return g
}

// next returns the next value of rand(), 0 to 2^31-1.
func (g *glibcRand) next() int32 {
	// o = r[k-31] + r[k-3], over a ring of the last 34 values
	n := len(g.r)
	a := g.r[(g.f+n-31+34)%n]
	b := g.r[(g.f+n-3+34)%n]
	v := int32(uint32(a) + uint32(b))
	g.r[g.f] = v
	g.f = (g.f + 1) % n
	return int32(uint32(v) >> 1)
}
