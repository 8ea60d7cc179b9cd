package rmpp_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/rmpp"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// message returns an SA GetTableResp message with d bytes of class data.
func message(d int, seed byte) []byte {
	b := make([]byte, 56+d)
	b[0], b[1], b[2], b[3] = 1, mad.ClassSubnAdm, 2, mad.MethodGetTableRes
	mad.SetTID(b, 0x1234)
	b[16], b[17] = 0, 0x11
	b[36] = 0xaa // SM_Key
	b[44], b[45] = 0, 14
	for i := 56; i < len(b); i++ {
		b[i] = byte(i) ^ seed
	}
	return b
}

func hdr(t testing.TB, b []byte) rmpp.Header {
	t.Helper()
	var h rmpp.Header
	if err := h.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	return h
}

func TestLayout(t *testing.T) { madtest.CheckLayout(t, rmpp.HeaderLayout()) }

func TestHeaderRoundTrip(t *testing.T) {
	h := rmpp.Header{Version: 1, Type: rmpp.TypeAck, RespTime: 0x1f, Flags: 7, Status: 124, Data1: 0xdeadbeef, Data2: 65}
	b := make([]byte, 256)
	h.Put(b)
	if b[26] != 0x1f<<3|7 {
		t.Errorf("byte 26 = %#x, want RRespTime<<3|flags = %#x", b[26], 0x1f<<3|7)
	}
	if got := hdr(t, b); got != h {
		t.Errorf("round trip: got %+v want %+v", got, h)
	}
	if _, err := rmpp.NewSender(b[:20], rmpp.SenderConfig{}); !errors.Is(err, mad.ErrTruncated) {
		t.Errorf("short message: %v", err)
	}
	var z rmpp.Header
	if err := z.UnmarshalBinary(b[:35]); !errors.Is(err, mad.ErrTruncated) {
		t.Errorf("short header: %v", err)
	}
}

// TestPayloadLength checks section 3's worked examples.
func TestPayloadLength(t *testing.T) {
	g := rmpp.Geometry{H: 56}
	for _, c := range []struct{ d, n, first, last int }{
		{0, 1, 20, 20}, {1, 1, 21, 21}, {199, 1, 219, 219}, {200, 1, 220, 220},
		{201, 2, 241, 21}, {400, 2, 440, 220}, {640, 4, 720, 60}, {12800, 64, 14080, 220},
	} {
		t.Run(fmt.Sprint(c.d), func(t *testing.T) {
			n := g.Segments(c.d)
			f, l := g.PayloadLength(c.d)
			if n != c.n || f != c.first || l != c.last {
				t.Errorf("D=%d: N=%d first=%d last=%d, want %d %d %d", c.d, n, f, l, c.n, c.first, c.last)
			}
			if got := g.MessageLength(n, uint32(l)); got != 56+c.d {
				t.Errorf("D=%d: receiver length %d, want %d", c.d, got, 56+c.d)
			}
		})
	}
	// Linux quirks: PayloadLength 0 in the last segment loses 20 bytes of
	// N-1 and all of N; a value above 220 yields a full last segment.
	if got := g.MessageLength(3, 0); got != 56+3*200-220 {
		t.Errorf("PayloadLength 0: %d", got)
	}
	if got := g.MessageLength(3, 5000); got != 56+600 {
		t.Errorf("PayloadLength 5000: %d", got)
	}
}

func TestSegments(t *testing.T) {
	msg := message(640, 0)
	s, err := rmpp.NewSender(msg, rmpp.SenderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	for k := 1; k <= s.Segments(); k++ {
		seg := s.Segment(nil, k)
		if len(seg) != 256 {
			t.Fatalf("segment %d: %d bytes", k, len(seg))
		}
		h := hdr(t, seg)
		wantFlags := uint8(rmpp.FlagActive)
		var wantPL uint32
		switch k {
		case 1:
			wantFlags |= rmpp.FlagFirst
			wantPL = 720
		case 4:
			wantFlags |= rmpp.FlagLast
			wantPL = 60
		}
		if h.Type != rmpp.TypeData || h.Flags != wantFlags || h.Data1 != uint32(k) || h.Data2 != wantPL {
			t.Errorf("segment %d header %+v, want flags %#x PayloadLength %d", k, h, wantFlags, wantPL)
		}
		if !bytes.Equal(seg[36:56], msg[36:56]) || !bytes.Equal(seg[:24], msg[:24]) {
			t.Errorf("segment %d: headers not repeated", k)
		}
		all = append(all, seg[56:]...)
	}
	if !bytes.Equal(all[:640], msg[56:]) || !bytes.Equal(all[640:], make([]byte, 160)) {
		t.Error("data not segmented in order with zero pad")
	}
}

// step runs one event on a receiver, failing on unexpected output.
type recvCase struct {
	name  string
	segs  [][]byte // fed in order
	check func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output)
}

func segsOf(t testing.TB, msg []byte, ks ...int) [][]byte {
	s, err := rmpp.NewSender(msg, rmpp.SenderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, k := range ks {
		out = append(out, s.Segment(nil, k))
	}
	return out
}

func mutate(b []byte, f func(h *rmpp.Header)) []byte {
	var h rmpp.Header
	_ = h.UnmarshalBinary(b)
	f(&h)
	h.Put(b)
	return b
}

func TestReceiverTable(t *testing.T) {
	msg := message(200*70, 1) // 70 segments
	last := func(outs []rmpp.Output) rmpp.Output { return outs[len(outs)-1] }
	abortWith := func(st uint8) func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output) {
		return func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output) {
			o := last(outs)
			if o.Control != rmpp.TypeAbort || o.ControlStatus != st || !o.Done {
				t.Errorf("got %+v, want ABORT %d", o, st)
			}
			var ae *rmpp.AbortError
			if !errors.As(r.Err(), &ae) || ae.Status != st {
				t.Errorf("Err = %v", r.Err())
			}
		}
	}
	cases := []recvCase{
		{"segment 1 ACKed with window 65", segsOf(t, msg, 1), func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output) {
			if !outs[0].Ack || r.SegmentNumber() != 1 || r.NewWindowLast() != 65 {
				t.Errorf("got %+v seg %d nwl %d", outs[0], r.SegmentNumber(), r.NewWindowLast())
			}
			ack := hdr(t, r.Ack(nil))
			if ack.Type != rmpp.TypeAck || ack.Data1 != 1 || ack.Data2 != 65 || r.Ack(nil)[3] != mad.MethodGetTable {
				t.Errorf("ACK %+v method %#x", ack, r.Ack(nil)[3])
			}
		}},
		{"no ACK inside the window", segsOf(t, msg, 1, 2, 3), func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output) {
			if outs[1].Ack || outs[2].Ack {
				t.Errorf("ACK inside window: %+v", outs)
			}
		}},
		{"segment beyond window dropped", segsOf(t, msg, 1, 66), func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output) {
			if outs[1].Ack || outs[1].Done || r.SegmentNumber() != 1 {
				t.Errorf("got %+v", outs[1])
			}
		}},
		{"duplicate re-ACKed", segsOf(t, msg, 1, 2, 1), func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output) {
			if !outs[2].Ack || r.SegmentNumber() != 2 {
				t.Errorf("got %+v", outs[2])
			}
		}},
		{"out of order buffered", segsOf(t, msg, 1, 3, 4, 2), func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output) {
			if r.SegmentNumber() != 4 || outs[1].Ack || outs[2].Ack {
				t.Errorf("seg %d outs %+v", r.SegmentNumber(), outs)
			}
		}},
		{"ACK at 65", segsOf(t, msg, slices.Collect(func(y func(int) bool) {
			for k := 1; k <= 65; k++ {
				y(k)
			}
		})...), func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output) {
			var at []int
			for i, o := range outs {
				if o.Ack {
					at = append(at, i+1)
				}
			}
			if !slices.Equal(at, []int{1, 65}) || r.NewWindowLast() != 129 {
				t.Errorf("ACKs after %v, window %d", at, r.NewWindowLast())
			}
		}},
		{"segment 1 without First", [][]byte{mutate(segsOf(t, msg, 1)[0], func(h *rmpp.Header) { h.Flags = rmpp.FlagActive })}, abortWith(rmpp.StatusBadSeg)},
		{"First on segment 2", [][]byte{segsOf(t, msg, 1)[0], mutate(segsOf(t, msg, 2)[0], func(h *rmpp.Header) { h.Flags |= rmpp.FlagFirst })}, abortWith(rmpp.StatusBadSeg)},
		{"version 2", [][]byte{mutate(segsOf(t, msg, 1)[0], func(h *rmpp.Header) { h.Version = 2 })}, abortWith(rmpp.StatusUnV)},
		{"type 5", [][]byte{mutate(segsOf(t, msg, 1)[0], func(h *rmpp.Header) { h.Type = 5 })}, abortWith(rmpp.StatusBadType)},
		{"DATA with status", [][]byte{mutate(segsOf(t, msg, 1)[0], func(h *rmpp.Header) { h.Status = 3 })}, abortWith(rmpp.StatusBadStatus)},
		{"segment 2 without a transfer", segsOf(t, msg, 2), func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output) {
			if o := outs[0]; o.Ack || o.Control != 0 || !o.Done {
				t.Errorf("got %+v, want silent drop", o)
			}
		}},
		{"sender ABORT", [][]byte{segsOf(t, msg, 1)[0], mutate(segsOf(t, msg, 2)[0], func(h *rmpp.Header) { h.Type, h.Status = rmpp.TypeAbort, rmpp.StatusTMR })}, func(t *testing.T, r *rmpp.Receiver, outs []rmpp.Output) {
			var ae *rmpp.AbortError
			if o := outs[1]; !o.Done || !errors.As(o.Err, &ae) || !ae.Remote || r.Message() != nil {
				t.Errorf("got %+v", o)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rmpp.NewReceiver(rmpp.ReceiverConfig{})
			var outs []rmpp.Output
			for _, s := range c.segs {
				outs = append(outs, r.Handle(s, t0))
			}
			c.check(t, r, outs)
		})
	}
}

func TestReceiverTimers(t *testing.T) {
	msg := message(600, 2)
	r := rmpp.NewReceiver(rmpp.ReceiverConfig{})
	segs := segsOf(t, msg, 1, 2)
	r.Handle(segs[0], t0)
	r.Handle(segs[1], t0.Add(time.Second))
	if o := r.Tick(t0.Add(39 * time.Second)); o.Done {
		t.Fatalf("early: %+v", o)
	}
	o := r.Tick(t0.Add(40 * time.Second))
	if o.Control != rmpp.TypeAbort || o.ControlStatus != rmpp.StatusT2L || !o.Done {
		t.Fatalf("sender vanished: got %+v, want ABORT 118", o)
	}
	if ab := hdr(t, r.Control(nil, o.Control, o.ControlStatus)); ab.Type != rmpp.TypeAbort || ab.Status != 118 {
		t.Errorf("ABORT packet %+v", ab)
	}
	// Completed transfers linger 10 s and re-ACK duplicates.
	r = rmpp.NewReceiver(rmpp.ReceiverConfig{})
	all := segsOf(t, msg, 1, 2, 3)
	for _, s := range all {
		o = r.Handle(s, t0)
	}
	if !o.Complete || !bytes.Equal(r.Message()[56:], msg[56:]) {
		t.Fatalf("complete %+v", o)
	}
	if o = r.Handle(all[0], t0.Add(5*time.Second)); !o.Ack || o.Complete {
		t.Errorf("duplicate after completion: %+v", o)
	}
	if o = r.Tick(t0.Add(10 * time.Second)); !o.Done {
		t.Errorf("linger: %+v", o)
	}
}

func ack(t testing.TB, msg []byte, seg, nwl uint32, f func(h *rmpp.Header)) *rmpp.Header {
	h := &rmpp.Header{Version: 1, Type: rmpp.TypeAck, Flags: rmpp.FlagActive, Data1: seg, Data2: nwl}
	if f != nil {
		f(h)
	}
	return h
}

func TestSenderTable(t *testing.T) {
	msg := message(200*10, 3) // 10 segments
	type ev struct {
		h    *rmpp.Header
		tick time.Duration
	}
	cases := []struct {
		name string
		cfg  rmpp.SenderConfig
		evs  []ev
		want rmpp.Output // of the last event (Timer and Err ignored)
		st   uint8       // abort status in Err, 0 none
	}{
		{"window 1 start then ACK(1,5) sends 2..5", rmpp.SenderConfig{}, []ev{{h: ack(t, msg, 1, 5, nil)}}, rmpp.Output{From: 2, To: 5}, 0},
		{"last ACK completes", rmpp.SenderConfig{Window: 10}, []ev{{h: ack(t, msg, 10, 10, nil)}}, rmpp.Output{Done: true}, 0},
		{"ACK status", rmpp.SenderConfig{}, []ev{{h: ack(t, msg, 1, 5, func(h *rmpp.Header) { h.Status = 1 })}}, rmpp.Output{Done: true, Control: rmpp.TypeAbort, ControlStatus: 124}, 124},
		{"W2S", rmpp.SenderConfig{}, []ev{{h: ack(t, msg, 1, 0, nil)}}, rmpp.Output{Done: true, Control: rmpp.TypeAbort, ControlStatus: 122}, 122},
		{"S2B past window", rmpp.SenderConfig{}, []ev{{h: ack(t, msg, 2, 5, nil)}}, rmpp.Output{Done: true, Control: rmpp.TypeAbort, ControlStatus: 123}, 123},
		{"S2B past N", rmpp.SenderConfig{Window: 64}, []ev{{h: ack(t, msg, 11, 64, nil)}}, rmpp.Output{Done: true, Control: rmpp.TypeAbort, ControlStatus: 123}, 123},
		{"stale ACK ignored", rmpp.SenderConfig{}, []ev{{h: ack(t, msg, 1, 5, nil)}, {h: ack(t, msg, 1, 3, nil)}}, rmpp.Output{}, 0},
		{"STOP 1", rmpp.SenderConfig{}, []ev{{h: ack(t, msg, 0, 0, func(h *rmpp.Header) { h.Type, h.Status = rmpp.TypeStop, 1 })}}, rmpp.Output{Done: true}, 1},
		{"STOP 7", rmpp.SenderConfig{}, []ev{{h: ack(t, msg, 0, 0, func(h *rmpp.Header) { h.Type, h.Status = rmpp.TypeStop, 7 })}}, rmpp.Output{Done: true, Control: rmpp.TypeAbort, ControlStatus: 124}, 7},
		{"ABORT 118", rmpp.SenderConfig{}, []ev{{h: ack(t, msg, 0, 0, func(h *rmpp.Header) { h.Type, h.Status = rmpp.TypeAbort, 118 })}}, rmpp.Output{Done: true}, 118},
		{"ABORT 3", rmpp.SenderConfig{}, []ev{{h: ack(t, msg, 0, 0, func(h *rmpp.Header) { h.Type, h.Status = rmpp.TypeAbort, 3 })}}, rmpp.Output{Done: true, Control: rmpp.TypeAbort, ControlStatus: 124}, 3},
		{"timeout resends from last ACK", rmpp.SenderConfig{Retries: 1}, []ev{{h: ack(t, msg, 1, 4, nil)}, {h: ack(t, msg, 2, 4, nil)}, {tick: 3 * time.Second}}, rmpp.Output{From: 3, To: 4}, 0},
		{"retries exhausted", rmpp.SenderConfig{Retries: 0}, []ev{{tick: 2 * time.Second}}, rmpp.Output{Done: true, Control: rmpp.TypeAbort, ControlStatus: 126}, 126},
		{"tick before deadline", rmpp.SenderConfig{}, []ev{{tick: time.Second}}, rmpp.Output{}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := rmpp.NewSender(msg, c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			s.Start(t0)
			var o rmpp.Output
			for _, e := range c.evs {
				if e.h != nil {
					o = s.Handle(e.h, t0)
				} else {
					o = s.Tick(t0.Add(e.tick))
				}
			}
			got := o
			got.Timer, got.Err = time.Time{}, nil
			if got != c.want {
				t.Errorf("got %+v, want %+v", got, c.want)
			}
			var ae *rmpp.AbortError
			switch {
			case c.st == 0 && o.Err != nil:
				t.Errorf("unexpected error %v", o.Err)
			case c.st != 0 && (!errors.As(s.Err(), &ae) || ae.Status != c.st):
				t.Errorf("Err = %v, want status %d", s.Err(), c.st)
			}
		})
	}
}

func TestSwitchAck(t *testing.T) {
	msg := message(10, 0)
	msg[3] = mad.MethodGetMulti
	b := rmpp.AppendSwitchAck(nil, msg, 1)
	h := hdr(t, b)
	if h.Type != rmpp.TypeAck || h.Data1 != 0 || h.Data2 != 1 || b[3] != mad.MethodGetMulti {
		t.Errorf("switch ACK %+v method %#x", h, b[3])
	}
	r := rmpp.NewReceiver(rmpp.ReceiverConfig{})
	for _, s := range segsOf(t, msg, 1) {
		r.Handle(s, t0)
	}
	if o := r.Handle(b, t0); o.SwitchWindow != 1 {
		t.Errorf("receiver did not see the direction switch: %+v", o)
	}
}

func FuzzHeader(f *testing.F) {
	f.Add(segsOf(f, message(500, 0), 1)[0])
	f.Add(make([]byte, 36))
	f.Fuzz(func(t *testing.T, b []byte) {
		var h rmpp.Header
		if h.UnmarshalBinary(b) != nil {
			return
		}
		c := make([]byte, len(b))
		h.Put(c)
		var h2 rmpp.Header
		_ = h2.UnmarshalBinary(c)
		if h2.Version != h.Version || h2.Data1 != h.Data1 || h2.Data2 != h.Data2 || h2.Flags != h.Flags || h2.RespTime != h.RespTime {
			t.Fatalf("round trip %+v -> %+v", h, h2)
		}
		// A receiver never panics on any segment.
		r := rmpp.NewReceiver(rmpp.ReceiverConfig{})
		seg := make([]byte, 256)
		copy(seg, b)
		r.Handle(seg, t0)
		r.Handle(seg, t0)
		_ = r.Message()
		_ = r.Ack(nil)
	})
}

func TestHeaderZeroAlloc(t *testing.T) {
	b := segsOf(t, message(500, 0), 1)[0]
	var h rmpp.Header
	madtest.ZeroAllocs(t, "rmpp header", func() { _ = h.UnmarshalBinary(b) })
}

var _ = rand.New

// TestAckPoints: a receiver ACKs segment 1, each exhausted window (65,
// 129, ...) and the last segment (rmpp.md section 9, case 2).
func TestAckPoints(t *testing.T) {
	for _, c := range []struct {
		n    int
		acks []int
	}{{64, []int{1, 64}}, {65, []int{1, 65}}, {66, []int{1, 65, 66}}, {129, []int{1, 65, 129}}} {
		t.Run(fmt.Sprint(c.n), func(t *testing.T) {
			msg := message(c.n*200, 3)
			s, _ := rmpp.NewSender(msg, rmpp.SenderConfig{Window: 1000})
			r := rmpp.NewReceiver(rmpp.ReceiverConfig{})
			var acks []int
			for k := 1; k <= c.n; k++ {
				if o := r.Handle(s.Segment(nil, k), t0); o.Ack {
					acks = append(acks, k)
				}
			}
			if !slices.Equal(acks, c.acks) {
				t.Errorf("ACKs after %v, want %v", acks, c.acks)
			}
		})
	}
}

// TestReceiverFirstClaim: a First segment's PayloadLength is a claim, not
// a reservation: 0xffffffff reserves at most 64 KiB (it reserved 16 MiB);
// the buffer then grows with what arrives, and End stops the transfer
// with the STOP asked for and frees it.
func TestReceiverFirstClaim(t *testing.T) {
	s, err := rmpp.NewSender(message(10*200, 1), rmpp.SenderConfig{})
	if err != nil {
		t.Fatal(err)
	}
	seg := s.Segment(nil, 1)
	(&rmpp.Header{Version: rmpp.Version, Type: rmpp.TypeData, Flags: rmpp.FlagActive | rmpp.FlagFirst, Data1: 1, Data2: 0xffffffff}).Put(seg)
	r := rmpp.NewReceiver(rmpp.ReceiverConfig{})
	r.Handle(seg, t0)
	if n := r.Buffered(); n < mad.Size || n > 64<<10 || !r.Active() {
		t.Fatalf("after a First segment claiming 4 GiB: %d bytes held, active %v", n, r.Active())
	}
	for k := 2; k <= 5; k++ {
		r.Handle(s.Segment(nil, k), t0)
	}
	o := r.End(rmpp.TypeStop, rmpp.StatusResX, "test")
	var ae *rmpp.AbortError
	if o.Control != rmpp.TypeStop || o.ControlStatus != rmpp.StatusResX || !o.Done || !errors.As(o.Err, &ae) || ae.Remote {
		t.Fatalf("End: %+v", o)
	}
	if r.Buffered() != 0 || r.Active() {
		t.Errorf("after End: %d bytes held, active %v", r.Buffered(), r.Active())
	}
	if o := r.End(rmpp.TypeStop, rmpp.StatusResX, "again"); o.Control != 0 || !o.Done {
		t.Errorf("End of an ended transfer: %+v, want Done and nothing to send", o)
	}
}
