package main

import (
	"context"
	"strings"

	"github.com/ibscript/ibscript/diag"
)

func init() {
	registerTool(&Tool{
		Name:    "ibportstate",
		Summary: "a port's state, width and speed (and its peer's); enable, disable, reset, speed, width... are Sets",
		Args: "<dest dr_path|lid|guid> <portnum> [<op>]\n\nSupported ops: enable, disable, on, off, reset, speed, espeed, fdr10,\n" +
			"\twidth, query, down, arm, active, vls, mtu, lid, smlid, lmc,\n\tmkey, mkeylease, mkeyprot\n" +
			"Every op but query is a Set: on the kernel backend it needs --allow-set, and is audited.",
		Example: []string{"1", "1"},
		Run:     runIBPortState,
	})
}

func runIBPortState(ctx context.Context, inv *Invocation) int {
	if len(inv.Args) < 2 {
		return usageError(inv, "want <dest> and <portnum>")
	}
	t, err := inv.Dest(ctx, inv.Args[0], "can't resolve destination port")
	if err != nil {
		return queryDone(inv, nil, nil, err)
	}
	o := diag.IBPortStateOptions{Target: t, Port: diag.ParsePortArg(inv.Args[1]), Ops: inv.Args[2:]}
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	r, err := diag.IBPortStateRun(ctx, env, o)
	if r == nil {
		return queryDone(inv, nil, nil, err)
	}
	for _, w := range r.Warnings {
		inv.Errorf("%s", w)
	}
	return queryDone(inv, r, func(b *strings.Builder) { diag.WriteIBPortState(b, r) }, err)
}
