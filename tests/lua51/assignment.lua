-- Lua 5.1 reference manual 2.4.3 (Assignment) and 2.5 (evaluation), with
-- every shape of gopher-lua issues 158, 216, 280, 315 and 440.

-- "In a multiple assignment, Lua first evaluates all values and only then
-- executes the assignments."
do
  local a, b = 1, 2
  a, b = b, a
  eq(a, 2, "swap a"); eq(b, 1, "swap b")
end
do -- issue 440
  local a, b = 0, 0
  a, b = a + 1, a + b
  eq(a, 1, "a, b = a + 1, a + b: a"); eq(b, 0, "a, b = a + 1, a + b: b")
end
do -- three-way rotation
  local x, y, z = 1, 2, 3
  x, y, z = y, z, x
  eq(x * 100 + y * 10 + z, 231, "rotate x, y, z")
end
do -- globals too
  ga, gb = "a", "b"
  ga, gb = gb, ga
  eq(ga .. gb, "ba", "swap globals")
  ga, gb = nil, nil
end
do -- a local and a global
  local l = 1
  gv = 2
  l, gv = gv, l
  eq(l, 2, "swap local/global: l"); eq(gv, 1, "swap local/global: gv")
  gv = nil
end
do -- upvalues
  local u, v = "u", "v"
  local function swap() u, v = v, u end
  swap()
  eq(u .. v, "vu", "swap upvalues")
end
do -- the manual's example: i, a[i] = i+1, 20 sets a[3]
  local i = 3
  local a = {}
  i, a[i] = i + 1, 20
  eq(i, 4, "manual i"); eq(a[3], 20, "manual a[3]"); eq(a[4], nil, "manual a[4]")
end
do -- issue 158: the index is evaluated before the assignment
  local i = 1
  local a = {}
  a[i], i = 20, 2
  eq(a[1], 20, "a[i], i = 20, 2: a[1]"); eq(a[2], nil, "a[i], i = 20, 2: a[2]"); eq(i, 2, "i")
end
do -- issue 315
  local a = {}
  local d = "e"
  local f = 1
  f, a.d = f, d
  eq(f, 1, "f, a.d = f, d: f"); eq(a.d, "e", "f, a.d = f, d: a.d")
end
do -- table element swap
  local t = {1, 2}
  t[1], t[2] = t[2], t[1]
  eq(t[1] * 10 + t[2], 21, "swap table elements")
  local a = {1, 2}
  a[2], a[1] = a[1], a[2]
  eq(a[1] * 10 + a[2], 21, "swap table elements reversed")
end
do -- the table itself is evaluated before the assignment
  local t1, t2 = {}, {}
  local t = t1
  t, t.x = t2, "x"
  eq(t1.x, "x", "t, t.x: old t gets x"); eq(t2.x, nil, "t, t.x: new t untouched"); eq(t, t2, "t is t2")
end
do -- ravi-compiler shape
  local a, b = {}, 10
  a[b], b = 20, 30
  eq(a[10], 20, "a[b], b: a[10]"); eq(a[30], nil, "a[b], b: a[30]")
end
do -- assignments happen right to left in the reference implementation
  local a
  a, a = 1, 2
  eq(a, 1, "a, a = 1, 2")
  local t = {}
  t.x, t.x = "first", "second"
  eq(t.x, "first", "t.x, t.x")
end
do -- adjusting to the number of variables
  local function three() return 1, 2, 3 end
  local a, b, c, d = 0, 0, 0, 0
  a, b, c, d = three()
  eq(a + b + c, 6, "call expands"); eq(d, nil, "missing value is nil")
  a, b, c = (three())
  eq(a, 1, "parenthesized call: 1"); eq(b, nil, "parenthesized call truncates"); eq(c, nil, "c nil")
  a, b, c = three(), 10
  eq(a, 1, "call not last: 1 value"); eq(b, 10, "b"); eq(c, nil, "c")
  a, b = 5, 6, 7, 8
  eq(a + b, 11, "extra values dropped")
  local calls = 0
  local function count() calls = calls + 1 end
  a = 1, count()
  eq(calls, 1, "extra expressions are still evaluated")
end
do -- issue 280: a value that reads the variable after a call
  local function f() return false end
  local str = "main"
  str = f() and str or str
  eq(str, "main", "str = f() and str or str")
  local s2 = "x"
  s2 = (f() or s2) .. s2
  eq(s2, "xx", "s2 = (f() or s2) .. s2")
end
do -- issue 216: a call in an "or" must not clobber other locals
  local function bar() return "bar" end
  local function test(foo)
    local should_not_change
    foo = (foo or bar())
    return should_not_change, foo
  end
  local snc, foo = test(nil)
  eq(snc, nil, "should_not_change"); eq(foo, "bar", "foo")
end
do -- a closure reading the variable while its new value is computed
  local x = 1
  local function peek() return x end
  local function give(v) return v end
  x = give(10) and peek()
  eq(x, 1, "x = give(10) and peek()")
  local y = 1
  local function py() return y end
  y = {py()}
  eq(y[1], 1, "y = {py()}")
end
do -- a table constructor that mentions the variable
  local x = 1
  x = {x, x + 1}
  eq(type(x), "table", "x = {x, ...} is a table"); eq(x[1], 1, "x[1]"); eq(x[2], 2, "x[2]")
end
do -- arithmetic and concatenation reading the variable
  local x = 2
  x = (x + 1) * x
  eq(x, 6, "x = (x + 1) * x")
  local s = "b"
  s = "a" .. s .. s
  eq(s, "abb", "s = 'a' .. s .. s")
  local n = 5
  n = -n + n * 2
  eq(n, 5, "n = -n + n * 2")
  local c = 3
  c = c > 2 and c - 1 or c + 1
  eq(c, 2, "c = c > 2 and c - 1 or c + 1")
  local t = {v = 1}
  t = t.v
  eq(t, 1, "t = t.v")
  local m = {k = {k = "deep"}}
  m = m.k.k
  eq(m, "deep", "m = m.k.k")
end
do -- a method call on the variable
  local o = {n = 1}
  function o:next() return {n = self.n + 1, next = self.next} end
  o = o:next():next()
  eq(o.n, 3, "o = o:next():next()")
end
do -- evaluation order of a table constructor and call arguments
  local log = {}
  local function v(x) log[#log + 1] = x; return x end
  local t = {v(1), v(2), k = v(3), v(4)}
  eq(table.concat(log, ","), "1,2,3,4", "constructor order")
  log = {}
  local function f(...) return select("#", ...) end
  eq(f(v("a"), v("b"), v("c")), 3, "argument count")
  eq(table.concat(log, ","), "a,b,c", "argument order")
end
do -- a multiple assignment in a loop body and a nested function
  local fib = {}
  local a, b = 0, 1
  for i = 1, 10 do
    fib[i] = a
    a, b = b, a + b
  end
  eq(table.concat(fib, " "), "0 1 1 2 3 5 8 13 21 34", "fibonacci by swaps")
  local function gcd(x, y)
    while y ~= 0 do x, y = y, x % y end
    return x
  end
  eq(gcd(1071, 462), 21, "gcd by swaps")
end
do -- the manual: x, y = y, x exchanges
  local x, y = "x", "y"
  x, y = y, x
  eq(x .. y, "yx", "x, y = y, x")
end
return finish()
