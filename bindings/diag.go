package bindings

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// The diag module: the infiniband-diags tools as functions returning
// tables (diag.linkinfo{...}, diag.queryerrors{...}, ...). A tool
// written as one diag.Tool value gets its function from diag_tool.go's
// adapter; the others' functions live in their own file,
// bindings/diag_NAME.go, and register themselves with registerDiag from
// an init(); the data comes from the diag
// package, the same the command line prints. A tool's table is its
// --format json value (docs/diag/NAME.schema.json) as Lua: objects are
// tables with the same keys, arrays are sequences, GUIDs "0x..." strings.

// diagFuncs are the registered functions, in registration order.
var diagFuncs []Func

// registerDiag adds a function to the diag module with its example (run
// by TestExamples on the bundled simulated fabric, shown in the API
// reference).
func registerDiag(f Func, example string) {
	if slices.ContainsFunc(diagFuncs, func(g Func) bool { return g.Name == f.Name }) {
		panic("bindings: diag." + f.Name + " registered twice")
	}
	diagFuncs = append(diagFuncs, f)
	examples["diag."+f.Name] = example
}

func diagModule() Module {
	fs := slices.Clone(diagFuncs)
	slices.SortFunc(fs, func(a, b Func) int { return strings.Compare(a.Name, b.Name) })
	return Module{
		Name:    "diag",
		Summary: "the infiniband-diags tools' data as tables (the same as `ibscript TOOL --format json`, docs/diag.md)",
		Funcs:   fs,
	}
}

// diagEnv is the diag package's environment on the script's session and
// node-name-map.
func (e *Env) diagEnv() *diag.Env {
	env := &diag.Env{Session: e.sess, NodeNames: e.names, Version: e.diagsVer}
	if e.fab != nil {
		env.Ports = e.fab.Ports
		if ps, ok := e.fab.(interface {
			PortSpeed(ctx context.Context, ca string, port int) (uint64, error)
		}); ok {
			env.PortSpeed = ps.PortSpeed // ibstat's effective speed (the simulator's)
		}
	}
	if e.progress != nil {
		env.Progress = func(nodes, _ int) { e.progress(nodes, 0, "diag: nodes found") }
	}
	return env
}

// diagOptions returns the option table at argument 1 (an empty one when
// the call has none), refusing keys the function does not know.
func diagOptions(L *lua.LState, fn string, known ...string) *lua.LTable {
	switch v := L.Get(1).(type) {
	case *lua.LNilType:
		return L.NewTable()
	case *lua.LTable:
		k := map[string]bool{}
		for _, n := range known {
			k[n] = true
		}
		checkOptions(L, fn, v, k)
		return v
	default:
		raise(L, fn, "want an option table {...}, got %s", v.Type())
		return nil
	}
}

// diagResult pushes v, a tool's data, as the table its JSON makes. A
// partial discovery (diag.DiscoveryErrors) returns the table and the
// error's text as second value; any other error is raised.
func (e *Env) diagResult(L *lua.LState, fn string, v any, err error) int {
	var partial diag.DiscoveryErrors
	var failed *diag.CheckFailed
	if errors.As(err, &failed) {
		err = nil // the fault found is in the data (ibidsverify's problems)
	}
	if err != nil && !errors.As(err, &partial) {
		raise(L, fn, "%v", err)
	}
	b, merr := json.Marshal(v)
	if merr != nil {
		raise(L, fn, "%v", merr)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var val any
	if derr := dec.Decode(&val); derr != nil {
		raise(L, fn, "%v", derr)
	}
	L.Push(jsonToLua(L, val))
	if partial != nil {
		all := true
		for _, te := range partial {
			all = all && e.unreadable(te.Err)
		}
		if all {
			noteUnread(L, partial.Error()) // routes that could not be read: nothing about the fabric
		}
		L.Push(lua.LString(partial.Error()))
		return 2
	}
	return 1
}

// jsonToLua converts a decoded JSON value (UseNumber) to Lua.
func jsonToLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case string:
		return lua.LString(x)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return lua.LString(x.String())
		}
		return lua.LNumber(f)
	case []any:
		t := L.CreateTable(len(x), 0)
		for _, el := range x {
			t.Append(jsonToLua(L, el))
		}
		return t
	case map[string]any:
		t := L.CreateTable(0, len(x))
		for k, el := range x {
			t.RawSetString(k, jsonToLua(L, el))
		}
		return t
	}
	panic(fmt.Sprintf("bindings: JSON value of type %T", v))
}
