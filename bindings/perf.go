package bindings

import (
	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
)

func perfModule() Module {
	return Module{
		Name:    "perf",
		Summary: "performance management (PMA) counters, as perfquery reads them",
		Funcs: []Func{
			{"portcounters", perfGetter("perf.portcounters", perf.AttrPortCounters), "portcounters(target [, port]) -> table: PortCounters; counters are numbers; port 255 sums the ports where the PMA lacks AllPortSelect (see perf.counters)"},
			{"portcounters_ext", perfGetter("perf.portcounters_ext", perf.AttrPortCountersExtended), "portcounters_ext(target [, port]) -> table: PortCountersExtended (64-bit counters as numbers, exact below 2^53); port 255 sums the ports where the PMA lacks AllPortSelect (see perf.counters)"},
			{"counters", perfCounters, "counters(target [, port [, extended]]) -> table, info: PortCounters (PortCountersExtended when extended is true) as perfquery reads them: the fields the PMA's ClassPortInfo capabilities say it does not give are nil (PortXmitWait without PortXmitWait support; the extended unicast/multicast counters without IsExtendedWidthSupported; CounterSelect2 and the additional counters without IsAdditionalPortCountersExtendedSupported); port 255 on a PMA without AllPortSelect sums ports 1..NumPorts (0.. on a switch with enhanced port 0) as perfquery -a does, each counter stopping at its largest value. info has capability_mask, capability_mask2 and summed (the ports added up, or nil)"},
			{"get", perfGet, "get(target, port, attribute) -> table: any PerfMgt attribute by IBA name (\"PortRcvErrorDetails\", \"PortVLXmitWaitCounters\") or ID, for port (PortSelect; 255 all ports where the PMA supports it); PortCounters and PortCountersExtended are read as perf.counters reads them (the fields the PMA's ClassPortInfo capabilities leave out nil, port 255 summed where the PMA lacks AllPortSelect), PortExtendedSpeedsCounters in the layout perfquery -T chooses (\"PortExtendedSpeedsCountersRSFEC\", the RS-FEC layout, when the PMA has IsRSFECCountersSupported and the port's PortInfoExtended says RS-FEC is active; that name asks for it whatever they say)"},
			{"snapshot", perfSnapshot, "snapshot([{hca=, details=, planes=}]) -> table: sweeps the fabric's port counters as ibscript exporter does (switch ports; CA ports too with hca; PortRcvErrorDetails and PortXmitDiscardDetails with details; with planes=true, when the local port is a planarized CA's, every plane, each port series with a plane label, docs/planes.md) and returns the metric families a scrape would get, by name: {help=, type=\"counter\"|\"gauge\", labels={names}, series={{labels={name=value}, value=N}, ...}}; the state keeps one exporter per set of options, so a later call's transmit wait ratio and link flaps count from the sweep before"},
			{"reset", perfReset, "reset(target [, port]) -> nil: clears every PortCounters counter of the port (a Set with CounterSelect 0xffff)"},
		},
	}
}

func perfGetter(name string, attr uint16) func(*Env, *lua.LState) int {
	return func(e *Env, L *lua.LState) int {
		t := checkTarget(L, name, 1)
		port := uint8(optUint(L, 2, 1, 0xff))
		if port == perf.AllPorts {
			c, err := e.sess.PerfCounters(L.Context(), t, port, attr == perf.AttrPortCountersExtended)
			if err != nil {
				raise(L, name, "%v", err)
			}
			L.Push(e.layoutTable(c.Layout, c.Data))
			return 1
		}
		data, err := e.sess.Perf(L.Context(), t, mad.MethodGet, attr, port, nil)
		if err != nil {
			raise(L, name, "%v", err)
		}
		L.Push(e.layoutTable(perf.LayoutByID(attr), data))
		return 1
	}
}

func perfCounters(e *Env, L *lua.LState) int {
	t := checkTarget(L, "perf.counters", 1)
	port := uint8(optUint(L, 2, 1, 0xff))
	c, tbl := e.perfCountersTable(L, "perf.counters", t, port, L.OptBool(3, false))
	info := L.NewTable()
	info.RawSetString("capability_mask", lua.LNumber(c.CapabilityMask))
	info.RawSetString("capability_mask2", lua.LNumber(c.CapabilityMask2))
	if c.Summed != nil {
		ports := L.CreateTable(len(c.Summed), 0)
		for _, p := range c.Summed {
			ports.Append(lua.LNumber(p))
		}
		info.RawSetString("summed", ports)
	}
	L.Push(tbl)
	L.Push(info)
	return 2
}

// perfCountersTable reads PortCounters (PortCountersExtended when
// extended) as perfquery does (engine.Session.PerfCounters) and returns
// them with the fields the PMA's capabilities leave out nil.
func (e *Env) perfCountersTable(L *lua.LState, fn string, t engine.Target, port uint8, extended bool) (*engine.Counters, lua.LValue) {
	c, err := e.sess.PerfCounters(L.Context(), t, port, extended)
	if err != nil {
		raise(L, fn, "%v", err)
	}
	tbl := e.layoutTable(c.Layout, c.Data)
	for _, name := range c.Absent {
		f, _ := c.Layout.Field(name)
		asView(tbl).store(L, lua.LString(f.Key()), lua.LNil)
	}
	return c, tbl
}

func perfGet(e *Env, L *lua.LState) int {
	t := checkTarget(L, "perf.get", 1)
	port := uint8(checkUint(L, 2, 0xff))
	var l *mad.Layout
	switch v := L.Get(3).(type) {
	case lua.LString:
		if l = perf.LayoutByName(string(v)); l == nil {
			raise(L, "perf.get", "unknown attribute %q", string(v))
		}
	case lua.LNumber:
		if l = perf.LayoutByID(uint16(v)); l == nil {
			raise(L, "perf.get", "unknown attribute ID 0x%04x", uint16(v))
		}
	default:
		L.ArgError(3, "attribute name or ID expected, got "+v.Type().String())
	}
	if l == perf.PortExtendedSpeedsCountersLayout() {
		// The layout perfquery -T prints: RS-FEC's when the PMA and the
		// port say it is active (ask "PortExtendedSpeedsCountersRSFEC"
		// for that layout whatever they say).
		c, err := e.sess.ExtendedSpeedsCounters(L.Context(), t, port)
		if err != nil {
			raise(L, "perf.get", "%v", err)
		}
		L.Push(e.layoutTable(c.Layout, c.Data))
		return 1
	}
	if l.ID == perf.AttrPortCounters || l.ID == perf.AttrPortCountersExtended {
		// As perf.counters: the layout and fields the PMA's
		// ClassPortInfo gives, AllPortSelect emulated.
		_, tbl := e.perfCountersTable(L, "perf.get", t, port, l.ID == perf.AttrPortCountersExtended)
		L.Push(tbl)
		return 1
	}
	data, err := e.sess.Perf(L.Context(), t, mad.MethodGet, l.ID, port, nil)
	if err != nil {
		raise(L, "perf.get", "%v", err)
	}
	L.Push(e.layoutTable(l, data))
	return 1
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
