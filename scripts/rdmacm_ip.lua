-- rdmacm_ip.lua: RDMA CM connections named by IP address, as most
-- librdmacm programs name their peers: one over IPv4, one over IPv6, each
-- accepted, both of its ids then moved to new event channels
-- (rdma_migrate_id) and the connection torn down there.
--
--   ibscript run --fabric sim:tests/topologies/net.ipoib scripts/rdmacm_ip.lua
--   ibscript run --fabric umad: scripts/rdmacm_ip.lua     # a host with those addresses (the CI's Soft-RoCE guest)
--
-- The addresses are IPoIB's (or a RoCE NIC's): on the simulator the
-- topology's "# ipoib" lines (or sim.ipoib) give the CAs theirs, so the
-- same script runs on both. RDMA CM's 36-byte IP header takes the front of
-- the REQ: connect carries 56 bytes of private data at most, and the
-- CONNECT_REQUEST reports those 56.

local a = plan.define {
  description = "RDMA CM by IPv4 and IPv6 address: connect, migrate_id, disconnect",
  categories = { "rdmacm" },
  args = {
    server4 = { default = "10.0.0.1", help = "IPv4 address the server listens on" },
    client4 = { default = "10.0.0.2", help = "IPv4 address the client connects from" },
    server6 = { default = "fd00::1", help = "IPv6 address the server listens on" },
    client6 = { default = "fd00::2", help = "IPv6 address the client connects from" },
    port = { default = 7471, help = "RDMA CM port (RDMA_PS_TCP)" },
    families = { default = "4,6", help = "the address families to connect by: 4, 6 or 4,6" },
    timeout = { default = 5000, help = "ms to wait for each event" },
  },
}

local T = a.timeout

-- next_event fetches one event of the wanted type, acked; it raises on a
-- timeout or another type.
local function next_event(ch, want, what)
  local ev = rdmacm.get_cm_event(ch, T)
  if not ev then error(string.format("%s: no %s within %d ms", what, want, T)) end
  rdmacm.ack_cm_event(ev)
  if ev.event ~= want then
    error(string.format("%s: %s (status %d), want %s", what, ev.event, ev.status, want))
  end
  return ev
end

local function connection(r, family, server, client)
  local what = family .. " " .. client .. " -> " .. server
  local lch, cch = rdmacm.create_event_channel(), rdmacm.create_event_channel()
  local listener = rdmacm.create_id(lch, "RDMA_PS_TCP")
  rdmacm.bind_addr(listener, { ip = server, port = a.port })
  rdmacm.listen(listener)

  local c = rdmacm.create_id(cch, "RDMA_PS_TCP")
  rdmacm.resolve_addr(c, { ip = client }, { ip = server, port = a.port }, T)
  next_event(cch, "RDMA_CM_EVENT_ADDR_RESOLVED", what)
  local src, dst = c:local_addr(), c:peer_addr()
  if src.ip ~= client or dst.ip ~= server or dst.port ~= a.port then
    r:fail(string.format("client addresses %s:%d -> %s:%d", tostring(src.ip), src.port, tostring(dst.ip), dst.port), what)
  end
  rdmacm.resolve_route(c, T)
  next_event(cch, "RDMA_CM_EVENT_ROUTE_RESOLVED", what)
  local hello = family .. " hello " .. string.rep(".", 56 - #family - 7)
  rdmacm.connect(c, { private_data = hello, initiator_depth = 1, responder_resources = 1 })

  local req = next_event(lch, "RDMA_CM_EVENT_CONNECT_REQUEST", what)
  if req.private_data ~= hello then
    r:fail(string.format("CONNECT_REQUEST private data %d bytes %q, want the 56 sent", #req.private_data, req.private_data:sub(1, 16)), what)
  end
  if req.src_addr.ip ~= server or req.src_addr.port ~= a.port or req.dst_addr.ip ~= client or req.dst_addr.port ~= src.port then
    r:fail(string.format("the request's addresses %s:%d <- %s:%d", tostring(req.src_addr.ip), req.src_addr.port,
      tostring(req.dst_addr.ip), req.dst_addr.port), what)
  end
  local s = req.id
  rdmacm.accept(s, { private_data = family .. " welcome" })
  local est = next_event(cch, "RDMA_CM_EVENT_ESTABLISHED", what)
  if est.private_data:sub(1, #family + 8) ~= family .. " welcome" then r:fail("REP private data " .. string.format("%q", est.private_data:sub(1, 16)), what) end
  next_event(lch, "RDMA_CM_EVENT_ESTABLISHED", what)

  -- Both ends of the connection to channels of their own.
  local cch2, sch2 = rdmacm.create_event_channel(), rdmacm.create_event_channel()
  rdmacm.migrate_id(c, cch2, T)
  rdmacm.migrate_id(s, sch2, T)
  rdmacm.disconnect(c)
  if next_event(sch2, "RDMA_CM_EVENT_DISCONNECTED", what).id ~= s then r:fail("DISCONNECTED of another id on the server's new channel", what) end
  rdmacm.disconnect(s)
  if next_event(cch2, "RDMA_CM_EVENT_DISCONNECTED", what).id ~= c then r:fail("DISCONNECTED of another id on the client's new channel", what) end
  for _, ch in ipairs({ lch, cch }) do
    if ch:pending() ~= 0 then r:fail(ch:pending() .. " events left on an old channel", what) end
  end
  rdmacm.destroy_id(c, T)
  rdmacm.destroy_id(s, T)
  rdmacm.destroy_id(listener, T)
  for _, ch in ipairs({ lch, cch, cch2, sch2 }) do rdmacm.destroy_event_channel(ch) end
  r:pass(string.format("%s: connected from port %d, migrated, disconnected", what, src.port))
end

local fams = {}
for f in tostring(a.families):gmatch("[^,%s]+") do
  if f ~= "4" and f ~= "6" then error("rdmacm_ip.lua: families: " .. f .. " is neither 4 nor 6") end
  fams[f] = true
end
if fams["4"] then plan.check("IPv4", "rdmacm", function(r) connection(r, "IPv4", a.server4, a.client4) end) end
if fams["6"] then plan.check("IPv6", "rdmacm", function(r) connection(r, "IPv6", a.server6, a.client6) end) end
