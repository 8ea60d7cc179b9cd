package main

import (
	"context"
	"strings"

	"github.com/ibscript/ibscript/diag"
)

func init() {
	registerTool(&Tool{
		Name:    "smpquery",
		Summary: "query one SMA attribute of a node or port (nodeinfo, portinfo, switchinfo, pkeys, sl2vl, vlarb, guids, ...)",
		Args:    "<op> <dest dr_path|lid|guid> [op params]\n\nSupported ops (and aliases, case insensitive):\n" + strings.TrimRight(diag.SMPQueryUsage(), "\n"),
		Options: []Option{
			{Short: 'c', Long: "combined", Help: "use Combined route address argument (not supported: ibscript routes LID or DR)"},
			{Short: 'x', Long: "extended", Help: "use extended speeds"},
		},
		Example: []string{"nodeinfo", "1"},
		Run:     runSMPQuery,
	})
}

func runSMPQuery(ctx context.Context, inv *Invocation) int {
	if len(inv.Args) < 2 {
		return usageError(inv, "want <op> and <dest>")
	}
	if inv.Has("combined") {
		return usageError(inv, "-c (combined routes) is not supported: give a LID or (-D) a directed route")
	}
	o := diag.SMPQueryOptions{Op: inv.Args[0], Extended: inv.Has("extended")}
	if diag.SMPQueryOp(o.Op) == "" {
		return queryDone(inv, nil, nil, &diag.ToolError{Msg: "operation '" + o.Op + "' not supported"})
	}
	t, err := inv.Dest(ctx, inv.Args[1], "can't resolve destination port")
	if err != nil {
		return queryDone(inv, nil, nil, err)
	}
	o.Target = t
	if len(inv.Args) > 2 {
		o.Port = diag.ParsePortArg(inv.Args[2])
	}
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	o.NodeNames = env.NodeNames
	q, err := diag.SMPQueryRun(ctx, env, o)
	if q == nil {
		return queryDone(inv, nil, nil, err)
	}
	return queryDone(inv, q, func(b *strings.Builder) { diag.WriteSMPQuery(b, q) }, err)
}
