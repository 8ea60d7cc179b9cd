package main

import (
	"context"
	"strings"

	"github.com/ibscript/ibscript/diag"
)

// perfGroupOptions are perfquery's per-attribute options, by long name,
// with their short letters.
var perfGroupOptions = []Option{
	{Short: 'X', Long: "xmtsl", Help: "show Xmt SL port counters"},
	{Short: 'S', Long: "rcvsl", Help: "show Rcv SL port counters"},
	{Short: 'D', Long: "xmtdisc", Help: "show Xmt Discard Details"},
	{Short: 'E', Long: "rcverr", Help: "show Rcv Error Details"},
	{Short: 'T', Long: "extended_speeds", Help: "show port extended speeds counters"},
	{Long: "oprcvcounters", Help: "show Rcv Counters per Op code"},
	{Long: "flowctlcounters", Help: "show flow control counters"},
	{Long: "vloppackets", Help: "show packets received per Op code per VL"},
	{Long: "vlopdata", Help: "show data received per Op code per VL"},
	{Long: "vlxmitflowctlerrors", Help: "show flow control update errors per VL"},
	{Long: "vlxmitcounters", Help: "show ticks waiting to transmit counters per VL"},
	{Long: "swportvlcong", Help: "show sw port VL congestion"},
	{Long: "rcvcc", Help: "show Rcv congestion control counters"},
	{Long: "slrcvfecn", Help: "show SL Rcv FECN counters"},
	{Long: "slrcvbecn", Help: "show SL Rcv BECN counters"},
	{Long: "xmitcc", Help: "show Xmit congestion control counters"},
	{Long: "vlxmittimecc", Help: "show VL Xmit Time congestion control counters"},
	{Short: 'c', Long: "smplctl", Help: "show samples control"},
}

func init() {
	opts := append([]Option{{Short: 'x', Long: "extended", Help: "show extended port counters"}}, perfGroupOptions...)
	opts = append(opts,
		Option{Short: 'a', Long: "all_ports", Help: "show aggregated counters"},
		Option{Short: 'l', Long: "loop_ports", Help: "iterate through each port"},
		Option{Short: 'r', Long: "reset_after_read", Help: "reset counters after read (a Set: --allow-set on the kernel backend)"},
		Option{Short: 'R', Long: "Reset_only", Help: "only reset counters (a Set: --allow-set on the kernel backend)"},
	)
	registerTool(&Tool{
		Name:    "perfquery",
		Summary: "read (and reset) a port's performance counters: PortCounters, -x extended, -a all ports, the per-attribute groups",
		Args:    "[<lid|guid> [[port(s)] [reset_mask]]]",
		Options: opts,
		// perfquery's -D is --xmtdisc: no directed routes (PerfMgt is
		// LID-routed).
		Exclude: "D",
		Example: []string{"1", "1"},
		Run:     runPerfQuery,
	})
}

func runPerfQuery(ctx context.Context, inv *Invocation) int {
	o := diag.PerfQueryOptions{
		Extended: inv.Has("extended"), AllPorts: inv.Has("all_ports"), Loop: inv.Has("loop_ports"),
		Reset: inv.Has("reset_after_read"), ResetOnly: inv.Has("Reset_only"),
	}
	for _, g := range perfGroupOptions {
		if inv.Has(g.Long) {
			o.Groups = append(o.Groups, g.Long)
		}
	}
	if len(inv.Args) > 1 {
		ports, err := diag.ParsePerfPorts(inv.Args[1])
		if err != nil {
			return queryDone(inv, nil, nil, err)
		}
		o.Ports = ports
	}
	if len(inv.Args) > 2 {
		m := diag.ParseMask(inv.Args[2])
		o.Mask = &m
	}
	if len(inv.Args) > 0 {
		t, err := inv.Dest(ctx, inv.Args[0], "can't resolve destination port")
		if err != nil {
			return queryDone(inv, nil, nil, err)
		}
		o.Target = &t
	}
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	q, err := diag.PerfQueryRun(ctx, env, o)
	if q != nil {
		for _, w := range q.Warnings {
			inv.Errorf("%s", w)
		}
		return queryDone(inv, q, func(b *strings.Builder) { diag.WritePerfQuery(b, q) }, err)
	}
	return queryDone(inv, nil, nil, err)
}
