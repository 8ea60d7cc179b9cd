package bindings

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// PlanArg is one argument a plan declares in plan.define's args table:
// {default=, help=, choices={...}, min=, max=, integer=true,
// file="read"|"write"}. A --arg value is converted to the default's type
// and checked against the rest before the plan runs (PlanArg.check).
type PlanArg struct {
	Name    string
	Default lua.LValue
	Help    string
	Choices []string // the values it takes (compared without case); nil: any
	Min     *float64 // a number's bounds
	Max     *float64
	Integer bool   // a number must be whole
	File    string // "read": an existing regular file; "write": a file that can be created or replaced
}

// Type is the value's type as the help shows it.
func (a *PlanArg) Type() string {
	switch a.Default.(type) {
	case lua.LNumber:
		if a.Integer {
			return "integer"
		}
		return "number"
	case lua.LBool:
		return "boolean"
	}
	if a.File != "" {
		return "file"
	}
	return "string"
}

// Want says what the argument takes, for its help and its errors: "one of
// 1X, 4X", "an integer, 0 to 64", "an existing file".
func (a *PlanArg) Want() string {
	var parts []string
	switch {
	case len(a.Choices) > 0:
		parts = append(parts, "one of "+strings.Join(a.Choices, ", "))
	case a.Type() == "boolean":
		parts = append(parts, "true or false")
	case a.Type() == "integer":
		parts = append(parts, "an integer")
	case a.Type() == "number":
		parts = append(parts, "a number")
	case a.File == "read":
		parts = append(parts, "a readable file")
	case a.File == "write":
		parts = append(parts, "a file to write (its directory must exist)")
	}
	switch {
	case a.Min != nil && a.Max != nil:
		parts = append(parts, fmt.Sprintf("%g to %g", *a.Min, *a.Max))
	case a.Min != nil:
		parts = append(parts, fmt.Sprintf("at least %g", *a.Min))
	case a.Max != nil:
		parts = append(parts, fmt.Sprintf("at most %g", *a.Max))
	}
	return strings.Join(parts, ", ")
}

// DefaultText is the default as the help shows it.
func (a *PlanArg) DefaultText() string {
	switch v := a.Default.(type) {
	case *lua.LNilType:
		return "none"
	case lua.LString:
		return strconv.Quote(string(v))
	default:
		return v.String()
	}
}

// PlanSpec is what plan.define declares: Options.PlanHelp receives it.
type PlanSpec struct {
	Name        string
	Description string
	Args        []PlanArg // sorted by name
}

// ArgError is a --arg the plan refuses: an unknown key, or a value that
// is not what the argument takes. It ends the run (status 2 in
// cmd/ibscript) before any check, whatever pcall it crosses.
type ArgError struct {
	Key, Value string
	Msg        string
}

func (e *ArgError) Error() string {
	return fmt.Sprintf("--arg %s=%s: %s", e.Key, e.Value, e.Msg)
}

// AsArgError reports whether err (from a run) is a --arg the plan
// refused, and returns it.
func AsArgError(err error) (*ArgError, bool) {
	if re, ok := AsRunError(err); ok {
		err = re
	}
	var ae *ArgError
	if errors.As(err, &ae) {
		return ae, true
	}
	return nil, false
}

// readPlanArg reads one declaration of plan.define's args.
func readPlanArg(L *lua.LState, name string, st *lua.LTable) PlanArg {
	checkOptions(L, "plan.define", st, map[string]bool{"default": true, "help": true, "choices": true, "min": true, "max": true, "integer": true, "file": true})
	a := PlanArg{Name: name, Default: st.RawGetString("default")}
	field := func(k string) lua.LValue { return st.RawGetString(k) }
	bad := func(k, want string) {
		raise(L, "plan.define", "args.%s.%s: %s expected, got %s", name, k, want, field(k).Type())
	}
	switch v := field("help").(type) {
	case lua.LString:
		a.Help = string(v)
	case *lua.LNilType:
	default:
		bad("help", "string")
	}
	switch v := field("choices").(type) {
	case *lua.LTable:
		for i := 1; i <= v.Len(); i++ {
			switch c := v.RawGetInt(i).(type) {
			case lua.LString, lua.LNumber:
				a.Choices = append(a.Choices, c.String())
			default:
				raise(L, "plan.define", "args.%s.choices[%d]: string or number expected, got %s", name, i, c.Type())
			}
		}
	case *lua.LNilType:
	default:
		bad("choices", "table")
	}
	for _, k := range []string{"min", "max"} {
		switch v := field(k).(type) {
		case lua.LNumber:
			f := float64(v)
			if k == "min" {
				a.Min = &f
			} else {
				a.Max = &f
			}
		case *lua.LNilType:
		default:
			bad(k, "number")
		}
	}
	switch v := field("integer").(type) {
	case lua.LBool:
		a.Integer = bool(v)
	case *lua.LNilType:
	default:
		bad("integer", "boolean")
	}
	switch v := field("file").(type) {
	case lua.LString:
		if v != "read" && v != "write" {
			raise(L, "plan.define", "args.%s.file: \"read\" or \"write\" expected, got %q", name, string(v))
		}
		a.File = string(v)
	case *lua.LNilType:
	default:
		bad("file", "string")
	}
	return a
}

// check converts the command line's value s to the argument's type and
// checks it against the declaration; the default is always taken as it is.
func (a *PlanArg) check(s string) (lua.LValue, error) {
	v, err := convertArg(a.Default, s)
	if err != nil {
		return nil, err
	}
	if lua.LVAsString(a.Default) == s && a.Default != lua.LNil {
		return v, nil // the default itself ("": not checked)
	}
	if len(a.Choices) > 0 {
		i := slices.IndexFunc(a.Choices, func(c string) bool { return strings.EqualFold(c, s) })
		if i < 0 {
			return nil, errors.New("want " + a.Want())
		}
		if _, isStr := v.(lua.LString); isStr {
			v = lua.LString(a.Choices[i]) // the declared spelling
		}
	}
	if n, ok := v.(lua.LNumber); ok {
		f := float64(n)
		if math.IsNaN(f) || math.IsInf(f, 0) || (a.Integer && f != math.Trunc(f)) ||
			(a.Min != nil && f < *a.Min) || (a.Max != nil && f > *a.Max) {
			return nil, errors.New("want " + a.Want())
		}
	}
	switch a.File {
	case "read":
		fi, err := os.Stat(s)
		switch {
		case err != nil:
			return nil, fmt.Errorf("want a readable file: %v", pathReason(err))
		case !fi.Mode().IsRegular():
			return nil, fmt.Errorf("want a readable file, not a %s", modeName(fi.Mode()))
		}
	case "write":
		if s == "" {
			return nil, errors.New("want a file name")
		}
		if fi, err := os.Stat(s); err == nil && !fi.Mode().IsRegular() {
			return nil, fmt.Errorf("want a file to write, not a %s", modeName(fi.Mode()))
		}
		dir := filepath.Dir(s)
		if fi, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("want a file to write: its directory %s: %v", dir, pathReason(err))
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("want a file to write: %s is not a directory", dir)
		}
	}
	return v, nil
}

// pathReason is a path error without the path (the message names it).
func pathReason(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func modeName(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "FIFO"
	case m&os.ModeDevice != 0:
		return "device"
	case m&os.ModeSocket != 0:
		return "socket"
	}
	return "special file"
}

// raiseArgError ends the run with a refused --arg (an ArgError, raised as
// a RunError so no pcall turns it into a failed check).
func raiseArgError(L *lua.LState, e *ArgError) {
	ud := L.NewUserData()
	ud.Value = &RunError{Fn: "plan.define", Err: e}
	L.Error(ud, 0)
}
