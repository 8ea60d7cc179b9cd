package main

import (
	"math"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/topo"
)

// How the infiniband-diags tools read a destination argument that is not
// a clean number, so that `ibscript TOOL` addresses what the C tool
// addresses (and prints what it prints) for the same typed text: a LID
// and a GUID are read by strtol/strtoull(s, NULL, 0), which take the
// longest number at the front and ignore the rest ("2abc" is LID 2, "zz"
// is 0); a directed route by libibmad's str2drpath, which reads each
// comma-separated element with atoi into a byte (300 is port 44, "x" is
// 0) and ignores the first (the local port) whatever it says. Target
// says on stderr when it read an argument this way.

// cStrtoull is strtoull(s, NULL, 0) (strtol for neg): leading blanks, an
// optional sign, then 0x-hex, 0-octal or decimal digits, as many as there
// are; ok is false when no digit was read (the C function returns 0).
// The value saturates at the top of uint64.
func cStrtoull(s string) (v uint64, neg, ok bool) {
	v, neg, _, ok = topo.Strtoull(s)
	return v, neg, ok
}

// cStrtoul is strtoul(s, &end, 0) as the C tools read an option's value
// or an argument: the value, a '-' sign negating it modulo 2^64 ("-1" is
// all ones, "2x" is 2, "zz" 0), and whole, whether C would find nothing
// left (*end == '\0') and no ERANGE: s is all number, or "" (which C reads
// as 0 with nothing left).
func cStrtoul(s string) (v uint64, whole bool) {
	mag, neg, rest, ok := topo.Strtoull(s)
	v = mag
	if neg {
		v = -mag
	}
	switch {
	case !ok:
		return 0, s == ""
	case rest != "":
		return v, false
	case mag == math.MaxUint64:
		// Saturated, or exactly the top: ERANGE only for the first.
		_, err := strconv.ParseUint(strings.TrimLeft(strings.TrimSpace(s), "+-"), 0, 64)
		return v, err == nil
	}
	return v, true
}

// cAtoi is glibc's atoi(s), (int)strtol(s, NULL, 10): blanks, a sign,
// decimal digits, 0 when none; past the range of a long it saturates
// (LONG_MAX, LONG_MIN), as strtol does.
func cAtoi(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var v uint64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if v > (1<<63-1-uint64(s[i]-'0'))/10 {
			v = 1<<63 - 1
			if neg {
				v = 1 << 63
			}
			continue
		}
		v = v*10 + uint64(s[i]-'0')
	}
	if neg {
		return -int64(v)
	}
	return int64(v)
}

// cAddress is the destination argument s of the given kind ("lid",
// "guid", "dr") as the C tools read it, written so that
// engine.ParseTarget reads the same: a LID in decimal, a GUID in hex, a
// route with 0 first and each element as the byte atoi gives.
func cAddress(kind, s string) string {
	switch kind {
	case "lid":
		v, neg, _ := cStrtoull(s)
		if neg {
			return "-" + strconv.FormatUint(v, 10)
		}
		return strconv.FormatUint(v, 10)
	case "guid":
		v, neg, _ := cStrtoull(s)
		if neg {
			v = -v
		}
		return "0x" + strconv.FormatUint(v, 16)
	case "dr":
		// str2drpath: elements up to the end or a trailing comma; the
		// first is the local port's place.
		parts := strings.Split(s, ",")
		if len(parts) > 1 && parts[len(parts)-1] == "" {
			parts = parts[:len(parts)-1]
		}
		var b strings.Builder
		b.WriteByte('0')
		for _, p := range parts[1:] {
			b.WriteByte(',')
			b.WriteString(strconv.Itoa(int(uint8(cAtoi(p)))))
		}
		return b.String()
	}
	return s
}

// portGUIDArg reads option k's port GUID (iblinkinfo's and
// ibqueryerrors' -S/-G) as strtoull(optarg, NULL, 0) reads it, saying on
// stderr when that is not the whole text; text that reads as 0 is
// returned as unresolved: the C tools find no such port.
func portGUIDArg(inv *Invocation, k string) (guid uint64, unresolved string) {
	s := inv.Value(k)
	v, _ := cStrtoul(s)
	if strict, err := strconv.ParseUint(strings.TrimSpace(s), 0, 64); err != nil || strict != v {
		inv.Errorf("warning: %s %q read as GUID %#x, as the C tools read it", inv.spelling(k), s, v)
	}
	if v == 0 {
		return 0, s
	}
	return v, ""
}
