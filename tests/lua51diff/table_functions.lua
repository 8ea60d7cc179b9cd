-- ltablib: insert, remove, concat, sort, maxn, getn, foreach, foreachi.
local function show_t(t, lo, hi)
  local r = {}
  for i = lo or -1, hi or 6 do r[#r + 1] = tostring(t[i]) end
  print(table.concat(r, " "))
end
local t = {1, 2}
table.insert(t, 0, "x") show_t(t)
t = {1, 2} table.insert(t, 1, "x") show_t(t)
t = {1, 2} table.insert(t, 3, "x") show_t(t)
t = {1, 2} table.insert(t, 5, "x") show_t(t)
t = {1, 2} table.insert(t, -1, "x") show_t(t)
t = {1, 2} table.insert(t, "y") show_t(t)
try(table.insert, {1}, 1, 2, 3)
try(table.insert, {1})
try(table.insert, nil, 1)
t = {1, 2, 3}
print(table.remove(t, 0), #t) show_t(t)
print(table.remove(t, 4), #t) show_t(t)
print(table.remove(t, 1), #t) show_t(t)
print(table.remove(t), #t) show_t(t)
print(table.remove(t), #t, table.remove(t), #t, select("#", table.remove(t)))
t = {} print(select("#", table.remove(t)), select("#", table.remove(t, 1)), select("#", table.remove(t, 0)))
print(table.concat({}), table.concat({1, "a", 2.5}), table.concat({1, 2, 3}, ", ", 2), table.concat({1, 2, 3}, "-", 3, 2))
try(table.concat, {1, {}, 3})
try(table.concat, {1, 2}, " ", 1, 3)
try(table.concat, {true})
t = {5, 3, 8, 1, 9, 2, 7}
table.sort(t) print(table.concat(t, " "))
table.sort(t, function(a, b) return a > b end) print(table.concat(t, " "))
t = {"banana", "apple", "Cherry", "apple", "date"}
table.sort(t) print(table.concat(t, " "))
local recs = {}
for i, k in ipairs({3, 1, 3, 2, 1, 3, 2, 2, 1, 3, 1}) do recs[i] = {k = k, i = i} end
table.sort(recs, function(a, b) return a.k < b.k end)
local order = {}
for _, r in ipairs(recs) do order[#order + 1] = r.k .. ":" .. r.i end
print(table.concat(order, " "))
try(table.sort, {1, "x", 2})
try(table.sort, {3, 2, 1}, 5)
local calls = 0
t = {4, 2, 3, 1}
table.sort(t, function(a, b) calls = calls + 1 return a < b end)
print(table.concat(t, " "), calls)
print(table.maxn({1, 2, [10] = 3, [2.5] = 4, [-1] = 5}), table.maxn({}), table.getn({1, 2, 3}))
table.foreachi({"a", "b"}, print)
print(table.foreach({10}, function(k, v) return k + v end))
try(table.setn, {}, 1)
print(table.unpack, table.pack, rawlen)
