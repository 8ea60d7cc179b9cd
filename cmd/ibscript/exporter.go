package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/coreos/go-systemd/v22/activation"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/promslog"
	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v2"

	"github.com/ibscript/ibscript/exporter"
	"github.com/ibscript/ibscript/host"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

// exporterFlags are the exporter command's flags, named as
// node_exporter's (--web.*).
type exporterFlags struct {
	listen           string   // the first --web.listen-address (tests, messages)
	listens          []string // every --web.listen-address, in order (default :9315)
	webConfig        string   // --web.config.file: exporter-toolkit's TLS and basic auth
	systemdSocket    bool     // --web.systemd-socket: systemd's listeners instead
	noExporterStats  bool     // --web.disable-exporter-metrics: no go_*, process_*
	switchOn         bool     // --collector.switch (default on; --no-collector.switch)
	switchBase       bool     // --collector.switch.base-metrics (default on)
	hcaBase          bool     // --collector.hca.base-metrics (default on)
	runonce          bool     // --exporter.runonce: --once as treydock's (collector="switch-runonce")
	lockfile         string   // --exporter.lockfile: held during a --exporter.runonce sweep
	logLevel         *promslog.Level
	logFormat        *promslog.Format
	noop             noopFlags // treydock's flags for its external tools: accepted, unused
	telemetryPath    string
	interval         time.Duration
	discoverInterval time.Duration
	reference        string       // --topology-reference FILE: what infiniband_topology_* compare with
	ref              *topo.Fabric // its topology, read by check
	once             bool         // --once: one sweep, written to --output, then exit
	output           string       // --output FILE: where --once writes (atomically)
	hca              bool         // --collector.hca: CA ports too
	details          bool         // --details: PortRcvErrorDetails and PortXmitDiscardDetails of every swept port
	switchDetails    bool         // --collector.switch.rcv-err-details: the same, of switch ports (treydock's spelling)
	hcaDetails       bool         // --collector.hca.rcv-err-details: the same, of CA ports (treydock's spelling)
	xmitWaitTick     int          // --xmit-wait-tick: a PortXmitWait tick in symbol times
	resetSaturated   bool         // --reset-saturated: clear saturated PortCounters counters
	simTraffic       float64      // --sim-traffic: the embedded simulator's background load
	traps            bool         // --traps: rediscover on the SM's traps 64, 65, 128 (default on)
}

// noopFlags are treydock/infiniband_exporter's flags that name the
// external programs it runs (ibnetdiscover, perfquery, ibswinfo, sudo):
// ibscript sends the MADs itself, so they are accepted with treydock's
// defaults and change nothing. --collector.ibswinfo (a vendor register
// read through mstflint's ibswinfo script) is logged as not collected.
type noopFlags struct {
	ibswinfo                                 bool
	ibswinfoPath, ibnetdiscoverPath, pqPath  string
	ibswinfoTimeout, ibnetTimeout, pqTimeout time.Duration
	ibswinfoMax, pqMax                       int
	sudo                                     bool
}

// startSimTraffic gives the embedded simulator (sim:) the background load
// of --sim-traffic, so that the exporter's graphs are not flat; other
// backends carry their own traffic.
func startSimTraffic(c *config, h *host.Host) error {
	sf := h.Sim()
	if sf == nil || c.exporter.simTraffic == 0 {
		return nil
	}
	// A few ports with symbol errors, a few a minute each.
	return sf.SetTraffic(&sim.Traffic{Load: c.exporter.simTraffic, ErrorRate: 0.05})
}

// options are the exporter.Options the flags give.
func (f *exporterFlags) options(c *config) *exporter.Options {
	return &exporter.Options{
		Interval:         f.interval,
		DiscoverInterval: f.discoverInterval,
		Names:            c.names,
		HCA:              f.hca,
		NoSwitch:         !f.switchOn,
		NoSwitchBase:     !f.switchBase,
		NoHCABase:        !f.hcaBase,
		RunOnce:          f.runonce,
		Details:          f.details || f.switchDetails,
		HCADetails:       f.details || f.hcaDetails,
		XmitWaitTick:     f.xmitWaitTick,
		Reference:        f.ref,
		ResetSaturated:   f.resetSaturated,
		Traps:            f.traps,
	}
}

// resetGate refuses --reset-saturated at start on a production fabric
// (the kernel backend) without --allow-set: its Sets would be refused at
// every sweep.
func resetGate(c *config, h *host.Host) error {
	if c.exporter.resetSaturated && !c.allowSet && h.Transport().Caps().Production {
		return errors.New("--reset-saturated sends PortCounters Sets, refused on a production fabric without --allow-set (each is audited: --audit FILE)")
	}
	return nil
}

// testExporterStarted, set by tests only, is called once the exporter
// listens, with its address and a function that ends it as a signal
// would.
var testExporterStarted func(addr string, stop func())

// exporterShutdown bounds the wait for the HTTP server to finish the
// scrapes in flight when the exporter ends (below the guard's grace
// period, so the exporter ends by itself).
const exporterShutdown = time.Second

// errExporterStopped ends the exporter from a test, as a signal does.
var errExporterStopped = errors.New("exporter stopped")

// The shortest --interval and --discover-interval: below them a sweep
// would start before the last one could end on any fabric, and --interval
// 1ns was taken.
const (
	minInterval         = 10 * time.Millisecond
	minDiscoverInterval = time.Second
)

// checkListenAddress refuses a --web.listen-address net.Listen would take
// as something else: "" listened on every interface at a random port.
// Port 0, written out, is the caller's choice of a random port.
// exporter-toolkit's vsock:// addresses are refused by name.
func checkListenAddress(addr string) error {
	shown := addr
	if addr == "" {
		shown = "''"
	}
	if strings.HasPrefix(addr, "vsock://") {
		return fmt.Errorf("--web.listen-address %s: vsock listeners are not supported; want HOST:PORT or :PORT", shown)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("--web.listen-address %s: want HOST:PORT or :PORT (default :9315)", shown)
	}
	if n, err := strconv.Atoi(port); err == nil && (n < 0 || n > 65535) {
		return fmt.Errorf("--web.listen-address %s: want a port number 0..65535", shown)
	}
	return nil
}

// addresses are the --web.listen-address values, :9315 when none.
func (f *exporterFlags) addresses() []string {
	if len(f.listens) == 0 {
		return []string{f.listen}
	}
	return f.listens
}

func (f *exporterFlags) check() error {
	if f.interval <= 0 {
		return fmt.Errorf("--interval %v: want a positive duration (10s, 1s)", f.interval)
	}
	if f.interval < minInterval {
		return fmt.Errorf("--interval %v: want at least %v between sweeps (a bare number is milliseconds: 10s is 10000)", f.interval, minInterval)
	}
	if f.discoverInterval <= 0 {
		return fmt.Errorf("--discover-interval %v: want a positive duration (5m)", f.discoverInterval)
	}
	if f.discoverInterval < minDiscoverInterval {
		return fmt.Errorf("--discover-interval %v: want at least %v between discoveries (a bare number is milliseconds: 5m is 300000)", f.discoverInterval, minDiscoverInterval)
	}
	for _, a := range f.addresses() {
		if err := checkListenAddress(a); err != nil {
			return err
		}
	}
	if f.systemdSocket && len(f.listens) > 0 {
		return errors.New("--web.systemd-socket takes systemd's listeners: no --web.listen-address with it")
	}
	if f.simTraffic < 0 || f.simTraffic > 1 || f.simTraffic != f.simTraffic {
		return fmt.Errorf("--sim-traffic %v: want a fraction of link capacity, 0..1 (0: none)", f.simTraffic)
	}
	if f.xmitWaitTick < 1 || f.xmitWaitTick > 256 {
		return fmt.Errorf("--xmit-wait-tick %d: want 1..256 symbol times (PortSamplesControl.Tick plus one)", f.xmitWaitTick)
	}
	if f.runonce {
		f.once = true
	}
	if f.once != (f.output != "") {
		return errors.New("--once and --output FILE go together (--exporter.runonce and --exporter.output too): one sweep written to FILE, or to stdout with -, for node_exporter's textfile collector")
	}
	if f.output != "" && f.output != "-" {
		// Checked before the sweep: the file is written into its
		// directory (a temporary file renamed over it).
		dir := filepath.Dir(f.output)
		if fi, err := os.Stat(dir); err != nil {
			return fmt.Errorf("--output %s: directory %s: %v", f.output, dir, errors.Unwrap(err))
		} else if !fi.IsDir() {
			return fmt.Errorf("--output %s: %s is not a directory", f.output, dir)
		}
	}
	if !strings.HasPrefix(f.telemetryPath, "/") || f.telemetryPath == "/healthz" || f.telemetryPath == "/" {
		return fmt.Errorf("--web.telemetry-path %q: want a path starting with / other than / and /healthz", f.telemetryPath)
	}
	if f.reference != "" {
		ref, err := topo.Load(f.reference)
		if err != nil {
			return fmt.Errorf("--topology-reference %s: %v", f.reference, err)
		}
		f.ref = ref
	}
	return nil
}

// runExporter serves the fabric's counters to Prometheus until a signal
// (or --time-limit) ends it: the sweeps run in the background, each
// scrape is answered from the last complete one.
func runExporter(ctx context.Context, c *config, stdout, stderr io.Writer) (code int) {
	if len(c.args) > 0 {
		fmt.Fprintf(stderr, "ibscript exporter: unexpected arguments %s\n", strings.Join(c.args, " "))
		return exitError
	}
	if err := c.exporter.check(); err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", err)
		return exitError
	}
	logger := exporterLogger(c, stderr)
	if c.exporter.noop.ibswinfo {
		logger.Warn("--collector.ibswinfo is accepted but collects nothing: ibswinfo reads switch vendor registers through mstflint, which ibscript does not do")
	}
	if c.exporter.once {
		return exporterOnce(ctx, c, logger, stdout, stderr)
	}
	// The web configuration (TLS, basic auth) is checked before anything
	// listens: a bad file ends the start, as in every exporter.
	if err := web.Validate(c.exporter.webConfig); err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: --web.config.file %s: %v\n", c.exporter.webConfig, err)
		return exitError
	}
	// Listen first: a busy port is said before the fabric is opened.
	lns, err := exporterListeners(&c.exporter)
	if err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", err)
		return exitError
	}
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	b, status := openExporterBackend(ctx, c, stderr)
	if b == nil {
		return status
	}
	defer func() { code = finish(b, code, stderr) }()
	if err := startSimTraffic(c, b); err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", err)
		return exitError
	}

	opts := c.exporter.options(c)
	opts.Logger = logger
	opts.Fabric = b.Fabric() // a planarized port: every plane swept, the series labelled
	exp := exporter.New(b.Session(), opts)
	// A scrape in the text format is served from the sweep rendered once
	// (exporter.Text), the Go and process collectors gathered each time;
	// OpenMetrics and protobuf through a registry (exporter.Gatherer).
	reg := prometheus.NewRegistry()
	if !c.exporter.noExporterStats {
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	errLog := slog.NewLogLogger(logger.Handler(), slog.LevelError)
	mux := exporterMux(c, exp, reg, errLog)
	return serveExporter(ctx, c, exp, lns, mux, logger, errLog, stderr)
}

// exporterMux serves the metrics at --web.telemetry-path (the fast path,
// with reg's collectors beside it), /healthz and an index page.
func exporterMux(c *config, exp *exporter.Exporter, reg *prometheus.Registry, errLog *log.Logger) *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle(c.exporter.telemetryPath, exporter.Handler(exp, &exporter.HandlerOptions{Extra: reg, ErrorLog: errLog}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		s := exp.Snapshot()
		if s == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "no complete sweep yet")
			return
		}
		fmt.Fprintf(w, "ok: sweep %d ended %.3fs ago\n", s.Seq, time.Since(s.Time).Seconds())
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<html><head><title>ibscript exporter</title></head><body><h1>ibscript exporter</h1><p><a href=%q>Metrics</a> <a href=\"/healthz\">Health</a></p></body></html>\n", c.exporter.telemetryPath)
	})
	return mux
}

// serveExporter serves mux on each listener (TLS and basic auth from
// --web.config.file) while exp sweeps, until ctx ends or a server fails,
// then shuts them down and returns the exit status: 0 when a signal (or
// a test) stopped it.
func serveExporter(ctx context.Context, c *config, exp *exporter.Exporter, lns []net.Listener, mux *http.ServeMux, logger *slog.Logger, errLog *log.Logger, stderr io.Writer) int {
	// One server per listener: exporter-toolkit's web.Serve wraps the
	// server's handler (basic auth) and sets its TLS configuration, so
	// servers are not shared between listeners.
	webFlags := &web.FlagConfig{WebConfigFile: &c.exporter.webConfig}
	scheme := "http"
	if tlsOn, err := webTLS(c.exporter.webConfig); err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: --web.config.file %s: %v\n", c.exporter.webConfig, err)
		return exitError
	} else if tlsOn {
		scheme = "https"
	}
	var srvs []*http.Server
	serveErr := make(chan error, len(lns))
	for _, ln := range lns {
		srv := &http.Server{
			Handler:           mux,
			ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout:       30 * time.Second,
			WriteTimeout:      60 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          errLog,
		}
		srvs = append(srvs, srv)
		go func() { serveErr <- web.Serve(ln, srv, webFlags, logger) }()
	}
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		exp.Run(runCtx) // returns runCtx's error
	}()
	for _, ln := range lns {
		fmt.Fprintf(stderr, "ibscript exporter: serving %s on %s://%s (sweeps every %v)\n", c.exporter.telemetryPath, scheme, ln.Addr(), c.exporter.interval)
	}
	if hook := testExporterStarted; hook != nil {
		hook(lns[0].Addr().String(), func() { c.cancel(errExporterStopped) })
	}

	var err2 error
	select {
	case <-ctx.Done():
	case err2 = <-serveErr:
	}
	stopRun()
	sctx, cancel := context.WithTimeout(context.Background(), exporterShutdown)
	defer cancel()
	for _, srv := range srvs {
		srv.Shutdown(sctx)
	}
	<-runDone
	if err2 != nil && !errors.Is(err2, http.ErrServerClosed) {
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", err2)
		return exitError
	}
	// A daemon told to stop by a signal (or a test) has done its job.
	var sig errSignal
	if cause := context.Cause(ctx); errors.As(cause, &sig) || errors.Is(cause, errExporterStopped) {
		return exitOK
	} else if cause != nil {
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", cause)
	}
	return exitError
}

// writeTextfile writes the exporter's last sweep in the text format to
// path atomically, as node_exporter's textfile collector wants: a
// temporary file in the same directory, 0644, renamed over path.
func writeTextfile(path string, exp *exporter.Exporter, stdout io.Writer) (err error) {
	if path == "-" {
		bw := bufio.NewWriterSize(stdout, 1<<16)
		if err := exp.WriteText(bw, time.Now()); err != nil {
			return err
		}
		return bw.Flush()
	}
	if fi, serr := os.Stat(path); serr == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		// A device or a FIFO (/dev/null, a pipe to a collector) is
		// written as it is, never replaced by a renamed file: as root
		// the rename would put a regular file in /dev/null's place.
		return writeTextInto(path, exp)
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err = exp.WriteText(bw, time.Now()); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(0o644); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// writeTextInto writes the last sweep into the existing file path (a
// device or a FIFO), opened without blocking: a FIFO nobody reads is
// an error (ENXIO), not a hang.
func writeTextInto(path string, exp *exporter.Exporter) error {
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	err = exp.WriteText(bw, time.Now())
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// exporterOnce runs one sweep (with its discovery) and writes it to
// --output in the Prometheus text format, atomically (a temporary file in
// the same directory, renamed), for node_exporter's textfile collector;
// --output - writes it to stdout. With --exporter.runonce it holds
// --exporter.lockfile meanwhile, as treydock/infiniband_exporter does, so
// that two cron runs never sweep at once.
func exporterOnce(ctx context.Context, c *config, logger *slog.Logger, stdout, stderr io.Writer) (code int) {
	if c.exporter.runonce {
		unlock, err := lockFile(c.exporter.lockfile)
		if err != nil {
			fmt.Fprintf(stderr, "ibscript exporter: --exporter.lockfile %s: %v\n", c.exporter.lockfile, err)
			return exitError
		}
		defer unlock()
	}
	// One sweep, its text written, then exit: as the one-shot tools.
	oneShotGC(c)
	b, status := openExporterBackend(ctx, c, stderr)
	if b == nil {
		return status
	}
	defer func() { code = finish(b, code, stderr) }()
	opts := c.exporter.options(c)
	opts.Logger = logger
	opts.Fabric = b.Fabric() // a planarized port: every plane swept, the series labelled
	exp := exporter.New(b.Session(), opts)
	if _, err := exp.Sweep(ctx); err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", err)
		return exitError
	}
	if err := writeTextfile(c.exporter.output, exp, stdout); err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: --output %s: %v\n", c.exporter.output, err)
		return exitError
	}
	return exitOK
}

// openExporterBackend opens the backend for the exporter and holds it to
// resetGate; a failure is said on stderr and comes back as the exit
// status, with nil.
func openExporterBackend(ctx context.Context, c *config, stderr io.Writer) (*host.Host, int) {
	b, code := openCommandBackend(ctx, c, stderr)
	if b == nil {
		return nil, code
	}
	if err := resetGate(c, b); err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", err)
		return nil, finish(b, exitError, stderr)
	}
	return b, exitOK
}

// exporterLogger is the exporter's log: promslog's (prometheus/common), as
// every Prometheus exporter logs, at --log.level (info; debug with
// --debug) in --log.format (logfmt or json), to stderr.
func exporterLogger(c *config, stderr io.Writer) *slog.Logger {
	lvl, format := c.exporter.logLevel, c.exporter.logFormat
	if lvl == nil {
		lvl = promslog.NewLevel()
	}
	if c.debug {
		lvl.Set("debug")
	}
	return promslog.New(&promslog.Config{Level: lvl, Format: format, Writer: stderr})
}

// exporterListeners opens the --web.listen-address listeners, or takes
// systemd's with --web.systemd-socket.
func exporterListeners(f *exporterFlags) ([]net.Listener, error) {
	if f.systemdSocket {
		lns, err := activation.Listeners()
		if err != nil {
			return nil, fmt.Errorf("--web.systemd-socket: %v", err)
		}
		var out []net.Listener
		for _, ln := range lns {
			if ln != nil {
				out = append(out, ln)
			}
		}
		if len(out) == 0 {
			return nil, errors.New("--web.systemd-socket: systemd passed no listening socket (LISTEN_FDS)")
		}
		return out, nil
	}
	var lns []net.Listener
	for _, a := range f.addresses() {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return nil, fmt.Errorf("--web.listen-address %s: %v", a, err)
		}
		lns = append(lns, ln)
	}
	return lns, nil
}

// webTLS reports whether the web configuration file turns TLS on (its
// tls_server_config names a certificate), for the messages; the file was
// validated by web.Validate.
func webTLS(path string) (bool, error) {
	if path == "" {
		return false, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false, err
	}
	var cfg web.Config
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		return false, err
	}
	t := cfg.TLSConfig
	return t.TLSCertPath != "" || t.TLSCert != "", nil
}
