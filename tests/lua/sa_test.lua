--! topology: net.2sw2path4hca
-- The sa module (GetTable/Get/PathRecord from the simulated SM's SA, over
-- RMPP) and the seed-level path: umad.send of an RMPP message and
-- umad.recv of a coalesced one, with ENOSPC for a short buffer.

local function u16be(n) return string.char(math.floor(n / 256) % 256, n % 256) end
local function u32be(n)
  return string.char(math.floor(n / 16777216) % 256, math.floor(n / 65536) % 256,
    math.floor(n / 256) % 256, n % 256)
end
local function byte_at(s, off) return string.byte(s, off + 1) end
local function u16_at(s, off) return byte_at(s, off) * 256 + byte_at(s, off + 1) end
local function u32_at(s, off) return u16_at(s, off) * 65536 + u16_at(s, off + 2) end

-- an SA MAD: common header, RMPP header (version 1, flags), SA header, data
local function sa_mad(method, attr, tid, rmpp_flags, mask_lo, data)
  local hdr = string.char(1, 0x03, 2, method) .. string.rep("\0", 4) .. u32be(0) .. u32be(tid)
    .. u16be(attr) .. "\0\0" .. u32be(0)
  local rmpp = string.char(1, 1, rmpp_flags, 0) .. u32be(0) .. u32be(0)
  local sahdr = string.rep("\0", 8) .. "\0\0\0\0" .. u32be(0) .. u32be(mask_lo)
  local m = hdr .. rmpp .. sahdr .. (data or "")
  if #m < 256 then m = m .. string.rep("\0", 256 - #m) end
  return m
end

function test_get_table_every_node(t)
  local nodes = sa.get_table("NodeRecord")
  if #nodes ~= 6 then t:fatal("NodeRecords: " .. #nodes .. ", want 6") end
  local switches = sa.get_table("NodeRecord", { node_type = 2 })
  if #switches ~= 2 then t:fatal("switches: " .. #switches) end
  for _, n in ipairs(switches) do
    if n.node_type ~= 2 or n.lid == 0 then t:fatal("bad switch record " .. n.lid) end
  end
  local one = sa.get("NodeRecord", { lid = switches[1].lid })
  if one.node_guid ~= switches[1].node_guid then t:fatal("get: " .. one.node_guid) end
end

function test_other_records(t)
  if #sa.get_table("LinkRecord") == 0 then t:fatal("no LinkRecords") end
  if #sa.get_table("SwitchInfoRecord") ~= 2 then t:fatal("SwitchInfoRecords") end
  local pir = sa.get_table("PortInfoRecord", { endport_lid = 1 })
  if #pir == 0 or pir[1].endport_lid ~= 1 then t:fatal("PortInfoRecord") end
  if #sa.get_table("LinearForwardingTableRecord") < 2 then t:fatal("LFT records") end
end

function test_paths_between_hosts(t)
  local hosts = sa.get_table("NodeRecord", { node_type = 1 })
  for _, a in ipairs(hosts) do
    for _, b in ipairs(hosts) do
      local p = sa.path(a.lid, b.lid)
      if p.slid ~= a.lid or p.dlid ~= b.lid or p.mtu == 0 then
        t:fatal(string.format("path %d->%d: slid %d dlid %d mtu %d", a.lid, b.lid, p.slid, p.dlid, p.mtu))
      end
    end
  end
end

function test_errors(t)
  expect_error('NodeRecord has no field "nod_type"', sa.get_table, "NodeRecord", { nod_type = 2 })
  expect_error('unknown SA record "NodeRecords"', sa.get_table, "NodeRecords")
  expect_error("no records", sa.get, "NodeRecord", { lid = 999 })
  expect_error("a LID is needed", sa.path, "dr:0,1", 1)
end

-- umad.recv of a multi-segment GetTableResp: ENOSPC with the needed length
-- for a 256-byte buffer and one a byte short, then the whole coalesced
-- message for the exact length.
function test_umad_coalesced_enospc(t)
  local port = umad.open_port()
  local sm = umad.get_port().sm_lid
  local agent = umad.register_agent(port, 0x03, 2, 1)
  umad.send(port, agent, sa_mad(0x12, 0x11, 0x77, 0, 0), 1000, 2, { lid = sm })
  local ok, err = pcall(umad.recv, port, 1000, 256)
  if ok then t:fatal("recv with 256 bytes did not fail") end
  local need = tonumber(string.match(tostring(err), "needs (%d+) bytes"))
  if not string.find(tostring(err), "ENOSPC") or need ~= 56 + 6 * 112 then
    t:fatal("ENOSPC error: " .. tostring(err))
  end
  -- one byte short is ENOSPC too, the same length asked, the message kept
  expect_error("umad.recv: ENOSPC: .*needs " .. need .. " bytes", umad.recv, port, 0, need - 1)
  local m, got, status = umad.recv(port, 1000, need)
  if not m or #m ~= need or got ~= agent or status ~= 0 then t:fatal("coalesced recv") end
  -- the first segment's header: GetTableResp, RMPP DATA, Active|First,
  -- SegmentNumber 1, PayloadLength = D + N*20 (N = 4 segments)
  if byte_at(m, 3) ~= 0x92 or byte_at(m, 25) ~= 1 or byte_at(m, 26) % 8 ~= 3 or u32_at(m, 28) ~= 1 then
    t:fatal(string.format("header: method %x type %d flags %x seg %d", byte_at(m, 3), byte_at(m, 25), byte_at(m, 26), u32_at(m, 28)))
  end
  if u32_at(m, 32) ~= 6 * 112 + 4 * 20 then t:fatal("PayloadLength " .. u32_at(m, 32)) end
  if u16_at(m, 44) ~= 14 then t:fatal("AttributeOffset " .. u16_at(m, 44)) end
  local descs = {}
  for i = 0, 5 do
    local d = string.sub(m, 56 + i * 112 + 45, 56 + i * 112 + 44 + 64)
    descs[#descs + 1] = string.match(d, "^[^%z]*")
  end
  if not string.find(table.concat(descs, ","), "Hca") then t:fatal("descriptions: " .. table.concat(descs, ",")) end
  port:close()
end

-- umad.send with the RMPP Active flag: a two-segment GetMulti(PathRecord)
-- is segmented by the driver, the SA answers after the direction switch,
-- and recv returns the GetMultiResp.
function test_umad_send_rmpp(t)
  local port = umad.open_port()
  local me, sm = umad.get_port().base_lid, umad.get_port().sm_lid
  local agent = umad.register_agent(port, 0x03, 2, 1)
  -- PathRecord template: DLID (component 4) = sm, SLID (5) = me; 300
  -- bytes of data so that the request needs two segments
  local rec = string.rep("\0", 40) .. u16be(sm) .. u16be(me) .. string.rep("\0", 20)
  local req = sa_mad(0x14, 0x35, 0x99, 1, 0x30, rec .. string.rep("\0", 300 - #rec))
  if #req ~= 356 then t:fatal("request length " .. #req) end
  umad.send(port, agent, req, 1000, 1, { lid = sm })
  local m, got, status = umad.recv(port, 2000)
  if not m then t:fatal("no GetMultiResp") end
  if status ~= 0 or byte_at(m, 3) ~= 0x94 or u16_at(m, 56 + 40) ~= sm or u16_at(m, 56 + 42) ~= me then
    t:fatal(string.format("status %d method %x dlid %d slid %d", status, byte_at(m, 3), u16_at(m, 96), u16_at(m, 98)))
  end
  port:close()
end

function test_multipath(t)
  local hosts = sa.get_table("NodeRecord", { node_type = 1 })
  local guids = {}
  for _, h in ipairs(hosts) do guids[#guids + 1] = h.port_guid end
  local paths = sa.multipath({ guids[1], guids[2] }, guids)
  if #paths ~= 2 * #guids then t:fatal("multipath: " .. #paths .. " paths") end
  for i, p in ipairs(paths) do
    local want = sa.path(p.slid, p.dlid)
    if want.mtu ~= p.mtu or want.rate ~= p.rate then t:fatal("path " .. i .. " differs from sa.path") end
  end
  expect_error("not a GUID", sa.multipath, { "lid:1" }, guids)
end

-- sa.subscribe: the InformInfoRecords list the subscriptions until
-- :close(); nothing arrives while nothing changes; planes=true on a port
-- that is not planarized is the plain subscription; bad options are
-- errors naming them. (cmd/ibscript's TestSubscribeLua takes a link down;
-- bindings' TestSubscribePlanes planes=true on a planarized port.)
function test_subscribe(t)
  local sub = sa.subscribe{ traps = { 64, 65, 128 } }
  if #sa.get_table("InformInfoRecord") ~= 3 then t:fatal("InformInfoRecords: " .. #sa.get_table("InformInfoRecord")) end
  -- (4 records would not fit the one MAD OpenSM answers with under ibsim)
  local every = sa.subscribe()
  if sub:next(0) ~= nil or every:next(1) ~= nil then t:fatal("a trap before any change") end
  every:close()
  if #sa.get_table("InformInfoRecord") ~= 3 then t:fatal("after closing every trap's: " .. #sa.get_table("InformInfoRecord")) end
  if sub:dropped() ~= 0 then t:fatal("dropped " .. sub:dropped()) end
  sub:close()
  if #sa.get_table("InformInfoRecord") ~= 0 then t:fatal("subscriptions left after close") end
  local ok, err = pcall(function() return sub:next(0) end)
  if ok or not tostring(err):find("closed") then t:fatal("next after close: " .. tostring(err)) end
  local plain = sa.subscribe{ traps = { 64 }, planes = true }
  if #sa.get_table("InformInfoRecord") ~= 1 then t:fatal("planes=true: " .. #sa.get_table("InformInfoRecord") .. " subscriptions") end
  plain:close()
  for _, c in ipairs({
    { { planes = 1 }, "planes must be a boolean" },
    { { traps = { 70000 } }, "traps%[1%]" },
    { { traps = 64 }, "array of trap numbers" },
    { { trap = { 64 } }, "unknown option" },
    { { lid_end = 3 }, "LIDEnd 3 without LIDBegin" },
    { { buffer = -1 }, "buffer" },
  }) do
    ok, err = pcall(sa.subscribe, c[1])
    if ok or not tostring(err):find(c[2]) then t:fatal("want " .. c[2] .. ": " .. tostring(err)) end
  end
end
