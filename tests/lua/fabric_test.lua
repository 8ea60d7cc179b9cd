--! topology: net.2sw2path4hca
-- Discovery as scripts see it.

function test_discover_counts(t)
  local f = fabric.discover()
  if #f.nodes ~= 6 then t:fatal("nodes " .. #f.nodes) end
  -- 4 HCA links and 2 parallel inter-switch links
  if #f.links ~= 6 then t:fatal("links " .. #f.links) end
  if #f.errors ~= 0 then t:fatal("errors: " .. f.errors[1].err) end
end

function test_links_reference_both_ends(t)
  local f = fabric.discover()
  for _, l in ipairs(f.links) do
    if l.a.remote ~= l.b or l.b.remote ~= l.a then
      t:fatal("link ends do not point at each other: " .. tostring(l.a) .. " / " .. tostring(l.b))
    end
    if l.a.node.ports[l.a.num] ~= l.a then t:fatal("port not reachable from its node") end
  end
end

function test_nodes_by_type(t)
  local switches, cas = 0, 0
  for _, n in ipairs(fabric.discover().nodes) do
    if n.type == "Switch" then switches = switches + 1 else cas = cas + 1 end
    if not n.guid:match("^0x%x+$") or #n.guid ~= 18 then t:fatal("guid " .. n.guid) end
  end
  if switches ~= 2 or cas ~= 4 then t:fatal(switches .. " switches " .. cas .. " CAs") end
end

function test_format_ibnetdiscover(t)
  local text = fabric.format(fabric.discover())
  if not text:find('Switch\t8 "S%-0000000000200000"') then t:fatal(text) end
end

function test_unknown_option(t)
  expect_error('fabric.discover: unknown option "max_hop"', fabric.discover, { max_hop = 3 })
end

function test_bit(t)
  if bit.band(0x7, 0x2) ~= 2 or bit.bor(1, 4) ~= 5 or bit.lshift(1, 4) ~= 16 then t:fatal("bit ops") end
end
