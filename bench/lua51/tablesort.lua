-- table.insert and table.sort
local t = {}
for i = 1, 200000 do table.insert(t, (i * 7919) % 100003) end
table.sort(t)
print(t[1], t[#t])
