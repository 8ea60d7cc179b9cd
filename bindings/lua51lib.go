package bindings

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// Library functions where gopher-lua v1.1.2 gives answers Lua 5.1 does not
// (docs/lua.md, "Corrections"); each replacement follows the reference
// manual, section 5.

// installLibFixes replaces them in L's libraries.
func installLibFixes(L *lua.LState) {
	if str, ok := L.GetGlobal("string").(*lua.LTable); ok {
		for name, fn := range map[string]lua.LGFunction{
			"find":   func(L *lua.LState) int { return strFindAux(L, true) },
			"match":  func(L *lua.LState) int { return strFindAux(L, false) },
			"gmatch": strGmatch,
			"gsub":   strGsub,
			"format": strFormat,
			"byte":   strByte,
			"char":   strChar,
			"upper":  func(L *lua.LState) int { return strMapASCII(L, 'a', 'z', -32) },
			"lower":  func(L *lua.LState) int { return strMapASCII(L, 'A', 'Z', 32) },
		} {
			str.RawSetString(name, L.NewFunction(fn))
		}
	}
	L.SetGlobal("tonumber", L.NewFunction(baseToNumber))
	installCompat(L)
	installStd51(L)
	if set, ok := L.GetGlobal("setmetatable").(*lua.LFunction); ok {
		L.SetGlobal("setmetatable", L.NewFunction(func(L *lua.LState) int {
			// gopher-lua accepts any value and then sets the metatable of
			// every value of its type: setmetatable("", {}) would take the
			// string methods from every script in the state.
			L.CheckTable(1)
			if t := L.Get(2).Type(); t != lua.LTNil && t != lua.LTTable {
				L.ArgError(2, "nil or table expected")
			}
			t, mt := L.Get(1), L.Get(2)
			L.SetTop(0)
			L.Push(set)
			L.Push(t)
			L.Push(mt)
			L.Call(2, 1)
			return 1
		}))
	}
	if os, ok := L.GetGlobal("os").(*lua.LTable); ok && os.RawGetString("date") != lua.LNil {
		os.RawSetString("date", L.NewFunction(osDate))
	}
	if m, ok := L.GetGlobal("math").(*lua.LTable); ok {
		m.RawSetString("huge", lua.LNumber(math.Inf(1))) // gopher-lua: MaxFloat64
	}
}

// baseToNumber is Lua 5.1's tonumber: base 10 reads what C's strtod reads
// (decimal and hexadecimal, exponents, surrounding white space); other
// bases, 2 to 36, read an unsigned integer.
func baseToNumber(L *lua.LState) int {
	base := optInt(L, 2, 10)
	if base == 10 {
		v := L.CheckAny(1)
		switch v := v.(type) {
		case lua.LNumber:
			L.Push(v)
		case lua.LString:
			if n, ok := str2number(string(v)); ok {
				L.Push(lua.LNumber(n))
			} else {
				L.Push(lua.LNil)
			}
		default:
			L.Push(lua.LNil)
		}
		return 1
	}
	s := argString(L, 1)
	if base < 2 || base > 36 {
		L.ArgError(2, "base out of range")
	}
	if z := strings.IndexByte(s, 0); z >= 0 {
		s = s[:z] // strtoul reads a C string
	}
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, " \t\n\v\f\r") {
		L.Push(lua.LNil)
		return 1
	}
	neg := false
	switch s[0] {
	case '-':
		neg, s = true, s[1:]
	case '+':
		s = s[1:]
	}
	if base == 16 && len(s) > 2 && s[0] == '0' && s[1]|0x20 == 'x' {
		s = s[2:]
	}
	if s == "" || strings.ContainsRune(s, '_') {
		L.Push(lua.LNil)
		return 1
	}
	n, err := strconv.ParseUint(s, base, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		L.Push(lua.LNil)
		return 1
	}
	if neg {
		n = -n // strtoul negates in unsigned arithmetic
	}
	L.Push(lua.LNumber(float64(n)))
	return 1
}

// str2number reads a number as Lua 5.1's lua_str2number (strtod) does,
// with white space around it.
func str2number(s string) (float64, bool) {
	if z := strings.IndexByte(s, 0); z >= 0 {
		s = s[:z] // strtod reads a C string: it ends at the first NUL
	}
	s = strings.Trim(s, " \t\n\v\f\r")
	if s == "" || strings.ContainsAny(s, "_ \t\n\v\f\r") {
		return 0, false
	}
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	if len(body) >= 3 && strings.EqualFold(body[:3], "nan") {
		// glibc reads "nan" and "nan(chars)" in any case, with a sign
		if rest := body[3:]; rest != "" && !(rest[0] == '(' && strings.IndexByte(rest, ')') == len(rest)-1 && !strings.ContainsFunc(rest[1:len(rest)-1], func(r rune) bool {
			return !(r == '_' || '0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z')
		})) {
			return 0, false
		}
		if s[0] == '-' {
			return negNaN, true
		}
		return math.Float64frombits(0x7ff8000000000000), true
	}
	if len(body) > 1 && body[0] == '0' && body[1]|0x20 == 'x' {
		if len(body) == 2 {
			return 0, false
		}
		if !strings.ContainsAny(body, "pP") {
			s += "p0" // strtod reads hexadecimal without an exponent
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return f, true
}

// strByte is string.byte(s [, i [, j]]): j defaults to i.
func strByte(L *lua.LState) int {
	s := argString(L, 1)
	l := len(s)
	i := posrelat(optInteger(L, 2, 1), l)
	j := posrelat(optInteger(L, 3, i), l)
	i = max(i, 1)
	j = min(j, int64(l))
	if i > j {
		return 0
	}
	if j-i+1 > maxCStack-int64(L.GetTop()) {
		L.RaiseError("string slice too long")
	}
	for k := i; k <= j; k++ {
		L.Push(lua.LNumber(s[k-1]))
	}
	return int(j - i + 1)
}

// strChar is string.char: every argument a byte value.
func strChar(L *lua.LState) int {
	b := make([]byte, L.GetTop())
	for i := range b {
		c := argInt(L, i+1)
		if c < 0 || c > 255 {
			L.ArgError(i+1, "invalid value")
		}
		b[i] = byte(c)
	}
	L.Push(lua.LString(b))
	return 1
}

// strMapASCII is string.upper and string.lower in the C locale: bytes, not
// Unicode letters.
func strMapASCII(L *lua.LState, lo, hi byte, delta int) int {
	s := []byte(argString(L, 1))
	for i, c := range s {
		if lo <= c && c <= hi {
			s[i] = byte(int(c) + delta)
		}
	}
	L.Push(lua.LString(s))
	return 1
}

// strFormat is Lua 5.1's string.format: C's printf conversions (c d i o u x
// X e E f g G q s %), flags "-+ #0", width and precision of at most two
// digits each, every argument checked.
func strFormat(L *lua.LState) int {
	format := argString(L, 1)
	arg := 1
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		i++
		if i < len(format) && format[i] == '%' {
			b.WriteByte('%')
			continue
		}
		if arg+1 > L.GetTop() {
			L.ArgError(arg+1, "no value") // 5.1's str_format checks this first
		}
		var f fmtSpec
		f, i = scanFmtSpec(L, format, i)
		arg++
		spec := "%" + f.flags + f.width
		if f.hasPrec {
			spec += "." + f.prec
		}
		switch f.conv {
		case 'c':
			// C's sprintf writes the byte, and 5.1 keeps what strlen
			// counts: nothing from a NUL on
			c := pad(string([]byte{byte(toInt32(fmtNumber(L, arg)))}), f.flags, f.width)
			if z := strings.IndexByte(c, 0); z >= 0 {
				c = c[:z]
			}
			b.WriteString(c)
		case 'd', 'i':
			b.WriteString(sprintf(spec+"d", toInteger(fmtNumber(L, arg))))
		case 'o', 'u', 'x', 'X':
			verb := f.conv
			if f.conv == 'u' {
				verb = 'd'
			}
			b.WriteString(sprintf(spec+string(verb), toUnsigned(fmtNumber(L, arg))))
		case 'e', 'E', 'f', 'g', 'G':
			b.WriteString(fmtFloat(f, spec, fmtNumber(L, arg)))
		case 'q':
			fmtQuoted(&b, argString(L, arg))
		case 's':
			b.WriteString(fmtString(f, argString(L, arg)))
		default:
			L.RaiseError("invalid option '%%%c' to 'format'", f.conv)
		}
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// fmtSpec is one conversion of a string.format format: its flags, width,
// precision (when hasPrec) and conversion letter.
type fmtSpec struct {
	flags, width, prec string
	hasPrec            bool
	conv               byte
}

// scanFmtSpec reads the conversion that starts at format[i] (after the
// '%') with 5.1's limits (five flags, two digits of width and precision)
// and returns it and the index of its conversion letter.
func scanFmtSpec(L *lua.LState, format string, i int) (fmtSpec, int) {
	var f fmtSpec
	start := i
	for i < len(format) && strings.IndexByte("-+ #0", format[i]) >= 0 {
		i++
	}
	if i-start > 5 {
		L.RaiseError("invalid format (repeated flags)")
	}
	f.flags = format[start:i]
	w := i
	for i < len(format) && i-w < 3 && '0' <= format[i] && format[i] <= '9' {
		i++
	}
	f.width = format[w:i]
	if i < len(format) && format[i] == '.' {
		i++
		p := i
		for i < len(format) && i-p < 3 && '0' <= format[i] && format[i] <= '9' {
			i++
		}
		f.prec, f.hasPrec = format[p:i], true
	}
	if len(f.width) > 2 || len(f.prec) > 2 {
		L.RaiseError("invalid format (width or precision too long)")
	}
	if i >= len(format) {
		L.RaiseError("invalid option '%%' to 'format'")
	}
	f.conv = format[i]
	return f, i
}

// fmtFloat is %e, %E, %f, %g or %G of n as glibc prints it: inf and nan
// with their sign, flags and width (never zero-padded), C's default
// precision of 6.
func fmtFloat(f fmtSpec, spec string, n float64) string {
	if math.IsInf(n, 0) || math.IsNaN(n) {
		s := "inf"
		if math.IsNaN(n) {
			s = "nan"
		}
		switch {
		case math.Signbit(n):
			s = "-" + s
		case strings.ContainsRune(f.flags, '+'):
			s = "+" + s
		case strings.ContainsRune(f.flags, ' '):
			s = " " + s
		}
		if f.conv == 'E' || f.conv == 'G' {
			s = strings.ToUpper(s)
		}
		return pad(s, strings.ReplaceAll(f.flags, "0", ""), f.width)
	}
	if !f.hasPrec {
		spec += ".6" // C's default; Go's %g would print the shortest form
	}
	return sprintf(spec+string(f.conv), n)
}

// fmtQuoted is %q: s between double quotes, with '"', '\\' and newline
// escaped by a backslash, '\r' as \r and NUL as \000, as 5.1's addquoted.
func fmtQuoted(b *strings.Builder, s string) {
	b.WriteByte('"')
	for j := 0; j < len(s); j++ {
		switch ch := s[j]; ch {
		case '"', '\\', '\n':
			b.WriteByte('\\')
			b.WriteByte(ch)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\000`)
		default:
			b.WriteByte(ch)
		}
	}
	b.WriteByte('"')
}

// fmtString is %s of s: cut at a NUL as sprintf's %s cuts it (5.1 keeps
// a string of 100 bytes or more whole when there is no precision), cut to
// the precision in bytes, padded to the width.
func fmtString(f fmtSpec, s string) string {
	if f.hasPrec || len(s) < 100 {
		if z := strings.IndexByte(s, 0); z >= 0 {
			s = s[:z]
		}
	}
	if f.hasPrec {
		p, _ := strconv.Atoi(f.prec)
		if p < len(s) {
			s = s[:p] // bytes, as C counts them
		}
	}
	return pad(s, f.flags, f.width)
}

// fmtNumber is argument n of string.format as a number (a numeric string
// is read as one), or an argument error.
func fmtNumber(L *lua.LState, n int) float64 {
	switch v := L.Get(n).(type) {
	case lua.LNumber:
		return float64(v)
	case lua.LString:
		if f, ok := str2number(string(v)); ok {
			return f
		}
	}
	L.TypeError(n, lua.LTNumber)
	return 0
}

// pad justifies s in width (from a format spec) with spaces.
func pad(s, flags, width string) string {
	w, _ := strconv.Atoi(width)
	if len(s) >= w {
		return s
	}
	fill := strings.Repeat(" ", w-len(s))
	if strings.ContainsRune(flags, '-') {
		return s + fill
	}
	return fill + s
}

func sprintf(spec string, v any) string { return fmt.Sprintf(spec, v) }

// installCompat adds what Lua 5.1 keeps from 5.0 and gopher-lua lacks
// (table.getn, table.foreach, table.foreachi and string.gfind), and
// table.maxn as 5.1 defines it.
func installCompat(L *lua.LState) {
	if str, ok := L.GetGlobal("string").(*lua.LTable); ok {
		str.RawSetString("gfind", str.RawGetString("gmatch"))
	}
	tab, ok := L.GetGlobal("table").(*lua.LTable)
	if !ok {
		return
	}
	tab.RawSetString("maxn", L.NewFunction(func(L *lua.LState) int {
		// the largest positive numeric key, integer or not (gopher-lua:
		// integer keys only)
		t := L.CheckTable(1)
		m := 0.0
		for k, _ := t.Next(lua.LNil); k != lua.LNil; k, _ = t.Next(k) {
			if n, ok := k.(lua.LNumber); ok && float64(n) > m {
				m = float64(n)
			}
		}
		L.Push(lua.LNumber(m))
		return 1
	}))
	tab.RawSetString("getn", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(tabLen(argTable(L, 1))))
		return 1
	}))
	tab.RawSetString("foreachi", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		fn := L.CheckFunction(2)
		for i := 1; i <= tabLen(t); i++ {
			L.Push(fn)
			L.Push(lua.LNumber(i))
			L.Push(t.RawGetInt(i))
			L.Call(2, 1)
			if v := L.Get(-1); v != lua.LNil {
				return 1
			}
			L.Pop(1)
		}
		return 0
	}))
	tab.RawSetString("foreach", L.NewFunction(func(L *lua.LState) int {
		t := L.CheckTable(1)
		fn := L.CheckFunction(2)
		for k, v := t.Next(lua.LNil); k != lua.LNil; k, v = t.Next(k) {
			L.Push(fn)
			L.Push(k)
			L.Push(v)
			L.Call(2, 1)
			if r := L.Get(-1); r != lua.LNil {
				return 1
			}
			L.Pop(1)
		}
		return 0
	}))
}

// osDate is Lua 5.1's os.date: C's strftime conversions in the C locale
// ("!" first for UTC), "*t" for a table. gopher-lua's %x printed the time,
// %a a literal "mon", %c another layout, and %j, %U, %W and yday were
// missing.
func osDate(L *lua.LState) int {
	format := optString(L, 1, "%c")
	t := time.Now()
	if !absent(L, 2) {
		t = time.Unix(toInteger(argNumber(L, 2)), 0)
	}
	if strings.HasPrefix(format, "!") {
		format, t = format[1:], t.UTC()
	} else {
		t = t.Local()
	}
	if strings.HasPrefix(format, "*t") {
		tb := L.CreateTable(0, 9)
		for k, v := range map[string]int{"year": t.Year(), "month": int(t.Month()), "day": t.Day(),
			"hour": t.Hour(), "min": t.Minute(), "sec": t.Second(), "wday": int(t.Weekday()) + 1, "yday": t.YearDay()} {
			tb.RawSetString(k, lua.LNumber(v))
		}
		tb.RawSetString("isdst", lua.LBool(t.IsDST()))
		L.Push(tb)
		return 1
	}
	L.Push(lua.LString(strftime(format, t)))
	return 1
}

// strftime formats t as C's strftime does in the C locale.
func strftime(format string, t time.Time) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' || i+1 == len(format) {
			b.WriteByte(format[i])
			continue
		}
		i++
		b.WriteString(strftimeConv(format[i], t))
	}
	return b.String()
}

func strftimeConv(c byte, t time.Time) string {
	hour12 := t.Hour() % 12
	if hour12 == 0 {
		hour12 = 12
	}
	week := func(first time.Weekday) int { // weeks starting on first; days before the first one are week 0
		wd := (int(t.Weekday()) - int(first) + 7) % 7
		return (t.YearDay() - 1 - wd + 7) / 7
	}
	switch c {
	case 'a':
		return t.Weekday().String()[:3]
	case 'A':
		return t.Weekday().String()
	case 'b', 'h':
		return t.Month().String()[:3]
	case 'B':
		return t.Month().String()
	case 'c':
		return strftime("%a %b %e %H:%M:%S %Y", t)
	case 'C':
		return fmt.Sprintf("%02d", t.Year()/100)
	case 'd':
		return fmt.Sprintf("%02d", t.Day())
	case 'D', 'x':
		return strftime("%m/%d/%y", t)
	case 'e':
		return fmt.Sprintf("%2d", t.Day())
	case 'F':
		return strftime("%Y-%m-%d", t)
	case 'g':
		y, _ := t.ISOWeek()
		return fmt.Sprintf("%02d", y%100)
	case 'G':
		y, _ := t.ISOWeek()
		return strconv.Itoa(y)
	case 'H':
		return fmt.Sprintf("%02d", t.Hour())
	case 'I':
		return fmt.Sprintf("%02d", hour12)
	case 'j':
		return fmt.Sprintf("%03d", t.YearDay())
	case 'k':
		return fmt.Sprintf("%2d", t.Hour())
	case 'l':
		return fmt.Sprintf("%2d", hour12)
	case 'm':
		return fmt.Sprintf("%02d", int(t.Month()))
	case 'M':
		return fmt.Sprintf("%02d", t.Minute())
	case 'n':
		return "\n"
	case 'p':
		if t.Hour() < 12 {
			return "AM"
		}
		return "PM"
	case 'P':
		if t.Hour() < 12 {
			return "am"
		}
		return "pm"
	case 'r':
		return strftime("%I:%M:%S %p", t)
	case 'R':
		return strftime("%H:%M", t)
	case 's':
		return strconv.FormatInt(t.Unix(), 10)
	case 'S':
		return fmt.Sprintf("%02d", t.Second())
	case 't':
		return "\t"
	case 'T', 'X':
		return strftime("%H:%M:%S", t)
	case 'u':
		return strconv.Itoa((int(t.Weekday())+6)%7 + 1)
	case 'U':
		return fmt.Sprintf("%02d", week(time.Sunday))
	case 'V':
		_, w := t.ISOWeek()
		return fmt.Sprintf("%02d", w)
	case 'w':
		return strconv.Itoa(int(t.Weekday()))
	case 'W':
		return fmt.Sprintf("%02d", week(time.Monday))
	case 'y':
		return fmt.Sprintf("%02d", t.Year()%100)
	case 'Y':
		return strconv.Itoa(t.Year())
	case 'z':
		return t.Format("-0700")
	case 'Z':
		if name, off := t.Zone(); name != "UTC" || off != 0 {
			return name
		}
		return "GMT" // glibc's name for UTC
	case '%':
		return "%"
	}
	return "%" + string(c) // glibc keeps an unknown conversion as it is
}
