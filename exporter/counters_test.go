package exporter

import (
	"testing"

	"github.com/ibscript/ibscript/mad/perf"
)

// TestEverySchemaSeriesServed: every counter perf.Counters gives a series
// name is one of portCounters, once: a name in the schema with no reader
// here would be served by nothing.
func TestEverySchemaSeriesServed(t *testing.T) {
	served := map[string]int{}
	for _, c := range portCounters {
		served[c.name]++
	}
	for _, c := range perf.Counters() {
		if c.Prom != "" && served[c.Prom] != 1 {
			t.Errorf("%s (%s): %d series, want 1", c.Prom, c.Field.Name, served[c.Prom])
		}
	}
	if len(served) != len(portCounters) {
		t.Errorf("%d distinct series names for %d counters", len(served), len(portCounters))
	}
}
