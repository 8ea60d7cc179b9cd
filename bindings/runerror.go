package bindings

import (
	"errors"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
)

// RunError is an error that ends the run whatever protected call it
// crosses (pcall, xpcall, plan.check): the run's MAD budget used up
// (--max-mads, engine.ErrMADBudget), an allocation past the memory limit
// (*MemoryError). A check cannot fail or pass on a
// fabric the run may no longer query, so the run ends with status 2 and
// one message, instead of failed checks or a partial fabric.
type RunError struct {
	Fn   string // the Lua function that met it
	Err  error
	Hint string // Options.ErrorHint's text for Err
}

func (e *RunError) Error() string { return e.Fn + ": " + e.Err.Error() + e.Hint }

func (e *RunError) Unwrap() error { return e.Err }

func (*RunError) fatalError() {}

// endsRun reports whether err must end the run (RunError).
func endsRun(err error) bool { return errors.Is(err, engine.ErrMADBudget) }

// raiseRunError raises err as a RunError when it ends the run, and
// returns otherwise.
func raiseRunError(L *lua.LState, fn string, err error) {
	if err == nil || !endsRun(err) {
		return
	}
	raiseFatal(L, fn, err)
}

// raiseFatal raises err as a RunError.
func raiseFatal(L *lua.LState, fn string, err error) {
	ud := L.NewUserData()
	ud.Value = &RunError{Fn: fn, Err: err, Hint: errorHint(L, err)}
	L.Error(ud, 0)
}

// AsRunError reports whether err (from PCall or DoString) is a RunError,
// and returns it.
func AsRunError(err error) (*RunError, bool) {
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		if ud, ok := ae.Object.(*lua.LUserData); ok {
			if re, ok := ud.Value.(*RunError); ok {
				return re, true
			}
		}
	}
	var re *RunError
	if errors.As(err, &re) {
		return re, true
	}
	return nil, false
}
