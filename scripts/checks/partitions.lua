-- partitions.lua: the P_Key tables of link partners hold the same
-- partitions (membership bits aside: a switch port is usually a full
-- member where the host is limited).
--
--   ibscript run scripts/checks/partitions.lua

local common = require "common"

local M = {
  description = "P_Key tables consistent between link partners",
  categories = { "partitions" },
  args = {},
}

-- (set keys are strings: gopher-lua fills the array part up to a large
-- integer key with nils, which makes a set of P_Keys cost 32k slots)
local function partitions(keys)
  local set, list = {}, {}
  for _, k in ipairs(keys) do
    local p = bit.band(k, 0x7fff)
    local sk = tostring(p)
    if p ~= 0 and not set[sk] then
      set[sk] = true
      list[#list + 1] = p
    end
  end
  table.sort(list)
  local s = {}
  for _, p in ipairs(list) do s[#s + 1] = string.format("0x%04x", p) end
  return table.concat(s, ","), set
end

function M.run(ctx)
  plan.check("P_Keys match between partners", "partitions", function(r)
    local ports = common.cabled(ctx)
    local res = fabric.sweep("pkeys", ports)
    for i = 1, #res, 2 do
      local a, b = res[i], res[i + 1]
      if a.err then r:fail(a.err, a.port)
      elseif b.err then r:fail(b.err, b.port)
      elseif #a.value == 1 and #b.value == 1 and bit.band(a.value[1], 0x7fff) == bit.band(b.value[1], 0x7fff) then
        r:pass() -- the common case, one partition on both ends
      else
        local sa, sb = partitions(a.value), partitions(b.value)
        if sa == sb then
          r:pass()
        else
          r:fail(string.format("%s: partitions {%s} / {%s}", common.link_name(a.port, b.port), sa, sb), a.port)
        end
      end
    end
  end)
end

return common.main(M, ...)
