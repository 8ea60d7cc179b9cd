package exporter

import "github.com/prometheus/client_golang/prometheus"

// Family is one metric family of a snapshot, as a Go program or a Lua
// plan reads it without Prometheus: its name, help, type ("counter" or
// "gauge"), label names and series.
type Family struct {
	Name   string
	Help   string
	Type   string
	Labels []string
	Series []Series
}

// Series is one series of a Family: its label values, in the family's
// Labels order, and its value.
type Series struct {
	Labels []string
	Value  float64
}

// Families returns the series a scrape of s would get now, by family in
// name order, each family's series in the order the exporter emits them;
// families with no series are left out.
func (e *Exporter) Families(s *Snapshot) []Family {
	fe := &famEmitter{by: make([]*Family, len(families))}
	e.collect(s, fe)
	var out []Family
	for _, f := range byName {
		if got := fe.by[f.idx]; got != nil {
			out = append(out, *got)
		}
	}
	return out
}

// famEmitter collects the series into Families.
type famEmitter struct{ by []*Family }

func (fe *famEmitter) emit(f *family, v float64, lv ...string) {
	got := fe.by[f.idx]
	if got == nil {
		typ := "gauge"
		if f.typ == prometheus.CounterValue {
			typ = "counter"
		}
		got = &Family{Name: f.name, Help: f.help, Type: typ, Labels: f.labels}
		fe.by[f.idx] = got
	}
	got.Series = append(got.Series, Series{Labels: append([]string(nil), lv...), Value: v})
}
