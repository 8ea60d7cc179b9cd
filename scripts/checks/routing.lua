-- routing.lua: every switch's linear forwarding table reaches every LID,
-- no LID route loops, and the host-to-host hop-count histogram.
--
--   ibscript run scripts/checks/routing.lua

local common = require "common"

local M = {
  description = "routing: LFTs reach every LID, no loops, hop counts",
  categories = { "routing" },
  args = {
    max_hops = { default = 0, help = "fail when a host-to-host route needs more links than this; 0: not checked",
      integer = true, min = 0, max = 64 },
  },
}

function M.run(ctx)
  local rt

  plan.check("LFTs reach every LID", "routing", function(r)
    rt = fabric.routes(ctx.f)
    for _, e in ipairs(rt.errors) do r:fail(e.path .. ": " .. e.err) end
    for _, p in ipairs(rt.problems) do
      if p.kind ~= "loop" then r:fail(p.msg, p.switch) end
    end
    local shown = #rt.problems
    if rt.count > shown then r:fail(string.format("... %d more bad LFT entries", rt.count - shown)) end
    if rt.inherited > 0 then
      r:fail(string.format("%d more switch-to-LID routes fail because they pass through these entries", rt.inherited))
    end
    if rt.unknown > 0 then
      r:unreadable(string.format("%d switch-to-LID routes reach switches or links that could not be read", rt.unknown))
    end
    r:pass(string.format("%d switches, %d LIDs, %d routes followed", rt.switches, rt.lids, rt.routes))
  end)

  plan.check("no routing loops", "routing", function(r)
    if not rt then error("the forwarding tables could not be read") end
    for _, p in ipairs(rt.problems) do
      if p.kind == "loop" then r:fail(p.msg, p.switch) end
    end
    if rt.unknown > 0 then
      r:unreadable(string.format("%d switch-to-LID routes reach switches or links that could not be read", rt.unknown))
    end
    if rt.loops == 0 then r:pass() end
  end)

  plan.check("hop-count histogram", "routing", function(r)
    if not rt then error("the forwarding tables could not be read") end
    local hs = {}
    for h in pairs(rt.hops) do hs[#hs + 1] = h end
    table.sort(hs)
    local parts = {}
    for _, h in ipairs(hs) do parts[#parts + 1] = string.format("%d:%d", h, rt.hops[h]) end
    local limit = tonumber(ctx.args.max_hops) or 0
    if limit > 0 and #hs > 0 and hs[#hs] > limit then
      r:fail(string.format("routes of up to %d links, limit %d (links:host pairs %s)", hs[#hs], limit, table.concat(parts, " ")))
    elseif limit > 0 and rt.unknown > 0 then
      r:unreadable(string.format("%d switch-to-LID routes reach switches or links that could not be read", rt.unknown))
    else
      r:pass("links:host pairs " .. table.concat(parts, " "))
    end
  end)
end

return common.main(M, ...)
