package bindings

import (
	"context"
	"errors"
	"fmt"
	"math"
	goos "os"
	"path/filepath"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// NewState makes the LState ibscript runs scripts in: the base, package,
// table, string, math and coroutine libraries, a safe subset of os (time, clock,
// date, getenv, exit), and every ibscript module. Scripts cannot load
// native code. Chunks compile through Load and protected calls run through
// PCall's threads, which correct gopher-lua's wrong answers (docs/lua.md).
// The caller closes the Env, then the LState.
func NewState(ctx context.Context, opts *Options) (*lua.LState, *Env, error) {
	L := lua.NewState(stateOptions)
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
		{lua.OsLibName, lua.OpenOs},
	} {
		L.Push(L.NewFunction(lib.fn))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	restrictOS(L)
	installLoaders(L)
	installPcall(L, poolOf(L))
	installErrorFn(L, poolOf(L))
	installCoroutines(L, poolOf(L))
	installLibFixes(L)
	L.SetContext(ctx)
	e, err := Open(L, opts)
	if err != nil {
		L.Close()
		return nil, nil, err
	}
	if opts.ScriptDir != "" {
		AddScriptDir(L, opts.ScriptDir)
	}
	return L, e, nil
}

// stateOptions sizes a state as Lua 5.1 does rather than as gopher-lua's
// defaults do (256 call frames, a fixed 5,120-slot data stack, so
// table.concat of a few thousand strings failed with "registry
// overflow"): up to 8,000 nested calls on a call stack that grows as
// needed, and a data stack that grows from 4,096 slots to a million.
// Lua 5.1 allows 20,000 (LUAI_MAXCALLS), but gopher-lua builds an error's
// traceback in time quadratic in the depth (0.15 s at 8,000, 1 s at
// 20,000). Threads made for protected calls inherit it.
var stateOptions = lua.Options{
	SkipOpenLibs:        true,
	CallStackSize:       8000,
	MinimizeStackMemory: true,
	RegistrySize:        4096,
	RegistryMaxSize:     1 << 20,
	RegistryGrowStep:    4096,
}

// AddScriptDir lets require find modules in dir and in dir/checks before
// the paths package.path had: what Options.ScriptDir does, for a state
// made otherwise.
func AddScriptDir(L *lua.LState, dir string) {
	pkg, ok := L.GetGlobal("package").(*lua.LTable)
	if !ok {
		return
	}
	old := lua.LVAsString(pkg.RawGetString("path"))
	p := filepath.Join(dir, "?.lua") + ";" + filepath.Join(dir, "checks", "?.lua")
	if old != "" {
		p += ";" + old
	}
	pkg.RawSetString("path", lua.LString(p))
}

// ExitError is the error a script raises with os.exit(code): the runner
// turns it into the process's exit status after closing what the script
// opened. Lua's own os.exit would end the process on the spot.
type ExitError struct{ Code int }

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// AsExit reports whether err (from PCall or DoString) is a script's
// os.exit, and its code.
func AsExit(err error) (int, bool) {
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		if ud, ok := ae.Object.(*lua.LUserData); ok {
			if ee, ok := ud.Value.(*ExitError); ok {
				return ee.Code, true
			}
		}
	}
	return 0, false
}

// IsKeyVariable reports whether the environment variable name holds a
// key (IBSCRIPT_MKEY, IBSCRIPT_SMKEY, and any later IBSCRIPT_*KEY*): the
// one rule that hides them from os.getenv, which returns nil for them as
// for an unset variable.
func IsKeyVariable(name string) bool {
	n := strings.ToUpper(name)
	return strings.HasPrefix(n, "IBSCRIPT_") && strings.Contains(n, "KEY")
}

// restrictOS keeps the parts of os a plan needs and replaces exit.
func restrictOS(L *lua.LState) {
	os, ok := L.GetGlobal("os").(*lua.LTable)
	if !ok {
		return
	}
	keep := map[string]bool{"time": true, "clock": true, "date": true, "getenv": true, "difftime": true}
	var drop []string
	os.ForEach(func(k, _ lua.LValue) {
		if !keep[k.String()] {
			drop = append(drop, k.String())
		}
	})
	for _, k := range drop {
		os.RawSetString(k, lua.LNil)
	}
	os.RawSetString("getenv", L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(1)
		v, ok := goos.LookupEnv(name)
		if !ok || IsKeyVariable(name) {
			L.Push(lua.LNil)
			return 1
		}
		L.Push(lua.LString(v))
		return 1
	}))
	os.RawSetString("exit", L.NewFunction(func(L *lua.LState) int {
		code := 0
		switch v := L.Get(1).(type) {
		case lua.LBool:
			if !v {
				code = 1
			}
		case lua.LNumber:
			// A status is a byte: the kernel keeps the low 8 bits, so
			// os.exit(256) would exit 0, a wrong "passed".
			if v != lua.LNumber(math.Trunc(float64(v))) || v < 0 || v > 255 {
				L.ArgError(1, fmt.Sprintf("exit status %v is not an integer in 0..255", v))
			}
			code = int(v)
		case *lua.LNilType:
		default:
			L.ArgError(1, "number or boolean expected")
		}
		ud := L.NewUserData()
		ud.Value = &ExitError{Code: code}
		L.Error(ud, 0)
		return 0
	}))
}
