package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/host"
)

// openBackend opens the fabric --fabric names (package host picks the
// backend) with what the flags and the environment say, and gives the
// guard its Close.
func openBackend(ctx context.Context, c *config, stderr io.Writer) (*host.Host, error) {
	o, err := c.hostOptions(stderr)
	if err != nil {
		return nil, err
	}
	h, err := host.Open(ctx, c.fabricURI, o)
	if err == nil {
		c.guard.onForce(h.Close)
		return h, nil
	}
	if ctx.Err() != nil {
		// The run ended while the backend opened: say why (the flag or
		// the signal), not "context deadline exceeded".
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			return nil, cause
		}
	}
	return nil, openError(err)
}

// hostOptions are the host.Options of the command line: the session's
// flags, the keys from their flags or the environment, --record, --audit,
// ibsim's environment, and the notices said on stderr.
func (c *config) hostOptions(stderr io.Writer) (*host.Options, error) {
	o := &host.Options{
		Session: engine.Options{Timeout: c.timeout, Retries: c.retries, AllowSet: c.allowSet, MaxMADs: c.maxMADs, Logger: c.logger, PKeyIndex: c.pkeyIndex},
		Record:  c.record,
		Audit:   c.audit,
		SMI:     c.smi,
		Ibsim:   host.IbsimDefaults{Sock: os.Getenv("IBSIM_SOCKNAME"), Node: os.Getenv("SIM_HOST"), Server: os.Getenv("IBSIM_SERVER_NAME")},
	}
	if p := os.Getenv("IBSIM_SERVER_PORT"); p != "" && o.Ibsim.Server != "" {
		o.Ibsim.Server += ":" + p
	}
	var err error
	if o.Session.MKey, err = c.mKey(); err != nil {
		return nil, err
	}
	if o.Session.SMKey, err = c.smKey(); err != nil {
		return nil, err
	}
	if o.Session.CCKey, err = c.ccKey(); err != nil {
		return nil, err
	}
	o.Notice = func(n host.Notice) {
		switch n.Kind {
		case host.SimFallback:
			if !c.quiet {
				fmt.Fprintf(stderr, "ibscript: no InfiniBand ports on this host; using the embedded simulated fabric (bundled topology %s). --fabric selects another (--quiet hides this notice).\n", n.Topology)
			}
		case host.DefaultPort:
			fmt.Fprintf(stderr, "ibscript: using %s port %d (LID 0x%x)\n", n.Port.CAName, n.Port.PortNum, n.Port.LID)
		case host.LocalIbsim:
			leaveACore()
		}
	}
	if c.testHost != nil {
		c.testHost(o)
	}
	return o, nil
}

// openError names the flag behind an error of host.Open.
func openError(err error) error {
	var (
		ue *host.URIError
		re *host.RecordError
		ae *host.AuditError
	)
	switch {
	case errors.As(err, &ue):
		if scheme, _, _ := strings.Cut(ue.URI, ":"); scheme == "auto" || scheme == "" {
			// The kernel's ports failed: loud, never a silent fall back
			// to the simulator.
			return fmt.Errorf("--fabric %s: %w (--fabric sim: uses the simulator)", ue.URI, ue.Err)
		}
		return fmt.Errorf("--fabric %s: %w%s", ue.URI, ue.Err, flagHint(ue.Err))
	case errors.As(err, &re):
		return fmt.Errorf("--record: %w", re.Err)
	case errors.As(err, &ae):
		return fmt.Errorf("--audit: %w", ae.Err)
	}
	return err
}

// openCommandBackend is openBackend for a command: a failure is said on
// stderr and comes back as the command's exit status, with nil.
func openCommandBackend(ctx context.Context, c *config, stderr io.Writer) (*host.Host, int) {
	b, err := openBackend(ctx, c, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ibscript: %v\n", err)
		return nil, exitError
	}
	return b, exitOK
}

// finish closes h and turns what a run must not lose into exit status 2:
// a recording that could not be written in full (--record), an audit file
// that did not close cleanly. code is the run's status so far.
func finish(h *host.Host, code int, stderr io.Writer) int {
	err := h.Close()
	var re *host.RecordError
	if errors.As(err, &re) {
		fmt.Fprintf(stderr, "ibscript: --record %s: the recording is incomplete: %v\n", re.Path, re.Err)
		code = max(code, exitError)
	}
	var ae *host.AuditError
	if errors.As(err, &ae) {
		fmt.Fprintf(stderr, "ibscript: --audit: %v\n", ae.Err)
		code = max(code, exitError)
	}
	return code
}

// mKey is --mkey, else $IBSCRIPT_MKEY, else 0. Its value never appears in
// an error or any output.
func (c *config) mKey() (uint64, error) { return key(c.mkey, "--mkey", "IBSCRIPT_MKEY") }

// smKey is --smkey, else $IBSCRIPT_SMKEY, else 0, never shown either.
func (c *config) smKey() (uint64, error) { return key(c.smkey, "--smkey", "IBSCRIPT_SMKEY") }

// ccKey is --cckey, else $IBSCRIPT_CCKEY, else 0 (ibccquery -c), never
// shown either.
func (c *config) ccKey() (uint64, error) { return key(c.cckey, "--cckey", "IBSCRIPT_CCKEY") }

// key parses a key from its flag's value v, else from the environment
// variable env; errors name where it came from, never the value.
func key(v, flag, env string) (uint64, error) {
	from := flag
	if v == "" {
		v, from = os.Getenv(env), env
	}
	if v == "" {
		return 0, nil
	}
	k, err := strconv.ParseUint(strings.TrimSpace(v), 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%s: not a 64-bit number (value not shown)", from)
	}
	return k, nil
}

// leaveACore lowers GOMAXPROCS to one below the number of CPUs (at least
// one) and keeps the process's threads off one CPU (keepOffACPU) unless
// $GOMAXPROCS says otherwise; it returns keepOffACPU's undo. On a unix
// socket (host.LocalIbsim) ibsim runs on this host and answers one MAD at
// a time on one core, so its speed is the sweep's; with a P per CPU the
// Go scheduler's spinning threads between our goroutines' hand-offs took
// cores from it. Measured on 2 CPUs: iblinkinfo of a 2,000-node fat tree
// took 0.10 s (median of 8) with GOMAXPROCS=1 and 0.13 s with 2; an
// in-process discovery 62-78 ms against 76-95 ms, for the same ibsim CPU
// time.
func leaveACore() (undo func()) {
	if os.Getenv("GOMAXPROCS") != "" {
		return nil
	}
	if n := runtime.NumCPU() - 1; n < runtime.GOMAXPROCS(0) {
		runtime.GOMAXPROCS(max(1, n))
	}
	return keepOffACPU()
}
