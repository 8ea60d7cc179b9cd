package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/ibscript/ibscript/diag"
)

// exitIBExit is the status of an infiniband-diags tool's IBEXIT (exit(-1)).
const exitIBExit = 255

// routeOptions are the options ibroute and dump_fts share.
var routeOptions = []Option{
	{Short: 'a', Long: "all", Help: "show all lids, even invalid entries"},
	{Short: 'n', Long: "no_dests", Help: "do not try to resolve destinations"},
	{Short: 'M', Long: "Multicast", Help: "show multicast forwarding tables"},
}

// ibroute: one switch's unicast (or -M multicast) forwarding table
// (diag/ibroute.go).
func init() {
	registerTool(&Tool{
		Name:    "ibroute",
		Summary: "dump a switch's unicast (or -M multicast) forwarding table",
		Args:    "[<dest dr_path|lid|guid> [<startlid> [<endlid>]]]",
		Options: routeOptions,
		Schema:  "ibroute",
		Example: []string{"2"},
		Run:     runIBRoute,
	})
}

// routeRange reads the start and end LIDs as ibroute and dump_fts read
// them, strtoul(s, NULL, 0): the number at the front, 0 when there is
// none ("a" is 0: from the first LID, to the top), saying on stderr when
// an argument is not a clean number.
func (inv *Invocation) routeRange(args []string) (start, end uint32) {
	for i, a := range args {
		v, _ := cStrtoul(a)
		if clean, err := strconv.ParseUint(a, 0, 32); err != nil || clean != v {
			inv.Errorf("warning: LID %q read as %d, as strtoul reads it", a, uint32(v))
		}
		if i == 0 {
			start = uint32(v)
		} else {
			end = uint32(v)
		}
	}
	return start, end
}

func routeOpts(inv *Invocation) diag.RouteOptions {
	return diag.RouteOptions{Multicast: inv.Has("Multicast"), All: inv.Has("all"), NoDests: inv.Has("no_dests"), Verbose: inv.Verbosity() > 0}
}

func runIBRoute(ctx context.Context, inv *Invocation) int {
	inv.ignoreArgs(3)
	if len(inv.Args) == 0 {
		return inv.Fail(errors.New("want a switch (LID, -G GUID or -D route), then optionally a start and an end LID"))
	}
	t, err := inv.Target("switch", inv.Args[0])
	if err != nil {
		// ibroute's IBEXIT for an address it cannot read (a LID of 0
		// or past 16 bits, a GUID of 0).
		inv.Errorf("%v", err)
		return ibExit(inv, "can't resolve destination port "+inv.Args[0])
	}
	o := routeOpts(inv)
	o.StartLID, o.EndLID = inv.routeRange(inv.Args[1:])
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	// ibroute asks the SA for a GUID's LID and addresses the switch by
	// it.
	t, addr, err := env.RouteAddress(ctx, t)
	if err != nil {
		fmt.Fprintln(inv.Stderr, "ibwarn: "+diag.PathQueryFailed) // a GUID: the SA did not resolve it
		if inv.Verbosity() > 0 {
			inv.Errorf("%v", err)
		}
		return ibExit(inv, "can't resolve destination port "+inv.Args[0])
	}
	ft, err := diag.IBRoute(ctx, env, t, addr, &o)
	if err != nil {
		// ibroute's message on stdout as it prints it; on stderr
		// libibmad's warning naming the target that did not answer, and
		// what failed (target, attribute, the timeout or the status)
		// under -v or -e, as every tool's.
		var te *diag.ToolError
		if errors.As(err, &te) {
			w := diag.MadRPCWarning(te.Err, inv.ShowErrors())
			if w != "" {
				fmt.Fprintf(inv.Stderr, "ibwarn: %s\n", w)
			}
			if te.Err != nil && (w == "" || inv.Verbosity() > 0 || inv.ShowErrors()) {
				inv.Errorf("%s: %v", te.Msg, te.Err)
			}
			return ibExit(inv, "dump tables: "+te.Msg)
		}
		return ibExit(inv, "dump tables: "+err.Error())
	}
	for _, w := range ft.Warnings {
		inv.Errorf("%s", w)
	}
	diag.WriteRouteErrors(inv.Stderr, "ibroute", ft)
	if inv.JSON {
		err = diag.WriteJSON(inv.Stdout, ft)
	} else {
		err = diag.WriteIBRoute(inv.Stdout, ft)
	}
	if err != nil {
		return inv.Fail(err)
	}
	return exitOK
}

// ibExit ends a tool as its IBEXIT does: "PROG: iberror: failed: MSG" on
// stdout (where the C tools print it), status 255; in JSON, an object
// naming the error.
func ibExit(inv *Invocation, msg string) int {
	if inv.JSON {
		_ = diag.WriteJSON(inv.Stdout, map[string]string{"error": msg})
	} else {
		_ = diag.WriteIBExit(inv.Stdout, inv.argv0(), msg)
	}
	return exitIBExit
}
