-- validate.lua: check a fabric the way an engineer does after a cabling
-- change, a firmware upgrade or an SM failover.
--
--   ibscript run scripts/validate.lua                 # the default fabric
--   ibscript run --fabric sim:FILE scripts/validate.lua
--
-- Checks: every cabled port is ACTIVE at the best width and speed both ends
-- enable; link partners enable the same widths and speeds; no two nodes or
-- ports share a GUID and no two ports a LID; exactly one SM is MASTER; the
-- error counters of every cabled port are zero. Prints a report and exits
-- 1 when a check fails (2 when the run itself fails).

local checks = {}      -- in order of first use
local results = {}     -- name -> {pass = n, fail = {messages}}

local function result(name)
  local r = results[name]
  if not r then
    r = { pass = 0, fail = {} }
    results[name] = r
    checks[#checks + 1] = name
  end
  return r
end
local function pass(name) local r = result(name); r.pass = r.pass + 1 end
local function fail(name, msg) local r = result(name); r.fail[#r.fail + 1] = msg end

-- highest bit set in mask (the best of what it enables), 0 for none
local function best(mask)
  local b = 0
  local bitv = 1
  while bitv <= mask do
    if bit.band(mask, bitv) ~= 0 then b = bitv end
    bitv = bitv * 2
  end
  return b
end

-- width masks order 1x(1) 2x(16) 4x(2) 8x(4) 12x(8): 2x sits between 1x and 4x
local width_rank = { [1] = 1, [16] = 2, [2] = 3, [4] = 4, [8] = 5 }
local function best_width(mask)
  local b, rank = 0, 0
  for w, r in pairs(width_rank) do
    if bit.band(mask, w) ~= 0 and r > rank then b, rank = w, r end
  end
  return b
end

local function where(p)
  return string.format("%s port %d", p.node.desc, p.num)
end
local function link_name(a, b)
  return where(a) .. " <-> " .. where(b)
end
local function link_text(width, speed, ext)
  return smp.width_name(width) .. " " .. smp.speed_name(speed, ext)
end

local f = fabric.discover()
print(string.format("validate: %d nodes, %d links discovered from %s", #f.nodes, #f.links, fabric.port().ca_name))
for _, e in ipairs(f.errors) do
  fail("discovery", e.path .. ": " .. e.err)
end
if #f.errors == 0 then pass("discovery") end

-- Links: state, negotiated width and speed, partners' enabled sets.
for _, l in ipairs(f.links) do
  local a, b = l.a, l.b
  local name = link_name(a, b)
  if a.state == 4 and b.state == 4 then
    pass("links ACTIVE")
  else
    fail("links ACTIVE", string.format("%s: state %s/%s", name,
      smp.state_name(a.state), smp.state_name(b.state)))
  end

  local want_w = best_width(bit.band(a.width_enabled, b.width_enabled))
  local common_ext = bit.band(a.speed_ext_enabled, b.speed_ext_enabled)
  local want_s = best(bit.band(a.speed_enabled, b.speed_enabled))
  local want_e = best(common_ext)
  local ok = true
  for _, p in ipairs({ a, b }) do
    if p.width_active ~= want_w or p.speed_active ~= want_s or p.speed_ext_active ~= want_e then
      ok = false
    end
  end
  if ok then
    pass("link width and speed")
  else
    fail("link width and speed", string.format("%s: active %s / %s, both ends enable %s", name,
      link_text(a.width_active, a.speed_active, a.speed_ext_active),
      link_text(b.width_active, b.speed_active, b.speed_ext_active),
      link_text(want_w, want_s, want_e)))
  end

  if a.width_enabled == b.width_enabled and a.speed_enabled == b.speed_enabled
      and a.speed_ext_enabled == b.speed_ext_enabled then
    pass("partners enable the same")
  else
    fail("partners enable the same", string.format(
      "%s: width enabled 0x%x / 0x%x, speed enabled 0x%x / 0x%x, ext speed enabled 0x%x / 0x%x",
      name, a.width_enabled, b.width_enabled, a.speed_enabled, b.speed_enabled,
      a.speed_ext_enabled, b.speed_ext_enabled))
  end
end

-- Unique GUIDs and LIDs.
local node_guids, port_guids, lids = {}, {}, {}
for _, n in ipairs(f.nodes) do
  if n.guid == "0x0000000000000000" then fail("unique GUIDs", n.desc .. ": node GUID is zero") end
  if node_guids[n.guid] then
    fail("unique GUIDs", string.format("node GUID %s on %q and %q", n.guid, node_guids[n.guid].desc, n.desc))
  end
  node_guids[n.guid] = n
  for _, p in pairs(n.ports) do
    if n.type ~= "Switch" or p.num == 0 then
      if port_guids[p.guid] and port_guids[p.guid] ~= p then
        fail("unique GUIDs", string.format("port GUID %s on %s and %s", p.guid, where(port_guids[p.guid]), where(p)))
      end
      port_guids[p.guid] = p
      if p.lid ~= 0 then
        if lids[p.lid] then
          fail("unique LIDs", string.format("LID %d on %s and %s", p.lid, where(lids[p.lid]), where(p)))
        end
        lids[p.lid] = p
      elseif p.state == 4 then
        fail("unique LIDs", where(p) .. ": ACTIVE with LID 0")
      end
    end
  end
end
if not results["unique GUIDs"] then pass("unique GUIDs") end
if not results["unique LIDs"] then pass("unique LIDs") end

-- Subnet manager: the SM every port names must be MASTER, and only it.
local masters = {}
local sm_lids = {}
for lid, p in pairs(lids) do
  local ok, pi = pcall(smp.portinfo, "lid:" .. lid, p.num)
  if ok then sm_lids[pi.master_sm_lid] = true end
end
for sm_lid in pairs(sm_lids) do
  local ok, info = pcall(smp.sminfo, "lid:" .. sm_lid)
  if not ok then
    fail("one MASTER SM", string.format("SM at LID %d does not answer SMInfo: %s", sm_lid, info))
  elseif info.sm_state == 3 then
    masters[#masters + 1] = sm_lid
  else
    fail("one MASTER SM", string.format("SM at LID %d is %s, not MASTER", sm_lid, smp.sm_state_name(info.sm_state)))
  end
end
if #masters == 1 then
  pass("one MASTER SM")
elseif #masters == 0 then
  fail("one MASTER SM", "no MASTER SM found")
else
  fail("one MASTER SM", #masters .. " SMs claim MASTER")
end

-- Error counters.
local error_counters = {
  "symbol_error_counter", "link_error_recovery_counter", "link_downed_counter",
  "port_rcv_errors", "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
  "port_xmit_discards", "port_xmit_constraint_errors", "port_rcv_constraint_errors",
  "local_link_integrity_errors", "excessive_buffer_overrun_errors", "vl15_dropped",
}
for _, n in ipairs(f.nodes) do
  for _, p in pairs(n.ports) do
    local lid = n.type == "Switch" and n.lid or p.lid
    if p.remote and lid ~= 0 then
      local ok, pc = pcall(perf.portcounters, "lid:" .. lid, p.num)
      if not ok then
        fail("error counters zero", where(p) .. ": " .. pc)
      else
        local bad = {}
        for _, c in ipairs(error_counters) do
          if pc[c] ~= 0 then bad[#bad + 1] = c .. "=" .. pc[c] end
        end
        if #bad == 0 then
          pass("error counters zero")
        else
          fail("error counters zero", where(p) .. ": " .. table.concat(bad, " "))
        end
      end
    end
  end
end

-- Report.
local passed, failed = 0, 0
for _, name in ipairs(checks) do
  local r = results[name]
  if #r.fail == 0 then
    passed = passed + 1
    print(string.format("  PASS  %-26s %d ok", name, r.pass))
  else
    failed = failed + 1
    print(string.format("  FAIL  %-26s %d ok, %d failed", name, r.pass, #r.fail))
    for i, m in ipairs(r.fail) do
      if i > 20 then print(string.format("          ... %d more", #r.fail - 20)) break end
      print("          " .. m)
    end
  end
end
print(string.format("%d checks passed, %d failed", passed, failed))
os.exit(failed == 0 and 0 or 1)
