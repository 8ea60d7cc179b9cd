-- Lua 5.1 reference manual 5.8 (os.date, os.time, os.difftime, os.clock),
-- in UTC ("!") so that the results do not depend on the machine's zone.

do
  local t = 1700000000 -- 2023-11-14 22:13:20 UTC, a Tuesday
  eq(os.date("!%Y-%m-%dT%H:%M:%SZ", t), "2023-11-14T22:13:20Z", "ISO 8601")
  eq(os.date("!%c", t), "Tue Nov 14 22:13:20 2023", "%c")
  eq(os.date("!%x %X", t), "11/14/23 22:13:20", "%x %X")
  eq(os.date("!%a %A %b %B", t), "Tue Tuesday Nov November", "names")
  eq(os.date("!%d %H %I %j %m %M %p %S", t), "14 22 10 318 11 13 PM 20", "numbers")
  eq(os.date("!%U %w %W %y %Y %%", t), "46 2 46 23 2023 %", "weeks and years")
  local d = os.date("!*t", t)
  eq(d.year, 2023, "year"); eq(d.month, 11, "month"); eq(d.day, 14, "day"); eq(d.hour, 22, "hour")
  eq(d.min, 13, "min"); eq(d.sec, 20, "sec"); eq(d.wday, 3, "wday (Sunday is 1)"); eq(d.yday, 318, "yday")
  eq(d.isdst, false, "isdst")
end
do -- week numbers around the new year
  eq(os.date("!%j %U %W %w", 1640995200), "001 00 00 6", "2022-01-01, a Saturday")
  eq(os.date("!%j %U %W %w", 1641081600), "002 01 00 0", "2022-01-02, a Sunday")
  eq(os.date("!%j %U %W %w", 1641168000), "003 01 01 1", "2022-01-03, a Monday")
  eq(os.date("!%I %p", 1641168000), "12 AM", "midnight is 12 AM")
  eq(os.date("!%I %p", 1641168000 + 12 * 3600), "12 PM", "noon is 12 PM")
end
do
  local t = os.time({year = 2023, month = 11, day = 14, hour = 12})
  eq(type(t), "number", "os.time of a table")
  eq(os.difftime(t + 60, t), 60, "difftime")
  eq(type(os.clock()), "number", "clock")
  eq(os.date("*t", t).day, 14, "local date of a local time")
end
return finish()
