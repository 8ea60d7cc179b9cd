package bindings

import (
	"slices"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
)

// The tools written as one diag.Tool value each (diag.Tools): one
// adapter makes each a function of the diag module, diag.NAME{...},
// taking every option the command line takes by its Lua key (the
// options struct's lua tags): booleans for flags, numbers for numbers
// (integers 0..the C tool's mask), strings, a string or a list of them
// for the arguments' rest, a LID or a target string for an address (a
// GUID resolved through the SA, as the command line's -G). An unknown
// key is an error naming it and the function.
func init() {
	for _, dt := range diag.Tools() {
		registerDiag(Func{dt.Lua, func(e *Env, L *lua.LState) int { return e.runDiagTool(L, dt) }, dt.LuaDoc}, dt.LuaExample)
	}
}

func (e *Env) runDiagTool(L *lua.LState, dt *diag.Tool) int {
	fn := "diag." + dt.Lua
	specs := dt.Options()
	var keys []string
	for _, s := range specs {
		if s.Lua != "" && s.Lua != "-" {
			keys = append(keys, s.Lua)
		}
	}
	slices.Sort(keys)
	t := diagOptions(L, fn, keys...)
	o := dt.NewOptions()
	env := e.diagEnv()
	env.CheckFile, env.WriteFile = filesOf(L).Check, filesOf(L).WriteFile
	env.Script = true
	var targets []*diag.OptionSpec
	for i := range specs {
		s := &specs[i]
		if s.Lua != "" && s.Pos >= 0 && s.Pos < dt.MinArgs && t.RawGetString(s.Lua) == lua.LNil {
			raise(L, fn, "%s is required (%s)", s.Lua, dt.Want)
		}
		if s.Lua == "" || s.Lua == "-" || t.RawGetString(s.Lua) == lua.LNil {
			continue
		}
		switch s.Kind {
		case diag.OptFlag:
			s.SetBool(o, optBool(L, fn, t, s.Lua))
		case diag.OptNumber:
			s.SetNumber(o, diagNum(L, fn, t, s.Lua, 0, s.Max))
		case diag.OptString:
			v, ok := t.RawGetString(s.Lua).(lua.LString)
			if !ok {
				raise(L, fn, "%s: want a string, got %s", s.Lua, t.RawGetString(s.Lua).Type())
			}
			s.SetString(o, string(v))
		case diag.OptStrings:
			s.SetStrings(o, diagStrings(L, fn, t, s.Lua))
		case diag.OptTarget:
			targets = append(targets, s)
		}
	}
	// What the C tool refuses before it reads an address, then the
	// addresses (none where the tool reads none: Unaddressed), as the
	// command line's order.
	if dt.Check != nil {
		if err := dt.Check(o); err != nil {
			raise(L, fn, "%v", err)
		}
	}
	for _, s := range targets {
		if dt.Unaddressed != nil && dt.Unaddressed(o) {
			break
		}
		tg, _, err := luaTarget(t.RawGetString(s.Lua))
		if err == nil {
			tg, err = env.ResolveTarget(L.Context(), tg)
		}
		if err != nil {
			raise(L, fn, "%s: %v", s.Lua, err)
		}
		s.SetTarget(o, tg)
	}
	r, err := dt.Run(L.Context(), env, o)
	return e.diagResult(L, fn, r, err)
}
