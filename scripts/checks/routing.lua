-- routing.lua: every switch's linear forwarding table reaches every LID,
-- no LID route loops, and the host-to-host hop-count histogram; with
-- --arg credit_loops=true no credit loop (deadlock) in the channel
-- dependency graph of the LFTs, MFTs and SL2VL tables, with --arg
-- multicast=true every MLID's tree reaching each member once (both read
-- more tables: ibscript analyze has them all).
--
--   ibscript run scripts/checks/routing.lua --arg credit_loops=true

local common = require "common"

local M = {
  description = "LFTs reach every LID, no loops, hop counts",
  categories = { "routing" },
  args = {
    max_hops = { default = 0, help = "fail when a host-to-host route needs more links than this; 0: not checked",
      integer = true, min = 0, max = 64 },
    credit_loops = { default = false, help = "search the LFTs, MFTs and every switch's SL2VL tables for credit loops (deadlocks)" },
    multicast = { default = false, help = "check that every MLID's MFT tree reaches each member once, without loops" },
  },
}

function M.run(ctx)
  local rt

  plan.check("LFTs reach every LID", "routing", function(r)
    rt = fabric.routes(ctx.f)
    -- on a planarized fabric an error names its switch, and so its plane
    -- (a plane's switch names alone do not say it); elsewhere its path does
    for _, e in ipairs(rt.errors) do r:fail(e.path .. ": " .. e.err, e.plane and e.switch) end
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

  plan.check("no credit loops", "routing", function(r)
    if not ctx.args.credit_loops then return r:skip("not asked (--arg credit_loops=true)") end
    local a = diag.analyze{checks = "credit-loops"}
    for _, e in ipairs(a.errors) do r:unreadable(e) end
    local c = a.credit_loops
    if not c then return end
    for _, l in ipairs(c.loops) do
      local hops = {}
      for _, ch in ipairs(l.channels) do
        hops[#hops + 1] = string.format("%s/%d VL%d", ch.node.desc, ch.port, ch.vl)
      end
      r:fail(string.format("SL %s: %s -> back", table.concat(l.sls, ","), table.concat(hops, " -> ")))
    end
    if c.count > #c.loops then r:fail(string.format("... %d more credit loops", c.count - #c.loops)) end
    if c.count == 0 then
      r:pass(string.format("%d channels, %d dependencies, SL2VL %s", c.channels, c.dependencies, c.sl2vl))
    end
  end)

  plan.check("multicast trees reach every member", "routing", function(r)
    if not ctx.args.multicast then return r:skip("not asked (--arg multicast=true)") end
    local a = diag.analyze{checks = "multicast"}
    for _, e in ipairs(a.errors) do r:unreadable(e) end
    local m = a.multicast
    if not m then return end
    for _, p in ipairs(m.problems) do
      local where = p.member and (p.member.node.desc .. " port " .. p.member.port) or (p.switch and p.switch.desc) or ""
      r:fail(string.format("MLID 0x%04x: %s from %s port %d %s", p.mlid, p.kind, p.source.node.desc, p.source.port, where))
    end
    if m.count > #m.problems then r:fail(string.format("... %d more", m.count - #m.problems)) end
    if m.count == 0 then r:pass(string.format("%d MLIDs, %d members", m.mlids, m.members)) end
  end)
end

return common.main(M, ...)
