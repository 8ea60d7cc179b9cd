package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/fabric/record"
	"github.com/ibscript/ibscript/sim"
)

// backend is an open fabric, the local port the session runs on, and the
// session.
type backend struct {
	fab     fabric.Fabric // what scripts open ports on (recording them with --record)
	raw     fabric.Fabric // the backend's own Fabric (the simulator's controls)
	tr      fabric.Transport
	sess    *engine.Session
	closers []io.Closer // closed last (the audit file)

	rec     *record.Recorder // --record, or nil
	recPath string

	closeOnce sync.Once
	closeErr  error
}

// finish closes b and turns what a run must not lose into exit status 2:
// a recording that could not be written in full (--record), an audit file
// that did not close cleanly. code is the run's status so far.
func (b *backend) finish(code int, stderr io.Writer) int {
	closeErr := b.Close()
	if b.rec != nil {
		if err := b.rec.Err(); err != nil {
			fmt.Fprintf(stderr, "ibscript: --record %s: the recording is incomplete: %v\n", b.recPath, err)
			code = max(code, exitError)
		}
	}
	if b.auditErr(closeErr) {
		fmt.Fprintf(stderr, "ibscript: --audit: %v\n", closeErr)
		code = max(code, exitError)
	}
	return code
}

// auditErr reports whether err comes from closing a file in b.closers.
func (b *backend) auditErr(err error) bool {
	var pe *os.PathError
	return len(b.closers) > 0 && errors.As(err, &pe) && pe.Op == "close"
}

// Close closes the session, the fabric (every port opened on it: ibsim
// gets its client slots back) and the audit file, once; a concurrent
// call (the guard's, while the run's own is under way) waits for it.
func (b *backend) Close() error {
	b.closeOnce.Do(func() { b.closeErr = b.close() })
	return b.closeErr
}

func (b *backend) close() error {
	var errs []error
	if b.sess != nil {
		errs = append(errs, b.sess.Close())
	} else if b.tr != nil {
		errs = append(errs, b.tr.Close())
	}
	if b.fab != nil {
		errs = append(errs, b.fab.Close())
	}
	for _, c := range b.closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// openBackend opens the backend --fabric names and gives the guard its
// Close.
func openBackend(ctx context.Context, c *config, stderr io.Writer) (*backend, error) {
	b, err := pickBackend(ctx, c, stderr)
	if err == nil {
		c.guard.onForce(b.Close)
	}
	if err != nil && ctx.Err() != nil {
		// The run ended while the backend opened: say why (the flag or
		// the signal), not "context deadline exceeded".
		if cause := context.Cause(ctx); cause != nil && cause != ctx.Err() {
			return nil, cause
		}
	}
	return b, err
}

// pickBackend is the only place ibscript picks a backend.
func pickBackend(ctx context.Context, c *config, stderr io.Writer) (*backend, error) {
	uri := c.fabricURI
	scheme, rest, _ := strings.Cut(uri, ":")
	switch scheme {
	case "auto", "":
		if kernel.HasPorts(os.DirFS("/")) {
			b, err := openUMAD(ctx, c, "", stderr)
			if err != nil {
				// Loud, never a silent fall back to the simulator.
				return nil, fmt.Errorf("--fabric auto: %w (--fabric sim: uses the simulator)", err)
			}
			return b, nil
		}
		if !c.quiet {
			fmt.Fprintf(stderr, "ibscript: no InfiniBand ports on this host; using the embedded simulated fabric (bundled topology %s). --fabric selects another (--quiet hides this notice).\n", sim.DefaultTopology)
		}
		return openSim(ctx, c, "", url.Values{})
	case "sim":
		path, query, _ := strings.Cut(rest, "?")
		q, err := url.ParseQuery(query)
		if err != nil {
			return nil, fmt.Errorf("--fabric %s: bad query: %v", uri, err)
		}
		return openSim(ctx, c, path, q)
	case "umad":
		return openUMAD(ctx, c, rest, stderr)
	case "ibsim":
		return openIbsim(ctx, c, rest, stderr)
	case "replay":
		return openReplay(ctx, c, rest)
	}
	return nil, fmt.Errorf("--fabric %s: unknown backend %q (want auto, sim:, umad:, ibsim: or replay:)", uri, scheme)
}

// openReplay plays a recording (--record) back as the fabric.
func openReplay(ctx context.Context, c *config, path string) (*backend, error) {
	if path == "" {
		return nil, fmt.Errorf("--fabric %s: want replay:FILE", c.fabricURI)
	}
	rec, err := record.ReadFileContext(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("--fabric %s: %w", c.fabricURI, err)
	}
	b := &backend{tr: record.NewReplay(rec), fab: record.NewReplayFabric(rec)}
	if err := c.newSession(b); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// newSession starts the engine on b.tr, recording its traffic first when
// --record asks for it, with every port opened later on b.fab (umad.open_port,
// the RDMA CM's). Every backend goes through here.
func (c *config) newSession(b *backend) error {
	b.raw = b.fab
	if c.record != "" {
		f, err := createPrivate(c.record)
		if err != nil {
			return fmt.Errorf("--record: %w", err)
		}
		r, err := record.NewRecorder(b.tr, f)
		if err != nil {
			f.Close()
			return fmt.Errorf("--record: %w", err)
		}
		b.tr, b.rec, b.recPath = r, r, c.record
		b.fab = r.Fabric(b.fab)
	}
	o := &engine.Options{Timeout: c.timeout, Retries: c.retries, AllowSet: c.allowSet, AuditUser: auditUser(), MaxMADs: c.maxMADs, Logger: c.logger}
	mkey, err := c.mKey()
	if err != nil {
		return err
	}
	o.MKey = mkey
	if o.SMKey, err = c.smKey(); err != nil {
		return err
	}
	if o.CCKey, err = c.ccKey(); err != nil {
		return err
	}
	switch {
	case c.audit != "":
		f, err := os.OpenFile(c.audit, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return fmt.Errorf("--audit: %w", err)
		}
		b.closers = append(b.closers, f)
		o.Audit = auditTo(f, "--audit "+c.audit)
	case b.tr.Caps().Production:
		o.Audit = auditTo(os.Stderr, "the audit on stderr")
	}
	s, err := engine.New(b.tr, o)
	if err != nil {
		return err
	}
	b.sess = s
	return nil
}

// createPrivate creates (or truncates) a file only its owner may read:
// recordings hold the fabric's traffic. A regular file that existed with
// a wider mode is narrowed to 0600; a device (/dev/null) is left alone.
func createPrivate(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm() != 0o600 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
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

// auditUser names who runs ibscript in audit lines.
func auditUser() string {
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return os.Getenv("USER")
}

// auditTo writes one line per Set to w, in one write; lines from
// concurrent Sets do not interleave. A line that cannot be written is an
// error naming where it was going (name): the engine then does not send
// the Set.
func auditTo(w io.Writer, name string) func(engine.AuditEntry) error {
	var mu sync.Mutex
	return func(a engine.AuditEntry) error {
		mu.Lock()
		defer mu.Unlock()
		if _, err := io.WriteString(w, "ibscript: audit: "+a.String()+"\n"); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
}

func openSim(ctx context.Context, c *config, path string, q url.Values) (*backend, error) {
	opts := &sim.Options{Logger: c.logger}
	if k, err := c.smKey(); err == nil && k != 0 {
		// The simulated SM is one configured with the run's SM_Key
		// (OpenSM's sa_key), so a run with a key is trusted.
		opts.SAKey = k
	}
	// Likewise its ports carry the run's M_Key and its CC agents the
	// run's CC_Key, as a fabric whose SM set them: the keys are then in
	// the answers, where no output may show them (docs/security.md).
	if k, err := c.mKey(); err == nil {
		opts.MKey = k
	}
	if k, err := c.ccKey(); err == nil {
		opts.CCKey = k
	}
	node, port := q.Get("node"), 0
	for k := range q {
		switch k {
		case "node":
		case "port":
			p, err := strconv.Atoi(q.Get("port"))
			if err != nil || p < 0 || p > 254 {
				return nil, fmt.Errorf("--fabric %s: bad port %q", c.fabricURI, q.Get("port"))
			}
			port = p
		case "bare":
			b, err := strconv.ParseBool(q.Get("bare"))
			if err != nil {
				return nil, fmt.Errorf("--fabric %s: bad bare value %q", c.fabricURI, q.Get("bare"))
			}
			opts.Bare = b
		case "sm":
			opts.SMNode = q.Get("sm")
		default:
			return nil, fmt.Errorf("--fabric %s: unknown option %q (want node, port, bare, sm)", c.fabricURI, k)
		}
	}
	var (
		f   *sim.Fabric
		err error
	)
	if path != "" {
		if err := topologyExists(path); err != nil {
			return nil, fmt.Errorf("--fabric %s: %w", c.fabricURI, err)
		}
	}
	if path == "" {
		f, err = sim.Default(opts)
	} else {
		f, err = sim.LoadContext(ctx, path, opts)
	}
	if err != nil {
		return nil, err
	}
	b := &backend{fab: f}
	b.tr, err = f.Open(ctx, node, port)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("--fabric %s: %w", c.fabricURI, err)
	}
	err = c.newSession(b)
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// topologyExists says what is wrong with a topology path before the
// parser opens it: which file, and where a relative path was looked for.
func topologyExists(path string) error {
	fi, err := os.Stat(path)
	where := path
	if !filepath.IsAbs(path) {
		if wd, werr := os.Getwd(); werr == nil {
			where = fmt.Sprintf("%s (in %s)", path, wd)
		}
	}
	switch {
	case err != nil:
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("no topology file %s: %w", where, err)
	case fi.IsDir():
		return fmt.Errorf("no topology file %s: it is a directory", where)
	}
	return nil
}
