package bindings

import "maps"

// examples holds a runnable example for every Lua function, keyed
// "module.fn". The API reference shows them, and a test runs each one on
// the bundled simulated fabric (LID 1 is the SM's HCA node001, LID 2 the
// switch leaf01), so an example that stops working fails the build.
var examples = map[string]string{
	"umad.get_cas_names": `for _, ca in ipairs(umad.get_cas_names()) do print(ca) end`,
	"umad.get_smi_gsi_pairs": `for _, p in ipairs(umad.get_smi_gsi_pairs()) do
  print(p.smi_name, p.gsi_name, p.smi_name ~= p.gsi_name and "planarized" or "")
end`,
	"umad.get_smi_gsi_pair_by_ca_name": `local p = umad.get_smi_gsi_pair_by_ca_name() -- or ("mlx5_0", 1)
print("SMPs on " .. p.smi_name .. "/" .. p.smi_preferred_port, "GMPs on " .. p.gsi_name .. "/" .. p.gsi_preferred_port)`,
	"umad.get_port": `local p = umad.get_port()
print(p.ca_name, p.base_lid, p.sm_lid)
umad.release_port(p)`,
	"umad.release_port": `umad.release_port(umad.get_port())`,
	"umad.open_port": `local port = umad.open_port()   -- the default port, as umad_open_port(NULL, 0)
print(port)
port:close()`,
	"umad.close_port": `local port = umad.open_port()
umad.close_port(port)`,
	"umad.register_agent": `local port = umad.open_port()
local agent = umad.register_agent(port, 0x81, 1)   -- directed-route SMPs, send-only
print("agent", agent)
port:close()`,
	"umad.unregister_agent": `local port = umad.open_port()
umad.unregister_agent(port, umad.register_agent(port, 0x04, 1))
port:close()`,
	"umad.send": `local port = umad.open_port()
local agent = umad.register_agent(port, 0x01, 1)
-- a LID-routed SMP Get(NodeInfo) to LID 2, TID 7
local get = string.char(1, 1, 1, 1) .. string.rep("\0", 11) .. string.char(7, 0, 0x11)
  .. string.rep("\0", 256 - 18)
umad.send(port, agent, get, 100, 3, {lid = 2})
local resp, _, status = umad.recv(port, 1000)
print(mad.decode(resp).attribute.node_type, status)
port:close()`,
	"umad.recv": `local port = umad.open_port()
print(umad.recv(port, 0))   -- nil: nothing is waiting
port:close()`,
	"umad.poll": `local port = umad.open_port()
print(umad.poll(port, 10))   -- false after 10 ms
port:close()`,
	"umad.size": `print(umad.size())`,

	"smp.nodeinfo": `local ni = smp.nodeinfo("lid:1")
print(ni.node_guid, ni.num_ports)`,
	"smp.nodedesc": `print(smp.nodedesc("dr:0,1"))   -- the switch behind the local port`,
	"smp.portinfo": `local pi = smp.portinfo("lid:1", 1)
print(pi.lid, smp.state_name(pi.port_state), smp.width_name(pi.link_width_active))`,
	"smp.switchinfo": `print(smp.switchinfo("lid:2").linear_fdb_top)`,
	"smp.sminfo": `local sm = smp.sminfo("lid:" .. fabric.port().sm_lid)
print(sm.guid, smp.sm_state_name(sm.sm_state))`,
	"smp.guidinfo": `print(smp.guidinfo("lid:1", 0).guid0)`,
	"smp.pkeys":    `print(string.format("0x%04x", smp.pkeys("lid:1", 1)[1]))`,
	"smp.lft": `local lft = smp.lft("lid:2", 0)
print("LID 1 leaves leaf01 on port", lft[2])`,
	"smp.get": `print(smp.get("lid:1", "NodeDescription").node_string)`,
	"smp.sl2vl": `local t = smp.sl2vl("lid:1")
print(t.sl_to_vl0, t.sl_to_vl15)   -- 0 7: SL 15 goes on VL 7`,
	"smp.vlarb": `local low = smp.vlarb("lid:1", 1, 1)
print(low.vl1, low.weight1)`,
	"smp.portinfo_ext":    `print(pcall(smp.portinfo_ext, "lid:1", 1))   -- false: ibsim and the simulator do not answer it`,
	"smp.mlnxextportinfo": `print(smp.mlnxextportinfo("lid:2", 1).link_speed_active)`,
	"smp.width_name":      `print(smp.width_name(2))   -- 4X`,
	"smp.speed_name":      `print(smp.speed_name(4), smp.speed_name(4, 4))   -- QDR HDR`,
	"smp.state_name":      `print(smp.state_name(4))`,
	"smp.phys_state_name": `print(smp.phys_state_name(5))`,
	"smp.sm_state_name":   `print(smp.sm_state_name(3))`,

	"sa.get_table": `local switches = sa.get_table("NodeRecord", {node_type = 2})
print(#switches, switches[1].lid, switches[1].node_description)`,
	"sa.get": `local nr = sa.get("NodeRecord", {lid = 1})
print(nr.node_guid, nr.node_description)`,
	"sa.path": `local p = sa.path(1, 2)
print(p.slid, p.dlid, p.mtu, p.rate)`,
	"sa.multipath": `local hosts = sa.get_table("NodeRecord", {node_type = 1})
local paths = sa.multipath({hosts[1].port_guid}, {hosts[2].port_guid, hosts[3].port_guid})
print(#paths, paths[1].slid, paths[1].dlid)`,
	"sa.records": `print(table.concat(sa.records(), " "))`,
	"sa.subscribe": `local sub = sa.subscribe{traps = {64, 65, 128}}
sim.link("node002", 1, false)   -- unplug node002's cable: traps 128 (its leaf) and 65 (its port)
for _ = 1, 2 do
  local r = sub:next(1000)
  print(r.trap, r.name, r.guid or r.lid)
end
sim.link("node002", 1, true)
sub:close()                     -- unsubscribes`,

	"perf.portcounters": `local pc = perf.portcounters("lid:2", 1)
print(pc.symbol_error_counter, pc.port_xmit_data)`,
	"perf.portcounters_ext": `print(perf.portcounters_ext("lid:2", 1).port_rcv_pkts)`,
	"smp.pkey_table": `local keys = smp.pkey_table("lid:2") -- smpquery pkeys 2
print(#keys, string.format("0x%04x", keys[1]))`,
	"smp.guid_table": `local guids = smp.guid_table("lid:2") -- smpquery GUIDInfo 2
print(#guids, guids[1])`,
	"perf.reset": `perf.reset("lid:2", 1)`,
	"perf.snapshot": `local s = perf.snapshot()          -- what ibscript exporter serves, as tables
for _, sr in ipairs(s.infiniband_switch_port_symbol_error_total.series) do
  if sr.value > 0 then print(sr.labels.guid, sr.labels.port, sr.value) end
end`,
	"perf.counters": `local all, info = perf.counters("lid:2", 255, true) -- perfquery -x -a
print(all.port_xmit_data, info.summed and #info.summed or "AllPortSelect")`,
	"cc.get": `local ci = cc.get("lid:1", "CongestionInfo")   -- ibccquery CongestionInfo 1
print(ci.congestion_info, ci.control_table_cap)
local log = cc.get("lid:2", "CL")                  -- a switch: its LogType says which layout
print(log.log_type, log.log_events_counter)
print(cc.get("lid:2", "SwitchPortCongestionSetting", 0).valid0)`,
	"cc.set": `-- as ibccconfig SwitchPortCongestionSetting 2 1 1 0 7 8 100 (port 1 of block 0)
local r = cc.set("lid:2", "SwitchPortCongestionSetting",
  {valid1 = 1, control_type1 = 0, threshold1 = 7, packet_size1 = 8, cong_parm_marking_rate1 = 100})
print(r.threshold1, cc.get("lid:2", "SP").cong_parm_marking_rate1)`,
	"perf.get": `local d = perf.get("lid:2", 1, "PortRcvErrorDetails")
print(d.port_select, d.port_local_physical_errors)`,

	"fabric.discover": `local f = fabric.discover()
print(#f.nodes, "nodes", #f.links, "links", #f.errors, "errors")
for _, l in ipairs(f.links) do
  if l.a.node.type == "Switch" and l.b.node.type == "Switch" then print(l.a, "<->", l.b) break end
end`,
	"fabric.sweep": `local f = fabric.discover()
local ports = {}
for _, l in ipairs(f.links) do ports[#ports + 1] = l.a; ports[#ports + 1] = l.b end
for _, r in ipairs(fabric.sweep("portcounters", ports)) do
  if r.err then print(r.port, r.err) elseif r.value.symbol_error_counter > 0 then print(r.port, "symbol errors") end
end`,
	"fabric.routes": `local rt = fabric.routes(fabric.discover())
print(rt.switches, "switches,", rt.lids, "LIDs,", rt.count, "bad routes")
for h, n in pairs(rt.hops) do print(h, "hops:", n, "host pairs") end`,
	"fabric.load": `local f = fabric.load("tests/topologies/net.2sw2path4hca")   -- or a snapshot, an ibnetdiscover file
print(#f.nodes, #f.links)`,
	"fabric.save": `local f = fabric.discover()
fabric.save(f, "fabric.json")   -- in the working directory
print(#fabric.load("fabric.json").nodes)`,
	"fabric.diff": `local f = fabric.discover()
for _, d in ipairs(fabric.diff(fabric.load("tests/topologies/fattree-50.net"), f)) do
  print(d.severity, d.kind, d.msg) break
end`,
	"fabric.port": `print(fabric.port().port_guid)`,
	"fabric.dr_path": `local route = fabric.dr_path(2)   -- leaf01, by its LFT-built directed route
print(route, smp.nodeinfo(route).node_guid)`,
	"fabric.format": `print(fabric.format(fabric.discover()):sub(1, 200))`,

	"plan.define": `local args = plan.define{
  description = "links of the fabric",
  categories = {"links"},
  args = {width = {default = "4X", help = "expected link width"}},
}
print(args.width)   -- 4X, or what --arg width=... said`,
	"plan.check": `plan.define{categories = {"links"}}
local f = fabric.discover()
print(plan.check("links ACTIVE", "links", function(r)
  for _, l in ipairs(f.links) do
    if l.a.state == 4 and l.b.state == 4 then r:pass("", l.a) else r:fail("not ACTIVE", l.a) end
  end
end))
print(plan.check("raises", function(r) error("boom") end))   -- fail, the plan goes on`,
	"plan.progress": `local f = fabric.discover()
for i, n in ipairs(f.nodes) do plan.progress(i, #f.nodes, "nodes") end`,
	"plan.thresholds": `local th = plan.thresholds()   -- or plan.thresholds("/etc/infiniband-diags/error_thresholds")
print(th.symbol_error_counter, th.vl15_dropped)`,
	"plan.sleep": `plan.sleep(0.01)`,
	"plan.report": `plan.check("nothing", function(r) r:skip("not applicable") end)
local rep = plan.report()
print(rep.checks[1].name, rep.checks[1].status, rep.skipped)`,

	"mad.decode": `local d = mad.decode("01 81 01 01 00 00 00 00 00 00 00 00 00 00 00 2a 00 11 00 00 00 00 00 00")
print(d.class, d.method, d.name, d.header.transaction_id)`,
	"mad.fields":     `for _, f in ipairs(mad.fields("SMInfo")) do print(f.key, f.bit, f.width) end`,
	"mad.attributes": `print(table.concat(mad.attributes(), " "))`,
	"mad.new": `local req = mad.new("NodeInfo", {target = "dr:0,1"})
print(req.method, req.name, req.target)`,
	"mad.send": `-- read a port, change one field, write it back (states 0 = no change)
local req = mad.new("PortInfo", {target = "lid:1", modifier = 1})
local now = mad.send(req).attribute
now.port_state, now.port_physical_state, now.link_width_enabled = 0, 0, 3
req.method, req.attribute = "Set", now
local resp = mad.send(req)
print(resp.status, resp.attribute.link_width_enabled)`,
	"mad.show": `local req = mad.new("SwitchInfo", {target = "lid:2"})
mad.show(req, mad.send(req))`,

	"bit.band":   `print(bit.band(0x1f, 0x2))`,
	"bit.bor":    `print(bit.bor(1, 2, 4))`,
	"bit.bxor":   `print(bit.bxor(3, 1))`,
	"bit.bnot":   `print(bit.bnot(0))`,
	"bit.lshift": `print(bit.lshift(1, 14))`,
	"bit.rshift": `print(bit.rshift(0x4000, 14))`,
	// rdmacm: node001 (LID 1) and node002 are CA ports of the default fabric.
	"rdmacm.create_event_channel": `local ch = rdmacm.create_event_channel()
print(ch)
ch:close()`,
	"rdmacm.destroy_event_channel": `rdmacm.destroy_event_channel(rdmacm.create_event_channel())`,
	"rdmacm.create_id": `local ch = rdmacm.create_event_channel()
local id = rdmacm.create_id(ch, "RDMA_PS_TCP")
print(id)
rdmacm.destroy_id(id)
ch:close()`,
	"rdmacm.destroy_id": `local id = rdmacm.create_id(nil)   -- synchronous
rdmacm.destroy_id(id, 100)`,
	"rdmacm.bind_addr": `local ch = rdmacm.create_event_channel()
local id = rdmacm.create_id(ch)
rdmacm.bind_addr(id, {lid = 1, port = 7471})
print(id:local_addr().gid)
rdmacm.destroy_id(id)
ch:close()`,
	"rdmacm.resolve_addr": `local ch = rdmacm.create_event_channel()
local id = rdmacm.create_id(ch)
rdmacm.resolve_addr(id, nil, {lid = umad.get_port("node002", 1).base_lid, port = 7471}, 2000)
local ev = rdmacm.get_cm_event(ch)
print(ev.event)
rdmacm.ack_cm_event(ev)
rdmacm.destroy_id(id)
ch:close()`,
	"rdmacm.resolve_route": `local id = rdmacm.create_id(nil)   -- synchronous: each call completes
rdmacm.resolve_addr(id, {lid = 1}, {lid = umad.get_port("node002", 1).base_lid, port = 7471}, 2000)
rdmacm.resolve_route(id, 2000)
print(id:state())
rdmacm.destroy_id(id)`,
	"rdmacm.listen": `local ch = rdmacm.create_event_channel()
local id = rdmacm.create_id(ch)
rdmacm.bind_addr(id, {lid = 1, port = 7471})
rdmacm.listen(id, 16)
print(id:state())
rdmacm.destroy_id(id)
ch:close()`,
	"rdmacm.connect": `-- both sides in one script: a server on node001, a client on node002
local ch = rdmacm.create_event_channel()
local server = rdmacm.create_id(ch)
rdmacm.bind_addr(server, {lid = 1, port = 7471})
rdmacm.listen(server)
local client = rdmacm.create_id(ch)
rdmacm.resolve_addr(client, {lid = umad.get_port("node002", 1).base_lid}, {lid = 1, port = 7471}, 2000)
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch))
rdmacm.resolve_route(client, 2000)
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch))
rdmacm.connect(client, {private_data = "hello"})
local req = rdmacm.get_cm_event(ch, 1000)
print(req.event, req.private_data:sub(1, 5))
rdmacm.ack_cm_event(req)
rdmacm.destroy_id(req.id)
rdmacm.destroy_id(client)
rdmacm.destroy_id(server)
ch:close()`,
	"rdmacm.accept": `local ch = rdmacm.create_event_channel()
local server = rdmacm.create_id(ch)
rdmacm.bind_addr(server, {lid = 1, port = 1})
rdmacm.listen(server)
local client = rdmacm.create_id(nil)   -- synchronous
rdmacm.resolve_addr(client, {lid = umad.get_port("node002", 1).base_lid}, {lid = 1, port = 1}, 2000)
rdmacm.resolve_route(client, 2000)
local cch = rdmacm.create_event_channel()
rdmacm.migrate_id(client, cch)          -- asynchronous again
rdmacm.connect(client)
local req = rdmacm.get_cm_event(ch, 1000)
rdmacm.ack_cm_event(req)
rdmacm.accept(req.id, {private_data = "welcome"})
local est = rdmacm.get_cm_event(cch, 1000)
print(est.event, est.private_data:sub(1, 7))
rdmacm.ack_cm_event(est)
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch, 1000))   -- ESTABLISHED on the server
for _, id in ipairs({client, req.id, server}) do rdmacm.destroy_id(id) end
ch:close()
cch:close()`,
	"rdmacm.reject": `local ch = rdmacm.create_event_channel()
local server = rdmacm.create_id(ch)
rdmacm.bind_addr(server, {lid = 1, port = 2})
rdmacm.listen(server)
local client = rdmacm.create_id(ch)
rdmacm.resolve_addr(client, {lid = umad.get_port("node002", 1).base_lid}, {lid = 1, port = 2}, 2000)
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch))
rdmacm.resolve_route(client, 2000)
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch))
rdmacm.connect(client)
local req = rdmacm.get_cm_event(ch, 1000)
rdmacm.reject(req.id, "busy")
rdmacm.ack_cm_event(req)
local rej = rdmacm.get_cm_event(ch, 1000)
print(rej.event, rej.status, rej.private_data:sub(1, 4))   -- REJECTED 28 busy
rdmacm.ack_cm_event(rej)
for _, id in ipairs({client, req.id, server}) do rdmacm.destroy_id(id) end
ch:close()`,
	"rdmacm.disconnect": `local ch = rdmacm.create_event_channel()
local server = rdmacm.create_id(ch)
rdmacm.bind_addr(server, {lid = 1, port = 3})
rdmacm.listen(server)
local client = rdmacm.create_id(ch)
rdmacm.resolve_addr(client, {lid = umad.get_port("node002", 1).base_lid}, {lid = 1, port = 3}, 2000)
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch))
rdmacm.resolve_route(client, 2000)
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch))
rdmacm.connect(client)
local req = rdmacm.get_cm_event(ch, 1000)
rdmacm.ack_cm_event(req)
rdmacm.accept(req.id)
for _ = 1, 2 do rdmacm.ack_cm_event(rdmacm.get_cm_event(ch, 1000)) end   -- ESTABLISHED twice
rdmacm.disconnect(client)
local ev = rdmacm.get_cm_event(ch, 1000)   -- DISCONNECTED on the server
print(ev.event)
rdmacm.ack_cm_event(ev)
rdmacm.disconnect(req.id)                  -- DREP
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch, 1000))
for _, id in ipairs({client, req.id, server}) do rdmacm.destroy_id(id) end
ch:close()`,
	"rdmacm.get_request": `-- a synchronous server: no channel, each call completes before it returns
local server = rdmacm.create_id(nil)
rdmacm.bind_addr(server, {lid = 1, port = 4})
rdmacm.listen(server)
local ch = rdmacm.create_event_channel()
local client = rdmacm.create_id(ch)
rdmacm.resolve_addr(client, {lid = umad.get_port("node002", 1).base_lid}, {lid = 1, port = 4}, 2000)
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch))
rdmacm.resolve_route(client, 2000)
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch))
rdmacm.connect(client)
local conn = rdmacm.get_request(server, 1000)   -- synchronous, as its listener
-- A synchronous accept returns once the RTU came, and the client sends it
-- when it fetches the response: in one script, accept on a channel.
rdmacm.migrate_id(conn, ch)
rdmacm.accept(conn)
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch, 1000))   -- ESTABLISHED of the client: the RTU goes
rdmacm.ack_cm_event(rdmacm.get_cm_event(ch, 1000))   -- ESTABLISHED of conn
print(conn:state())          -- established
for _, id in ipairs({conn, client, server}) do rdmacm.destroy_id(id) end
ch:close()`,
	"rdmacm.get_cm_event": `local ch = rdmacm.create_event_channel()
print(rdmacm.get_cm_event(ch, 10))   -- nil: nothing came in 10 ms
ch:close()`,
	"rdmacm.ack_cm_event": `local ch = rdmacm.create_event_channel()
local id = rdmacm.create_id(ch)
rdmacm.resolve_addr(id, nil, {lid = 1, port = 1}, 2000)
local ev = rdmacm.get_cm_event(ch)
print(id:unacked())   -- 1
rdmacm.ack_cm_event(ev)
print(id:unacked())   -- 0
rdmacm.destroy_id(id)
ch:close()`,
	"rdmacm.migrate_id": `local a, b = rdmacm.create_event_channel(), rdmacm.create_event_channel()
local id = rdmacm.create_id(a)
rdmacm.resolve_addr(id, nil, {lid = 1, port = 1}, 2000)   -- ADDR_RESOLVED waits on a
rdmacm.migrate_id(id, b)                                 -- and moves to b
print(a:pending(), b:pending())                          -- 0 1
rdmacm.ack_cm_event(rdmacm.get_cm_event(b))
rdmacm.migrate_id(id, nil)                               -- synchronous mode
rdmacm.destroy_id(id)
a:close()
b:close()`,
	"rdmacm.poll": `local ch = rdmacm.create_event_channel()
print(rdmacm.poll(ch, 10))   -- false
ch:close()`,
	"rdmacm.event_str": `print(rdmacm.event_str(4))   -- RDMA_CM_EVENT_CONNECT_REQUEST`,

	"sim.faults": `sim.faults{seed = 1, loss = 0.05, delay = 2, jitter = "1ms"}   -- answers 1-3 ms late, 5% lost
print(smp.nodeinfo("lid:2").num_ports)   -- retries cover a loss
print(sim.stats().delayed > 0)           -- true
sim.faults{}                             -- off again`,
	"sim.ipoib": `sim.ipoib("node002", 1, "10.0.0.2", "fd00::2")   -- node002's ib0
local ch = rdmacm.create_event_channel()
local id = rdmacm.create_id(ch)
rdmacm.resolve_addr(id, nil, {ip = "10.0.0.2", port = 7471}, 2000)
local ev = rdmacm.get_cm_event(ch)
print(ev.event, id:peer_addr().ip)   -- RDMA_CM_EVENT_ADDR_RESOLVED	10.0.0.2
rdmacm.ack_cm_event(ev)
rdmacm.destroy_id(id)
ch:close()`,
	"sim.link": `sim.link("node002", 1, false)      -- unplug node002's cable
print(#fabric.discover().nodes)    -- 21
sim.link("node002", 1, true)`,
	"sim.counter": `sim.counter("leaf01", 1, "SymbolErrorCounter", 7)
print(perf.portcounters("lid:2", 1).symbol_error_counter)   -- 7`,
	"sim.lft": `sim.lft("leaf01", 1, 255)        -- leaf01 now drops what is sent to LID 1
print(smp.lft("dr:0,1", 0)[2])   -- 255 (read by directed route, which the LFT does not steer)`,
	"sim.stats": `sim.faults{seed = 3, duplicate = 1}   -- every answer comes twice
smp.nodeinfo("lid:2")
local s = sim.stats()
print(s.requests, s.duplicated)   -- 1 1
sim.faults{}`,
}

// Examples returns a copy of every function's example, keyed
// "module.fn": tests outside the package run them (cmd/ibscript's key
// hunt runs each one with keys planted in the fabric).
func Examples() map[string]string { return maps.Clone(examples) }
