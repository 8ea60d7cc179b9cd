-- rdmacm_migrate.lua: N RDMA CM connections between the fabric's hosts,
-- half of them moved to a second event channel while their events are in
-- flight (rdma_migrate_id), then everything torn down; every event is
-- checked: its type, its id and the channel it arrives on.
--
--   ibscript run scripts/rdmacm_migrate.lua
--   ibscript run --fabric sim:tests/topologies/net.2sw2path4hca scripts/rdmacm_migrate.lua --arg connections=16
--
-- The first CA port is the server; the others are clients in turn. Each
-- connection's REQ carries "conn <i>" as private data, its REP "ok <i>".

local a = plan.define {
  description = "RDMA CM: connections, migrate_id mid-flight, teardown",
  categories = { "rdmacm" },
  args = {
    connections = { default = 8, help = "number of connections" },
    port = { default = 7471, help = "RDMA CM port (RDMA_PS_TCP) the server listens on" },
    timeout = { default = 5000, help = "ms to wait for each event" },
  },
}

local N, T = a.connections, a.timeout

-- The hosts: every CA port with a LID.
local hosts = {}
for _, n in ipairs(fabric.discover().nodes) do
  if n.type ~= "Switch" then
    for num, p in pairs(n.ports) do
      if num > 0 and p.lid ~= 0 then hosts[#hosts + 1] = p.lid end
    end
  end
end
table.sort(hosts)

local server, ids, names = hosts[1], {}, {}   -- ids[i]: client id of connection i
local lch, ch1, ch2, listener
local accepted = {}                            -- server-side id of connection i
local moved = {}                               -- moved[i]: connection i went to ch2
local byid = {}                                -- client id -> i

-- next_event fetches one event and checks it; it raises (failing the check)
-- on a timeout or a wrong type, and returns the event acked.
local function next_event(ch, want, what)
  local ev = rdmacm.get_cm_event(ch, T)
  if not ev then error(string.format("%s: no %s within %d ms", what, want, T)) end
  rdmacm.ack_cm_event(ev)
  if ev.event ~= want then
    error(string.format("%s: %s (status %d), want %s", what, ev.event, ev.status, want))
  end
  return ev
end

local function nothing_left(r, ch, name)
  if ch:pending() ~= 0 then r:fail(string.format("%d unexpected events left on %s", ch:pending(), name)) end
end

plan.check("hosts", "rdmacm", function(r)
  if #hosts < 2 then r:fail(string.format("%d CA ports with a LID; need a server and a client", #hosts)) return end
  r:pass(string.format("server lid %d, %d client ports", server, #hosts - 1))
end)

plan.check("listen", "rdmacm", function(r)
  lch, ch1, ch2 = rdmacm.create_event_channel(), rdmacm.create_event_channel(), rdmacm.create_event_channel()
  listener = rdmacm.create_id(lch, "RDMA_PS_TCP")
  rdmacm.bind_addr(listener, { lid = server, port = a.port })
  rdmacm.listen(listener, N)
  r:pass(string.format("lid %d port %d", server, a.port))
end)

plan.check("resolve and connect", "rdmacm", function(r)
  for i = 1, N do
    local src = hosts[2 + (i - 1) % (#hosts - 1)]
    local id = rdmacm.create_id(ch1, "RDMA_PS_TCP")
    ids[i], byid[id], names[i] = id, i, string.format("conn %d (lid %d)", i, src)
    rdmacm.resolve_addr(id, { lid = src }, { lid = server, port = a.port }, T)
    if next_event(ch1, "RDMA_CM_EVENT_ADDR_RESOLVED", names[i]).id ~= id then r:fail("ADDR_RESOLVED of another id", names[i]) end
    rdmacm.resolve_route(id, T)
    if next_event(ch1, "RDMA_CM_EVENT_ROUTE_RESOLVED", names[i]).id ~= id then r:fail("ROUTE_RESOLVED of another id", names[i]) end
    rdmacm.connect(id, { private_data = "conn " .. i, initiator_depth = 1, responder_resources = 1 })
  end
  r:pass(string.format("%d REQs sent", N))
end)

plan.check("accept", "rdmacm", function(r)
  for _ = 1, N do
    local ev = next_event(lch, "RDMA_CM_EVENT_CONNECT_REQUEST", "listener")
    local i = tonumber(ev.private_data:match("^conn (%d+)"))
    if not i or accepted[i] then r:fail("CONNECT_REQUEST with private data " .. string.format("%q", ev.private_data:sub(1, 12))) return end
    if ev.listen_id ~= listener then r:fail("CONNECT_REQUEST not for the listener", names[i]) end
    accepted[i] = ev.id
    rdmacm.accept(ev.id, { private_data = "ok " .. i })
  end
  r:pass(string.format("%d accepted", N))
end)

plan.check("migrate half mid-flight", "rdmacm", function(r)
  -- Every client's ESTABLISHED is queued on ch1, unread: move the even ones.
  if not rdmacm.poll(ch1, T, N) then r:fail(string.format("%d of %d ESTABLISHED queued", ch1:pending(), N)) return end
  for i = 2, N, 2 do
    rdmacm.migrate_id(ids[i], ch2, T)
    moved[i] = true
  end
  local want2 = math.floor(N / 2)
  if ch2:pending() ~= want2 or ch1:pending() ~= N - want2 then
    r:fail(string.format("after migrating %d ids: %d events on ch1, %d on ch2", want2, ch1:pending(), ch2:pending()))
  end
  r:pass(string.format("%d ids moved with their pending events", want2))
end)

plan.check("established on the right channels", "rdmacm", function(r)
  local seen = {}
  for _, c in ipairs({ { ch1, false, "ch1" }, { ch2, true, "ch2" } }) do
    while c[1]:pending() > 0 do
      local ev = next_event(c[1], "RDMA_CM_EVENT_ESTABLISHED", c[3])
      local i = byid[ev.id]
      if not i then r:fail("ESTABLISHED of an unknown id on " .. c[3])
      elseif (moved[i] or false) ~= c[2] then r:fail("ESTABLISHED on " .. c[3], names[i])
      elseif ev.private_data:sub(1, #("ok " .. i)) ~= "ok " .. i then r:fail("REP private data " .. string.format("%q", ev.private_data:sub(1, 8)), names[i])
      else seen[i] = true end
    end
  end
  for i = 1, N do
    if not seen[i] then r:fail("no ESTABLISHED", names[i]) end
  end
  for _ = 1, N do next_event(lch, "RDMA_CM_EVENT_ESTABLISHED", "listener") end
  nothing_left(r, lch, "the listener's channel")
  r:pass(string.format("%d connections established", N))
end)

plan.check("teardown", "rdmacm", function(r)
  for i = 1, N do rdmacm.disconnect(ids[i]) end
  for _ = 1, N do
    local ev = next_event(lch, "RDMA_CM_EVENT_DISCONNECTED", "listener")
    rdmacm.disconnect(ev.id) -- DREP
  end
  local got = {}
  for _, c in ipairs({ { ch1, false, "ch1" }, { ch2, true, "ch2" } }) do
    local want = 0
    for i = 1, N do if (moved[i] or false) == c[2] then want = want + 1 end end
    for _ = 1, want do
      local ev = next_event(c[1], "RDMA_CM_EVENT_DISCONNECTED", c[3])
      local i = byid[ev.id]
      if not i or (moved[i] or false) ~= c[2] then r:fail("DISCONNECTED on " .. c[3], i and names[i]) else got[i] = true end
      if ev.status ~= 0 then r:fail("DISCONNECTED status " .. ev.status, names[i]) end
    end
    nothing_left(r, c[1], c[3])
  end
  for i = 1, N do
    if not got[i] then r:fail("no DISCONNECTED", names[i]) end
    rdmacm.destroy_id(ids[i], T)
    rdmacm.destroy_id(accepted[i], T)
  end
  rdmacm.destroy_id(listener, T)
  for _, ch in ipairs({ lch, ch1, ch2 }) do rdmacm.destroy_event_channel(ch) end
  r:pass(string.format("%d connections closed, every id and channel destroyed", N))
end)
