-- string.gmatch, gsub and find
local s = "the quick brown fox 123 jumps over 456 lazy dogs 789"
local n = 0
for i = 1, 20000 do
  for w in string.gmatch(s, "%a+") do n = n + 1 end
  local r = s:gsub("%d+", "N")
  local a, b = s:find("(%w+) (%d+)")
  n = n + #r + a
end
print(n)
