--! topology: net.route-ring
-- Routing analytics as scripts see them: OpenSM-like min-hop routes on
-- the four-switch ring (the simulator's) and the same routes with a
-- planted fault.

function test_analyze_ring_routes(t)
  local a = diag.analyze{checks = {"routes", "fat-tree"}}
  if a.routes.count ~= 0 or a.routes.unreachable ~= 0 then
    t:fatal("routes: " .. a.routes.count .. " problems, " .. a.routes.unreachable .. " unreachable")
  end
  if a.routes.min_hops < 1 or a.routes.max_hops > 4 then
    t:fatal("hops " .. a.routes.min_hops .. ".." .. a.routes.max_hops)
  end
  -- A ring is no fat tree: its switches link within one level.
  if #a.fat_tree.problems == 0 then t:fatal("a ring passed the fat-tree check") end
end

function test_analyze_credit_loops_reported_as_data(t)
  local a = diag.analyze{checks = "credit-loops"}
  local c = a.credit_loops
  if c.sources == 0 or c.destinations == 0 then t:fatal("no routes followed") end
  -- Every loop is a closed list of channels: each arrives where the next
  -- one leaves.
  for _, l in ipairs(c.loops) do
    for i, ch in ipairs(l.channels) do
      local nx = l.channels[i % #l.channels + 1]
      if ch.remote_node.guid ~= nx.node.guid then
        t:fatal("loop not closed at channel " .. i)
      end
    end
  end
end

function test_analyze_load_has_no_tables(t)
  local ok, err = pcall(diag.analyze, {load = "no/such/file"})
  if ok then t:fatal("loading a missing file succeeded") end
end

function test_analyze_load_topology_file(t)
  local a = diag.analyze{load = "topologies/fattree-50.net", checks = {"fat-tree", "routes"}}
  if #a.fat_tree.levels ~= 2 then t:fatal("levels " .. #a.fat_tree.levels) end
  if #a.errors ~= 1 or not a.errors[1]:find("no linear forwarding tables", 1, true) then
    t:fatal("errors: " .. table.concat(a.errors, "; "))
  end
end
