package exporter

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Rendered is one snapshot written in the Prometheus text format (0.0.4),
// gzip-compressed: every series but the sweep age, which changes at each
// scrape (AppendAge). A scrape serves these bytes as they are (one gzip
// member; the age and other collectors follow as another).
type Rendered struct {
	Snap *Snapshot
	Gzip []byte
}

// textCache holds the last Rendered; mu serializes renderings.
type textCache struct {
	mu   sync.Mutex
	last *Rendered
}

// byName are the families in name order, as a registry sorts them.
var byName = func() []*family {
	out := slices.Clone(families)
	slices.SortFunc(out, func(a, b *family) int { return strings.Compare(a.name, b.name) })
	return out
}()

// Text returns the last complete sweep rendered (nil before the first),
// rendering it on the first call for that sweep; concurrent callers wait
// for one rendering. Run renders each sweep as it publishes it once Text
// has been called, so that scrapes find it ready.
func (e *Exporter) Text() *Rendered {
	s := e.snap.Load()
	if s == nil {
		return nil
	}
	e.serveText.Store(true)
	e.text.mu.Lock()
	defer e.text.mu.Unlock()
	if r := e.text.last; r != nil && r.Snap == s {
		return r
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	e.writeText(zw, s)
	zw.Close()
	r := &Rendered{Snap: s, Gzip: slices.Clip(buf.Bytes())}
	e.text.last = r
	return r
}

// WriteText writes the last sweep's series in the Prometheus text format
// (0.0.4), uncompressed, with its age at now last, as one scrape would
// get them: for a file (node_exporter's textfile collector). It returns
// w's first error, and an error when there is no sweep yet.
func (e *Exporter) WriteText(w io.Writer, now time.Time) error {
	s := e.snap.Load()
	if s == nil {
		return errors.New("exporter: no sweep")
	}
	ew := &errWriter{w: w}
	e.writeText(ew, s)
	ew.Write(e.AppendAge(nil, &Rendered{Snap: s}, now))
	return ew.err
}

// errWriter keeps a writer's first error and writes nothing after it.
type errWriter struct {
	w   io.Writer
	err error
}

func (w *errWriter) Write(b []byte) (int, error) {
	if w.err != nil {
		return 0, w.err
	}
	n, err := w.w.Write(b)
	w.err = err
	return n, err
}

// writeText writes s's families but the age in the text format, in name
// order, each family's series in the order collect emits them.
func (e *Exporter) writeText(w io.Writer, s *Snapshot) {
	t := newTextEmitter()
	e.collect(s, t)
	var head []byte
	for _, f := range byName {
		if t.empty(f) || f == ageFamily {
			continue
		}
		head = appendHeader(head[:0], f)
		w.Write(head)
		t.writeTo(w, f) // and let it go
	}
}

// appendHeader appends a family's HELP and TYPE lines.
func appendHeader(b []byte, f *family) []byte {
	b = append(b, "# HELP "...)
	b = append(b, f.name...)
	b = append(b, ' ')
	b = appendHelp(b, f.help)
	b = append(b, "\n# TYPE "...)
	b = append(b, f.name...)
	if f.typ == prometheus.CounterValue {
		b = append(b, " counter\n"...)
	} else {
		b = append(b, " gauge\n"...)
	}
	return b
}

// AppendAge appends the sweep age family of r's snapshot at now in the
// text format: the part of a scrape Rendered leaves out.
func (e *Exporter) AppendAge(b []byte, r *Rendered, now time.Time) []byte {
	b = appendHeader(b, ageFamily)
	return appendLine(b, ageFamily, now.Sub(r.Snap.Time).Seconds())
}
