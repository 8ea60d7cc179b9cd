package exporter

import (
	"bytes"
	"compress/gzip"
	"io"
	"log"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
)

// HandlerOptions tune Handler. A nil *HandlerOptions means defaults.
type HandlerOptions struct {
	// Extra, when not nil, is gathered at each scrape and served after
	// the exporter's families (a program's Go and process collectors).
	Extra prometheus.Gatherer
	// ErrorLog gets what goes wrong serving a scrape; nil: log's
	// standard logger.
	ErrorLog *log.Logger
	// Timeout bounds a scrape served through a registry (OpenMetrics,
	// protobuf); DefaultScrapeTimeout when 0.
	Timeout time.Duration
	// NoOpenMetrics serves the Prometheus text format (or protobuf) to a
	// scraper that asks for OpenMetrics.
	NoOpenMetrics bool
}

// DefaultScrapeTimeout is HandlerOptions.Timeout's default.
const DefaultScrapeTimeout = 30 * time.Second

// Handler serves e's last complete sweep to Prometheus, as ibscript
// exporter's /metrics does: a scrape that accepts the Prometheus text
// format (Prometheus offers it beside OpenMetrics, which it prefers) is
// answered from the sweep rendered once (Exporter.Text): its gzip member
// as it is when the scraper accepts gzip (Prometheus does), decompressed
// otherwise, then the sweep age and o.Extra's families; OpenMetrics and
// protobuf go through a registry (Exporter.Gatherer, promhttp). Before
// the first sweep it serves o.Extra's families only. e's Run keeps the
// sweeps coming; Handler only reads them.
func Handler(e *Exporter, o *HandlerOptions) http.Handler {
	var opts HandlerOptions
	if o != nil {
		opts = *o
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultScrapeTimeout
	}
	if opts.ErrorLog == nil {
		opts.ErrorLog = log.Default()
	}
	extra := opts.Extra
	if extra == nil {
		extra = prometheus.Gatherers{}
	}
	other := promhttp.HandlerFor(e.Gatherer(opts.Extra), promhttp.HandlerOpts{
		EnableOpenMetrics: !opts.NoOpenMetrics,
		Timeout:           opts.Timeout,
		ErrorLog:          opts.ErrorLog,
	})
	return textHandler(e, extra, other, opts.ErrorLog)
}

// textHandler serves a scrape that accepts the text format from exp.Text
// (see Handler); other formats go to other.
func textHandler(exp *Exporter, extra prometheus.Gatherer, other http.Handler, errLog *log.Logger) http.Handler {
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
			errLog.Printf("exporter: gathering the extra collectors: %v", err)
		}
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(&dyn, mf); err != nil {
				errLog.Printf("exporter: %s: %v", mf.GetName(), err)
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
				errLog.Printf("exporter: the rendered sweep: %v", err)
				return
			}
			// A write error is the scraper gone (curl | head): nothing to
			// log, as for the gzip path's writes; a read error is ours.
			ww := &writeErr{w: w}
			if _, err := io.Copy(ww, zr); err != nil {
				if ww.err == nil {
					errLog.Printf("exporter: the rendered sweep: %v", err)
				}
				return
			}
		}
		w.Write(dyn.Bytes())
	})
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
