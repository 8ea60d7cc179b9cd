-- Lua 5.1 reference manual 5.4.1 (Patterns) and find, match, gmatch, gsub.

do -- find
  same("plain substring", {5, 7}, string.find("hello world", "o w"))
  same("repetition", {3, 4}, string.find("hello", "l+"))
  same("plain find ignores magic", {2, 2}, string.find("a.b", ".", 1, true))
  same("plain find from init", {4, 4}, string.find("a.b.", ".", 3, true))
  same("negative init", {n = 1, nil}, string.find("abc", "b", -1))
  same("negative init finds", {3, 3}, string.find("abc", "c", -1))
  same("init past the end is clamped", {4, 3}, string.find("abc", "", 10))
  same("empty pattern at the end", {4, 3}, string.find("abc", "", 4))
  same("empty pattern at init", {2, 1}, string.find("abc", "", 2))
  same("no match", {n = 1, nil}, string.find("abc", "x"))
  same("captures come after the positions", {1, 7, "key", "val"}, string.find("key=val", "(%w+)=(%w+)"))
  same("anchored", {n = 1, nil}, string.find("xab", "^ab"))
  same("anchored at init", {2, 3}, string.find("xab", "^ab", 2))
  same("plain find past the end", {n = 1, nil}, string.find("abc", "a", 10, true))
end
do -- match
  same("two captures", {"key", "val"}, string.match("key=val", "(%w+)=(%w+)"))
  same("trim", {"trim"}, string.match("  trim  ", "^%s*(.-)%s*$"))
  same("position captures", {2, 3}, string.match("abc", "()b()"))
  same("whole match without captures", {"123"}, string.match("ab123cd", "%d+"))
  same("init", {"cd"}, string.match("ab123cd", "%a+", 3))
  same("balanced", {"(a(b)c)"}, string.match("f(a(b)c)d", "%b()"))
  same("frontier", {"THE"}, string.match("THE (quick) fox", "%f[%a]%a+"))
  same("frontier from init", {6, 10}, string.find("THE (quick) fox", "%f[%a]%a+", 5))
  same("frontier at the end", {"fox"}, string.match("THE (quick) fox", "%f[%a]%a+%f[%A]", 12))
  same("back reference", {"'", "hi"}, string.match("say 'hi' now", "(['\"])(.-)%1"))
  same("character classes", {"a1_"}, string.match("  a1_  ", "[%w_]+"))
  same("negated set", {"123"}, string.match("abc123", "[^%a]+"))
  same("range", {"m"}, string.match("xyzm", "[a-m]"))
  same("escaped magic", {"1.5"}, string.match("v1.5x", "%d%.%d"))
  same("- is lazy", {"<a>"}, string.match("<a><b>", "<.->"))
  same("* is greedy", {"<a><b>"}, string.match("<a><b>", "<.*>"))
  same("? is optional", {"color", "colour"}, string.match("color", "colou?r"), string.match("colour", "colou?r"))
  same("%z matches NUL", {2, 2}, string.find("a\0b", "%z"))
  same("punctuation", {"!?"}, string.match("hi!? ", "%p+"))
  same("control and space", {"\t\n"}, string.match("a\t\nb", "%s+"))
  same("hex digits", {"dead"}, string.match("0xdeadzz", "%x+", 3))
  same("upper class", {"ABC"}, string.match("abcABC", "%u+"))
  fails("malformed pattern", ".", string.match, "x", "[a")
  fails("unfinished capture", ".", string.match, "x", "(x")
  fails("pattern ends with %", ".", string.match, "x", "x%")
end
do -- gmatch
  local keys, vals = {}, {}
  for k, v in string.gmatch("a=1, b=2, c=3", "(%w+)=(%w+)") do keys[#keys + 1] = k; vals[#vals + 1] = v end
  eq(table.concat(keys), "abc", "gmatch keys"); eq(table.concat(vals), "123", "gmatch values")
  local words = {}
  for w in string.gmatch("one two  three", "%a+") do words[#words + 1] = w end
  eq(table.concat(words, ","), "one,two,three", "gmatch words")
  local n = 0
  for _ in string.gmatch("abc", "") do n = n + 1 end
  eq(n, 4, "empty pattern matches 4 times in 'abc'")
end
do -- gmatch's iterator called directly (issue 462), '^' literal in gmatch
  local it = string.gmatch("a1b2", "%a")
  eq(it(), "a", "first call"); eq(it(), "b", "second call"); eq(it(), nil, "exhausted")
  local n = 0
  for _ in string.gmatch("^a^a", "^a") do n = n + 1 end
  eq(n, 2, "'^' is not an anchor in gmatch")
  same("match failure is one nil", {n = 1, nil}, string.match("abc", "%u"))
  same("set with a class before '-'", {1, 1}, string.find("abc", "[%a-z]"))
  same("frontier in gsub", {"W (W) W", 3}, string.gsub("THE (quick) fox", "%f[%a]%a+", "W"))
  fails("gsub with a lone '%'", "malformed", string.gsub, "abc", "%", "x")
end
do -- gsub
  same("replace all", {"hell0 w0rld", 2}, string.gsub("hello world", "o", "0"))
  same("%0 is the match", {"aabbcc", 3}, string.gsub("abc", "%w", "%0%0"))
  same("empty pattern", {"-a-b-c-", 4}, string.gsub("abc", "", "-"))
  same("table replacement", {"heLLo", 2}, string.gsub("hello", "l", {l = "L"}))
  same("table with captures", {"bob is 3", 2}, string.gsub("$name is $age", "%$(%w+)", {name = "bob", age = 3}))
  same("function returning nil keeps the match", {"abc", 1}, string.gsub("abc", "b", function() return nil end))
  same("function returning false keeps the match", {"abc", 1}, string.gsub("abc", "b", function() return false end))
  same("limit", {"<one> <two> three", 2}, string.gsub("one two three", "(%w+)", "<%1>", 2))
  same("swap words", {"world hello", 1}, string.gsub("hello world", "(%w+) (%w+)", "%2 %1"))
  same("%% in the replacement", {"50%", 1}, string.gsub("50", "$", "%%"))
  same("anchored gsub replaces once", {"xbab", 1}, string.gsub("abab", "^a", "x"))
  same("function gets captures", {"3 5", 2}, string.gsub("1+2 2+3", "(%d)%+(%d)", function(a, b) return a + b end))
  same("number replacement", {"a1c", 1}, string.gsub("abc", "b", 1))
  fails("invalid capture index", ".", string.gsub, "abc", "b", "%2")
  fails("bad replacement type", ".", string.gsub, "abc", "b", true)
end
do -- a back reference to a position capture never matches (5.1 compares its length, CAP_POSITION)
  same("find ()%1", {n = 1, nil}, string.find("abc", "()%1"))
  same("gsub ()%1", {"abc", 0}, string.gsub("abc", "()%1", "x"))
end
return finish()
