-- cpeer.lua: ibscript's side, in Lua, of a connection with librdmacm
-- (tests/kernelvm/cpeer.c) in the real-kernel guest; lua_cpeer.sh runs
-- both and compares what each saw. It prints the events it gets as
-- cpeer does ("event NAME status N pd TEXT"), and "listening" once it
-- listens.
--
--   mode=connect: connect from client to server:port with "lua-connect";
--     accepted: ESTABLISHED with librdmacm's "c-accept", migrate_id to a
--     new channel, disconnect, DISCONNECTED there; rejected: REJECTED.
--   mode=accept (reject=1): listen on server:port, take librdmacm's
--     CONNECT_REQUEST ("c-connect"), accept with "lua-accept" (ESTABLISHED,
--     migrate_id, DISCONNECTED from librdmacm, disconnect) or reject
--     with "lua-reject".

local a = plan.define {
  description = "RDMA CM in Lua against librdmacm",
  categories = { "rdmacm" },
  args = {
    mode = { default = "connect", help = "connect or accept" },
    server = { default = "10.0.0.2", help = "the listening address" },
    client = { default = "10.0.0.1", help = "the connecting address" },
    port = { default = 7601, help = "RDMA CM port" },
    reject = { default = 0, help = "1: the listener rejects" },
  },
}
local T = 20000

local function show(ev)
  local pd = ev.private_data or ""
  pd = pd:match("^[^%z]*")
  if pd == "" then pd = "-" end
  print(string.format("event %s status %d pd %s", ev.event, ev.status, pd))
end

local function next_event(ch, want)
  local ev = rdmacm.get_cm_event(ch, T)
  if not ev then error("no " .. want .. " within 20 s") end
  show(ev)
  rdmacm.ack_cm_event(ev)
  if ev.event ~= want then error(string.format("%s (status %d), want %s", ev.event, ev.status, want)) end
  return ev
end

local param = function(pd) return { private_data = pd .. "\0", initiator_depth = 1, responder_resources = 1 } end

plan.check(a.mode, "rdmacm", function(r)
  local ch = rdmacm.create_event_channel()
  if a.mode == "connect" then
    local id = rdmacm.create_id(ch, "RDMA_PS_TCP")
    rdmacm.resolve_addr(id, { ip = a.client }, { ip = a.server, port = a.port }, T)
    next_event(ch, "RDMA_CM_EVENT_ADDR_RESOLVED")
    rdmacm.resolve_route(id, T)
    next_event(ch, "RDMA_CM_EVENT_ROUTE_RESOLVED")
    rdmacm.connect(id, param("lua-connect"))
    local ev = rdmacm.get_cm_event(ch, T)
    if not ev then error("no answer to connect within 20 s") end
    show(ev)
    rdmacm.ack_cm_event(ev)
    if ev.event == "RDMA_CM_EVENT_REJECTED" then
      rdmacm.destroy_id(id, T)
      return r:pass("rejected")
    end
    if ev.event ~= "RDMA_CM_EVENT_ESTABLISHED" then error(ev.event .. " after connect") end
    local ch2 = rdmacm.create_event_channel()
    rdmacm.migrate_id(id, ch2, T)
    print("migrated")
    rdmacm.disconnect(id)
    print("disconnect")
    next_event(ch2, "RDMA_CM_EVENT_DISCONNECTED")
    rdmacm.destroy_id(id, T)
    return r:pass("connected, migrated, disconnected")
  end
  local l = rdmacm.create_id(ch, "RDMA_PS_TCP")
  rdmacm.bind_addr(l, { ip = a.server, port = a.port })
  rdmacm.listen(l)
  print("listening")
  local req = next_event(ch, "RDMA_CM_EVENT_CONNECT_REQUEST")
  local id = req.id
  if tonumber(a.reject) == 1 then
    rdmacm.reject(id, "lua-reject\0")
    print("rejected")
    rdmacm.destroy_id(l, T)
    return r:pass("rejected")
  end
  rdmacm.accept(id, param("lua-accept"))
  next_event(ch, "RDMA_CM_EVENT_ESTABLISHED")
  local ch2 = rdmacm.create_event_channel()
  rdmacm.migrate_id(id, ch2, T)
  print("migrated")
  next_event(ch2, "RDMA_CM_EVENT_DISCONNECTED")
  rdmacm.disconnect(id)
  print("disconnect")
  rdmacm.destroy_id(id, T)
  rdmacm.destroy_id(l, T)
  r:pass("accepted, migrated, disconnected")
end)
