-- Lua 5.1 reference manual 2.6 (Visibility rules), 2.5.9 (closures), and
-- gopher-lua issue 448 (an error under pcall closed the caller's upvalues).

do -- issue 448, as the issue reports it
  local x = 0
  local function f(fn) x = x + 1; pcall(fn, "e") end
  f(error); f(error); f(error)
  eq(x, 3, "upvalue written around pcall(error)")
end
do -- issue 448, upstream's own shape
  local a
  local function use_a() return a("test") end
  pcall(function() error("an error") end)
  a = function(p) return p .. "!" end
  eq(use_a(), "test!", "local assigned after pcall is seen by a closure")
end
do -- the same with a Go function raising inside pcall
  local n = 0
  local function bump() n = n + 1 end
  bump(); pcall(string.rep); bump(); pcall(string.rep, {}); bump()
  eq(n, 3, "upvalue written around pcall(string.rep)")
  pcall(setmetatable, 1, 2); bump()
  eq(n, 4, "after pcall(setmetatable, 1, 2)")
end
do -- xpcall with a handler
  local n = 0
  local function bump() n = n + 1 end
  for i = 1, 3 do
    bump()
    xpcall(function() error("x") end, function(e) return e end)
  end
  eq(n, 3, "upvalue written around xpcall")
end
do -- an error from deep inside nested calls, caught by an outer pcall
  local depth, seen = 0, 0
  local function dive(k)
    depth = depth + 1
    if k == 0 then error("bottom") end
    return dive(k - 1) + 0
  end
  local function outer()
    local ok = pcall(dive, 5)
    seen = seen + 1
    return ok
  end
  eq(outer(), false, "pcall(dive) fails"); eq(depth, 6, "depth counted"); eq(seen, 1, "seen")
  outer()
  eq(depth, 12, "depth after second dive"); eq(seen, 2, "seen twice")
end
do -- closures made inside a function that fails keep their own variables
  local saved
  pcall(function()
    local v = "inner"
    saved = function() return v end
    local w = "clobber"
    error(w)
  end)
  local a, b, c = "p", "q", "r"
  eq(saved(), "inner", "closure of a failed function keeps its upvalue")
  eq(a .. b .. c, "pqr", "locals after it are intact")
end
do -- a loop's closures each capture the iteration's own variable
  local fs = {}
  for i = 1, 3 do fs[i] = function() return i end end
  eq(fs[1]() + fs[2]() * 10 + fs[3]() * 100, 321, "numeric for: fresh i per iteration")
  local gs = {}
  for k, v in ipairs({"a", "b"}) do gs[k] = function() return v end end
  eq(gs[1]() .. gs[2](), "ab", "generic for: fresh v per iteration")
  local hs = {}
  local j = 1
  while j <= 3 do
    local jj = j
    hs[j] = function() jj = jj + 10; return jj end
    j = j + 1
  end
  eq(hs[1](), 11, "while: own local"); eq(hs[1](), 21, "while: state kept"); eq(hs[2](), 12, "while: another local")
end
do -- closures sharing one variable
  local function counter()
    local c = 0
    return function() c = c + 1; return c end, function() return c end
  end
  local inc, get = counter()
  inc(); inc()
  eq(get(), 2, "two closures share c")
  local inc2, get2 = counter()
  inc2()
  eq(get2(), 1, "a second counter is independent"); eq(get(), 2, "first untouched")
end
do -- repeat's condition sees the body's locals
  local i = 0
  repeat local done = i >= 3; i = i + 1 until done
  eq(i, 4, "repeat ... until sees body local")
end
do -- shadowing
  local x = 1
  do local x = x + 1; eq(x, 2, "inner x") end
  eq(x, 1, "outer x")
  local function f(x) return x end
  eq(f(5), 5, "parameter shadows")
end
do -- local function can recurse; local f = function cannot see itself
  local function fact(n) if n <= 1 then return 1 end return n * fact(n - 1) end
  eq(fact(10), 3628800, "local function recursion")
  local g = function() return g end
  eq(g(), nil, "local g = function sees global g")
end
do -- upvalues survive the frame that created them
  local function make()
    local t = {}
    for i = 1, 3 do
      local v = i * i
      t[i] = function(d) v = v + d; return v end
    end
    return t
  end
  local t = make()
  eq(t[2](1), 5, "closure 2"); eq(t[2](1), 6, "closure 2 again"); eq(t[3](0), 9, "closure 3")
end
do -- plan.check-like use: a counter updated by checks that raise
  local n = 0
  local function count() n = n + 1 end
  local function check(fn) count(); local ok = pcall(fn); return ok end
  check(function() error("one") end)
  check(function() error({}) end)
  check(function() local z = nil; return z.field end)
  count()
  eq(n, 4, "counter through failing checks")
end
return finish()
