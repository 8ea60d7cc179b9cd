package engine_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/sim"
)

// The issue #8 targets on the embedded simulator; BENCHMARKS.md has the
// figures and bench/compare.sh the ibsim side.

// BenchmarkDiscover16k sweeps a 16,050-node fat tree (250 leaves x 63
// hosts, 50 spines), generated at benchmark time, through the Session and
// the simulator. Target: under 100 ms per sweep.
func BenchmarkDiscover16k(b *testing.B) {
	s, f := simSession(b, fattree.TempFile(b, 250, 50, 63), "", 0)
	nodes := len(f.Topology().Nodes)
	ctx := context.Background()
	mads := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		disc, err := s.Discover(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(disc.Errors) != 0 || len(disc.Fabric.Nodes) != nodes {
			b.Fatalf("%d nodes of %d, %d errors", len(disc.Fabric.Nodes), nodes, len(disc.Errors))
		}
		mads += disc.MADs
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(sec*1000/float64(b.N), "ms/sweep")
	b.ReportMetric(float64(mads)/sec, "MADs/s")
}

// BenchmarkSimMemory16k reports the heap a loaded 16,050-node simulator
// keeps (topology, nodes, ports, SMA and PMA state, routing tables), per
// node. Target: under 2 KB per node.
func BenchmarkSimMemory16k(b *testing.B) {
	path := fattree.TempFile(b, 250, 50, 63)
	var perNode float64
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		f, err := sim.Load(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		perNode = float64(after.HeapAlloc-before.HeapAlloc) / float64(len(f.Topology().Nodes))
		runtime.KeepAlive(f)
		f.Close()
	}
	b.ReportMetric(perNode, "bytes/node")
}
