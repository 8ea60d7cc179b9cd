// Package host opens a fabric by URI, as the ibscript command line's
// --fabric does, and holds what a program needs to work on it: the fabric
// and the port it opened, the engine's Session on that port, the recorder
// and the audit file. It is the one place a backend is picked: the command
// line, the exporter, the diags tools and Go programs all open fabrics here.
//
// The URIs are the command line's:
//
//	auto                       the kernel's umad ports when /sys/class/infiniband_mad lists one, else sim:
//	sim:[PATH][?node=NAME&port=N&bare=1&sm=NAME]   the embedded simulator (PATH empty: the bundled topology)
//	ibsim:[SOCK][?node=NAME&nodes=A,B&issm=1&server=HOST[:PORT]]   a running ibsim
//	umad:[CA[/PORT]]           the kernel's /dev/infiniband/umadN
//	replay:FILE                a recording (Options.Record) played back
//
// Open takes a URI, OpenWith a fabric.Fabric the caller built, as
// database/sql's Open and OpenDB. The environment is the caller's to
// read: the command line passes $IBSIM_SOCKNAME, $SIM_HOST and its keys'
// variables through Options.
package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"sync"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/fabric/record"
	"github.com/ibscript/ibscript/sim"
)

// Options configure Open and OpenWith. The zero value (or nil) opens the
// fabric with the engine's defaults, no recording and no audit file.
type Options struct {
	// Session configures the engine on the opened port: timeout,
	// retries, window, the MAD budget (MaxMADs) and RMPP limits,
	// AllowSet, the keys (MKey, SMKey, CCKey), Logger, Audit and
	// AuditUser. The embedded simulator (sim:) comes up as a fabric whose
	// SM set the same keys: its ports carry MKey, its CC agents CCKey,
	// its SA trusts SMKey (OpenSM's sa_key). Logger also gets the
	// backends' debug lines. AuditUser defaults to the current user.
	Session engine.Options
	// Record, when set, is a file every MAD sent and received is
	// written to (replay: plays it back), on the opened port and on
	// every port opened later on Host.Fabric. It is created 0600 (a
	// regular file that existed is truncated and narrowed to 0600).
	Record string
	// Audit, when set and Session.Audit is nil, is a file one line per
	// Set is appended to (created 0600). Without it a production fabric
	// (the kernel's ports) audits to stderr.
	Audit string
	// Notice, when set, is told what a person running the program
	// should know (see Notice); nil says nothing.
	Notice func(Notice)
	// Ibsim holds what an ibsim: URI that does not say uses.
	Ibsim IbsimDefaults
	// Kernel is the sysfs tree and device opener of auto and umad:
	// (tests use native/umad/umadtest's); nil is the real system's.
	Kernel *kernel.Options
	// SMI says how auto and umad: open the kernel's port: SMIAny (the
	// zero value) as umad_open_port, paired when it is a side of a
	// planarized HCA; SMIPairs and SMIEnforce as current libibmad's
	// mad_rpc_open_port2 with enforce_smi 0 and 1, what current
	// rdma-core's tools do (kernel.Fabric.OpenPort2). The other backends
	// ignore it: every CA they model has an SMI side.
	SMI SMIMode
}

// SMIMode is how Open opens the kernel's port (Options.SMI).
type SMIMode int

const (
	// SMIAny opens the port as umad_open_port, and its pair when it is a
	// side of a planarized HCA; with no SMI side to be had, SMPs go
	// through the port opened.
	SMIAny SMIMode = iota
	// SMIPairs opens the SMI/GSI pair as mad_rpc_open_port2(ca, port,
	// ..., 0): SMPs go through the GSI side when the SMI side cannot be
	// opened.
	SMIPairs
	// SMIEnforce opens it as mad_rpc_open_port2(ca, port, ..., 1): a port
	// without an SMI side is never picked, and one named, or an SMI side
	// that cannot be opened, is an error.
	SMIEnforce
)

// IbsimDefaults are an ibsim: URI's defaults: the command line passes
// $IBSIM_SOCKNAME, $SIM_HOST and $IBSIM_SERVER_NAME[:$IBSIM_SERVER_PORT],
// the variables libumad2sim reads.
type IbsimDefaults struct {
	Sock   string // the socket name; empty: ibsim.DefaultSockName
	Node   string // the node attached to; empty: ibsim's default node
	Server string // ibsim's UDP mode (ibsim -r), "host[:port]"; empty: unix sockets
}

// NoticeKind says what a Notice is about.
type NoticeKind int

const (
	// SimFallback: auto found no umad port on this host and opens the
	// embedded simulator on Notice.Topology.
	SimFallback NoticeKind = iota + 1
	// DefaultPort: a umad: URI named no CA or no port, and libibumad's
	// default-port rules picked Notice.Port.
	DefaultPort
	// LocalIbsim: an ibsim: URI is about to attach through this host's
	// unix sockets, so ibsim runs here, one thread answering every MAD
	// (the command line leaves it a CPU).
	LocalIbsim
)

// A Notice is what Open tells Options.Notice.
type Notice struct {
	Kind     NoticeKind
	Topology string          // SimFallback: the bundled topology's name
	Port     fabric.PortAttr // DefaultPort: the port opened
}

// Host is an open fabric, the port opened on it and the engine's session
// on that port. Close releases all of it.
type Host struct {
	fab  fabric.Fabric // what ports are opened on (recorded with Options.Record)
	raw  fabric.Fabric // the backend's own Fabric
	tr   fabric.Transport
	sess *engine.Session

	rec     *record.Recorder // Options.Record, or nil
	recPath string
	audit   *os.File // Options.Audit, or nil

	closeOnce sync.Once
	closeErr  error
}

// Fabric is the fabric more ports are opened on (umad.open_port, the RDMA
// CM's): with Options.Record, a recording wrapper of Raw.
func (h *Host) Fabric() fabric.Fabric { return h.fab }

// Raw is the backend's own Fabric: a *sim.Fabric (the simulator's
// controls: faults, traffic), *ibsim.Fabric, *kernel.Fabric,
// *record.ReplayFabric or the one given to OpenWith.
func (h *Host) Raw() fabric.Fabric { return h.raw }

// Sim is the embedded simulator when the fabric is one, else nil.
func (h *Host) Sim() *sim.Fabric {
	f, _ := h.raw.(*sim.Fabric)
	return f
}

// Transport is the port the session runs on (recorded with
// Options.Record).
func (h *Host) Transport() fabric.Transport { return h.tr }

// Session is the engine on Transport.
func (h *Host) Session() *engine.Session { return h.sess }

// Recorder is the recording of Options.Record, or nil.
func (h *Host) Recorder() *record.Recorder { return h.rec }

// A URIError is a URI Open could not open: what is wrong with it, or what
// opening its backend met.
type URIError struct {
	URI string
	Err error
}

func (e *URIError) Error() string { return e.URI + ": " + e.Err.Error() }
func (e *URIError) Unwrap() error { return e.Err }

// A RecordError is a recording (Options.Record) that could not be
// created (from Open) or was not written in full (from Close: the
// recording is incomplete).
type RecordError struct {
	Path string
	Err  error
}

func (e *RecordError) Error() string { return "recording " + e.Path + ": " + e.Err.Error() }
func (e *RecordError) Unwrap() error { return e.Err }

// An AuditError is an audit file (Options.Audit) that could not be
// opened (from Open) or did not close cleanly (from Close: audit lines
// may be lost).
type AuditError struct {
	Path string
	Err  error
}

func (e *AuditError) Error() string { return "audit " + e.Path + ": " + e.Err.Error() }
func (e *AuditError) Unwrap() error { return e.Err }

// Close closes the session, the fabric (every port opened on it: ibsim
// gets its client slots back), the recording and the audit file, once; a
// concurrent call waits for the first. What a program must not lose is in
// its error as a *RecordError (the recording is incomplete) or an
// *AuditError (the audit file did not close cleanly).
func (h *Host) Close() error {
	h.closeOnce.Do(func() { h.closeErr = h.close() })
	return h.closeErr
}

func (h *Host) close() error {
	var errs []error
	if h.sess != nil {
		errs = append(errs, h.sess.Close())
	} else if h.tr != nil {
		errs = append(errs, h.tr.Close())
	}
	if h.fab != nil {
		errs = append(errs, h.fab.Close())
	}
	if h.audit != nil {
		if err := h.audit.Close(); err != nil {
			errs = append(errs, &AuditError{Path: h.audit.Name(), Err: err})
		}
	}
	if h.rec != nil {
		if err := h.rec.Err(); err != nil {
			errs = append(errs, &RecordError{Path: h.recPath, Err: err})
		}
	}
	return errors.Join(errs...)
}

// OpenWith opens the default port of f (as umad_get_port(NULL, 0) picks
// it) and the session on it. The Host owns f: Close closes it.
func OpenWith(ctx context.Context, f fabric.Fabric, o *Options) (*Host, error) {
	if o == nil {
		o = &Options{}
	}
	return start(ctx, f, o, "", 0, "", nil)
}

// start opens port (ca, port) of f, tells opened (when set) of it, and
// starts the session on it; uri, when set, names the URI in the port's
// error. On an error everything opened is closed.
func start(ctx context.Context, f fabric.Fabric, o *Options, ca string, port int, uri string, opened func(fabric.Transport)) (*Host, error) {
	h := &Host{fab: f}
	tr, err := openPort(ctx, f, o.SMI, ca, port)
	if err != nil {
		h.Close()
		if uri != "" {
			err = &URIError{URI: uri, Err: err}
		}
		return nil, err
	}
	h.tr = tr
	if opened != nil {
		opened(tr)
	}
	if err := h.newSession(o); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// port2Opener is a Fabric that opens a port as mad_rpc_open_port2 does
// (*kernel.Fabric).
type port2Opener interface {
	OpenPort2(ctx context.Context, ca string, port int, enforceSMI bool) (fabric.Transport, error)
}

// openPort opens (ca, port) of f as mode says.
func openPort(ctx context.Context, f fabric.Fabric, mode SMIMode, ca string, port int) (fabric.Transport, error) {
	if p, ok := f.(port2Opener); ok && mode != SMIAny {
		return p.OpenPort2(ctx, ca, port, mode == SMIEnforce)
	}
	return f.Open(ctx, ca, port)
}

// newSession starts the engine on h.tr, recording its traffic first when
// o.Record asks for it, with every port opened later on h.fab. Every
// backend goes through here.
func (h *Host) newSession(o *Options) error {
	h.raw = h.fab
	if o.Record != "" {
		f, err := createPrivate(o.Record)
		if err != nil {
			return &RecordError{Path: o.Record, Err: err}
		}
		r, err := record.NewRecorder(h.tr, f)
		if err != nil {
			f.Close()
			return &RecordError{Path: o.Record, Err: err}
		}
		h.tr, h.rec, h.recPath = r, r, o.Record
		h.fab = r.Fabric(h.fab)
	}
	so := o.Session
	if so.AuditUser == "" {
		so.AuditUser = auditUser()
	}
	switch {
	case so.Audit != nil:
	case o.Audit != "":
		f, err := os.OpenFile(o.Audit, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return &AuditError{Path: o.Audit, Err: err}
		}
		h.audit = f
		so.Audit = auditTo(f, "--audit "+o.Audit)
	case h.tr.Caps().Production:
		so.Audit = auditTo(os.Stderr, "the audit on stderr")
	}
	s, err := engine.New(h.tr, &so)
	if err != nil {
		return err
	}
	h.sess = s
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

// auditUser names who runs the program in audit lines.
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
