package main

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/topo"
)

// How the infiniband-diags tools read an option's value or an argument
// that is not a clean number (strtoul and friends), so that `ibscript
// TOOL` reads what the C tool reads for the same typed text. Destination
// addresses are read by diag.ParseAddress (-L, -G, -D), once for the
// command line and Lua.

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

// portArgs reads the port a tool starts at or reports on: a port GUID
// under one of keys (the last of them given wins), or -D's directed route; both is the
// error both.
func portArgs(inv *Invocation, both string, keys ...string) (guid uint64, unresolved string, path []uint8, err error) {
	for _, k := range keys {
		if inv.Has(k) {
			guid, unresolved = portGUIDArg(inv, k)
		}
	}
	if inv.Has(optDirect) {
		if path, err = inv.Route(); err != nil {
			return 0, "", nil, err
		}
	}
	if path != nil && guid != 0 {
		return 0, "", nil, errors.New(both)
	}
	return guid, unresolved, path, nil
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
