-- ids.lua: no zero and no duplicate node or port GUIDs, no two ports
-- sharing a LID, no ACTIVE endport without a LID. On a planarized fabric
-- (every plane discovered) a planarized CA's plane ports share one port
-- GUID, which is no duplicate; all planes share one LID space, so a LID
-- held twice is one whether within a plane or across planes.
--
--   ibscript run scripts/checks/ids.lua

local common = require "common"

local M = {
  description = "zero and duplicate GUIDs and LIDs",
  categories = { "ids" },
  args = {},
}

local zero = "0x0000000000000000"

function M.run(ctx)
  local f, where = ctx.f, common.where

  plan.check("no zero GUIDs", "ids", function(r)
    for _, n in ipairs(f.nodes) do
      if n.guid == zero then r:fail("node GUID is zero", n) else r:pass() end
      for num, p in pairs(n.ports) do
        if (n.type ~= "Switch" or num == 0) and p.guid == zero then r:fail("port GUID is zero", p) end
      end
    end
  end)

  plan.check("unique GUIDs", "ids", function(r)
    local node_guids, port_guids = {}, {}
    for _, n in ipairs(f.nodes) do
      if n.guid ~= zero then
        if node_guids[n.guid] then
          r:fail(string.format("node GUID %s on %q and %q", n.guid, node_guids[n.guid].desc, n.desc), n)
        else
          r:pass()
        end
        node_guids[n.guid] = n
      end
      for num, p in pairs(n.ports) do
        if (n.type ~= "Switch" or num == 0) and p.guid ~= zero then
          local other = port_guids[p.guid]
          -- a planarized CA's plane ports share one port GUID by design
          -- (docs/planes.md); another node's port with it is a duplicate
          if other and other ~= p and not (n.planarized and other.node == n) then
            r:fail(string.format("port GUID %s on %s and %s", p.guid, where(other), where(p)), p)
          end
          port_guids[p.guid] = p
        end
      end
    end
  end)

  plan.check("unique LIDs", "ids", function(r)
    local lids = {}
    for _, n in ipairs(f.nodes) do
      for num, p in pairs(n.ports) do
        if n.type ~= "Switch" or num == 0 then
          if p.lid ~= 0 then
            if lids[p.lid] then
              r:fail(string.format("LID %d on %s and %s", p.lid, where(lids[p.lid]), where(p)), p)
            else
              r:pass()
            end
            lids[p.lid] = p
          elseif p.state == 4 then
            r:fail("ACTIVE with LID 0", p)
          end
        end
      end
    end
  end)
end

return common.main(M, ...)
