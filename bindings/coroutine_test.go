package bindings

import (
	"strings"
	"testing"
)

// TestCoroutineYieldAcrossMetamethod: a yield from a metamethod the
// virtual machine calls, or from a function a Go library function calls,
// is refused as Lua 5.1 refuses it, and the coroutine is dead after it
// (gopher-lua's own yield left a thread whose next resume was a Go nil
// dereference). It also pins the gopher-lua function names nestedLoops
// reads on the Go stack: a plain yield must still work.
func TestCoroutineYieldAcrossMetamethod(t *testing.T) {
	L, _, out := newTestStateOpts(t, &Options{})
	err := DoString(L, `
		local co = coroutine.create(function()
			local t = setmetatable({}, {__index = function(t, k) coroutine.yield(k) return 1 end})
			return t.x
		end)
		print(coroutine.resume(co))
		print(coroutine.resume(co))
		co = coroutine.create(function() table.sort({3, 2, 1}, function(a, b) coroutine.yield() return a < b end) end)
		print(coroutine.resume(co))
		co = coroutine.create(function() print(pcall(coroutine.yield)) return "after" end)
		print(coroutine.resume(co))
		co = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) return b * 2 end)
		print(co(1), co(10))
		print(pcall(coroutine.yield))
		print(coroutine.running())
	`)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"false\tattempt to yield across metamethod/C-call boundary",
		"false\tcannot resume dead coroutine",
		"false\tattempt to yield across metamethod/C-call boundary",
		"false\tattempt to yield across metamethod/C-call boundary",
		"true\tafter",
		"2\t20",
		"false\tattempt to yield across metamethod/C-call boundary",
		"nil",
		"",
	}, "\n")
	if got := out.String(); got != want {
		t.Errorf("printed\n%s\nwant\n%s", got, want)
	}
}
