-- sm.lua: exactly one subnet manager is MASTER, it has the highest
-- priority of the SMs found, and every port names it as its master SM.
-- On a planarized fabric (a discovery of every plane) each plane is a
-- subnet of its own with its own SM (one OpenSM per plane, bound to that
-- plane's port; docs/planes.md): each plane has one MASTER, and every port
-- names its plane's.
--
--   ibscript run scripts/checks/sm.lua

local common = require "common"

local M = {
  description = "one MASTER subnet manager, priorities, SMInfo consistent",
  categories = { "sm" },
  args = {},
}

-- the subnet a port is in: its plane in a discovery of every plane, 0
-- otherwise
local function subnet(p) return p.plane or 0 end

-- the subnets of ends, in order, and the text naming one in a message
-- ("" when there is only one: an ordinary fabric's messages)
local function subnets(ends)
  local seen, out = {}, {}
  for _, p in ipairs(ends) do
    local k = subnet(p)
    if not seen[k] then seen[k] = true out[#out + 1] = k end
  end
  table.sort(out)
  local function prefix(k)
    if #out < 2 and k == 0 then return "" end
    return string.format("plane %d: ", k)
  end
  return out, prefix
end

function M.run(ctx)
  local ends = common.endports(ctx)
  local keys, prefix = subnets(ends)
  local sms       -- {port=, info=} of every port that answers SMInfo
  local unread    -- sweep results of the candidates whose SMInfo could not be read
  local master    -- the MASTER's port by subnet

  plan.check("one MASTER SM", "sm", function(r)
    sms, unread, master = {}, {}, {}
    local masters, found, unreads = {}, {}, {} -- by subnet
    for _, k in ipairs(keys) do masters[k], found[k], unreads[k] = {}, 0, 0 end
    -- SMs set PortInfo.CapabilityMask.IsSM (bit 1) on their port; ask
    -- those, or every endport when none says so
    local cands = {}
    for _, p in ipairs(ends) do
      if bit.band(p.cap_mask or 0, 2) ~= 0 then cands[#cands + 1] = p end
    end
    if #cands == 0 then cands = ends end
    for _, res in ipairs(fabric.sweep("sminfo", cands)) do
      local k = subnet(res.port)
      if res.value then
        sms[#sms + 1] = { port = res.port, info = res.value }
        found[k] = found[k] + 1
        if res.value.sm_state == 3 then table.insert(masters[k], res.port) end
      elseif res.unreadable then
        -- no answer after every try: an SM there may be a MASTER too
        unread[#unread + 1] = res
        unreads[k] = unreads[k] + 1
        r:unreadable(res.err, res.port)
      end
      -- (a port that refuses SMInfo runs no SM)
    end
    for _, k in ipairs(keys) do
      local ms = masters[k]
      if #ms == 1 then
        master[k] = ms[1]
        r:pass(string.format("%sMASTER at LID %d", prefix(k), ms[1].lid), ms[1])
      elseif #ms == 0 then
        -- with SMInfo unread, the MASTER may be among them
        if unreads[k] == 0 then r:fail(string.format("%sno MASTER SM among %d SMs found", prefix(k), found[k])) end
      else
        for _, p in ipairs(ms) do
          r:fail(string.format("%s%d SMs claim MASTER; this one at LID %d", prefix(k), #ms, p.lid), p)
        end
      end
    end
  end)

  plan.check("SM priorities", "sm", function(r)
    for _, res in ipairs(unread or {}) do r:unreadable(res.err, res.port) end
    if not sms or #sms == 0 then r:skip("no SM answered SMInfo") return end
    if not next(master) then r:skip("no single MASTER") return end
    for _, k in ipairs(keys) do
      local m = master[k]
      local mp, n = nil, 0
      for _, s in ipairs(sms) do
        if s.port == m then mp = s.info.priority end
        if subnet(s.port) == k then n = n + 1 end
      end
      for _, s in ipairs(sms) do
        if m and s.port ~= m and subnet(s.port) == k then
          if s.info.priority > mp then
            r:fail(string.format("%s%s SM has priority %d above the MASTER's %d", prefix(k),
              smp.sm_state_name(s.info.sm_state), s.info.priority, mp), s.port)
          elseif s.info.sm_state ~= 2 and s.info.sm_state ~= 1 then
            r:fail(string.format("%sSM in state %s beside the MASTER (want Standby)", prefix(k),
              smp.sm_state_name(s.info.sm_state)), s.port)
          else
            r:pass()
          end
        end
      end
      if m then r:pass(string.format("%s%d SMs, MASTER priority %d", prefix(k), n, mp)) end
    end
  end)

  plan.check("ports name the MASTER SM", "sm", function(r)
    if not next(master) then
      if unread and #unread > 0 then r:unreadable("the MASTER SM is not known: SMInfo could not be read everywhere") return end
      r:skip("no single MASTER") return
    end
    -- the ports of a subnet without a single MASTER are left out: the
    -- check above failed for it
    local named = {}
    for _, p in ipairs(ends) do
      if master[subnet(p)] then named[#named + 1] = p end
    end
    for _, res in ipairs(fabric.sweep("portinfo", named, { fields = { "master_sm_lid" } })) do
      local m = master[subnet(res.port)]
      if res.err then
        r:fail(res.err, res.port) -- a read that could not be done is recorded as such
      elseif res.value.master_sm_lid ~= m.lid then
        r:fail(string.format("master SM LID %d, the MASTER is at LID %d", res.value.master_sm_lid, m.lid), res.port)
      else
        r:pass()
      end
    end
  end)
end

return common.main(M, ...)
