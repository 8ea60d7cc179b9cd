package exporter

import (
	"io"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

const fattree2000 = "../tests/topologies/fattree-2000.net"

// BenchmarkSweepFattree2000 is a steady-state sweep (topology known) of
// every linked switch port of the 2,000-node fat tree on the embedded
// simulator: PortCountersExtended and PortCounters of each.
func BenchmarkSweepFattree2000(b *testing.B) {
	e, _ := simExporter(b, fattree2000, nil)
	s, err := e.Sweep(b.Context()) // the discovery
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if s, err = e.Sweep(b.Context()); err != nil {
			b.Fatal(err)
		}
		if s.Errors != 0 || s.Discovered {
			b.Fatalf("sweep: %d errors, discovered %v", s.Errors, s.Discovered)
		}
	}
	b.ReportMetric(float64(len(s.Ports)), "ports")
}

// BenchmarkScrapeFattree2000 is one scrape of that fabric's snapshot,
// gathered and written in the Prometheus text format as /metrics does:
// through a registry holding the Exporter (every series gathered and
// sorted at each scrape), and through Gatherer (the snapshot's families
// gathered once, only the age renewed).
func BenchmarkScrapeFattree2000(b *testing.B) {
	e, _ := simExporter(b, fattree2000, nil)
	if _, err := e.Sweep(b.Context()); err != nil {
		b.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(e)
	for _, g := range []struct {
		name string
		g    prometheus.Gatherer
	}{{"registry", reg}, {"cached", e.Gatherer(nil)}} {
		b.Run(g.name, func(b *testing.B) {
			series := 0
			for b.Loop() {
				mfs, err := g.g.Gather()
				if err != nil {
					b.Fatal(err)
				}
				series = 0
				for _, mf := range mfs {
					series += len(mf.GetMetric())
					if _, err := expfmt.MetricFamilyToText(io.Discard, mf); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(series), "series")
		})
	}
}
