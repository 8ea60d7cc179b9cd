package main

import (
	"fmt"
	"math"
	"os"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
)

// How ibdiag_common's process_opt reads the common options' values, and
// what it does when one is bad: IBEXIT while the options are read, before
// the tool does anything (commonOptError).

// commonOptError is a common option's value the C tools refuse with
// IBEXIT(msg) while reading their options.
type commonOptError struct{ msg string }

func (e *commonOptError) Error() string { return e.msg }

// cTimeout is -t as process_opt reads it: strtol of the whole value,
// 1..INT_MAX milliseconds.
func cTimeout(s string) (int64, error) {
	v, whole := cStrtoul(s) // "-5" is past INT_MAX
	if !whole || v == 0 || v > math.MaxInt32 {
		return 0, &commonOptError{fmt.Sprintf("Invalid timeout \"%s\".  Timeout requires a positive integer value < %d.", s, math.MaxInt32)}
	}
	return int64(v), nil
}

// cMKey is -y as process_opt reads it: strtoull of the whole value ("-1"
// is all ones). Where C then asks for the key on the terminal (getpass),
// ibscript does not prompt: the value is refused as C refuses a bad
// answer.
func cMKey(s string) (uint64, error) {
	v, whole := cStrtoul(s)
	if !whole {
		return 0, &commonOptError{"Bad M_Key"}
	}
	return v, nil
}

// cPKeyIdx is -Y/--pkey-idx as current rdma-core's process_opt reads it
// (infiniband-diags/ibdiag_common.c, rdma-core #1759, commit bdf0a8fc4):
// strtol(optarg, &endp, 0) of the whole value, refused when errno is set,
// nothing was read, something follows the number, or it is outside
// 0..UINT16_MAX, with that IBEXIT.
func cPKeyIdx(s string) (uint16, error) {
	mag, neg, rest, ok := topo.Strtoull(s)
	if !ok || rest != "" || (neg && mag != 0) || mag > math.MaxUint16 {
		return 0, &commonOptError{fmt.Sprintf("Invalid P_Key index \"%s\".  Requires an integer in the range [0, %d].", s, math.MaxUint16)}
	}
	return uint16(mag), nil
}

// cSMLID is -s as process_opt reads it (resolve_portid_str with
// IB_DEST_LID): strtol of the value's front, a unicast LID.
func cSMLID(s string) (uint16, error) {
	v, _ := cStrtoul(s) // a negative LID is past 0xbfff
	if v < 1 || v > 0xbfff {
		return 0, &commonOptError{"cannot resolve SM destination port " + s}
	}
	return uint16(v), nil
}

// ibExitAs ends a tool with IBEXIT(msg) as the C program that fails
// prints it: the tool itself (ibExit), or for a script the program it runs
// (Tool.Wraps, named by $IBPATH as the script runs it, once per run),
// status 255.
func ibExitAs(inv *Invocation, msg string) int {
	t := inv.Tool
	if t.Wraps == "" || inv.JSON {
		return ibExit(inv, msg)
	}
	ibpath := os.Getenv("IBPATH")
	if ibpath == "" {
		ibpath = "/usr/sbin"
	}
	for range max(1, t.WrapsRuns) {
		_ = diag.WriteIBExit(inv.Stdout, ibpath+"/"+t.Wraps, msg)
	}
	return exitIBExit
}

// cNumber reads a tool option's value as the C tool's strtoul(s, NULL, 0)
// does (a '-' sign negates, modulo 2^64; "abc" is 0, "2x" is 2) and says on
// stderr when the value is not a clean number, naming the option and what
// it was read as.
func cNumber(inv *Invocation, opt, s string) uint64 {
	v, whole := cStrtoul(s)
	if !whole || s == "" {
		inv.Errorf("warning: %s %q read as %d, as strtoul reads it", opt, s, v)
	}
	return v
}

// outstandingSMPs takes -o as the discovering tools read it (strtoul,
// never refused) and ignores it: the engine's per-node window schedules
// the SMPs.
func (inv *Invocation) outstandingSMPs() {
	if inv.Has("outstanding_smps") {
		cNumber(inv, "-o", inv.Value("outstanding_smps"))
	}
}
