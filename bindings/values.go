package bindings

import (
	"encoding/hex"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
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
