package engine_test

import (
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/mad/sa"
)

// BenchmarkSAGetTable16k is a GetTable of every NodeRecord of a 16,050-node
// fat tree (250 leaves x 63 hosts, 50 spines): about 9,000 RMPP segments
// through the simulated SA and the engine's RMPP driver. B/op is the
// memory one query allocates, sim and engine together.
func BenchmarkSAGetTable16k(b *testing.B) {
	s, f := simSession(b, fattree.TempFile(b, 250, 50, 63), "", 0)
	nodes := len(f.Topology().Nodes)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		recs, err := s.SAGetTable(b.Context(), sa.NodeRecord(), 0, nil, engine.Timeout(5*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) != nodes {
			b.Fatalf("%d records for %d nodes", len(recs), nodes)
		}
	}
	b.ReportMetric(float64(nodes), "records/op")
	segs := (nodes*sa.NodeRecord().Stride*8 + sa.DataSize - 1) / sa.DataSize
	b.ReportMetric(float64(segs)*float64(b.N)/b.Elapsed().Seconds(), "segments/s")
}
