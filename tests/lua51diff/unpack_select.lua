-- unpack ranges and select, as lbaselib.
local t = {[-1] = "m", [0] = "z", "a", "b", "c"}
print(unpack(t, -1, 1))
print(unpack(t, 2))
print(unpack(t, 3, 5))
print(select("#", unpack(t, 4, 3)), select("#", unpack(t, 0, 0)), select("#", unpack({})))
print(unpack({1, nil, 3}, 1, 3))
print(pcall(unpack, {}, 1, 1e8))
print(pcall(unpack, {}, -2^30, 2^29), select("#", unpack({}, 1, 7990)))
print(select("#"), select("#", nil, nil), select(2, "a", "b", "c"), select(-2, "a", "b", "c"))
print(select(5, "a", "b"))
try(select, 0, "a")
try(select, -3, "a", "b")
print(select("#x", 1, 2, 3))
local function f(...) return select("#", ...), ... end
print(f(nil, nil))
print((f(1, 2, 3)))
