package main

import (
	"context"

	"github.com/ibscript/ibscript/diag"
)

func init() {
	registerTool(&Tool{
		Name:    "sminfo",
		Summary: "query the SM's SMInfo (with a modifier: set it, a Set)",
		Args:    "<sm_lid|sm_dr_path> [modifier]",
		Options: []Option{
			{Short: 's', Long: "state", Arg: "<0-3>", Help: "set SM state"},
			{Short: 'p', Long: "priority", Arg: "<0-15>", Help: "set SM priority"},
			{Short: 'a', Long: "activity", Arg: "<n>", Help: "set activity count"},
		},
		Example: []string{},
		Run:     runSMInfo,
	})
}

func runSMInfo(ctx context.Context, inv *Invocation) int {
	o := diag.SMInfoOptions{State: 2} // SMINFO_STANDBY, sminfo's default
	for _, f := range []struct {
		key string
		max uint64
		set func(uint64)
	}{
		{"state", 0xf, func(v uint64) { o.State = uint8(v) }},
		{"priority", 0xf, func(v uint64) { o.Priority = uint8(v) }},
		{"activity", 0xffffffff, func(v uint64) { o.Activity = uint32(v) }},
	} {
		if inv.Has(f.key) {
			f.set(diag.ParseMask(inv.Value(f.key)) & f.max)
		}
	}
	if len(inv.Args) > 1 {
		o.Modifier = uint32(diag.ParsePortArg(inv.Args[1]))
	}
	t, err := queryTarget(ctx, inv, 0)
	if err != nil {
		return queryDone(inv, nil, nil, err)
	}
	o.Target = t
	return runQuery(ctx, inv, o, diag.SMInfoRun, diag.WriteSMInfo)
}
