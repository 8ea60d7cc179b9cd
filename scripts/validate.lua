-- validate.lua: check a fabric the way an engineer does after a cabling
-- change, a firmware upgrade or an SM failover: every check of
-- scripts/checks, on one discovery.
--
--   ibscript run scripts/validate.lua                          # the default fabric
--   ibscript run --fabric sim:FILE scripts/validate.lua --format json
--   ibscript run scripts/validate.lua --arg width=4X --arg thresholds=/etc/infiniband-diags/error_thresholds
--
-- Checks (scripts/checks/*.lua, each also runnable alone): links (ACTIVE,
-- width and speed, partners, expected values), identifiers (zero and
-- duplicate GUIDs and LIDs), subnet manager (one MASTER, priorities, ports
-- naming it), error counters (thresholds, deltas over --arg interval),
-- routing (LFTs reach every LID, no loops, hop counts), partitions, and
-- the topology against --arg reference=FILE when given. The report goes
-- to stdout (--format text|json|tap|junit); exit status 0 all passed, 1 a
-- check failed, 2 the run failed or a check could not read what it needed
-- (no answer after every try, answers that could not be verified: never
-- reported as the fabric's fault, docs/faults.md).

local modules = {}
for _, name in ipairs({ "links", "ids", "sm", "counters", "routing", "partitions", "topology" }) do
  modules[#modules + 1] = require(name)
end

local categories, args = { "discovery" }, {}
for _, m in ipairs(modules) do
  for _, c in ipairs(m.categories) do categories[#categories + 1] = c end
  for k, v in pairs(m.args) do
    if args[k] then error("validate.lua: argument " .. k .. " declared by two checks") end
    args[k] = v
  end
end

local a = plan.define {
  description = "fabric validation",
  categories = categories,
  args = args,
}
for _, m in ipairs(modules) do
  if m.setup then m.setup(a) end -- files the arguments name, read before discovery
end
local ctx = require("common").context(a)
for _, m in ipairs(modules) do m.run(ctx) end
