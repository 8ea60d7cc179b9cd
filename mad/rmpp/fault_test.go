package rmpp_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/ibscript/ibscript/mad/rmpp"
)

// link is a seeded fault injector between one Sender and one Receiver. It
// runs the two machines on a simulated clock: packets in flight are
// delivered in rounds, and when nothing is in flight the clock jumps to the
// earliest timer.
type link struct {
	rng *rand.Rand
	// drop decides per packet; toRecv says the direction, n counts the
	// packets sent in that direction so far (1-based).
	drop    func(toRecv bool, n int, h rmpp.Header) bool
	dup     float64 // probability a packet is delivered twice
	reorder bool    // shuffle each round's packets
	// receiverHook may replace the receiver's output (a STOP, say).
	receiverHook func(k int, o rmpp.Output) rmpp.Output
	vanish       int // the sender stops transmitting after this many DATA packets (0: never)

	sentData, sentCtl int
	deliveries        int
}

type result struct {
	msg       []byte
	sendErr   error
	recvErr   error
	completes int
	elapsed   time.Duration
}

func (l *link) run(t testing.TB, msg []byte, scfg rmpp.SenderConfig, rcfg rmpp.ReceiverConfig) result {
	t.Helper()
	s, err := rmpp.NewSender(msg, scfg)
	if err != nil {
		t.Fatal(err)
	}
	r := rmpp.NewReceiver(rcfg)
	now := t0
	var toRecv, toSend [][]byte
	var res result
	var sTimer, rTimer time.Time
	sendDone, recvDone := false, false
	emitS := func(o rmpp.Output) {
		if !o.Timer.IsZero() || o.Done {
			sTimer = o.Timer
		}
		for k := o.From; o.From > 0 && k <= o.To; k++ {
			if l.vanish > 0 && l.sentData >= l.vanish {
				break
			}
			l.sentData++
			seg := s.Segment(nil, k)
			if l.drop == nil || !l.drop(true, l.sentData, hdr(t, seg)) {
				toRecv = append(toRecv, seg)
			}
		}
		if o.Control != 0 {
			toRecv = append(toRecv, s.Control(nil, o.Control, o.ControlStatus))
		}
		if o.Done {
			sendDone = true
			res.sendErr = o.Err
		}
	}
	emitR := func(o rmpp.Output) {
		if l.receiverHook != nil {
			o = l.receiverHook(r.SegmentNumber(), o)
		}
		if !o.Timer.IsZero() || o.Done {
			rTimer = o.Timer
		}
		if o.Ack {
			l.sentCtl++
			a := r.Ack(nil)
			if l.drop == nil || !l.drop(false, l.sentCtl, hdr(t, a)) {
				toSend = append(toSend, a)
			}
		}
		if o.Control != 0 {
			toSend = append(toSend, r.Control(nil, o.Control, o.ControlStatus))
		}
		if o.Complete {
			res.completes++
			res.msg = append([]byte(nil), r.Message()...)
		}
		if o.Done {
			recvDone = true
			if o.Err != nil {
				res.recvErr = o.Err
			}
		}
	}
	emitS(s.Start(now))
	for range 1_000_000 {
		if len(toRecv) == 0 && len(toSend) == 0 {
			if sendDone && (recvDone || res.completes > 0) {
				break
			}
			next := time.Time{}
			for _, tm := range []time.Time{sTimer, rTimer} {
				if !tm.IsZero() && (next.IsZero() || tm.Before(next)) {
					next = tm
				}
			}
			if next.IsZero() {
				break
			}
			if next.After(now) {
				now = next
			}
			if !sendDone {
				emitS(s.Tick(now))
			}
			if !recvDone {
				emitR(r.Tick(now))
			}
			continue
		}
		batch := toRecv
		toRecv = nil
		if l.reorder {
			l.rng.Shuffle(len(batch), func(i, j int) { batch[i], batch[j] = batch[j], batch[i] })
		}
		for _, seg := range batch {
			for range l.copies() {
				if !recvDone {
					emitR(r.Handle(seg, now))
				}
			}
		}
		back := toSend
		toSend = nil
		for _, a := range back {
			for range l.copies() {
				h := hdr(t, a)
				if !sendDone {
					emitS(s.Handle(&h, now))
				}
			}
		}
	}
	res.elapsed = now.Sub(t0)
	return res
}

func (l *link) copies() int {
	if l.dup > 0 && l.rng.Float64() < l.dup {
		return 2
	}
	return 1
}

func newLink(seed uint64) *link { return &link{rng: rand.New(rand.NewPCG(seed, 1))} }

func checkDelivered(t *testing.T, res result, msg []byte) {
	t.Helper()
	if res.sendErr != nil || res.recvErr != nil {
		t.Fatalf("send error %v, receive error %v", res.sendErr, res.recvErr)
	}
	if res.completes != 1 {
		t.Fatalf("delivered %d times, want once", res.completes)
	}
	if !bytes.Equal(res.msg[56:], msg[56:]) || !bytes.Equal(res.msg[:24], msg[:24]) {
		t.Fatalf("message differs (len %d want %d)", len(res.msg), len(msg))
	}
	var h rmpp.Header
	_ = h.UnmarshalBinary(res.msg)
	want := uint8(rmpp.FlagActive | rmpp.FlagFirst)
	if len(msg) <= 256 {
		want |= rmpp.FlagLast
	}
	if h.Flags != want || h.Data1 != 1 {
		t.Errorf("visible header %+v, want the first segment's", h)
	}
}

var fast = rmpp.SenderConfig{Timeout: 100 * time.Millisecond, Retries: 20}

func TestTransferSizes(t *testing.T) {
	for _, segs := range []int{1, 2, 5000} {
		for _, win := range []int{1, 64} {
			t.Run(fmt.Sprintf("%d segments window %d", segs, win), func(t *testing.T) {
				msg := message(segs*200-7, byte(segs))
				res := newLink(1).run(t, msg, fast, rmpp.ReceiverConfig{Window: win})
				checkDelivered(t, res, msg)
			})
		}
	}
}

// TestLoseEachPacket drops each single DATA segment and each single ACK of
// a 130-segment transfer in turn.
func TestLoseEachPacket(t *testing.T) {
	msg := message(130*200, 9)
	for _, toRecv := range []bool{true, false} {
		limit := 131
		if !toRecv {
			limit = 4 // ACKs at 1, 65, 129 and 130
		}
		for victim := 1; victim <= limit; victim++ {
			name := fmt.Sprintf("segment %d", victim)
			if !toRecv {
				name = fmt.Sprintf("ACK %d", victim)
			}
			t.Run(name, func(t *testing.T) {
				l := newLink(uint64(victim))
				l.drop = func(dir bool, n int, h rmpp.Header) bool { return dir == toRecv && n == victim }
				res := l.run(t, msg, fast, rmpp.ReceiverConfig{})
				checkDelivered(t, res, msg)
			})
		}
	}
}

func TestRandomFaults(t *testing.T) {
	for _, c := range []struct {
		name    string
		loss    float64
		dup     float64
		reorder bool
		segs    int
	}{
		{"5% loss", 0.05, 0, false, 5000},
		{"duplication", 0, 0.2, false, 700},
		{"reordering", 0, 0, true, 700},
		{"everything", 0.05, 0.1, true, 1000},
	} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s seed %d", c.name, seed), func(t *testing.T) {
				msg := message(c.segs*200, byte(seed))
				l := newLink(seed)
				l.dup, l.reorder = c.dup, c.reorder
				l.drop = func(bool, int, rmpp.Header) bool { return l.rng.Float64() < c.loss }
				res := l.run(t, msg, fast, rmpp.ReceiverConfig{TotalTimeout: time.Hour})
				checkDelivered(t, res, msg)
			})
		}
	}
}

func TestReceiverStops(t *testing.T) {
	msg := message(300*200, 4)
	l := newLink(1)
	res := l.run(t, msg, fast, rmpp.ReceiverConfig{MaxLength: 100 * 256})
	var ae *rmpp.AbortError
	if !errors.As(res.sendErr, &ae) || ae.Type != rmpp.TypeStop || ae.Status != 1 || !ae.Remote {
		t.Errorf("sender error %v, want a received STOP 1", res.sendErr)
	}
	if res.completes != 0 || res.recvErr == nil {
		t.Errorf("receiver: %d completions, error %v", res.completes, res.recvErr)
	}
}

func TestAbortMidTransfer(t *testing.T) {
	msg := message(300*200, 5)
	l := newLink(1)
	l.receiverHook = func(k int, o rmpp.Output) rmpp.Output {
		if k == 100 {
			return rmpp.Output{Control: rmpp.TypeAbort, ControlStatus: rmpp.StatusUnspec, Done: true, Err: errors.New("test abort")}
		}
		return o
	}
	res := l.run(t, msg, fast, rmpp.ReceiverConfig{})
	var ae *rmpp.AbortError
	if !errors.As(res.sendErr, &ae) || ae.Type != rmpp.TypeAbort || ae.Status != 127 || !ae.Remote {
		t.Errorf("sender error %v, want a received ABORT 127", res.sendErr)
	}
	if res.completes != 0 {
		t.Error("aborted transfer delivered")
	}
}

func TestSenderVanishes(t *testing.T) {
	msg := message(300*200, 6)
	l := newLink(1)
	l.vanish = 70
	res := l.run(t, msg, rmpp.SenderConfig{Retries: 1000}, rmpp.ReceiverConfig{})
	var ae *rmpp.AbortError
	if !errors.As(res.recvErr, &ae) || ae.Status != rmpp.StatusT2L || ae.Remote {
		t.Fatalf("receiver error %v, want its own ABORT 118", res.recvErr)
	}
	if res.elapsed < 40*time.Second {
		t.Errorf("gave up after %v, want the 40 s total timer", res.elapsed)
	}
}

func TestSilentReceiverRetries(t *testing.T) {
	for _, retries := range []int{0, 1, 3} {
		t.Run(fmt.Sprint(retries), func(t *testing.T) {
			msg := message(1000, 1)
			l := newLink(1)
			l.drop = func(toRecv bool, _ int, _ rmpp.Header) bool { return toRecv }
			res := l.run(t, msg, rmpp.SenderConfig{Retries: retries}, rmpp.ReceiverConfig{})
			if l.sentData != retries+1 {
				t.Errorf("segment 1 sent %d times, want %d", l.sentData, retries+1)
			}
			var ae *rmpp.AbortError
			if !errors.As(res.sendErr, &ae) || ae.Status != rmpp.StatusTMR {
				t.Errorf("sender error %v", res.sendErr)
			}
		})
	}
}

// BenchmarkTransfer moves a 5,000-segment message through both machines
// with no loss and reports segments per second and bytes allocated per
// segment (the receiver's reassembly buffer dominates).
func BenchmarkTransfer(b *testing.B) {
	msg := message(5000*200, 1)
	seg := make([]byte, 0, 256)
	var ackBuf []byte
	b.ReportAllocs()
	var total int
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for b.Loop() {
		s, _ := rmpp.NewSender(msg, rmpp.SenderConfig{})
		r := rmpp.NewReceiver(rmpp.ReceiverConfig{})
		o := s.Start(t0)
		for !s.Done() {
			var ro rmpp.Output
			for k := o.From; o.From > 0 && k <= o.To; k++ {
				seg = s.Segment(seg[:0], k)
				ro = r.Handle(seg, t0)
				total++
			}
			if !ro.Ack {
				b.Fatal("no ACK at the end of a window")
			}
			ackBuf = r.Ack(ackBuf[:0])
			var h rmpp.Header
			_ = h.UnmarshalBinary(ackBuf)
			o = s.Handle(&h, t0)
		}
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "segments/s")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(total), "B/segment")

}
