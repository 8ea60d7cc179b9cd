--! topology: fattree-2000.net
-- sa.get_table on a 2,000-node fat tree: one NodeRecord per node, streamed
-- over RMPP (about 1,100 segments).

function test_node_records_every_node(t)
  local f = fabric.discover()
  local recs = sa.get_table("NodeRecord")
  if #recs ~= #f.nodes then t:fatal(#recs .. " NodeRecords for " .. #f.nodes .. " nodes") end
  local seen = {}
  for _, r in ipairs(recs) do
    if seen[r.node_guid] then t:fatal("node twice: " .. r.node_guid) end
    seen[r.node_guid] = true
  end
  for _, n in ipairs(f.nodes) do
    if not seen[n.guid] then t:fatal("node without a record: " .. n.guid) end
  end
end
