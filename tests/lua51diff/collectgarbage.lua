-- collectgarbage's options and results (lbaselib's luaB_collectgarbage).
print(collectgarbage(), collectgarbage("collect"), collectgarbage("stop"), collectgarbage("restart"))
print(type(collectgarbage("count")), collectgarbage("count") > 0, type(gcinfo()), gcinfo() > 0)
-- whether a step finished a cycle depends on the collector (docs/lua.md)
print(type(collectgarbage("step")), type(collectgarbage("step", 100)))
print(collectgarbage("setpause", 150), collectgarbage("setpause"), collectgarbage("setpause", 200))
print(collectgarbage("setstepmul", 300), collectgarbage("setstepmul", 200))
try(collectgarbage, "bogus")
try(collectgarbage, {})
local before = collectgarbage("count")
local t = {}
for i = 1, 1000 do t[i] = {i} end
print(collectgarbage("count") >= 0, math.floor(before) == before or before ~= math.floor(before))
