--! topology: net.2sw2path4hca
-- The seed-level umad calls: open a port, register an agent, send a MAD,
-- receive its response or its timeout, poll.

local function u32be(n)
  return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256,
    math.floor(n / 256) % 256, n % 256)
end

-- a LID-routed SMP Get NodeInfo, 256 bytes
local function nodeinfo_get(tid)
  return string.char(1, 0x01, 1, 0x01) .. string.rep("\0", 4) .. u32be(0) .. u32be(tid)
    .. string.char(0x00, 0x11, 0, 0) .. u32be(0) .. string.rep("\0", 256 - 24)
end

function test_get_port(t)
  local p = umad.get_port()
  if p.base_lid == 0 or p.state ~= 4 then t:fatal("base_lid " .. p.base_lid .. " state " .. p.state) end
  umad.release_port(p)
  if umad.size() ~= 64 then t:fatal("umad.size " .. umad.size()) end
end

function test_send_recv_response(t)
  local port = umad.open_port()
  local agent = umad.register_agent(port, 0x01, 1)
  umad.send(port, agent, nodeinfo_get(0x1234), 100, 2, { lid = 2 })
  if not umad.poll(port, 1000) then t:fatal("poll: nothing ready") end
  local mad, got_agent, status, addr = umad.recv(port, 1000)
  if not mad then t:fatal("recv: timeout") end
  if got_agent ~= agent or status ~= 0 then t:fatal("agent " .. got_agent .. " status " .. status) end
  if #mad ~= 256 or mad:byte(4) ~= 0x81 then t:fatal("not a GetResp: method " .. mad:byte(4)) end
  if addr.lid ~= 2 then t:fatal("source lid " .. addr.lid) end
  port:close()
end

function test_timeout_comes_back_with_status(t)
  local port = umad.open_port()
  local agent = umad.register_agent(port, 0x01, 1)
  umad.send(port, agent, nodeinfo_get(0x77), 10, 1, { lid = 999 })
  local mad, _, status = umad.recv(port, 2000)
  if not mad then t:fatal("no timeout completion") end
  if status ~= 110 then t:fatal("status " .. status) end
  -- the low 32 bits of the TID are the caller's
  if mad:sub(13, 16) ~= u32be(0x77) then t:fatal("TID not kept") end
  umad.close_port(port)
end

function test_recv_nonblocking_and_errors(t)
  local port = umad.open_port()
  if umad.recv(port, 0) ~= nil then t:fatal("recv on an empty port returned a MAD") end
  if umad.poll(port, 10) then t:fatal("poll on an empty port said ready") end
  expect_error("umad.recv: EINVAL", umad.recv, port, 0, 100)
  expect_error("bad argument #1 .*umad.port expected", umad.recv, 5, 0)
  port:close()
  expect_error("umad.recv: EINVAL: invalid port handle", umad.recv, port, 0)
end

-- The seed pages' error contract, the same errno on every backend:
-- umad_get_port and umad_open_port of an unknown CA or port fail with
-- ENODEV; poll, recv and send on a closed port with EINVAL ("-EINVAL
-- invalid port handle").
function test_errno_contract(t)
  expect_error("umad.get_port: ENODEV: ", umad.get_port, "NoSuchCA", 1)
  expect_error("umad.get_port: ENODEV: ", umad.get_port, "NoSuchCA")
  local me = umad.get_port() -- this backend's default port: its CA name and port
  if me.portnum ~= 0 then -- a switch takes any port number as its port 0, as libibumad
    expect_error("umad.get_port: ENODEV: ", umad.get_port, me.ca_name, 9)
    expect_error("umad.get_port: ENODEV: ", umad.get_port, "", 9) -- on a switch host (ibsim's SM node): its port 0
  end
  expect_error("umad.open_port: ENODEV: ", umad.open_port, "NoSuchCA", 1)
  local port = umad.open_port(me.ca_name, me.portnum)
  local agent = umad.register_agent(port, 0x01, 1)
  umad.close_port(port)
  expect_error("umad.poll: EINVAL: invalid port handle", umad.poll, port, 0)
  expect_error("umad.recv: EINVAL: invalid port handle", umad.recv, port, 0)
  expect_error("umad.send: EINVAL: invalid port handle", umad.send, port, agent, nodeinfo_get(1), 100, 0, { lid = 1 })
  expect_error("umad.register_agent: EINVAL: invalid port handle", umad.register_agent, port, 0x81, 1)
end

-- get_port gives the port's P_Key table as libibumad's pkeys/pkeys_size:
-- every entry by index, the default partition's key among them.
function test_get_port_pkeys(t)
  local me = umad.get_port()
  local p = umad.get_port(me.ca_name, me.portnum)
  if #me.pkeys ~= #p.pkeys then t:fatal("the default port's table has " .. #me.pkeys .. " P_Keys, by name " .. #p.pkeys) end
  if p.pkeys_size ~= #p.pkeys or p.pkeys_size == 0 then t:fatal("pkeys_size " .. p.pkeys_size .. " for " .. #p.pkeys .. " entries") end
  local default = false
  for _, k in ipairs(p.pkeys) do
    if bit.band(k, 0x7fff) == 0x7fff then default = true end
  end
  if not default then t:fatal("no default P_Key in " .. table.concat(p.pkeys, ",")) end
  umad.release_port(p)
end

function test_agent_limits(t)
  local port = umad.open_port()
  umad.register_agent(port, 0x04, 1, 0, { 0x01 })
  expect_error("umad.register_agent: EINVAL", umad.register_agent, port, 0x04, 1, 0, { 0x01 })
  for i = 2, 32 do umad.register_agent(port, 0, 0) end
  expect_error("umad.register_agent: ENOMEM", umad.register_agent, port, 0, 0)
  port:close()
end

-- A GMP with a GRH (umad_set_grh): a gid turns it on; the answer of the
-- PMA carries one back, with the target's GID; bad GRH options raise.
function test_grh(t)
  local port = umad.open_port()
  local agent = umad.register_agent(port, 0x04, 1)
  local pc = string.char(1, 0x04, 1, 0x01) .. string.rep("\0", 4) .. u32be(0) .. u32be(0x99)
    .. string.char(0x00, 0x12, 0, 0) .. u32be(0) .. string.rep("\0", 40) .. string.char(0, 1) .. string.rep("\0", 256 - 66)
  local ok, target = pcall(umad.get_port, "Hca2", 1)
  if not ok and tostring(target):find("an ibsim attachment", 1, true) then
    -- ibsim attaches to one node, and its protocol has no field for a GRH:
    -- a GRH send is refused there, never sent without its header.
    expect_error("umad.send: EINVAL: .*carries no Global Route Header", umad.send, port, agent, pc, 0, 0,
      { lid = 2, gid = "fe80::1" })
    port:close()
    return
  end
  if not ok then t:fatal(tostring(target)) end
  if not target.gids[0] or target.gids[1] then t:fatal("Hca2's GID table: one entry at index 0 expected") end
  umad.send(port, agent, pc, 200, 2, { lid = target.base_lid, gid = target.gids[0], traffic_class = 4, flow_label = 0x12 })
  local mad, _, status, addr = umad.recv(port, 2000)
  if not mad or status ~= 0 then t:fatal("no PortCounters answer") end
  if not addr.grh or addr.gid ~= target.gids[0] or addr.hop_limit ~= 255 or addr.traffic_class ~= 4 or addr.flow_label ~= 0x12 then
    t:fatal(string.format("answer grh %s gid %s hop %s tc %s fl %s", tostring(addr.grh), tostring(addr.gid),
      tostring(addr.hop_limit), tostring(addr.traffic_class), tostring(addr.flow_label)))
  end
  expect_error("addr.gid: \"fd00::zz\" is not a GID", umad.send, port, agent, pc, 0, 0, { gid = "fd00::zz" })
  expect_error("addr.hop_limit without addr.gid", umad.send, port, agent, pc, 0, 0, { hop_limit = 3 })
  expect_error("addr.flow_label 1048576 out of range", umad.send, port, agent, pc, 0, 0, { gid = "fe80::1", flow_label = 0x100000 })
  expect_error("umad.send: EINVAL: .*gid_index 3", umad.send, port, agent, pc, 0, 0, { lid = 2, gid = "fe80::1", gid_index = 3 })
  port:close()
end

-- SMI/GSI pairs (umad_get_smi_gsi_pairs, umad_get_smi_gsi_pair_by_ca_name):
-- the simulator here has no planes, so every CA is its own SMI and GSI.
function test_smi_gsi_pairs_without_planes(t)
  local pairs, names = umad.get_smi_gsi_pairs(), umad.get_cas_names()
  if #pairs ~= #names then t:fatal(#pairs .. " pairs for " .. #names .. " CAs") end
  for i, p in ipairs(pairs) do
    if p.smi_name ~= names[i] or p.gsi_name ~= names[i] or p.smi_preferred_port ~= 0 then
      t:fatal("pair " .. i .. ": " .. p.smi_name .. "/" .. p.gsi_name .. " for " .. names[i])
    end
  end
  local ca = umad.get_port(names[1])
  local p = umad.get_smi_gsi_pair_by_ca_name(names[1])
  if p.smi_name ~= names[1] or p.gsi_name ~= names[1] or p.smi_preferred_port ~= ca.portnum or p.gsi_preferred_port ~= ca.portnum then
    t:fatal("pair of " .. names[1] .. ": " .. p.smi_name .. "/" .. p.smi_preferred_port .. ", its port " .. ca.portnum)
  end
  expect_error("umad.get_smi_gsi_pair_by_ca_name: ENODEV: ", umad.get_smi_gsi_pair_by_ca_name, "NoSuchCA", 1)
end
