package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
)

func perfModule() Module {
	return Module{
		Name:    "perf",
		Summary: "performance management (PMA) counters, as perfquery reads them",
		Funcs: []Func{
			{"portcounters", perfGetter("perf.portcounters", perf.AttrPortCounters), "portcounters(target [, port]) -> table: PortCounters; counters are numbers"},
			{"portcounters_ext", perfGetter("perf.portcounters_ext", perf.AttrPortCountersExtended), "portcounters_ext(target [, port]) -> table: PortCountersExtended (64-bit counters as numbers, exact below 2^53)"},
			{"reset", perfReset, "reset(target [, port]) -> nil: clears every PortCounters counter of the port (a Set with CounterSelect 0xffff)"},
		},
	}
}

func perfGetter(name string, attr uint16) func(*Env, *lua.LState) int {
	return func(e *Env, L *lua.LState) int {
		t := checkTarget(L, name, 1)
		port := uint8(optUint(L, 2, 1, 0xff))
		data, err := e.sess.Perf(L.Context(), t, mad.MethodGet, attr, port, nil)
		if err != nil {
			raise(L, name, "%v", err)
		}
		L.Push(e.layoutTable(perf.LayoutByID(attr), data))
		return 1
	}
}

func perfReset(e *Env, L *lua.LState) int {
	t := checkTarget(L, "perf.reset", 1)
	port := uint8(optUint(L, 2, 1, 0xff))
	pc := perf.PortCounters{PortSelect: port, CounterSelect: 0xffff}
	data, err := pc.MarshalBinary()
	if err != nil {
		raise(L, "perf.reset", "%v", err)
	}
	if _, err := e.sess.Perf(L.Context(), t, mad.MethodSet, perf.AttrPortCounters, port, data); err != nil {
		raise(L, "perf.reset", "%v", err)
	}
	return 0
}
