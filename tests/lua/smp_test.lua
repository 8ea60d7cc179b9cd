--! topology: net.2sw2path4hca
-- SMP and PerfMgt queries through the smp and perf modules.

function test_nodeinfo_by_lid(t)
  local ni = smp.nodeinfo("lid:1")
  if ni.node_type ~= 2 then t:fatal("lid 1 should be Switch1, got node_type " .. ni.node_type) end
  if ni.node_guid ~= "0x0000000000200000" then t:fatal("node_guid " .. ni.node_guid) end
  if ni.num_ports ~= 8 then t:fatal("num_ports " .. ni.num_ports) end
  -- a bare number is a LID too
  if smp.nodeinfo(1).node_guid ~= ni.node_guid then t:fatal("smp.nodeinfo(1) differs") end
end

function test_nodeinfo_by_directed_route(t)
  -- from the SM's switch, port 1 leads to Hca1
  local local_port = fabric.port()
  local ni = smp.nodeinfo("dr:0")
  if ni.node_guid ~= local_port.node_guid then
    t:fatal("dr:0 should be the local node, got " .. ni.node_guid)
  end
  local hca = smp.nodeinfo("dr:0,1")
  if hca.node_type ~= 1 or hca.port_guid ~= "0x0000000000100001" then
    t:fatal(string.format("dr:0,1: type %d port_guid %s", hca.node_type, hca.port_guid))
  end
  if smp.nodedesc("dr:0,1") ~= "Hca1" then t:fatal("nodedesc " .. smp.nodedesc("dr:0,1")) end
end

function test_portinfo(t)
  local pi = smp.portinfo("lid:2", 1)
  if pi.lid ~= 2 then t:fatal("lid " .. pi.lid) end
  if pi.port_state ~= 4 then t:fatal("port_state " .. smp.state_name(pi.port_state)) end
  if pi.master_sm_lid ~= 1 then t:fatal("master_sm_lid " .. pi.master_sm_lid) end
  if smp.width_name(pi.link_width_active) ~= "4X" then t:fatal("width " .. smp.width_name(pi.link_width_active)) end
end

function test_switchinfo_and_lft(t)
  local si = smp.switchinfo("lid:1")
  if si.linear_fdb_top ~= 6 then t:fatal("linear_fdb_top " .. si.linear_fdb_top) end
  local lft = smp.lft("lid:1", 0)
  -- LID 1 is the switch itself (port 0), LID 2 is Hca1 on port 1
  if lft[2] ~= 0 or lft[3] ~= 1 then t:fatal(string.format("lft lid1=%d lid2=%d", lft[2], lft[3])) end
end

function test_sminfo(t)
  local sm = smp.sminfo("lid:" .. fabric.port().sm_lid)
  if smp.sm_state_name(sm.sm_state) ~= "Master" then t:fatal("sm_state " .. sm.sm_state) end
end

function test_pkeys(t)
  local pk = smp.pkeys("lid:2", 1)
  if #pk ~= 32 or pk[1] ~= 0xffff then t:fatal("pkeys[1] " .. tostring(pk[1])) end
end

function test_portcounters(t)
  local pc = perf.portcounters("lid:2", 1)
  if pc.symbol_error_counter ~= 0 then t:fatal("symbol errors " .. pc.symbol_error_counter) end
  if pc.port_select ~= 1 then t:fatal("port_select " .. pc.port_select) end
  local x = perf.portcounters_ext("lid:2", 1)
  if type(x.port_xmit_data) ~= "number" then t:fatal("port_xmit_data is " .. type(x.port_xmit_data)) end
  perf.reset("lid:2", 1)
end

function test_generic_get(t)
  local a = smp.get("lid:1", "NodeInfo")
  local b = smp.get("lid:1", 0x11)
  if a.node_guid ~= b.node_guid then t:fatal("by name and by id differ") end
end

function test_decoded_tables_print_their_fields(t)
  local s = tostring(smp.nodeinfo("lid:1"))
  if not s:find("^NodeInfo\n") or not s:find("node_guid%s+0x0000000000200000") then
    t:fatal("tostring: " .. s)
  end
end

function test_argument_errors(t)
  expect_error('smp.nodeinfo: bad argument #1 \\(target "lid:x"\\): LID "x" is not a number', smp.nodeinfo, "lid:x")
  expect_error("bad argument #1 to .*target expected", smp.nodeinfo, {})
  expect_error("bad argument #2", smp.portinfo, "lid:1", -1)
  expect_error("smp.get: unknown attribute \"NoSuch\"", smp.get, "lid:1", "NoSuch")
  expect_error("smp.portinfo: .*timeout", smp.portinfo, "lid:999")
end

function test_switchinfo_on_a_ca_is_a_status_error(t)
  expect_error("smp.switchinfo: .*0x000c", smp.switchinfo, "lid:2")
end

-- Keys never reach a script (docs/security.md): a decoded M_Key or SM_Key
-- is "<masked>" when the MAD held one, the zero GUID string when it held
-- none; raw MADs from umad.recv have their keys zeroed.
function test_keys_are_masked_in_decoded_tables(t)
  -- A LID-routed GetResp of PortInfo whose header and data both carry
  -- the M_Key 0x1122334455667788.
  local key = "1122334455667788"
  local hex = "01010181" .. string.rep("00", 12) .. "0015" .. "0000" .. "00000001" ..
    key .. string.rep("00", 32) .. key .. string.rep("00", 184)
  local d = mad.decode(hex)
  if d.header.m_key ~= "<masked>" then t:fatal("header m_key " .. tostring(d.header.m_key)) end
  if d.attribute.m_key ~= "<masked>" then t:fatal("PortInfo m_key " .. tostring(d.attribute.m_key)) end
  for _, s in ipairs({tostring(d.header), tostring(d.attribute)}) do
    if s:lower():find(key, 1, true) then t:fatal("key printed: " .. s) end
  end
  local pi = smp.portinfo("lid:2", 1)
  if pi.m_key ~= "0x0000000000000000" then t:fatal("unset M_Key shown as " .. tostring(pi.m_key)) end
  if os.getenv("IBSCRIPT_MKEY") ~= nil then t:fatal("os.getenv returned IBSCRIPT_MKEY") end
end
