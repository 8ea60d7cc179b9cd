-- a % b is a - floor(a/b)*b (manual 2.5.1), and ^ is C's pow.
local z = 0
print(1 % 0.1 == 0, 1 % 0.1, 5 % 3, -5 % 3, 5 % -3, -5 % -3, 5.5 % 2, -5.5 % 2)
print(0.3 % 0.1, 7 % 2.5, 2^53 % 3, 1e308 % 7, -1e308 % 7)
print(1 % 0, -1 % 0, 0 % 0, 1 % (1/0), -1 % (1/0), (1/0) % 2, -z % 1, z % -1)
print("7" % 2, 7 % "2", "7" % "2", "0x11" % 16)
local x, y = 10, 3
print(x % y, x % -y, -x % y, (x + 0.5) % y, x % (y + 0.5))
for i = -3, 3 do io = i % 3 print(i, i % 3, i % -3, i % 1.5) end
print(2^10, 2^0.5, 2^-1, (-2)^2, (-2)^3, (-8)^(1/3), 0^0, 0^-1, (1/0)^0, 1^(0/0))
print("2" ^ 2, 2 ^ "3", -2^2, 2^-2^2)
try(function() return 1 % nil end)
try(function() local v = {} return v % 2 end)
try(function() return 2 ^ {} end)
local mt = {__mod = function(a, b) return "mod" end, __pow = function(a, b) return "pow" end}
local o = setmetatable({}, mt)
print(o % 1, 1 % o, o ^ 2, 2 ^ o)
