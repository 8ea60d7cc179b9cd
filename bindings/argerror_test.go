package bindings

import (
	"math"
	"regexp"
	"testing"

	lua "github.com/yuin/gopher-lua"
)

// TestArgErrorNamesFunction: a wrong argument type or count names the
// module function in full and its parameter however the function was
// called: directly, through pcall (gopher-lua said "main chunk"), through
// a local alias, from inside another function, and as the seed pages'
// calls a script makes most (umad, rdmacm).
func TestArgErrorNamesFunction(t *testing.T) {
	for _, c := range []struct{ script, want string }{
		{`umad.poll(umad.open_port())`, `^<string>:1: bad argument #2 to umad\.poll \(timeout_ms: number expected, got no value\)$`},
		{`error(select(2, pcall(umad.poll, umad.open_port(), "x")), 0)`, `^bad argument #2 to umad\.poll \(timeout_ms: number expected, got string\)$`},
		{`error(select(2, pcall(umad.poll, 5, 1)), 0)`, `^bad argument #1 to umad\.poll \(port: umad\.port expected, got number\)$`},
		{`local r = umad.recv; r(umad.open_port(), {})`, `^<string>:1: bad argument #2 to umad\.recv \(timeout_ms: number expected, got table\)$`},
		// NaN is no timeout: it would have been Go's conversion of a
		// float past an int (a negative one on amd64, waiting forever).
		{`umad.poll(umad.open_port(), 0/0)`, `^<string>:1: bad argument #2 to umad\.poll \(timeout_ms: a number of milliseconds expected, got NaN\)$`},
		{`umad.recv(umad.open_port(), -(0/0))`, `^<string>:1: bad argument #2 to umad\.recv \(timeout_ms: a number of milliseconds expected, got NaN\)$`},
		{`umad.send(umad.open_port(), 0, string.rep("\0", 256), 0/0, 0)`, `^<string>:1: bad argument #4 to umad\.send \(timeout_ms: a number of milliseconds expected, got NaN\)$`},
		{`local t = {umad.send}; t[1](umad.open_port())`, `^<string>:1: bad argument #2 to umad\.send \(agent: integer expected, got no value\)$`},
		{`local function f() return umad.get_port({}) end f()`, `^<string>:1: bad argument #1 to umad\.get_port \(ca: string expected, got table\)$`},
		{`umad.release_port()`, `^<string>:1: bad argument #1 to umad\.release_port \(port_table: table expected, got no value\)$`},
		{`umad.send(umad.open_port(), 0, {}, 0, 0)`, `^<string>:1: bad argument #3 to umad\.send \(mad: string expected, got table\)$`},
		{`error(select(2, pcall(rdmacm.migrate_id)), 0)`, `^bad argument #1 to rdmacm\.migrate_id \(id: rdmacm\.id expected, got no value\)$`},
		{`error(select(2, pcall(help, 5)), 0)`, `^bad argument #1 to help \(x: function, module or name expected, got number\)$`},
		{`rdmacm.migrate_id(rdmacm.create_id(rdmacm.create_event_channel()), 5)`, `^<string>:1: bad argument #2 to rdmacm\.migrate_id \(channel: `},
	} {
		L, _, _ := newTestState(t)
		err := DoString(L, c.script)
		if err == nil {
			t.Errorf("%s: no error, want %s", c.script, c.want)
			continue
		}
		if msg := err.(*lua.ApiError).Object.String(); !regexp.MustCompile(c.want).MatchString(msg) {
			t.Errorf("%s:\n got %q\nwant %s", c.script, msg, c.want)
		}
	}
}

// TestArgErrorOfCallback: an argument error raised inside a Lua function
// that a module function called keeps the name of the function it was
// raised in; only errors of the module function's own frame are renamed.
func TestArgErrorOfCallback(t *testing.T) {
	L, env, _ := newTestState(t)
	mod := env.moduleTable(Module{Name: "cb", Funcs: []Func{{"call", func(_ *Env, L *lua.LState) int {
		L.CheckFunction(1)
		L.Push(L.Get(1))
		L.Call(0, 0)
		return 0
	}, "call(fn) -> nil: calls fn"}}})
	L.SetGlobal("cb", mod)
	for _, c := range []struct{ script, want string }{
		{`cb.call(function() bit.band({}) end)`, `bad argument #1 to bit\.band \(`},
		{`cb.call(function() string.rep() end)`, `bad argument #1 to 'rep' \(string expected, got no value\)`},
		{`cb.call(1)`, `bad argument #1 to cb\.call \(fn: function expected, got number\)`},
	} {
		err := DoString(L, c.script)
		if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("%s: %v, want %s", c.script, err, c.want)
		}
	}
}

func TestDocParams(t *testing.T) {
	for doc, want := range map[string][]string{
		"send(port, agent, mad, timeout_ms, retries [, addr]) -> nil: x": {"port", "agent", "mad", "timeout_ms", "retries", "addr"},
		"get_port([ca [, portnum]]) -> table":                            {"ca", "portnum"},
		"check(name, [category,] fn) -> string":                          {"name", "category", "fn"},
		"f({a=1}, ...) -> nil":                                           {"", ""},
		"migrate_id(id, channel | nil [, timeout_ms]) -> nil":            {"id", "channel", "timeout_ms"},
		"no signature": nil,
	} {
		got := docParams(doc)
		if len(got) != len(want) {
			t.Errorf("docParams(%q) = %q, want %q", doc, got, want)
			continue
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("docParams(%q) = %q, want %q", doc, got, want)
			}
		}
	}
}

// TestArgErrorOfMethod: a userdata's methods name their type and method,
// through pcall too.
func TestArgErrorOfMethod(t *testing.T) {
	L, _, _ := newTestState(t)
	for _, c := range []struct{ script, want string }{
		{`local p = umad.open_port(); p.close(5)`, `bad argument #1 to umad\.port:close \(umad\.port expected, got number\)`},
		{`local ch = rdmacm.create_event_channel(); error(select(2, pcall(ch.pending, {})), 0)`, `^bad argument #1 to rdmacm\.channel:pending \(`},
	} {
		err := DoString(L, c.script)
		if err == nil || !regexp.MustCompile(c.want).MatchString(err.Error()) {
			t.Errorf("%s: %v, want %s", c.script, err, c.want)
		}
	}
}

// TestTimeoutMSAsCInt: umad's timeout_ms arguments become a C int as
// checkTimeoutMS says, never by Go's conversion of a float64 out of an
// int's range: math.huge and 1e300 the longest wait, -math.huge a
// negative one (until a MAD comes), fractions cut toward zero.
func TestTimeoutMSAsCInt(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	conv := L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(checkTimeoutMS(L, 1)))
		return 1
	})
	for in, want := range map[float64]int{
		math.Inf(1): math.MaxInt32, 1e300: math.MaxInt32, 1e18: math.MaxInt32, 2147483648: math.MaxInt32,
		math.Inf(-1): math.MinInt32, -1e300: math.MinInt32, -1: -1, 0: 0, 2.9: 2, -2.9: -2, 2147483647: 2147483647,
	} {
		if err := L.CallByParam(lua.P{Fn: conv, NRet: 1, Protect: true}, lua.LNumber(in)); err != nil {
			t.Fatalf("%v: %v", in, err)
		}
		if got := int(L.Get(-1).(lua.LNumber)); got != want {
			t.Errorf("timeout_ms %v: %d, want %d", in, got, want)
		}
		L.Pop(1)
	}
}
