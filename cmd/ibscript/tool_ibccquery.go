package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/diag"
)

func init() {
	var ops strings.Builder
	for _, o := range diag.CCOps() {
		fmt.Fprintf(&ops, "\n  %s (%s) <lid|guid>", o[0], o[1])
		if o[0] == "SwitchPortCongestionSetting" {
			ops.WriteString(" [<portnum>]")
		}
	}
	registerTool(&Tool{
		Name:    "ibccquery",
		Summary: "query a node's Congestion Control attributes (class 0x21)",
		Args:    "[-c key] <op> <lid|guid> [<portnum>]\n\nSupported ops (and aliases, case insensitive):" + ops.String(),
		Options: []Option{
			{Short: 'c', Long: "cckey", Arg: "<key>", Help: "CC key (better: $IBSCRIPT_CCKEY or ibscript's --cckey); never printed"},
		},
		// Congestion Control is LID-routed: no directed routes.
		Exclude: "D",
		Example: []string{"CongestionInfo", "1"},
		Run:     runCCQuery,
	})
}

func runCCQuery(ctx context.Context, inv *Invocation) int {
	if len(inv.Args) < 2 {
		return usageError(inv, "an operation and a destination are needed")
	}
	o := diag.CCQueryOptions{Op: inv.Args[0]}
	if inv.Has("cckey") {
		k, err := strconv.ParseUint(inv.Value("cckey"), 0, 64)
		if err != nil {
			return inv.Fail(fmt.Errorf("-c: not a 64-bit number"))
		}
		o.CCKey = k
	}
	if len(inv.Args) > 2 {
		o.Port = int(diag.ParsePortArg(inv.Args[2]))
	}
	t, err := inv.Dest(ctx, inv.Args[1], "can't resolve destination")
	if err != nil {
		return queryDone(inv, nil, nil, err)
	}
	o.Target = t
	return runQuery(ctx, inv, o, diag.CCQueryRun, diag.WriteCCQuery)
}
