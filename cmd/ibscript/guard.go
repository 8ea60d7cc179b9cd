package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/bindings"
)

// A run ends by itself when its context ends: Lua loops stop at the next
// instruction, fabric calls return, ports close and the exit status is 2.
// Some calls never look at the context: a Lua pattern match that
// backtracks for hours, a Go call stuck in the kernel. A goroutine cannot
// be killed, so the guard abandons it: gracePeriod after the context
// ended, it closes what the run opened (ibsim gets its client slot back,
// the recording and audit file are flushed and closed) from its own
// goroutine and exits with status 2.

// gracePeriod is how long a run may take to end by itself once its
// context ended (signal, --time-limit, --memory-limit).
const gracePeriod = 2 * time.Second

// cleanupTimeout bounds the guard's cleanup: an ibsim that does not
// answer costs its control timeout (2 s) per exchange (SET_ISSM(0), then
// DISCONNECT) and port; a cleanup stuck beyond this is abandoned too.
const cleanupTimeout = 10 * time.Second

// memorySample is how often the memory watchdog reads the heap size.
const memorySample = 10 * time.Millisecond

// errSignal ends a run that received a signal. It is a cancellation
// (errors.Is context.Canceled), as Ctrl-C in the REPL is.
type errSignal struct{ sig os.Signal }

func (e errSignal) Error() string {
	name := e.sig.String()
	if s, ok := e.sig.(syscall.Signal); ok {
		name = signalName(s)
	}
	return "interrupted by " + name
}

func (e errSignal) Is(target error) bool { return target == context.Canceled }

func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return s.String()
}

// errMemoryLimit ends a run whose heap grew past --memory-limit, or
// that asked for an allocation that would (mem).
type errMemoryLimit struct {
	limit, used uint64
	mem         *bindings.MemoryError
}

func (e errMemoryLimit) Error() string {
	if e.mem != nil {
		return fmt.Sprintf("memory limit reached (--memory-limit %s): %s %s", bindings.FormatSize(e.limit), e.mem.Func, e.mem.Want())
	}
	return fmt.Sprintf("memory limit reached (--memory-limit %s; the heap held %s)", bindings.FormatSize(e.limit), bindings.FormatSize(e.used))
}

// guard ends a run that does not end by itself (see above). Cleanup
// functions are registered as the run opens what needs closing; each must
// be safe to call concurrently with the run's own use of it and more than
// once (host.Host.Close is).
type guard struct {
	stderr io.Writer
	grace  time.Duration
	exit   func(int) // os.Exit

	mu       sync.Mutex
	cleanups []func() error

	done     chan struct{} // closed by stop: the run ended by itself
	stopOnce sync.Once
	force    sync.Once
	idle     atomic.Bool // the REPL waits for input
}

func newGuard(stderr io.Writer) *guard {
	return &guard{stderr: stderr, grace: gracePeriod, exit: os.Exit, done: make(chan struct{})}
}

// onForce registers a cleanup the forced exit runs, in reverse order of
// registration.
func (g *guard) onForce(f func() error) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.cleanups = append(g.cleanups, f)
	g.mu.Unlock()
}

// stop tells the guard the run ended by itself.
func (g *guard) stop() { g.stopOnce.Do(func() { close(g.done) }) }

// watch forces the end of the run gracePeriod after ctx ends, unless the
// run ended by itself first.
func (g *guard) watch(ctx context.Context) {
	go func() {
		select {
		case <-g.done:
			return
		case <-ctx.Done():
		}
		if g.idle.Load() {
			// The REPL waits for a line, which nothing can interrupt:
			// there is nothing to wait for.
			g.forceExit(context.Cause(ctx), "")
			return
		}
		g.after(context.Cause(ctx))
	}()
}

// setIdle tells the guard whether the REPL is waiting for input (a
// cancellation then ends the session at once). Having set it, the REPL
// checks its context: a cancellation the guard saw before is then the
// REPL's to report.
func (g *guard) setIdle(idle bool) {
	if g != nil {
		g.idle.Store(idle)
	}
}

// after waits the grace period, then forces the end of the run unless it
// ended by itself.
func (g *guard) after(cause error) {
	t := time.NewTimer(g.grace)
	defer t.Stop()
	select {
	case <-g.done:
	case <-t.C:
		g.forceExit(cause, fmt.Sprintf("a call did not return within %v (a Go call that cannot be interrupted)", g.grace))
	}
}

// arm starts the grace period for a cancellation that does not end the
// run (Ctrl-C in the REPL); disarm when the cancelled call returned.
func (g *guard) arm(cause error) (disarm func()) {
	stop := make(chan struct{})
	go func() {
		t := time.NewTimer(g.grace)
		defer t.Stop()
		select {
		case <-stop:
		case <-g.done:
		case <-t.C:
			g.forceExit(cause, fmt.Sprintf("the call did not stop within %v (a Go call that cannot be interrupted), and the session's Lua state cannot be used while it runs", g.grace))
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(stop) }) }
}

// forceExit closes what the run opened, abandoning the goroutine that
// is stuck, and exits with status 2. It runs at most once.
func (g *guard) forceExit(cause error, why string) {
	g.force.Do(func() {
		select {
		case <-g.done:
			return // ended by itself meanwhile
		default:
		}
		if why == "" {
			fmt.Fprintf(g.stderr, "ibscript: %v\n", cause)
		} else {
			fmt.Fprintf(g.stderr, "ibscript: %v; %s: closing the run's ports and files and exiting without waiting for it\n", cause, why)
		}
		g.mu.Lock()
		cs := append([]func() error(nil), g.cleanups...)
		g.mu.Unlock()
		finished := make(chan struct{})
		go func() {
			defer close(finished)
			for i := len(cs) - 1; i >= 0; i-- {
				if err := cs[i](); err != nil {
					fmt.Fprintf(g.stderr, "ibscript: closing: %v\n", err)
				}
			}
		}()
		select {
		case <-finished:
		case <-time.After(cleanupTimeout):
			fmt.Fprintf(g.stderr, "ibscript: closing took more than %v; exiting anyway\n", cleanupTimeout)
		}
		g.exit(exitError)
	})
}

// notifySignals cancels the run on each of sigs; a second signal while
// the run is ending forces its end at once.
func (g *guard) notifySignals(cancel context.CancelCauseFunc, sigs ...os.Signal) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, sigs...)
	go func() {
		defer signal.Stop(ch)
		var first error
		for {
			select {
			case <-g.done:
				return
			case s := <-ch:
				if first == nil {
					first = errSignal{s}
					cancel(first)
					continue
				}
				name := s.String()
				if sig, ok := s.(syscall.Signal); ok {
					name = signalName(sig)
				}
				g.forceExit(first, "a second signal ("+name+") arrived while it was ending")
			}
		}
	}()
}

// watchMemory samples the heap every memorySample: past limit it cancels
// the run (whose calls then end and whose ports close); past limit and a
// quarter, or when the run has not ended within the grace period, the
// guard forces the end, so that a call allocating in a loop cannot take
// the host's memory.
func (g *guard) watchMemory(cancel context.CancelCauseFunc, limit uint64) {
	if limit == 0 {
		return
	}
	go func() {
		tick := time.NewTicker(memorySample)
		defer tick.Stop()
		var over error
		var overAt time.Time
		hard := limit + limit/4
		for {
			select {
			case <-g.done:
				return
			case <-tick.C:
			}
			used := bindings.HeapInUse()
			switch {
			case over == nil && used > limit:
				over, overAt = errMemoryLimit{limit: limit, used: used}, time.Now()
				cancel(over)
			case over != nil && (used > hard || time.Since(overAt) > g.grace):
				g.forceExit(errMemoryLimit{limit: limit, used: used}, "the heap kept growing inside a call that cannot be interrupted")
				return
			}
		}
	}()
}

// setGoMemoryLimit makes the collector work harder from 7/8 of limit (a
// soft limit: Go's GOMEMLIMIT), unless GOMEMLIMIT is set: garbage is
// collected before it reaches the watchdog's limit, so that only what
// the run holds does. restore puts the collector's settings back as they
// were (run is called many times in one test process).
func setGoMemoryLimit(limit uint64) (restore func()) {
	restore = keepGCSettings()
	if limit == 0 || os.Getenv("GOMEMLIMIT") != "" {
		return restore
	}
	debug.SetMemoryLimit(int64(min(limit/8*7, 1<<62)))
	return restore
}

// keepGCSettings returns a function that puts the collector's percent and
// memory limit back as they are now.
func keepGCSettings() func() {
	limit := debug.SetMemoryLimit(-1) // -1 reads it
	percent := debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return func() {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
}

// defaultMemoryLimitCap is the largest default --memory-limit: far more
// than a run needs (validate.lua on a 16k-node fabric stays under 1 GiB),
// far less than a compute node's memory.
const defaultMemoryLimitCap = 4 << 30

// defaultMemoryLimit is a quarter of the memory this process may use
// (physical memory, or the cgroup's limit when lower), at most
// defaultMemoryLimitCap and at least 256 MiB: a plan run on a production
// host never takes the memory its jobs need.
func defaultMemoryLimit() uint64 {
	avail := availableMemory()
	if avail == 0 {
		return defaultMemoryLimitCap
	}
	return min(max(avail/4, 256<<20), defaultMemoryLimitCap)
}

// cgroupMemoryMax reads cgroup v2's memory.max of this process's cgroup
// (0 when there is none or it is "max").
func cgroupMemoryMax() uint64 {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		path, ok := strings.CutPrefix(line, "0::")
		if !ok {
			continue
		}
		m, err := os.ReadFile("/sys/fs/cgroup" + strings.TrimSpace(path) + "/memory.max")
		if err != nil {
			return 0
		}
		v, err := strconv.ParseUint(strings.TrimSpace(string(m)), 10, 64)
		if err != nil {
			return 0
		}
		return v
	}
	return 0
}

// memoryLimitFlag is --memory-limit: a size with an optional unit (K, M,
// G, T, with or without "iB"/"B", powers of 1024), "0" for no limit.
type memoryLimitFlag struct {
	v   uint64
	set bool
}

func (f *memoryLimitFlag) String() string { return bindings.FormatSize(f.v) }

func (f *memoryLimitFlag) Set(s string) error {
	v, err := parseSize(s)
	if err != nil {
		return err
	}
	f.v, f.set = v, true
	return nil
}

// parseSize reads "4GiB", "512M", "1048576", "0".
func parseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	num := strings.TrimRightFunc(t, func(r rune) bool { return r < '0' || r > '9' })
	unit := strings.ToUpper(strings.TrimSpace(t[len(num):]))
	unit = strings.TrimSuffix(strings.TrimSuffix(unit, "B"), "I")
	shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30, "T": 40}
	sh, ok := shift[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("%q: want a size such as 4GiB, 512MiB or 0 (no limit)", s)
	}
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil || n > (1<<63)>>sh {
		return 0, fmt.Errorf("%q: want a size such as 4GiB, 512MiB or 0 (no limit)", s)
	}
	return n << sh, nil
}
