package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// diag.queryerrors: ibqueryerrors' data (diag/queryerrors.go).
func init() {
	const fn = "diag.queryerrors"
	registerDiag(Func{"queryerrors", func(e *Env, L *lua.LState) int {
		t := diagOptions(L, fn, "thresholds", "suppress", "data", "passes")
		var o diag.QueryErrorsOptions
		if v := t.RawGetString("thresholds"); v != lua.LNil {
			path := v.String()
			f, err := filesOf(L).Open(path)
			if err != nil {
				raise(L, fn, "thresholds: %v", err)
			}
			o.Thresholds, err = diag.ReadThresholds(f, path)
			f.Close()
			if err != nil {
				raise(L, fn, "thresholds: %v", err)
			}
		}
		o.Suppress = diagStrings(L, fn, t, "suppress")
		o.Data = lua.LVAsBool(t.RawGetString("data"))
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
		q, err := diag.QueryErrorsOf(L.Context(), e.diagEnv(), o)
		if q != nil {
			for _, w := range q.Unreadable {
				noteUnread(L, w) // a warning plan.check records as "could not be read"
			}
		}
		return e.diagResult(L, fn, q, err)
	}, "queryerrors([{thresholds=FILE, suppress={\"PortXmitWait\", ...}, data=true, passes=N}]) -> {nodes = {{name, guid, ports = {{port, guid, counters = {{name, value}}}}}}, summary = {bad_ports, ...}, warnings} [, missed]: the ports whose error counters exceed their thresholds (ibqueryerrors' threshold file), as ibqueryerrors reads them; passes=N asks a PMA query that got no answer (or whose answers could not be verified) again, up to N times in all, before it is a warning (plan checks: such warnings are could-not-be-read)"},
		`local q = diag.queryerrors()
print(q.summary.ports_checked, q.summary.bad_ports)
for _, n in ipairs(q.nodes) do
  for _, p in ipairs(n.ports) do print(n.name, p.port, p.counters[1].name, p.counters[1].value) end
end`)
}
