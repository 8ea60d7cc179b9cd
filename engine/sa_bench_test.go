package engine_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad/sa"
)

// fatTree writes an ibsim topology of a two-level fat tree (every leaf
// linked once to every spine) and returns its path.
func fatTree(tb testing.TB, leaves, spines, hosts int) string {
	tb.Helper()
	var sb strings.Builder
	sb.WriteString("width=2\nspeed=1\nextspeed=0\n\n")
	for l := range leaves {
		fmt.Fprintf(&sb, "Switch\t%d \"leaf%03d\"\n", hosts+spines, l)
		for h := range hosts {
			fmt.Fprintf(&sb, "[%d]\t\"h%03d-%02d\"[1]\n", h+1, l, h)
		}
		for s := range spines {
			fmt.Fprintf(&sb, "[%d]\t\"spine%03d\"[%d]\n", hosts+s+1, s, l+1)
		}
		sb.WriteString("\n")
	}
	for s := range spines {
		fmt.Fprintf(&sb, "Switch\t%d \"spine%03d\"\n", leaves, s)
		for l := range leaves {
			fmt.Fprintf(&sb, "[%d]\t\"leaf%03d\"[%d]\n", l+1, l, hosts+s+1)
		}
		sb.WriteString("\n")
	}
	for l := range leaves {
		for h := range hosts {
			fmt.Fprintf(&sb, "Hca\t1 \"h%03d-%02d\"\n[1]\t\"leaf%03d\"[%d]\n\n", l, h, l, h+1)
		}
	}
	path := filepath.Join(tb.TempDir(), "fattree.net")
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkSAGetTable16k is a GetTable of every NodeRecord of a 16,050-node
// fat tree (250 leaves x 63 hosts, 50 spines): about 9,000 RMPP segments
// through the simulated SA and the engine's RMPP driver. B/op is the
// memory one query allocates, sim and engine together.
func BenchmarkSAGetTable16k(b *testing.B) {
	s, f := simSession(b, fatTree(b, 250, 50, 63), "", 0)
	nodes := len(f.Topology().Nodes)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		recs, err := s.SAGetTable(b.Context(), &sa.NodeRecord, 0, nil, engine.Timeout(5*time.Second))
		if err != nil {
			b.Fatal(err)
		}
		if len(recs) != nodes {
			b.Fatalf("%d records for %d nodes", len(recs), nodes)
		}
	}
	b.ReportMetric(float64(nodes), "records/op")
	segs := (nodes*sa.NodeRecord.Stride*8 + sa.DataSize - 1) / sa.DataSize
	b.ReportMetric(float64(segs)*float64(b.N)/b.Elapsed().Seconds(), "segments/s")
}
