-- print calls the global tostring for every value (lbaselib's luaB_print).
local real = tostring
print(1, nil, true, "s", 1.5)
tostring = function(v) return "<" .. real(v) .. ">" end
print(1, nil, "s")
tostring = function(v) return 42 end
print("numbers are accepted", 1)
tostring = function(v) return nil end
local ok, e = pcall(print, 1)
tostring = real
print(ok, e)
local obj = setmetatable({}, {__tostring = function() return "OBJ" end})
print(obj, tostring(obj))
local odd = setmetatable({}, {__tostring = function() return 7 end})
print(type(tostring(odd)), tostring(odd))
print("a\0b", "after")
print(select("#", print()))
try(tostring)
print(tostring(12), tostring("12"), tostring(-0.0 + 0))
