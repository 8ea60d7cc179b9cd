-- Lua 5.1 reference manual 2.5.1 (arithmetic), 2.5.2 (relational) and 5.6
-- (mathematical functions).

do -- arithmetic
  eq(7 / 2, 3.5, "division is float"); eq(2 ^ 10, 1024, "power"); eq(-2 ^ 2, -4, "unary minus binds looser than ^")
  eq(2 ^ 3 ^ 2, 512, "^ is right associative"); eq(1 + 2 * 3, 7, "precedence"); eq((1 + 2) * 3, 9, "parentheses")
  eq(1 / 0, math.huge, "1/0 is inf"); eq(-1 / 0, -math.huge, "-1/0 is -inf")
  local nan = 0 / 0
  eq(nan ~= nan, true, "nan is not equal to itself")
  eq(2 ^ 53 + 1 == 2 ^ 53, true, "doubles")
  eq(0.1 + 0.2 == 0.3, false, "binary fractions")
end
do -- modulo: a % b == a - math.floor(a / b) * b
  eq(5 % 3, 2, "5 % 3"); eq(-5 % 3, 1, "-5 % 3"); eq(5 % -3, -1, "5 % -3"); eq(-5 % -3, -2, "-5 % -3")
  eq(5.5 % 2, 1.5, "5.5 % 2"); eq(-5.5 % 2, 0.5, "-5.5 % 2"); eq(1 % -1, 0, "1 % -1")
  eq(-432896 % 256, 0, "-432896 % 256"); eq(3 % 0.5, 0, "3 % 0.5")
end
do -- math
  eq(math.floor(-3.5), -4, "floor"); eq(math.ceil(-3.5), -3, "ceil"); eq(math.abs(-2), 2, "abs")
  eq(math.max(1, 5, 3), 5, "max"); eq(math.min(2, -1), -1, "min")
  eq(math.huge > 1e308, true, "math.huge is larger than any finite number")
  eq(math.huge, 1 / 0, "math.huge is inf")
  eq(math.fmod(7, 3), 1, "fmod"); eq(math.fmod(-7, 3), -1, "fmod keeps the sign of x")
  same("modf", {3, 0.5}, math.modf(3.5)); same("modf negative", {-3, -0.5}, math.modf(-3.5))
  eq(math.sqrt(16), 4, "sqrt"); eq(math.pi > 3.14159 and math.pi < 3.1416, true, "pi")
  eq(math.floor(2 ^ 31 + 0.5), 2147483648, "floor above 2^31")
  eq(string.format("%.4f", math.sin(math.pi / 2)), "1.0000", "sin"); eq(math.exp(0), 1, "exp"); eq(math.log(1), 0, "log")
  eq(math.log10(1000), 3, "log10"); eq(math.rad(180) == math.pi, true, "rad"); eq(math.deg(math.pi), 180, "deg")
  same("frexp", {0.5, 4}, math.frexp(8)); eq(math.ldexp(0.5, 4), 8, "ldexp")
  math.randomseed(42)
  local r = math.random()
  eq(r >= 0 and r < 1, true, "random in [0, 1)")
  local d = math.random(6)
  eq(d >= 1 and d <= 6 and d == math.floor(d), true, "random(6)")
  local e = math.random(3, 4)
  eq(e == 3 or e == 4, true, "random(3, 4)")
end
do -- comparisons
  eq(1 < 2, true, "1 < 2"); eq(2 <= 2, true, "2 <= 2"); eq(3 > 2, true, "3 > 2"); eq(1 == 1.0, true, "1 == 1.0")
  eq("a" == "a", true, "strings by value"); eq({} == {}, false, "tables by reference")
  eq(nil == false, false, "nil ~= false")
  fails("1 < 'x'", ".", function() return 1 < "x" end)
end
return finish()
