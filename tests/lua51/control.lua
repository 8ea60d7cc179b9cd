-- Lua 5.1 reference manual 2.4.4 (control structures) and 2.4.5 (for),
-- with gopher-lua issues 514 (generic for state) and 540 (constant if).

do -- numeric for
  local t = {}
  for i = 1, 3 do t[#t + 1] = i end
  eq(table.concat(t, ","), "1,2,3", "1, 3")
  t = {}
  for i = 3, 1, -1 do t[#t + 1] = i end
  eq(table.concat(t, ","), "3,2,1", "3, 1, -1")
  t = {}
  for i = 1, 0 do t[#t + 1] = i end
  eq(#t, 0, "empty range runs no iteration")
  t = {}
  for i = 1, 2, 0.5 do t[#t + 1] = i end
  eq(table.concat(t, ","), "1,1.5,2", "fractional step")
  t = {}
  for i = 0.1, 0.35, 0.1 do t[#t + 1] = string.format("%.1f", i) end
  eq(table.concat(t, ","), "0.1,0.2,0.3", "float accumulation")
  local n = 0
  for i = 1, 3 do i = i * 10; n = n + i end
  eq(n, 60, "assigning the loop variable does not change the loop")
  local limit, evals = 3, 0
  local function lim() evals = evals + 1; return limit end
  n = 0
  for i = 1, lim() do limit = 10; n = n + 1 end
  eq(n, 3, "limit evaluated once"); eq(evals, 1, "limit called once")
  local last
  for i = 1, 10 do last = i; if i == 4 then break end end
  eq(last, 4, "break")
  fails("for initial value must be a number", "for", function() for i = "x", 2 do end end)
  t = {}
  for i = -3, -1 do t[#t + 1] = i end
  eq(table.concat(t, ","), "-3,-2,-1", "negative range")
  n = 0
  for i = 2^52 - 2, 2^52 do n = n + 1 end
  eq(n, 3, "large bounds")
  local v = "outer"
  for v = 1, 1 do end
  eq(v, "outer", "the loop variable is local to the loop")
end
do -- generic for (issue 514: the state and control values are nil when not given)
  local log = {}
  local function iter(s, c)
    log[#log + 1] = tostring(s) .. "," .. tostring(c)
    if c == nil then return "v" end
    return nil
  end
  local function run()
    for k in iter do end
    for k in iter do end
    local x, y = 7, 8
    for k in iter do end
  end
  run()
  eq(table.concat(log, " | "), "nil,nil | nil,v | nil,nil | nil,v | nil,nil | nil,v", "iterator arguments across loops")
  local keys = {}
  for k, v in pairs({a = 1, b = 2, c = 3}) do keys[#keys + 1] = k .. v end
  table.sort(keys)
  eq(table.concat(keys, ","), "a1,b2,c3", "pairs")
  local seq = {}
  for i, v in ipairs({"x", "y", nil, "z"}) do seq[#seq + 1] = i .. v end
  eq(table.concat(seq, ","), "1x,2y", "ipairs stops at the first nil")
  local function range(n)
    return function(s, c) if c < n then return c + 1 end end, nil, 0
  end
  local sum = 0
  for i in range(4) do sum = sum + i end
  eq(sum, 10, "stateless iterator with a control value")
  local count = 0
  for k, v in next, {10, 20} do count = count + v end
  eq(count, 30, "next as the iterator")
end
do -- issue 540: a constant if with a local in its dead branch, inside a generic for
  local function f()
    for _, v in ipairs({1, 2}) do
      if false then local x = 1 end
      local y = v
    end
    return 1
  end
  same("f() returns 1", {1}, f())
  local function g()
    local t = {}
    for k, v in pairs({a = 1}) do
      if nil then local x end
      t[#t + 1] = k
    end
    return #t, "done"
  end
  same("g()", {1, "done"}, g())
  local function h()
    local out = {}
    for _, v in ipairs({1, 2, 3}) do
      if true then out[#out + 1] = v else local dead = v end
    end
    return table.concat(out, ",")
  end
  eq(h(), "1,2,3", "if true ... else local")
  local function k()
    local r
    if 1 then r = "number is true" elseif false then local z end
    if "" then r = r .. ", empty string is true" end
    if false then r = "no" elseif true then r = r .. ", elseif" end
    return r
  end
  eq(k(), "number is true, empty string is true, elseif", "constant conditions")
end
do -- while and repeat
  local i, n = 0, 0
  while i < 5 do i = i + 1; if i == 3 then break end; n = n + i end
  eq(n, 3, "while with break")
  local j = 10
  repeat j = j - 3 until j < 0
  eq(j, -2, "repeat")
  local k = 0
  while true do k = k + 1; if k > 100 then break end end
  eq(k, 101, "while true")
end
do -- and/or short circuit and values
  local calls = 0
  local function t() calls = calls + 1; return true end
  eq(false and t(), false, "false and x"); eq(nil or "d", "d", "nil or d"); eq(calls, 0, "no call")
  eq(1 and 2, 2, "1 and 2"); eq(false or nil, nil, "false or nil"); eq(nil and 1, nil, "nil and 1")
  eq(not nil, true, "not nil"); eq(not 0, false, "not 0 (0 is true)")
  local x = nil
  eq(x and x.field or "default", "default", "x and x.f or d")
end
return finish()
