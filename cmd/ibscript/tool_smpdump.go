package main

import (
	"context"

	"github.com/ibscript/ibscript/diag"
)

func init() {
	registerTool(&Tool{
		Name:    "smpdump",
		Summary: "one SMP Get, its 64 bytes of data in hex (or -s as a string)",
		Args:    "<dlid|dr_path> <attr> [mod]",
		Options: []Option{
			{Short: 's', Long: "string", Help: "print the data as a string"},
		},
		Exclude: "G",
		Example: []string{"1", "0x11"},
		Run:     runSMPDump,
	})
}

func runSMPDump(ctx context.Context, inv *Invocation) int {
	if len(inv.Args) < 2 {
		return usageError(inv, "want <dlid|dr_path> and <attr>")
	}
	t, err := inv.Target("destination", inv.Args[0])
	if err != nil {
		return usageError(inv, "%v", err)
	}
	o := diag.SMPDumpOptions{Target: t, Attr: uint16(diag.ParseMask(inv.Args[1])), String: inv.Has("string")}
	if len(inv.Args) > 2 {
		o.Mod = uint32(diag.ParseMask(inv.Args[2]))
	}
	return runQuery(ctx, inv, o, diag.SMPDumpRun, diag.WriteSMPDump)
}
