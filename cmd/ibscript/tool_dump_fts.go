package main

import (
	"context"
	"fmt"
	"io"

	"github.com/ibscript/ibscript/diag"
)

// dump_fts, and the dump_lfts and dump_mfts scripts over it: every
// switch's forwarding table from one discovery (diag/dump_fts.go).
func init() {
	for _, d := range []struct{ name, summary string }{
		{"dump_fts", "dump every switch's unicast (or -M multicast) forwarding table"},
		{"dump_lfts", "dump every switch's unicast forwarding table (dump_fts, with its notice)"},
		{"dump_mfts", "dump every switch's multicast forwarding table (dump_fts -M, with its notice)"},
	} {
		script, wraps := d.name, "dump_fts"
		if script == "dump_fts" {
			script, wraps = "", ""
		}
		registerTool(&Tool{
			Name:    d.name,
			Summary: d.summary,
			Args:    "[<startlid> [<endlid>]]",
			Options: routeOptions,
			// dump_fts takes no destination and no SM LID.
			Exclude: "G,D,L,s",
			Schema:  "dump_fts",
			Example: []string{},
			Run:     func(ctx context.Context, inv *Invocation) int { return runDumpFTs(ctx, inv, script) },
			OpenFail: func(inv *Invocation, _ portSel) int {
				fmt.Fprintln(inv.Stderr, "Failed to discover fabric")
				return exitIBExit
			},
			Notice: diag.DumpFTsNotice(script),
			Wraps:  wraps,
		})
	}
}

// runDumpFTs runs dump_fts; as dump_lfts or dump_mfts (script) in text,
// the script's notice follows whatever dump_fts printed and the status is
// the script's, 0.
func runDumpFTs(ctx context.Context, inv *Invocation, script string) int {
	if script == "" || inv.JSON {
		return dumpFTs(ctx, inv, script)
	}
	dumpFTs(ctx, inv, script)
	if _, err := io.WriteString(inv.Stdout, inv.Tool.Notice); err != nil {
		return inv.Fail(err)
	}
	return exitOK
}

// dumpFTs is dump_fts (-M for dump_mfts); the notice is runDumpFTs's to
// print, in text.
func dumpFTs(ctx context.Context, inv *Invocation, script string) int {
	inv.ignoreArgs(2)
	o := routeOpts(inv)
	if script == "dump_mfts" {
		o.Multicast = true
	}
	o.StartLID, o.EndLID = inv.routeRange(inv.Args)
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	d, err := env.Discover(ctx)
	if err != nil {
		inv.Errorf("Failed to discover fabric: %v", err)
		return exitIBExit
	}
	fts, err := diag.DumpFTs(ctx, env, d, &o)
	if err != nil {
		return inv.Fail(err)
	}
	for _, ft := range fts {
		for _, w := range ft.Warnings {
			inv.Errorf("%s", w)
		}
		diag.WriteRouteErrors(inv.Stderr, "dump_fts", ft)
	}
	if inv.JSON {
		err = diag.WriteJSON(inv.Stdout, map[string]any{"switches": fts})
	} else {
		err = diag.WriteDumpFTs(inv.Stdout, fts, "")
	}
	if err != nil {
		return inv.Fail(err)
	}
	if len(d.Errors) > 0 {
		inv.Errorf("%v", diag.DiscoveryErrors(d.Errors))
		return exitFailed
	}
	return exitOK
}
