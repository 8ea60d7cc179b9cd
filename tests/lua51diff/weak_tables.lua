-- __mode: what Lua 5.1 and ibscript agree on. Entries whose key or value
-- is still referenced survive a collection; the metatable keeps its mode.
-- (That unreferenced entries are dropped is the difference docs/lua.md
-- lists: gopher-lua's tables hold every entry strongly.)
local keep = {}
local wk = setmetatable({}, {__mode = "k"})
local wv = setmetatable({}, {__mode = "v"})
local wkv = setmetatable({}, {__mode = "kv"})
wk[keep] = "kept"; wv[1] = keep; wkv[keep] = keep
wk.name = "string keys are never collected"; wv.n = 42; wv.s = "strings are values"
collectgarbage()
collectgarbage("collect")
print(wk[keep], wv[1] == keep, wkv[keep] == keep, wk.name, wv.n, wv.s)
print(getmetatable(wk).__mode, getmetatable(wv).__mode, getmetatable(wkv).__mode)
local n = 0
for k, v in pairs(wk) do n = n + 1 end
print(n)
