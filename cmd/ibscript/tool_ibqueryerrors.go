package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/topo"
)

// defaultThresholdFile is where ibqueryerrors reads its thresholds.
const defaultThresholdFile = "/etc/infiniband-diags/error_thresholds"

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
			{Long: "threshold-file", Arg: "<file>", Help: "specify an alternate threshold file, default: " + defaultThresholdFile},
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
		if o.Path != nil {
			inv.Errorf("Cannot specify cache and direct route path")
			return exitIBExit
		}
		// The topology from the cache, the counters from the fabric.
		if loaded, err = loadCache(inv.Value("load-cache")); err != nil {
			fmt.Fprintln(inv.Stderr, "loading cached fabric failed")
			inv.Errorf("%v", err)
			return exitIBExit
		}
	}
	env, err := inv.Env(ctx)
	if err != nil {
		return inv.Fail(err)
	}
	env.Loaded = loaded
	if !inv.Has("skip-sl") && o.PortGUID == 0 && !slPathRecords(ctx, inv, env, o.Path) {
		return exitOK
	}
	q, err := diag.QueryErrorsOf(ctx, env, o)
	bad := q != nil && q.Summary.BadPorts > 0
	return inv.Output(q, err, func(w io.Writer) error { return diag.WriteQueryErrors(w, inv.Stderr, q) }, bad)
}

// queryErrorsOptions reads ibqueryerrors' command line.
func queryErrorsOptions(inv *Invocation) (diag.QueryErrorsOptions, error) {
	var o diag.QueryErrorsOptions
	inv.ignoreArgs(0)
	known := perf.LayoutByID(perf.AttrPortCounters)
	// -s and -c add to one list, in the order given.
	for _, ov := range inv.Order() {
		switch ov.Key {
		case "suppress-common":
			o.Suppress = append(o.Suppress, "PortRcvSwitchRelayErrors")
		case "suppress":
			for _, name := range strings.Split(ov.Value, ",") {
				if _, ok := known.Field(name); !ok {
					// ibqueryerrors ignores a name it does not know
					// and goes on: so does ibscript, saying so.
					var names []string
					for _, f := range known.Fields {
						names = append(names, f.Name)
					}
					inv.Errorf("warning: -s %q: no PortCounters counter %q, ignored (known: %s)", ov.Value, name, strings.Join(names, ", "))
					continue
				}
				o.Suppress = append(o.Suppress, name)
			}
		}
	}
	file, explicit := defaultThresholdFile, inv.Has("threshold-file")
	if explicit {
		file = inv.Value("threshold-file")
	}
	f, err := os.Open(file)
	switch {
	case err != nil && explicit:
		return o, fmt.Errorf("--threshold-file: %w", err)
	case err != nil:
		// ibqueryerrors goes on without a threshold file.
		o.ThresholdsMissing = true
	default:
		o.Thresholds, err = diag.ReadThresholds(f, file)
		f.Close()
		if err != nil {
			return o, err
		}
	}
	for _, k := range []string{"port-guid", "S"} {
		if inv.Has(k) {
			o.PortGUID, o.Unresolved = portGUIDArg(inv, k)
		}
	}
	if inv.Has(optDirect) {
		path, err := inv.Route()
		if err != nil {
			return o, err
		}
		o.Path = path
	}
	if o.Path != nil && o.PortGUID != 0 {
		return o, errors.New("-D and -G/-S: give one port")
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

// halfWorldPRTimeout is ibqueryerrors' DEFAULT_HALF_WORLD_PR_TIMEOUT:
// the timeout of its PathRecord query, whatever -t says.
const halfWorldPRTimeout = 3 * time.Second

// slPathTemplate is path_record_query's PathRecord: from the local port's
// GID, to the GID of dguid when toD, reversible, one path.
func slPathTemplate(prefix, guid, dguid uint64, toD bool) (uint64, []byte) {
	t := sa.NewPathRecordTemplate().SetSGID(mad.NewGID(prefix, guid)).SetReversible(true).SetNumbPath(1)
	if toD {
		t.SetDGID(mad.NewGID(prefix, dguid))
	}
	return t.ComponentMask(), t.Bytes()
}

// slPathRecords is ibqueryerrors' path_record_query, which it runs
// before it reads a counter unless --skip-sl or -G/-S: one PathRecord
// GetTable from the local port's GID (to -D's port), reversible, one path
// each, for the SLs. Where the SA does not answer (the port knows no SM,
// the query fails or has an error status) ibqueryerrors says so and ends,
// printing nothing, status 0: so does ibscript (false). The SLs
// themselves are not used: ibscript's PMA queries go on SL 0.
func slPathRecords(ctx context.Context, inv *Invocation, env *diag.Env, path []uint8) bool {
	s := env.Session
	port := s.Port()
	var dguid uint64
	if path != nil {
		ni, err := s.NodeInfo(ctx, engine.Target{Kind: engine.ByDR, Path: path})
		if err != nil {
			return true // ibqueryerrors fails on its own NodeInfo next
		}
		dguid = ni.PortGUID
	}
	mask, tmpl := slPathTemplate(port.GIDPrefix, port.PortGUID, dguid, path != nil)
	// One try of 3 s whatever -t says, as path_record_query sets
	// ibd_timeout to DEFAULT_HALF_WORLD_PR_TIMEOUT and sa_query sends
	// once.
	co := []engine.CallOption{engine.Timeout(halfWorldPRTimeout), engine.Retries(0)}
	if _, err := s.SAGetTable(ctx, sa.PathRecord(), mask, tmpl, co...); err != nil && !errors.Is(err, engine.ErrTruncated) {
		inv.Errorf("Query SA failed; sa call path_query failed: %v (as ibqueryerrors, nothing is read; --skip-sl reads the counters without the SA)", err)
		return false
	}
	return true
}
