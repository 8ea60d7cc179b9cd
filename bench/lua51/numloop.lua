-- numeric loop: + - * / on locals
local s = 0
for i = 1, 5000000 do s = s + i * 2 - i / 3 end
print(s)
