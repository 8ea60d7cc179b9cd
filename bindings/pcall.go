package bindings

import (
	"errors"
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// Protected calls (docs/lua.md, "Corrections"). When an error is raised
// outside an xpcall handler, gopher-lua v1.1.2 closes every open upvalue of
// every frame of the state, not only of the frames the error unwinds
// (upstream issue 448). A closure that shares a local with a frame still
// running then writes a private copy from that moment on:
//
//	local x = 0
//	local function f(fn) x = x + 1; pcall(fn, "e") end
//	f(error); f(error); f(error); print(x)   -- gopher-lua: 1, Lua 5.1: 3
//
// ibscript therefore runs every protected call (Lua's pcall and xpcall, and
// the Go side's PCall: plan.check, the REPL, the runner, the test driver)
// on a thread of its own (L.NewThread): an error unwinds and closes only
// that thread's frames, which are exactly the frames Lua 5.1 unwinds. The
// callee's closures and upvalues are the caller's own values, so writes to
// them land where the caller sees them. A thread that returned normally
// has closed all its upvalues and is kept for the next call; one that
// failed is dropped.

// threads keeps the finished threads of one Lua state for reuse. Threads
// share their state's globals, so one pool serves a state and its threads.
type threads struct {
	free []*lua.LState
	// parent maps a running thread to the state whose protected call runs
	// it, so that error levels count past the thread into its caller.
	parent map[*lua.LState]*lua.LState
	// errorFn is the error function installErrorFn made, nil before.
	errorFn *lua.LFunction
	// depth counts the protected calls running inside one another.
	depth int
	// entry is the Go function at the bottom of every protected call's
	// thread (lua51err.go), nil before the first.
	entry *lua.LFunction
	// ops are the operator functions of the state's chunks by their
	// constant (lua51ops.go), opFns the same functions as a set.
	ops   map[string]*lua.LFunction
	opFns map[*lua.LFunction]bool
}

// maxFreeThreads bounds the pool: protected calls nest only so deep.
const maxFreeThreads = 8

// maxNesting bounds protected calls inside one another, as Lua 5.1 bounds
// nested C calls (LUAI_MAXCCALLS): each is a Go call and a thread, so
// unbounded nesting would end in Go's fatal stack overflow.
const maxNesting = 200

func (p *threads) get(L *lua.LState) *lua.LState {
	var co *lua.LState
	if n := len(p.free); n > 0 {
		co = p.free[n-1]
		p.free = p.free[:n-1]
	} else {
		var cancel func()
		co, cancel = L.NewThread()
		if cancel != nil {
			cancel() // the thread runs under its caller's context, set below
		}
	}
	if ctx := L.Context(); ctx != nil {
		co.SetContext(ctx)
	} else {
		co.RemoveContext()
	}
	if p.parent == nil {
		p.parent = make(map[*lua.LState]*lua.LState)
	}
	p.parent[co] = L
	return co
}

func (p *threads) put(co *lua.LState) {
	delete(p.parent, co)
	co.SetTop(0)
	co.RemoveContext()
	if len(p.free) < maxFreeThreads {
		p.free = append(p.free, co)
	}
}

// call runs fn(args...) on a thread of its own and returns its results
// (all of them when nret is lua.MultRet). The error is the callee's, an
// *lua.ApiError as L.PCall returns it.
func (p *threads) call(L *lua.LState, fn lua.LValue, nret int, args []lua.LValue) ([]lua.LValue, error) {
	if p.depth >= maxNesting {
		return nil, &lua.ApiError{Type: lua.ApiErrorRun, Object: lua.LString("stack overflow (protected calls nested deeper than 200)")}
	}
	p.depth++
	defer func() { p.depth-- }()
	co := p.get(L)
	co.Push(p.entryFn(L))
	co.Push(fn)
	for _, a := range args {
		co.Push(a)
	}
	if err := co.PCall(len(args)+1, nret, nil); err != nil {
		delete(p.parent, co) // the thread is dropped: it may hold frames' leftovers
		var ae *lua.ApiError
		if errors.As(err, &ae) && ae.Object == lua.LString("lua callstack overflow") {
			// gopher-lua's Go panic when a Go function's call finds the
			// call stack full; 5.1 says "stack overflow".
			ae.Object = lua.LString("stack overflow")
		}
		return nil, p.directGoError(fn, err)
	}
	n := co.GetTop()
	var rets []lua.LValue
	if n > 0 {
		rets = make([]lua.LValue, n)
		for i := range n {
			rets[i] = co.Get(i + 1)
		}
	}
	p.put(co)
	return rets, nil
}

// entryFn is the function every protected call's thread starts with: it
// sets the thread's Panic, which gopher-lua calls where an error is
// raised, before any frame unwinds and without a frame of its own (where
// Lua 5.1's wording of a runtime error can be found, lua51err.go), then
// calls the callee with the arguments. It stands, at the bottom of the
// thread, where Lua 5.1 has pcall (a C function) itself.
func (p *threads) entryFn(L *lua.LState) *lua.LFunction {
	if p.entry == nil {
		p.entry = L.NewFunction(func(L *lua.LState) int {
			L.Panic = raiseLua51
			defer positionOverflow(L)
			L.Call(L.GetTop()-1, lua.MultRet)
			return L.GetTop()
		})
	}
	return p.entry
}

// positionOverflow turns gopher-lua's Go panic for a full call stack,
// "lua callstack overflow", into Lua 5.1's error, "file.lua:1: stack
// overflow" at the innermost Lua function, raised as errors are (the
// thread's frames are still there while the panic passes the entry
// function). Other panics go on.
func positionOverflow(L *lua.LState) {
	r := recover()
	if r == nil {
		return
	}
	if s, ok := r.(string); !ok || s != "lua callstack overflow" {
		panic(r)
	}
	msg := "stack overflow"
	for level := 0; level < 8; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err == nil && dbg.CurrentLine > 0 {
			msg = fmt.Sprintf("%s:%d: %s", dbg.Source, dbg.CurrentLine, msg)
			break
		}
	}
	L.Error(lua.LString(msg), 0)
}

// raiseLua51 is the Panic of protected calls' threads: gopher-lua's own
// (it panics with the value on top of L as an ApiError), with a message
// string first given Lua 5.1's words (lua51ErrorMessage).
func raiseLua51(L *lua.LState) {
	obj := L.Get(-1)
	if s, ok := obj.(lua.LString); ok {
		obj = lua.LString(safeLua51Message(L, string(s)))
	}
	panic(&lua.ApiError{Type: lua.ApiErrorRun, Object: obj})
}

// safeLua51Message is lua51ErrorMessage, which reads the failing frame
// through the debug API; should it fail on a frame it did not foresee, the
// message stays gopher-lua's rather than the error being lost.
func safeLua51Message(L *lua.LState, msg string) (out string) {
	defer func() {
		if recover() != nil {
			out = msg
		}
	}()
	return lua51ErrorMessage(L, msg)
}

// directGoError corrects the message of an error raised by a Go function
// that the protected call called directly: gopher-lua prefixes the position
// of the nearest Lua frame and a space, and on a thread of its own there is
// none, which leaves " message". Lua 5.1 gives "message" (the caller is
// pcall, a C function, which has no position).
func (p *threads) directGoError(fn lua.LValue, err error) error {
	f, ok := fn.(*lua.LFunction)
	if !ok || !f.IsG || f == p.errorFn {
		return err
	}
	var ae *lua.ApiError
	if !errors.As(err, &ae) {
		return err
	}
	if msg, ok := ae.Object.(lua.LString); ok && strings.HasPrefix(string(msg), " ") {
		ae.Object = msg[1:]
	}
	return err
}

// where is Lua 5.1's luaL_where: "chunk:line:" of the function level
// levels up the stack of L (1 is the function that called the running Go
// function), or "" for a Go function. Levels go on past a protected call's
// thread into the state that made the call, whose running function is the
// protected call itself.
func (p *threads) where(L *lua.LState, level int) string {
	for depth := 0; depth < 64 && L != nil; depth++ {
		if dbg, ok := L.GetStack(level); ok {
			if _, err := L.GetInfo("Sl", dbg, nil); err != nil || dbg.CurrentLine <= 0 {
				return ""
			}
			return fmt.Sprintf("%s:%d:", dbg.Source, dbg.CurrentLine)
		}
		n := 0
		for {
			if _, ok := L.GetStack(n); !ok {
				break
			}
			n++
		}
		// The thread's bottom frame, its entry function, was the level of
		// the protected call; the parent's level 0 is that call again.
		level -= n - 1
		L = p.parent[L]
	}
	return ""
}

// installErrorFn replaces error with Lua 5.1's: error() raises nil; a string
// or number message gets the position of the function level levels up
// (default 1), counted across protected calls.
func installErrorFn(L *lua.LState, p *threads) {
	p.errorFn = L.NewFunction(func(L *lua.LState) int {
		obj := L.Get(1)
		level := optInt(L, 2, 1)
		if msg, ok := valueText(obj); ok && level > 0 {
			if w := p.where(L, level); w != "" {
				msg = w + " " + msg
			}
			L.Error(lua.LString(msg), 0)
		}
		L.Error(obj, 0)
		return 0
	})
	L.SetGlobal("error", p.errorFn)
}

// fatal is implemented by error values that no protected call may catch:
// they end the run (os.exit, and the limits the runner enforces).
type fatal interface{ fatalError() }

func (*ExitError) fatalError() {}

// uncatchable reports whether a protected call must pass err on instead of
// returning it to Lua: the run's context ended (interrupt, --time-limit),
// or the error is fatal.
func uncatchable(L *lua.LState, err error) bool {
	if ctx := L.Context(); ctx != nil && ctx.Err() != nil {
		return true
	}
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		if ud, ok := ae.Object.(*lua.LUserData); ok {
			_, isFatal := ud.Value.(fatal)
			return isFatal
		}
	}
	return false
}

// rethrow raises err again in L, as it was raised in the callee's thread.
func rethrow(L *lua.LState, err error) {
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		L.Error(ae.Object, 0)
	}
	L.RaiseError("%s", err.Error())
}

// installPcall replaces the base library's pcall and xpcall.
func installPcall(L *lua.LState, p *threads) {
	L.SetGlobal("pcall", L.NewFunction(func(L *lua.LState) int {
		fn := L.CheckAny(1)
		args := make([]lua.LValue, L.GetTop()-1)
		for i := range args {
			args[i] = L.Get(i + 2)
		}
		rets, err := p.call(L, fn, lua.MultRet, args)
		if err != nil {
			if uncatchable(L, err) {
				rethrow(L, err)
			}
			L.Push(lua.LFalse)
			L.Push(errorObject(err))
			return 2
		}
		L.Push(lua.LTrue)
		for _, v := range rets {
			L.Push(v)
		}
		return len(rets) + 1
	}))
	L.SetGlobal("xpcall", L.NewFunction(func(L *lua.LState) int {
		handler := L.CheckAny(2) // 5.1's luaB_xpcall checks the handler first
		fn := L.Get(1)
		rets, err := p.call(L, fn, lua.MultRet, nil)
		if err == nil {
			L.Push(lua.LTrue)
			for _, v := range rets {
				L.Push(v)
			}
			return len(rets) + 1
		}
		if uncatchable(L, err) {
			rethrow(L, err)
		}
		// Lua 5.1 calls the handler with the error object and returns its
		// first result; an error in the handler (a non-function handler
		// included) gives "error in error handling".
		msg, herr := p.call(L, handler, 1, []lua.LValue{errorObject(err)})
		L.Push(lua.LFalse)
		switch {
		case herr != nil && uncatchable(L, herr):
			rethrow(L, herr)
		case herr != nil:
			L.Push(lua.LString("error in error handling"))
		default:
			L.Push(msg[0])
		}
		return 2
	}))
}

// errorObject is the value a Lua error carried.
func errorObject(err error) lua.LValue {
	var ae *lua.ApiError
	if errors.As(err, &ae) && ae.Object != nil {
		return ae.Object
	}
	return lua.LString(err.Error())
}

// PCall calls, in protected mode, the function below the nargs arguments on
// top of L's stack, as L.PCall(nargs, nret, nil) does, but on a thread of
// its own so that an error leaves the caller's upvalues open (issue 448).
// The function and arguments are popped; on success nret results (all of
// them with lua.MultRet) are pushed. The Go side of ibscript (plan.check,
// the REPL, the runner) makes its protected calls through it; embedders
// should too.
func PCall(L *lua.LState, nargs, nret int) error {
	top := L.GetTop()
	fn := L.Get(top - nargs)
	args := make([]lua.LValue, nargs)
	for i := range args {
		args[i] = L.Get(top - nargs + 1 + i)
	}
	L.Pop(nargs + 1)
	rets, err := poolOf(L).call(L, fn, nret, args)
	if err != nil {
		return err
	}
	for _, v := range rets {
		L.Push(v)
	}
	return nil
}

// poolKey is the registry field holding a state's thread pool.
const poolKey = "ibscript.threads"

// poolOf finds L's thread pool, making one for a state ibscript did not set
// up (PCall on a bare lua.NewState()).
func poolOf(L *lua.LState) *threads {
	reg := L.Get(lua.RegistryIndex)
	if ud, ok := L.GetField(reg, poolKey).(*lua.LUserData); ok {
		if p, ok := ud.Value.(*threads); ok {
			return p
		}
	}
	p := &threads{}
	ud := L.NewUserData()
	ud.Value = p
	L.SetField(reg, poolKey, ud)
	return p
}
