--! topology: net.2sw2path4hca
-- The attributes of issue 18's schema from Lua, by IBA name, by the C
-- tools' names and by ID, with the values ibsim + OpenSM give on this file
-- (checked live in tests/ibsimdiff).

function test_sl2vl_by_every_name(t)
  local a = smp.sl2vl("lid:1", 3, 5)          -- Switch1, input port 3, output port 5
  local b = smp.get("lid:1", "SLtoVLMappingTable", 3 * 256 + 5)
  local c = smp.get("lid:1", "SL2VLMappingTable", 3 * 256 + 5)
  local d = smp.get("lid:1", 0x17, 3 * 256 + 5)
  for sl = 0, 15 do
    local k = "sl_to_vl" .. sl
    local want = sl
    if sl == 15 then want = 7 end
    if a[k] ~= want or b[k] ~= want or c[k] ~= want or d[k] ~= want then
      t:fatal(string.format("%s: %s %s %s %s, want %d", k, a[k], b[k], c[k], d[k], want))
    end
  end
end

function test_vlarb_blocks(t)
  local low, high = smp.vlarb("lid:2", 1, 1), smp.vlarb("lid:2", 1, 3)
  if low.vl1 ~= 1 or low.weight1 ~= 4 or low.weight0 ~= 0 then t:fatal("low " .. low.vl1 .. " " .. low.weight1) end
  if high.vl0 ~= 0 or high.weight0 ~= 4 or high.weight1 ~= 0 then t:fatal("high " .. high.weight0) end
  if low.weight8 ~= 0 then t:fatal("entry 8 is past VLArbitrationLowCap 8: " .. low.weight8) end
  local ok = pcall(smp.vlarb, "lid:2", 1, 2)
  if ok then t:fatal("block 2 answered with a cap of 8 entries") end
end

function test_perf_get_details(t)
  local d = perf.get("lid:2", 1, "PortRcvErrorDetails")
  if d.port_select ~= 1 or d.port_local_physical_errors ~= 0 then t:fatal("details " .. d.port_select) end
  local w = perf.get("lid:1", 255, "PortVLXmitWaitCounters")
  if w.port_select ~= 255 or w.port_vl_xmit_wait15 ~= 0 then t:fatal("vl xmit wait " .. w.port_select) end
  local ok, err = pcall(perf.get, "lid:2", 1, "NoSuchCounters")
  if ok or not tostring(err):find("unknown attribute") then t:fatal(tostring(err)) end
end

function test_sminfo_record(t)
  local recs = sa.get_table("SMInfoRecord")
  if #recs ~= 1 then t:fatal(#recs .. " SMInfoRecords") end
  local r = recs[1]
  if r.lid ~= 1 or r.guid ~= "0x0000000000200000" or r.sm_state ~= 3 or r.sm_key ~= "0x0000000000000000" then
    t:fatal(string.format("lid %d guid %s state %d key %s", r.lid, r.guid, r.sm_state, r.sm_key))
  end
end

-- OpenSM's SLtoVL and VL arbitration records (QoS off: its zero copies),
-- by LID: a switch's port pair, a CA's record whatever ports it names;
-- no MFT record and no subscription (OpenSM programs no multicast route).
function test_table_records(t)
  local s = sa.get("SL2VLTableRecord", {lid = 1, input_port_num = 1, output_port_num = 2})
  if s.lid ~= 1 or s.input_port_num ~= 1 or s.output_port_num ~= 2 or s.sl_to_vl0 ~= 0 then
    t:fatal(string.format("switch SL2VL %d %d->%d", s.lid, s.input_port_num, s.output_port_num))
  end
  local c = sa.get("SL2VLTableRecord", {lid = 2, input_port_num = 1, output_port_num = 2})
  if c.lid ~= 2 or c.input_port_num ~= 0 or c.output_port_num ~= 0 then
    t:fatal(string.format("CA SL2VL %d %d->%d", c.lid, c.input_port_num, c.output_port_num))
  end
  local v = sa.get("VLArbTableRecord", {lid = 2, output_port_num = 7, block_num = 3})
  if v.lid ~= 2 or v.output_port_num ~= 1 or v.block_num ~= 3 then
    t:fatal(string.format("CA VLArb %d port %d block %d", v.lid, v.output_port_num, v.block_num))
  end
  if #sa.get_table("MFTRecord") ~= 0 or #sa.get_table("InformInfoRecord") ~= 0 then
    t:fatal("MFT or InformInfo records")
  end
end

-- perfquery -a and -x -a. The CA's PMA lacks AllPortSelect: its ports
-- are read one by one, and (ibsim's rule) it answers only the port asked
-- through, so port 2 fails as perfquery -a does. The switch's PMA has
-- AllPortSelect (0x1300 on ibsim; the embedded simulator adds RS-FEC
-- counters, 0x4000: 0x5300); the fields its
-- capabilities leave out are nil (no additional PortCountersExtended
-- counters).
function test_perf_counters_all_ports(t)
  local ok, err = pcall(perf.counters, "lid:2", 255)
  if ok or not tostring(err):find("emulating AllPortSelect, port 2") then t:fatal(tostring(err)) end
  local x, xi = perf.counters("lid:1", 255, true)
  if xi.summed ~= nil or x.port_select ~= 255 or (xi.capability_mask ~= 0x1300 and xi.capability_mask ~= 0x5300) then
    t:fatal("switch: summed " .. tostring(xi.summed) .. string.format(" mask %#x", xi.capability_mask))
  end
  if x.port_unicast_xmit_pkts == nil or x.symbol_error_counter ~= nil or x.counter_select2 ~= nil then
    t:fatal("extended layout: unicast " .. tostring(x.port_unicast_xmit_pkts) .. " symbol errors " .. tostring(x.symbol_error_counter))
  end
  local pc, pi = perf.counters("lid:1", 3)
  if pi.summed ~= nil or pc.port_select ~= 3 or pc.port_xmit_wait == nil then t:fatal("switch port 3") end
end

-- Whole tables in one call, as smpquery pkeys and GUIDInfo read them.
function test_whole_tables(t)
  local ni = smp.nodeinfo("lid:2")
  local keys = smp.pkey_table("lid:2")
  if #keys ~= ni.partition_cap or keys[1] ~= 0xffff then t:fatal(#keys .. " P_Keys, first " .. tostring(keys[1])) end
  local pi = smp.portinfo("lid:2")
  local guids = smp.guid_table("lid:2")
  if #guids ~= pi.guid_cap or guids[1] ~= ni.port_guid then t:fatal(#guids .. " GUIDs, first " .. tostring(guids[1])) end
  local sw = smp.pkey_table("lid:1", 1)
  if #sw ~= smp.switchinfo("lid:1").partition_enforcement_cap then t:fatal("switch port 1: " .. #sw) end
  local ok, err = pcall(smp.pkey_table, "lid:2", 9)
  if ok or not tostring(err):find("past the node") then t:fatal(tostring(err)) end
end

-- perf.get of PortCounters and PortCountersExtended reads them as
-- perf.counters does: the switch's PMA (capability mask 0x1300 on ibsim,
-- 0x5300 on the embedded simulator) lacks the
-- additional PortCountersExtended counters, so they are nil, not zeros
-- read from reserved bytes; port 255 of the CA (no AllPortSelect) is the
-- emulated sum, as perfquery -a.
function test_perf_get_capability_aware(t)
  local g = perf.get("lid:1", 3, "PortCountersExtended")
  local c = perf.counters("lid:1", 3, true)
  if g.symbol_error_counter ~= nil or g.counter_select2 ~= nil then
    t:fatal("additional counters " .. tostring(g.symbol_error_counter) .. " " .. tostring(g.counter_select2))
  end
  if g.port_unicast_xmit_pkts == nil or g.port_xmit_data ~= c.port_xmit_data then
    t:fatal("unicast " .. tostring(g.port_unicast_xmit_pkts) .. " data " .. tostring(g.port_xmit_data))
  end
  local byid = perf.get("lid:1", 3, 0x0012)
  if byid.port_select ~= 3 or byid.port_xmit_wait == nil then t:fatal("PortCounters by ID") end
  local ok, err = pcall(perf.get, "lid:2", 255, "PortCounters")
  if ok or not tostring(err):find("emulating AllPortSelect") then t:fatal(tostring(err)) end
end
