-- Helpers of the Lua 5.1 semantics suite (tests/lua51). The suite runs
-- unchanged under the reference interpreter (lua5.1 -l prelude FILE) and
-- under ibscript's Lua (tests/lua51_test.go), so every expectation in it
-- is checked against Lua 5.1 itself. State lives in a table, not in
-- upvalues, so the helpers keep counting even where upvalues break.
local S = {failures = {}, checks = 0}

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

-- eq records a failure unless got equals want (NaN equals NaN).
function eq(got, want, what)
  S.checks = S.checks + 1
  if got ~= want and not (got ~= got and want ~= want) then
    S.failures[#S.failures + 1] = string.format("%s: got %s, want %s", what, show(got), show(want))
  end
end

-- same compares two lists of values, count included: same("f()", {n=2, 1, 2}, f()).
function same(what, want, ...)
  local n = select("#", ...)
  eq(n, want.n or #want, what .. " (count)")
  for i = 1, math.max(n, want.n or #want) do
    eq((select(i, ...)), want[i], what .. " [" .. i .. "]")
  end
end

-- fails calls fn(...) and records a failure unless it raises an error whose
-- message (tostring) matches pattern.
function fails(what, pattern, fn, ...)
  S.checks = S.checks + 1
  local ok, err = pcall(fn, ...)
  if ok then
    S.failures[#S.failures + 1] = what .. ": no error, want one matching " .. show(pattern)
  elseif not string.find(tostring(err), pattern) then
    S.failures[#S.failures + 1] = string.format("%s: error %s does not match %s", what, show(tostring(err)), show(pattern))
  end
end

-- finish raises the failures, one a line, or returns how many checks ran.
function finish()
  if #S.failures > 0 then
    error(#S.failures .. " of " .. S.checks .. " checks failed:\n" .. table.concat(S.failures, "\n"), 0)
  end
  return S.checks
end
