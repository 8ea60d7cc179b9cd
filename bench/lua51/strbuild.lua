-- string building: .. with numbers, and table.concat
local t = {}
for i = 1, 200000 do t[#t + 1] = "item" .. i .. "=" .. i * 0.5 end
local s = table.concat(t, ",")
local acc = ""
for i = 1, 5000 do acc = acc .. i end
print(#s, #acc)
