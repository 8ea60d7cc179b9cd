package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
)

func init() {
	registerTool(&Tool{
		Name:    "ibnetdiscover",
		Summary: "discover the fabric and print its topology (ibnetdiscover's format), its node lists or its ports report",
		Args:    "[topology-file]",
		Options: []Option{
			{Short: 'f', Long: "full", Help: "show full information (ports' speed and width, vlcap)"},
			{Short: 's', Long: "show", Help: "show more information"},
			{Short: 'l', Long: "list", Help: "list of connected nodes"},
			{Short: 'g', Long: "grouping", Help: "show grouping (a fabric without chassis only: refused where libibnetdisc would form one)"},
			{Short: 'H', Long: "Hca_list", Help: "list of connected CAs"},
			{Short: 'S', Long: "Switch_list", Help: "list of connected switches"},
			{Short: 'R', Long: "Router_list", Help: "list of connected routers"},
			{Long: "cache", Arg: "<file>", Help: "filename to cache ibnetdiscover data to"},
			{Long: "load-cache", Arg: "<file>", Help: "filename of ibnetdiscover cache to load"},
			{Long: "diff", Arg: "<file>", Help: "filename of ibnetdiscover cache to diff"},
			{Long: "diffcheck", Arg: "<key(s)>", Help: "specify checks to execute for --diff\n(sw, ca, router, port, lid, nodedesc; default sw,ca,router,port)"},
			{Short: 'p', Long: "ports", Help: "obtain a ports report"},
			{Short: 'm', Long: "max_hops", Help: "report max hops discovered by the library"},
			{Short: 'o', Long: "outstanding_smps", Arg: "<val>", Help: "specify the number of outstanding SMP's which should be issued during the scan\n(taken and ignored: the engine's per-node window schedules the SMPs)"},
		},
		// ibdiag_process_opts(..., "DGKLs", ...).
		Exclude: "D,G,L,s",
		Schema:  "ibnetdiscover",
		Example: []string{"-m", "-s"},
		Run:     runNetDiscover,
		// ibnd_discover_fabric fails: IBEXIT("discover failed\n").
		OpenFail: func(inv *Invocation, _ portSel) int { return ibExit(inv, "discover failed\n") },
	})
}

func runNetDiscover(ctx context.Context, inv *Invocation) int {
	var o diag.NetDiscoverOptions
	inv.ignoreArgs(1)
	inv.outstandingSMPs()
	// The last of -l, -H, -S, -R wins, as in ibnetdiscover.
	for _, ov := range inv.Order() {
		switch ov.Key {
		case "list":
			o.List = []topo.NodeType{topo.CA, topo.Switch, topo.Router}
		case "Hca_list":
			o.List = []topo.NodeType{topo.CA}
		case "Switch_list":
			o.List = []topo.NodeType{topo.Switch}
		case "Router_list":
			o.List = []topo.NodeType{topo.Router}
		}
	}
	o.Ports = inv.Has("ports")
	o.Grouping = inv.Has("grouping")
	o.Full = inv.Has("full")
	o.MaxHops = inv.Has("max_hops")
	o.DiffCheck = topo.DiffDefault
	if inv.Has("diffcheck") {
		c, err := topo.ParseDiffCheck(inv.Value("diffcheck"))
		if err != nil {
			return usageError(inv, "--diffcheck: %v", err)
		}
		o.DiffCheck = c
	}
	if inv.Has("diff") {
		if inv.JSON {
			return inv.Fail(errors.New("--diff prints ibnetdiscover's text only: no --format json"))
		}
		f, err := loadCache(inv.Value("diff"))
		if err != nil {
			return cacheExit(inv, "loading cached fabric for diff failed\n", fmt.Errorf("--diff: %w", err))
		}
		o.Diff = f
	}
	o.Show = inv.Has("show")
	var nd *diag.NetDiscover
	var missed diag.DiscoveryErrors
	cacheHops := -1 // a loaded cache's max hops, re-cached as they are
	if inv.Has("load-cache") {
		cf, f, err := loadCacheFile(inv.Value("load-cache"))
		if err != nil {
			return cacheExit(inv, "loading cached fabric failed\n", fmt.Errorf("--load-cache: %w", err))
		}
		nd = diag.NetDiscoverFrom(f, inv.c.names, o)
		cacheHops = int(cf.MaxHops)
		if o.MaxHops {
			// The hops the cache's scan discovered; a loaded fabric
			// counts no MADs.
			nd.Scan = &diag.NDScan{MaxHops: int(cf.MaxHops)}
		}
	} else {
		env, err := inv.Env(ctx)
		if err != nil {
			return inv.Fail(err)
		}
		nd, err = diag.NetDiscoverOf(ctx, env, o)
		if err != nil && !errors.As(err, &missed) {
			return inv.Fail(err)
		}
		if nd.Scan != nil && nd.Scan.Unmodelled > 0 {
			// ibnetdiscover has no such count: said where it cannot
			// disturb a parser of its text.
			inv.Errorf("warning: -m: %d SMPs of libibnetdisc's scan ask ports this discovery could not read: the figures are those of the part of the fabric found", nd.Scan.Unmodelled)
		}
	}
	if inv.clearProgress != nil {
		inv.clearProgress()
	}
	if n, why := nd.ChassisNode(); o.Grouping && n != nil && o.List == nil && !o.Ports && o.Diff == nil {
		return inv.Fail(fmt.Errorf("-g: grouping by chassis is not supported yet (docs/diag.md): node %s (%q) makes libibnetdisc form a chassis: %s", n.GUID, n.Name, why))
	}
	text := func(w io.Writer) error { return diag.WriteNetDiscover(w, inv.Stdout, nd) }
	var code int
	if len(inv.Args) == 0 {
		code = inv.OutputTo(inv.Stdout, nd, text, missed, false)
	} else {
		// ibnetdiscover writes the topology (or lists) to the file.
		f, err := os.Create(inv.Args[0])
		if err != nil {
			return inv.Fail(fmt.Errorf("can't open file %s for writing: %w", inv.Args[0], err))
		}
		code = inv.OutputTo(f, nd, text, missed, false)
		if err := f.Close(); err != nil && code != exitError {
			return inv.Fail(fmt.Errorf("%s: %w", inv.Args[0], err))
		}
	}
	// The cache is written after the output, as ibnetdiscover writes it.
	if inv.Has("cache") && code != exitError {
		if cacheHops < 0 {
			cacheHops = diag.IBNDMaxHops(nd.Fabric())
		}
		if err := writeCache(inv.Value("cache"), nd.Fabric(), cacheHops); err != nil {
			return cacheExit(inv, "caching ibnetdiscover data failed\n", err)
		}
	}
	return code
}
