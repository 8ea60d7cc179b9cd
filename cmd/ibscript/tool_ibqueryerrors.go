package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/topo"
)

func init() {
	registerTool(&Tool{
		Name:    "ibqueryerrors",
		Summary: "every port's error counters against thresholds; exit status 1 when one exceeds its threshold",
		Options: []Option{
			{Short: 's', Long: "suppress", Arg: "<err1,err2,...>", Help: "suppress errors listed"},
			{Short: 'c', Long: "suppress-common", Help: "suppress some of the common counters"},
			{Short: 'G', Long: "port-guid", Arg: "<port_guid>", Help: "report the node containing the port specified by <port_guid>"},
			{Short: 'S', Arg: "<port_guid>", Help: "Same as \"-G\" for backward compatibility"},
			{Short: 'D', Long: "Direct", Arg: "<dr_path>", Help: "report the node containing the port specified by <dr_path>"},
			{Long: "skip-sl", Help: "don't obtain SL to all destinations (ibscript's PMA queries use SL 0 always)"},
			{Short: 'r', Long: "report-port", Help: "report port link information"},
			{Long: "threshold-file", Arg: "<file>", Help: "specify an alternate threshold file, default: " + diag.DefaultThresholdFile},
			{Short: 'R', Long: "GNDN", Help: "(This option is obsolete and does nothing)"},
			{Long: "data", Help: "include data counters for ports with errors"},
			{Long: "switch", Help: "print data for switches only"},
			{Long: "ca", Help: "print data for CA's only"},
			{Long: "router", Help: "print data for routers only"},
			{Long: "details", Help: "include transmit discard details"},
			{Long: "counters", Help: "print data counters only"},
			{Short: 'k', Long: "clear-errors", Help: "Clear error counters after read (Sets: --allow-set on the kernel backend)"},
			{Short: 'K', Long: "clear-counts", Help: "Clear data counters after read (Sets: --allow-set on the kernel backend)"},
			{Long: "load-cache", Arg: "<file>", Help: "filename of ibnetdiscover cache to load"},
			{Short: 'o', Long: "outstanding_smps", Arg: "<val>", Help: "specify the number of outstanding SMP's which should be issued during the scan\n(taken and ignored: the engine's per-node window schedules the SMPs)"},
		},
		// ibdiag_process_opts(..., "cDGKLnRrSs", ...).
		Exclude: "D,G,L,s",
		Schema:  "queryerrors",
		Example: []string{"--data"},
		Run:     runQueryErrors,
		OpenFail: func(inv *Invocation, s portSel) int {
			return ibExit(inv, fmt.Sprintf("Failed to open port; %s:%d\n", s.caName(), s.port))
		},
	})
}

func runQueryErrors(ctx context.Context, inv *Invocation) int {
	o, err := queryErrorsOptions(inv)
	if err != nil {
		return inv.Fail(err)
	}
	var loaded *topo.Fabric
	if inv.Has("load-cache") {
		// The topology from the cache, the counters from the fabric.
		var ok bool
		if loaded, ok = loadCacheOption(inv, o.Path); !ok {
			return exitIBExit
		}
	}
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	if a := env.Session.Port(); loaded == nil && inv.c.diagsVersion == diag.VersionCurrent && noSMISide(a) {
		// Current ibqueryerrors opens its port without enforce_smi, then
		// discovers through ibnd_discover_fabric, which enforces it:
		// "discover failed", exit(-1).
		inv.Errorf("%s port %d has no SMI side (IsSMDisabled, no SMI device paired): current ibqueryerrors discovers only through one (enforce_smi)", a.CAName, a.PortNum)
		fmt.Fprintln(inv.Stderr, "discover failed")
		return exitIBExit
	}
	env.Loaded = loaded
	o.PathRecords = !inv.Has("skip-sl")
	q, err := diag.QueryErrorsOf(ctx, env, o)
	if pe := (*diag.PathRecordsError)(nil); errors.As(err, &pe) {
		// As ibqueryerrors: said, nothing read, status 0.
		inv.Errorf("%v (as ibqueryerrors, nothing is read; --skip-sl reads the counters without the SA)", pe)
		return exitOK
	}
	bad := q != nil && q.Summary.BadPorts > 0
	return inv.Output(q, err, func(w io.Writer) error { return diag.WriteQueryErrors(w, inv.Stderr, q) }, bad)
}

// queryErrorsOptions reads ibqueryerrors' command line.
func queryErrorsOptions(inv *Invocation) (diag.QueryErrorsOptions, error) {
	var o diag.QueryErrorsOptions
	inv.ignoreArgs(0)
	// -s and -c add to one list, in the order given.
	for _, ov := range inv.Order() {
		switch ov.Key {
		case "suppress-common":
			o.Suppress = append(o.Suppress, diag.CommonSuppressed)
		case "suppress":
			names, unknown := diag.SuppressNames(ov.Value)
			for _, name := range unknown {
				// ibqueryerrors ignores a name it does not know and
				// goes on: so does ibscript, saying so.
				inv.Errorf("warning: -s %q: no PortCounters counter %q, ignored (known: %s)", ov.Value, name, diag.PortCountersNames())
			}
			o.Suppress = append(o.Suppress, names...)
		}
	}
	var err error
	o.Thresholds, o.ThresholdsMissing, err = diag.LoadThresholds(func(name string) (io.ReadCloser, error) { return topo.OpenFile(name) }, inv.Value("threshold-file"), inv.Has("threshold-file"))
	if fe := (*diag.ThresholdFileError)(nil); errors.As(err, &fe) {
		return o, fmt.Errorf("--threshold-file: %w", fe.Err)
	} else if err != nil {
		return o, err
	}
	if o.PortGUID, o.Unresolved, o.Path, err = portArgs(inv, "-D and -G/-S: give one port", "port-guid", "S"); err != nil {
		return o, err
	}
	for _, k := range []string{"port-guid", "S"} {
		if inv.Has(k) {
			o.PortText = inv.Value(k) // the one portArgs read
		}
	}
	inv.outstandingSMPs()
	for _, t := range []struct {
		opt string
		typ topo.NodeType
	}{{"switch", topo.Switch}, {"ca", topo.CA}, {"router", topo.Router}} {
		if inv.Has(t.opt) && !slices.Contains(o.Types, t.typ) {
			o.Types = append(o.Types, t.typ)
		}
	}
	o.Data, o.Details, o.CountersOnly, o.ReportPort = inv.Has("data"), inv.Has("details"), inv.Has("counters"), inv.Has("report-port")
	o.ClearErrors, o.ClearCounts = inv.Has("clear-errors"), inv.Has("clear-counts")
	return o, nil
}
