package bindings

import (
	"fmt"
	"io"
)

// The Lua data model: every table a function returns that is not a
// decoded attribute or SA record (those follow their layouts, listed by
// ls() and in the reference), field by field. The API reference is
// generated from it, and TestDataModel checks each entry against the
// tables the functions really return, so the two never disagree.

// tableDoc documents one kind of table.
type tableDoc struct {
	Name   string     // as the reference names it: "fabric.node"
	From   string     // what returns it
	Fields []fieldDoc // in the order the reference lists them
	// Sample is a Lua expression giving one such table on the bundled
	// default fabric (TestDataModel compares its keys with Fields).
	Sample string
}

// fieldDoc is one field of a table.
type fieldDoc struct {
	Key, Type, Desc string
	Optional        bool // present only when it applies
}

var dataModel = []tableDoc{
	{Name: "fabric", From: "`fabric.discover()`, `fabric.load(path)`", Sample: "fabric.discover()", Fields: []fieldDoc{
		{Key: "nodes", Type: "array of node", Desc: "every node found, in discovery order (breadth first from the local port)"},
		{Key: "links", Type: "array of link", Desc: "every cable, each once"},
		{Key: "errors", Type: "array of error", Desc: "the queries that failed, one per directed route; the sweep went on around them (empty for `fabric.load`)"},
	}},
	{Name: "node", From: "`f.nodes[i]`, `port.node`", Sample: "fabric.discover().nodes[1]", Fields: []fieldDoc{
		{Key: "guid", Type: "string", Desc: "NodeGUID, `0x` and 16 hex digits"},
		{Key: "sys_guid", Type: "string", Desc: "SystemImageGUID"},
		{Key: "id", Type: "string", Desc: "the node's name in a topology file (`S-0002c90300000001` for a discovered switch, as ibnetdiscover writes it)"},
		{Key: "desc", Type: "string", Desc: "NodeDescription, or its name in `--node-name-map`"},
		{Key: "type", Type: "string", Desc: "`\"CA\"`, `\"Switch\"` or `\"Router\"`"},
		{Key: "num_ports", Type: "number", Desc: "NumPorts of NodeInfo"},
		{Key: "vendor_id", Type: "number", Desc: "VendorID"},
		{Key: "device_id", Type: "number", Desc: "DeviceID"},
		{Key: "ports", Type: "table of port", Desc: "by port number (a switch's port 0 included; ports discovery did not reach are absent): iterate with `pairs`"},
		{Key: "lid", Type: "number", Desc: "the node's LID: a switch's port 0 LID, a CA's first port LID (0 when none)"},
		{Key: "enhanced_port0", Type: "boolean", Desc: "a switch whose port 0 is enhanced (it has a PMA)"},
		{Key: "planarized", Type: "boolean", Desc: "true on a planarized CA (its ports are its planes, one port GUID; docs/planes.md), as a topology file's `# planarized` line or a snapshot says (`fabric.load`), or as `fabric.discover{planes = true}` finds it from a planarized port (its plane ports, met on two or more planes, share one port GUID); a plain `fabric.discover()` sees one plane and cannot tell (no SMP says so)", Optional: true},
	}},
	{Name: "port", From: "`node.ports[n]`, `link.a`, `link.b`, `port.remote`", Sample: "fabric.discover().nodes[1].ports[1]", Fields: []fieldDoc{
		{Key: "node", Type: "node", Desc: "the node the port belongs to"},
		{Key: "num", Type: "number", Desc: "port number"},
		{Key: "guid", Type: "string", Desc: "PortGUID (a switch's ports share the node's)"},
		{Key: "lid", Type: "number", Desc: "LID of PortInfo (a switch's external ports carry the switch's)"},
		{Key: "lmc", Type: "number", Desc: "LMC"},
		{Key: "state", Type: "number", Desc: "PortState: 1 Down, 2 Init, 3 Armed, 4 Active (`smp.state_name`)"},
		{Key: "phys_state", Type: "number", Desc: "PortPhysicalState: 5 LinkUp, 2 Polling, 3 Disabled (`smp.phys_state_name`)"},
		{Key: "cap_mask", Type: "number", Desc: "CapabilityMask"},
		{Key: "width_enabled", Type: "number", Desc: "LinkWidthEnabled mask (`smp.width_name`)"},
		{Key: "width_active", Type: "number", Desc: "LinkWidthActive: 1 1X, 2 4X, 4 8X, 8 12X, 16 2X"},
		{Key: "speed_enabled", Type: "number", Desc: "LinkSpeedEnabled mask"},
		{Key: "speed_active", Type: "number", Desc: "LinkSpeedActive (`smp.speed_name(speed_active, speed_ext_active)`)"},
		{Key: "speed_ext_enabled", Type: "number", Desc: "LinkSpeedExtEnabled, with 32 for XDR (LinkSpeedExtEnabled2, as libibnetdisc aggregates it)"},
		{Key: "speed_ext_active", Type: "number", Desc: "LinkSpeedExtActive: 1 FDR, 2 EDR, 4 HDR, 8 NDR, 32 XDR (LinkSpeedExtActive2, as libibnetdisc's ibnd_get_agg_linkspeedext aggregates it); 0 when the port has no extended speeds"},
		{Key: "remote", Type: "port", Desc: "the port at the other end of the cable; absent when none", Optional: true},
		{Key: "plane", Type: "number", Desc: "the port's plane (1..8) in a planarized fabric loaded with `fabric.load` (a planarized CA's port's, a switch's: that of the planarized CA ports its island reaches, an ordinary CA's on a plane switch) or discovered with `fabric.discover{planes = true}` from a planarized port (the number of the local plane port whose walk reached it); absent elsewhere (docs/planes.md)", Optional: true},
	}},
	{Name: "link", From: "`f.links[i]`", Sample: "fabric.discover().links[1]", Fields: []fieldDoc{
		{Key: "a", Type: "port", Desc: "one end (the end discovery reached first)"},
		{Key: "b", Type: "port", Desc: "the other end"},
	}},
	{Name: "error", From: "`f.errors[i]`, `fabric.routes(f).errors[i]`", Sample: `(function() sim.faults{dead = {"leaf02"}} local f = fabric.discover() sim.faults{} return f.errors[1] end)()`, Fields: []fieldDoc{
		{Key: "path", Type: "string", Desc: "the directed route that failed, `\"dr:0,1,3\"`"},
		{Key: "err", Type: "string", Desc: "what failed (`... NodeInfo: timeout after 4 tries`), followed by `where` when known"},
		{Key: "where", Type: "string", Desc: "what the route leads to, when the sweep knows: the node it asked, or the port it leaves from and what the last discovery or the reference had cabled there", Optional: true},
		{Key: "unreadable", Type: "boolean", Desc: "true when the query could not be done (no answer after every try and pass, or answers that could not be verified), which says nothing of the fabric; given to `r:fail` in a plan check, `err` is then recorded as could-not-be-read", Optional: true},
	}},
	{Name: "local port", From: "`fabric.port()`, `umad.get_port([ca [, port]])`", Sample: "fabric.port()", Fields: []fieldDoc{
		{Key: "ca_name", Type: "string", Desc: "the CA's name (`mlx5_0`, `sim0`)"},
		{Key: "portnum", Type: "number", Desc: "port number"},
		{Key: "base_lid", Type: "number", Desc: "the port's LID"},
		{Key: "lmc", Type: "number", Desc: "LMC"},
		{Key: "sm_lid", Type: "number", Desc: "the master SM's LID"},
		{Key: "sm_sl", Type: "number", Desc: "the SL to reach the SM"},
		{Key: "state", Type: "number", Desc: "PortState (4 Active)"},
		{Key: "phys_state", Type: "number", Desc: "PortPhysicalState (5 LinkUp)"},
		{Key: "rate", Type: "number", Desc: "rate in Gb/s, as umad_port_t's rate"},
		{Key: "capmask", Type: "number", Desc: "CapabilityMask"},
		{Key: "gid_prefix", Type: "string", Desc: "the subnet prefix, hex"},
		{Key: "port_guid", Type: "string", Desc: "PortGUID"},
		{Key: "node_guid", Type: "string", Desc: "NodeGUID"},
		{Key: "node_type", Type: "number", Desc: "the CA's node type: 1 CA, 2 switch, 3 router"},
		{Key: "link_layer", Type: "string", Desc: "`\"InfiniBand\"`, or `\"Ethernet\"` on a RoCE port (every MAD there needs a GRH: `umad.send`'s `gid`), as umad_port_t's link_layer"},
		{Key: "gids", Type: "table", Desc: "the port's GID table keyed by GID index from 0 (`gids[0]`), as IPv6 text (`\"fe80::2:c903:a0:1\"`, a RoCE port's `\"::ffff:10.0.0.1\"` and `\"fd00::1\"`); unused indexes are absent"},
		{Key: "pkeys", Type: "array of number", Desc: "the port's P_Key table, as umad_port_t's pkeys (index 1 is P_Key index 0)"},
		{Key: "pkeys_size", Type: "number", Desc: "the number of P_Keys in `pkeys`"},
	}},
	{Name: "sweep result", From: "`fabric.sweep(what, ports)[i]`", Sample: `fabric.sweep("portcounters", {fabric.discover().nodes[1].ports[1]})[1]`, Fields: []fieldDoc{
		{Key: "port", Type: "port", Desc: "the port asked, as given (results are in the order of `ports`)"},
		{Key: "value", Type: "record or table", Desc: "the decoded attribute (a table of only the `fields` asked; with `nonzero`, only the counters that are not 0), or for `\"pkeys\"` the array of P_Keys; absent on error", Optional: true},
		{Key: "err", Type: "string", Desc: "why this port failed (a query that timed out or could not be verified was asked again in later passes first); the sweep went on. Given to `r:fail` in a plan check, such an err is recorded as could-not-be-read (status error), not a failure", Optional: true},
		{Key: "unreadable", Type: "boolean", Desc: "true when `err` is a read that could not be done (timed out after every try and pass, or answers that could not be verified), not an answer of the port", Optional: true},
	}},
	{Name: "routes", From: "`fabric.routes(f)`", Sample: "fabric.routes(fabric.discover())", Fields: []fieldDoc{
		{Key: "switches", Type: "number", Desc: "switches whose forwarding tables were read"},
		{Key: "lids", Type: "number", Desc: "end-port LIDs routed to"},
		{Key: "routes", Type: "number", Desc: "switch-to-LID routes followed"},
		{Key: "count", Type: "number", Desc: "root causes found: forwarding-table entries that lose a route (`problems` lists the first ones)"},
		{Key: "loops", Type: "number", Desc: "routes caught in a forwarding loop"},
		{Key: "inherited", Type: "number", Desc: "routes that fail only because they pass through a problem (not listed)"},
		{Key: "unknown", Type: "number", Desc: "routes whose outcome is not known: they reach a switch whose forwarding table could not be read (`errors`); neither problems nor inherited"},
		{Key: "problems", Type: "array of routing problem", Desc: "root causes, in LID order"},
		{Key: "hops", Type: "table", Desc: "histogram of host-to-host path lengths: `hops[n]` is how many host pairs are n links apart"},
		{Key: "errors", Type: "array of error", Desc: "forwarding tables that could not be read"},
	}},
	{Name: "routing problem", From: "`fabric.routes(f).problems[i]`", Sample: `(function() sim.lft("leaf01", 3, 255) local p = fabric.routes(fabric.discover()).problems[1] sim.lft("leaf01", 3, 33) return p end)()`, Fields: []fieldDoc{
		{Key: "switch", Type: "node", Desc: "the switch where the route goes wrong"},
		{Key: "lid", Type: "number", Desc: "the destination LID"},
		{Key: "port", Type: "number", Desc: "the egress port the table gives (255: dropped)"},
		{Key: "kind", Type: "string", Desc: "`\"drop\"` (port 255 or beyond the table), `\"uncabled\"`, `\"wrong-port\"`, `\"loop\"`, `\"port0\"`"},
		{Key: "msg", Type: "string", Desc: "the route, hop by hop, in words"},
	}},
	{Name: "change", From: "`fabric.diff(reference, f)[i]`", Sample: `fabric.diff(fabric.load("tests/topologies/net.2sw2path4hca"), fabric.discover())[1]`, Fields: []fieldDoc{
		{Key: "severity", Type: "string", Desc: "`\"critical\"`, `\"major\"`, `\"minor\"` or `\"info\"`; the array is sorted by it"},
		{Key: "kind", Type: "string", Desc: "`\"missing-node\"`, `\"extra-node\"`, `\"node-replaced\"`, `\"missing-cable\"`, `\"moved-cable\"`, `\"extra-cable\"`, `\"degraded-link\"`, `\"field-changed\"`"},
		{Key: "msg", Type: "string", Desc: "the change in words"},
		{Key: "object", Type: "node or port", Desc: "the node or port of `f` (or of `reference` when it is gone) the change concerns", Optional: true},
	}},
	{Name: "plan report", From: "`plan.report()`", Sample: `(function() plan.check("c", function(r) r:pass() end) return plan.report() end)()`, Fields: []fieldDoc{
		{Key: "checks", Type: "array of check summary", Desc: "every check so far, in the order they ran"},
		{Key: "passed", Type: "number", Desc: "checks that passed"},
		{Key: "failed", Type: "number", Desc: "checks that failed"},
		{Key: "skipped", Type: "number", Desc: "checks skipped"},
		{Key: "errors", Type: "number", Desc: "checks that could not read what they needed (status `\"error\"`)"},
	}},
	{Name: "check summary", From: "`plan.report().checks[i]`", Sample: `(function() plan.check("c", function(r) r:pass() end) return plan.report().checks[1] end)()`, Fields: []fieldDoc{
		{Key: "name", Type: "string", Desc: "the check's name"},
		{Key: "category", Type: "string", Desc: "its category (`general` when none)"},
		{Key: "status", Type: "string", Desc: "`\"pass\"`, `\"fail\"`, `\"skip\"` or `\"error\"` (something could not be read, nothing read was wrong)"},
		{Key: "passed", Type: "number", Desc: "results that passed"},
		{Key: "failed", Type: "number", Desc: "results that failed"},
		{Key: "skipped", Type: "number", Desc: "results skipped"},
		{Key: "errors", Type: "number", Desc: "results that could not be read"},
	}},
	{Name: "receive address", From: "the 4th result of `umad.recv`", Sample: `(function() local p = umad.open_port() local a = umad.register_agent(p, 0x01, 1)
local get = string.char(1, 1, 1, 1) .. string.rep("\0", 11) .. string.char(7, 0, 0x11) .. string.rep("\0", 256 - 18)
umad.send(p, a, get, 100, 3, {lid = 2}) local _, _, _, addr = umad.recv(p, 1000) p:close() return addr end)()`, Fields: []fieldDoc{
		{Key: "lid", Type: "number", Desc: "the sender's LID"},
		{Key: "qpn", Type: "number", Desc: "the sender's QP"},
		{Key: "qkey", Type: "number", Desc: "the Q_Key it was sent with (0x80010000 on QP1, 0 on QP0)"},
		{Key: "sl", Type: "number", Desc: "service level"},
		{Key: "pkey_index", Type: "number", Desc: "P_Key index"},
		{Key: "grh", Type: "boolean", Desc: "whether it came with a Global Route Header"},
		{Key: "gid", Type: "string", Desc: "with a GRH: the sender's GID, as IPv6 text", Optional: true},
		{Key: "gid_index", Type: "number", Desc: "with a GRH: the index of the local GID it was sent to", Optional: true},
		{Key: "hop_limit", Type: "number", Desc: "with a GRH: the hop limit of the route back (255 on InfiniBand, the kernel's route's on RoCE)", Optional: true},
		{Key: "traffic_class", Type: "number", Desc: "with a GRH: its traffic class", Optional: true},
		{Key: "flow_label", Type: "number", Desc: "with a GRH: its flow label (20 bits)", Optional: true},
	}},
	{Name: "cm event", From: "`rdmacm.get_cm_event(channel)`", Sample: `(function() local ch = rdmacm.create_event_channel() local id = rdmacm.create_id(ch)
rdmacm.resolve_addr(id, nil, {lid = umad.get_port("node002", 1).base_lid, port = 7471}, 2000)
local ev = rdmacm.get_cm_event(ch) local copy = {} for k, v in pairs(ev) do copy[k] = v end
rdmacm.ack_cm_event(ev) rdmacm.destroy_id(id) ch:close() return copy end)()`, Fields: []fieldDoc{
		{Key: "event", Type: "string", Desc: "librdmacm's name: `\"RDMA_CM_EVENT_ADDR_RESOLVED\"`, `\"RDMA_CM_EVENT_CONNECT_REQUEST\"`, ..."},
		{Key: "status", Type: "number", Desc: "0, or the negative errno / reject reason librdmacm gives"},
		{Key: "id", Type: "rdmacm.id", Desc: "the id the event is for (a new id on CONNECT_REQUEST)"},
		{Key: "listen_id", Type: "rdmacm.id", Desc: "on CONNECT_REQUEST: the listening id", Optional: true},
		{Key: "private_data", Type: "string", Desc: "the peer's private data, when it sent some", Optional: true},
		{Key: "responder_resources", Type: "number", Desc: "conn_param"},
		{Key: "initiator_depth", Type: "number", Desc: "conn_param"},
		{Key: "flow_control", Type: "number", Desc: "conn_param"},
		{Key: "retry_count", Type: "number", Desc: "conn_param"},
		{Key: "rnr_retry_count", Type: "number", Desc: "conn_param"},
		{Key: "srq", Type: "number", Desc: "conn_param"},
		{Key: "qp_num", Type: "number", Desc: "the peer's QP number"},
		{Key: "qkey", Type: "number", Desc: "the Q_Key (UD ids)"},
		{Key: "src_addr", Type: "table", Desc: "the event's id's own address as the CM reports it (librdmacm's `event->id->route.addr.src_addr`): `{ip, port}` for IP addresses, `{lid, gid, port}` for AF_IB; a CONNECT_REQUEST's new id's is the listener's address and port the request named"},
		{Key: "dst_addr", Type: "table", Desc: "the event's id's peer address, as `src_addr`; a CONNECT_REQUEST's is the requester's address and port"},
	}},
}

// writeDataModel writes the reference's data model section.
func writeDataModel(w io.Writer) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("\n## Data model\n\n")
	p("The tables functions return, field by field (generated from `bindings/datamodel.go`; a test\n")
	p("checks each against what the functions return). Tables print in a short form (`print(node)`:\n")
	p("`CA 0x0002c90300a00000 \"node001 HCA-1\"`; a port: `\"leaf01\" port 3`; a link: both ends).\n")
	p("Nodes and ports refer to each other (`port.node`, `node.ports[n]`, `port.remote`), so a\n")
	p("walk of the fabric needs no lookups. A fabric table also holds internal fields (`__topo`,\n")
	p("`__discovery`) that `fabric.save`, `fabric.diff` and `fabric.routes` read; they are not for scripts.\n")
	for _, d := range dataModel {
		p("\n### %s\n\nReturned by %s.\n\n| field | type | meaning |\n| --- | --- | --- |\n", d.Name, d.From)
		for _, f := range d.Fields {
			desc := f.Desc
			if f.Optional {
				desc += " (optional)"
			}
			p("| `%s` | %s | %s |\n", f.Key, f.Type, desc)
		}
	}
	p("\nDecoded attributes and SA records (`smp.*`, `perf.*`, `sa.*`, `mad.decode`, the `value` of\n")
	p("`fabric.sweep` results) are records with one field per field of their layout, listed under\n")
	p("[Attributes and records](#attributes-and-records).\n")
}
