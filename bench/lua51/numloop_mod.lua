-- numeric loop with %, which ibscript compiles as a call (5.1's a - floor(a/b)*b)
local s = 0
for i = 1, 2000000 do s = s + i % 7 end
print(s)
