-- Lua 5.1 reference manual 2.7 (Error handling) and 5.1 (pcall, xpcall,
-- error, assert), with Lua and Go callees.

do -- pcall's results
  same("pcall(f) returns true and f's results", {n = 4, true, 1, 2, 3}, pcall(function() return 1, 2, 3 end))
  same("pcall of a function returning nothing", {n = 1, true}, pcall(function() end))
  same("arguments are passed on", {n = 3, true, "a", "b"}, pcall(function(...) return ... end, "a", "b"))
  same("pcall(error) raises nil", {n = 2, false, nil}, pcall(error))
  same("error with level 0 adds no position", {n = 2, false, "m"}, pcall(error, "m", 0))
  same("error called by pcall: level 1 is pcall, a C function", {n = 2, false, "m"}, pcall(error, "m"))
end
do -- error values keep their type
  local t = {}
  local ok, e = pcall(error, t)
  eq(ok, false, "table error: ok"); eq(e, t, "table error: same table")
  ok, e = pcall(function() error(true) end)
  eq(e, true, "boolean error value")
  ok, e = pcall(function() error(nil) end)
  eq(e, nil, "nil error value")
  ok, e = pcall(function() error(42, 0) end)
  eq(e, 42, "number error value with level 0 stays a number")
  eq(type(e), "number", "type of level-0 number error")
end
do -- positions
  local function here() return debug and "" or "" end
  local ok, e = pcall(function() error("msg") end)
  eq(ok, false, "error in a function")
  eq(string.match(e, "^[^:]+:(%d+): msg$") ~= nil, true, "level 1 names the calling line: " .. tostring(e))
  local function lvl2() error("deep", 2) end
  local function caller() lvl2() end -- the line of this call
  local ok2, e2 = pcall(caller)
  local line = string.match(e2, ":(%d+): deep$")
  eq(line ~= nil, true, "level 2 has a position: " .. tostring(e2))
  local ok3, e3 = pcall(function() error(42) end)
  eq(type(e3), "string", "a number message gets a position and becomes a string")
  eq(string.match(e3, ": 42$") ~= nil, true, "number message text: " .. e3)
end
do -- nested pcall
  local inner_ok, inner_err
  local ok, v = pcall(function()
    inner_ok, inner_err = pcall(error, "inner", 0)
    return "outer fine"
  end)
  eq(ok, true, "outer ok"); eq(v, "outer fine", "outer value")
  eq(inner_ok, false, "inner failed"); eq(inner_err, "inner", "inner message")
  local ok2, e2 = pcall(function()
    pcall(error, "swallowed")
    error("raised", 0)
  end)
  eq(e2, "raised", "error after a caught one")
end
do -- xpcall
  same("xpcall success", {n = 3, true, 1, 2}, xpcall(function() return 1, 2 end, print))
  same("handler's result is the message", {n = 2, false, "handled: x"},
    xpcall(function() error("x", 0) end, function(m) return "handled: " .. m end))
  same("handler gets the error object", {n = 2, false, "table"},
    xpcall(function() error({}) end, function(m) return type(m) end))
  same("handler returns only its first result", {n = 2, false, 1},
    xpcall(function() error("x") end, function() return 1, 2 end))
  same("error in the handler", {n = 2, false, "error in error handling"},
    xpcall(function() error("x") end, function() error("again") end))
end
do -- callable tables (issue 326)
  local callable = setmetatable({}, {__call = function(self, a) return a end})
  same("pcall of a callable table", {true, 5}, pcall(callable, 5))
  same("xpcall of a callable table", {true}, (function() local ok = xpcall(callable, print); return ok end)())
end
do -- assert
  same("assert returns all its arguments", {n = 3, 1, 2, 3}, assert(1, 2, 3))
  same("assert(false, msg)", {n = 2, false, "msg"}, pcall(assert, false, "msg"))
  same("assert(nil, table) raises a string", {n = 2, false, "string"},
    (function() local ok, e = pcall(assert, nil, {}); return ok, type(e) end)())
  fails("assert(false) says assertion failed", "assertion failed", assert, false)
end
do -- runtime errors are caught
  fails("index nil", ".", function() local t; return t.x end)
  fails("arithmetic on a table", ".", function() return 1 + {} end)
  fails("call a number", ".", function() local n = 1; n() end)
  fails("compare number with string", ".", function() return 1 < "2" end)
  fails("compare two tables", ".", function() return {} < {} end)
  fails("concatenate a table", ".", function() return "a" .. {} end)
  fails("calling nil", ".", pcall == nil and print or function() local f; f() end)
  same("pcall(nil) fails", {n = 1, false}, (pcall(nil)))
end
do -- Go functions raising, called directly and from Lua
  local ok, e = pcall(string.rep)
  eq(ok, false, "string.rep() fails")
  eq(string.sub(e, 1, 1) ~= " ", true, "no stray space: " .. e)
  eq(string.find(e, "bad argument #1", 1, true) ~= nil, true, "names the argument: " .. e)
  ok, e = pcall(function() return string.rep() end)
  eq(string.match(e, "^[^:]+:%d+: bad argument #1") ~= nil, true, "called from Lua, the caller's position: " .. e)
  ok, e = pcall(setmetatable, 1, {})
  eq(ok, false, "setmetatable(1, {}) fails")
end
do -- error inside a loop, caught each time; state outside survives
  local total, caught = 0, 0
  for i = 1, 10 do
    local ok = pcall(function()
      total = total + i
      if i % 2 == 0 then error("even") end
    end)
    if not ok then caught = caught + 1 end
  end
  eq(total, 55, "loop total"); eq(caught, 5, "caught")
end
do -- tostring of an error object with __tostring
  local obj = setmetatable({}, {__tostring = function() return "custom" end})
  local ok, e = pcall(error, obj)
  eq(e, obj, "object kept"); eq(tostring(e), "custom", "__tostring")
end
do -- protected calls nested without end fail with a stack overflow, caught
  local n, err = 0, nil
  local function f()
    n = n + 1
    local ok, e = pcall(f)
    if not ok and err == nil then err = e end
  end
  f()
  eq(string.find(tostring(err), "overflow") ~= nil, true, "stack overflow: " .. tostring(err))
  eq(n > 100, true, "nested more than 100 deep")
end
do -- chunk names of loaded strings
  local ok, e = pcall(loadstring("error('x')"))
  eq(e, '[string "error(\'x\')"]:1: x', "loadstring's chunk is named after its text")
  ok, e = pcall(loadstring("local a = 1\nerror('y')"))
  eq(e, '[string "local a = 1..."]:2: y', "first line only")
  ok, e = pcall(loadstring("error('z')", "=mine"))
  eq(e, "mine:1: z", "=name")
  local f, msg = loadstring("x = = 1")
  eq(f, nil, "syntax error: no function"); eq(type(msg), "string", "syntax error: a message")
end
return finish()
