-- Numbers as text: "%.14g" (LUAI_NUMFFORMAT) in tostring, print, "..",
-- string.format's %s, table.concat, error messages, gsub replacements.
local z = 0
local nz = -z
print(1234567.5, 0.1, 1/3, 2/3, 100, -100, 1e14, 1e15, 123456789012345, 2^53, 2^63, -2^63)
print(0.1 + 0.2, 1e-5, 1e-4, 123.456e-300, 5e-324, 1e308 * 10, -1e308 * 10, 1e100)
print(nz, -nz, 1/nz, tostring(nz), "x" .. nz, string.format("%s", nz), 0/0 ~= 0/0)
print(3.0, -3.0, 3.5, 1e2, 0x10, 0xff, 1.5e300, 12345678901234567890)
print(tostring(1/0), tostring(-1/0), 1/0 .. "", -1/0 .. "|", math.huge, -math.huge)
print("n=" .. 1234567.5, "big=" .. 2^53, "tiny=" .. 1e-310, 1 .. 2, 1.5 .. "", 10 / 4 .. "")
print(string.format("%s %s %s", 0.1, 1e15, 2^63), string.format("%5s|%-8s|", 1.5, 2^10))
print(table.concat({0.1, 1e15, 1234567.5, -0.5}, " "))
print(string.gsub("a b", "%w", 1e15), string.gsub("a", "a", 0.1))
print(pcall(error, 1234567.5), pcall(error, 0.1, 0))
print(#tostring(12345.678), tostring(12345.678) == 12345.678 .. "")
print(math.floor(1e15), math.floor(-1e15 - 0.5), 2^31, 2^32 + 0.5, -(2^52) - 0.5)
print(string.format("%.14g|%g|%.3f|%e|%5.2E", 0.1, 1e20, 2/3, 12345.6789, 0.000123))
for _, v in ipairs({1, -1, 0.5, 100.25, 1e10, 1e16, 1/3}) do io = v .. "" print(io) end
