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

function test_format_topology_exports(t)
  local f = fabric.discover()
  local conf = fabric.format(f, "slurm-conf")
  if not conf:find("SwitchName=Switch1 Nodes=Hca%[1,3%]\n") or not conf:find("SwitchName=ibtop1 Switches=Switch%[1%-2%]\n") then t:fatal(conf) end
  local yaml = fabric.format(f, "slurm-yaml")
  if not yaml:find("%- topology: infiniband\n  cluster_default: true\n  tree:") then t:fatal(yaml) end
  local dot = fabric.format(f, "dot")
  if not dot:find('^graph "infiniband" {') or not dot:find('"S%-0000000000200000" %-%- "S%-0000000000200001" %[taillabel="3", headlabel="3", label="4X SDR"%]') then t:fatal(dot) end
  local json = fabric.format(f, "json")
  if not json:find('"schema": "ibscript.topology.graph.v1"', 1, true) then t:fatal(json) end
  expect_error('bad argument #2 to fabric.format \\(format: "ibnetdiscover", "slurm-conf", "slurm-yaml", "dot" or "json" expected, got "svg"\\)', fabric.format, f, "svg")
  expect_error('fabric.format: unknown option "names"', fabric.format, f, "dot", { names = "x" })
end

function test_unknown_option(t)
  expect_error('fabric.discover: unknown option "max_hop"', fabric.discover, { max_hop = 3 })
end

function test_bit(t)
  if bit.band(0x7, 0x2) ~= 2 or bit.bor(1, 4) ~= 5 or bit.lshift(1, 4) ~= 16 then t:fatal("bit ops") end
end

-- fabric.dr_path: current rdma-core's build_dr_path_to_lid; the route it
-- builds through the LFTs reaches the port of every LID.
function test_dr_path_reaches_every_lid(t)
  local reached = 0
  for _, n in ipairs(fabric.discover().nodes) do
    for num, p in pairs(n.ports) do
      if p.lid ~= 0 and (n.type ~= "Switch" or num == 0) then
        local route = fabric.dr_path(p.lid)
        if not route:match("^dr:0[,%d]*$") then t:fatal("route " .. route) end
        local ni = smp.nodeinfo(route)
        if ni.port_guid ~= p.guid then
          t:fatal(route .. " reaches " .. ni.port_guid .. ", want " .. p.guid)
        end
        reached = reached + 1
      end
    end
  end
  if reached ~= 6 then t:fatal(reached .. " LIDs reached, want 6") end
  expect_error('fabric.dr_path: lid 99: Bad forwarding table entry found at: node "Switch1" lid entry 99 is -1 \\(top 6\\)', fabric.dr_path, 99)
  expect_error('bad argument #1 to fabric.dr_path \\(lid: 1..65535 expected, got 0\\)', fabric.dr_path, 0)
  expect_error('bad argument #2 to fabric.dr_path \\(from: a directed route', fabric.dr_path, 4, "lid:3")
end
