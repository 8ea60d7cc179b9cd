package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ibscript/ibscript/diag"
)

func init() {
	registerTool(&Tool{
		Name:    "ibfindnodesusing",
		Summary: "the nodes routed through a switch port, both ways (ibfindnodesusing.pl)",
		Args:    "<switch_guid|switch_name> <port>",
		Options: []Option{
			{Short: 'R', Help: "Recalculate ibnetdiscover information (ibscript always discovers: accepted)"},
		},
		// ibfindnodesusing.pl's getopts takes -h -R -C -P only.
		Exclude: "z,G,D,L,s,t,y,e,v,d,V",
		Schema:  "ibfindnodesusing",
		Example: []string{"0x0002c90300f00000", "33"},
		Run:     runFindNodesUsing,
	})
}

// findNodesUsingUsage is the script's usage_and_exit text (stdout, 2).
const findNodesUsingUsage = `Usage: ibfindnodesusing [-R -C <ca_name> -P <ca_port>] <switch_guid|switch_name> <port>
   find a list of nodes which are routed through switch:port
   -R Recalculate ibnetdiscover information
   -C <ca_name> use selected Channel Adaptor name for queries
   -P <ca_port> use selected channel adaptor port for queries
`

func runFindNodesUsing(ctx context.Context, inv *Invocation) int {
	if len(inv.Args) < 2 || inv.Args[1] == "" {
		fmt.Fprint(inv.Stdout, findNodesUsingUsage)
		return exitError
	}
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	r, err := diag.FindNodesUsingRun(ctx, env, diag.FindNodesUsingOptions{Switch: inv.Args[0], Port: inv.Args[1]})
	notFound := r != nil && !r.Found
	return inv.Output(r, err, func(w io.Writer) error { return diag.WriteFindNodesUsing(w, r) }, notFound)
}
