package bindings

import (
	"runtime"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// The coroutine library in plans (docs/lua.md), as Lua 5.1's lbaselib
// defines it, over gopher-lua v1.1.2's own coroutines (a thread, run on
// the goroutine that resumes it). gopher-lua's library differs from 5.1's
// where a plan can see it, and ibscript's protected calls (pcall.go run
// their callee on a thread of their own) change what "the running
// coroutine" is; so create, resume, yield, status, wrap and running are
// replaced, calling gopher-lua's create and resume underneath:
//
//   - coroutine.running() is nil in the main thread, also inside a pcall
//     (5.1: the running coroutine, or nil), and status(co) is "running"
//     for the coroutine whose code runs, inside a pcall too;
//   - resume of a coroutine that is not suspended returns false and
//     "cannot resume dead coroutine" (or running, normal), 5.1's words;
//   - yield inside a pcall, or inside a Go function that called back into
//     Lua (table.sort's comparison, a gsub replacement function), raises
//     "attempt to yield across metamethod/C-call boundary", as 5.1 does
//     (and so does yield outside a coroutine, as in 5.1.5); gopher-lua
//     would unwind the wrong thread;
//   - create wants a Lua function ("Lua function expected");
//   - wrap's errors carry the caller's position, as luaB_auxwrap adds it;
//   - a coroutine runs under the context of the run that resumes it, so
//     --time-limit and Ctrl-C stop it, and an error that ends the run
//     (os.exit, the memory limit, the run's end) is not turned into
//     resume's false but goes on ending the run.

// coroutines is one state's coroutine bookkeeping.
type coroutines struct {
	p *threads
	// status of the coroutines made here that are not dead: "suspended",
	// "running" or "normal" (resuming another)
	status map[*lua.LState]string
	create lua.LGFunction // gopher-lua's coroutine.create
	// wrapper makes a coroutine's function (withLua51Errors), nil
	// before the first.
	wrapper *lua.LFunction
	resume  lua.LGFunction // gopher-lua's coroutine.resume
}

// installCoroutines opens the coroutine library in L with the functions
// above.
func installCoroutines(L *lua.LState, p *threads) {
	L.Push(L.NewFunction(lua.OpenCoroutine))
	L.Push(lua.LString(lua.CoroutineLibName))
	L.Call(1, 1)
	lib, ok := L.Get(-1).(*lua.LTable)
	L.Pop(1)
	if !ok {
		return
	}
	c := &coroutines{p: p, status: map[*lua.LState]string{}}
	for name, dst := range map[string]*lua.LGFunction{"create": &c.create, "resume": &c.resume} {
		fn, ok := lib.RawGetString(name).(*lua.LFunction)
		if !ok || fn.GFunction == nil {
			return
		}
		*dst = fn.GFunction
	}
	for name, fn := range map[string]lua.LGFunction{
		"create":  c.luaCreate,
		"resume":  c.luaResume,
		"yield":   c.luaYield,
		"status":  c.luaStatus,
		"wrap":    c.luaWrap,
		"running": c.luaRunning,
	} {
		lib.RawSetString(name, L.NewFunction(fn))
	}
}

// current is the thread whose code runs in L: L, or, when L is a
// protected call's thread, the thread that made the call.
func (c *coroutines) current(L *lua.LState) *lua.LState {
	for range maxNesting + 1 {
		parent, ok := c.p.parent[L]
		if !ok {
			break
		}
		L = parent
	}
	return L
}

func (c *coroutines) luaCreate(L *lua.LState) int {
	fn, ok := L.Get(1).(*lua.LFunction)
	if !ok || fn.IsG {
		L.ArgError(1, "Lua function expected")
	}
	L.SetTop(0)
	L.Push(c.withLua51Errors(L, fn))
	c.create(L)
	co := L.Get(-1).(*lua.LState)
	c.status[co] = "suspended"
	return 1
}

// withLua51Errors is fn run so that the coroutine's errors read as Lua
// 5.1's (lua51err.go): gopher-lua's resume sets a new coroutine's Panic
// itself, so a Go function the coroutine calls first sets it to
// raiseLua51, and fn follows as a tail call (no Go frame stays under
// fn, which a yield could not cross).
func (c *coroutines) withLua51Errors(L *lua.LState, fn *lua.LFunction) *lua.LFunction {
	if c.wrapper == nil {
		f, err := LoadString(L, "local hook = ...\nreturn function(f) return function(...) hook() return f(...) end end", "=coroutine")
		if err != nil {
			return fn
		}
		L.Push(f)
		L.Push(L.NewFunction(func(L *lua.LState) int {
			L.Panic = raiseLua51
			return 0
		}))
		L.Call(1, 1)
		mk, ok := L.Get(-1).(*lua.LFunction)
		L.Pop(1)
		if !ok {
			return fn
		}
		c.wrapper = mk
	}
	L.Push(c.wrapper)
	L.Push(fn)
	L.Call(1, 1)
	w, ok := L.Get(-1).(*lua.LFunction)
	L.Pop(1)
	if !ok {
		return fn
	}
	return w
}

// statusOf is coroutine.status's answer for co, seen from L.
func (c *coroutines) statusOf(L, co *lua.LState) string {
	switch {
	case co.Dead:
		return "dead"
	case co == c.current(L):
		return "running"
	}
	if s, ok := c.status[co]; ok {
		return s
	}
	if co == L.G.MainThread {
		return "normal" // resuming the coroutine that asks
	}
	return "suspended"
}

func checkCoroutine(L *lua.LState, n int) *lua.LState {
	co, ok := L.Get(n).(*lua.LState)
	if !ok {
		L.ArgError(n, "coroutine expected")
	}
	return co
}

func (c *coroutines) luaStatus(L *lua.LState) int {
	L.Push(lua.LString(c.statusOf(L, checkCoroutine(L, 1))))
	return 1
}

func (c *coroutines) luaRunning(L *lua.LState) int {
	cur := c.current(L)
	if cur == L.G.MainThread {
		L.Push(lua.LNil)
	} else {
		L.Push(cur)
	}
	return 1
}

// resumeCall resumes co with the values on L's stack above index 1, and
// leaves on L's stack what resume returns: true and the values yielded or
// returned, or false and the error. An error that must end the run is
// raised again instead.
func (c *coroutines) resumeCall(L, co *lua.LState) int {
	if s := c.statusOf(L, co); s != "suspended" {
		L.SetTop(0)
		L.Push(lua.LFalse)
		L.Push(lua.LString("cannot resume " + s + " coroutine"))
		return 2
	}
	// the run that resumes it bounds it: its deadline, its interrupt
	if ctx := L.Context(); ctx != nil {
		co.SetContext(ctx)
	} else {
		co.RemoveContext()
	}
	caller := c.current(L)
	if _, ok := c.status[caller]; ok {
		c.status[caller] = "normal"
	}
	c.status[co] = "running"
	n := c.resume(L)
	if _, ok := c.status[caller]; ok {
		c.status[caller] = "running"
	}
	if co.Dead {
		delete(c.status, co)
	} else {
		c.status[co] = "suspended"
	}
	top := L.GetTop()
	if ok := L.Get(top - n + 1); ok == lua.LFalse && n >= 2 {
		errObj := L.Get(top - n + 2)
		err := &lua.ApiError{Type: lua.ApiErrorRun, Object: errObj}
		if uncatchable(L, err) {
			rethrow(L, err)
		}
	}
	return n
}

func (c *coroutines) luaResume(L *lua.LState) int {
	co := checkCoroutine(L, 1)
	return c.resumeCall(L, co)
}

// errYieldAcross is Lua 5.1.5's lua_yield error, raised from a C function
// and so without a position. The main thread gets it too: 5.1.5 counts
// the C calls under the main chunk as a boundary.
const errYieldAcross = "attempt to yield across metamethod/C-call boundary"

func (c *coroutines) luaYield(L *lua.LState) int {
	if _, ok := c.p.parent[L]; ok || L == L.G.MainThread {
		L.Error(lua.LString(errYieldAcross), 0)
	}
	// A Go function between this yield and the coroutine's start (one
	// that called back into Lua), or a metamethod the virtual machine
	// called, would be unwound by gopher-lua's yield, and the next resume
	// would fail with a Go nil dereference.
	if nestedLoops() != 1 {
		L.Error(lua.LString(errYieldAcross), 0)
	}
	for level := 1; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("S", dbg, nil); err == nil && dbg.What == "G" {
			L.Error(lua.LString(errYieldAcross), 0)
		}
	}
	return -1 // gopher-lua's yield: the arguments go to resume
}

func (c *coroutines) luaWrap(L *lua.LState) int {
	c.luaCreate(L)
	co := L.Get(-1).(*lua.LState)
	L.Push(L.NewFunction(func(L *lua.LState) int {
		L.Insert(co, 1)
		n := c.resumeCall(L, co)
		top := L.GetTop()
		if L.Get(top-n+1) == lua.LFalse {
			errObj := L.Get(top - n + 2)
			if s, ok := valueText(errObj); ok {
				// luaB_auxwrap adds the caller's position (luaL_where)
				if w := c.p.where(L, 1); w != "" {
					errObj = lua.LString(w + " " + s)
				} else {
					errObj = lua.LString(s)
				}
			}
			L.Error(errObj, 0)
		}
		return n - 1
	}))
	return 1
}

// nestedLoops counts the runs of gopher-lua's interpreter loop on the Go
// stack since the coroutine's thread was entered (gopher-lua's threadRun):
// 1 when every Lua call since then was made by the interpreter itself,
// more when a Go function or a metamethod call started a loop of its own,
// which a yield cannot leave. gopher-lua's API tells neither (a
// metamethod's frame looks like any other), so this reads the Go stack;
// TestCoroutineYieldAcrossMetamethod pins the names it looks for.
func nestedLoops() int {
	pcs := make([]uintptr, 1024)
	n := runtime.Callers(2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	loops := 0
	for {
		f, more := frames.Next()
		switch name := f.Function; {
		case strings.HasSuffix(name, "/gopher-lua.threadRun"):
			return loops
		case strings.HasSuffix(name, "/gopher-lua.mainLoop"), strings.HasSuffix(name, "/gopher-lua.mainLoopWithContext"):
			loops++
		}
		if !more {
			return -1 // not inside a coroutine's run: refused
		}
	}
}
