package engine_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/sim"
)

// TestUMADPortCoalesced is umad_recv of a multi-segment GetTableResp: a
// 256-byte buffer gets ENOSPC with the needed length and the message stays
// queued; a big enough buffer gets the whole message with the first
// segment's header (rmpp.md section 8).
func TestUMADPortCoalesced(t *testing.T) {
	f, err := sim.Load("../tests/topologies/net.2sw2path4hca", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := f.Attach("Hca3", 1)
	if err != nil {
		t.Fatal(err)
	}
	p := engine.NewUMADPort(tr)
	defer p.Close()
	ctx := t.Context()
	agent, err := p.Register(ctx, mad.ClassSubnAdm, sa.ClassVersion, 1, [2]uint64{})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := sa.NewRequest(mad.MethodGetTable, sa.AttrNodeRecord, 0x42, 0, nil)
	sm := p.Port().SMLID
	if err := p.Send(ctx, agent, req, fabric.Addr{LID: sm, QPN: 1, QKey: 0x80010000}, 1000, 1); err != nil {
		t.Fatal(err)
	}
	want := 56 + 6*112
	_, err = p.Recv(ctx, 256, 1000)
	var ns *engine.NoSpaceError
	if !errors.As(err, &ns) || ns.Need != want {
		t.Fatalf("recv 256: %v, want ENOSPC needing %d", err, want)
	}
	if err := p.Poll(ctx, 0); err != nil {
		t.Errorf("poll after ENOSPC: %v (the message stays queued)", err)
	}
	pkt, err := p.Recv(ctx, want, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var h sa.Header
	if err := h.UnmarshalBinary(pkt.Data); err != nil {
		t.Fatal(err)
	}
	if len(pkt.Data) != want || h.Method != mad.MethodGetTableRes || h.RMPP.Type != rmpp.TypeData ||
		h.RMPP.Flags != rmpp.FlagActive|rmpp.FlagFirst || h.RMPP.Data1 != 1 || h.RMPP.Data2 != uint32(6*112+4*20) {
		t.Errorf("message of %d bytes, header %+v", len(pkt.Data), h)
	}
	recs, _ := sa.Records(pkt.Data)
	if len(recs) != 6 {
		t.Errorf("%d records", len(recs))
	}
}

// faulty sits between the RMPP driver and the simulator: it drops,
// duplicates and reorders RMPP packets, seeded. It hides the mux's
// SetHandler, so the driver runs its receive goroutine.
type faulty struct {
	fabric.Transport
	mu               sync.Mutex
	rng              *rand.Rand
	loss, dup, swap  float64
	held             *fabric.Packet
	dropAfter        int // drop every DATA segment after this many (0: never)
	data             int
	dropped, doubled int
}

func (f *faulty) rmppPacket(b []byte) bool { return rmpp.IsActive(b) }

// Caps hide the mux's handler: everything goes through Recv, where the
// faults are.
func (f *faulty) Caps() fabric.Caps {
	c := f.Transport.Caps()
	c.SetHandler, c.Failed, c.FailErr = nil, nil, nil
	return c
}

func (f *faulty) stats() (seen, dropped, doubled int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.data, f.dropped, f.doubled
}

func (f *faulty) Send(ctx context.Context, p *fabric.Packet) error {
	f.mu.Lock()
	drop := f.rmppPacket(p.Data) && f.rng.Float64() < f.loss
	if drop {
		f.dropped++
	}
	f.mu.Unlock()
	if drop {
		return nil
	}
	return f.Transport.Send(ctx, p)
}

func (f *faulty) Recv(ctx context.Context, p *fabric.Packet) error {
	for {
		f.mu.Lock()
		if f.held != nil && f.rng.Float64() < 0.5 {
			h := f.held
			f.held = nil
			f.mu.Unlock()
			*p = *h
			return nil
		}
		f.mu.Unlock()
		if err := f.Transport.Recv(ctx, p); err != nil {
			return err
		}
		if !f.rmppPacket(p.Data) {
			return nil
		}
		f.mu.Lock()
		f.data++
		r := f.rng.Float64()
		switch {
		case f.dropAfter > 0 && f.data > f.dropAfter, r < f.loss:
			f.dropped++
			f.mu.Unlock()
			continue
		case r < f.loss+f.dup:
			f.doubled++
			if f.held == nil {
				c := *p
				c.Data = append([]byte(nil), p.Data...)
				f.held = &c
			}
		case r < f.loss+f.dup+f.swap && f.held == nil:
			c := *p
			c.Data = append([]byte(nil), p.Data...)
			f.held = &c
			f.mu.Unlock()
			continue
		}
		f.mu.Unlock()
		return nil
	}
}

func TestRMPPDriverFaults(t *testing.T) {
	for _, c := range []struct {
		name            string
		loss, dup, swap float64
	}{
		{"clean", 0, 0, 0},
		{"5% loss", 0.05, 0, 0},
		{"duplicates", 0, 0.1, 0},
		{"reordering", 0, 0, 0.1},
		{"everything", 0.03, 0.05, 0.05},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s, ft := faultySession(t, &faulty{rng: rand.New(rand.NewPCG(7, 9)), loss: c.loss, dup: c.dup, swap: c.swap})
				recs, err := s.NodeRecords(t.Context(), engine.Timeout(60*time.Second))
				seen, dropped, doubled := ft.stats()
				if err != nil {
					t.Fatalf("%v (dropped %d, doubled %d)", err, dropped, doubled)
				}
				if len(recs) != 2000 {
					t.Fatalf("%d records", len(recs))
				}
				t.Logf("%d RMPP packets seen, %d dropped, %d duplicated", seen, dropped, doubled)
			})
		})
	}
}

// TestRMPPDriverSenderVanishes: the SA's segments stop after the tenth;
// the request completes with a timeout, not a hang.
func TestRMPPDriverSenderVanishes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := faultySession(t, &faulty{rng: rand.New(rand.NewPCG(1, 2)), dropAfter: 10})
		start := time.Now()
		_, err := s.NodeRecords(t.Context(), engine.Timeout(3*time.Second), engine.Retries(0))
		if !errors.Is(err, fabric.ErrTimeout) {
			t.Fatalf("err %v, want a timeout", err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("timed out after %v, want the 3 s request timeout", d)
		}
	})
}

// TestRMPPSendSilentPeer: an RMPP send whose ACKs never come ends in one
// timeout record after the ACK wait (2 s when timeout_ms is 0 or larger
// than 2 s) times 1+retries, as rmpp.md section 9 cases 21 and 22 say.
func TestRMPPSendSilentPeer(t *testing.T) {
	for _, c := range []struct {
		timeoutMS, retries int
		want               time.Duration
	}{{0, 0, 2 * time.Second}, {0, 1, 4 * time.Second}, {500, 3, 2 * time.Second}, {5000, 1, 4 * time.Second}} {
		t.Run(fmt.Sprintf("timeout %d retries %d", c.timeoutMS, c.retries), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f, err := sim.Load("../tests/topologies/net.2sw2path4hca", nil)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				tr, err := f.Attach("Hca3", 1)
				if err != nil {
					t.Fatal(err)
				}
				p := engine.NewUMADPort(tr)
				defer p.Close()
				ctx := t.Context()
				agent, err := p.Register(ctx, mad.ClassSubnAdm, sa.ClassVersion, 1, [2]uint64{})
				if err != nil {
					t.Fatal(err)
				}
				// A three-segment GetMulti to a host, which has no SA and
				// drops it.
				req, _ := sa.NewRequest(mad.MethodGetMulti, sa.AttrPathRecord, 9, 0, nil)
				req = append(req, make([]byte, 400)...)
				req[26] = rmpp.FlagActive
				start := time.Now()
				if err := p.Send(ctx, agent, req, fabric.Addr{LID: 2, QPN: 1, QKey: 0x80010000}, c.timeoutMS, c.retries); err != nil {
					t.Fatal(err)
				}
				pkt, err := p.Recv(ctx, 4096, -1)
				if err != nil {
					t.Fatal(err)
				}
				if pkt.Status != fabric.StatusTimeout || time.Since(start) != c.want {
					t.Errorf("status %d after %v, want %d after %v", pkt.Status, time.Since(start), fabric.StatusTimeout, c.want)
				}
			})
		})
	}
}

// TestUMADPortRMPPEdges: rmpp.md section 9 cases 28-30 through UMADPort.
func TestUMADPortRMPPEdges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := sim.Load("../tests/topologies/net.2sw2path4hca", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		tr, err := f.Attach("Hca3", 1)
		if err != nil {
			t.Fatal(err)
		}
		p := engine.NewUMADPort(tr)
		defer p.Close()
		ctx := t.Context()
		sm := fabric.Addr{LID: p.Port().SMLID, QPN: 1, QKey: 0x80010000}
		// 30: rmpp_version 1 on a class without RMPP.
		if _, err := p.Register(ctx, mad.ClassPerf, 1, 1, [2]uint64{}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("rmpp_version 1 on PerfMgt: %v, want EINVAL", err)
		}
		// 28: an agent without RMPP gets the first segment only.
		plain, err := p.Register(ctx, mad.ClassSubnAdm, sa.ClassVersion, 0, [2]uint64{})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := sa.NewRequest(mad.MethodGetTable, sa.AttrNodeRecord, 5, 0, nil)
		if err := p.Send(ctx, plain, req, sm, 1000, 0); err != nil {
			t.Fatal(err)
		}
		pkt, err := p.Recv(ctx, 4096, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var h rmpp.Header
		_ = h.UnmarshalBinary(pkt.Data)
		if len(pkt.Data) != mad.Size || h.Flags != rmpp.FlagActive|rmpp.FlagFirst || h.Data1 != 1 {
			t.Errorf("%d bytes, RMPP %+v: want segment 1 alone", len(pkt.Data), h)
		}
		if _, err := p.Recv(ctx, 4096, 5000); !errors.Is(err, syscall.ETIMEDOUT) {
			t.Errorf("after segment 1: %v, want nothing more (the SA's resends match no request)", err)
		}
		// 29: more than 256 bytes without the Active flag.
		withRMPP, err := p.Register(ctx, mad.ClassSubnAdm, sa.ClassVersion, 1, [2]uint64{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Send(ctx, withRMPP, append(req, make([]byte, 100)...), sm, 1000, 0); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("356 bytes, Active clear: %v, want EINVAL", err)
		}
	})
}

// TestSASlowTransfer: an engine SA call whose response takes longer than
// the per-try timeout completes, because arriving segments keep the
// request alive; a umad caller's request still times out mid-transfer, as
// in Linux (rmpp.md section 9, case 31).
func TestSASlowTransfer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Every ACK is lost once in a while: the SA resends windows after
		// its 200 ms ACK timeout, so the transfer takes seconds.
		s, _ := faultySession(t, &faulty{rng: rand.New(rand.NewPCG(3, 4)), loss: 0.3})
		start := time.Now()
		recs, err := s.NodeRecords(t.Context(), engine.Timeout(time.Second), engine.Retries(0))
		if err != nil || len(recs) != 2000 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
		if d := time.Since(start); d <= time.Second {
			t.Fatalf("the transfer took %v; the test needs one longer than the timeout", d)
		}
	})
}

// faultySession opens a Session on host h010-05 of fattree-2000 through
// a faulty transport configured as ft; both close when t ends. Called
// inside a synctest bubble, everything it starts belongs to the bubble.
func faultySession(t *testing.T, ft *faulty) (*engine.Session, *faulty) {
	t.Helper()
	f, err := sim.Load(fattree2000, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tr, err := f.Attach("h010-05", 1)
	if err != nil {
		t.Fatal(err)
	}
	ft.Transport = tr
	s, err := engine.New(ft, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, ft
}
