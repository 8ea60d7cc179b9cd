-- The numeric for (manual 2.4.5): bounds converted as numbers.
for i = "1", "3" do io = i end print(io, type(io))
for i = 1, "2", "0.5" do io = i end print(io)
for i = 10, 1, -3 do io = i end print(io)
for i = 1, 0 do print("never") end
for i = 0.1, 0.35, 0.1 do io = i end print(io)
local n = 0
for i = 1, 3 do local j = i; i = 10; n = n + j end print(n)
try(function() for i = {}, 1 do end end)
try(function() for i = 1, "x" do end end)
try(function() for i = 1, 2, nil do end end)
local a, b = 2, 4
for i = a, b do io = i end print(io)
for i = 2^52, 2^52 + 2 do io = i end print(io)
for i = 1, math.huge do if i > 3 then break end io = i end print(io)
