package bindings

import (
	"fmt"
	"math"
	"math/bits"
	"runtime/metrics"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The Lua functions that can make a string of any size from a small one
// (string.rep, table.concat, string.format) check the size before they
// allocate it, against Options.MemoryLimit: one call must not take the
// host's memory, nor end in Go's fatal out-of-memory error, which no
// cleanup survives. Growth by many small allocations (a loop of `..`) is
// the host's watchdog's to stop (cmd/ibscript samples HeapInUse).

// checkAllocMin is the size below which an allocation is not checked:
// reading the heap size costs more than such a string.
const checkAllocMin = 1 << 20

// MemoryError is what a call raises, as a RunError that no pcall or
// plan.check catches (and passes to Options.OnMemoryLimit), when what it
// would allocate passes Options.MemoryLimit.
type MemoryError struct {
	Func  string // "string.rep"
	Size  uint64 // bytes the call would allocate (math.MaxUint64: more than can be counted)
	Used  uint64 // heap in use when it was refused
	Limit uint64
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("%s (memory limit %s)", e.Want(), FormatSize(e.Limit))
}

// Want says what the call wanted: "would allocate 1 TiB with 3 MiB in
// use".
func (e *MemoryError) Want() string {
	size := FormatSize(e.Size)
	if e.Size == math.MaxUint64 {
		size = "more than 16 EiB"
	}
	return fmt.Sprintf("would allocate %s with %s in use", size, FormatSize(e.Used))
}

// HeapInUse is the bytes of heap objects, live or not yet swept: what the
// process holds and what the collector has yet to free. The memory limit
// is checked against it.
func HeapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// FormatSize writes a byte count in the largest binary unit, with one
// decimal when it matters: "4 GiB", "1.5 MiB", "512 B".
func FormatSize(n uint64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return strconv.FormatUint(n, 10) + " B"
	}
	return strings.TrimSuffix(strconv.FormatFloat(v, 'f', 1, 64), ".0") + " " + units[i]
}

// checkAlloc raises a MemoryError in L when size bytes would pass the
// memory limit, after telling Options.OnMemoryLimit.
func (e *Env) checkAlloc(L *lua.LState, fn string, size uint64) {
	if e.memLimit == 0 || size < checkAllocMin {
		return
	}
	used := HeapInUse()
	if size <= e.memLimit && used <= e.memLimit-size {
		return
	}
	err := &MemoryError{Func: fn, Size: size, Used: used, Limit: e.memLimit}
	if e.onMemLimit != nil {
		e.onMemLimit(err)
	}
	raiseFatal(L, fn, err)
}

// mulSize is a*b, or math.MaxUint64 when it overflows.
func mulSize(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	if hi != 0 {
		return math.MaxUint64
	}
	return lo
}

// addSize is a+b, or math.MaxUint64 when it overflows.
func addSize(a, b uint64) uint64 {
	s, carry := bits.Add64(a, b, 0)
	if carry != 0 {
		return math.MaxUint64
	}
	return s
}

// allocCheckKey is the registry field holding the Env whose limit '..'
// checks (concat51 has the LState only).
const allocCheckKey = "ibscript.alloccheck"

func setAllocCheck(L *lua.LState, e *Env) {
	ud := L.NewUserData()
	ud.Value = e
	L.SetField(L.Get(lua.RegistryIndex), allocCheckKey, ud)
}

// checkAllocOf checks an allocation of size bytes by fn against the
// limit of L's Env, if it has one (see checkAlloc).
func checkAllocOf(L *lua.LState, fn string, size uint64) {
	if size < checkAllocMin {
		return
	}
	if ud, ok := L.GetField(L.Get(lua.RegistryIndex), allocCheckKey).(*lua.LUserData); ok {
		if e, ok := ud.Value.(*Env); ok {
			e.checkAlloc(L, fn, size)
		}
	}
}

// checkAllocs replaces string.rep, table.concat and string.format (when
// their libraries are open) by versions that check the size of their
// result first, then call the originals.
func (e *Env) checkAllocs(L *lua.LState) {
	wrap := func(lib, name string, size func(L *lua.LState) uint64) {
		t, ok := L.GetGlobal(lib).(*lua.LTable)
		if !ok {
			return
		}
		orig, ok := t.RawGetString(name).(*lua.LFunction)
		if !ok || orig.GFunction == nil {
			return
		}
		fn, call := lib+"."+name, orig.GFunction
		t.RawSetString(name, L.NewFunction(func(L *lua.LState) int {
			e.checkAlloc(L, fn, size(L))
			return call(L)
		}))
	}
	wrap("string", "rep", repSize)
	wrap("table", "concat", concatSize)
	wrap("string", "format", fmtSize)
}

// repSize is the length of string.rep(s, n).
func repSize(L *lua.LState) uint64 {
	s := argString(L, 1)
	n := argInt(L, 2)
	if n < 1 {
		return 0
	}
	return mulSize(uint64(len(s)), uint64(n))
}

// concatSize is the length of table.concat(t, sep, i, j), counting a
// number as 32 bytes at most; what is not a string or number is left to
// the original's error.
func concatSize(L *lua.LState) uint64 {
	sep := uint64(len(optString(L, 2, "")))
	t := argTable(L, 1)
	n := t.Len()
	i, j := optInt(L, 3, 1), optInt(L, 4, n)
	i, j = max(i, 1), min(j, n)
	var size uint64
	for k := i; k <= j; k++ {
		switch v := t.RawGetInt(k).(type) {
		case lua.LString:
			size = addSize(size, uint64(len(v)))
		case lua.LNumber:
			size = addSize(size, 32)
		}
		if k < j {
			size = addSize(size, sep)
		}
	}
	return size
}

// maxFmtWidth is the largest width or precision Go's fmt honours
// (string.format passes its format to fmt.Sprintf): fmt refuses a number
// that has passed 1e6 before its last digit, so 10,000,009 at most.
const maxFmtWidth = 1e7 + 9

// fmtSize bounds the length of string.format(f, ...): fmtVerbsSize of
// the format, four times each string argument's length (%q writes a
// byte as \xNN at worst, "% x" as three characters) and 32 bytes for
// every other argument.
func fmtSize(L *lua.LState) uint64 {
	size := fmtVerbsSize(argString(L, 1))
	for k := 2; k <= L.GetTop(); k++ {
		if s, ok := L.Get(k).(lua.LString); ok {
			size = addSize(size, mulSize(uint64(len(s)), 4)+2)
		} else {
			size = addSize(size, 32)
		}
	}
	return size
}

// fmtVerbsSize is the length of format f with every verb's width and
// precision (those fmt honours) added, and 32 bytes for each verb (what
// fmt writes for a verb that does not fit its argument: "%!d(string=",
// "%!(BADWIDTH)").
func fmtVerbsSize(f string) uint64 {
	size := uint64(len(f))
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			continue
		}
		size = addSize(size, 32)
		i++
		for i < len(f) && strings.IndexByte("+- #0", f[i]) >= 0 {
			i++
		}
		for _, part := range []bool{true, false} { // width, then precision
			if !part {
				if i >= len(f) || f[i] != '.' {
					break
				}
				i++
			}
			start := i
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
			}
			if w, err := strconv.ParseUint(f[start:i], 10, 64); err == nil && w <= maxFmtWidth {
				size = addSize(size, w)
			}
		}
	}
	return size
}
