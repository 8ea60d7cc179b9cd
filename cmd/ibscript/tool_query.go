package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
)

// Helpers of the point-query tools (smpquery, perfquery, smpdump, sminfo,
// ibaddr, ibportstate, ibping; issue 19).

// runQuery opens the backend, runs one point query (a diag XxxRun) and
// ends the tool with what it gathered, as queryDone does.
func runQuery[O, R any](ctx context.Context, inv *Invocation, o O, run func(context.Context, *diag.Env, O) (*R, error), write func(*strings.Builder, *R)) int {
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	r, err := run(ctx, env, o)
	if r == nil {
		return queryDone(inv, nil, nil, err)
	}
	return queryDone(inv, r, func(b *strings.Builder) { write(b, r) }, err)
}

// queryDone prints what a point-query tool gathered and ends it: text
// (the C tool's, from write) or --format json (v), then its failure as
// the C tool reports it: "TOOL: iberror: failed: MSG" on stdout and
// status 255 for the C tool's own failures (diag.ToolError), the error
// on stderr and status 2 for the others. With --format json the iberror
// line goes to stderr, keeping stdout JSON.
func queryDone(inv *Invocation, v any, write func(*strings.Builder), err error) int {
	if inv.JSON {
		if v != nil && err == nil {
			if werr := diag.WriteJSON(inv.Stdout, v); werr != nil {
				return inv.Fail(werr)
			}
		}
	} else if write != nil {
		var b strings.Builder
		write(&b)
		if _, werr := fmt.Fprint(inv.Stdout, b.String()); werr != nil {
			return inv.Fail(werr)
		}
	}
	if err == nil {
		return exitOK
	}
	var te *diag.ToolError
	if !errors.As(err, &te) {
		return inv.Fail(err)
	}
	if w := diag.MadRPCWarning(te.Err, inv.ShowErrors()); w != "" {
		// What libibmad says first, naming the target that did not answer.
		fmt.Fprintf(inv.Stderr, "ibwarn: %s\n", w)
	}
	prog := inv.argv0()
	var b strings.Builder
	diag.WriteIBError(&b, prog, err)
	if inv.JSON {
		fmt.Fprint(inv.Stderr, b.String())
	} else {
		fmt.Fprint(inv.Stdout, b.String())
	}
	if te.Err != nil && (inv.Verbosity() > 0 || inv.ShowErrors()) {
		inv.Errorf("%v", te.Err)
	}
	return exitIBExit
}

// usageError is a tool's command line the C tool would answer with its
// usage: the message on stderr, status 2.
func usageError(inv *Invocation, format string, args ...any) int {
	inv.Errorf("%s (%s --help shows the usage)", fmt.Sprintf(format, args...), inv.Prog)
	return exitError
}

// queryTarget reads the optional destination argument i (nil when it is
// not given) as -L, -G or -D say; a bad one is the C tool's "can't
// resolve destination port".
func queryTarget(ctx context.Context, inv *Invocation, i int) (*engine.Target, error) {
	if len(inv.Args) <= i {
		return nil, nil
	}
	t, err := inv.Dest(ctx, inv.Args[i], "can't resolve destination port")
	if err != nil {
		return nil, err
	}
	return &t, nil
}
