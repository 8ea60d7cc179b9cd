-- common.lua: what the checks in scripts/checks share: running a check
-- module alone, the discovered fabric, and naming ports and links.
--
-- A check module is a table {description=, categories={...}, args={...},
-- setup=function(args), run=function(ctx)} returned by its file. setup
-- (optional) reads what the arguments name (files) before the fabric is
-- discovered: a mistake there is an error of the run (exit 2), not a
-- failed check. Run as the main script
-- (ibscript run scripts/checks/links.lua) it defines a plan of its own;
-- required (validate.lua) it only hands the table over.

local M = {}

-- main(mod, ...) runs mod as a plan when its file is the main script
-- (require passes the module name in ..., the runner passes nothing).
function M.main(mod, ...)
  if select("#", ...) > 0 then return mod end
  local cats = { "discovery" }
  for _, c in ipairs(mod.categories) do cats[#cats + 1] = c end
  local args = plan.define { description = mod.description, categories = cats, args = mod.args }
  if mod.setup then mod.setup(args) end
  mod.run(M.context(args))
  return mod
end

-- context(args) discovers the fabric once and records the discovery
-- check; checks share what it caches (ctx.endports, ctx.cabled). With a
-- reference topology (--arg reference=FILE), a route that fails names
-- what the reference has behind it. From a planarized CA's port the
-- discovery walks every plane (fabric.discover{planes=true}, merged by
-- GUID; docs/planes.md) and ctx.planes is the number of planes found (0 on
-- any other port, where the discovery is the plain one).
function M.context(args)
  local ref = args and args.reference
  local opts = { planes = true }
  if type(ref) == "string" and ref ~= "" then opts.reference = ref end
  local f = fabric.discover(opts)
  local planes = M.planes(f)
  plan.check("discovery", "discovery", function(r)
    for _, e in ipairs(f.errors) do r:fail(e.path .. ": " .. e.err) end
    if planes > 0 then
      r:pass(string.format("%d nodes, %d links, %d planes", #f.nodes, #f.links, planes))
    else
      r:pass(string.format("%d nodes, %d links", #f.nodes, #f.links))
    end
  end)
  return { f = f, args = args, planes = planes }
end

-- planes(f): the highest plane number of f's ports, 0 when none has one
-- (a discovery that is not of a planarized port).
function M.planes(f)
  local top = 0
  for _, n in ipairs(f.nodes) do
    for _, p in pairs(n.ports) do
      if p.plane and p.plane > top then top = p.plane end
    end
  end
  return top
end

-- endports: the ports that hold a node's LID (a switch's port 0, every
-- CA port), with a LID.
function M.endports(ctx)
  if ctx.endports then return ctx.endports end
  local out = {}
  for _, n in ipairs(ctx.f.nodes) do
    for num, p in pairs(n.ports) do
      if (n.type == "Switch" and num == 0) or (n.type ~= "Switch" and num > 0) then
        if p.lid ~= 0 then out[#out + 1] = p end
      end
    end
  end
  table.sort(out, function(a, b) return a.lid < b.lid end)
  ctx.endports = out
  return out
end

-- cabled: both ends of every link.
function M.cabled(ctx)
  if ctx.cabled then return ctx.cabled end
  local out = {}
  for _, l in ipairs(ctx.f.links) do
    out[#out + 1] = l.a
    out[#out + 1] = l.b
  end
  ctx.cabled = out
  return out
end

-- where(p) names a port, and its plane when the discovery knows it
function M.where(p)
  if p.plane then return string.format("%s port %d (plane %d)", p.node.desc, p.num, p.plane) end
  return string.format("%s port %d", p.node.desc, p.num)
end

function M.link_name(a, b)
  return M.where(a) .. " <-> " .. M.where(b)
end

-- highest bit set in mask (the best of what it enables), 0 for none
local best_cache = {}
function M.best(mask)
  local c = best_cache[mask + 1]
  if c then return c end
  local b, bitv = 0, 1
  while bitv <= mask do
    if bit.band(mask, bitv) ~= 0 then b = bitv end
    bitv = bitv * 2
  end
  best_cache[mask + 1] = b
  return b
end

-- width masks order 1x(1) 2x(16) 4x(2) 8x(4) 12x(8): 2x sits between 1x and 4x
M.width_rank = { [1] = 1, [16] = 2, [2] = 3, [4] = 4, [8] = 5 }
local bw_cache = {}
function M.best_width(mask)
  local c = bw_cache[mask + 1]
  if c then return c end
  local b, rank = 0, 0
  for w, r in pairs(M.width_rank) do
    if bit.band(mask, w) ~= 0 and r > rank then b, rank = w, r end
  end
  bw_cache[mask + 1] = b
  return b
end

function M.link_text(width, speed, ext)
  return smp.width_name(width) .. " " .. smp.speed_name(speed, ext)
end

return M
