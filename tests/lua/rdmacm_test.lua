--! topology: net.2sw2path4hca
-- RDMA CM between the simulated hosts: event channels, ids, connections,
-- events with ack and rdma_migrate_id, both sides run by the script.

-- need_hosts learns the hosts' LIDs before any RDMA CM port is open (on
-- ibsim a CM endpoint holds its node's issm attachment), and skips on a
-- fabric that cannot open the CA ports by name (the plain ibsim fabric
-- attaches to one node only).
local lids = {}
local function need_hosts(t)
  for _, ca in ipairs({ "Hca1", "Hca2", "Hca3", "Hca4" }) do
    local ok, p = pcall(umad.get_port, ca, 1)
    if not ok then t:skip("cannot open " .. ca .. " port 1 on this fabric: " .. tostring(p)) end
    lids[ca] = p.base_lid
  end
end

local function lid(ca)
  return lids[ca]
end

-- expect fetches the next event of ch and checks its type (and id).
local function expect(t, ch, name, id)
  local ev = rdmacm.get_cm_event(ch, 2000)
  if not ev then t:fatal("no event, want " .. name) end
  if ev.event ~= name then t:fatal("event " .. ev.event .. " status " .. ev.status .. ", want " .. name) end
  if id and ev.id ~= id then t:fatal(name .. " names " .. tostring(ev.id) .. ", want " .. tostring(id)) end
  return ev
end

local function expect_ack(t, ch, name, id)
  local ev = expect(t, ch, name, id)
  rdmacm.ack_cm_event(ev)
  return ev
end

local function listener(t, host, port, ps)
  local ch = rdmacm.create_event_channel()
  local id = rdmacm.create_id(ch, ps)
  rdmacm.bind_addr(id, { lid = lid(host), port = port })
  rdmacm.listen(id, 8)
  return ch, id
end

-- routed makes an id on ch from host src to host dst:port, route resolved.
local function routed(t, ch, src, dst, port, ps)
  local id = rdmacm.create_id(ch, ps)
  rdmacm.resolve_addr(id, { lid = lid(src) }, { lid = lid(dst), port = port }, 2000)
  if ch then expect_ack(t, ch, "RDMA_CM_EVENT_ADDR_RESOLVED", id) end
  rdmacm.resolve_route(id, 2000)
  if ch then expect_ack(t, ch, "RDMA_CM_EVENT_ROUTE_RESOLVED", id) end
  return id
end

-- connect runs a whole connection from client id a to the listener on lch.
local function connect(t, a, ach, lch)
  rdmacm.connect(a, { private_data = "hi" })
  local req = expect_ack(t, lch, "RDMA_CM_EVENT_CONNECT_REQUEST")
  rdmacm.accept(req.id)
  expect_ack(t, ach, "RDMA_CM_EVENT_ESTABLISHED", a)
  expect_ack(t, lch, "RDMA_CM_EVENT_ESTABLISHED", req.id)
  return req.id
end

function test_connect_accept_disconnect(t)
  need_hosts(t)
  local lch, l = listener(t, "Hca1", 7471)
  local ach = rdmacm.create_event_channel()
  local a = routed(t, ach, "Hca2", "Hca1", 7471)
  rdmacm.connect(a, { private_data = "hello", initiator_depth = 4, responder_resources = 2 })
  local req = expect(t, lch, "RDMA_CM_EVENT_CONNECT_REQUEST")
  if req.listen_id ~= l or req.id == l then t:fatal("CONNECT_REQUEST ids") end
  if req.private_data:sub(1, 5) ~= "hello" or #req.private_data ~= 92 then t:fatal("private data " .. #req.private_data) end
  if req.responder_resources ~= 4 or req.initiator_depth ~= 2 then t:fatal("resources are not crossed over") end
  if l:unacked() ~= 1 then t:fatal("the CONNECT_REQUEST is credited to the listener") end
  rdmacm.ack_cm_event(req)
  expect_error("EINVAL", rdmacm.ack_cm_event, req)
  local p = req.id
  if p:peer_addr().lid ~= lid("Hca2") then t:fatal("peer lid " .. p:peer_addr().lid) end
  rdmacm.accept(p, { private_data = "welcome" })
  local est = expect_ack(t, ach, "RDMA_CM_EVENT_ESTABLISHED", a)
  if est.private_data:sub(1, 7) ~= "welcome" then t:fatal("REP private data") end
  expect_ack(t, lch, "RDMA_CM_EVENT_ESTABLISHED", p)
  if a:state() ~= "established" or p:state() ~= "established" then t:fatal(a:state() .. " " .. p:state()) end
  rdmacm.disconnect(a)
  expect_ack(t, lch, "RDMA_CM_EVENT_DISCONNECTED", p)
  rdmacm.disconnect(p)
  expect_ack(t, ach, "RDMA_CM_EVENT_DISCONNECTED", a)
  for _, id in ipairs({ a, p, l }) do rdmacm.destroy_id(id) end
  if rdmacm.get_cm_event(ach, 0) or rdmacm.get_cm_event(lch, 0) then t:fatal("events left") end
  rdmacm.destroy_event_channel(ach)
  lch:close()
end

function test_reject_with_private_data(t)
  need_hosts(t)
  local lch, l = listener(t, "Hca1", 1)
  local ach = rdmacm.create_event_channel()
  local a = routed(t, ach, "Hca3", "Hca1", 1)
  rdmacm.connect(a)
  local req = expect_ack(t, lch, "RDMA_CM_EVENT_CONNECT_REQUEST")
  rdmacm.reject(req.id, "not today")
  local rej = expect_ack(t, ach, "RDMA_CM_EVENT_REJECTED", a)
  if rej.status ~= 28 then t:fatal("reject reason " .. rej.status) end
  if rej.private_data:sub(1, 9) ~= "not today" or #rej.private_data ~= 148 then t:fatal("REJ private data") end
  -- No listener on the port: REJ 8 (invalid service ID).
  local b = routed(t, ach, "Hca3", "Hca1", 2)
  rdmacm.connect(b)
  local ev = expect_ack(t, ach, "RDMA_CM_EVENT_REJECTED", b)
  if ev.status ~= 8 then t:fatal("no listener: status " .. ev.status) end
  for _, id in ipairs({ a, b, req.id, l }) do rdmacm.destroy_id(id) end
  lch:close()
  ach:close()
end

function test_migrate_with_pending_events(t)
  need_hosts(t)
  local lch, l = listener(t, "Hca1", 9)
  local ach = rdmacm.create_event_channel()
  local a = routed(t, ach, "Hca2", "Hca1", 9)
  local other = routed(t, ach, "Hca4", "Hca1", 9)
  rdmacm.connect(a)
  rdmacm.connect(other)
  if not rdmacm.poll(lch, 2000, 2) then t:fatal("two CONNECT_REQUESTs") end
  local passive = {}
  for i = 1, 2 do
    local req = expect_ack(t, lch, "RDMA_CM_EVENT_CONNECT_REQUEST")
    rdmacm.accept(req.id)
    passive[i] = req.id
  end
  -- Both ESTABLISHED are queued unread on ach; a's moves with it.
  if not rdmacm.poll(ach, 2000, 2) then t:fatal("two ESTABLISHED") end
  local bch = rdmacm.create_event_channel()
  rdmacm.migrate_id(a, bch)
  if ach:pending() ~= 1 or bch:pending() ~= 1 then t:fatal("pending old " .. ach:pending() .. " new " .. bch:pending()) end
  expect_ack(t, bch, "RDMA_CM_EVENT_ESTABLISHED", a)
  expect_ack(t, ach, "RDMA_CM_EVENT_ESTABLISHED", other)
  if rdmacm.get_cm_event(ach, 0) then t:fatal("an event left on the old channel") end
  -- Later events of a go to bch only.
  expect_ack(t, lch, "RDMA_CM_EVENT_ESTABLISHED")
  expect_ack(t, lch, "RDMA_CM_EVENT_ESTABLISHED")
  rdmacm.disconnect(a)
  local dis = expect(t, lch, "RDMA_CM_EVENT_DISCONNECTED")
  rdmacm.ack_cm_event(dis)
  rdmacm.disconnect(dis.id)
  expect_ack(t, bch, "RDMA_CM_EVENT_DISCONNECTED", a)
  if rdmacm.get_cm_event(ach, 0) then t:fatal("a's DISCONNECTED went to the old channel") end
  for _, id in ipairs({ a, other, passive[1], passive[2], l }) do rdmacm.destroy_id(id) end
  for _, ch in ipairs({ ach, bch, lch }) do ch:close() end
end

function test_migrate_while_unacked(t)
  need_hosts(t)
  local lch, l = listener(t, "Hca1", 10)
  local ach = rdmacm.create_event_channel()
  local a = routed(t, ach, "Hca2", "Hca1", 10)
  local p = connect(t, a, ach, lch)
  rdmacm.disconnect(p)
  local ev = expect(t, ach, "RDMA_CM_EVENT_DISCONNECTED", a)
  -- Fetched, not acked: migrate waits, and says so when its timeout passes.
  local bch = rdmacm.create_event_channel()
  expect_error("rdmacm.migrate_id: ETIMEDOUT: .*1 events fetched and not acknowledged", rdmacm.migrate_id, a, bch, 20)
  rdmacm.ack_cm_event(ev)
  rdmacm.migrate_id(a, bch, 20)   -- nothing unacked: returns at once
  if a:unacked() ~= 0 then t:fatal("unacked " .. a:unacked()) end
  -- Unacked events of other ids do not hold a migration up.
  rdmacm.migrate_id(a, ach, 20)
  rdmacm.destroy_id(a)
  rdmacm.destroy_id(p)
  rdmacm.destroy_id(l)
  for _, ch in ipairs({ ach, bch, lch }) do ch:close() end
end

function test_migrate_to_nil_synchronous(t)
  need_hosts(t)
  local lch, l = listener(t, "Hca1", 11)
  local ach = rdmacm.create_event_channel()
  local a = rdmacm.create_id(ach)
  rdmacm.resolve_addr(a, { lid = lid("Hca2") }, { lid = lid("Hca1"), port = 12 }, 2000)
  expect_ack(t, ach, "RDMA_CM_EVENT_ADDR_RESOLVED", a)
  rdmacm.migrate_id(a, nil)
  expect_error("rdmacm.migrate_id: EINVAL: .*already synchronous", rdmacm.migrate_id, a, nil)
  -- Synchronous: the call returns when the route is resolved, no event shows.
  rdmacm.resolve_route(a, 2000)
  if a:state() ~= "route resolved" then t:fatal("state " .. a:state()) end
  -- connect blocks until the answer: REJ 8 (no listener on port 12).
  expect_error("rdmacm.connect: ECONNREFUSED: .*REJECTED, reason 8", rdmacm.connect, a)
  if ach:pending() ~= 0 then t:fatal("events on the old channel") end
  -- Back to a channel, then a synchronous id from the start.
  rdmacm.migrate_id(a, ach)
  local s = routed(t, nil, "Hca3", "Hca1", 11)
  if s:state() ~= "route resolved" then t:fatal("sync id state " .. s:state()) end
  rdmacm.destroy_id(s)
  rdmacm.destroy_id(a)
  rdmacm.destroy_id(l)
  ach:close()
  lch:close()
end

function test_migrate_listening_id(t)
  need_hosts(t)
  local lch, l = listener(t, "Hca1", 13)
  local ach = rdmacm.create_event_channel()
  local a = routed(t, ach, "Hca2", "Hca1", 13)
  rdmacm.connect(a)
  if not rdmacm.poll(lch, 2000) then t:fatal("no CONNECT_REQUEST") end
  local lch2 = rdmacm.create_event_channel()
  rdmacm.migrate_id(l, lch2)
  if lch:pending() ~= 0 then t:fatal("CONNECT_REQUEST stayed on the old channel") end
  local req = expect_ack(t, lch2, "RDMA_CM_EVENT_CONNECT_REQUEST")
  if req.listen_id ~= l then t:fatal("listen_id") end
  rdmacm.accept(req.id)
  expect_ack(t, ach, "RDMA_CM_EVENT_ESTABLISHED", a)
  -- The new id lives on the listener's new channel.
  expect_ack(t, lch2, "RDMA_CM_EVENT_ESTABLISHED", req.id)
  expect_error("EBUSY", rdmacm.destroy_event_channel, lch2)
  rdmacm.destroy_id(req.id)
  expect_ack(t, ach, "RDMA_CM_EVENT_DISCONNECTED", a)
  rdmacm.destroy_id(a)
  rdmacm.destroy_id(l)
  for _, ch in ipairs({ ach, lch, lch2 }) do ch:close() end
end

function test_destroy_with_unacked_events(t)
  need_hosts(t)
  local lch, l = listener(t, "Hca1", 14)
  local ach = rdmacm.create_event_channel()
  local a = routed(t, ach, "Hca2", "Hca1", 14)
  local b = routed(t, ach, "Hca3", "Hca1", 14)
  rdmacm.connect(a)
  rdmacm.connect(b)
  if not rdmacm.poll(lch, 2000, 2) then t:fatal("two CONNECT_REQUESTs") end
  local req = expect(t, lch, "RDMA_CM_EVENT_CONNECT_REQUEST")
  -- The listener has a fetched, unacked event: destroy waits, then says so.
  expect_error("rdmacm.destroy_id: ETIMEDOUT: .*1 events fetched and not acknowledged", rdmacm.destroy_id, l, 20)
  -- The id is gone all the same; its unread CONNECT_REQUEST went with it.
  expect_error("id is destroyed", rdmacm.listen, l)
  if lch:pending() ~= 0 then t:fatal("unread events of a destroyed id stay queued") end
  rdmacm.ack_cm_event(req)
  -- The fetched request's id is still there; rejecting it answers its peer.
  rdmacm.reject(req.id)
  local rej = expect_ack(t, ach, "RDMA_CM_EVENT_REJECTED")
  if rej.status ~= 28 then t:fatal("status " .. rej.status) end
  -- The other REQ's id was destroyed with the listener (REJ sent).
  local rej2 = expect_ack(t, ach, "RDMA_CM_EVENT_REJECTED")
  if rej2.id == rej.id then t:fatal("two REJ for one id") end
  for _, id in ipairs({ a, b, req.id }) do rdmacm.destroy_id(id) end
  ach:close()
  lch:close()
end

function test_no_id_on_the_peer(t)
  need_hosts(t)
  -- No id was ever bound on Hca3: its CM answers as Linux's does on every
  -- port, REJ 8 (invalid service ID), at once.
  local ach = rdmacm.create_event_channel()
  local a = routed(t, ach, "Hca2", "Hca3", 1)
  rdmacm.connect(a, { cm_response_timeout = 8, max_cm_retries = 1 })
  local ev = expect_ack(t, ach, "RDMA_CM_EVENT_REJECTED", a)
  if ev.status ~= 8 then t:fatal("status " .. ev.status .. ", want 8 (invalid service ID)") end
  if a:state() ~= "route resolved" then t:fatal("state " .. a:state()) end
  rdmacm.destroy_id(a)
  ach:close()
end

function test_peer_never_answers(t)
  need_hosts(t)
  -- Hca3's CM is hung: a umad agent holds its CM Sends and never answers.
  -- The REQ is resent max_cm_retries times, then UNREACHABLE. A try lasts
  -- 2 x PacketLifeTime (0x12 from the SA: ~1.07 s) plus the CM response
  -- timeout (8: ~1 ms), as Linux's CM times it.
  local hung = umad.open_port("Hca3", 1)
  umad.register_agent(hung, 0x07, 2, 0, { 0x03 })
  local ach = rdmacm.create_event_channel()
  local a = routed(t, ach, "Hca2", "Hca3", 1)
  rdmacm.connect(a, { cm_response_timeout = 8, max_cm_retries = 1 })
  local early = rdmacm.get_cm_event(ach, 1000)
  if early then t:fatal("an event before the first retry: " .. early.event .. " " .. early.status) end
  local ev = rdmacm.get_cm_event(ach, 10000)
  if not ev or ev.event ~= "RDMA_CM_EVENT_UNREACHABLE" then t:fatal("no UNREACHABLE") end
  rdmacm.ack_cm_event(ev)
  if ev.status ~= -110 then t:fatal("status " .. ev.status .. ", want -110 (ETIMEDOUT)") end
  if a:state() ~= "route resolved" then t:fatal("state " .. a:state()) end
  rdmacm.destroy_id(a)
  ach:close()
  umad.close_port(hung)
end

function test_udp_sidr(t)
  need_hosts(t)
  local lch, l = listener(t, "Hca1", 20, "RDMA_PS_UDP")
  local ach = rdmacm.create_event_channel()
  local a = routed(t, ach, "Hca4", "Hca1", 20, "RDMA_PS_UDP")
  rdmacm.connect(a, { private_data = "ud" })
  local req = expect_ack(t, lch, "RDMA_CM_EVENT_CONNECT_REQUEST")
  if req.private_data:sub(1, 2) ~= "ud" or #req.private_data ~= 216 then t:fatal("SIDR_REQ private data") end
  rdmacm.accept(req.id, { qp_num = 0x4242 })
  local est = expect_ack(t, ach, "RDMA_CM_EVENT_ESTABLISHED", a)
  if est.qp_num ~= 0x4242 or est.qkey ~= 0x01234567 then t:fatal("qp_num " .. est.qp_num .. " qkey " .. est.qkey) end
  for _, id in ipairs({ a, req.id, l }) do rdmacm.destroy_id(id) end
  ach:close()
  lch:close()
end

function test_errors(t)
  need_hosts(t)
  expect_error('rdmacm.create_id: EINVAL: unknown port space "TCP"', rdmacm.create_id, nil, "TCP")
  local ch = rdmacm.create_event_channel()
  local id = rdmacm.create_id(ch)
  expect_error("rdmacm.connect: EINVAL: .*not route resolved", rdmacm.connect, id)
  expect_error("rdmacm.bind_addr: EADDRNOTAVAIL", rdmacm.bind_addr, id, { lid = 0xbeef })
  expect_error('rdmacm.bind_addr: unknown option "prt"', rdmacm.bind_addr, id, { prt = 1 })
  expect_error('rdmacm.bind_addr: EINVAL: ip "10.0.0.300" is not an IPv4 or IPv6 address', rdmacm.bind_addr, id, { ip = "10.0.0.300" })
  expect_error("rdmacm.bind_addr: EINVAL: an address is an ip or a lid/gid, not both", rdmacm.bind_addr, id, { ip = "10.0.0.1", lid = 1 })
  expect_error("rdmacm.bind_addr: EINVAL: ip: string expected", rdmacm.bind_addr, id, { ip = 10 })
  -- TEST-NET-1: no host's IPoIB interface has it.
  expect_error("rdmacm.bind_addr: EADDRNOTAVAIL", rdmacm.bind_addr, id, { ip = "192.0.2.77", port = 1 })
  expect_error("rdmacm.destroy_event_channel: EBUSY", rdmacm.destroy_event_channel, ch)
  expect_error("bad argument #1 to .*rdmacm.id expected, got table", rdmacm.listen, {})
  expect_error("EINVAL: not an event", rdmacm.ack_cm_event, {})
  if rdmacm.get_cm_event(ch, 1) ~= nil then t:fatal("an event from nowhere") end
  if rdmacm.event_str(9) ~= "RDMA_CM_EVENT_ESTABLISHED" then t:fatal(rdmacm.event_str(9)) end
  rdmacm.destroy_id(id)
  expect_error("id is destroyed", rdmacm.destroy_id, id)
  ch:close()
end

function test_synchronous_listener(t)
  need_hosts(t)
  -- A listener with no channel: get_request hands out synchronous ids. A
  -- synchronous accept returns once the RTU came, which the active side
  -- sends as it fetches the response: one script playing both sides
  -- accepts on a channel (rdmacm/cmtest's SyncListener runs the
  -- synchronous accept with two goroutines).
  local l = rdmacm.create_id(nil)
  rdmacm.bind_addr(l, { lid = lid("Hca1"), port = 40 })
  rdmacm.listen(l)
  local other = rdmacm.create_id(nil)
  expect_error("rdmacm.get_request: EINVAL: .*not a synchronous listener", rdmacm.get_request, other)
  rdmacm.destroy_id(other)
  local ach = rdmacm.create_event_channel()
  local a = routed(t, ach, "Hca4", "Hca1", 40)
  rdmacm.connect(a, { private_data = "sync" })
  local p = rdmacm.get_request(l, 2000)
  if l:unacked() ~= 0 then t:fatal("get_request left the CONNECT_REQUEST unacked") end
  if p:state() ~= "REQ received" then t:fatal("state of the new id: " .. p:state()) end
  rdmacm.migrate_id(p, ach)
  rdmacm.accept(p)
  expect_ack(t, ach, "RDMA_CM_EVENT_ESTABLISHED", a)
  expect_ack(t, ach, "RDMA_CM_EVENT_ESTABLISHED", p)
  if p:state() ~= "established" then t:fatal("state after accept: " .. p:state()) end
  rdmacm.destroy_id(a)
  rdmacm.destroy_id(p)
  rdmacm.destroy_id(l)
  ach:close()
end
