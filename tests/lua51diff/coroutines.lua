-- The coroutine library (manual 2.11 and 5.2).
local co = coroutine.create(function(a, b)
  print("start", a, b, coroutine.status(coroutine.running()))
  local c = coroutine.yield(a + b)
  print("got", c)
  local d, e = coroutine.yield(c * 2)
  print("got", d, e)
  return "done", 99
end)
print(type(co), coroutine.status(co))
print(coroutine.resume(co, 1, 2))
print(coroutine.status(co))
print(coroutine.resume(co, 10))
print(coroutine.resume(co, "x", "y"))
print(coroutine.status(co))
print(coroutine.resume(co))
print(coroutine.running())
print(select("#", coroutine.resume(coroutine.create(function() end))))
-- errors inside
local bad = coroutine.create(function() local x = nil; return x.y end)
show(coroutine.resume(bad))
print(coroutine.status(bad), coroutine.resume(bad))
local e2 = coroutine.create(function() error({code = 1}) end)
local ok, err = coroutine.resume(e2)
print(ok, type(err), err.code)
print(coroutine.resume(coroutine.create(function() error("plain", 0) end)))
-- yield across pcall is refused, as in 5.1
local across = coroutine.create(function()
  local ok, msg = pcall(coroutine.yield, 1)
  print("pcall(yield):", ok, msg)
  local ok2, msg2 = pcall(function() coroutine.yield(2) end)
  print("yield in pcall'd function:", ok2, msg2)
  return "finished"
end)
print(coroutine.resume(across))
print(coroutine.status(across))
-- yield from a comparison function called by table.sort
print(coroutine.resume(coroutine.create(function()
  table.sort({3, 2, 1}, function(a, b) coroutine.yield() return a < b end)
end)))
-- outside a coroutine
print(pcall(coroutine.yield, 1))
-- status from inside, nested coroutines
local outer
outer = coroutine.create(function()
  local inner = coroutine.create(function()
    print("inner sees outer:", coroutine.status(outer))
    print("inner sees itself:", coroutine.status(coroutine.running()))
    coroutine.yield()
  end)
  coroutine.resume(inner)
  print("outer sees inner:", coroutine.status(inner))
  print("resume running:", coroutine.resume(outer))
  print("running inside pcall is the coroutine:", pcall(function() return coroutine.running() == outer end))
end)
coroutine.resume(outer)
-- wrap
local gen = coroutine.wrap(function(n) for i = 1, n do coroutine.yield(i) end return "end" end)
print(gen(3), gen(), gen(), gen())
print(pcall(gen))
local failing = coroutine.wrap(function() error("inside") end)
print(pcall(failing))
local failing2 = coroutine.wrap(function() error("no position", 0) end)
print(pcall(failing2))
-- producer / consumer
local function producer()
  return coroutine.create(function()
    for _, w in ipairs({"a", "b", "c"}) do coroutine.yield(w) end
  end)
end
local p = producer()
local out = {}
while true do
  local ok, v = coroutine.resume(p)
  if not v then break end
  out[#out + 1] = v
end
print(table.concat(out, ","), coroutine.status(p))
-- argument checks
print(pcall(coroutine.create, print))
print(pcall(coroutine.create, 1))
print(pcall(coroutine.resume, 1))
print(pcall(coroutine.status, nil))
print(pcall(coroutine.wrap, print))
