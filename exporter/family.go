package exporter

import (
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// family is one metric family the exporter serves: what a Desc holds, kept
// readable so the text encoder (WriteText) can write it without a
// registry.
type family struct {
	name   string
	help   string
	typ    prometheus.ValueType
	labels []string
	desc   *prometheus.Desc
	idx    int // in families
	// plane is the family's twin with a plane label (withPlane), served
	// instead of it when the exporter sweeps every plane; twin marks such
	// a twin.
	plane *family
	twin  bool
}

// families are every family the exporter serves, in declaration order.
var families []*family

func newFamily(name, help string, typ prometheus.ValueType, labels ...string) *family {
	f := &family{name: name, help: help, typ: typ, labels: labels, idx: len(families),
		desc: prometheus.NewDesc(name, help, labels, nil)}
	families = append(families, f)
	return f
}

// emitter receives the series of a snapshot: a value and its label values
// in the family's label order.
type emitter interface {
	emit(f *family, v float64, lv ...string)
}

// chanEmitter sends the series as const metrics, for Collect.
type chanEmitter struct{ ch chan<- prometheus.Metric }

func (c chanEmitter) emit(f *family, v float64, lv ...string) {
	c.ch <- prometheus.MustNewConstMetric(f.desc, f.typ, v, lv...)
}

// textEmitter writes each series' line of the Prometheus text format
// (0.0.4) into its family's chunks: a family's lines go into fixed-size
// chunks, so a large fabric's families grow without copying what they
// hold (growing one buffer per family copied each several times).
type textEmitter struct {
	chunks [][][]byte // by family.idx: its lines, in chunks of chunkSize
	line   []byte     // the line being built
}

// chunkSize is the size of a family's text chunks.
const chunkSize = 64 << 10

func newTextEmitter() *textEmitter {
	return &textEmitter{chunks: make([][][]byte, len(families))}
}

func (t *textEmitter) emit(f *family, v float64, lv ...string) {
	b := appendLine(t.line[:0], f, v, lv...)
	t.line = b
	cs := t.chunks[f.idx]
	if k := len(cs) - 1; k >= 0 && len(cs[k])+len(b) <= cap(cs[k]) {
		cs[k] = append(cs[k], b...)
		return
	}
	c := make([]byte, 0, max(chunkSize, len(b)))
	t.chunks[f.idx] = append(cs, append(c, b...))
}

// appendLine appends the text format's line of one series of f.
func appendLine(b []byte, f *family, v float64, lv ...string) []byte {
	b = append(b, f.name...)
	if len(lv) > 0 {
		b = append(b, '{')
		for i, l := range f.labels {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, l...)
			b = append(b, '=', '"')
			b = appendEscaped(b, lv[i])
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendFloat(b, v)
	return append(b, '\n')
}

// writeTo writes family f's lines to w and lets them go.
func (t *textEmitter) writeTo(w io.Writer, f *family) {
	for _, c := range t.chunks[f.idx] {
		w.Write(c)
	}
	t.chunks[f.idx] = nil
}

// empty reports whether family f has no line.
func (t *textEmitter) empty(f *family) bool { return len(t.chunks[f.idx]) == 0 }

// appendEscaped appends a label value escaped as the text format wants:
// backslash, double quote and line feed.
func appendEscaped(b []byte, s string) []byte { return appendEscapes(b, s, true) }

// appendHelp appends a HELP text escaped as the text format wants:
// backslash and line feed.
func appendHelp(b []byte, s string) []byte { return appendEscapes(b, s, false) }

// appendEscapes appends s with backslash and line feed escaped, and
// double quote when quote.
func appendEscapes(b []byte, s string, quote bool) []byte {
	if strings.IndexAny(s, "\\\"\n") < 0 { // the common case: nothing to escape
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, '\\', '\\')
		case c == '"' && quote:
			b = append(b, '\\', '"')
		case c == '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendFloat writes a sample value as expfmt does.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case math.IsInf(v, 1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e6 && (v != 0 || !math.Signbit(v)) {
		// A small integer (a state, a port, most error counters): 'g'
		// writes those (exponent below 6) as plain digits too.
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
