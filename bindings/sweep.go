package bindings

import (
	"sort"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// Bulk queries: fabric.sweep runs one query per port of a discovered
// fabric concurrently (engine.Session.Sweep) and returns per-port results;
// fabric.routes reads every switch's forwarding table and follows every
// LID route in Go.

type sweepKind struct {
	class  engine.SweepClass
	attr   uint16
	layout *mad.Layout
	// mod is the attribute modifier (for PerfMgt, the port) for a port.
	mod func(num int, isSwitch bool) uint32
}

var sweepKinds = map[string]sweepKind{
	"portcounters":     {engine.SweepPerf, perf.AttrPortCounters, perf.LayoutByID(perf.AttrPortCounters), func(num int, _ bool) uint32 { return uint32(num) }},
	"portcounters_ext": {engine.SweepPerf, perf.AttrPortCountersExtended, perf.LayoutByID(perf.AttrPortCountersExtended), func(num int, _ bool) uint32 { return uint32(num) }},
	"portinfo":         {engine.SweepSMP, smp.AttrPortInfo, smp.PortInfoLayout(), func(num int, _ bool) uint32 { return uint32(num) }},
	"sminfo":           {engine.SweepSMP, smp.AttrSMInfo, smp.SMInfoLayout(), func(int, bool) uint32 { return 0 }},
	"nodeinfo":         {engine.SweepSMP, smp.AttrNodeInfo, smp.NodeInfoLayout(), func(int, bool) uint32 { return 0 }},
	"pkeys": {engine.SweepSMP, smp.AttrPKeyTable, nil, func(num int, isSwitch bool) uint32 {
		if isSwitch {
			return uint32(num) << 16
		}
		return 0
	}},
}

func sweepKindNames() string {
	var names []string
	for k := range sweepKinds {
		names = append(names, k)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// portTarget addresses a port table of fabric.discover: by the LID of its
// node (switch port 0) or port, else by the directed route to its node. A
// node of the last fabric.discover{planes=true} of a planarized port is
// addressed by its directed route (engine.Discovery.Target: from the
// session's port when its plane port found it, else from the plane port
// that did, which the engine sends it from): a LID of another plane is not
// routed on the session's, and a planarized CA's ports have a LID on each
// plane. A GMP (gmp: PerfMgt) goes by the LID all the same: it leaves by
// the GSI side on the plane that routes its LID (docs/planes.md), where a
// directed route would cost two SMPs per query to learn the LID.
func (e *Env) portTarget(L *lua.LState, fn string, i int, pt *lua.LTable, gmp bool) (t engine.Target, num int, isSwitch bool) {
	nt, _ := pt.RawGetString("node").(*lua.LTable)
	if nt == nil {
		raise(L, fn, "ports[%d]: a port table of fabric.discover expected", i)
	}
	num = int(lua.LVAsNumber(pt.RawGetString("num")))
	isSwitch = lua.LVAsString(nt.RawGetString("type")) == "Switch"
	guid, err := strconv.ParseUint(strings.TrimPrefix(nt.RawGetString("guid").String(), "0x"), 16, 64)
	if err != nil {
		raise(L, fn, "ports[%d]: node guid %q", i, nt.RawGetString("guid").String())
	}
	if d := e.planes; d != nil && !(gmp && portLID(nt, pt, isSwitch) != 0) {
		if r, ok := d.Route(guid); ok && r.CAName != "" {
			if t, ok := d.Target(guid); ok {
				return t, num, isSwitch
			}
		}
	}
	if lid := portLID(nt, pt, isSwitch); lid != 0 {
		return engine.LID(uint16(lid)), num, isSwitch
	}
	if d := e.sess.LastDiscovery(); d != nil {
		if t, ok := d.Target(guid); ok {
			return t, num, isSwitch
		}
	}
	return engine.GUID(guid), num, isSwitch
}

// portLID is the LID port table pt of node table nt is reached at: its
// node's (a switch's port 0) or its own.
func portLID(nt, pt *lua.LTable, isSwitch bool) int {
	if isSwitch {
		return int(lua.LVAsNumber(nt.RawGetString("lid")))
	}
	return int(lua.LVAsNumber(pt.RawGetString("lid")))
}

// sweepPasses is how many passes fabric.sweep makes over the queries that
// could not be read: as many as discovery makes.
const sweepPasses = 4

func fabricSweep(e *Env, L *lua.LState) int {
	what := L.CheckString(1)
	k, ok := sweepKinds[what]
	if !ok {
		L.ArgError(1, "unknown sweep \""+what+"\" (known: "+sweepKindNames()+")")
	}
	list := L.CheckTable(2)
	n := list.Len()
	var only []int // indexes of the fields wanted; nil means all
	nonzero := false
	if opts := L.OptTable(3, nil); opts != nil {
		checkOptions(L, "fabric.sweep", opts, map[string]bool{"fields": true, "nonzero": true})
		nonzero = lua.LVAsBool(opts.RawGetString("nonzero"))
		if ft, ok := opts.RawGetString("fields").(*lua.LTable); ok {
			only = sweepFields(L, k, what, ft)
		}
	}
	reqs := make([]engine.SweepReq, n)
	for i := 1; i <= n; i++ {
		pt, ok := list.RawGetInt(i).(*lua.LTable)
		if !ok {
			raise(L, "fabric.sweep", "ports[%d]: port table expected, got %s", i, list.RawGetInt(i).Type())
		}
		t, num, isSwitch := e.portTarget(L, "fabric.sweep", i, pt, k.class == engine.SweepPerf)
		reqs[i-1] = engine.SweepReq{Target: t, Class: k.class, Method: mad.MethodGet, AttrID: k.attr, AttrMod: k.mod(num, isSwitch)}
	}
	var progress func(done, total int)
	if e.progress != nil {
		progress = func(done, total int) { e.progress(done, total, what) }
	}
	// Queries that could not be read are asked again once each pass is
	// over, as discovery goes back for what it missed.
	res := e.sess.Sweep(L.Context(), reqs, progress, engine.Passes(sweepPasses))
	if err := L.Context().Err(); err != nil {
		raise(L, "fabric.sweep", "%v", err)
	}
	out := L.CreateTable(n, 0)
	for i, r := range res {
		rt := L.CreateTable(0, 2)
		rt.RawSetString("port", list.RawGetInt(i+1))
		if r.Err != nil {
			raiseRunError(L, "fabric.sweep", r.Err)
			if e.unreadable(r.Err) {
				noteUnread(L, r.Err.Error())
				rt.RawSetString("unreadable", lua.LTrue)
			}
			rt.RawSetString("err", lua.LString(r.Err.Error()))
		} else if k.layout != nil && (only != nil || nonzero) {
			if only == nil {
				only = make([]int, len(k.layout.Fields))
				for j := range only {
					only[j] = j
				}
			}
			rt.RawSetString("value", e.someFields(k.layout, r.Data, only, nonzero))
		} else if k.layout != nil {
			rt.RawSetString("value", e.layoutTable(k.layout, r.Data))
		} else if v, err := pkeyList(L, r.Data); err != nil {
			rt.RawSetString("err", lua.LString(err.Error()))
		} else {
			rt.RawSetString("value", v)
		}
		out.Append(rt)
	}
	L.Push(out)
	return 1
}

// sweepFields is the indexes in k's layout of the fields listed in ft
// (fabric.sweep's fields option); what names the sweep in errors.
func sweepFields(L *lua.LState, k sweepKind, what string, ft *lua.LTable) []int {
	if k.layout == nil {
		raise(L, "fabric.sweep", "%s has no fields to choose", what)
	}
	var only []int
	for i := 1; i <= ft.Len(); i++ {
		name := ft.RawGetInt(i).String()
		idx := -1
		for j, f := range k.layout.Fields {
			if f.Key() == name {
				idx = j
			}
		}
		if idx < 0 {
			raise(L, "fabric.sweep", "%s has no field %q", k.layout.Name, name)
		}
		only = append(only, idx)
	}
	return only
}

// pkeyList is a P_KeyTable block as a list of its non-zero P_Keys.
func pkeyList(L *lua.LState, data []byte) (*lua.LTable, error) {
	var pk smp.PKeyTable
	if err := pk.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	arr := L.CreateTable(1, 0)
	for _, key := range pk.PKeys {
		if key != 0 {
			arr.Append(lua.LNumber(key))
		}
	}
	return arr, nil
}

func fabricRoutes(e *Env, L *lua.LState) int {
	ft := L.CheckTable(1)
	d := discoveryOf(ft)
	if d == nil {
		L.ArgError(1, "a fabric from fabric.discover expected")
	}
	var progress func(done, total int)
	if e.progress != nil {
		progress = func(done, total int) { e.progress(done, total, "forwarding tables") }
	}
	ra, lftErrs := e.routesOf(L.Context(), d, progress)
	if err := L.Context().Err(); err != nil {
		raise(L, "fabric.routes", "%v", err)
	}
	nodeTab := map[uint64]lua.LValue{} // by GUID
	if nodes, ok := ft.RawGetString("nodes").(*lua.LTable); ok {
		for i, n := range d.Fabric.Nodes {
			nodeTab[n.GUID] = nodes.RawGetInt(i + 1)
		}
	}
	out := L.CreateTable(0, 8)
	out.RawSetString("switches", lua.LNumber(ra.Switches))
	out.RawSetString("lids", lua.LNumber(ra.LIDs))
	out.RawSetString("routes", lua.LNumber(ra.Routes))
	out.RawSetString("count", lua.LNumber(ra.Count))
	out.RawSetString("loops", lua.LNumber(ra.Loops))
	out.RawSetString("inherited", lua.LNumber(ra.Inherited))
	out.RawSetString("unknown", lua.LNumber(ra.Unknown))
	probs := L.CreateTable(len(ra.Problems), 0)
	for _, p := range ra.Problems {
		pt := L.CreateTable(0, 6)
		if p.Switch != nil {
			pt.RawSetString("switch", nodeTab[p.Switch.GUID])
			if pl := nodePlane(p.Switch); pl != 0 {
				pt.RawSetString("plane", lua.LNumber(pl))
			}
		}
		pt.RawSetString("lid", lua.LNumber(p.LID))
		pt.RawSetString("port", lua.LNumber(p.Port))
		pt.RawSetString("kind", lua.LString(p.Kind))
		pt.RawSetString("msg", lua.LString(p.Detail))
		probs.Append(pt)
	}
	out.RawSetString("problems", probs)
	hops := L.NewTable()
	for h, n := range ra.Hops {
		hops.RawSetInt(h, lua.LNumber(n))
	}
	out.RawSetString("hops", hops)
	errs := L.CreateTable(len(lftErrs), 0)
	for _, te := range lftErrs {
		raiseRunError(L, "fabric.routes", te.Err)
		et := L.CreateTable(0, 5)
		et.RawSetString("path", lua.LString(te.Path))
		if te.Switch != nil && nodeTab[te.Switch.GUID] != nil {
			et.RawSetString("switch", nodeTab[te.Switch.GUID])
		}
		if te.Plane != 0 {
			et.RawSetString("plane", lua.LNumber(te.Plane))
		}
		if e.unreadable(te.Err) {
			noteUnread(L, te.Err.Error())
			et.RawSetString("unreadable", lua.LTrue)
		}
		et.RawSetString("err", lua.LString(te.Err.Error()))
		errs.Append(et)
	}
	out.RawSetString("errors", errs)
	L.Push(out)
	return 1
}

const discKey = "__discovery" // hidden userdata holding the *engine.Discovery

func discoveryOf(ft *lua.LTable) *engine.Discovery {
	if ud, ok := ft.RawGetString(discKey).(*lua.LUserData); ok {
		d, _ := ud.Value.(*engine.Discovery)
		return d
	}
	return nil
}

// someFields is a plain table of the fields of b (through l) at indexes
// only, without the numeric ones that are zero when nonzero is set. Key
// fields read as in a record: "<masked>" or the zero GUID.
func (e *Env) someFields(l *mad.Layout, b []byte, only []int, nonzero bool) *lua.LTable {
	v := asView(e.layoutTable(l, b))
	t := e.L.CreateTable(0, len(only))
	for _, j := range only {
		f := l.Fields[j]
		if nonzero && f.Numeric() && f.Width <= 64 && f.Get(b) == 0 {
			continue
		}
		t.RawSet(v.r.keys[j], v.field(j))
	}
	return t
}
