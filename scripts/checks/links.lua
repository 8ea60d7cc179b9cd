-- links.lua: every cabled port is ACTIVE, both ends of a link run the
-- same width and speed, no less than the best both ends enable, and
-- (optionally) every link runs at an expected width and speed.
--
--   ibscript run scripts/checks/links.lua [--arg width=4X] [--arg speed=QDR]

local common = require "common"

local M = {
  description = "state, negotiated width and speed, expected width and speed",
  categories = { "links" },
  args = {
    width = { default = "", help = "expected active width of every link; empty: not checked",
      choices = { "1X", "2X", "4X", "8X", "12X" } },
    speed = { default = "", help = "expected active speed of every link; empty: not checked",
      choices = { "SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR", "XDR" } },
  },
}

function M.run(ctx)
  local f, args = ctx.f, ctx.args
  local link_name, link_text = common.link_name, common.link_text

  plan.check("links ACTIVE", "links", function(r)
    for _, l in ipairs(f.links) do
      local a, b = l.a, l.b
      if a.state == 4 and b.state == 4 then
        r:pass()
      else
        r:fail(string.format("%s: state %s/%s", link_name(a, b),
          smp.state_name(a.state), smp.state_name(b.state)), a)
      end
    end
  end)

  -- A link is healthy when both ends run the same width and speed and
  -- that is no less than the best both ends enable. Partners need not
  -- enable the same sets (a switch port enabling 1X|4X cabled to a
  -- router enabling 4X is what ibsim and OpenSM bring up, and what
  -- vendors ship): ibdiagnet and OpenSM judge the active values, so this
  -- check does too. A link running above what one end enables (ibsim's
  -- topologies give the active values as written) is not degraded.
  local rank_speed = function(speed, ext)
    if ext ~= 0 then return 16 + ext end -- FDR and faster: the extended field
    return speed
  end
  plan.check("link width and speed", "links", function(r)
    for _, l in ipairs(f.links) do
      local a, b = l.a, l.b
      local want_w = common.best_width(bit.band(a.width_enabled, b.width_enabled))
      local want_s = common.best(bit.band(a.speed_enabled, b.speed_enabled))
      local want_e = common.best(bit.band(a.speed_ext_enabled, b.speed_ext_enabled))
      local same = a.width_active == b.width_active and a.speed_active == b.speed_active
        and a.speed_ext_active == b.speed_ext_active
      local below = (common.width_rank[a.width_active] or 0) < (common.width_rank[want_w] or 0)
        or rank_speed(a.speed_active, a.speed_ext_active) < rank_speed(want_s, want_e)
      if same and not below then
        r:pass()
      else
        r:fail(string.format("%s: active %s / %s, both ends enable %s", link_name(a, b),
          link_text(a.width_active, a.speed_active, a.speed_ext_active),
          link_text(b.width_active, b.speed_active, b.speed_ext_active),
          link_text(want_w, want_s, want_e)), a)
      end
    end
  end)

  plan.check("expected width and speed", "links", function(r)
    local want_w, want_s = string.upper(args.width or ""), string.upper(args.speed or "")
    if want_w == "" and want_s == "" then
      r:skip("no expected width or speed given (--arg width=4X --arg speed=HDR)")
      return
    end
    for _, l in ipairs(f.links) do
      local bad = {}
      for _, p in ipairs({ l.a, l.b }) do
        local w = smp.width_name(p.width_active)
        local s = smp.speed_name(p.speed_active, p.speed_ext_active)
        if (want_w ~= "" and w ~= want_w) or (want_s ~= "" and s ~= want_s) then
          bad[#bad + 1] = string.format("%s at %s %s", common.where(p), w, s)
        end
      end
      if #bad == 0 then
        r:pass()
      else
        r:fail(string.format("%s: %s, want %s", link_name(l.a, l.b), table.concat(bad, ", "),
          (want_w .. " " .. want_s):gsub("^ +", ""):gsub(" +$", "")), l.a)
      end
    end
  end)
end

return common.main(M, ...)
