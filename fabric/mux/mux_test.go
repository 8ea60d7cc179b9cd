package mux_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/mux"
	"github.com/ibscript/ibscript/internal/leaktest"
	"github.com/ibscript/ibscript/mad"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// loopWire answers requests synchronously from inside Transmit, as the
// embedded simulator does, and counts Close calls.
type loopWire struct {
	m      *mux.Mux
	mu     sync.Mutex
	sent   [][]byte
	closes int
	answer bool
}

func (w *loopWire) Transmit(p *fabric.Packet) error {
	w.mu.Lock()
	w.sent = append(w.sent, append([]byte(nil), p.Data...))
	answer := w.answer
	w.mu.Unlock()
	if answer && !mad.IsResponse(p.Data) {
		w.m.Deliver(&fabric.Packet{Addr: fabric.Addr{LID: 9}, Data: fabrictest.GetResp(p.Data, 0)})
	}
	return nil
}

func (w *loopWire) Close() error {
	w.mu.Lock()
	w.closes++
	w.mu.Unlock()
	return nil
}

func (w *loopWire) all() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([][]byte(nil), w.sent...)
}

func (w *loopWire) last() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.sent) == 0 {
		return nil
	}
	return w.sent[len(w.sent)-1]
}

func newLoop(opts *mux.Options) (*mux.Mux, *loopWire) {
	w := &loopWire{answer: true}
	w.m = mux.New(w, fabric.PortAttr{LID: 1}, opts)
	return w.m, w
}

func gmp(class, method uint8, tid uint64) []byte {
	b := make([]byte, mad.Size)
	h := mad.Header{BaseVersion: 1, MgmtClass: class, ClassVersion: 1, Method: method, TID: tid, AttrID: 0x11}
	h.Put(b)
	return b
}

func TestAnswerUnowned(t *testing.T) {
	for _, tc := range []struct {
		name   string
		class  uint8
		method uint8
		answer bool
		want   uint16 // status of the answer, 0 = no answer
	}{
		{"GMPGet", fabrictest.TestClass, mad.MethodGet, true, 0x000c},
		{"GMPSet", fabrictest.TestClass, mad.MethodSet, true, 0x000c},
		{"DRSMPGet", mad.ClassSubnDR, mad.MethodGet, true, 0x800c},
		{"Trap", fabrictest.TestClass, mad.MethodTrap, true, 0},
		{"Off", fabrictest.TestClass, mad.MethodGet, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, w := newLoop(&mux.Options{AnswerUnowned: tc.answer})
			defer m.Close()
			m.Deliver(&fabric.Packet{Addr: fabric.Addr{LID: 7}, Data: gmp(tc.class, tc.method, 0x55)})
			got := w.last()
			if tc.want == 0 {
				if got != nil {
					t.Fatalf("answered with %x, want no answer", got[:8])
				}
				return
			}
			if got == nil {
				t.Fatal("no answer")
			}
			if mad.MethodOf(got) != mad.MethodGetResp || mad.StatusOf(got) != tc.want || mad.TIDOf(got) != 0x55 {
				t.Errorf("answer method 0x%02x status 0x%04x TID 0x%x, want GetResp 0x%04x TID 0x55",
					mad.MethodOf(got), mad.StatusOf(got), mad.TIDOf(got), tc.want)
			}
			if s := m.Stats(); s.Unowned != 1 || s.Answered != 1 {
				t.Errorf("stats %+v, want Unowned 1 Answered 1", s)
			}
		})
	}
}

func TestSharedPort(t *testing.T) {
	port := mux.NewPort()
	m1, w1 := newLoop(&mux.Options{Port: port})
	defer m1.Close()
	m2, _ := newLoop(&mux.Options{Port: port})
	ctx := t.Context()
	a := fabric.Agent{Class: fabrictest.TestClass, Version: 1}.WithMethods(mad.MethodSend)
	id1, err := m1.Register(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Register(ctx, a); !errors.Is(err, fabric.ErrMethodInUse) {
		t.Fatalf("second Mux registering an owned method: %v, want ErrMethodInUse", err)
	}
	// 0x01 and 0x81 share one ownership table.
	if _, err := m1.Register(ctx, fabric.Agent{Class: mad.ClassSubnLID, Version: 1}.WithMethods(mad.MethodTrap)); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Register(ctx, fabric.Agent{Class: mad.ClassSubnDR, Version: 1}.WithMethods(mad.MethodTrap)); !errors.Is(err, fabric.ErrMethodInUse) {
		t.Fatalf("class 0x81 Trap after class 0x01 Trap: %v, want ErrMethodInUse", err)
	}
	// Agent ids are per Mux, hi_tids per port.
	id2, err := m2.Register(ctx, fabric.Agent{Class: fabrictest.TestClass, Version: 1})
	if err != nil || id2 != 0 {
		t.Fatalf("m2 first agent = %d, %v; want 0", id2, err)
	}
	for i, m := range []*mux.Mux{m1, m2} {
		id := []fabric.AgentID{id1, id2}[i]
		if err := m.Send(ctx, &fabric.Packet{Agent: id, Timeout: time.Hour, Data: gmp(fabrictest.TestClass, mad.MethodGet, 1)}); err != nil {
			t.Fatal(err)
		}
	}
	// Both responses come back, each to its own Mux, though the wire
	// delivered them through m1 (m2's wire is a different loopWire,
	// whose Deliver also goes to m2: check the routing with m1 only).
	var p fabric.Packet
	if err := m1.Recv(ctx, &p); err != nil || p.Agent != id1 {
		t.Fatalf("m1 Recv: agent %d, %v", p.Agent, err)
	}
	if err := m2.Recv(ctx, &p); err != nil || p.Agent != id2 {
		t.Fatalf("m2 Recv: agent %d, %v", p.Agent, err)
	}
	hi1 := mad.TIDOf(w1.last()) >> 32
	if hi1 == 0 || hi1 == mad.TIDOf(p.Data)>>32 {
		t.Errorf("hi_tids 0x%x and 0x%x, want distinct non-zero", hi1, mad.TIDOf(p.Data)>>32)
	}
	// Unsolicited Send delivered through m2 reaches m1's owner.
	m2.Deliver(&fabric.Packet{Data: gmp(fabrictest.TestClass, mad.MethodSend, 3)})
	if err := m1.Recv(ctx, &p); err != nil || p.Agent != id1 || mad.MethodOf(p.Data) != mad.MethodSend {
		t.Fatalf("m1 Recv unsolicited: agent %d method 0x%02x, %v", p.Agent, mad.MethodOf(p.Data), err)
	}
	// Closing m2 releases nothing of m1's, and m1's methods stay owned.
	m2.Close()
	m3, _ := newLoop(&mux.Options{Port: port})
	defer m3.Close()
	if _, err := m3.Register(ctx, a); !errors.Is(err, fabric.ErrMethodInUse) {
		t.Fatalf("after m2.Close: %v, want ErrMethodInUse", err)
	}
	m1.Close()
	if _, err := m3.Register(ctx, a); err != nil {
		t.Fatalf("after m1.Close the method is free: %v", err)
	}
}

func TestQPCheck(t *testing.T) {
	m, _ := newLoop(nil)
	defer m.Close()
	ctx := t.Context()
	smi, _ := m.Register(ctx, fabric.Agent{Class: mad.ClassSubnDR, Version: 1})
	gsi, _ := m.Register(ctx, fabric.Agent{})
	if err := m.Send(ctx, &fabric.Packet{Agent: smi, Data: gmp(mad.ClassPerf, mad.MethodGet, 1)}); !errors.Is(err, fabric.ErrInvalid) {
		t.Errorf("PerfMgt from a QP0 agent: %v, want ErrInvalid", err)
	}
	if err := m.Send(ctx, &fabric.Packet{Agent: gsi, Data: gmp(mad.ClassSubnLID, mad.MethodGet, 1)}); !errors.Is(err, fabric.ErrInvalid) {
		t.Errorf("SMP from a QP1 agent: %v, want ErrInvalid", err)
	}
	if err := m.Send(ctx, &fabric.Packet{Agent: gsi, Data: make([]byte, 10)}); !errors.Is(err, fabric.ErrInvalid) {
		t.Errorf("10-byte MAD: %v, want ErrInvalid", err)
	}
	for _, a := range []fabric.Agent{
		{Class: 0x50, Version: 1},
		{Class: mad.ClassPerf, Version: 0x83},
		{Class: 0x31, Version: 1},
		{Class: mad.ClassPerf, Version: 1, RMPPVersion: 1},
	} {
		if _, err := m.Register(ctx, a); !errors.Is(err, fabric.ErrInvalid) {
			t.Errorf("Register(%+v): %v, want ErrInvalid", a, err)
		}
	}
}

func TestQueueLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w := newLoop(&mux.Options{QueueLimit: 2})
		defer m.Close()
		w.answer = false
		ctx := t.Context()
		id, _ := m.Register(ctx, fabric.Agent{Class: fabrictest.TestClass, Version: 1}.WithMethods(mad.MethodSend))
		if err := m.Send(ctx, &fabric.Packet{Agent: id, Timeout: time.Millisecond, Data: gmp(fabrictest.TestClass, mad.MethodGet, 1)}); err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			m.Deliver(&fabric.Packet{Data: gmp(fabrictest.TestClass, mad.MethodSend, uint64(10+i))})
		}
		time.Sleep(2 * time.Millisecond) // the timeout record is queued past the limit
		var got []uint64
		var p fabric.Packet
		for range 3 {
			if err := m.Recv(ctx, &p); err != nil {
				t.Fatal(err)
			}
			got = append(got, mad.TIDOf(p.Data)&0xffffffff)
		}
		if got[0] != 10 || got[1] != 11 || got[2] != 1 {
			t.Errorf("queue = %v, want [10 11 1]", got)
		}
		if s := m.Stats(); s.QueueDrops != 1 || s.Timeouts != 1 {
			t.Errorf("stats %+v, want 1 drop, 1 timeout", s)
		}
	})
}

func TestCloseWireOnce(t *testing.T) {
	m, w := newLoop(nil)
	m.Close()
	m.Close()
	if w.closes != 1 {
		t.Errorf("wire closed %d times, want 1", w.closes)
	}
	m.Deliver(&fabric.Packet{Data: gmp(fabrictest.TestClass, mad.MethodSend, 1)}) // no panic
}

// TestRetransmitBytes checks that every attempt carries the same bytes and
// that a response arriving between attempts stops them.
func TestRetransmitBytes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w := newLoop(nil)
		defer m.Close()
		w.answer = false
		ctx := t.Context()
		id, _ := m.Register(ctx, fabric.Agent{Class: fabrictest.TestClass, Version: 1})
		req := gmp(fabrictest.TestClass, mad.MethodGet, 0xabc)
		req[100] = 0x5a
		if err := m.Send(ctx, &fabric.Packet{Agent: id, Timeout: 10 * time.Millisecond, Retries: 5, Data: req}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(25 * time.Millisecond)
		sent := w.all()
		if len(sent) != 3 {
			t.Fatalf("%d attempts after 25ms, want 3", len(sent))
		}
		for i, b := range sent {
			if string(b[24:]) != string(req[24:]) || mad.TIDOf(b) != mad.TIDOf(sent[0]) {
				t.Errorf("attempt %d differs", i)
			}
		}
		m.Deliver(&fabric.Packet{Data: fabrictest.GetResp(sent[0], 0)})
		time.Sleep(time.Second)
		if n := len(w.all()); n != 3 {
			t.Errorf("%d attempts after the response, want 3", n)
		}
		var p fabric.Packet
		if err := m.Recv(ctx, &p); err != nil || p.Status != 0 {
			t.Fatalf("Recv: status %d, %v", p.Status, err)
		}
		if s := m.Stats(); s.Retransmits != 2 {
			t.Errorf("retransmits %d, want 2", s.Retransmits)
		}
	})
}

// BenchmarkRoundTrip measures Send + synchronous Deliver + Recv of one
// request and its response.
func BenchmarkRoundTrip(b *testing.B) {
	w := &echoWire{}
	m := mux.New(w, fabric.PortAttr{}, nil)
	w.m = m
	defer m.Close()
	ctx := context.Background()
	id, _ := m.Register(ctx, fabric.Agent{Class: fabrictest.TestClass, Version: 1})
	req := gmp(fabrictest.TestClass, mad.MethodGet, 0)
	sp := &fabric.Packet{Agent: id, Timeout: time.Second, Retries: 1, Data: req}
	var rp fabric.Packet
	b.ReportAllocs()
	var tid uint64
	for b.Loop() {
		tid++
		mad.SetTID(req, tid)
		if err := m.Send(ctx, sp); err != nil {
			b.Fatal(err)
		}
		if err := m.Recv(ctx, &rp); err != nil {
			b.Fatal(err)
		}
	}
}

// echoWire answers from a reused buffer, so a benchmark counts only the
// Mux's allocations.
type echoWire struct {
	m   *mux.Mux
	buf [mad.Size]byte
	p   fabric.Packet
}

func (w *echoWire) Transmit(p *fabric.Packet) error {
	n := copy(w.buf[:], p.Data)
	w.buf[3] = mad.MethodGetResp
	w.p.Data = w.buf[:n]
	w.m.Deliver(&w.p)
	return nil
}

func (w *echoWire) Close() error { return nil }

// TestHandler checks that SetHandler receives responses, unsolicited MADs
// and timeout records in place of the queue, and may Send from inside.
func TestHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w := newLoop(nil)
		defer m.Close()
		ctx := t.Context()
		id, _ := m.Register(ctx, fabric.Agent{Class: fabrictest.TestClass, Version: 1}.WithMethods(mad.MethodSend))
		var (
			mu    sync.Mutex // the timer's goroutine calls the handler too
			got   []string
			depth int // nesting; the calls never overlap in this test
		)
		m.SetHandler(func(p *fabric.Packet) {
			mu.Lock()
			depth++
			tid := uint32(mad.TIDOf(p.Data))
			got = append(got, fmt.Sprintf("%d:%x:%d:%d", p.Agent, tid, p.Status, depth))
			mu.Unlock()
			defer func() { mu.Lock(); depth--; mu.Unlock() }()
			if tid == 1 { // chain a request from inside the handler
				if err := m.Send(ctx, &fabric.Packet{Agent: id, Timeout: time.Second, Data: gmp(fabrictest.TestClass, mad.MethodGet, 2)}); err != nil {
					t.Error(err)
				}
			}
		})
		if err := m.Send(ctx, &fabric.Packet{Agent: id, Timeout: time.Second, Data: gmp(fabrictest.TestClass, mad.MethodGet, 1)}); err != nil {
			t.Fatal(err)
		}
		m.Deliver(&fabric.Packet{Data: gmp(fabrictest.TestClass, mad.MethodSend, 3)})
		w.mu.Lock()
		w.answer = false
		w.mu.Unlock()
		if err := m.Send(ctx, &fabric.Packet{Agent: id, Timeout: 10 * time.Millisecond, Data: gmp(fabrictest.TestClass, mad.MethodGet, 4)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
		want := []string{"0:1:0:1", "0:2:0:2", "0:3:0:1", "0:4:110:1"}
		mu.Lock()
		defer mu.Unlock()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("handler saw %v, want %v", got, want)
		}
		rctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		var p fabric.Packet
		if err := m.Recv(rctx, &p); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Recv with a handler: %v, want nothing queued", err)
		}
	})
}

// TestFail: once the wire's peer is gone (Fail), every waiter gets its one
// error: a Recv blocked on an outstanding request wakes with it (the
// request is dropped, not timed out), and Send, Register and Recv fail
// with it until Close, which still works.
func TestFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m, w := newLoop(nil)
		w.answer = false
		ctx := t.Context()
		id, err := m.Register(ctx, fabric.Agent{})
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Send(ctx, &fabric.Packet{Agent: id, Timeout: time.Second, Retries: 3, Addr: fabric.Addr{LID: 2, QPN: 1}, Data: gmp(0x04, mad.MethodGet, 1)}); err != nil {
			t.Fatal(err)
		}
		errc := make(chan error, 1)
		go func() {
			var p fabric.Packet
			errc <- m.Recv(ctx, &p)
		}()
		synctest.Wait()
		gone := &fabric.PeerGoneError{Peer: "the test's wire", Err: syscall.ECONNREFUSED}
		m.Fail(gone)
		m.Fail(errors.New("a second failure is not reported"))
		start := time.Now()
		if err := <-errc; !errors.Is(err, fabric.ErrPeerGone) || !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("blocked Recv after Fail = %v, want the peer-gone error", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Recv waited %v after Fail", d)
		}
		var p fabric.Packet
		_, regErr := m.Register(ctx, fabric.Agent{})
		for name, err := range map[string]error{
			"Recv":     m.Recv(ctx, &p),
			"Send":     m.Send(ctx, &fabric.Packet{Agent: id, Addr: fabric.Addr{LID: 2, QPN: 1}, Data: gmp(0x04, mad.MethodGet, 2)}),
			"Register": regErr,
		} {
			var pg *fabric.PeerGoneError
			if !errors.As(err, &pg) || pg != gone {
				t.Errorf("%s after Fail = %v, want the one peer-gone error", name, err)
			}
		}
		if got := m.FailErr(); got != gone {
			t.Errorf("FailErr = %v", got)
		}
		select {
		case <-m.Failed():
		default:
			t.Error("Failed() not closed")
		}
		time.Sleep(10 * time.Second) // the dropped request's timers would have run by now
		if n := len(w.all()); n != 1 {
			t.Errorf("%d transmissions, want 1 (no retry after Fail)", n)
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// bounceWire gives every request back as lost (Mux.Lost), as ibsim's
// status-110 echo of a MAD it cannot deliver: inside Transmit (before
// Send has started the try's timer) or, with async, from another
// goroutine after it.
type bounceWire struct {
	m     *mux.Mux
	async bool
	first int // bounce only the first this many tries (0: every one)
	mu    sync.Mutex
	sent  int
	wg    sync.WaitGroup
}

func (w *bounceWire) Transmit(p *fabric.Packet) error {
	w.mu.Lock()
	w.sent++
	n := w.sent
	w.mu.Unlock()
	if w.first > 0 && n > w.first {
		return nil // delivered, and nobody answers
	}
	b := append([]byte(nil), p.Data...)
	if !w.async {
		w.m.Lost(&fabric.Packet{Data: b})
		return nil
	}
	w.wg.Go(func() { w.m.Lost(&fabric.Packet{Data: b}) })
	return nil
}

func (w *bounceWire) Close() error { return nil }

// open puts a Mux on w, closed when the test ends, with an agent of
// fabrictest.TestClass.
func (w *bounceWire) open(t *testing.T) (context.Context, fabric.AgentID) {
	t.Helper()
	w.m = mux.New(w, fabric.PortAttr{LID: 1}, nil)
	t.Cleanup(func() { w.m.Close() })
	id, err := w.m.Register(t.Context(), fabric.Agent{Class: fabrictest.TestClass, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	return t.Context(), id
}

// TestLostEndsTheTryNow: a request the fabric bounces is tried again at
// once and times out after its retries without waiting for its timeout
// (an hour here: the bubble's clock does not move), whether the bounce
// comes inside Transmit or after Send returned; a bounce that matches no
// outstanding request (a response, an unknown TID) is refused.
func TestLostEndsTheTryNow(t *testing.T) {
	for _, async := range []bool{false, true} {
		t.Run(fmt.Sprintf("async=%v", async), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := &bounceWire{async: async}
				ctx, id := w.open(t)
				start := time.Now()
				req := gmp(fabrictest.TestClass, mad.MethodGet, 0x77)
				if err := w.m.Send(ctx, &fabric.Packet{Agent: id, Timeout: time.Hour, Retries: 3, Data: req}); err != nil {
					t.Fatal(err)
				}
				var p fabric.Packet
				if err := w.m.Recv(ctx, &p); err != nil {
					t.Fatal(err)
				}
				w.wg.Wait()
				if p.Status != fabric.StatusTimeout || !p.Bounced {
					t.Errorf("status %d bounced %v, want the timeout record of a bounced try", p.Status, p.Bounced)
				}
				if d := time.Since(start); d != 0 {
					t.Errorf("the request took %v of the bubble's clock, want none", d)
				}
				if w.sent != 4 {
					t.Errorf("%d tries, want 4 (the first and 3 retries)", w.sent)
				}
				if s := w.m.Stats(); s.Retransmits != 3 || s.Timeouts != 1 {
					t.Errorf("retransmits %d timeouts %d, want 3 and 1", s.Retransmits, s.Timeouts)
				}
				if w.m.Lost(&fabric.Packet{Data: fabrictest.GetResp(req, 0)}) || w.m.Lost(&fabric.Packet{Data: gmp(fabrictest.TestClass, mad.MethodGet, 0x99)}) {
					t.Error("Lost took a response or a request that is not outstanding")
				}
			})
		})
	}
}

// TestLostThenTimerNotBounced: a request whose first try the fabric
// bounces and whose last one it delivers to nobody completes when that
// try's timeout passes, with Bounced false: only the last try says how
// it ended (ibsysstat on ibsim prints its IBPANIC then, not the bounced
// request's ETIMEDOUT).
func TestLostThenTimerNotBounced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		w := &bounceWire{first: 1}
		ctx, id := w.open(t)
		start := time.Now()
		if err := w.m.Send(ctx, &fabric.Packet{Agent: id, Timeout: time.Second, Retries: 1, Data: gmp(fabrictest.TestClass, mad.MethodGet, 0x78)}); err != nil {
			t.Fatal(err)
		}
		p := fabric.Packet{Bounced: true} // Recv sets it either way
		if err := w.m.Recv(ctx, &p); err != nil {
			t.Fatal(err)
		}
		w.mu.Lock()
		sent := w.sent
		w.mu.Unlock()
		if p.Status != fabric.StatusTimeout || p.Bounced || sent != 2 || time.Since(start) != time.Second {
			t.Errorf("status %d bounced %v after %d tries and %v; want the timeout record, not bounced, after 2 tries and 1s", p.Status, p.Bounced, sent, time.Since(start))
		}
	})
}
