-- Lua 5.1 reference manual 5.4 (String manipulation) and 2.2.1 (coercion).

do -- sub, byte, char, len, rep, reverse, upper, lower
  local s = "hello"
  eq(s:sub(2, 3), "el", "sub(2, 3)"); eq(s:sub(-3), "llo", "sub(-3)"); eq(s:sub(2, -2), "ell", "sub(2, -2)")
  eq(s:sub(0), "hello", "sub(0)"); eq(s:sub(10), "", "sub past the end"); eq(s:sub(3, 2), "", "empty range")
  eq(s:sub(-100, 2), "he", "sub(-100, 2)")
  same("byte(1, -1)", {104, 101, 108, 108, 111}, s:byte(1, -1))
  same("byte() is the first", {104}, s:byte())
  same("byte past the end", {n = 0}, s:byte(10))
  eq(string.char(104, 105), "hi", "char"); eq(string.char(), "", "char()")
  eq(#s, 5, "#"); eq(s:len(), 5, "len"); eq(("a\0b"):len(), 3, "embedded zero")
  eq(string.rep("ab", 3), "ababab", "rep"); eq(string.rep("x", 0), "", "rep 0"); eq(string.rep("x", -1), "", "rep -1")
  eq(s:reverse(), "olleh", "reverse"); eq(("MiXeD"):upper(), "MIXED", "upper"); eq(("MiXeD"):lower(), "mixed", "lower")
  fails("char(256) is out of range", ".", string.char, 256)
end
do -- format
  eq(string.format("%5.2f", 3.14159), " 3.14", "%5.2f")
  eq(string.format("%d", 42), "42", "%d"); eq(string.format("%d", 3.7), "3", "%d truncates")
  eq(string.format("%5d|%-5d|%05d", 42, 42, 42), "   42|42   |00042", "%d widths")
  eq(string.format("%x %X %o", 255, 255, 8), "ff FF 10", "%x %X %o")
  eq(string.format("%e", 12345.678), "1.234568e+04", "%e")
  eq(string.format("%g %g %g", 0.0001, 1e20, 100), "0.0001 1e+20 100", "%g")
  eq(string.format("%s %s", 12, "x"), "12 x", "%s of a number")
  eq(string.format("%10.3s|", "abcdef"), "       abc|", "%10.3s")
  eq(string.format("%c%c", 76, 117), "Lu", "%c"); eq(string.format("%%"), "%", "%%")
  eq(string.format("%q", 'a "quoted"\tstring'), '"a \\"quoted\\"\tstring"', "%q quotes and keeps tabs")
  eq(string.format("%q", "back\\slash"), '"back\\\\slash"', "%q backslash")
  eq(string.format("%q", "new\nline"), '"new\\\nline"', "%q newline")
  eq(string.format("%q", "nul\0byte"), '"nul\\000byte"', "%q NUL")
  eq(string.format("%s", 1.5), "1.5", "%s 1.5")
  eq(string.format("%.3f", 2 / 3), "0.667", "%.3f")
  eq(string.format("%5s|%-5s|", "ab", "ab"), "   ab|ab   |", "%5s")
  fails("%d of a non-number", ".", string.format, "%d", "x")
end
do -- tostring and tonumber
  eq(tostring(10), "10", "tostring(10)"); eq(tostring(-3), "-3", "tostring(-3)"); eq(tostring(0.1), "0.1", "tostring(0.1)")
  eq(tostring(1.5), "1.5", "tostring(1.5)"); eq(tostring(123456), "123456", "tostring(123456)")
  eq(tostring(nil), "nil", "tostring(nil)"); eq(tostring(true), "true", "tostring(true)")
  eq(tonumber("10"), 10, "tonumber('10')"); eq(tonumber("  10  "), 10, "surrounding space")
  eq(tonumber("0x10"), 16, "hex"); eq(tonumber("0X1f"), 31, "hex upper")
  eq(tonumber("1e2"), 100, "exponent without a dot"); eq(tonumber("1E2"), 100, "upper exponent")
  eq(tonumber("1.5e+3"), 1500, "signed exponent"); eq(tonumber(".5"), 0.5, "leading dot"); eq(tonumber("5."), 5, "trailing dot")
  eq(tonumber("-7"), -7, "negative"); eq(tonumber("+7"), 7, "plus sign")
  eq(tonumber("1e"), nil, "incomplete exponent"); eq(tonumber(""), nil, "empty"); eq(tonumber("  "), nil, "blank")
  eq(tonumber("12a"), nil, "trailing junk"); eq(tonumber("1 2"), nil, "inner space"); eq(tonumber("0x"), nil, "bare 0x")
  eq(tonumber("1_000"), nil, "underscore"); eq(tonumber("010"), 10, "leading zero is decimal")
  eq(tonumber("10", 2), 2, "base 2"); eq(tonumber("ff", 16), 255, "base 16"); eq(tonumber("FF", 16), 255, "base 16 upper")
  eq(tonumber("z", 36), 35, "base 36"); eq(tonumber("8", 8), nil, "digit out of base"); eq(tonumber(" 11 ", 2), 3, "base with spaces")
  eq(tonumber(10, 16), 16, "a number in base 16 is read as its string")
  eq(tonumber(nil), nil, "tonumber(nil)"); eq(tonumber({}), nil, "tonumber({})"); eq(tonumber(5), 5, "tonumber(5)")
  fails("base out of range", "base", tonumber, "1", 99)
end
do -- coercions (2.2.1)
  eq("10" + 1, 11, "'10' + 1"); eq("3" * "4", 12, "'3' * '4'"); eq(10 .. 20, "1020", "10 .. 20")
  eq("0x10" + 0, 16, "hex string in arithmetic"); eq(" 5 " * 2, 10, "spaces in arithmetic")
  eq("1e2" + 0, 100, "exponent string in arithmetic")
  eq(10 == "10", false, "no coercion in ==")
  fails("'a' + 1", ".", function() return "a" + 1 end)
end
do -- comparison
  eq("a" < "b", true, "a < b"); eq("Z" < "a", true, "Z < a"); eq("abc" < "abd", true, "abc < abd")
  eq("" < "a", true, "'' < a"); eq("a" < "ab", true, "prefix is less"); eq("b" <= "b", true, "b <= b")
end
do -- string methods through the string metatable
  local s = "x"
  eq(s:rep(3), "xxx", "method call on a string")
  eq(("%d"):format(5), "5", "method on a literal")
  eq(getmetatable("").__index, string, "the string metatable's __index is string")
end
return finish()
