package bindings

import (
	"io"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
)

// diag.queryerrors: ibqueryerrors' data (diag/queryerrors.go).
func init() {
	const fn = "diag.queryerrors"
	registerDiag(Func{"queryerrors", func(e *Env, L *lua.LState) int {
		t := diagOptions(L, fn, queryErrorsKeys...)
		o := queryErrorsOptions(L, fn, t)
		env := e.diagEnv()
		if v := t.RawGetString("fabric"); v != lua.LNil {
			ft, _ := v.(*lua.LTable)
			var d *engine.Discovery
			if ft != nil {
				d = discoveryOf(ft)
			}
			if d == nil {
				raise(L, fn, "fabric: a fabric from fabric.discover expected, got %s", v.Type())
			}
			if o.PortGUID != 0 || o.Path != nil {
				raise(L, fn, "fabric and port_guid or direct: give one")
			}
			env.Loaded = d.Fabric
		}
		q, err := diag.QueryErrorsOf(L.Context(), env, o)
		if q != nil {
			for _, w := range q.Unreadable {
				noteUnread(L, w) // a warning plan.check records as "could not be read"
			}
		}
		n := e.diagResult(L, fn, q, err)
		if t, ok := L.Get(-n).(*lua.LTable); ok && q != nil {
			if s, ok := t.RawGetString("summary").(*lua.LTable); ok {
				s.RawSetString("ports_not_read", lua.LNumber(q.PortsNotRead))
			}
		}
		return n
	}, "queryerrors([{thresholds=FILE, suppress={\"PortXmitWait\", ...}, suppress_common, data, details, counters, report_port, switch, ca, router, port_guid=\"0x...\", direct=\"0,1\", path_records, clear_errors, clear_counts, passes=N, skip_no_lid, fabric=f}]) -> {nodes = {{name, guid, ports = {{port, guid, counters = {{name, value}}}}}}, summary = {bad_ports, ...}, warnings} [, missed]: the ports whose error counters exceed their thresholds (ibqueryerrors' threshold file), as ibqueryerrors reads them; summary is ibqueryerrors' (ports_checked counts a port whose PortCounters query failed, as it does) and ports_not_read, those of ports_checked whose PortCounters could not be read; passes=N asks a PMA query that got no answer (or whose answers could not be verified) again, up to N times in all, before it is a warning (plan checks: such warnings are could-not-be-read); skip_no_lid=true sends nothing to a node whose PMA has no LID (the SM did not configure it), where ibqueryerrors asks LID 0: each such port is one warning \"NODE port N: has no LID: the SM did not configure it\" (could-not-be-read), its queries counted as PMA query failures as ibqueryerrors counts them; fabric=f reads the nodes of f, a fabric.discover result (a fabric.discover{planes=true} of a planarized port: every plane's, each PMA by its LID, which the GSI side sends on that LID's plane; docs/planes.md), where ibqueryerrors discovers its SMI port's plane; the other keys are ibqueryerrors' options (-c, --data, --details, --counters, -r, --switch, --ca, --router, -G, -D, -k, -K; path_records: its PathRecord query for the SLs first, unless --skip-sl: an error where the SA does not answer)"},
		`local q = diag.queryerrors()
print(q.summary.ports_checked, q.summary.bad_ports)
for _, n in ipairs(q.nodes) do
  for _, p in ipairs(n.ports) do print(n.name, p.port, p.counters[1].name, p.counters[1].value) end
end`)
}

// queryErrorsKeys are diag.queryerrors' options: ibqueryerrors' own,
// by their long names (--threshold-file is thresholds, -G port_guid,
// -D direct, -c suppress_common, -k/-K clear_errors/clear_counts), and
// passes, skip_no_lid (QueryErrorsOptions.SkipNoLID), and fabric (the discovery to read instead of discovering). Not taken: --load-cache (a plan discovers), --skip-sl
// (path_records is its opposite, off by default), -R and -o (no-ops).
var queryErrorsKeys = []string{"thresholds", "suppress", "suppress_common", "data", "details", "counters", "report_port",
	"switch", "ca", "router", "port_guid", "direct", "path_records", "clear_errors", "clear_counts", "passes", "skip_no_lid", "fabric"}

// queryErrorsOptions reads diag.queryerrors' option table as
// ibqueryerrors reads its command line (diag's SuppressNames,
// LoadThresholds), files through the script's file access.
func queryErrorsOptions(L *lua.LState, fn string, t *lua.LTable) diag.QueryErrorsOptions {
	var o diag.QueryErrorsOptions
	if v := t.RawGetString("thresholds"); v != lua.LNil {
		var err error
		o.Thresholds, _, err = diag.LoadThresholds(func(name string) (io.ReadCloser, error) { return filesOf(L).Open(name) }, v.String(), true)
		if err != nil {
			raise(L, fn, "thresholds: %v", err)
		}
	}
	for _, list := range diagStrings(L, fn, t, "suppress") {
		names, unknown := diag.SuppressNames(list)
		if len(unknown) > 0 {
			raise(L, fn, "suppress: no PortCounters counter %q (known: %s)", unknown[0], diag.PortCountersNames())
		}
		o.Suppress = append(o.Suppress, names...)
	}
	if optBool(L, fn, t, "suppress_common") {
		o.Suppress = append(o.Suppress, diag.CommonSuppressed)
	}
	for _, f := range []struct {
		key string
		v   *bool
	}{{"data", &o.Data}, {"details", &o.Details}, {"counters", &o.CountersOnly}, {"report_port", &o.ReportPort},
		{"path_records", &o.PathRecords}, {"clear_errors", &o.ClearErrors}, {"clear_counts", &o.ClearCounts},
		{"skip_no_lid", &o.SkipNoLID}} {
		*f.v = optBool(L, fn, t, f.key)
	}
	for _, k := range []struct {
		key string
		typ topo.NodeType
	}{{"switch", topo.Switch}, {"ca", topo.CA}, {"router", topo.Router}} {
		if optBool(L, fn, t, k.key) {
			o.Types = append(o.Types, k.typ)
		}
	}
	if v := t.RawGetString("port_guid"); v != lua.LNil {
		a, err := diag.ParseAddress(diag.AddrTarget, "guid:"+lua.LVAsString(v))
		if err != nil || v.Type() != lua.LTString {
			raise(L, fn, "port_guid: want a GUID string \"0x...\", got %s", v)
		}
		o.PortGUID = a.Target.GUID
	}
	if v := t.RawGetString("direct"); v != lua.LNil {
		a, err := diag.ParseAddress(diag.AddrTarget, "dr:"+lua.LVAsString(v))
		if err != nil || v.Type() != lua.LTString {
			raise(L, fn, "direct: want a directed route \"0,1,...\", got %s", v)
		}
		o.Path = a.Target.Path
	}
	if o.Path != nil && o.PortGUID != 0 {
		raise(L, fn, "port_guid and direct: give one port")
	}
	switch v := t.RawGetString("passes").(type) {
	case *lua.LNilType:
	case lua.LNumber:
		if v < 1 || v > 16 || v != lua.LNumber(int(v)) {
			raise(L, fn, "passes: a whole number from 1 to 16 expected, got %v", v)
		}
		o.Passes = int(v)
	default:
		raise(L, fn, "passes: number expected, got %s", v.Type())
	}
	return o
}
