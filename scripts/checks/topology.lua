-- topology.lua: the fabric against a reference topology (an ibnetdiscover
-- file or a JSON snapshot from fabric.save): missing and extra nodes,
-- moved and missing cables, degraded links, changed firmware-visible
-- fields, replaced nodes, ranked by severity.
--
--   ibscript discover > fabric.topo        # once, on the fabric as it should be
--   ibscript run scripts/checks/topology.lua --arg reference=fabric.topo [--arg save=SNAPSHOT.json]

local common = require "common"

local M = {
  description = "differences from a reference",
  categories = { "topology" },
  args = {
    reference = { default = "", help = "reference topology: ibnetdiscover file or JSON snapshot; empty: not checked",
      file = "read" },
    save = { default = "", help = "also save the discovered fabric as a JSON snapshot to this file", file = "write" },
  },
}

-- setup reads the reference: a missing or malformed file is a mistake of
-- the run, not a failed check.
function M.setup(args)
  if args.reference == "" then return end
  local ok, ref = pcall(fabric.load, args.reference)
  if not ok then error("--arg reference=" .. args.reference .. ": " .. tostring(ref), 0) end
  M.ref = ref
end

function M.run(ctx)
  local args = ctx.args
  if args.reference ~= "" and not M.ref then M.setup(args) end
  if args.save ~= "" then
    plan.check("snapshot saved", "topology", function(r)
      fabric.save(ctx.f, args.save)
      r:pass(args.save)
    end)
  end
  plan.check("topology matches the reference", "topology", function(r)
    if args.reference == "" then
      r:skip("no reference given (--arg reference=FILE)")
      return
    end
    local d = fabric.diff(M.ref, ctx.f)
    -- What discovery could not read looks missing: a node behind a route
    -- that never answered, a cable whose far end was never reached (its
    -- port is LinkUp, with nothing known behind it). Those are recorded
    -- as could not be read; a cable whose ports are down is missing.
    local unread = false
    for _, e in ipairs(ctx.f.errors) do unread = unread or e.unreadable end
    local function unexplored(x)
      if x.kind == "missing-node" then return unread end
      if x.kind ~= "missing-cable" and x.kind ~= "moved-cable" then return false end
      local o = x.object
      return o ~= nil and o.num ~= nil and o.phys_state == 5 and o.remote == nil
    end
    for _, x in ipairs(d) do
      local msg = string.format("[%s] %s: %s", x.severity, x.kind, x.msg)
      if unexplored(x) then r:unreadable(msg, x.object) else r:fail(msg, x.object) end
    end
    if #d == 0 then r:pass(string.format("%s: identical", args.reference)) end
  end)
end

return common.main(M, ...)
