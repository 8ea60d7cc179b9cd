-- counters.lua: the error counters of the ports ibqueryerrors reads
-- against thresholds (ibqueryerrors' threshold file format: Name=value
-- lines; default 0, a counter above its threshold fails), and optionally
-- how much they grow over an interval. The ports are ibqueryerrors': every
-- port of every switch, linked or not (port 0 too when it is an enhanced
-- port 0), and every port discovery reached on CAs and routers; the
-- counters are its twelve error counters and PortXmitWait.
--
--   ibscript run scripts/checks/counters.lua [--arg thresholds=FILE] [--arg interval=10]

local common = require "common"

local M = {
  description = "error counters within thresholds, and their deltas",
  categories = { "counters" },
  args = {
    thresholds = { default = "", help = "ibqueryerrors threshold file (Name=value per line); empty: every threshold 0",
      file = "read" },
    interval = { default = 0, help = "seconds between two sweeps for the counter deltas check; 0: not checked",
      min = 0, max = 86400 },
  },
}

-- the PortCounters error counters, in ibqueryerrors' order
M.error_counters = {
  "symbol_error_counter", "link_error_recovery_counter", "link_downed_counter",
  "port_rcv_errors", "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
  "port_xmit_discards", "port_xmit_constraint_errors", "port_rcv_constraint_errors",
  "local_link_integrity_errors", "excessive_buffer_overrun_errors", "vl15_dropped",
}
-- what the threshold check reads: ibqueryerrors also reports PortXmitWait
-- above its threshold (0 unless the file says otherwise). The deltas check
-- leaves it out: it grows with any congestion, which is no error.
M.threshold_counters = { "port_xmit_wait" }
for i, c in ipairs(M.error_counters) do table.insert(M.threshold_counters, i, c) end
-- the snake_case key of each counter diag.queryerrors names by IBA name
M.keys = {
  SymbolErrorCounter = "symbol_error_counter", LinkErrorRecoveryCounter = "link_error_recovery_counter",
  LinkDownedCounter = "link_downed_counter", PortRcvErrors = "port_rcv_errors",
  PortRcvRemotePhysicalErrors = "port_rcv_remote_physical_errors", PortRcvSwitchRelayErrors = "port_rcv_switch_relay_errors",
  PortXmitDiscards = "port_xmit_discards", PortXmitConstraintErrors = "port_xmit_constraint_errors",
  PortRcvConstraintErrors = "port_rcv_constraint_errors", LocalLinkIntegrityErrors = "local_link_integrity_errors",
  ExcessiveBufferOverrunErrors = "excessive_buffer_overrun_errors", VL15Dropped = "vl15_dropped",
  PortXmitWait = "port_xmit_wait",
}

-- ports(ctx): the ports ibqueryerrors checks (its print_node): ports 1 to
-- NumPorts of every node that discovery holds (a switch's all of them,
-- unused ones included; a CA's or router's those it reached), and a
-- switch's port 0 when it is an enhanced port 0; by node then port.
function M.ports(ctx)
  if ctx.counter_ports then return ctx.counter_ports end
  local out = {}
  for _, n in ipairs(ctx.f.nodes) do
    local first = (n.type == "Switch" and n.enhanced_port0) and 0 or 1
    for num = first, n.num_ports do
      local p = n.ports[num]
      if p then out[#out + 1] = p end
    end
  end
  ctx.counter_ports = out
  return out
end

-- setup reads the threshold file: a missing file or an unknown counter
-- name is a mistake of the run, not a failed check.
function M.setup(args)
  if args.thresholds == "" then M.th = plan.thresholds() return end
  local ok, th = pcall(plan.thresholds, args.thresholds)
  if not ok then error("--arg thresholds=" .. args.thresholds .. ": " .. tostring(th), 0) end
  M.th = th
end

function M.run(ctx)
  local args = ctx.args
  local th = M.th or plan.thresholds(args.thresholds ~= "" and args.thresholds or nil)

  plan.check("error counters within thresholds", "counters", function(r)
    -- ibqueryerrors' own reading (diag.queryerrors, the same code as
    -- `ibscript ibqueryerrors`): its ports, its AllPortSelect sums, its
    -- thresholds; a port it reports fails, every other port it read passes
    -- passes: a query that got no answer is asked again (up to 4 times
    -- in all, as discovery goes back for what it missed). On a discovery
    -- of every plane it reads that discovery's nodes (fabric=), every
    -- plane's, where ibqueryerrors discovers its SMI port's plane alone.
    -- On any other port it reads this run's discovery as well when that
    -- found no error: the same walk of the same fabric, so the same nodes
    -- in the same order as a discovery of its own (diag.queryerrors with
    -- and without fabric= gave the same nodes, summary and warnings on
    -- every bundled topology), without walking the fabric twice. A
    -- discovery with errors is walked again as ibqueryerrors walks it:
    -- a node GUID met twice is one node to libibnetdisc, where this
    -- run's discovery reports an inconsistency and stops there, and the
    -- routes that walk misses are reported below as ports not read.
    -- A node the SM gave no LID (a GUID of 0) is not asked at LID 0, as
    -- ibqueryerrors asks it: its ports are could-not-be-read ("has no
    -- LID: the SM did not configure it"), so the run does not pass.
    local own = ctx.planes > 0 or #ctx.f.errors == 0
    local q, missed = diag.queryerrors({ thresholds = args.thresholds ~= "" and args.thresholds or nil, passes = 4,
      skip_no_lid = true, fabric = own and ctx.f or nil })
    local nodes = {}
    for _, n in ipairs(ctx.f.nodes) do nodes[n.guid] = n end
    -- a query that got no answer is recorded as could not be read, one
    -- the PMA refused as a failure (r:fail tells them apart)
    for _, w in ipairs(q.warnings) do r:fail(w) end
    -- the ports behind routes its discovery missed were not read at all
    if missed then r:unreadable("ports not read: " .. missed) end
    for _, qn in ipairs(q.nodes) do
      local n = nodes[qn.guid]
      -- a switch's "port ALL" (the AllPortSelect sum) is no port: the
      -- ports behind it are read one by one and reported themselves
      for _, qp in ipairs(qn.ports) do if qp.port ~= 255 then
        local bad = {}
        for _, c in ipairs(qp.counters) do
          local key = M.keys[c.name]
          if key then bad[#bad + 1] = string.format("%s=%d (threshold %d)", key, c.value, th[key]) end
        end
        table.sort(bad)
        r:fail(table.concat(bad, " "), n and n.ports[qp.port])
      end end
    end
    -- ibqueryerrors counts a port whose counters could not be read as
    -- checked; it is no pass here (its warning above is what it is)
    for _ = 1, q.summary.ports_checked - q.summary.bad_ports - q.summary.ports_not_read do r:pass() end
  end)

  plan.check("error counter deltas", "counters", function(r)
    local interval = tonumber(args.interval) or 0
    if interval <= 0 then
      r:skip("no interval given (--arg interval=SECONDS)")
      return
    end
    -- a port whose PMA has no LID (a switch's at its port 0) is not
    -- asked, as above: could not be read
    local ports = {}
    for _, p in ipairs(M.ports(ctx)) do
      local lid = p.node.type == "Switch" and p.node.lid or p.lid
      if lid == 0 then
        r:unreadable("has no LID: the SM did not configure it", p)
      else
        ports[#ports + 1] = p
      end
    end
    local first = fabric.sweep("portcounters", ports, { fields = M.error_counters, nonzero = true })
    plan.sleep(interval)
    local second = fabric.sweep("portcounters", ports, { fields = M.error_counters, nonzero = true })
    for i, res in ipairs(second) do
      local before = first[i].value
      if res.err then
        r:fail(res.err, res.port) -- could not be read, or refused
      elseif first[i].err then
        r:fail(first[i].err, res.port)
      elseif before then
        local grew = {}
        for c, v in pairs(res.value) do
          local d = v - (before[c] or 0)
          if d > 0 then grew[#grew + 1] = string.format("%s +%d", c, d) end
        end
        table.sort(grew)
        if #grew == 0 then
          r:pass()
        else
          r:fail(string.format("in %gs: %s", interval, table.concat(grew, " ")), res.port)
        end
      end
    end
  end)
end

return common.main(M, ...)
