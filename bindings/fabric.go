package bindings

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/topo"
	"github.com/ibscript/ibscript/topo/export"
)

func fabricModule() Module {
	return Module{
		Name:    "fabric",
		Summary: "the fabric as a whole: discovery and the local port",
		Funcs: []Func{
			{"discover", fabricDiscover, "discover([{max_hops=N, reference=FILE or fabric, planes=BOOL}]) -> table: {nodes, links, errors} found by directed route from the local port, each route's NodeInfo read until two reads agree where answers can arrive damaged (the simulator injecting corruption; once on the kernel's ports and ibsim, whose answers arrive intact); what failed (after the sweep went back for it, up to 4 passes) or contradicted what the sweep knew is in errors ({path=, err=, where=}: where names the node asked, or the port a route leaves from and what the reference, else the last discovery, had cabled there), never raised. planes=true, when the local port is a planarized CA's (its SMI side another CA's port), discovers every plane through each plane port of that CA and merges them by GUID: each CA whose plane ports share one port GUID has planarized=true, every port table its plane (the plane of the local plane port whose walk reached it: its port number on the SMI device, docs/planes.md); on any other port it is the plain discovery (docs/planes.md)"},
			{"dr_path", fabricDRPath, "dr_path(lid [, from]) -> string: a directed route (\"dr:0,1,3\") to the port of LID lid, built by walking the switches' LFTs with live SMPs from from (a \"dr:...\" route; default the local port), as current rdma-core's build_dr_path_to_lid does (LID-routed SMPs are not guaranteed in XDR fabrics); no route raises rdma-core's reason (\"Bad forwarding table entry found at: ...\", \"can't reach port at ...\")"},
			{"port", fabricPort, "port() -> table: the local port (ca_name, portnum, base_lid, sm_lid, state, port_guid, ...)"},
			{"sweep", fabricSweep, "sweep(what, ports [, {fields={names}, nonzero=bool}]) -> array: one query per port table of fabric.discover, all concurrently (fields: decode only those; nonzero: leave out numeric fields that are 0); what is \"portcounters\", \"portcounters_ext\", \"portinfo\", \"sminfo\", \"nodeinfo\" or \"pkeys\" (the non-zero P_Keys of block 0); result i is {port=, value=} or {port=, err=}, never raised; the ports of the last fabric.discover{planes=true} of a planarized port are read through their own plane (SMPs of a node found from another plane port by its directed route from that port, opened for the sweep; PerfMgt queries by the port's LID, which the GSI side sends on that LID's plane)"},
			{"routes", fabricRoutes, "routes(f) -> table: reads every switch's LFT concurrently and follows every LID from every switch: {switches, lids, routes, count, loops, inherited, problems={{switch, lid, port, kind, msg}} (root causes, at most 1000), hops={[links]=host pairs}, errors={{path, err, switch}} (the switches whose tables could not be read)}; on the last fabric.discover{planes=true} of a planarized port, plane by plane: every plane's switches read in one pass over that discovery (each through its own plane port, only the LFT blocks holding its plane's LIDs) and followed to their plane's LIDs alone (docs/planes.md); the planes' figures summed, a problem's msg and an error's path led by its plane (\"plane 3: lid:12\"), and each with its plane (plane=)"},
			{"load", fabricLoad, "load(path) -> table: a saved topology (JSON snapshot of fabric.save, ibnetdiscover or ibsim file) as the tables fabric.discover returns, for offline checks and fabric.diff"},
			{"save", fabricSave, "save(f, path [, {format=\"json\"|\"ibnetdiscover\", node_name_map=path}]) -> nil: writes a fabric as a JSON snapshot (default) or in ibnetdiscover's format, node names from an ibnetdiscover node-name-map file"},
			{"diff", fabricDiff, "diff(reference, f) -> array: differences most severe first, each {severity=\"critical\"|\"major\"|\"minor\"|\"info\", kind, msg, object}: missing-node, extra-node, node-replaced, missing-cable, moved-cable, extra-cable, degraded-link, field-changed"},
			{"format", fabricFormat, "format(f [, format [, {node_name_map=path}]]) -> string: a fabric in ibnetdiscover's topology format (default), or as ibscript topology writes it: \"slurm-conf\" (Slurm's topology.conf), \"slurm-yaml\" (topology.yaml), \"dot\" (Graphviz), \"json\" (a graph; docs/topology.md)"},
		},
	}
}

// The discovered fabric as Lua sees it: nodes and ports are tables that
// reference each other (port.node, port.remote, node.ports[n]).
const fabricKey = "__topo" // hidden userdata holding the *topo.Fabric

func fabricDiscover(e *Env, L *lua.LState) int {
	var opts engine.DiscoverOptions
	planes := false
	if t := L.OptTable(1, nil); t != nil {
		checkOptions(L, "fabric.discover", t, map[string]bool{"max_hops": true, "reference": true, "planes": true})
		switch v := t.RawGetString("planes").(type) {
		case *lua.LNilType:
		case lua.LBool:
			planes = bool(v)
		default:
			raise(L, "fabric.discover", "planes must be a boolean, got %s", v.Type())
		}
		if v := t.RawGetString("max_hops"); v != lua.LNil {
			n, ok := v.(lua.LNumber)
			if !ok || n < 1 || n > 63 {
				raise(L, "fabric.discover", "max_hops must be 1..63, got %s", v.String())
			}
			opts.MaxHops = int(n)
		}
		switch v := t.RawGetString("reference").(type) {
		case *lua.LNilType:
		case lua.LString:
			f, err := filesOf(L).LoadTopology(L.Context(), string(v))
			if err != nil {
				raise(L, "fabric.discover", "reference: %v", err)
			}
			opts.Reference = f
		case *lua.LTable:
			ud, _ := v.RawGetString(fabricKey).(*lua.LUserData)
			f, ok := (*topo.Fabric)(nil), ud != nil
			if ok {
				f, ok = ud.Value.(*topo.Fabric)
			}
			if !ok {
				raise(L, "fabric.discover", "reference: a fabric from fabric.discover or fabric.load, or a topology file, expected")
			}
			opts.Reference = f
		default:
			raise(L, "fabric.discover", "reference: a fabric from fabric.discover or fabric.load, or a topology file, expected, got %s", v.Type())
		}
	}
	if e.progress != nil {
		opts.Progress = func(nodes, pending int) { e.progress(nodes, 0, "fabric.discover: nodes found") }
	}
	discover := e.sess.Discover
	if planes {
		discover = func(ctx context.Context, o *engine.DiscoverOptions) (*engine.Discovery, error) {
			return e.sess.DiscoverPlanes(ctx, e.fab, o)
		}
	}
	d, err := discover(L.Context(), &opts)
	if err != nil {
		raise(L, "fabric.discover", "%v", err)
	}
	if planes {
		e.planes = d
	}
	d.Fabric.Rename(e.names)
	ft := e.fabricTable(d)
	e.noteFabric(len(d.Fabric.Nodes), ft.RawGetString("links").(*lua.LTable).Len())
	L.Push(ft)
	return 1
}

// checkOptions rejects unknown keys of an option table.
func checkOptions(L *lua.LState, fn string, t *lua.LTable, known map[string]bool) {
	t.ForEach(func(k, _ lua.LValue) {
		if !known[k.String()] {
			var names []string
			for n := range known {
				names = append(names, n)
			}
			slices.Sort(names)
			near := ""
			if sug := Suggest(k.String(), names); len(sug) > 0 {
				near = "did you mean " + strings.Join(sug, " or ") + "? "
			}
			raise(L, fn, "unknown option %q (%sknown: %s)", k.String(), near, strings.Join(names, ", "))
		}
	})
}

// The keys of fabric.discover's node, port and link tables, in the order
// they are set.
var (
	nodeKeys = []string{"guid", "sys_guid", "id", "desc", "type", "num_ports",
		"vendor_id", "device_id", "ports", "lid", "enhanced_port0"}
	portKeys = []string{"node", "num", "guid", "lid", "lmc", "state", "phys_state",
		"cap_mask", "width_enabled", "width_active", "speed_enabled", "speed_active",
		"speed_ext_enabled", "speed_ext_active", "remote"}
	linkKeys = []string{"a", "b"}
)

func (e *Env) fabricTable(d *engine.Discovery) *lua.LTable {
	L := e.L
	nodes := L.CreateTable(len(d.Fabric.Nodes), 0)
	portTabs := make(map[*topo.Port]*lua.LTable)
	nodeMeta := e.namedMeta("fabric.node", func(L *lua.LState) int {
		t := L.CheckTable(1)
		L.Push(lua.LString(t.RawGetString("type").String() + " " + t.RawGetString("guid").String() + " \"" + t.RawGetString("desc").String() + "\""))
		return 1
	})
	portMeta := e.namedMeta("fabric.port", func(L *lua.LState) int {
		t := L.CheckTable(1)
		n, _ := t.RawGetString("node").(*lua.LTable)
		desc := ""
		if n != nil {
			desc = n.RawGetString("desc").String()
		}
		L.Push(lua.LString("\"" + desc + "\" port " + t.RawGetString("num").String()))
		return 1
	})
	// Node and port tables have fixed keys, set in this order (pairs
	// yields them so). A port's "remote" is set once every port table
	// exists.
	var nv [11]lua.LValue
	var pv [15]lua.LValue
	for _, n := range d.Fabric.Nodes {
		nt := fixedTable(L, nodeKeys, nv[:], nodeMeta) // filled below: the ports refer to it
		lid := 0
		ports := L.CreateTable(len(n.Ports), 0)
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			pv = [15]lua.LValue{nt, num(p.Num), Hex64(p.GUID), num(int(p.LID)), num(int(p.LMC)),
				num(int(p.State)), num(int(p.PhysState)), num(int(p.CapMask)),
				num(int(p.WidthEnabled)), num(int(p.WidthActive)), num(int(p.SpeedEnabled)),
				num(int(p.SpeedActive)), num(int(p.SpeedExtEnabled)), num(int(p.SpeedExtActive)), nil}
			pt := fixedTable(L, portKeys, pv[:], portMeta)
			if p.Plane != 0 {
				pt.RawSetString("plane", num(int(p.Plane)))
			}
			ports.RawSetInt(p.Num, pt)
			portTabs[p] = pt
			if lid == 0 && p.LID != 0 && (n.Type != topo.Switch || p.Num == 0) {
				lid = int(p.LID)
			}
		}
		nt.RawSetString("guid", Hex64(n.GUID))
		nt.RawSetString("sys_guid", Hex64(n.SysGUID))
		nt.RawSetString("id", lua.LString(n.ID))
		nt.RawSetString("desc", lua.LString(n.Desc))
		nt.RawSetString("type", lua.LString(n.Type.String()))
		nt.RawSetString("num_ports", num(int(n.NumPorts)))
		nt.RawSetString("vendor_id", num(int(n.VendorID)))
		nt.RawSetString("device_id", num(int(n.DeviceID)))
		nt.RawSetString("ports", ports)
		nt.RawSetString("lid", num(lid))
		nt.RawSetString("enhanced_port0", lua.LBool(n.EnhancedPort0))
		if n.Planarized {
			nt.RawSetString("planarized", lua.LTrue)
		}
		nodes.Append(nt)
	}
	for p, pt := range portTabs {
		if p.Remote != nil {
			if rt, ok := portTabs[p.Remote]; ok {
				pt.RawSetString("remote", rt)
			}
		}
	}
	linkMeta := e.namedMeta("fabric.link", func(L *lua.LState) int {
		t := L.CheckTable(1)
		L.Push(lua.LString(L.ToStringMeta(t.RawGetString("a")).String() + " <-> " + L.ToStringMeta(t.RawGetString("b")).String()))
		return 1
	})
	fl := d.Fabric.Links()
	links := L.CreateTable(len(fl), 0)
	for _, l := range fl {
		links.Append(fixedTable(L, linkKeys, []lua.LValue{portTabs[l.A], portTabs[l.B]}, linkMeta))
	}
	errs := L.CreateTable(len(d.Errors), 0)
	for _, te := range d.Errors {
		et := L.CreateTable(0, 3)
		et.RawSetString("path", lua.LString(te.Path))
		if e.unreadable(te.Err) {
			noteUnread(L, te.Detail())
			et.RawSetString("unreadable", lua.LTrue)
		}
		et.RawSetString("err", lua.LString(te.Detail()))
		if te.Where != "" {
			et.RawSetString("where", lua.LString(te.Where))
		}
		errs.Append(et)
	}
	ft := L.CreateTable(0, 4)
	ft.RawSetString("nodes", nodes)
	ft.RawSetString("links", links)
	ft.RawSetString("errors", errs)
	ud := L.NewUserData()
	ud.Value = d.Fabric
	ft.RawSetString(fabricKey, ud)
	dud := L.NewUserData()
	dud.Value = d
	ft.RawSetString(discKey, dud)
	return ft
}

// namedMeta returns a metatable made once per Env for a kind of table.
func (e *Env) namedMeta(name string, tostring lua.LGFunction) *lua.LTable {
	if e.metas == nil {
		e.metas = make(map[string]*lua.LTable)
	}
	if mt, ok := e.metas[name]; ok {
		return mt
	}
	mt := e.L.NewTable()
	mt.RawSetString("__name", lua.LString(name))
	mt.RawSetString("__tostring", e.L.NewFunction(tostring))
	e.metas[name] = mt
	return mt
}

func fabricFormat(e *Env, L *lua.LState) int {
	t := L.CheckTable(1)
	var f *topo.Fabric
	if ud, ok := t.RawGetString(fabricKey).(*lua.LUserData); ok {
		f, _ = ud.Value.(*topo.Fabric)
	}
	if f == nil {
		L.ArgError(1, "a fabric from fabric.discover expected")
	}
	format := L.OptString(2, "ibnetdiscover")
	opts := L.OptTable(3, L.NewTable())
	checkOptions(L, "fabric.format", opts, map[string]bool{"node_name_map": true})
	names := nameMapOption(L, "fabric.format", opts)
	var b strings.Builder
	var err error
	switch format {
	case "ibnetdiscover":
		err = topo.WriteIBNetDiscover(&b, f, &topo.WriteOptions{NameMap: names})
	case "slurm-conf", "slurm-yaml", "dot", "json":
		err = export.Write(&b, f, format, &export.Options{Names: names})
	default:
		L.ArgError(2, "\"ibnetdiscover\", \"slurm-conf\", \"slurm-yaml\", \"dot\" or \"json\" expected, got \""+format+"\"")
	}
	if err != nil {
		raise(L, "fabric.format", "%v", err)
	}
	L.Push(lua.LString(b.String()))
	return 1
}

// fabricDRPath is fabric.dr_path: engine.Session.DRPathToLID.
func fabricDRPath(e *Env, L *lua.LState) int {
	const fn = "fabric.dr_path"
	lid := L.CheckNumber(1)
	if lid != lua.LNumber(int64(lid)) || lid < 1 || lid > 0xffff {
		L.ArgError(1, fmt.Sprintf("1..65535 expected, got %v", lid))
	}
	var from []uint8
	if L.GetTop() >= 2 && L.Get(2) != lua.LNil {
		t := checkTarget(L, fn, 2)
		if t.Kind != engine.ByDR {
			L.ArgError(2, fmt.Sprintf("a directed route (\"dr:0,1,...\") expected, got %s", t))
		}
		from = t.Path
	}
	path, err := e.sess.DRPathToLID(L.Context(), from, uint16(lid))
	if de := (*engine.DRPathError)(nil); errors.As(err, &de) {
		if de.Err != nil {
			raise(L, fn, "lid %d: %s: %v", de.LID, de.Msg, de.Err)
		}
		raise(L, fn, "lid %d: %s", de.LID, de.Msg)
	} else if err != nil {
		raise(L, fn, "lid %d: %v", uint16(lid), err)
	}
	L.Push(lua.LString(engine.Target{Kind: engine.ByDR, Path: path}.String()))
	return 1
}

func fabricPort(e *Env, L *lua.LState) int {
	L.Push(portAttrTable(L, e.sess.Port()))
	return 1
}

// portAttrTable is umad_port_t as a table, with host-order numbers and
// GUIDs as hex strings.
func portAttrTable(L *lua.LState, p fabric.PortAttr) *lua.LTable {
	t := L.CreateTable(0, 15)
	t.RawSetString("ca_name", lua.LString(p.CAName))
	t.RawSetString("portnum", lua.LNumber(p.PortNum))
	t.RawSetString("node_type", lua.LNumber(p.NodeType))
	t.RawSetString("base_lid", lua.LNumber(p.LID))
	t.RawSetString("lmc", lua.LNumber(p.LMC))
	t.RawSetString("sm_lid", lua.LNumber(p.SMLID))
	t.RawSetString("sm_sl", lua.LNumber(p.SMSL))
	t.RawSetString("state", lua.LNumber(p.State))
	t.RawSetString("phys_state", lua.LNumber(p.PhysState))
	t.RawSetString("rate", lua.LNumber(p.Rate))
	t.RawSetString("capmask", lua.LNumber(p.CapMask))
	t.RawSetString("gid_prefix", Hex64(p.GIDPrefix))
	t.RawSetString("port_guid", Hex64(p.PortGUID))
	t.RawSetString("node_guid", Hex64(p.NodeGUID))
	ll := p.LinkLayer
	if ll == "" {
		ll = "InfiniBand"
	}
	t.RawSetString("link_layer", lua.LString(ll))
	pk := L.CreateTable(len(p.PKeys), 0)
	for _, k := range p.PKeys {
		pk.Append(lua.LNumber(k))
	}
	t.RawSetString("pkeys", pk)
	t.RawSetString("pkeys_size", lua.LNumber(len(p.PKeys)))
	// gids: the port's GID table keyed by GID index (from 0, as
	// gid_index counts), as IPv6 text; unused entries are absent.
	n := max(len(p.GIDs), 1)
	gt := L.CreateTable(0, n)
	for i := range n {
		if g, ok := p.GID(i); ok {
			gt.RawSetInt(i, lua.LString(FormatGID(g)))
		}
	}
	t.RawSetString("gids", gt)
	if p.SMIName != "" {
		// A planarized port's SMI side, where its SMPs go.
		t.RawSetString("smi_name", lua.LString(p.SMIName))
		t.RawSetString("smi_portnum", lua.LNumber(p.SMIPort))
	}
	return t
}

// smallNums are the Lua numbers 0..255 already boxed: a discovered
// fabric's tables hold a million small numbers, and boxing each one would
// allocate.
var smallNums = func() (t [256]lua.LValue) {
	for i := range t {
		t[i] = lua.LNumber(i)
	}
	return
}()

func num(v int) lua.LValue {
	if v >= 0 && v < len(smallNums) {
		return smallNums[v]
	}
	return lua.LNumber(v)
}
