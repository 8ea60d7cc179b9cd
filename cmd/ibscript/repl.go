package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/peterh/liner"

	"github.com/ibscript/ibscript/bindings"
	lua "github.com/yuin/gopher-lua"
)

// errCtrlC is what a Ctrl-C in the REPL cancels a call with.
var errCtrlC = errors.New("interrupted by SIGINT (Ctrl-C)")

// errIncomplete is returned by Eval for a chunk that needs more lines.
var errIncomplete = errors.New("incomplete chunk")

// evaluator runs REPL chunks in one LState. It is kept apart from liner so
// tests drive it without a terminal. Owned by the REPL goroutine.
type evaluator struct {
	L *lua.LState
}

// Eval runs chunk and returns what it evaluates to, rendered for people.
// An expression is tried first ("return " + chunk), so "1+1" prints 2.
// A chunk that ends before its syntax does returns errIncomplete.
func (ev *evaluator) Eval(ctx context.Context, chunk string) (string, error) {
	L := ev.L
	if h := bareHelperHint(L, chunk); h != "" {
		return h, nil
	}
	fn, err := bindings.LoadString(L, "return "+chunk, "stdin")
	if err != nil {
		fn, err = bindings.LoadString(L, chunk, "stdin")
		if err != nil {
			if incomplete(err) {
				return "", errIncomplete
			}
			return "", err
		}
	}
	prev := L.Context()
	L.SetContext(ctx)
	defer L.SetContext(prev)
	top := L.GetTop()
	if err := callWithTrace(L, fn); err != nil {
		L.SetTop(top)
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", err
	}
	n := L.GetTop() - top
	vals := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		vals = append(vals, bindings.Render(L, L.Get(top+i)))
	}
	L.SetTop(top)
	return strings.Join(vals, "\t"), nil
}

// bareHints are what the REPL says when a helper is typed without its
// parentheses (Python's help and exit do the same): its value would print
// as "function: 0x...", which helps nobody.
var bareHints = map[string]string{
	"help": "help is a function: help() lists the modules and helpers, help(smp) a module's functions, help(smp.portinfo) one function",
	"ls":   `ls is a function: ls() lists every attribute and SA record, ls("PortInfo") one's fields`,
	"show": "show is a function: show(v, ...) prints values as the REPL does",
	"exit": "Ctrl-D exits (or os.exit())",
	"quit": "Ctrl-D exits (or os.exit())",
}

// bareHelperHint is the hint for a chunk that is only a helper's name,
// while that name still holds the helper (help, ls, show: the Go
// function; exit, quit: nothing); "" otherwise.
func bareHelperHint(L *lua.LState, chunk string) string {
	name := strings.TrimSuffix(strings.TrimSpace(chunk), ";")
	h, ok := bareHints[name]
	if !ok {
		return ""
	}
	switch v := L.GetGlobal(name).(type) {
	case *lua.LFunction:
		if v.IsG && name != "exit" && name != "quit" {
			return h
		}
	case *lua.LNilType:
		if name == "exit" || name == "quit" {
			return h
		}
	}
	return ""
}

// incomplete reports whether a parse error is the chunk ending early.
func incomplete(err error) bool {
	s := err.Error()
	// Lua 5.1's message ends "near '<eof>'" (lua.c's incomplete does the
	// same test); the others are gopher-lua's parser's.
	return strings.HasSuffix(s, "'<eof>'") || strings.Contains(s, "near 'EOF'") || strings.Contains(s, "at EOF") || strings.Contains(s, "unexpected EOF")
}

// completions returns the completions of the expression that ends line:
// a global name followed by fields (.name), methods (:name) and indexes
// ([1], ["key"]), looked up with RawGet only: no function or metamethod
// runs. Internal keys ("__topo") are never offered, and an expression it
// cannot follow (a call, a local) completes to nothing rather than to the
// globals.
func completions(L *lua.LState, line string) []string {
	start := len(line)
	for start > 0 {
		c := line[start-1]
		if c == '.' || c == ':' || c == '_' || c == '[' || c == ']' || c == '"' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			start--
			continue
		}
		break
	}
	// The expression starts at a name, not inside an index.
	for start < len(line) && !isNameStart(line[start]) {
		start++
	}
	head, word := line[:start], line[start:]
	m := completionExpr.FindStringSubmatch(word)
	if m == nil {
		return nil
	}
	var v lua.LValue = L.G.Global
	v = fieldOf(L, v, lua.LString(m[1]))
	path := m[1]
	steps := completionStep.FindAllStringSubmatch(m[2], -1)
	last := ""
	sep := ""
	switch {
	case m[3] != "":
		sep, last = m[3], m[4]
	case m[2] != "":
		return nil // ends with an index or a whole field: nothing to add
	default:
		// A bare global name being typed: complete among the globals.
		v, path, last = L.G.Global, "", m[1]
	}
	for _, st := range steps {
		path += st[0]
		switch {
		case st[1] != "":
			v = fieldOf(L, v, lua.LString(st[1]))
		case st[2] != "":
			n, _ := strconv.Atoi(st[2])
			v = fieldOf(L, v, lua.LNumber(n))
		default:
			v = fieldOf(L, v, lua.LString(st[3]))
		}
	}
	t := fieldsOf(L, v)
	if t == nil {
		return nil
	}
	var out []string
	t.ForEach(func(k, _ lua.LValue) {
		ks, ok := k.(lua.LString)
		if !ok || bindings.HiddenKey(k) || !strings.HasPrefix(string(ks), last) || !isName(string(ks)) {
			return
		}
		out = append(out, head+path+sep+string(ks))
	})
	sort.Strings(out)
	return out
}

var (
	// completionExpr: a name, then steps, then optionally a '.' or ':'
	// and the partial name after it.
	completionExpr = regexp.MustCompile(`^([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*|\[\d+\]|\["[^"]*"\])*?)(?:([.:])([A-Za-z_]\w*)?)?$`)
	completionStep = regexp.MustCompile(`\.([A-Za-z_]\w*)|\[(\d+)\]|\["([^"]*)"\]`)
	luaName        = regexp.MustCompile(`^[A-Za-z_]\w*$`)
)

func isNameStart(c byte) bool { return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isName(s string) bool { return luaName.MatchString(s) }

// fieldOf is v[k] by RawGet (a table, or a userdata's __index table); nil
// when v has no fields.
func fieldOf(L *lua.LState, v lua.LValue, k lua.LValue) lua.LValue {
	t := fieldsOf(L, v)
	if t == nil {
		return lua.LNil
	}
	return t.RawGet(k)
}

// fieldsOf returns the table whose keys complete after "v." or "v:": v
// itself if it is a table, a decoded record's fields, else the __index
// table of its metatable (the methods of a userdata such as umad.port).
// Nothing is called.
func fieldsOf(L *lua.LState, v lua.LValue) *lua.LTable {
	switch v := v.(type) {
	case *lua.LTable:
		return v
	case *lua.LUserData:
		if t := bindings.RecordFields(L, v); t != nil {
			return t
		}
		if mt, ok := v.Metatable.(*lua.LTable); ok {
			if idx, ok := mt.RawGetString("__index").(*lua.LTable); ok {
				return idx
			}
		}
	}
	return nil
}

func historyPath() string {
	dir, err := os.UserConfigDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "ibscript", "history")
}

// appendHistory adds one accepted chunk to the history file (mode 0600).
func appendHistory(path, chunk string) {
	if path == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(f, strings.ReplaceAll(chunk, "\n", " "))
}

func runREPL(ctx context.Context, c *config, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	// Long sweeps (fabric.discover, fabric.sweep, plan.sleep) show their
	// progress on a terminal, cleared before the value prints.
	prog, b, L, env, err := newLuaProgress(ctx, c, stdout, stderr, bindings.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "ibscript: %v\n", err)
		return exitError
	}
	defer func() { code = closeLua(b, L, env, code, stderr) }()
	if !isTerminal(stdin) {
		return pipedREPL(ctx, L, stdin, stdout, stderr)
	}

	ln, hist := newLiner(c, L)
	defer ln.Close()
	intr := &replInterrupts{guard: c.guard}
	defer intr.watch()()

	fmt.Fprintf(stdout, "ibscript %s on %s. Ctrl-D exits, Tab completes.\n", version, b.Transport().Port().CAName)
	ev := &evaluator{L: L}
	var chunk strings.Builder
	for {
		prompt := "> "
		if chunk.Len() > 0 {
			prompt = ">> "
		}
		c.guard.setIdle(true)
		if ctx.Err() != nil {
			return scriptStatus(context.Cause(ctx), stderr)
		}
		line, err := ln.Prompt(prompt)
		c.guard.setIdle(false)
		if errors.Is(err, liner.ErrPromptAborted) {
			chunk.Reset()
			continue
		}
		if err != nil { // io.EOF: Ctrl-D
			fmt.Fprintln(stdout)
			return exitOK
		}
		if chunk.Len() > 0 {
			chunk.WriteByte('\n')
		}
		chunk.WriteString(line)
		src := chunk.String()
		if strings.TrimSpace(src) == "" {
			chunk.Reset()
			continue
		}
		out, err := ev.Eval(intr.begin(ctx), src)
		if prog != nil {
			prog.clear()
		}
		intr.end()
		if errors.Is(err, errIncomplete) {
			continue
		}
		chunk.Reset()
		if !strings.HasPrefix(src, " ") && !secretLine(src) {
			ln.AppendHistory(strings.ReplaceAll(src, "\n", " "))
			appendHistory(hist, src)
		}
		if ctx.Err() != nil {
			// SIGTERM, SIGHUP, SIGQUIT or the memory limit: the session
			// ends.
			return scriptStatus(context.Cause(ctx), stderr)
		}
		if code, exit := replPrint(L, src, out, err, stdout, stderr); exit {
			return code
		}
	}
}

// replPrint prints what evaluating src gave: its value, or its error, or
// that Ctrl-C interrupted it; exit is true when it called os.exit.
func replPrint(L *lua.LState, src, out string, err error, stdout, stderr io.Writer) (code int, exit bool) {
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "interrupted")
	case err != nil:
		if code, ok := bindings.AsExit(err); ok {
			return code, true
		}
		fmt.Fprintln(stderr, replError(L, src, err))
	case out != "":
		fmt.Fprintln(stdout, out)
	}
	return 0, false
}

// newLiner makes the REPL's line editor, with completion on L and the
// history read from its file (returned).
func newLiner(c *config, L *lua.LState) (*liner.State, string) {
	ln := liner.NewLiner()
	// A forced end (guard.go) gives the terminal its mode back too.
	c.guard.onForce(ln.Close)
	ln.SetCtrlCAborts(true)
	ln.SetMultiLineMode(true)
	ln.SetCompleter(func(line string) []string { return completions(L, line) })
	// The first Tab completes what all candidates share, the second
	// lists them (as bash does), rather than cycling through them.
	ln.SetTabCompletionStyle(liner.TabPrints)
	hist := historyPath()
	if f, err := os.Open(hist); err == nil {
		ln.ReadHistory(f)
		f.Close()
	}
	return ln, hist
}

// replInterrupts is the REPL's one process-wide signal goroutine: Ctrl-C
// cancels the running evaluation. A call that does not stop (a Lua
// pattern match backtracking, a Go call that ignores its context) cannot
// be taken back from the session's Lua state: after the grace period the
// guard ends the session as it ends a stuck run (ports closed, exit
// status 2).
type replInterrupts struct {
	guard  *guard // nil: none
	mu     sync.Mutex
	cancel context.CancelFunc // the running evaluation's, nil between
	disarm func()
}

// watch starts the signal goroutine and returns what stops it.
func (r *replInterrupts) watch() (stop func()) {
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-sigc:
				r.interrupt()
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		signal.Stop(sigc)
	}
}

func (r *replInterrupts) interrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel == nil {
		return
	}
	r.cancel()
	switch {
	case r.guard == nil:
	case r.disarm == nil:
		r.disarm = r.guard.arm(errCtrlC)
	default:
		// Ctrl-C again while the call is still not
		// stopping: do not make the user wait.
		go r.guard.forceExit(errCtrlC, "a second Ctrl-C arrived while the call was not stopping")
	}
}

// begin returns the context of an evaluation that Ctrl-C cancels.
func (r *replInterrupts) begin(ctx context.Context) context.Context {
	evalCtx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	return evalCtx
}

// end ends the evaluation begin started, and the guard's grace period.
func (r *replInterrupts) end() {
	r.mu.Lock()
	cancel := r.cancel
	r.cancel = nil
	if r.disarm != nil {
		r.disarm()
		r.disarm = nil
	}
	r.mu.Unlock()
	cancel()
}

// pipedREPL reads chunks from stdin that is not a terminal (echo ... |
// ibscript): no banner, no prompts, values printed as on a terminal;
// the first error ends the session with its message and status 2, as a
// script's would.
func pipedREPL(ctx context.Context, L *lua.LState, stdin io.Reader, stdout, stderr io.Writer) int {
	ev := &evaluator{L: L}
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var chunk strings.Builder
	for sc.Scan() {
		if chunk.Len() > 0 {
			chunk.WriteByte('\n')
		}
		chunk.WriteString(sc.Text())
		src := chunk.String()
		if strings.TrimSpace(src) == "" {
			chunk.Reset()
			continue
		}
		out, err := ev.Eval(ctx, src)
		if errors.Is(err, errIncomplete) {
			continue
		}
		chunk.Reset()
		if err != nil {
			if code, ok := bindings.AsExit(err); ok {
				return code
			}
			if ctx.Err() != nil {
				return scriptStatus(context.Cause(ctx), stderr)
			}
			fmt.Fprintf(stderr, "ibscript: %s\n", replError(L, src, err))
			return exitError
		}
		if out != "" {
			fmt.Fprintln(stdout, out)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "ibscript: reading stdin: %v\n", err)
		return exitError
	}
	if chunk.Len() > 0 {
		// The input ended inside a chunk: say what the parser says.
		if _, err := ev.Eval(ctx, chunk.String()+"\n"); err != nil && !errors.Is(err, errIncomplete) {
			fmt.Fprintf(stderr, "ibscript: %s\n", replError(L, chunk.String(), err))
		} else {
			fmt.Fprintf(stderr, "ibscript: stdin ended inside a chunk: %q\n", chunk.String())
		}
		return exitError
	}
	return exitOK
}
