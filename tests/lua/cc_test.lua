--! topology: net.2sw2path4hca
-- Congestion Control (class 0x21) from Lua: cc.get by IBA name,
-- ibccquery's alias and ID; CongestionLog in the layout its LogType
-- says; cc.set read back; errors naming what is wrong; mad.decode and ls.
-- LID 1 is Switch1, LID 2 a CA.

function test_get_by_every_name(t)
  local a = cc.get("lid:2", "CongestionInfo")
  local b = cc.get("lid:2", "CI")
  local c = cc.get("lid:2", 0x11)
  if a.control_table_cap ~= 2 or b.control_table_cap ~= 2 or c.control_table_cap ~= 2 then
    t:fatal(string.format("ControlTableCap %s %s %s, want 2", a.control_table_cap, b.control_table_cap, c.control_table_cap))
  end
  if cc.get("lid:1", "ci").control_table_cap ~= 0 then t:fatal("a switch has a CCT") end
  local cpi = cc.get("lid:1", "ClassPortInfo")
  if cpi.class_version ~= 2 then t:fatal("ClassPortInfo class_version " .. cpi.class_version) end
  if cc.get("lid:1", "Timestamp").timestamp == nil then t:fatal("no timestamp") end
end

function test_congestion_log_layouts(t)
  local sw, ca = cc.get("lid:1", "CongestionLog"), cc.get("lid:2", "CL")
  if sw.log_type ~= 1 or sw.port_map == nil or sw.slid14 ~= 0 then t:fatal("switch log " .. sw.log_type) end
  if ca.log_type ~= 2 or ca.threshold_event_counter ~= 0 or ca.local_qp_cn_entry12 ~= 0 then t:fatal("CA log " .. ca.log_type) end
  if sw.threshold_event_counter ~= nil or ca.slid0 ~= nil then t:fatal("a log has the other layout's fields") end
end

function test_set_read_back(t)
  local r = cc.set("lid:1", "SwitchCongestionSetting",
    {control_map = 0x1f, victim_mask = string.rep("00", 31) .. "06", threshold = 0xf, packet_size = 8, marking_rate = 77})
  if r.threshold ~= 15 or r.marking_rate ~= 77 then t:fatal("answer " .. r.threshold) end
  local g = cc.get("lid:1", "SS")
  if g.control_map ~= 0x1f or g.packet_size ~= 8 or g.victim_mask ~= "0x" .. string.rep("00", 31) .. "06" then
    t:fatal(string.format("read back %s %s %s", g.control_map, g.packet_size, g.victim_mask))
  end
  cc.set("lid:2", "CongestionControlTable", {ccti_limit = 127, cct_shift63 = 3, cct_multiplier63 = 0x3fff}, 1)
  local b1, b0 = cc.get("lid:2", "CT", 1), cc.get("lid:2", "CT", 0)
  if b1.ccti_limit ~= 127 or b1.cct_shift63 ~= 3 or b1.cct_multiplier63 ~= 0x3fff or b0.cct_multiplier63 ~= 0 then
    t:fatal(string.format("CCT %d %d %d / %d", b1.ccti_limit, b1.cct_shift63, b1.cct_multiplier63, b0.cct_multiplier63))
  end
end

function test_errors(t)
  local ok, err = pcall(cc.get, "lid:1", "NoSuchSetting")
  if ok or not tostring(err):find('unknown Congestion Control attribute "NoSuchSetting"', 1, true) then t:fatal(tostring(err)) end
  ok, err = pcall(cc.get, "lid:2", "SwitchCongestionSetting")
  if ok or not tostring(err):find("0x000c", 1, true) then t:fatal(tostring(err)) end
  ok, err = pcall(cc.get, "lid:1", "SP", 1)
  if ok or not tostring(err):find("SwitchPortCongestionSetting block 1", 1, true) then t:fatal(tostring(err)) end
  ok, err = pcall(cc.set, "lid:1", "CongestionKeyInfo", {})
  if ok or not tostring(err):find("CC_Key", 1, true) then t:fatal(tostring(err)) end
  ok, err = pcall(cc.set, "lid:1", "SS", {no_such_field = 1})
  if ok or not tostring(err):find("no_such_field", 1, true) then t:fatal(tostring(err)) end
  ok, err = pcall(cc.set, "lid:1", "SS", {threshold = 16})
  if ok or not tostring(err):find("threshold", 1, true) then t:fatal(tostring(err)) end
end

function test_decode_masks_keys(t)
  -- A CC GetResp of CongestionKeyInfo: CC_Key 0x1122334455667788 in the
  -- header and in the attribute, lease period 60.
  local hdr = "01 21 02 81 00 00 00 00 00 00 00 00 00 00 00 01 00 12 00 00 00 00 00 00"
  local key = " 11 22 33 44 55 66 77 88"
  local d = mad.decode(hdr .. key .. string.rep(" 00", 32) .. key .. " 00 00 00 3c" .. string.rep(" 00", 256 - 76))
  if d.name ~= "CongestionKeyInfo" or d.class ~= "CongestionMgt" then t:fatal(d.name .. " " .. d.class) end
  if d.attribute.cc_key ~= "<masked>" or d.header.cc_key ~= "<masked>" or d.attribute.cc_key_lease_period ~= 60 then
    t:fatal(string.format("keys %s %s, lease %d", d.attribute.cc_key, d.header.cc_key, d.attribute.cc_key_lease_period))
  end
  local log = mad.decode("01 21 02 81 00 00 00 00 00 00 00 00 00 00 00 01 00 13 00 00 00 00 00 00" .. string.rep(" 00", 8) .. " 02")
  if log.name ~= "CongestionLogCA" or log.attribute.log_type ~= 2 then t:fatal("log " .. log.name) end
end

function test_mad_new_send(t)
  local r = mad.send(mad.new("CongestionInfo", {target = "lid:2"}))
  if r.status ~= 0 or r.attribute.control_table_cap ~= 2 then t:fatal("CongestionInfo " .. r.status) end
  local set = mad.new("SwitchCongestionSetting", {target = "lid:1", method = "Set"})
  set.attribute.marking_rate = 9
  r = mad.send(set)
  if r.status ~= 0 or r.attribute.marking_rate ~= 9 or cc.get("lid:1", "SS").marking_rate ~= 9 then
    t:fatal("Set " .. r.status .. " " .. r.attribute.marking_rate)
  end
  local log = mad.send(mad.new("CongestionLog", {target = "lid:2"}))
  if log.name ~= "CongestionLogCA" or log.attribute.log_type ~= 2 then t:fatal("log " .. log.name) end
  local ok, err = pcall(mad.send, mad.new("CongestionKeyInfo", {target = "lid:1", method = "Set"}))
  if ok or not tostring(err):find("CC_Key", 1, true) then t:fatal(tostring(err)) end
end
