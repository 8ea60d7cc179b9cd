package bindings

import (
	"regexp"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// gopher-lua's argument errors (ArgError, CheckInt, CheckString, ...) name
// the function as the calling frame spelled it: "poll" for umad.poll(...),
// but "main chunk" or "(anonymous)" when pcall, a local alias or a table
// of functions made the call. Every module function therefore rewrites
// them to name itself in full and, from its doc line, the parameter:
// "bad argument #2 to umad.poll (timeout_ms: number expected, got no value)".

// argErrorRE finds gopher-lua's "bad argument #N to NAME (" after the
// "file:line: " prefix (or " " on a protected call's own thread); NAME may itself hold parentheses ("(anonymous)").
var argErrorRE = regexp.MustCompile(`^([^\n]*?)bad argument #(\d+) to (.*?) \(`)

// docParams returns the parameter names of a doc line's signature,
// "send(port, agent, mad, timeout_ms, retries [, addr]) -> nil" gives
// port, agent, mad, timeout_ms, retries, addr ("channel | nil" gives
// channel); a parameter that is not a plain name ("..." or "{...}") is "".
func docParams(doc string) []string {
	open := strings.IndexByte(doc, '(')
	end := strings.Index(doc, ")")
	if open < 0 || end < open {
		return nil
	}
	var names []string
	for _, p := range strings.Split(doc[open+1:end], ",") {
		p = strings.Trim(p, " []")
		if i := strings.Index(p, " |"); i > 0 { // "channel | nil"
			p = p[:i]
		}
		if !plainName(p) {
			p = ""
		}
		names = append(names, p)
	}
	return names
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// namedFunction makes fn a Lua function whose argument errors name it
// (name, "umad.poll") and its parameters (from doc's signature).
func namedFunction(L *lua.LState, name, doc string, fn lua.LGFunction) *lua.LFunction {
	params := docParams(doc)
	var lf *lua.LFunction
	lf = L.NewFunction(func(L *lua.LState) int {
		defer nameArgError(L, lf, name, params)
		return fn(L)
	})
	return lf
}

// namedMethods is the __index table of a userdata type's methods, each
// named "type:method" in its argument errors ("umad.port:close").
func namedMethods(L *lua.LState, typeName string, methods map[string]lua.LGFunction) *lua.LTable {
	t := L.CreateTable(0, len(methods))
	for name, fn := range methods {
		t.RawSetString(name, namedFunction(L, typeName+":"+name, "", fn))
	}
	return t
}

// nameArgError is deferred by every module function lf, called as name
// with the given parameters: an argument error raised in lf's own frame
// (not in a Lua callback it called) gets its function and parameter
// named, and the panic goes on.
func nameArgError(L *lua.LState, lf *lua.LFunction, name string, params []string) {
	r := recover()
	if r == nil {
		return
	}
	if ae, ok := r.(*lua.ApiError); ok {
		if s, ok := ae.Object.(lua.LString); ok && inFrame(L, lf) {
			ae.Object = lua.LString(renameArgError(string(s), name, params))
		}
	}
	panic(r)
}

// inFrame tells whether lf is the function running at the top of L.
func inFrame(L *lua.LState, lf *lua.LFunction) bool {
	dbg, ok := L.GetStack(0)
	if !ok {
		return false
	}
	fn, err := L.GetInfo("f", dbg, lua.LNil)
	return err == nil && fn == lf
}

// renameArgError rewrites msg's "bad argument #N to X (" to name the
// function and, when known, the parameter; other messages are unchanged.
func renameArgError(msg, name string, params []string) string {
	m := argErrorRE.FindStringSubmatchIndex(msg)
	if m == nil {
		return msg
	}
	n := msg[m[4]:m[5]]
	param := ""
	if i := atoi(n) - 1; i >= 0 && i < len(params) && params[i] != "" {
		param = params[i] + ": "
	}
	return msg[:m[3]] + "bad argument #" + n + " to " + name + " (" + param + msg[m[1]:]
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if n > 1<<20 {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}
