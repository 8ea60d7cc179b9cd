package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/exporter"
)

// snapshotOpts are perf.snapshot's options: one exporter per set, kept
// by the state, so that a second call's rates and flaps count from the
// first's sweep.
type snapshotOpts struct{ hca, details, planes bool }

// perfSnapshot sweeps the fabric's counters as ibscript exporter does and
// returns its metric families (exporter.Exporter.Families) as tables:
// {[name] = {help=, type=, labels={...}, series={{labels={name=value},
// value=N}, ...}}}.
func perfSnapshot(e *Env, L *lua.LState) int {
	var o snapshotOpts
	if t := L.OptTable(1, nil); t != nil {
		checkOptions(L, "perf.snapshot", t, map[string]bool{"hca": true, "details": true, "planes": true})
		o.hca = optBool(L, "perf.snapshot", t, "hca")
		o.details = optBool(L, "perf.snapshot", t, "details")
		o.planes = optBool(L, "perf.snapshot", t, "planes")
	}
	exp := e.exporters[o]
	if exp == nil {
		eo := &exporter.Options{Names: e.names, HCA: o.hca, Details: o.details, HCADetails: o.details && o.hca}
		if o.planes {
			eo.Fabric = e.fab // a planarized port: every plane, the series labelled
		}
		exp = exporter.New(e.sess, eo)
		if e.exporters == nil {
			e.exporters = map[snapshotOpts]*exporter.Exporter{}
		}
		e.exporters[o] = exp
	}
	s, err := exp.Sweep(L.Context())
	if err != nil {
		raise(L, "perf.snapshot", "%v", err)
	}
	fams := exp.Families(s)
	out := L.CreateTable(0, len(fams))
	for _, f := range fams {
		labels := L.CreateTable(len(f.Labels), 0)
		for _, l := range f.Labels {
			labels.Append(lua.LString(l))
		}
		series := L.CreateTable(len(f.Series), 0)
		for _, sr := range f.Series {
			lv := L.CreateTable(0, len(sr.Labels))
			for i, v := range sr.Labels {
				lv.RawSetString(f.Labels[i], lua.LString(v))
			}
			st := L.CreateTable(0, 2)
			st.RawSetString("labels", lv)
			st.RawSetString("value", lua.LNumber(sr.Value))
			series.Append(st)
		}
		ft := L.CreateTable(0, 4)
		ft.RawSetString("help", lua.LString(f.Help))
		ft.RawSetString("type", lua.LString(f.Type))
		ft.RawSetString("labels", labels)
		ft.RawSetString("series", series)
		out.RawSetString(f.Name, ft)
	}
	L.Push(out)
	return 1
}
