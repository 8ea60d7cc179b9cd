-- Lua 5.2 features a 5.1 program must not see.
local t = setmetatable({a = 1}, {__pairs = function() return function() return nil end, nil, nil end})
local n = 0
for k, v in pairs(t) do n = n + 1 end
print("pairs ignores __pairs:", n)
local ip = setmetatable({}, {__ipairs = function() error("no") end, __index = function(_, i) if i <= 3 then return i * 10 end end})
local seen = 0
for i, v in ipairs(ip) do seen = v end
print("ipairs reads raw (no __index, no __ipairs):", seen)
local goto = 5
print("goto is a name:", goto)
print(table.unpack, table.pack, rawlen, bit32, _ENV, package.searchpath, string.pack, math.log(8, 2) == math.log(8))
try(load, "return 1")
print(select("#", loadstring("return 1")))
local len = setmetatable({}, {__len = function() return 7 end})
print(#"abc", #{1, 2})
print(string.format("%q", "a\0b\r\n"), ("\65\066\0067"):byte(1, -1))
print(type(xpcall(function(...) return select("#", ...) end, print, 1, 2)))
print(tostring(nil), tostring(true), (tostring(print):gsub("0x%x+", "ADDR"):gsub(": [%w]+$", ": ADDR")))
