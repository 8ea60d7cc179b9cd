package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/fabric/record"
	"github.com/ibscript/ibscript/sim"
)

// ErrIbsimNotRunning is wrapped when no ibsim listens on an ibsim: URI's
// socket.
var ErrIbsimNotRunning = ibsim.ErrNoServer

// Open opens the fabric uri names (see the package comment), its port and
// the session on it. A URI that is wrong, or whose backend could not be
// opened, is a *URIError; a recording or audit file that could not be
// created a *RecordError or *AuditError. o may be nil.
func Open(ctx context.Context, uri string, o *Options) (*Host, error) {
	if o == nil {
		o = &Options{}
	}
	scheme, rest, _ := strings.Cut(uri, ":")
	switch scheme {
	case "auto", "":
		return openAuto(ctx, uri, o)
	case "sim":
		return openSim(ctx, uri, rest, o)
	case "umad":
		return openUMAD(ctx, uri, rest, o)
	case "ibsim":
		return openIbsim(ctx, uri, rest, o)
	case "replay":
		return openReplay(ctx, uri, rest, o)
	}
	return nil, &URIError{URI: uri, Err: fmt.Errorf("unknown backend %q (want auto, sim:, umad:, ibsim: or replay:)", scheme)}
}

// openAuto opens the kernel's default umad port when the host has one (an
// error there is the caller's to see, never a silent fall back to the
// simulator), else the embedded simulator on its bundled topology.
func openAuto(ctx context.Context, uri string, o *Options) (*Host, error) {
	fsys := fs.FS(nil)
	if o.Kernel != nil {
		fsys = o.Kernel.FS
	}
	if fsys == nil {
		fsys = os.DirFS("/")
	}
	if kernel.HasPorts(fsys) {
		return openUMAD(ctx, uri, "", o)
	}
	if o.Notice != nil {
		o.Notice(Notice{Kind: SimFallback, Topology: sim.DefaultTopology})
	}
	return openSimQuery(ctx, uri, "", url.Values{}, o)
}

// query parses the query of a URI's rest.
func query(uri, rest string) (string, url.Values, error) {
	before, q, _ := strings.Cut(rest, "?")
	v, err := url.ParseQuery(q)
	if err != nil {
		return "", nil, &URIError{URI: uri, Err: fmt.Errorf("bad query: %v", err)}
	}
	return before, v, nil
}

func badURI(uri, format string, args ...any) error {
	return &URIError{URI: uri, Err: fmt.Errorf(format, args...)}
}

// openSim opens sim:[PATH][?node=NAME&port=N&bare=1&sm=NAME].
func openSim(ctx context.Context, uri, rest string, o *Options) (*Host, error) {
	path, q, err := query(uri, rest)
	if err != nil {
		return nil, err
	}
	return openSimQuery(ctx, uri, path, q, o)
}

func openSimQuery(ctx context.Context, uri, path string, q url.Values, o *Options) (*Host, error) {
	// The simulated SM is one configured with the session's SM_Key
	// (OpenSM's sa_key), so a run with a key is trusted. Likewise its
	// ports carry the M_Key and its CC agents the CC_Key, as a fabric
	// whose SM set them: the keys are then in the answers, where no
	// output may show them (docs/security.md).
	opts := &sim.Options{Logger: o.Session.Logger, SAKey: o.Session.SMKey, MKey: o.Session.MKey, CCKey: o.Session.CCKey}
	node, port := q.Get("node"), 0
	for k := range q {
		switch k {
		case "node":
		case "port":
			p, err := strconv.Atoi(q.Get("port"))
			if err != nil || p < 0 || p > 254 {
				return nil, badURI(uri, "bad port %q", q.Get("port"))
			}
			port = p
		case "bare":
			b, err := strconv.ParseBool(q.Get("bare"))
			if err != nil {
				return nil, badURI(uri, "bad bare value %q", q.Get("bare"))
			}
			opts.Bare = b
		case "sm":
			opts.SMNode = q.Get("sm")
		default:
			return nil, badURI(uri, "unknown option %q (want node, port, bare, sm)", k)
		}
	}
	var (
		f   *sim.Fabric
		err error
	)
	if path == "" {
		f, err = sim.Default(opts)
	} else {
		if err := topologyExists(path); err != nil {
			return nil, &URIError{URI: uri, Err: err}
		}
		f, err = sim.LoadContext(ctx, path, opts)
	}
	if err != nil {
		return nil, err
	}
	return start(ctx, f, o, node, port, uri, nil)
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

// openIbsim opens ibsim:[SOCK][?node=NAME&nodes=A,B&issm=1&server=HOST[:PORT]].
// nodes lists the nodes a program may open ports on by name (RDMA CM
// endpoints on several hosts: with issm=1 ibsim forwards their GMPs). What
// the URI does not say comes from o.Ibsim. The attachment takes one of
// ibsim's 10 client slots; Close gives it back.
func openIbsim(ctx context.Context, uri, rest string, o *Options) (*Host, error) {
	sock, q, err := query(uri, rest)
	if err != nil {
		return nil, err
	}
	opts := ibsim.Options{Node: o.Ibsim.Node, Server: o.Ibsim.Server, Logger: o.Session.Logger, UnixQueueLen: unixQueueLen()}
	for k := range q {
		v := q.Get(k)
		switch k {
		case "node":
			opts.Node = v
		case "issm":
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, badURI(uri, "bad issm value %q", v)
			}
			opts.ISSM = b
		case "server":
			opts.Server = v
		case "nodes":
			for _, n := range strings.Split(v, ",") {
				if n = strings.TrimSpace(n); n != "" {
					opts.Nodes = append(opts.Nodes, n)
				}
			}
		default:
			return nil, badURI(uri, "unknown option %q (want node, nodes, issm, server)", k)
		}
	}
	if sock == "" {
		sock = o.Ibsim.Sock // empty: ibsim.DefaultSockName
	}
	if opts.Server == "" && o.Notice != nil {
		o.Notice(Notice{Kind: LocalIbsim})
	}
	return start(ctx, ibsim.NewFabric(sock, &opts), o, "", 0, uri, nil)
}

// unixQueueLen reads net.unix.max_dgram_qlen, which bounds the window on an
// ibsim attachment whose socket could not be paired; 0 (the kernel's
// default of 10) when it cannot.
func unixQueueLen() int {
	b, err := os.ReadFile("/proc/sys/net/unix/max_dgram_qlen")
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n <= 0 {
		return 0
	}
	return n
}

// openUMAD opens umad:[CA[/PORT]]: the kernel's /dev/infiniband/umadN
// devices. "CA/PORT", "CA" (that CA's best port), or empty (libibumad's
// default port: the first Active IB port in sysfs directory order).
// Opening needs read-write access to the device node: root, or a member
// of the group the udev rules give it (rdma).
func openUMAD(ctx context.Context, uri, rest string, o *Options) (*Host, error) {
	ca, port, err := ParseUMAD(rest)
	if err != nil {
		return nil, &URIError{URI: uri, Err: err}
	}
	var opened func(fabric.Transport)
	if o.Notice != nil && (ca == "" || port == 0) {
		opened = func(tr fabric.Transport) { o.Notice(Notice{Kind: DefaultPort, Port: tr.Port()}) }
	}
	return start(ctx, kernel.New(o.Kernel), o, ca, port, uri, opened)
}

// ParseUMAD splits what follows "umad:" in a URI, "CA/PORT", "CA" or "",
// into a CA name and port number.
func ParseUMAD(rest string) (string, int, error) {
	ca, p, hasPort := strings.Cut(rest, "/")
	if strings.ContainsAny(ca, "?&=") {
		return "", 0, fmt.Errorf("bad CA name %q (want umad:CA/PORT, umad:CA or umad:)", ca)
	}
	if !hasPort {
		return ca, 0, nil
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 254 {
		return "", 0, fmt.Errorf("bad port %q (want 0..254)", p)
	}
	if ca == "" && port != 0 {
		// umad:/2 is libibumad's NULL CA with port 2 as a filter.
		return "", port, nil
	}
	return ca, port, nil
}

// openReplay plays a recording (Options.Record) back as the fabric.
func openReplay(ctx context.Context, uri, path string, o *Options) (*Host, error) {
	if path == "" {
		return nil, badURI(uri, "want replay:FILE")
	}
	rec, err := record.ReadFileContext(ctx, path)
	if err != nil {
		return nil, &URIError{URI: uri, Err: err}
	}
	h := &Host{tr: record.NewReplay(rec), fab: record.NewReplayFabric(rec)}
	if err := h.newSession(o); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}
