package exporter

import (
	"math"
	"strconv"

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
// (0.0.4) into its family's buffer.
type textEmitter struct {
	bufs [][]byte // by family.idx
}

func (t *textEmitter) emit(f *family, v float64, lv ...string) {
	b := t.bufs[f.idx]
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
	b = append(b, '\n')
	t.bufs[f.idx] = b
}

// appendEscaped appends a label value escaped as the text format wants:
// backslash, double quote and line feed.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '"':
			b = append(b, '\\', '"')
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendHelp appends a HELP text escaped as the text format wants:
// backslash and line feed.
func appendHelp(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\':
			b = append(b, '\\', '\\')
		case '\n':
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
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}
