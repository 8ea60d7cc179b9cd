-- sm.lua: exactly one subnet manager is MASTER, it has the highest
-- priority of the SMs found, and every port names it as its master SM.
--
--   ibscript run scripts/checks/sm.lua

local common = require "common"

local M = {
  description = "subnet manager: one MASTER, priorities, SMInfo consistent",
  categories = { "sm" },
  args = {},
}

function M.run(ctx)
  local ends = common.endports(ctx)
  local sms       -- {port=, info=} of every port that answers SMInfo
  local unread    -- sweep results of the candidates whose SMInfo could not be read
  local master

  plan.check("one MASTER SM", "sm", function(r)
    sms, unread = {}, {}
    local masters = {}
    -- SMs set PortInfo.CapabilityMask.IsSM (bit 1) on their port; ask
    -- those, or every endport when none says so
    local cands = {}
    for _, p in ipairs(ends) do
      if bit.band(p.cap_mask or 0, 2) ~= 0 then cands[#cands + 1] = p end
    end
    if #cands == 0 then cands = ends end
    for _, res in ipairs(fabric.sweep("sminfo", cands)) do
      if res.value then
        sms[#sms + 1] = { port = res.port, info = res.value }
        if res.value.sm_state == 3 then masters[#masters + 1] = res.port end
      elseif res.unreadable then
        -- no answer after every try: an SM there may be a MASTER too
        unread[#unread + 1] = res
        r:unreadable(res.err, res.port)
      end
      -- (a port that refuses SMInfo runs no SM)
    end
    if #masters == 1 then
      master = masters[1]
      r:pass(string.format("MASTER at LID %d", master.lid), master)
    elseif #masters == 0 then
      -- with SMInfo unread, the MASTER may be among them
      if #unread == 0 then r:fail(string.format("no MASTER SM among %d SMs found", #sms)) end
    else
      for _, p in ipairs(masters) do
        r:fail(string.format("%d SMs claim MASTER; this one at LID %d", #masters, p.lid), p)
      end
    end
  end)

  plan.check("SM priorities", "sm", function(r)
    for _, res in ipairs(unread or {}) do r:unreadable(res.err, res.port) end
    if not sms or #sms == 0 then r:skip("no SM answered SMInfo") return end
    if not master then r:skip("no single MASTER") return end
    local mp
    for _, s in ipairs(sms) do if s.port == master then mp = s.info.priority end end
    for _, s in ipairs(sms) do
      if s.port ~= master then
        if s.info.priority > mp then
          r:fail(string.format("%s SM has priority %d above the MASTER's %d", smp.sm_state_name(s.info.sm_state),
            s.info.priority, mp), s.port)
        elseif s.info.sm_state ~= 2 and s.info.sm_state ~= 1 then
          r:fail(string.format("SM in state %s beside the MASTER (want Standby)", smp.sm_state_name(s.info.sm_state)), s.port)
        else
          r:pass()
        end
      end
    end
    r:pass(string.format("%d SMs, MASTER priority %d", #sms, mp))
  end)

  plan.check("ports name the MASTER SM", "sm", function(r)
    if not master then
      if unread and #unread > 0 then r:unreadable("the MASTER SM is not known: SMInfo could not be read everywhere") return end
      r:skip("no single MASTER") return
    end
    for _, res in ipairs(fabric.sweep("portinfo", ends, { fields = { "master_sm_lid" } })) do
      if res.err then
        r:fail(res.err, res.port) -- a read that could not be done is recorded as such
      elseif res.value.master_sm_lid ~= master.lid then
        r:fail(string.format("master SM LID %d, the MASTER is at LID %d", res.value.master_sm_lid, master.lid), res.port)
      else
        r:pass()
      end
    end
  end)
end

return common.main(M, ...)
