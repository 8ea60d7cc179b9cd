package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/host"
	"github.com/ibscript/ibscript/plan"
	"github.com/ibscript/ibscript/topo"
)

// newLua opens the backend and a Lua state on it.
func newLua(ctx context.Context, c *config, stdout, stderr io.Writer) (*host.Host, *lua.LState, *bindings.Env, error) {
	return newLuaOpts(ctx, c, stdout, stderr, bindings.Options{})
}

// newLuaProgress is newLuaOpts with, on a terminal, a progress line for
// long sweeps (fabric.discover, fabric.sweep, plan.sleep) in o.Progress,
// returned first (nil elsewhere).
func newLuaProgress(ctx context.Context, c *config, stdout, stderr io.Writer, o bindings.Options) (*progressLine, *host.Host, *lua.LState, *bindings.Env, error) {
	var prog *progressLine
	if isTerminal(stderr) {
		prog = &progressLine{w: stderr}
		o.Progress = prog.update
	}
	b, L, env, err := newLuaOpts(ctx, c, stdout, stderr, o)
	return prog, b, L, env, err
}

// newLuaOpts is newLua with the plan options of a run.
func newLuaOpts(ctx context.Context, c *config, stdout, stderr io.Writer, o bindings.Options) (*host.Host, *lua.LState, *bindings.Env, error) {
	// The diag module behaves as the tools do: $IBSCRIPT_DIAGS_VERSION.
	if v := os.Getenv("IBSCRIPT_DIAGS_VERSION"); v != "" {
		ver, err := diag.ParseVersion(v)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("$IBSCRIPT_DIAGS_VERSION %q: want 44 or current", v)
		}
		o.DiagsVersion = ver
	}
	b, err := openBackend(ctx, c, stderr)
	if err != nil {
		return nil, nil, nil, err
	}
	o.Session, o.Fabric, o.Stdout = b.Session(), b.Fabric(), stdout
	o.Sim = simulatorOf(b.Raw())
	o.ErrorHint = flagHint
	o.NodeNames = c.names
	o.MemoryLimit = c.memLimit.v
	o.OnMemoryLimit = func(err error) {
		// A refused allocation ends a run; in the REPL, where nothing
		// was allocated, it is the chunk's error and the session goes
		// on (the watchdog still ends a session whose heap passes the
		// limit).
		var me *bindings.MemoryError
		if c.cancel != nil && (c.cmd != "" || c.hasChunk) && errors.As(err, &me) {
			c.cancel(errMemoryLimit{limit: c.memLimit.v, mem: me})
		}
	}
	if o.Files, err = c.files(stdout, stderr); err != nil {
		b.Close()
		return nil, nil, nil, err
	}
	L, env, err := bindings.NewState(ctx, &o)
	if err != nil {
		b.Close()
		return nil, nil, nil, err
	}
	if testHookLua != nil {
		testHookLua(L)
	}
	return b, L, env, nil
}

// testHookLua, set by tests only, adds Go functions to every Lua state
// (a call that never returns, for the guard's tests).
var testHookLua func(L *lua.LState)

// closeLua closes what a run opened, the backend last, and returns the
// run's exit status: code, or 2 when the backend could not keep what the
// run must not lose (finish).
func closeLua(b *host.Host, L *lua.LState, env *bindings.Env, code int, stderr io.Writer) int {
	env.Close()
	L.Close()
	return finish(b, code, stderr)
}

// scriptStatus turns the outcome of a script into an exit status, printing
// errors with their traceback.
func scriptStatus(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if code, ok := bindings.AsExit(err); ok {
		return code
	}
	if re, ok := bindings.AsRunError(err); ok {
		fmt.Fprintf(stderr, "ibscript: %v\n", re)
		return exitError
	}
	var (
		tl  errTimeLimit
		sig errSignal
		ml  errMemoryLimit
	)
	if errors.As(err, &tl) || errors.As(err, &sig) || errors.As(err, &ml) {
		fmt.Fprintf(stderr, "ibscript: %v\n", err)
		return exitError
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(stderr, "ibscript: interrupted")
		return exitError
	}
	fmt.Fprintf(stderr, "ibscript: %s\n", shortTrace(err))
	return exitError
}

// shortTrace keeps a Lua error's message and the Lua frames of its
// traceback, dropping gopher-lua's Go-function frames.
func shortTrace(err error) string {
	var ae *lua.ApiError
	if !errors.As(err, &ae) {
		return err.Error()
	}
	msg := ae.Object.String()
	if re, ok := bindings.AsRunError(err); ok {
		msg = re.Error() // its Lua value is a userdata
	}
	if ae.StackTrace == "" {
		return msg
	}
	var b strings.Builder
	b.WriteString(msg)
	for _, line := range strings.Split(ae.StackTrace, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "[G]:") || strings.HasPrefix(t, "(tailcall):") {
			continue
		}
		b.WriteString("\n\t")
		b.WriteString(t)
	}
	return b.String()
}

// callWithTrace runs fn (already pushed with its args) with a traceback
// handler, so errors name file:line and the calling frames.
func callWithTrace(L *lua.LState, fn *lua.LFunction, args ...lua.LValue) error {
	L.Push(fn)
	for _, a := range args {
		L.Push(a)
	}
	return bindings.PCall(L, len(args), lua.MultRet)
}

// runMain calls a script's main chunk. When ctx ended (SIGTERM, or
// Ctrl-C outside the REPL), whatever the interrupted call raised is
// reported as the interruption it is: the error wraps ctx.Err().
func runMain(ctx context.Context, L *lua.LState, fn *lua.LFunction) error {
	err := callWithTrace(L, fn)
	if err != nil && ctx.Err() != nil {
		if _, isExit := bindings.AsExit(err); !isExit {
			return context.Cause(ctx)
		}
	}
	return err
}

// errTimeLimit ends a run that reached --time-limit.
type errTimeLimit struct{ limit time.Duration }

func (e errTimeLimit) Error() string {
	return fmt.Sprintf("time limit reached (--time-limit %v)", e.limit)
}

func runScript(ctx context.Context, c *config, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	file := c.args[0]
	format, ok := reportFormat(c, "run", "text", stderr)
	if !ok {
		return exitError
	}
	failed := func(b *host.Host, err error) int { return runFailed(c, format, b, err, stdout, stderr) }
	src, err := readRunSource(file, stdin)
	if err != nil {
		return failed(nil, err)
	}
	pargs, err := parsePlanArgs(c.planArgs)
	if err != nil {
		return failed(nil, err)
	}
	opts := bindings.Options{PlanName: planName(file), PlanArgs: pargs, ScriptDir: filepath.Dir(file)}
	if os.Getenv("GOGC") == "" {
		// A run is short and builds large Lua tables (a 16k-node fabric
		// is ~60k port tables): collect less often, as GOGC=300 would.
		// Measured on validate.lua at 16k nodes: ~1 s less CPU, ~15% more
		// memory.
		debug.SetGCPercent(300)
	}
	prog, b, L, env, err := newLuaProgress(ctx, c, stdout, stderr, opts)
	if err != nil {
		return failed(nil, err)
	}
	defer func() { code = closeLua(b, L, env, code, stderr) }()
	setArg(L, c.args)
	fn, err := bindings.LoadString(L, stripShebang(string(src)), chunkName(file))
	if err != nil {
		// ibscript run /etc/shadow (under sudo) must not print its
		// first token: a file not named *.lua shows only its line.
		if file != "-" { // a plan on stdin is the user's own text
			err = bindings.HideSource(file, err)
		}
		return failed(b, err)
	}
	err = runMain(ctx, L, fn)
	if prog != nil {
		prog.clear()
	}
	return runOutcome(c, format, b, env, err, len(pargs) > 0, stdout, stderr)
}

// runFailed ends a run that failed before its script could: the error on
// stderr and, when a report format was asked for, a report carrying it,
// so CI's test reporter always has something to read.
func runFailed(c *config, format string, b *host.Host, err error, stdout, stderr io.Writer) int {
	fmt.Fprintf(stderr, "ibscript run: %v\n", err)
	if c.format == "" {
		return exitError
	}
	rep := plan.New(planName(c.args[0]))
	rep.Error = err.Error()
	rep.Finish()
	return writeRunReport(c, format, b, rep, exitError, stdout, stderr)
}

// readRunSource reads the script file, or stdin for "-" (ssh host
// ibscript run - < plan.lua: its name is "stdin", require looks in the
// working directory).
func readRunSource(file string, stdin io.Reader) ([]byte, error) {
	if file == "-" {
		return io.ReadAll(stdin)
	}
	return readScript(file)
}

// setArg sets Lua's global arg as lua(1) does: the script at 0, its
// arguments from 1.
func setArg(L *lua.LState, args []string) {
	argt := L.NewTable()
	argt.RawSetInt(0, lua.LString(args[0]))
	for i, a := range args[1:] {
		argt.RawSetInt(i+1, lua.LString(a))
	}
	L.SetGlobal("arg", argt)
}

// runOutcome is the status of a script or plan that ran and ended with err
// (nil: it returned), and its report written where one is due; hasArgs
// says --arg was given.
func runOutcome(c *config, format string, b *host.Host, env *bindings.Env, err error, hasArgs bool, stdout, stderr io.Writer) int {
	file := c.args[0]
	if exit, isExit := bindings.AsExit(err); isExit {
		if !env.HasPlan() {
			return exit // os.exit: the script decided
		}
		// A plan's status is its report's: os.exit ends the script, the
		// report is written and the worse status wins, so os.exit(0)
		// after a failed check still exits 1 (docs/security.md).
		return writeRunReport(c, format, b, env.PlanReport(nil), exit, stdout, stderr)
	}
	if ae, ok := bindings.AsArgError(err); ok {
		// A usage error: the command line, not the fabric or the plan.
		return runFailed(c, format, b, fmt.Errorf("%v (ibscript run %s --help lists the plan's arguments)", ae, file), stdout, stderr)
	}
	var runErr error
	if err != nil {
		runErr = errors.New(errorMessage(err))
	}
	if !env.HasPlan() && (err == nil || c.format == "") {
		// A plain script prints only what it prints; one that failed
		// gets a report when a format was asked for (it may have failed
		// before its plan.define).
		if hasArgs && err == nil {
			fmt.Fprintf(stderr, "ibscript run: --arg given but %s defines no plan (plan.define)\n", file)
			return exitError
		}
		return scriptStatus(err, stderr)
	}
	code := scriptStatus(err, stderr) // the traceback, if any, on stderr
	rep := env.PlanReport(runErr)
	return writeRunReport(c, format, b, rep, code, stdout, stderr)
}

// writeRunReport completes a run's report with where it ran (b is nil
// when the backend never opened) and writes it: the exit status is the
// worse of code and the report's.
func writeRunReport(c *config, format string, b *host.Host, rep *plan.Report, code int, stdout, stderr io.Writer) int {
	rep.Fabric.Backend = c.fabricURI
	rep.Fabric.Host, _ = os.Hostname()
	if b != nil {
		if s, ok := b.Fabric().(fmt.Stringer); ok {
			rep.Fabric.Backend = s.String()
		}
		pa := b.Session().Port()
		rep.Fabric.CA, rep.Fabric.Port = pa.CAName, int(pa.PortNum)
	}
	if err := plan.Write(stdout, format, rep, colorOK(stdout)); err != nil {
		fmt.Fprintf(stderr, "ibscript run: writing the report: %v\n", err)
		return exitError
	}
	return max(code, rep.ExitCode())
}

// errorMessage is a script error without its traceback.
func errorMessage(err error) string {
	if re, ok := bindings.AsRunError(err); ok {
		return re.Error()
	}
	var ae *lua.ApiError
	if errors.As(err, &ae) {
		return ae.Object.String()
	}
	return err.Error()
}

// stripShebang blanks a leading #! line (keeping line numbers) so scripts
// can be executable.
func stripShebang(s string) string {
	if strings.HasPrefix(s, "#!") {
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			return "--" + s[2:]
		}
		return ""
	}
	return s
}

func runChunk(ctx context.Context, c *config, stdout, stderr io.Writer) (code int) {
	prog, b, L, env, err := newLuaProgress(ctx, c, stdout, stderr, bindings.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "ibscript: %v\n", err)
		return exitError
	}
	defer func() { code = closeLua(b, L, env, code, stderr) }()
	fn, err := bindings.LoadString(L, c.chunk, "(command line)")
	if err != nil {
		fmt.Fprintf(stderr, "ibscript: %v\n", err)
		return exitError
	}
	err = runMain(ctx, L, fn)
	if prog != nil {
		prog.clear()
	}
	if err != nil {
		// A call of a missing function says which (smp.nodeinf).
		if msg := errorMessage(err); explainCall(L, c.chunk, msg) != msg {
			fmt.Fprintf(stderr, "ibscript: %s\n", explainCall(L, c.chunk, msg))
			return exitError
		}
	}
	code = scriptStatus(err, stderr)
	if env.HasPlan() {
		// A chunk that checks gets its report and its status, as a run.
		var runErr error
		if _, isExit := bindings.AsExit(err); err != nil && !isExit {
			runErr = errors.New(errorMessage(err))
		}
		format := c.format
		if format == "" {
			format = "text"
		}
		return writeRunReport(c, format, b, env.PlanReport(runErr), code, stdout, stderr)
	}
	return code
}

// discoverMemoryLimit is the heap size at which discover collects
// garbage (see runDiscover).
const discoverMemoryLimit = 512 << 20

// testDiscoverProgress, set by tests only, is called with every progress
// report of discover's sweep (a fault test kills ibsim there).
var testDiscoverProgress func(nodes int)

func runDiscover(ctx context.Context, c *config, stdout, stderr io.Writer) (code int) {
	switch c.format {
	case "", "ibnetdiscover", "list":
	default:
		// Before the sweep, not after it.
		fmt.Fprintf(stderr, "ibscript discover: unknown --format %q (want ibnetdiscover or list)\n", c.format)
		return exitError
	}
	return sweepAndWrite(ctx, c, stderr, "discover", func(f *topo.Fabric) (err error) {
		f.Rename(c.names)
		if c.format == "list" {
			for _, n := range f.Nodes {
				lid := 0
				if p := firstLID(n); p != nil {
					lid = int(p.LID)
				}
				if _, err = fmt.Fprintf(stdout, "%-6s 0x%016x ports %3d lid %5d %q\n", n.Type, n.GUID, n.NumPorts, lid, n.Desc); err != nil {
					break
				}
			}
			return err
		}
		return topo.WriteIBNetDiscover(stdout, f, nil)
	})
}

// sweepAndWrite discovers the fabric from the local port (the discover
// and topology commands), hands it to write, then reports the sweep's
// failed queries and retransmits on stderr: exit 0, 1 when a query
// failed, 2 when the sweep or write did.
func sweepAndWrite(ctx context.Context, c *config, stderr io.Writer, cmd string, write func(*topo.Fabric) error) (code int) {
	oneShotGC(c)
	b, status := openCommandBackend(ctx, c, stderr)
	if b == nil {
		return status
	}
	defer func() { code = finish(b, code, stderr) }()
	var opts engine.DiscoverOptions
	var prog *progressLine
	if isTerminal(stderr) {
		prog = &progressLine{w: stderr}
		opts.Progress = func(nodes, _ int) { prog.update(nodes, 0, "discover: nodes found") }
	}
	if hook := testDiscoverProgress; hook != nil {
		opts.Progress = func(nodes, _ int) { hook(nodes) }
	}
	d, err := b.DiscoverPlanes(ctx, &opts)
	if prog != nil {
		prog.clear()
	}
	if err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		fmt.Fprintf(stderr, "ibscript %s: %s\n", cmd, hinted(err))
		return exitError
	}
	if err := write(d.Fabric); err != nil {
		fmt.Fprintf(stderr, "ibscript %s: %v\n", cmd, err)
		return exitError
	}
	for _, te := range d.Errors {
		fmt.Fprintf(stderr, "ibscript %s: %s\n", cmd, te)
	}
	if d.Retransmits > 0 {
		fmt.Fprintf(stderr, "ibscript %s: %d SMPs, %d retransmitted after a timeout\n", cmd, d.MADs, d.Retransmits)
	}
	if len(d.Errors) > 0 {
		return exitFailed
	}
	return exitOK
}

func firstLID(n *topo.Node) *topo.Port {
	for _, p := range n.Ports {
		if p != nil && p.LID != 0 {
			return p
		}
	}
	return nil
}

// oneShotGC tunes the collector for a command that sweeps once, prints
// and exits (discover, the diag tools), unless GOGC or GOMEMLIMIT say
// otherwise.
func oneShotGC(c *config) {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		// One sweep, printed, then exit: what it allocates is the
		// fabric's size, so collecting only near a memory limit spares
		// the sweep the collector's CPU, which it shares with ibsim or
		// the simulator on a small machine (7,968 nodes through ibsim:
		// 4 collections during the sweep before, none now; a 16k-node
		// fabric stays far below the limit).
		// Below a smaller --memory-limit, so that garbage never reaches
		// the watchdog's limit.
		debug.SetGCPercent(-1)
		lim := uint64(discoverMemoryLimit)
		if c.memLimit.v > 0 {
			lim = min(lim, c.memLimit.v*3/4)
		}
		debug.SetMemoryLimit(int64(lim))
	}
}

// runPlanHelp is "ibscript run PLAN --help": the plan's description and
// the arguments plan.define declares, with their help, types, bounds and
// defaults. The plan runs up to its plan.define on the embedded simulator
// with its output discarded, whatever --fabric says, so asking for help
// never touches a fabric.
func runPlanHelp(c *config, stdin io.Reader, stdout, stderr io.Writer) int {
	file := c.args[0]
	var src []byte
	var err error
	if file == "-" {
		src, err = io.ReadAll(stdin)
	} else {
		src, err = readScript(file)
	}
	if err != nil {
		fmt.Fprintf(stderr, "ibscript run: %v\n", err)
		return exitError
	}
	hc := *c
	hc.fabricURI, hc.quiet, hc.record, hc.audit, hc.planArgs = "sim:", true, "", "", nil
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var spec *bindings.PlanSpec
	opts := bindings.Options{PlanName: planName(file), ScriptDir: filepath.Dir(file),
		PlanHelp: func(s bindings.PlanSpec) { spec = &s }}
	b, L, env, err := newLuaOpts(ctx, &hc, io.Discard, stderr, opts)
	if err != nil {
		fmt.Fprintf(stderr, "ibscript run: %v\n", err)
		return exitError
	}
	defer closeLua(b, L, env, exitOK, stderr)
	argt := L.NewTable()
	argt.RawSetInt(0, lua.LString(file))
	L.SetGlobal("arg", argt)
	fn, err := bindings.LoadString(L, stripShebang(string(src)), chunkName(file))
	if err == nil {
		err = runMain(ctx, L, fn)
	}
	if spec == nil {
		if _, isExit := bindings.AsExit(err); err != nil && !isExit {
			fmt.Fprintf(stderr, "ibscript run: %s: the plan failed before plan.define: %s\n", file, errorMessage(err))
			return exitError
		}
		fmt.Fprintf(stdout, "usage: ibscript run [flags] %s [ARGS...]\n\n%s defines no plan (plan.define): it takes no --arg; ARGS are in its global 'arg' table.\nibscript help run lists the flags of every run.\n", file, file)
		return exitOK
	}
	fmt.Fprint(stdout, planUsage(file, spec))
	return exitOK
}

// planUsage is the help of one plan.
func planUsage(file string, spec *bindings.PlanSpec) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "usage: ibscript run [flags] %s", file)
	if len(spec.Args) > 0 {
		sb.WriteString(" [--arg KEY=VALUE]...")
	}
	sb.WriteString("\n")
	if spec.Description != "" {
		fmt.Fprintf(&sb, "\n%s\n", spec.Description)
	}
	if len(spec.Args) == 0 {
		sb.WriteString("\nThe plan takes no arguments.\n")
	} else {
		sb.WriteString("\nArguments (--arg KEY=VALUE):\n")
		for _, a := range spec.Args {
			fmt.Fprintf(&sb, "  %s\n", a.Name)
			if a.Help != "" {
				fmt.Fprintf(&sb, "      %s\n", a.Help)
			}
			want := a.Want()
			if want == "" {
				want = "a " + a.Type()
			}
			fmt.Fprintf(&sb, "      %s; default %s\n", want, a.DefaultText())
		}
	}
	sb.WriteString("\nibscript help run lists the flags of every run.\n")
	return sb.String()
}

// readScript reads a script file: a regular file or a FIFO, opened
// without blocking, at most bindings.MaxScriptSize bytes (ibscript run
// /dev/zero read forever).
func readScript(path string) ([]byte, error) {
	return readLimited(path, bindings.MaxScriptSize, "a script")
}

// readLimited reads the file at path as the loaders open one
// (topo.OpenFile: a FIFO never hangs the open, /dev/zero is refused), at
// most limit bytes of it: more is an error saying what (holds: "a
// script") holds no more.
func readLimited(path string, limit int, holds string) ([]byte, error) {
	f, err := topo.OpenFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err == nil && len(b) > limit {
		err = fmt.Errorf("%s: more than %d bytes, more than %s holds", path, limit, holds)
	}
	return b, err
}
