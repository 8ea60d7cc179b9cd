package bindings

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/exporter"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// Options configure the Lua environment.
type Options struct {
	// Session answers smp, perf and fabric calls. Required.
	Session *engine.Session
	// ErrorHint, when set, returns text appended to the message of an
	// error a function raises (and to a RunError's): the host's hint on
	// how to change what caused it, such as cmd/ibscript's command-line
	// flag for engine.ErrSetRefused or engine.ErrMADBudget. The library's
	// own messages describe the condition only.
	ErrorHint func(error) string
	// Fabric opens the ports of the umad module. Nil disables umad.open_port.
	Fabric fabric.Fabric
	// Stdout receives print output; nil means os.Stdout.
	Stdout io.Writer
	// PlanName names the plan in its report (the script's file name);
	// "" means "plan".
	PlanName string
	// PlanArgs are the command line's --arg key=value pairs, which
	// plan.define checks against the arguments the plan declares.
	PlanArgs map[string]string
	// PlanHelp, when set, receives what plan.define declares, and
	// plan.define then ends the script as os.exit(0) does: the host's
	// "run PLAN --help", which lists a plan's arguments without running
	// it.
	PlanHelp func(PlanSpec)
	// Progress, when set, receives plan.progress calls and the progress of
	// long sweeps (fabric.discover, with total 0: no total known;
	// fabric.sweep; plan.sleep's seconds). The host decides whether and
	// how often to show them; discovery calls it from the engine's
	// goroutine, so it must be safe for concurrent use.
	Progress func(done, total int, what string)
	// Sim, when set (the backend is the embedded simulator), adds the sim
	// module: fault injection (simfaults.go).
	Sim Simulator
	// ScriptDir, when set, is the directory of the script the host runs:
	// require looks for modules there and in its checks/ subdirectory
	// before package.path's defaults, so a plan built on the shipped
	// checks (scripts/validate.lua requires "links", "common", ...) runs
	// from Go as from the command line.
	ScriptDir string
	// NodeNames, when set (a node-name-map, topo.ParseNameMap), names the
	// nodes fabric.discover finds: their desc, and so every message and
	// report object that names them.
	NodeNames map[uint64]string
	// DiagsVersion is which infiniband-diags the diag module's tools
	// behave as where current rdma-core's and 44 differ (the command
	// line's $IBSCRIPT_DIAGS_VERSION; docs/diag.md): 44 by default.
	DiagsVersion diag.Version
	// MemoryLimit, when set, is checked before string.rep, table.concat
	// and string.format make a large string (limits.go): past it, the
	// call raises a *MemoryError, as a RunError. 0 means no check.
	MemoryLimit uint64
	// OnMemoryLimit, when set, receives every *MemoryError before it is
	// raised, so that the host can end the run (cancel its context).
	OnMemoryLimit func(error)
	// Files is which files scripts may read and write (dofile, loadfile,
	// require, fabric.load and save, plan.thresholds; docs/security.md).
	// nil allows every file: an embedder that runs plans it did not write
	// sets it (cmd/ibscript always does).
	Files *Files
}

// Closer is a resource a script owns (an open port): Env.Close closes the
// ones the script forgot.
type Closer interface{ Close() error }

// Env is the ibscript environment of one LState: the modules it preloads
// and the resources scripts opened. Owned by the goroutine that owns the
// LState.
type Env struct {
	L       *lua.LState
	sess    *engine.Session
	fab     fabric.Fabric
	stdout  io.Writer
	metas   map[string]*lua.LTable // metatables of fabric.discover's tables by kind
	records map[*mad.Layout]*record
	recNext *lua.LFunction            // next over a record (record.go)
	docs    map[*lua.LFunction]string // "module.fn(args) -> ..." by function, for help()

	planName string
	planArgs map[string]string
	planHelp func(PlanSpec)
	progress func(done, total int, what string)
	names    map[uint64]string // Options.NodeNames
	diagsVer diag.Version      // Options.DiagsVersion
	hasSim   bool              // the sim module is open

	// planes is the last fabric.discover{planes=true}: fabric.sweep
	// follows its routes to the nodes of other planes from their plane
	// ports.
	planes *engine.Discovery

	memLimit   uint64      // Options.MemoryLimit
	onMemLimit func(error) // Options.OnMemoryLimit

	plan *planState // nil until the script calls plan.*

	exporters map[snapshotOpts]*exporter.Exporter // perf.snapshot's, by options

	mu        sync.Mutex
	resources []Closer // closed in reverse order by Close
}

// Func is one entry of a module's registration table: its Lua name, the Go
// function and its doc line, "portinfo(target [, port]) -> table". The Lua
// API reference is generated from these tables.
type Func struct {
	Name string
	Fn   func(e *Env, L *lua.LState) int
	Doc  string
}

// Module is a Lua module: its name, a one-line summary and its functions.
type Module struct {
	Name    string
	Summary string
	Funcs   []Func
}

// Modules returns the registration tables of every module, in the order
// the API reference lists them.
func Modules() []Module {
	return []Module{umadModule(), smpModule(), perfModule(), saModule(), ccModule(), fabricModule(), diagModule(), rdmacmModule(), planModule(), madModule(), bitModule()}
}

// Open preloads every ibscript module into L (require "smp") and sets them
// as globals too, so REPL lines and plans can use smp.nodeinfo directly.
// The host makes L with SkipOpenLibs and opens the base libraries it wants.
func Open(L *lua.LState, opts *Options) (*Env, error) {
	if opts == nil || opts.Session == nil {
		return nil, errors.New("bindings: Options.Session is required")
	}
	e := &Env{L: L, sess: opts.Session, fab: opts.Fabric, stdout: opts.Stdout, docs: map[*lua.LFunction]string{},
		planName: opts.PlanName, planArgs: opts.PlanArgs, planHelp: opts.PlanHelp, progress: opts.Progress, names: opts.NodeNames, diagsVer: opts.DiagsVersion,
		memLimit: opts.MemoryLimit, onMemLimit: opts.OnMemoryLimit}
	if e.stdout == nil {
		e.stdout = os.Stdout
	}
	setFiles(L, opts.Files)
	registerTypes(L)
	registerSATypes(L)
	installPairs(L)
	if opts.ErrorHint != nil {
		ud := L.NewUserData()
		ud.Value = opts.ErrorHint
		L.SetField(L.Get(lua.RegistryIndex), errorHintKey, ud)
	}
	e.checkAllocs(L)
	setAllocCheck(L, e)
	for _, m := range Modules() {
		mod := e.moduleTable(m)
		L.PreloadModule(m.Name, func(L *lua.LState) int {
			L.Push(mod)
			return 1
		})
		L.SetGlobal(m.Name, mod)
	}
	if opts.Sim != nil {
		e.openSim(opts.Sim)
	}
	L.SetGlobal("print", L.NewFunction(e.print))
	e.openHelp()
	return e, nil
}

func (e *Env) moduleTable(m Module) *lua.LTable {
	t := e.L.NewTable()
	for _, f := range m.Funcs {
		fn := f.Fn
		lf := namedFunction(e.L, m.Name+"."+f.Name, f.Doc, func(L *lua.LState) int { return fn(e, L) })
		e.docs[lf] = m.Name + "." + f.Doc
		t.RawSetString(f.Name, lf)
	}
	return t
}

// print is Lua 5.1's print writing to the Env's stdout: each value goes
// through the global tostring (so decoded attributes print as tables of
// fields, and a script's own tostring is honoured) and is written up to
// its first NUL byte, as C's fputs writes it; the line is written once.
func (e *Env) print(L *lua.LState) int {
	n := L.GetTop()
	tostring := L.GetGlobal("tostring")
	var b strings.Builder
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte('\t')
		}
		s := tostringOf(L, tostring, L.Get(i))
		if z := strings.IndexByte(s, 0); z >= 0 {
			s = s[:z] // Lua 5.1 writes each value with fputs
		}
		b.WriteString(s)
	}
	b.WriteByte('\n')
	io.WriteString(e.stdout, b.String())
	return 0
}

// Own registers a resource to be closed by Close unless the script closes
// it first (then Release it).
func (e *Env) Own(c Closer) {
	e.mu.Lock()
	e.resources = append(e.resources, c)
	e.mu.Unlock()
}

// Release forgets a resource the script closed itself.
func (e *Env) Release(c Closer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if i := slices.Index(e.resources, c); i >= 0 {
		e.resources = slices.Delete(e.resources, i, i+1)
	}
}

// Open reports how many resources scripts left open.
func (e *Env) OpenResources() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.resources)
}

// Close closes every resource the script left open, newest first. It does
// not close the LState or the Session, which belong to the host.
func (e *Env) Close() error {
	e.mu.Lock()
	rs := e.resources
	e.resources = nil
	e.mu.Unlock()
	var errs []error
	for i := len(rs) - 1; i >= 0; i-- {
		errs = append(errs, rs[i].Close())
	}
	return errors.Join(errs...)
}

// raise raises a Lua error "module.fn: message" at the caller's line.
// An error among args that ends the run (the MAD budget used up) is
// raised as a RunError instead, which no pcall or plan.check catches.
// Errors among args read as one statement of what failed where
// (ErrorText).
//
// A read that could not be done among args (engine.Unreadable) makes the
// message one plan.check records as "could not be read" (unreadable.go).
func raise(L *lua.LState, fn string, format string, args ...any) {
	unread := false
	for i, a := range args {
		if err, ok := a.(error); ok {
			raiseRunError(L, fn, err)
			unread = unread || engine.Unreadable(err)
			args[i] = ErrorText(err) + errorHint(L, err)
		}
	}
	msg := fn + ": " + fmt.Sprintf(format, args...)
	if unread {
		noteUnread(L, msg)
	}
	L.RaiseError("%s", msg)
}

// errorHintKey is the registry key of Options.ErrorHint.
const errorHintKey = "ibscript.errorhint"

// errorHint is Options.ErrorHint(err), or "".
func errorHint(L *lua.LState, err error) string {
	ud, ok := L.GetField(L.Get(lua.RegistryIndex), errorHintKey).(*lua.LUserData)
	if !ok {
		return ""
	}
	h, _ := ud.Value.(func(error) string)
	if h == nil {
		return ""
	}
	return h(err)
}

// ErrorText is err's message without what repeats it for a script's
// reader: the "engine: " layer prefix and a sentinel's ": not found" or
// ": bad target" after a message that already says so. errors.Is still
// works on err; only the text shown is shorter.
func ErrorText(err error) string {
	s := err.Error()
	for _, sentinel := range []error{engine.ErrNotFound, engine.ErrBadTarget} {
		if errors.Is(err, sentinel) {
			s = strings.TrimSuffix(s, ": "+sentinel.Error())
		}
	}
	return strings.TrimPrefix(s, "engine: ")
}
