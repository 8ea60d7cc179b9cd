-- Lua 5.1 reference manual 2.5.9 (function definitions: varargs), 5.1
-- (select, unpack) and 2.5.8 (function calls, tail calls).

do -- varargs
  local function count(...) return select("#", ...) end
  eq(count(), 0, "no arguments"); eq(count(nil), 1, "one nil"); eq(count(nil, nil), 2, "two nils")
  eq(count(1, nil, 3, nil), 4, "trailing nil counts")
  local function pass(...) return ... end
  same("pass on", {n = 3, 1, nil, 3}, pass(1, nil, 3))
  local function first(...) local a = ... ; return a end
  eq(first(7, 8), 7, "local a = ...")
  local function pack(...) return {...} end
  eq(#pack(1, 2, 3), 3, "{...}")
  local function middle(...) return (...) end
  same("(...) truncates", {n = 1, 5}, middle(5, 6))
  local function plus(...) return ..., "end" end
  same("... not last is one value", {n = 2, 1, "end"}, plus(1, 2))
  local function arg_table(...) return arg end
  local a = arg_table("x", nil)
  eq(type(a), "table", "5.1's compatibility arg table"); eq(a.n, 2, "arg.n"); eq(a[1], "x", "arg[1]")
end
do -- select
  same("select(2, ...)", {n = 2, "b", "c"}, select(2, "a", "b", "c"))
  same("select past the end", {n = 0}, select(4, "a", "b", "c"))
  same("select('#')", {3}, select("#", "a", nil, nil))
  fails("select(0)", "index out of range", select, 0, "a")
end
do -- unpack
  same("unpack", {1, 2, 3}, unpack({1, 2, 3}))
  same("unpack from i", {2, 3}, unpack({1, 2, 3}, 2))
  same("unpack i, j", {n = 3, 2, 3, nil}, unpack({1, 2, 3}, 2, 4))
  same("unpack of an empty range", {n = 0}, unpack({1, 2}, 3, 2))
  same("unpack with holes and an explicit end", {n = 3, 1, nil, 3}, unpack({1, nil, 3}, 1, 3))
end
do -- multiple results are adjusted
  local function two() return 1, 2 end
  local t = {two(), two()}
  eq(#t, 3, "{f(), f()}: only the last expands")
  t = {two(), (two())}
  eq(#t, 2, "{f(), (f())}")
  t = {(two())}
  eq(#t, 1, "{(f())}")
  local function args(...) return select("#", ...) end
  eq(args(two(), two()), 3, "f(g(), g())")
  eq(args(two(), nil), 2, "f(g(), nil)")
  local a, b, c = two()
  eq(c, nil, "local a, b, c = f() with two results")
end
do -- tail calls do not grow the stack
  local function loop(n) if n == 0 then return "done" end return loop(n - 1) end
  eq(loop(100000), "done", "100000 tail calls")
  local function even(n) if n == 0 then return true end return odd(n - 1) end
  function odd(n) if n == 0 then return false end return even(n - 1) end
  eq(even(50001), false, "mutual tail recursion")
  odd = nil
  local function multi() return 1, 2, 3 end
  local function tail() return multi() end
  same("a tail call returns every result", {1, 2, 3}, tail())
  local function notail() return (multi()) end
  same("a parenthesized call is not a tail call", {n = 1, 1}, notail())
  local depth = 0
  local function deep(n) depth = depth + 1; if n > 0 then deep(n - 1) end end
  deep(150)
  eq(depth, 151, "150 nested non-tail calls")
  depth = 0
  deep(5000)
  eq(depth, 5001, "5000 nested non-tail calls")
  local function forever(n) return 1 + forever(n + 1) end
  fails("unbounded recursion is a stack overflow", "overflow", forever, 1)
end
do -- methods
  local obj = {n = 0}
  function obj:add(k) self.n = self.n + k; return self end
  obj:add(1):add(2)
  eq(obj.n, 3, "method chaining")
  local s = "abc"
  eq(s:upper(), "ABC", "method on a string value")
end
return finish()
