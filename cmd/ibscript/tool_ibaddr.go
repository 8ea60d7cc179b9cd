package main

import (
	"context"

	"github.com/ibscript/ibscript/diag"
)

func init() {
	registerTool(&Tool{
		Name:    "ibaddr",
		Summary: "a port's GID and LID range",
		Args:    "[<lid|dr_path|guid>] [<port>]",
		Options: []Option{
			{Short: 'g', Long: "gid_show", Help: "show gid address only"},
			{Short: 'l', Long: "lid_show", Help: "show lid range only"},
			{Short: 'L', Long: "Lid_show", Help: "show lid range (in decimal) only"},
		},
		Example: []string{"1"},
		Run:     runIBAddr,
	})
}

func runIBAddr(ctx context.Context, inv *Invocation) int {
	o := diag.IBAddrOptions{ShowGID: inv.Has("gid_show"), ShowLID: inv.Has("lid_show"), ShowLIDDec: inv.Has("Lid_show")}
	if len(inv.Args) > 1 {
		o.Port = diag.ParsePortArg(inv.Args[1])
	}
	t, err := queryTarget(ctx, inv, 0)
	if err != nil {
		return queryDone(inv, nil, nil, err)
	}
	o.Target = t
	return runQuery(ctx, inv, o, diag.IBAddrRun, diag.WriteIBAddr)
}
