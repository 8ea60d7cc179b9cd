local f = fabric.discover()
for _, n in ipairs(f.nodes) do print(n.guid, n.desc, n.type) end
local pi = smp.portinfo("lid:1", 1)
print(pi)
for k, v in pairs(pi) do print(k, v) end
local si = smp.sminfo("lid:1")
print(si)
local req = mad.new("PortInfo", {target = "lid:1", modifier = 1})
local resp = mad.send(req)
mad.show(req, resp)
for k, v in pairs(resp.attribute) do print(k, v) end
print(os.getenv("IBSCRIPT_MKEY"), os.getenv("IBSCRIPT_SMKEY"))
for _, r in ipairs(sa.get_table("PortInfoRecord")) do print(r) end
perf.reset("lid:1", 1)
for _, lid in ipairs({"lid:1", "lid:2", "lid:3"}) do
  print(pcall(cc.get, lid, "CongestionKeyInfo"))
  print(pcall(cc.set, lid, "SwitchCongestionSetting", {marking_rate = 5}))
end
print(os.getenv("IBSCRIPT_CCKEY"))
