package rmppdriver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/mux"
	"github.com/ibscript/ibscript/fabric/rmppdriver"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/sim/simtest"
)

const fattree2000 = "../../tests/topologies/fattree-2000.net"

// saAddr is the SA of a port whose SM is at LID sm.
func saAddr(sm uint16) fabric.Addr { return fabric.Addr{LID: sm, QPN: 1, QKey: 0x80010000} }

// nodeRecords runs a NodeRecord GetTable through d.Call to the SA at
// addr, each try waiting timeout, and returns the records; an answer that
// never came wraps fabric.ErrTimeout.
func nodeRecords(ctx context.Context, d *rmppdriver.Driver, addr fabric.Addr, timeout time.Duration, retries int) ([][]byte, error) {
	req, _ := sa.NewRequest(mad.MethodGetTable, sa.AttrNodeRecord, 0, 0, nil)
	resp, err := d.Call(ctx, mad.ClassSubnAdm, sa.ClassVersion, req, addr, timeout, retries)
	if err != nil {
		return nil, err
	}
	if resp.Status == fabric.StatusTimeout {
		return nil, fmt.Errorf("GetTable NodeRecord: no answer in %d tries: %w", retries+1, fabric.ErrTimeout)
	}
	if st := mad.StatusOf(resp.Data); st != 0 {
		return nil, fmt.Errorf("GetTable NodeRecord: status 0x%04x", st)
	}
	return sa.Records(resp.Data)
}

// The driver keeps the whole Transport contract for the traffic it
// passes through, over a transport with SetHandler (the pipe's mux) and
// over one without (its receive goroutine).
func TestConformance(t *testing.T) {
	t.Run("handler", func(t *testing.T) {
		fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
			p := fabrictest.NewPipe(nil)
			t.Cleanup(func() { p.Close() })
			return rmppdriver.New(p.Transport(), nil), p
		})
	})
	t.Run("goroutine", func(t *testing.T) {
		fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
			p := fabrictest.NewPipe(nil)
			t.Cleanup(func() { p.Close() })
			queueOnly := fabrictest.WithCaps(p.Transport(), func(c *fabric.Caps) { c.SetHandler, c.Failed, c.FailErr = nil, nil, nil })
			return rmppdriver.New(queueOnly, nil), p
		})
	})
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
				ft := &faulty{rng: rand.New(rand.NewPCG(7, 9)), loss: c.loss, dup: c.dup, swap: c.swap}
				d, to := faultyDriver(t, ft)
				recs, err := nodeRecords(t.Context(), d, to, 60*time.Second, 3)
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
		d, to := faultyDriver(t, &faulty{rng: rand.New(rand.NewPCG(1, 2)), dropAfter: 10})
		start := time.Now()
		_, err := nodeRecords(t.Context(), d, to, 3*time.Second, 0)
		if !errors.Is(err, fabric.ErrTimeout) {
			t.Fatalf("err %v, want a timeout", err)
		}
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("timed out after %v, want the 3 s request timeout", d)
		}
	})
}

// TestCallSlowTransfer: a Call whose response takes longer than the
// per-try timeout completes, because arriving segments keep the request
// alive; a umad caller's request still times out mid-transfer, as in
// Linux (rmpp.md section 9, case 31; TestRMPPStaleReceiveState).
func TestCallSlowTransfer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Every ACK is lost once in a while: the SA resends windows after
		// its 200 ms ACK timeout, so the transfer takes seconds.
		d, to := faultyDriver(t, &faulty{rng: rand.New(rand.NewPCG(3, 4)), loss: 0.3})
		start := time.Now()
		recs, err := nodeRecords(t.Context(), d, to, time.Second, 0)
		if err != nil || len(recs) != 2000 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
		if d := time.Since(start); d <= time.Second {
			t.Fatalf("the transfer took %v; the test needs one longer than the timeout", d)
		}
	})
}

// faultyDriver opens a driver on host h010-05 of fattree-2000 through a
// faulty transport configured as ft; both close when t ends. Called
// inside a synctest bubble, everything it starts belongs to the bubble.
// It returns the SA's address.
func faultyDriver(t *testing.T, ft *faulty) (*rmppdriver.Driver, fabric.Addr) {
	t.Helper()
	f := simtest.Load(t, fattree2000, nil)
	tr, err := f.Attach("h010-05", 1)
	if err != nil {
		t.Fatal(err)
	}
	ft.Transport = tr
	d := rmppdriver.New(ft, nil)
	t.Cleanup(func() { d.Close() })
	return d, saAddr(d.Port().SMLID)
}

// hostileSA is the far side of a Pipe posing as an SA whose answers are
// whatever the test scripts: answer gets every MAD the driver sends, with
// its RMPP header, and returns the MADs to deliver back. Calls of answer
// are serialized.
type hostileSA struct {
	pipe *fabrictest.Pipe

	mu     sync.Mutex
	answer func(b []byte, rh rmpp.Header) [][]byte
	seen   []rmpp.Header // RMPP headers of what the driver sent

	amu sync.Mutex // held while answer runs
}

func (h *hostileSA) respond(p *fabric.Packet) ([]byte, bool) {
	var rh rmpp.Header
	_ = rh.UnmarshalBinary(p.Data)
	h.mu.Lock()
	h.seen = append(h.seen, rh)
	ans := h.answer
	h.mu.Unlock()
	if ans == nil {
		return nil, false
	}
	h.amu.Lock()
	out := ans(p.Data, rh)
	h.amu.Unlock()
	for _, b := range out { // the driver's replies come back here
		_ = h.pipe.Send(context.Background(), b)
	}
	return nil, false
}

func (h *hostileSA) sent() []rmpp.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]rmpp.Header(nil), h.seen...)
}

// newHostileSA returns a hostileSA on the far side of a new Pipe: LID 1
// (its SM LID 2) on the near side, the SA at LID 2, QP1.
func newHostileSA() *hostileSA {
	h := &hostileSA{}
	h.pipe = fabrictest.NewPipe(&fabrictest.PipeOptions{
		Port:            fabric.PortAttr{LID: 1, SMLID: 2, State: 4},
		PeerAddr:        fabric.Addr{LID: 2, QPN: 1, QKey: 0x80010000},
		PacketResponder: h.respond,
	})
	return h
}

// hostileDriver opens a driver whose SA (LID 2) is a hostileSA.
func hostileDriver(t *testing.T, opts *rmppdriver.Options) (*rmppdriver.Driver, *hostileSA) {
	t.Helper()
	h := newHostileSA()
	d := rmppdriver.New(h.pipe.Transport(), opts)
	t.Cleanup(func() { d.Close(); h.pipe.Close() })
	return d, h
}

// hostileAddr is the hostileSA's address.
var hostileAddr = saAddr(2)

// segment builds DATA segment k of an answer to req with the given flags
// and PayloadLength; its data is filled with k.
func segment(req []byte, k int, flags uint8, pl uint32) []byte {
	b := make([]byte, mad.Size)
	copy(b, req[:sa.HeaderSize])
	b[3] = mad.MethodOf(req) | mad.MethodResp
	h := rmpp.Header{Version: rmpp.Version, Type: rmpp.TypeData, Flags: rmpp.FlagActive | flags, Data1: uint32(k), Data2: pl}
	h.Put(b)
	sa.SetAttributeOffset(b, uint16(sa.NodeRecord().Stride))
	for i := sa.HeaderSize; i < mad.Size; i++ {
		b[i] = byte(k)
	}
	return b
}

// oneRecord answers a GetTable with one segment (First and Last).
func oneRecord(req []byte, _ rmpp.Header) [][]byte {
	if mad.IsResponse(req) || rmpp.IsActive(req) {
		return nil
	}
	return [][]byte{segment(req, 1, rmpp.FlagFirst|rmpp.FlagLast, uint32(sa.HeaderSize-rmpp.HeaderEnd+sa.NodeRecord().Stride*8))}
}

// TestRMPPRefusesUnsolicitedData: DATA segments of responses nobody asked
// for (TIDs with no request outstanding) start no receive transfer: a
// thousand First segments announcing 4 GiB each are counted as refused,
// and the driver holds nothing; --debug's log names each. Before, each
// started a transfer that reserved 16 MiB.
func TestRMPPRefusesUnsolicitedData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer // written by Sends of this goroutine: the Pipe delivers synchronously
		d, h := hostileDriver(t, &rmppdriver.Options{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		var req []byte
		h.answer = func(b []byte, rh rmpp.Header) [][]byte {
			if req == nil {
				req = append([]byte(nil), b...)
			}
			return oneRecord(b, rh)
		}
		if recs, err := nodeRecords(t.Context(), d, hostileAddr, 200*time.Millisecond, 3); err != nil || len(recs) != 1 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
		before := d.Stats() // the answer's transfer lingers
		// The TIDs of Call's agent (the mux routes by the upper
		// 32 bits), none of them outstanding.
		for tid := range 1000 {
			mad.SetTID(req, mad.TIDOf(req)&^0xffffffff|uint64(0x1000+tid))
			if err := h.pipe.Send(t.Context(), segment(req, 1, rmpp.FlagFirst, 0xffffffff)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		st := d.Stats()
		if st.Refused != 1000 || st.Transfers != before.Transfers || st.Held != before.Held {
			t.Errorf("after 1000 unsolicited First segments: %+v, want 1000 refused and nothing held", st)
		}
		if n := strings.Count(log.String(), `msg="rmppdriver: DATA refused" why="no request of this TID outstanding"`); n != 1000 {
			t.Errorf("%d debug records of refused segments, want 1000", n)
		}
	})
}

// TestRMPPFirstSegmentClaim: an answer whose First segment announces
// PayloadLength 0xffffffff reserves at most 64 KiB, and one that keeps
// sending past Limits.MaxMessage is stopped with STOP(1): the call
// fails with a *LimitError naming the limit, the peer gets the STOP.
func TestRMPPFirstSegmentClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, h := hostileDriver(t, &rmppdriver.Options{Limits: rmppdriver.Limits{MaxMessage: 100_000}})
		var heldAfterFirst int
		var reqHdr []byte
		next := 1
		h.answer = func(b []byte, rh rmpp.Header) [][]byte {
			switch {
			case !rmpp.IsActive(b) && !mad.IsResponse(b):
				reqHdr = append([]byte(nil), b...)
				next = 2
				return [][]byte{segment(reqHdr, 1, rmpp.FlagFirst, 0xffffffff)}
			case rh.Type == rmpp.TypeAck:
				if next == 2 {
					heldAfterFirst = d.Stats().Held
				}
				var out [][]byte
				for ; next <= int(rh.Data2); next++ {
					out = append(out, segment(reqHdr, next, 0, 0))
				}
				return out
			}
			return nil
		}
		_, err := nodeRecords(t.Context(), d, hostileAddr, 200*time.Millisecond, 3)
		var le *rmppdriver.LimitError
		if !errors.As(err, &le) || le.Limit != "MaxMessage" || le.Bytes != 100_000 {
			t.Fatalf("err %v, want a LimitError on MaxMessage 100000", err)
		}
		h.amu.Lock()
		defer h.amu.Unlock()
		if heldAfterFirst == 0 || heldAfterFirst > 64<<10 {
			t.Errorf("after the First segment the driver held %d bytes, want at most 64 KiB", heldAfterFirst)
		}
		var stops int
		for _, rh := range h.sent() {
			if rh.Type == rmpp.TypeStop && rh.Status == rmpp.StatusResX {
				stops++
			}
		}
		st := d.Stats()
		if stops != 1 || st.Stopped != 1 || st.Held != 0 {
			t.Errorf("%d STOP(1) sent, stats %+v; want one STOP, one stopped transfer, nothing held", stops, st)
		}
		t.Logf("%v", err)
	})
}

// TestRMPPAbortReachesReceiver: an SA whose ACKs never arrive gives up
// and sends ABORT(126); the Call fails at once with that ABORT
// (an *rmpp.AbortError from the peer) instead of waiting out its budget
// with the dead transfer's state.
func TestRMPPAbortReachesReceiver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d, h := hostileDriver(t, nil)
		var mu sync.Mutex // reqHdr is read by the timers
		var reqHdr []byte
		tries := 0
		h.answer = func(b []byte, _ rmpp.Header) [][]byte {
			mu.Lock()
			defer mu.Unlock()
			if rmpp.IsActive(b) || mad.IsResponse(b) {
				return nil // ACKs are "lost"
			}
			reqHdr = append([]byte(nil), b...)
			first := segment(reqHdr, 1, rmpp.FlagFirst, 5*220)
			out := [][]byte{first}
			tries++
			// The sender resends its window, then gives up.
			time.AfterFunc(100*time.Millisecond, func() { _ = h.pipe.Send(context.Background(), first) })
			time.AfterFunc(200*time.Millisecond, func() {
				ab := make([]byte, mad.Size)
				copy(ab, reqHdr[:sa.HeaderSize])
				ab[3] |= mad.MethodResp
				ah := rmpp.Header{Version: rmpp.Version, Type: rmpp.TypeAbort, Flags: rmpp.FlagActive, Status: rmpp.StatusTMR}
				ah.Put(ab)
				_ = h.pipe.Send(context.Background(), ab)
			})
			return out
		}
		start := time.Now()
		_, err := nodeRecords(t.Context(), d, hostileAddr, time.Second, 2)
		var ae *rmpp.AbortError
		if !errors.As(err, &ae) || !ae.Remote || ae.Status != rmpp.StatusTMR {
			t.Fatalf("err %v, want the peer's ABORT 126", err)
		}
		if d := time.Since(start); d != 200*time.Millisecond || tries != 1 {
			t.Errorf("failed after %v and %d tries, want at the ABORT (200ms) after one", d, tries)
		}
		if st := d.Stats(); st.Aborted != 1 || st.Transfers != 0 {
			t.Errorf("stats %+v", st)
		}
	})
}

// FuzzRMPPHostilePeer feeds an SA call's answer with arbitrary MADs (the
// input cut in 256-byte pieces, half of them given the request's TID and
// the Active flag): the driver never panics, never holds more than its
// MaxTotal once a MAD is handled, and the call ends.
func FuzzRMPPHostilePeer(f *testing.F) {
	req, _ := sa.NewRequest(mad.MethodGetTable, sa.AttrNodeRecord, 0, 0, nil)
	f.Add(append(segment(req, 1, rmpp.FlagFirst, 0xffffffff), segment(req, 2, 0, 0)...))
	f.Add(segment(req, 1, rmpp.FlagFirst|rmpp.FlagLast, 200))
	f.Add(append(segment(req, 1, rmpp.FlagFirst, 400), segment(req, 3, rmpp.FlagLast, 20)...))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 64*mad.Size {
			return
		}
		synctest.Test(t, func(t *testing.T) {
			const total = 20_000
			d, h := hostileDriver(t, &rmppdriver.Options{Limits: rmppdriver.Limits{MaxMessage: 10_000, MaxTotal: total}})
			var mu sync.Mutex
			var over int
			done := false
			h.answer = func(b []byte, _ rmpp.Header) [][]byte {
				if done || mad.IsResponse(b) || rmpp.IsActive(b) {
					return nil
				}
				done = true
				var out [][]byte
				for i := 0; i < len(in); i += mad.Size {
					m := make([]byte, mad.Size)
					copy(m, in[i:])
					if i/mad.Size%2 == 0 {
						copy(m[:24], b[:24])
						m[3] |= mad.MethodResp
						m[26] |= rmpp.FlagActive
					}
					out = append(out, m)
				}
				go func() {
					for _, m := range out {
						_ = h.pipe.Send(context.Background(), m)
						if held := d.Stats().Held; held > total {
							mu.Lock()
							over = max(over, held)
							mu.Unlock()
						}
					}
				}()
				return nil
			}
			_, _ = nodeRecords(t.Context(), d, hostileAddr, 100*time.Millisecond, 1)
			synctest.Wait()
			mu.Lock()
			defer mu.Unlock()
			if over > 0 {
				t.Errorf("the driver held %d bytes, MaxTotal %d", over, total)
			}
		})
	})
}

// TestRMPPStaleReceiveState: a umad caller's request that times out in
// the middle of its answer leaves nothing behind: the next request with
// the same TID gets its whole answer. Before, the dead transfer's receive
// state stayed and answered the new transfer's segments with ACKs of the
// old one, so every later try failed.
func TestRMPPStaleReceiveState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHostileSA()
		d := rmppdriver.New(h.pipe.Transport(), nil)
		defer d.Close()
		ctx := t.Context()
		agent, err := d.Register(ctx, fabric.Agent{Class: mad.ClassSubnAdm, Version: sa.ClassVersion, RMPPVersion: 1})
		if err != nil {
			t.Fatal(err)
		}
		try := 0
		h.answer = func(b []byte, _ rmpp.Header) [][]byte {
			if !rmpp.IsActive(b) && !mad.IsResponse(b) {
				try++
				if try == 1 {
					// Three segments of ten, then silence.
					return [][]byte{segment(b, 1, rmpp.FlagFirst, 10*220), segment(b, 2, 0, 0), segment(b, 3, 0, 0)}
				}
				return [][]byte{segment(b, 1, rmpp.FlagFirst, 2*220), segment(b, 2, rmpp.FlagLast, 220)}
			}
			return nil
		}
		req, _ := sa.NewRequest(mad.MethodGetTable, sa.AttrNodeRecord, 0x77, 0, nil)
		for i, want := range []int{fabric.StatusTimeout, 0} {
			if err := d.Send(ctx, &fabric.Packet{Agent: agent, Addr: hostileAddr, Timeout: 100 * time.Millisecond, Data: req}); err != nil {
				t.Fatal(err)
			}
			rctx, cancel := context.WithTimeout(ctx, time.Second)
			pkt := &fabric.Packet{Data: make([]byte, 0, 4096)}
			err := d.Recv(rctx, pkt)
			cancel()
			if err != nil {
				t.Fatalf("try %d: %v", i+1, err)
			}
			if pkt.Status != want {
				t.Fatalf("try %d: status %d, want %d", i+1, pkt.Status, want)
			}
			if want == 0 && len(pkt.Data) != sa.HeaderSize+2*200 {
				t.Errorf("try %d: %d bytes, want the two-segment answer", i+1, len(pkt.Data))
			}
		}
	})
}

// bounceWire hands every MAD back at once as undeliverable, as ibsim
// echoes one it cannot deliver with status 110 (mux.Mux.Lost).
type bounceWire struct {
	m     *mux.Mux
	first int // bounce only the first this many MADs (0: every one)
	mu    sync.Mutex
	sent  int
}

func (w *bounceWire) Transmit(p *fabric.Packet) error {
	w.mu.Lock()
	w.sent++
	n := w.sent
	w.mu.Unlock()
	if w.first == 0 || n <= w.first {
		w.m.Lost(&fabric.Packet{Data: append([]byte(nil), p.Data...)})
	}
	return nil
}

func (w *bounceWire) Close() error { return nil }

// call runs an SA NodeRecord query of method through a driver on a Mux
// on w (LID 1, the SM at 2) and returns its completion and how long it
// took.
func (w *bounceWire) call(t *testing.T, method uint8, timeout time.Duration, retries int) (*fabric.Packet, time.Duration) {
	t.Helper()
	w.m = mux.New(w, fabric.PortAttr{LID: 1, SMLID: 2}, nil)
	d := rmppdriver.New(w.m, nil)
	defer d.Close()
	req, _ := sa.NewRequest(method, sa.AttrNodeRecord, 0, 0, nil)
	start := time.Now()
	resp, err := d.Call(t.Context(), mad.ClassSubnAdm, sa.ClassVersion, req, fabric.Addr{LID: 2, QPN: 1, QKey: 0x80010000}, timeout, retries)
	if err != nil {
		t.Fatal(err)
	}
	return resp, time.Since(start)
}

// TestCallBouncedEndsTheTryNow: an SA query (Call, whose tries the driver
// keeps: the Mux has none to end) that the fabric bounces is tried again
// at once and times out after its retries without waiting its timeout (an
// hour here: the bubble's clock does not move), as umad2sim ends the try
// of a bounced MAD; through ibsim, saquery to a gone SM waited -t (1 s by
// default) where the C tool returns at once.
func TestCallBouncedEndsTheTryNow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &bounceWire{}
		resp, el := w.call(t, mad.MethodGetTable, time.Hour, 2)
		if resp.Status != fabric.StatusTimeout || !resp.Bounced {
			t.Errorf("status %d bounced %v, want the timeout record of a bounced try", resp.Status, resp.Bounced)
		}
		if el != 0 {
			t.Errorf("the call took %v of the bubble's clock, want none", el)
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.sent != 3 {
			t.Errorf("%d tries, want 3 (the first and 2 retries)", w.sent)
		}
	})
}

// TestCallBouncedThenTimer: a Call whose first try is bounced and whose
// second is delivered to nobody ends when that try's timeout passes,
// with Bounced false (the last try says how the request ended).
func TestCallBouncedThenTimer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &bounceWire{first: 1}
		resp, el := w.call(t, mad.MethodGet, time.Second, 1)
		if resp.Status != fabric.StatusTimeout || resp.Bounced || el != time.Second {
			t.Errorf("status %d bounced %v after %v, want the timeout record, not bounced, after 1s", resp.Status, resp.Bounced, el)
		}
	})
}
