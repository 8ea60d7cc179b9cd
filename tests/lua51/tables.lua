-- Lua 5.1 reference manual 2.5.5 (length), 2.5.7 (table constructors) and
-- 5.5 (table manipulation).

do -- constructors
  local t = {1, 2, 3, n = "x", [10] = "ten", ["a b"] = true}
  eq(t[3], 3, "array part"); eq(t.n, "x", "record field"); eq(t[10], "ten", "[exp] = v"); eq(t["a b"], true, "string key")
  local u = {[1] = "a", "b"}
  eq(u[1], "b", "positional fields win over [1] =")
  local function f() return 1, 2, 3 end
  eq(#{f()}, 3, "{f()}"); eq(#{f(), f()}, 4, "{f(), f()}"); eq(#{(f())}, 1, "{(f())}")
  local s = {"x"; "y"; z = 1}
  eq(#s, 2, "semicolon separators")
end
do -- length of sequences
  eq(#{}, 0, "#{}"); eq(#{1, 2, 3}, 3, "#{1, 2, 3}"); eq(#"", 0, "#''")
  local t = {}
  for i = 1, 100 do t[i] = i end
  eq(#t, 100, "100 elements")
  t[100] = nil
  eq(#t, 99, "after removing the last")
  local v = {n = 1}
  v[#v + 1] = "a"; v[#v + 1] = "b"
  eq(#v, 2, "append with #t + 1")
end
do -- table.insert and table.remove
  local t = {1, 2, 3}
  table.insert(t, 4)
  eq(table.concat(t, ","), "1,2,3,4", "insert at the end")
  table.insert(t, 1, 0)
  eq(table.concat(t, ","), "0,1,2,3,4", "insert at the front")
  eq(table.remove(t), 4, "remove the last returns it")
  eq(table.remove(t, 1), 0, "remove the first returns it")
  eq(table.concat(t, ","), "1,2,3", "after removes")
  local e = {}
  eq(table.remove(e), nil, "remove from an empty table")
end
do -- table.concat
  eq(table.concat({1, 2, 3}), "123", "no separator"); eq(table.concat({1, 2, 3}, "-", 2, 3), "2-3", "range")
  eq(table.concat({}, "x"), "", "empty"); eq(table.concat({"a"}, ", "), "a", "one element")
  eq(table.concat({1, 2}, ", ", 3), "", "i > j")
  fails("concat of a table element", ".", table.concat, {1, {}, 3})
  local many = {}
  for i = 1, 20000 do many[i] = "xuxu" end
  eq(#table.concat(many, "123"), 20000 * 7 - 3, "concat of 20000 strings")
  eq(select("#", unpack(many, 1, 5000)), 5000, "unpack of 5000 values")
end
do -- table.sort
  local t = {5, 2, 8, 1, 9, 3}
  table.sort(t)
  eq(table.concat(t, ","), "1,2,3,5,8,9", "sort numbers")
  table.sort(t, function(a, b) return a > b end)
  eq(table.concat(t, ","), "9,8,5,3,2,1", "sort with a comparator")
  local w = {"pear", "Apple", "fig"}
  table.sort(w)
  eq(table.concat(w, ","), "Apple,fig,pear", "sort strings bytewise")
  local recs = {{n = 2}, {n = 1}, {n = 3}}
  table.sort(recs, function(a, b) return a.n < b.n end)
  eq(recs[1].n * 100 + recs[2].n * 10 + recs[3].n, 123, "sort records")
  local big = {}
  for i = 1, 500 do big[i] = (i * 7919) % 500 end
  table.sort(big)
  local sorted = true
  for i = 2, #big do if big[i - 1] > big[i] then sorted = false end end
  eq(sorted, true, "sort 500 numbers")
  fails("sort of mixed types", ".", table.sort, {1, "x", 2})
end
do -- Lua 5.1's compatibility functions
  eq(table.getn({1, 2, 3}), 3, "table.getn")
  local seen = {}
  table.foreachi({"a", "b"}, function(i, v) seen[#seen + 1] = i .. v end)
  eq(table.concat(seen, ","), "1a,2b", "table.foreachi")
  eq(table.foreach({x = 90}, function(k, v) if k == "x" then return v end end), 90, "table.foreach returns the first non-nil")
  eq(string.gfind, string.gmatch, "string.gfind is string.gmatch")
end
do -- table.maxn, next, pairs
  eq(table.maxn({1, 2, [10] = 3}), 10, "maxn"); eq(table.maxn({}), 0, "maxn of {}")
  eq(table.maxn({["1000"] = true, [24.5] = 3}), 24.5, "maxn counts non-integer keys")
  eq(next({}), nil, "next of an empty table")
  local k, v = next({x = 1})
  eq(k, "x", "next key"); eq(v, 1, "next value")
  local n = 0
  for _ in pairs({1, 2, x = 3, [false] = 4}) do n = n + 1 end
  eq(n, 4, "pairs visits every key")
  local t = {a = 1, b = 2, c = 3}
  for key in pairs(t) do t[key] = nil end
  eq(next(t), nil, "clearing fields during traversal")
end
do -- keys
  local t = {}
  t[1.0] = "one"
  eq(t[1], "one", "1.0 and 1 are the same key")
  t["1"] = "string one"
  eq(t[1], "one", "'1' is another key")
  local k = {}
  t[k] = "table key"
  eq(t[k], "table key", "table as a key")
  fails("nil as a key", ".", function() local x = {}; x[nil] = 1 end)
end
return finish()
