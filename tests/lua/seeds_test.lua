--! topology: net.2sw2path4hca
-- The seed man pages, statement by statement, as a script sees them:
-- umad_poll(3), umad_recv(3), umad_get_port(3)/umad_release_port(3) and
-- umad_send(3) through the umad module. (rdma_migrate_id(3) is
-- rdmacm_test.lua's test_migrate_*.) Where the page and real libibumad
-- differ, the test follows the library (specs/umad-abi.md section 13);
-- where ibscript's Lua form differs on purpose (a timeout is nil or false,
-- an error raises "fn: ERRNO: ...") docs/lua-api.md says so.

local function u32be(n)
  return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256,
    math.floor(n / 256) % 256, n % 256)
end

-- a LID-routed SMP Get(NodeInfo) with TID tid, 256 bytes
local function nodeinfo_get(tid)
  return string.char(1, 0x01, 1, 0x01) .. string.rep("\0", 4) .. u32be(0) .. u32be(tid)
    .. string.char(0x00, 0x11, 0, 0) .. u32be(0) .. string.rep("\0", 256 - 24)
end

-- a PerfMgt Get(ClassPortInfo) with TID tid
local function perf_cpi_get(tid)
  return string.char(1, 0x04, 1, 0x01) .. string.rep("\0", 4) .. u32be(0) .. u32be(tid)
    .. string.char(0x00, 0x01, 0, 0) .. u32be(0) .. string.rep("\0", 256 - 24)
end

local DEAD_LID = 999 -- no port of the fabric has it

local function tid_of(m) return m:sub(13, 16) end

local function smp_port()
  local port = umad.open_port()
  return port, umad.register_agent(port, 0x01, 1)
end

-- ask sends a PerfMgt Get(ClassPortInfo) to the SM's LID, which answers
-- on every backend: its PMA on the simulator and ibsim, the kernel (status
-- 0x000C, no agent owns the class there) on the kernel backend's model.
local function ask(port, agent, tid, timeout_ms, retries)
  umad.send(port, agent, perf_cpi_get(tid), timeout_ms, retries,
    { lid = umad.get_port().sm_lid, qpn = 1, qkey = 0x80010000 })
end

local function perf_port()
  local port = umad.open_port()
  return port, umad.register_agent(port, 0x04, 1)
end

-- umad_poll(3): "Once a packet is ready to be read, the function returns
-- 0. After that the packet can be read using umad_recv()" (timeout 0:
-- "to ensure a non-blocking read").
function test_umad_poll_ready_then_recv(t)
  local port, agent = perf_port()
  ask(port, agent, 0x1001, 1000, 2)
  if not umad.poll(port, -1) then t:fatal("poll(-1): not ready") end
  if not umad.poll(port, 0) then t:fatal("poll(0) of a packet not read yet: not ready") end
  local m, got, status = umad.recv(port, 0)
  if not m then t:fatal("recv(0) after a successful poll: nothing") end
  if got ~= agent or status ~= 0 or tid_of(m) ~= u32be(0x1001) then t:fatal("agent " .. got .. " status " .. status .. ", or TID not the request's") end
  port:close()
end

-- umad_poll(3): "Otherwise, -ETIMEDOUT is returned": false, for a
-- positive timeout and for 0.
function test_umad_poll_timed_out(t)
  local port = umad.open_port()
  for _, ms in ipairs({ 0, 1, 20 }) do
    if umad.poll(port, ms) ~= false then t:fatal("poll(" .. ms .. ") on an empty port is not false") end
  end
  port:close()
end

-- umad_poll(3): "-EINVAL invalid port handle".
function test_umad_poll_invalid_port_handle(t)
  local port = umad.open_port()
  port:close()
  expect_error("umad.poll: EINVAL: invalid port handle", umad.poll, port, 0)
  expect_error("bad argument #1 to umad.poll \\(port: umad.port expected, got number\\)", umad.poll, 3, 0)
  local open = umad.open_port()
  expect_error("bad argument #2 to umad.poll \\(timeout_ms: number expected, got no value\\)", umad.poll, open)
  open:close()
end

-- umad_recv(3): "on success return the agentid": each response comes back
-- under the agent that sent its request.
function test_umad_recv_returns_agentid(t)
  local port, a = perf_port()
  local b = umad.register_agent(port, 0x04, 1) -- send-only agents of one class may be several
  if a == b then t:fatal("two agents, one id " .. a) end
  ask(port, b, 0x2002, 1000, 2)
  ask(port, a, 0x2001, 1000, 2)
  local by_tid = {}
  for _ = 1, 2 do
    local m, got, status = umad.recv(port, 5000)
    if not m or status ~= 0 then t:fatal("a response is missing") end
    by_tid[tid_of(m)] = got
  end
  if by_tid[u32be(0x2001)] ~= a or by_tid[u32be(0x2002)] ~= b then t:fatal("responses under the wrong agents") end
  port:close()
end

-- umad_recv(3): "A timeout_ms parameter of zero indicates a non blocking
-- read" (-EWOULDBLOCK when nothing is there), a positive one waits that
-- long: both nil in Lua.
function test_umad_recv_nothing_ready(t)
  local port = umad.open_port()
  if umad.recv(port, 0) ~= nil then t:fatal("recv(0) on an empty port returned something") end
  if umad.recv(port, 20) ~= nil then t:fatal("recv(20) on an empty port returned something") end
  port:close()
end

-- umad_recv(3): "A negative timeout_ms makes the function block until a
-- packet is received."
function test_umad_recv_negative_timeout_blocks_until_packet(t)
  local port, agent = perf_port()
  ask(port, agent, 0x3001, 1000, 2)
  local m, got, status = umad.recv(port, -1)
  if not m or got ~= agent or status ~= 0 or tid_of(m) ~= u32be(0x3001) then t:fatal("recv(-1) did not return the response") end
  port:close()
end

-- umad_recv(3): "*length must be >= 256 bytes", else -EINVAL; the message
-- stays queued (umad-abi.md 13 #3: checked before reading).
function test_umad_recv_length_below_256(t)
  local port, agent = perf_port()
  ask(port, agent, 0x4001, 1000, 2)
  if not umad.poll(port, 5000) then t:fatal("no response") end
  for _, n in ipairs({ 0, 24, 255 }) do
    expect_error("umad.recv: EINVAL: .*length " .. n .. " is less than one MAD", umad.recv, port, 0, n)
  end
  local m = umad.recv(port, 0, 256)
  if not m or tid_of(m) ~= u32be(0x4001) then t:fatal("the response did not stay queued") end
  port:close()
end

-- umad_recv(3): "-EINVAL invalid port handle".
function test_umad_recv_invalid_port_handle(t)
  local port = umad.open_port()
  port:close()
  expect_error("umad.recv: EINVAL: invalid port handle", umad.recv, port, 0)
  local open = umad.open_port()
  expect_error("bad argument #2 to umad.recv \\(timeout_ms: number expected, got string\\)", umad.recv, open, "1")
  open:close()
end

-- umad_get_port(3): "the default port if ca_name is NULL and portnum is
-- zero": nil, "" and no argument are the same port.
function test_umad_get_port_default(t)
  local a, b, c = umad.get_port(), umad.get_port(nil, 0), umad.get_port("", 0)
  for _, p in ipairs({ b, c }) do
    if p.ca_name ~= a.ca_name or p.portnum ~= a.portnum or p.port_guid ~= a.port_guid then
      t:fatal("default port " .. a.ca_name .. "/" .. a.portnum .. " vs " .. p.ca_name .. "/" .. p.portnum)
    end
  end
end

-- umad_get_port(3): the fields of umad_port_t, and link_layer, pkeys and
-- pkeys_size that libibumad adds.
function test_umad_get_port_fields(t)
  local me = umad.get_port()
  local p = umad.get_port(me.ca_name, me.portnum)
  local want = {
    ca_name = "string", portnum = "number", base_lid = "number", lmc = "number", sm_lid = "number",
    sm_sl = "number", state = "number", phys_state = "number", rate = "number", capmask = "number",
    gid_prefix = "string", port_guid = "string", link_layer = "string", pkeys = "table", pkeys_size = "number",
  }
  for k, ty in pairs(want) do
    if type(p[k]) ~= ty then t:fatal(k .. " is " .. type(p[k]) .. ", want " .. ty) end
  end
  if p.ca_name ~= me.ca_name or p.portnum ~= me.portnum or p.state ~= 4 or p.base_lid == 0 or p.link_layer ~= "InfiniBand" then
    t:fatal(me.ca_name .. "/" .. me.portnum .. ": " .. p.ca_name .. "/" .. p.portnum .. " state " .. p.state .. " lid " .. p.base_lid .. " " .. p.link_layer)
  end
  umad.release_port(p)
end

-- umad_get_port(3): "If only one of ca_name and portnum are specified, the
-- other is used as a filter": a NULL ca_name and a port number give a
-- port of that number on any device (libibumad takes a switch at its port
-- 0 whatever the number); a CA name and no port give that CA's best port.
function test_umad_get_port_portnum_filter(t)
  local p = umad.get_port(nil, 1)
  if p.portnum ~= 1 and not (p.portnum == 0 and smp.nodeinfo("lid:" .. p.base_lid).node_type == 2) then
    t:fatal("get_port(nil, 1) gave port " .. p.portnum)
  end
  local me = umad.get_port()
  local q = umad.get_port(me.ca_name)
  if q.ca_name ~= me.ca_name or q.portnum ~= me.portnum then t:fatal("get_port(\"" .. me.ca_name .. "\") gave " .. q.ca_name .. "/" .. q.portnum) end
end

-- umad_get_port(3): "a negative value on error": -ENODEV for an unknown
-- CA, or a port the CA does not have (umad-abi.md 13 #12).
function test_umad_get_port_unknown(t)
  expect_error("umad.get_port: ENODEV: ", umad.get_port, "NoSuchCA")
  expect_error("umad.get_port: ENODEV: ", umad.get_port, "NoSuchCA", 1)
  expect_error("umad.get_port: ENODEV: ", umad.get_port, "Hca1", 9)
  if umad.get_port().portnum ~= 0 then -- on a switch host port 9 is the switch's port 0
    expect_error("umad.get_port: ENODEV: ", umad.get_port, nil, 9)
  end
  expect_error("bad argument #2 to umad.get_port \\(portnum: integer 0..254 expected, got -1\\)", umad.get_port, "Hca1", -1)
end

-- umad_release_port(3): releases what umad_get_port allocated; real
-- libibumad always returns 0 (umad-abi.md 13 #12), also for a port
-- structure get_port never filled: nothing is raised.
function test_umad_release_port(t)
  local p = umad.get_port()
  if umad.release_port(p) ~= nil then t:fatal("release_port returned something") end
  umad.release_port({})
  expect_error("bad argument #1 to umad.release_port \\(port_table: table expected, got no value\\)", umad.release_port)
end

-- umad_send(3): "If reply is not received within the specified value, the
-- original buffer is returned in the read channel with the status field
-- set (to non zero)": status 110 (ETIMEDOUT), the sending agent, the
-- request's header (the kernel returns only the 24-byte MAD header; the
-- TID's upper 32 bits are the kernel's), once.
function test_umad_send_timeout_returns_original(t)
  local port, agent = smp_port()
  local req = nodeinfo_get(0x5001)
  umad.send(port, agent, req, 10, 2, { lid = DEAD_LID })
  local m, got, status, addr = umad.recv(port, 10000)
  if not m then t:fatal("no timeout completion") end
  if status ~= 110 or got ~= agent then t:fatal("status " .. status .. " agent " .. got) end
  if #m < 24 or m:sub(1, 8) ~= req:sub(1, 8) or m:sub(13, 24) ~= req:sub(13, 24) then t:fatal("not the request's header") end
  if #m > 24 and m ~= req:sub(1, 8) .. m:sub(9, 12) .. req:sub(13) then t:fatal("not the request") end
  if addr.lid ~= DEAD_LID then t:fatal("addr.lid " .. addr.lid) end
  if umad.recv(port, 100) ~= nil then t:fatal("a timed-out send came back twice") end
  port:close()
end

-- umad_send(3): "zero value means not solicited": nothing comes back, no
-- timeout and no response (a response matches no outstanding request).
function test_umad_send_timeout_zero_not_solicited(t)
  local port, agent = smp_port()
  umad.send(port, agent, nodeinfo_get(0x6001), 0, 3, { lid = DEAD_LID })
  ask(port, umad.register_agent(port, 0x04, 1), 0x6002, 0, 3)
  if umad.recv(port, 200) ~= nil then t:fatal("something came back for unsolicited sends") end
  port:close()
end

-- umad_send(3): "Negative timeout_ms makes kernel wait forever for the
-- reply": no timeout record, and a reply that comes is delivered.
function test_umad_send_negative_timeout_waits_forever(t)
  local port, agent = smp_port()
  umad.send(port, agent, nodeinfo_get(0x7001), -1, 0, { lid = DEAD_LID })
  if umad.recv(port, 200) ~= nil then t:fatal("a send with timeout -1 timed out") end
  local perf = umad.register_agent(port, 0x04, 1)
  ask(port, perf, 0x7002, -1, 0)
  local m, _, status = umad.recv(port, 5000)
  if not m or status ~= 0 or tid_of(m) ~= u32be(0x7002) then t:fatal("no reply to a send with timeout -1") end
  port:close()
end

-- umad_send(3): "-EINVAL invalid port handle or agentid" (real umad_send
-- returns -EIO with the cause in errno, umad-abi.md 13 #7; ibscript
-- raises the cause).
function test_umad_send_invalid_agent_or_port(t)
  local port, agent = smp_port()
  local lid = umad.get_port().sm_lid
  expect_error("umad.send: EINVAL: ", umad.send, port, agent + 1, nodeinfo_get(1), 100, 0, { lid = lid })
  umad.unregister_agent(port, agent)
  expect_error("umad.send: EINVAL: ", umad.send, port, agent, nodeinfo_get(1), 100, 0, { lid = lid })
  port:close()
  expect_error("umad.send: EINVAL: invalid port handle", umad.send, port, agent, nodeinfo_get(1), 100, 0, { lid = lid })
  local open = umad.open_port()
  expect_error("bad argument #3 to umad.send \\(mad: string expected, got table\\)", umad.send, open, 0, {}, 0, 0)
  open:close()
end

-- umad_poll(3), umad_recv(3) and umad_send(3) with a timeout longer than a
-- C int holds (1e18 ms, math.huge): the calls wait as for the longest one
-- (2^31-1 ms), so poll and recv get the 50 ms timeout record that comes,
-- and a send with it still waits for its reply (no record after 100 ms);
-- -math.huge waits as -1 does. NaN is no timeout: each raises, naming it.
function test_umad_huge_timeouts(t)
  local port, agent = smp_port()
  -- ibsim bounces a request to a LID no port has back at once, as a
  -- timeout whatever the send's (fabric.Caps.NoTimeouts): there a long
  -- timeout cannot be told from a short one, and only poll and recv are
  -- checked.
  umad.send(port, agent, nodeinfo_get(0x8100), 60000, 0, { lid = DEAD_LID })
  local bounces = umad.recv(port, 100) ~= nil
  for _, f in ipairs({ umad.poll, umad.recv }) do
    expect_error("timeout_ms: a number of milliseconds expected, got NaN", f, port, 0 / 0)
  end
  expect_error("bad argument #4 to umad.send \\(timeout_ms: a number of milliseconds expected, got NaN\\)",
    umad.send, port, agent, nodeinfo_get(0x8100), 0 / 0, 0, { lid = DEAD_LID })
  for i, ms in ipairs({ 2147483647, 2147483648, 1e18, math.huge, -math.huge }) do
    umad.send(port, agent, nodeinfo_get(0x8100 + i), 50, 0, { lid = DEAD_LID })
    if not umad.poll(port, ms) then t:fatal("poll(" .. ms .. ") timed out before the timeout record came") end
    local m, _, status = umad.recv(port, ms)
    if not m or status ~= 110 then t:fatal("recv(" .. ms .. ") did not return the timed-out send") end
    if not bounces then
      umad.send(port, agent, nodeinfo_get(0x8200 + i), ms, 0, { lid = DEAD_LID })
      if umad.recv(port, 100) ~= nil then t:fatal("a send with timeout " .. ms .. " timed out at once") end
    end
  end
  port:close()
end

-- Agent ids umad_unregister refuses: never registered, out of the 32 a
-- port has, or unregistered already: EINVAL, and the port stays usable;
-- the 33rd agent is ENOMEM; closing a port twice is not an error
-- (umad_close_port returns 0).
function test_umad_agent_ids_out_of_range(t)
  local port, agent = smp_port()
  for _, a in ipairs({ agent + 1, 31, 32, 255 }) do
    expect_error("umad.unregister_agent: EINVAL: ", umad.unregister_agent, port, a)
  end
  expect_error("bad argument #2 to umad.unregister_agent", umad.unregister_agent, port, 256)
  umad.unregister_agent(port, agent)
  expect_error("umad.unregister_agent: EINVAL: ", umad.unregister_agent, port, agent)
  for _ = 1, 32 do umad.register_agent(port, 0x04, 1) end
  expect_error("umad.register_agent: ENOMEM: ", umad.register_agent, port, 0x04, 1)
  port:close()
  port:close()
  umad.close_port(port)
end

-- umad_get_port(3) and umad_open_port with CA names no device has: a '/'
-- in it, "..", longer than UMAD_CA_NAME_LEN (20): ENODEV, with or without
-- a port number; a port number no CA has: ENODEV.
function test_umad_get_port_odd_names(t)
  local me = umad.get_port().ca_name
  for _, ca in ipairs({ me .. "/", "../" .. me, "..", me .. string.rep("x", 20) }) do
    for _, n in ipairs({ 0, 1 }) do
      expect_error("umad.get_port: ENODEV: ", umad.get_port, ca, n)
      expect_error("umad.open_port: ENODEV: ", umad.open_port, ca, n)
    end
  end
  expect_error("umad.open_port: ENODEV: ", umad.open_port, me, 254)
  if umad.get_port().portnum ~= 0 then -- a switch host's default port is port 0 whatever the number
    expect_error("umad.open_port: ENODEV: ", umad.open_port, nil, 254)
  end
  expect_error("bad argument #2 to umad.open_port \\(portnum: integer 0..254 expected, got -1\\)", umad.open_port, nil, -1)
end
