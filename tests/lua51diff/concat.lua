-- The .. operator (manual 2.5.4): strings and numbers, right to left, __concat.
local n, s = 10, "s"
print(n .. s, s .. n, 1 .. 2 .. 3, n .. n, "" .. 1.25, 1e15 .. "", -0.5 .. "")
local mt = {__concat = function(a, b)
  local l = type(a) == "table" and "T" or a
  local r = type(b) == "table" and "T" or b
  return "(" .. l .. "+" .. r .. ")"
end}
local o = setmetatable({}, mt)
print(o .. "x", "x" .. o, "a" .. "b" .. o, o .. "a" .. "b", "a" .. o .. "b", o .. o)
local function two() return "p", "q" end
print("x" .. two(), two() .. "y")
try(function() local v return "a" .. v end)
try(function() return "a" .. undefined_global end)
try(function() local t = {} return "a" .. t.field end)
try(function() local u; return (function() return u .. "x" end)() end)
try(function() return {} .. "x" end)
try(function() return "x" .. true end)
try(function() return nil .. 1 end)
try(function() local a, b = "x", {} return a .. b .. "y" end)
print(("abc"):rep(2) .. 1, #("x" .. 123))
