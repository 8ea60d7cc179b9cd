--! topology: fattree-xdr-4planes.net
-- A planarized XDR fat tree (docs/planes.md): the SMI/GSI pairs of the
-- simulator's planarized CAs, discovery from a plane port, and the planes
-- a loaded topology file carries.

function test_pairs(t)
  local pairs = umad.get_smi_gsi_pairs()
  if #pairs ~= 8 then t:fatal(#pairs .. " pairs, want 8 (one per host)") end
  for _, p in ipairs(pairs) do
    if p.gsi_name ~= p.smi_name .. ":gsi" then
      t:fatal("pair " .. p.smi_name .. "/" .. p.gsi_name .. ": want the host's GSI device")
    end
  end
  local p = umad.get_smi_gsi_pair_by_ca_name("h001-02:gsi")
  if p.smi_name ~= "h001-02" or p.smi_preferred_port ~= 1 or p.gsi_preferred_port ~= 1 then
    t:fatal("pair of h001-02's GSI device: " .. p.smi_name .. "/" .. p.smi_preferred_port)
  end
end

function test_discover_sees_one_plane(t)
  local f = fabric.discover()
  if #f.nodes ~= 12 or #f.errors ~= 0 then t:fatal(#f.nodes .. " nodes, " .. #f.errors .. " errors: want plane 1's 12") end
  for _, n in ipairs(f.nodes) do
    if n.type == "CA" and (n.num_ports ~= 4 or not n.ports[1] or n.ports[2] or n.planarized) then
      t:fatal(tostring(n) .. ": a 4-port CA seen by its port 1 alone, not known planarized")
    end
    if n.type == "Switch" and not n.desc:match("^p1%-") then t:fatal(tostring(n) .. " is not plane 1's") end
  end
end

function test_load_carries_planes(t)
  local f = fabric.load("topologies/fattree-xdr-4planes.net")
  local seen = 0
  for _, n in ipairs(f.nodes) do
    for num, p in pairs(n.ports) do
      local want = num
      if n.type == "Switch" then want = tonumber(n.desc:sub(2, 2)) end
      if p.plane ~= want then t:fatal(tostring(p) .. " plane " .. tostring(p.plane) .. ", want " .. want) end
      seen = seen + 1
    end
    if (n.type == "CA") ~= (n.planarized == true) then t:fatal(tostring(n) .. " planarized " .. tostring(n.planarized)) end
  end
  -- hosts 8 x 4 ports; per plane 2 leaves of 7 ports (0..6), 2 spines of 3
  if seen ~= 8 * 4 + 4 * (2 * 7 + 2 * 3) then t:fatal(seen .. " ports") end
end
