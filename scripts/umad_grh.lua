-- umad_grh.lua: a MAD with a Global Route Header from one local port to an
-- agent on another, and its answer: the request and the answer each carry
-- a GRH, and each side sees the other's GID. On RoCE (Soft-RoCE, real
-- RoCE NICs) every MAD needs one; on InfiniBand it is global routing.
--
--   ibscript run --fabric sim:tests/topologies/net.ipoib scripts/umad_grh.lua
--   ibscript run --fabric umad: scripts/umad_grh.lua --arg from=rxe0 --arg to=rxe1
--
-- The destination GID is the receiving port's first GID that is neither
-- link-local (fe80::) nor IPv4-mapped (::ffff:a.b.c.d): on Linux an answer
-- sent from an IPv4-mapped RoCE GID is not matched to its request. Where
-- the port has no other (InfiniBand), its GID index 0. --arg gid= picks one.

local a = plan.define {
  description = "umad: a MAD with a GRH to an agent on another port, and its answer",
  categories = { "umad" },
  args = {
    from = { default = "", help = "CA sending the request (default: the first CA)" },
    to = { default = "", help = "CA whose agent answers (default: the second CA)" },
    gid = { default = "", help = "destination GID (default: the receiving port's, see above)" },
    timeout = { default = 2000, help = "ms per try" },
  },
}

local CLASS, VERSION, GET, GETRESP, ATTR = 0x09, 1, 0x01, 0x81, 0xff01 -- vendor class range 1

-- mad builds a 256-byte MAD: common header, then text in the data.
local function mad(method, tid, text)
  local hdr = string.char(1, CLASS, VERSION, method, 0, 0, 0, 0)
    .. string.char(0, 0, 0, 0, math.floor(tid / 2^24) % 256, math.floor(tid / 2^16) % 256, math.floor(tid / 2^8) % 256, tid % 256)
    .. string.char(math.floor(ATTR / 256), ATTR % 256, 0, 0, 0, 0, 0, 0)
  local body = hdr .. text
  return body .. string.rep("\0", 256 - #body)
end

local function cas()
  local out = {}
  for _, n in ipairs(umad.get_cas_names()) do
    if umad.get_port(n).node_type == 1 then out[#out + 1] = n end
  end
  return out
end

local from, to = a.from, a.to
local pa, pb, ia, ib, dgid, agent_a, agent_b

plan.check("ports", "umad", function(r)
  local list = cas()
  if from == "" then from = list[1] end
  if to == "" then to = list[2] end
  if not from or not to then r:fail(string.format("%d CAs; need two", #list)) return end
  pa, pb = umad.open_port(from), umad.open_port(to)
  ia, ib = pa:info(), pb:info()
  dgid = a.gid
  if dgid == "" then
    for i = 0, 255 do
      local g = ib.gids[i]
      if g and not g:match("^fe80:") and not g:match("^::ffff:") then dgid = g break end
    end
    if dgid == "" then dgid = ib.gids[0] end
  end
  r:pass(string.format("%s (%s) -> %s (%s) at GID %s", from, ia.link_layer, to, ib.link_layer, dgid))
end)

local function exchange(r)
  agent_a = umad.register_agent(pa, CLASS, VERSION)
  agent_b = umad.register_agent(pb, CLASS, VERSION, 0, { GET })
  local tid = 0x4752
  umad.send(pa, agent_a, mad(GET, tid, "ping over a GRH"), a.timeout, 2,
    { lid = ib.base_lid, qpn = 1, gid = dgid, traffic_class = 0, flow_label = 0 })

  local req, ag, status, from_a = umad.recv(pb, a.timeout * 3)
  if not req then r:fail(to .. ": no request") return end
  if ag ~= agent_b or status ~= 0 then r:fail(string.format("request to agent %d status %d", ag, status)) return end
  if not from_a.grh then r:fail("the request arrived without a GRH") return end
  local own_a = false
  for _, g in pairs(ia.gids) do if g == from_a.gid then own_a = true end end
  if not own_a then r:fail("the request's source GID " .. from_a.gid .. " is none of " .. from .. "'s") end
  if ib.gids[from_a.gid_index] ~= dgid then
    r:fail(string.format("gid_index %d of the request is %s, want the GID it was sent to, %s", from_a.gid_index, tostring(ib.gids[from_a.gid_index]), dgid))
  end
  if req:sub(25, 24 + 15) ~= "ping over a GRH" then r:fail("request data " .. string.format("%q", req:sub(25, 40))) end

  -- The answer goes back on the request's own address: its GRH included.
  local resp = req:sub(1, 3) .. string.char(GETRESP) .. req:sub(5, 24) .. "pong over a GRH" .. req:sub(40)
  umad.send(pb, agent_b, resp, 0, 0,
    { lid = from_a.lid, qpn = from_a.qpn, gid = from_a.gid, gid_index = from_a.gid_index })

  local ans, ag2, st2, from_b = umad.recv(pa, a.timeout * 4) -- 3 tries, then the timeout record
  if not ans then r:fail(from .. ": no answer") return end
  if ag2 ~= agent_a then r:fail("answer to agent " .. ag2) end
  if st2 ~= 0 then r:fail(string.format("the request timed out (status %d)", st2)) return end
  if not from_b.grh then r:fail("the answer arrived without a GRH") return end
  if from_b.gid ~= dgid then r:fail("the answer's source GID " .. from_b.gid .. ", want " .. dgid) end
  if ans:sub(25, 24 + 15) ~= "pong over a GRH" then r:fail("answer data " .. string.format("%q", ans:sub(25, 40))) end
  r:pass(string.format("answered from %s, hop limit %d", from_b.gid, from_b.hop_limit))
end

plan.check("GRH request and answer", "umad", function(r)
  local ok, err = pcall(exchange, r)
  pa:close()
  pb:close()
  if not ok then error(err, 0) end
end)
