-- Lua 5.1 reference manual 2.8 (metatables) and 5.1 (setmetatable,
-- getmetatable, rawget, rawset, rawequal).

do -- __index and __newindex
  local base = {greet = function() return "hi" end}
  local obj = setmetatable({}, {__index = base})
  eq(obj.greet(), "hi", "__index table"); eq(rawget(obj, "greet"), nil, "rawget skips __index")
  local calls = 0
  local lazy = setmetatable({}, {__index = function(t, k) calls = calls + 1; return k .. "!" end})
  eq(lazy.x, "x!", "__index function"); eq(calls, 1, "called once")
  local log = {}
  local guarded = setmetatable({}, {__newindex = function(t, k, v) log[#log + 1] = k; rawset(t, k, v * 2) end})
  guarded.a = 1
  guarded.a = 5 -- exists now: no __newindex
  eq(guarded.a, 5, "__newindex only for absent keys"); eq(table.concat(log), "a", "called once")
  local store = {}
  local proxy = setmetatable({}, {__newindex = store})
  proxy.k = "v"
  eq(store.k, "v", "__newindex table"); eq(rawget(proxy, "k"), nil, "proxy stays empty")
  local chain = setmetatable({}, {__index = setmetatable({}, {__index = {deep = 1}})})
  eq(chain.deep, 1, "__index chain")
end
do -- arithmetic, concatenation, unary minus, comparisons
  local V = {}
  V.__index = V
  local function v(x) return setmetatable({x = x}, V) end
  V.__add = function(a, b) return v(a.x + b.x) end
  V.__sub = function(a, b) return v(a.x - b.x) end
  V.__mul = function(a, b) if type(b) == "number" then return v(a.x * b) end return v(a.x * b.x) end
  V.__div = function(a, b) return v(a.x / b.x) end
  V.__mod = function(a, b) return v(a.x % b.x) end
  V.__pow = function(a, b) return v(a.x ^ b.x) end
  V.__unm = function(a) return v(-a.x) end
  V.__concat = function(a, b)
    local l = type(a) == "table" and a.x or a
    local r = type(b) == "table" and b.x or b
    return l .. "|" .. r
  end
  V.__eq = function(a, b) return a.x == b.x end
  V.__lt = function(a, b) return a.x < b.x end
  V.__le = function(a, b) return a.x <= b.x end
  V.__call = function(self, y) return self.x + y end
  V.__tostring = function(self) return "v(" .. self.x .. ")" end
  eq((v(1) + v(2)).x, 3, "__add"); eq((v(5) - v(2)).x, 3, "__sub"); eq((v(2) * 3).x, 6, "__mul with a number")
  eq((v(6) / v(3)).x, 2, "__div"); eq((v(7) % v(3)).x, 1, "__mod"); eq((v(2) ^ v(3)).x, 8, "__pow")
  eq((-v(4)).x, -4, "__unm"); eq(v(1) .. "s", "1|s", "__concat right"); eq("s" .. v(1), "s|1", "__concat left")
  eq(v(1) == v(1), true, "__eq"); eq(v(1) ~= v(2), true, "~= uses __eq")
  eq(v(1) < v(2), true, "__lt"); eq(v(2) > v(1), true, "> uses __lt"); eq(v(2) <= v(2), true, "__le")
  eq(v(10)(5), 15, "__call"); eq(tostring(v(3)), "v(3)", "__tostring")
  local a = v(1)
  eq(a == a, true, "same object is equal without __eq")
  eq(v(1) == 1, false, "__eq is not tried between a table and a number")
end
do -- __eq needs the same metamethod on both sides
  local e1 = {__eq = function() return true end}
  local e2 = {__eq = function() return true end}
  eq(setmetatable({}, e1) == setmetatable({}, e1), true, "same __eq")
  eq(setmetatable({}, e1) == setmetatable({}, e2), false, "different __eq functions")
end
do -- __le falls back to not __lt(b, a)
  local mt = {__lt = function(a, b) return a.n < b.n end}
  local x, y = setmetatable({n = 1}, mt), setmetatable({n = 2}, mt)
  eq(x <= y, true, "__le from __lt"); eq(y <= x, false, "__le from __lt, false")
end
do -- __metatable protects
  local t = setmetatable({}, {__metatable = "locked"})
  eq(getmetatable(t), "locked", "getmetatable returns __metatable")
  fails("setmetatable of a protected table", "protected", setmetatable, t, {})
end
do -- setmetatable and getmetatable
  local t = {}
  eq(setmetatable(t, nil), t, "setmetatable returns its table")
  eq(getmetatable(t), nil, "no metatable")
  fails("setmetatable of a number", ".", setmetatable, 1, {})
  fails("setmetatable of a string", ".", setmetatable, "", {})
  eq(("x"):upper(), "X", "string methods still work")
  eq(getmetatable("").__index, string, "strings share the string metatable")
end
do -- raw access
  local t = setmetatable({}, {__index = function() return "meta" end, __newindex = function() error("no") end})
  rawset(t, "k", "raw")
  eq(rawget(t, "k"), "raw", "rawset/rawget"); eq(t.missing, "meta", "__index for a missing key")
  eq(rawequal(t, t), true, "rawequal same"); eq(rawequal({}, {}), false, "rawequal different")
end
do -- __index on a missing method used with :
  local Class = {}
  Class.__index = Class
  function Class.new(n) return setmetatable({n = n}, Class) end
  function Class:double() return self.n * 2 end
  eq(Class.new(21):double(), 42, "class pattern")
end
return finish()
