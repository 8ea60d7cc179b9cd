package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/ibscript/ibscript/diag"
)

func init() {
	registerTool(&Tool{
		Name:    "ibping",
		Summary: "ping a port's ibping server (vendor class 0x32), or -S: be one",
		Args:    "<dest lid|guid>",
		Options: []Option{
			{Short: 'c', Long: "count", Arg: "<num>", Help: "stop after count packets"},
			{Short: 'f', Long: "flood", Help: "flood destination"},
			{Short: 'o', Long: "oui", Arg: "<oui>", Help: "use specified OUI number"},
			{Short: 'S', Long: "Server", Help: "start in server mode (until interrupted)"},
		},
		Exclude: "D,y",
		Example: []string{"-c", "1", "1"},
		Run:     runIBPing,
	})
}

func runIBPing(ctx context.Context, inv *Invocation) int {
	// -o is strtoul's, into an int (-o 0 sends OUI 0, -o -1 0xffffff's
	// 24 bits); without it the OpenIB OUI.
	oui := uint32(diag.PingOUI)
	if inv.Has("oui") {
		v, _ := cStrtoul(inv.Value("oui"))
		oui = uint32(v)
	}
	if inv.Has("Server") {
		env, err := inv.Env(ctx)
		if err != nil {
			return inv.Fail(err)
		}
		n, err := diag.IBPingServe(ctx, env, oui, diag.HostAndDomain())
		if err != nil {
			return queryDone(inv, nil, nil, err)
		}
		if inv.Verbosity() > 0 {
			inv.Errorf("answered %d pings", n)
		}
		return exitOK
	}
	if len(inv.Args) < 1 {
		return usageError(inv, "want <dest lid|guid> (or -S)")
	}
	t, err := inv.Dest(ctx, inv.Args[0], "can't resolve destination port")
	if err != nil {
		return queryDone(inv, nil, nil, err)
	}
	// ibping's count is an unsigned int, ~0 unless -c sets it (strtoul,
	// cut to 32 bits: -c 0 sends nothing, -c -5 is 1<<32 - 5).
	o := diag.IBPingOptions{Target: t, Flood: inv.Has("flood"), OUI: oui, Count: 1<<32 - 1}
	if inv.Has("count") {
		v, _ := cStrtoul(inv.Value("count"))
		o.Count = uint64(uint32(v))
	}
	if !inv.JSON {
		o.Pong = func(line string) { fmt.Fprintln(inv.Stdout, line) }
	}
	o.Lost = func(w string) { fmt.Fprintf(inv.Stderr, "ibwarn: %s\n", w) }
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	r, err := diag.IBPingRun(ctx, env, o)
	if r == nil {
		return queryDone(inv, nil, nil, err)
	}
	return queryDone(inv, r, func(b *strings.Builder) { diag.WriteIBPing(b, r, true) }, err)
}
