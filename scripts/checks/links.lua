-- links.lua: every cabled port is ACTIVE at the best width and speed both
-- ends enable, link partners enable the same widths and speeds, and
-- (optionally) every link runs at an expected width and speed.
--
--   ibscript run scripts/checks/links.lua [--arg width=4X] [--arg speed=QDR]

local common = require "common"

local M = {
  description = "links: state, negotiated width and speed, partners' enabled sets",
  categories = { "links" },
  args = {
    width = { default = "", help = "expected active width of every link; empty: not checked",
      choices = { "1X", "2X", "4X", "8X", "12X" } },
    speed = { default = "", help = "expected active speed of every link; empty: not checked",
      choices = { "SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR" } },
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

  plan.check("link width and speed", "links", function(r)
    for _, l in ipairs(f.links) do
      local a, b = l.a, l.b
      local want_w = common.best_width(bit.band(a.width_enabled, b.width_enabled))
      local want_s = common.best(bit.band(a.speed_enabled, b.speed_enabled))
      local want_e = common.best(bit.band(a.speed_ext_enabled, b.speed_ext_enabled))
      local ok = true
      for _, p in ipairs({ a, b }) do
        if p.width_active ~= want_w or p.speed_active ~= want_s or p.speed_ext_active ~= want_e then ok = false end
      end
      if ok then
        r:pass()
      else
        r:fail(string.format("%s: active %s / %s, both ends enable %s", link_name(a, b),
          link_text(a.width_active, a.speed_active, a.speed_ext_active),
          link_text(b.width_active, b.speed_active, b.speed_ext_active),
          link_text(want_w, want_s, want_e)), a)
      end
    end
  end)

  plan.check("partners enable the same", "links", function(r)
    for _, l in ipairs(f.links) do
      local a, b = l.a, l.b
      if a.width_enabled == b.width_enabled and a.speed_enabled == b.speed_enabled
          and a.speed_ext_enabled == b.speed_ext_enabled then
        r:pass()
      else
        r:fail(string.format(
          "%s: width enabled 0x%x / 0x%x, speed enabled 0x%x / 0x%x, ext speed enabled 0x%x / 0x%x",
          link_name(a, b), a.width_enabled, b.width_enabled, a.speed_enabled, b.speed_enabled,
          a.speed_ext_enabled, b.speed_ext_enabled), a)
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
