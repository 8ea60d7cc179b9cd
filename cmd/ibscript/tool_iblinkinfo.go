package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
)

func init() {
	registerTool(&Tool{
		Name:    "iblinkinfo",
		Summary: "every port of every node, its link (width, speed, state) and the port at the other end",
		Options: []Option{
			{Short: 'S', Long: "switch", Arg: "<port_guid>", Help: "start partial scan at the port specified by <port_guid> (hex format)"},
			{Short: 'G', Long: "port-guid", Arg: "<port_guid>", Help: "(same as -S)"},
			{Short: 'D', Long: "Direct", Arg: "<dr_path>", Help: "start partial scan at the port specified by <dr_path>"},
			{Short: 'a', Long: "all", Help: "print all nodes found in a partial fabric scan"},
			{Short: 'n', Long: "hops", Arg: "<hops>", Help: "Number of hops to include away from specified node"},
			{Short: 'd', Long: "down", Help: "print only down links"},
			{Short: 'l', Long: "line", Help: "(line mode) print all information for each link on a single line"},
			{Short: 'p', Long: "additional", Help: "print additional port settings (PktLifeTime, HoqLife, VLStallCount)"},
			{Long: "load-cache", Arg: "<file>", Help: "filename of ibnetdiscover cache to load"},
			{Long: "diff", Arg: "<file>", Help: "filename of ibnetdiscover cache to diff"},
			{Long: "diffcheck", Arg: "<key(s)>", Help: "specify checks to execute for --diff\n(port, state, lid, nodedesc; default port,state)"},
			{Long: "filterdownports", Arg: "<file>", Help: "filename of ibnetdiscover cache to filter downports"},
			{Short: 'o', Long: "outstanding_smps", Arg: "<val>", Help: "specify the number of outstanding SMP's which should be issued during the scan\n(taken and ignored: the engine's per-node window schedules the SMPs)"},
			{Long: "switches-only", Help: "Output only switches"},
			{Long: "cas-only", Help: "Output only CAs"},
		},
		// ibdiag_process_opts(..., "aDdGgKLlnpRS", ...): the common
		// options it does not take.
		Exclude: "G,D,L,d",
		Schema:  "linkinfo",
		Example: []string{"--switches-only"},
		Run:     runLinkinfo,
		OpenFail: func(inv *Invocation, s portSel) int {
			fmt.Fprintf(inv.Stderr, "Failed to open %s port %d\n", s.caName(), s.port)
			return exitFailed
		},
	})
}

func runLinkinfo(ctx context.Context, inv *Invocation) int {
	o, err := linkinfoOptions(inv)
	if ue := (*usageErr)(nil); errors.As(err, &ue) {
		return usageError(inv, "%v", ue.err)
	}
	if err != nil {
		return inv.Fail(err)
	}
	if inv.Has("diff") {
		if inv.JSON {
			return inv.Fail(errors.New("--diff prints iblinkinfo's text only: no --format json"))
		}
		f, err := loadCache(inv.Value("diff"))
		if err != nil {
			return cacheExit(inv, "loading cached fabric for diff failed\n", fmt.Errorf("--diff: %w", err))
		}
		o.Diff = f
	}
	if inv.Has("filterdownports") {
		f, err := loadCache(inv.Value("filterdownports"))
		if err != nil {
			return cacheExit(inv, "loading cached fabric for filterdownports failed\n", fmt.Errorf("--filterdownports: %w", err))
		}
		o.FilterDown = f
	}
	var env *diag.Env
	if inv.Has("load-cache") {
		// Printed from the cache alone: no port is opened.
		f, ok := loadCacheOption(inv, o.Path)
		if !ok {
			return exitFailed
		}
		env = &diag.Env{NodeNames: inv.c.names, Loaded: f, Version: inv.c.diagsVersion}
	} else if env, err = inv.Env(ctx); err != nil {
		return inv.Fail(err)
	}
	li, err := diag.LinkinfoOf(ctx, env, o)
	if li != nil {
		for _, w := range li.ToolWarnings() {
			fmt.Fprintf(inv.Stderr, "ibwarn: %s\n", w)
		}
	}
	// -D's route not answering: iblinkinfo cannot start, status 1.
	bad := li != nil && li.RouteFailed() != nil
	return inv.Output(li, err, func(w io.Writer) error { return diag.WriteLinkinfo(w, inv.Stderr, li) }, bad)
}

// linkinfoOptions reads iblinkinfo's command line.
func linkinfoOptions(inv *Invocation) (diag.LinkinfoOptions, error) {
	var o diag.LinkinfoOptions
	inv.ignoreArgs(0)
	var err error
	if o.PortGUID, o.Unresolved, o.Path, err = portArgs(inv, "-D and -S/-G: give one start port", "switch", "port-guid"); err != nil {
		return o, err
	}
	for _, k := range []string{"switch", "port-guid"} {
		if inv.Has(k) {
			o.PortText = inv.Value(k) // the one portArgs read
		}
	}
	// -n as iblinkinfo reads it, strtoul into libibnetdisc's unsigned
	// max_hops: 0 ("abc" too) is no limit, and so is anything past the
	// 63 hops a directed route has ("-1" among them).
	var hops uint64
	if inv.Has("hops") {
		hops = uint64(uint32(cNumber(inv, "-n", inv.Value("hops"))))
	}
	if hops > 63 {
		hops = 0
	}
	o.All = inv.Has("all")
	if hops > 0 {
		// -S/-G/-D without -a too: how far the partial scan goes says
		// which of a CA's other ports it meets.
		o.Hops = int(hops)
	}
	inv.outstandingSMPs()
	o.DownOnly, o.Line, o.Additional = inv.Has("down"), inv.Has("line"), inv.Has("additional")
	o.DiffCheck = diag.LinkDiffDefault
	if inv.Has("diffcheck") {
		c, err := diag.ParseLinkDiffCheck(inv.Value("diffcheck"))
		if err != nil {
			return o, &usageErr{fmt.Errorf("--diffcheck: %w", err)}
		}
		o.DiffCheck = c
	}
	switch {
	case inv.Has("switches-only") && inv.Has("cas-only"):
		// The last one given wins in iblinkinfo; both given is a
		// mistake worth naming.
		return o, errors.New("--switches-only and --cas-only: give one")
	case inv.Has("switches-only"):
		o.Only = topo.Switch
	case inv.Has("cas-only"):
		o.Only = topo.CA
	}
	return o, nil
}
