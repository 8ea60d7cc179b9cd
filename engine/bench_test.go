package engine_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// benchSMA answers every SMP with a fixed NodeInfo. With shared, it
// answers from one reused buffer (the Pipe delivers it before Transmit
// returns): only for one sender at a time. Otherwise it allocates the
// response (one allocation per op, the fake's).
func benchSMA(shared bool) fabrictest.PacketResponder {
	ni := smp.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: 1, NumPorts: 1, NodeGUID: 0x100000, LocalPortNum: 1}
	var buf [mad.Size]byte
	return func(p *fabric.Packet) ([]byte, bool) {
		var b []byte
		if shared {
			b = buf[:copy(buf[:], p.Data)]
		} else {
			b = append([]byte(nil), p.Data...)
		}
		ni.AppendBinary(smp.Data(b)[:0])
		smp.MakeGetResp(b, 0)
		return b, true
	}
}

func benchSession(b *testing.B, shared bool) *engine.Session {
	pipe := fabrictest.NewPipe(&fabrictest.PipeOptions{PacketResponder: benchSMA(shared)})
	s, err := engine.New(pipe.Transport(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

// BenchmarkSMPRoundTripPipe is one NodeInfo at a time through the Session,
// the mux and an in-memory pipe answering synchronously.
func BenchmarkSMPRoundTripPipe(b *testing.B) {
	s := benchSession(b, true)
	ctx := context.Background()
	t := engine.LID(1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.NodeInfo(ctx, t); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

// BenchmarkSMPRoundTripPipeParallel runs NodeInfo from GOMAXPROCS
// goroutines, each to its own LID (one SMP per node at a time).
func BenchmarkSMPRoundTripPipeParallel(b *testing.B) {
	s := benchSession(b, false)
	ctx := context.Background()
	var next atomic.Uint32
	b.ReportAllocs()
	b.SetParallelism(16)
	b.RunParallel(func(pb *testing.PB) {
		t := engine.LID(uint16(next.Add(1)%1000 + 1))
		for pb.Next() {
			if _, err := s.NodeInfo(ctx, t); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}
