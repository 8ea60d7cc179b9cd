package main

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
)

// callee matches a call in Lua source: a dotted (or method) name followed
// by an argument list, a table or a string.
var callee = regexp.MustCompile(`([A-Za-z_]\w*(?:\s*[.:]\s*[A-Za-z_]\w*)*)\s*[({"']`)

// chunkLine matches the "name:N: " position gopher-lua puts in front of
// an error.
var chunkLine = regexp.MustCompile(`^([^:\n]+):(\d+): `)

// lua51Call matches Lua 5.1's message for a call of a value that is not a
// function, as ibscript gives it (bindings/lua51err.go).
// Only a global, a field or a method can be looked up from the globals.
var lua51Call = regexp.MustCompile(`attempt to call (?:(?:global|field|method) '([^'\n]*)' \()?a \w+ value\)?`)

// explainCall adds to a failed call's message what a reader needs next:
// the nearest name that is a function ("attempt to call field 'nodeinf'
// (a nil value); did you mean smp.nodeinfo?"). Where the message is
// still gopher-lua's "attempt to call a non-function object" (the call's
// value could not be told, lua51err.go), it says which name is not a
// function and what it is instead. It looks names up with RawGet only,
// so nothing runs; other messages, and calls it cannot name (locals,
// results of calls), are returned unchanged.
func explainCall(L *lua.LState, src, msg string) string {
	const what = "attempt to call a non-function object"
	i := strings.Index(msg, what)
	lua51, called := false, ""
	if i < 0 {
		m := lua51Call.FindStringSubmatchIndex(msg)
		if m == nil || m[2] < 0 {
			return msg // a value without a name: nothing to look up
		}
		i, lua51, called = m[0], true, msg[m[2]:m[3]]
	}
	lines := strings.Split(src, "\n")
	line := src
	if m := chunkLine.FindStringSubmatch(msg); m != nil {
		if n, err := strconv.Atoi(m[2]); err == nil && n >= 1 && n <= len(lines) {
			line = lines[n-1]
		}
	}
	for _, m := range callee.FindAllStringSubmatch(line, -1) {
		name := strings.Join(strings.Fields(m[1]), "")
		parts := strings.FieldsFunc(name, func(r rune) bool { return r == '.' || r == ':' })
		if lua51 && parts[len(parts)-1] != called {
			continue // another call on the line
		}
		var v lua.LValue = L.G.Global
		var parent *lua.LTable
		for _, p := range parts {
			t := fieldsOf(L, v)
			if t == nil {
				v = nil
				break
			}
			parent, v = t, t.RawGetString(p)
		}
		if v == nil {
			continue // not resolvable from globals (a call result, a field of a local)
		}
		if _, ok := v.(*lua.LFunction); ok {
			continue
		}
		if mt, ok := L.GetMetatable(v).(*lua.LTable); ok && mt.RawGetString("__call") != lua.LNil {
			continue
		}
		hint := ""
		if s := nearest(parent, parts[len(parts)-1]); s != "" {
			hint = fmt.Sprintf("; did you mean %s?", name[:len(name)-len(parts[len(parts)-1])]+s)
		}
		if lua51 {
			end := strings.IndexByte(msg[i:], '\n')
			if end < 0 {
				return msg + hint
			}
			return msg[:i+end] + hint + msg[i+end:]
		}
		return msg[:i] + fmt.Sprintf("%s is not a function (%s)", name, v.Type()) + hint + msg[i+len(what):]
	}
	return msg
}

// nearest is the function key of t closest to name (edit distance at most
// a third of its length, at least 2), "" when none is.
func nearest(t *lua.LTable, name string) string {
	if t == nil {
		return ""
	}
	best, bestD := "", max(2, len(name)/3)+1
	t.ForEach(func(k, v lua.LValue) {
		ks, ok := k.(lua.LString)
		if !ok || bindings.HiddenKey(k) || v.Type() != lua.LTFunction {
			return
		}
		if d := bindings.EditDistance(name, string(ks)); d < bestD || d == bestD && string(ks) < best {
			best, bestD = string(ks), d
		}
	})
	return best
}

// replError is how the REPL shows an error: its message, without the
// traceback (a REPL line is its own context), without the "stdin:1: "
// position of a one-line chunk, and naming the missing function of a
// failed call.
func replError(L *lua.LState, src string, err error) string {
	msg := explainCall(L, src, errorMessage(err))
	if !strings.Contains(src, "\n") {
		if m := chunkLine.FindStringSubmatch(msg); m != nil && m[1] == "stdin" {
			msg = msg[len(m[0]):]
		}
	}
	return msg
}
