-- Lua 5.1 reference manual 2.1 (lexical conventions) and 2.4 (statements):
-- what Lua 5.1's syntax accepts, including what later versions reserve
-- (goto). The errors of what it rejects are in tests/lua51err/syntax.txt.

do -- goto is an ordinary name in Lua 5.1 (a keyword from 5.2)
  local goto = 1
  eq(goto, 1, "a local named goto")
  local t = {goto = 2}
  eq(t.goto, 2, "a field named goto")
  function t:goto(n) return n + 1 end
  eq(t:goto(1), 2, "a method named goto")
  local function f(goto) return goto * 2 end
  eq(f(3), 6, "a parameter named goto")
  local n = 0
  for goto = 1, 3 do n = n + goto end
  eq(n, 6, "a loop variable named goto")
  for _, goto in ipairs({5}) do n = goto end
  eq(n, 5, "a generic loop variable named goto")
  eq(rawget(t, "goto") ~= nil, true, "the key is the string goto")
  eq(("goto"), "goto", "the string goto is unchanged")
end
do -- statements end with an optional semicolon, one each
  local a = 1; local b = 2;
  eq(a + b, 3, "semicolons after statements")
  local function f() return; end
  eq(f(), nil, "return;")
end
do -- long strings and comments
  --[==[ a long comment
  with ]] inside ]==]
  local s = [==[
a ]] b]==]
  eq(s, "a ]] b", "level 2 long string, first newline skipped")
  eq([[
]], "", "a long string of one newline is empty")
  eq(#[[a
b]], 3, "newlines inside count once")
end
do -- numbers
  eq(0x10, 16, "hexadecimal")
  eq(.5, 0.5, "leading dot")
  eq(5., 5, "trailing dot")
  eq(1e2, 100, "exponent")
  eq(1E+2, 100, "exponent with sign")
  eq(2e-1, 0.2, "negative exponent")
end
do -- escapes
  eq("\65\066\0670", "ABC0", "decimal escapes of up to three digits")
  eq("\255", string.char(255), "the largest decimal escape")
  eq("a\
b", "a\nb", "an escaped newline")
  eq("\q", "q", "an unknown escape is the character")
  eq('\'"', "'\"", "quotes")
end
do -- calls without parentheses and on literals
  local function id(x) return x end
  eq(id"s", "s", "a string argument")
  eq(id{1}[1], 1, "a table argument")
  eq(id[[l]], "l", "a long string argument")
  eq(("x"):rep(3), "xxx", "a method of a string literal")
  local t = {f = {g = function(self, s) return s .. "!" end}}
  eq(t.f:g"hi", "hi!", "a method with a string argument")
end
do -- a call's arguments may span lines once its parenthesis opened
  local function f(a, b) return a + b end
  local v = f(1,
    2)
  eq(v, 3, "arguments over two lines")
end
do -- repeat's condition sees the body's locals
  local i = 0
  repeat local done = i >= 2; i = i + 1 until done
  eq(i, 3, "until reads a local of the body")
end
do -- vararg functions, and '...' in the main chunk
  local function f(...) return select("#", ...) end
  eq(f(1, nil, 3), 3, "three arguments")
  eq(type(select("#", ...)), "number", "the main chunk is a vararg function")
end
return finish()
