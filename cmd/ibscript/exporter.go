package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
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
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/ibscript/ibscript/exporter"
	"github.com/ibscript/ibscript/sim"
)

// exporterFlags are the exporter command's flags, named as
// node_exporter's (--web.*).
type exporterFlags struct {
	listen           string
	telemetryPath    string
	interval         time.Duration
	discoverInterval time.Duration
	once             bool    // --once: one sweep, written to --output, then exit
	output           string  // --output FILE: where --once writes (atomically)
	hca              bool    // --collector.hca: CA ports too
	details          bool    // --details: PortRcvErrorDetails and PortXmitDiscardDetails of every swept port
	switchDetails    bool    // --collector.switch.rcv-err-details: the same, of switch ports (treydock's spelling)
	hcaDetails       bool    // --collector.hca.rcv-err-details: the same, of CA ports (treydock's spelling)
	xmitWaitTick     int     // --xmit-wait-tick: a PortXmitWait tick in symbol times
	resetSaturated   bool    // --reset-saturated: clear saturated PortCounters counters
	simTraffic       float64 // --sim-traffic: the embedded simulator's background load
	traps            bool    // --traps: rediscover on the SM's traps 64, 65, 128 (default on)
}

// startSimTraffic gives the embedded simulator (sim:) the background load
// of --sim-traffic, so that the exporter's graphs are not flat; other
// backends carry their own traffic.
func startSimTraffic(c *config, b *backend) error {
	sf, ok := b.raw.(*sim.Fabric)
	if !ok || c.exporter.simTraffic == 0 {
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
		Details:          f.details || f.switchDetails,
		HCADetails:       f.details || f.hcaDetails,
		XmitWaitTick:     f.xmitWaitTick,
		ResetSaturated:   f.resetSaturated,
		Traps:            f.traps,
	}
}

// resetGate refuses --reset-saturated at start on a production fabric
// (the kernel backend) without --allow-set: its Sets would be refused at
// every sweep.
func resetGate(c *config, b *backend) error {
	if c.exporter.resetSaturated && !c.allowSet && b.tr.Caps().Production {
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
func checkListenAddress(addr string) error {
	shown := addr
	if addr == "" {
		shown = "''"
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
	if err := checkListenAddress(f.listen); err != nil {
		return err
	}
	if f.simTraffic < 0 || f.simTraffic > 1 || f.simTraffic != f.simTraffic {
		return fmt.Errorf("--sim-traffic %v: want a fraction of link capacity, 0..1 (0: none)", f.simTraffic)
	}
	if f.xmitWaitTick < 1 || f.xmitWaitTick > 256 {
		return fmt.Errorf("--xmit-wait-tick %d: want 1..256 symbol times (PortSamplesControl.Tick plus one)", f.xmitWaitTick)
	}
	if f.once != (f.output != "") {
		return errors.New("--once and --output FILE go together: one sweep written to FILE (node_exporter's textfile collector)")
	}
	if !strings.HasPrefix(f.telemetryPath, "/") || f.telemetryPath == "/healthz" || f.telemetryPath == "/" {
		return fmt.Errorf("--web.telemetry-path %q: want a path starting with / other than / and /healthz", f.telemetryPath)
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
	if c.exporter.once {
		return exporterOnce(ctx, c, stderr)
	}
	// Listen first: a busy port is said before the fabric is opened.
	ln, err := net.Listen("tcp", c.exporter.listen)
	if err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: --web.listen-address %s: %v\n", c.exporter.listen, err)
		return exitError
	}
	defer ln.Close()
	b, err := openBackend(ctx, c, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ibscript: %v\n", err)
		return exitError
	}
	defer func() { code = b.finish(code, stderr) }()
	if err := resetGate(c, b); err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", err)
		return exitError
	}
	if err := startSimTraffic(c, b); err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", err)
		return exitError
	}

	logger := c.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	opts := c.exporter.options(c)
	opts.Logger = logger
	exp := exporter.New(b.sess, opts)
	// A scrape in the text format is served from the sweep rendered once
	// (exporter.Text), the Go and process collectors gathered each time;
	// OpenMetrics and protobuf through a registry (exporter.Gatherer).
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	errLog := slog.NewLogLogger(logger.Handler(), slog.LevelError)
	mux.Handle(c.exporter.telemetryPath, metricsHandler(exp, reg, promhttp.HandlerFor(exp.Gatherer(reg), promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		Timeout:           30 * time.Second,
		ErrorLog:          errLog,
	}), errLog))
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
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	runCtx, stopRun := context.WithCancel(ctx)
	runDone := make(chan struct{})
	go func() {
		defer close(runDone)
		exp.Run(runCtx) // returns runCtx's error
	}()
	fmt.Fprintf(stderr, "ibscript exporter: serving %s on http://%s (sweeps every %v)\n", c.exporter.telemetryPath, ln.Addr(), c.exporter.interval)
	if hook := testExporterStarted; hook != nil {
		hook(ln.Addr().String(), func() { c.cancel(errExporterStopped) })
	}

	var err2 error
	select {
	case <-ctx.Done():
	case err2 = <-serveErr:
	}
	stopRun()
	sctx, cancel := context.WithTimeout(context.Background(), exporterShutdown)
	defer cancel()
	srv.Shutdown(sctx)
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

// metricsHandler serves a scrape that accepts the Prometheus text format
// (Prometheus offers it beside OpenMetrics, which it prefers; the text is
// what the exporter renders once per sweep) from exp.Text: the rendered sweep's gzip member as it is when the
// scraper accepts gzip (Prometheus does), decompressed otherwise, then the
// sweep age and extra's families; other formats go to other.
func metricsHandler(exp *exporter.Exporter, extra prometheus.Gatherer, other http.Handler, errLog *log.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !acceptsText(r) {
			other.ServeHTTP(w, r)
			return
		}
		var dyn bytes.Buffer
		rd := exp.Text()
		if rd != nil {
			dyn.Write(exp.AppendAge(nil, rd, time.Now()))
		}
		mfs, err := extra.Gather()
		if err != nil {
			errLog.Printf("ibscript exporter: gathering the Go and process collectors: %v", err)
		}
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(&dyn, mf); err != nil {
				errLog.Printf("ibscript exporter: %s: %v", mf.GetName(), err)
			}
		}
		h := w.Header()
		h.Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
		h.Add("Vary", "Accept-Encoding")
		if acceptsGzip(r) {
			h.Set("Content-Encoding", "gzip")
			if rd != nil {
				w.Write(rd.Gzip)
			}
			zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
			zw.Write(dyn.Bytes())
			zw.Close()
			return
		}
		if rd != nil {
			zr, err := gzip.NewReader(bytes.NewReader(rd.Gzip))
			if err != nil {
				errLog.Printf("ibscript exporter: the rendered sweep: %v", err)
				return
			}
			// A write error is the scraper gone (curl | head): nothing to
			// log, as for the gzip path's writes; a read error is ours.
			ww := &writeErr{w: w}
			if _, err := io.Copy(ww, zr); err != nil {
				if ww.err == nil {
					errLog.Printf("ibscript exporter: the rendered sweep: %v", err)
				}
				return
			}
		}
		w.Write(dyn.Bytes())
	})
}

// writeTextfile writes the exporter's last sweep in the text format to
// path atomically, as node_exporter's textfile collector wants: a
// temporary file in the same directory, 0644, renamed over path.
func writeTextfile(path string, exp *exporter.Exporter) (err error) {
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

// writeErr remembers its writer's error.
type writeErr struct {
	w   io.Writer
	err error
}

func (e *writeErr) Write(b []byte) (int, error) {
	n, err := e.w.Write(b)
	if err != nil {
		e.err = err
	}
	return n, err
}

// acceptsText reports whether the request accepts the Prometheus text
// format: no Accept header, or text/plain (version 0.0.4 or none), text/*
// or */* with a non-zero quality. Prometheus' own scrapes do, at a lower
// quality than OpenMetrics; a client that asks for OpenMetrics or
// protobuf alone gets it through the registry.
func acceptsText(r *http.Request) bool {
	accept := r.Header.Values("Accept")
	if len(accept) == 0 {
		return true
	}
	for _, h := range accept {
		for _, part := range strings.Split(h, ",") {
			params := strings.Split(part, ";")
			typ := strings.ToLower(strings.TrimSpace(params[0]))
			if typ != "text/plain" && typ != "text/*" && typ != "*/*" {
				continue
			}
			ok := true
			for _, p := range params[1:] {
				k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
				switch strings.ToLower(strings.TrimSpace(k)) {
				case "q":
					if q, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil || q <= 0 {
						ok = false
					}
				case "version":
					if typ == "text/plain" && strings.TrimSpace(v) != "0.0.4" {
						ok = false
					}
				}
			}
			if ok {
				return true
			}
		}
	}
	return false
}

// acceptsGzip reports whether the request's Accept-Encoding names gzip
// (with a non-zero quality).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		enc, q, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.TrimSpace(enc) == "gzip" && strings.ReplaceAll(strings.TrimSpace(q), " ", "") != "q=0" {
			return true
		}
	}
	return false
}

// exporterOnce runs one sweep (with its discovery) and writes it to
// --output in the Prometheus text format, atomically (a temporary file in
// the same directory, renamed), for node_exporter's textfile collector.
func exporterOnce(ctx context.Context, c *config, stderr io.Writer) (code int) {
	// One sweep, its text written, then exit: as the one-shot tools.
	oneShotGC(c)
	b, err := openBackend(ctx, c, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "ibscript: %v\n", err)
		return exitError
	}
	defer func() { code = b.finish(code, stderr) }()
	if err := resetGate(c, b); err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", err)
		return exitError
	}
	opts := c.exporter.options(c)
	opts.Logger = c.logger
	exp := exporter.New(b.sess, opts)
	if _, err := exp.Sweep(ctx); err != nil {
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		fmt.Fprintf(stderr, "ibscript exporter: %v\n", err)
		return exitError
	}
	if err := writeTextfile(c.exporter.output, exp); err != nil {
		fmt.Fprintf(stderr, "ibscript exporter: --output %s: %v\n", c.exporter.output, err)
		return exitError
	}
	return exitOK
}
