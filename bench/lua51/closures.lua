-- closures: one made and called per iteration
local s = 0
for i = 1, 1000000 do
  local f = function(x) return x + i end
  s = s + f(1)
end
print(s)
