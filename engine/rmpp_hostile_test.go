package engine_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
)

// hostileSA is the far side of a Pipe posing as an SA whose answers are
// whatever the test scripts: answer gets every MAD the engine sends, with
// its RMPP header, and returns the MADs to deliver back. Calls of answer
// are serialized.
type hostileSA struct {
	pipe *fabrictest.Pipe

	mu     sync.Mutex
	answer func(b []byte, rh rmpp.Header) [][]byte
	seen   []rmpp.Header // RMPP headers of what the engine sent

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
	for _, b := range out { // the engine's replies come back here
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

// hostileSession opens a Session whose SA (LID 2) is a hostileSA.
func hostileSession(t *testing.T, opts *engine.Options) (*engine.Session, *hostileSA) {
	t.Helper()
	h := newHostileSA()
	s, err := engine.New(h.pipe.Transport(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); h.pipe.Close() })
	return s, h
}

// segment builds DATA segment k of an answer to req with the given flags
// and PayloadLength; its data is filled with k.
func segment(req []byte, k int, flags uint8, pl uint32) []byte {
	b := make([]byte, mad.Size)
	copy(b, req[:sa.HeaderSize])
	b[3] = mad.MethodOf(req) | mad.MethodResp
	h := rmpp.Header{Version: rmpp.Version, Type: rmpp.TypeData, Flags: rmpp.FlagActive | flags, Data1: uint32(k), Data2: pl}
	h.Put(b)
	sa.SetAttributeOffset(b, uint16(sa.NodeRecord.Stride))
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
	return [][]byte{segment(req, 1, rmpp.FlagFirst|rmpp.FlagLast, uint32(sa.HeaderSize-rmpp.HeaderEnd+sa.NodeRecord.Stride*8))}
}

// TestRMPPRefusesUnsolicitedData: DATA segments of responses nobody asked
// for (TIDs with no request outstanding) start no receive transfer: a
// thousand First segments announcing 4 GiB each are counted as refused,
// and the driver holds nothing; --debug's log names each. Before, each
// started a transfer that reserved 16 MiB.
func TestRMPPRefusesUnsolicitedData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var log bytes.Buffer // written by Sends of this goroutine: the Pipe delivers synchronously
		s, h := hostileSession(t, &engine.Options{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
		var req []byte
		h.answer = func(b []byte, rh rmpp.Header) [][]byte {
			if req == nil {
				req = append([]byte(nil), b...)
			}
			return oneRecord(b, rh)
		}
		if recs, err := s.SAGetTable(t.Context(), &sa.NodeRecord, 0, nil); err != nil || len(recs) != 1 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
		before := s.RMPPStats() // the answer's transfer lingers
		// The TIDs of the engine's SA agent (the mux routes by the upper
		// 32 bits), none of them outstanding.
		for tid := range 1000 {
			mad.SetTID(req, mad.TIDOf(req)&^0xffffffff|uint64(0x1000+tid))
			if err := h.pipe.Send(t.Context(), segment(req, 1, rmpp.FlagFirst, 0xffffffff)); err != nil {
				t.Fatal(err)
			}
		}
		synctest.Wait()
		st := s.RMPPStats()
		if st.Refused != 1000 || st.Transfers != before.Transfers || st.Held != before.Held {
			t.Errorf("after 1000 unsolicited First segments: %+v, want 1000 refused and nothing held", st)
		}
		if n := strings.Count(log.String(), `msg="engine: rmpp: DATA refused" why="no request of this TID outstanding"`); n != 1000 {
			t.Errorf("%d debug records of refused segments, want 1000", n)
		}
	})
}

// TestRMPPFirstSegmentClaim: an answer whose First segment announces
// PayloadLength 0xffffffff reserves at most 64 KiB, and one that keeps
// sending past RMPPLimits.MaxMessage is stopped with STOP(1): the call
// fails with a *LimitError naming the limit, the peer gets the STOP.
func TestRMPPFirstSegmentClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := hostileSession(t, &engine.Options{RMPP: engine.RMPPLimits{MaxMessage: 100_000}})
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
					heldAfterFirst = s.RMPPStats().Held
				}
				var out [][]byte
				for ; next <= int(rh.Data2); next++ {
					out = append(out, segment(reqHdr, next, 0, 0))
				}
				return out
			}
			return nil
		}
		_, err := s.SAGetTable(t.Context(), &sa.NodeRecord, 0, nil)
		var le *engine.LimitError
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
		st := s.RMPPStats()
		if stops != 1 || st.Stopped != 1 || st.Held != 0 {
			t.Errorf("%d STOP(1) sent, stats %+v; want one STOP, one stopped transfer, nothing held", stops, st)
		}
		t.Logf("%v", err)
	})
}

// TestRMPPMaxTotal: a transfer that would take the bytes held by all
// receive transfers past RMPPLimits.MaxTotal is stopped, and the call
// says which limit.
func TestRMPPMaxTotal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := simSessionOpts(t, fattree2000, "h010-05", 1, &engine.Options{RMPP: engine.RMPPLimits{MaxTotal: 100_000}})
		_, err := s.NodeRecords(t.Context())
		var le *engine.LimitError
		if !errors.As(err, &le) || le.Limit != "MaxTotal" || le.Bytes != 100_000 {
			t.Fatalf("err %v, want a LimitError on MaxTotal 100000", err)
		}
		if st := s.RMPPStats(); st.Stopped != 1 || st.Held != 0 {
			t.Errorf("stats %+v", st)
		}
		// Within the limits the same query works.
		s2, _ := simSessionOpts(t, fattree2000, "h010-05", 1, &engine.Options{RMPP: engine.RMPPLimits{MaxTotal: 1 << 20}})
		if recs, err := s2.NodeRecords(t.Context()); err != nil || len(recs) != 2000 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
	})
}

// TestRMPPAbortReachesReceiver: an SA whose ACKs never arrive gives up
// and sends ABORT(126); the engine call fails at once with that ABORT
// (an *rmpp.AbortError from the peer) instead of waiting out its budget
// with the dead transfer's state.
func TestRMPPAbortReachesReceiver(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := hostileSession(t, nil)
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
		_, err := s.SAGetTable(t.Context(), &sa.NodeRecord, 0, nil, engine.Timeout(time.Second), engine.Retries(2))
		var ae *rmpp.AbortError
		if !errors.As(err, &ae) || !ae.Remote || ae.Status != rmpp.StatusTMR {
			t.Fatalf("err %v, want the peer's ABORT 126", err)
		}
		if d := time.Since(start); d != 200*time.Millisecond || tries != 1 {
			t.Errorf("failed after %v and %d tries, want at the ABORT (200ms) after one", d, tries)
		}
		if st := s.RMPPStats(); st.Aborted != 1 || st.Transfers != 0 {
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
			s, h := hostileSession(t, &engine.Options{RMPP: engine.RMPPLimits{MaxMessage: 10_000, MaxTotal: total}})
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
						if held := s.RMPPStats().Held; held > total {
							mu.Lock()
							over = max(over, held)
							mu.Unlock()
						}
					}
				}()
				return nil
			}
			_, _ = s.SAGetTable(t.Context(), &sa.NodeRecord, 0, nil, engine.Timeout(100*time.Millisecond), engine.Retries(1))
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
		p := engine.NewUMADPort(h.pipe.Transport())
		defer p.Close()
		ctx := t.Context()
		agent, err := p.Register(ctx, mad.ClassSubnAdm, sa.ClassVersion, 1, [2]uint64{})
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
		addr := fabric.Addr{LID: 2, QPN: 1, QKey: 0x80010000}
		req, _ := sa.NewRequest(mad.MethodGetTable, sa.AttrNodeRecord, 0x77, 0, nil)
		for i, want := range []int{fabric.StatusTimeout, 0} {
			if err := p.Send(ctx, agent, req, addr, 100, 0); err != nil {
				t.Fatal(err)
			}
			pkt, err := p.Recv(ctx, 4096, 1000)
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

// TestSATruncatedAnswers: the two answers OpenSM gives under ibsim, made
// here without ibsim. A GetTable answered by one MAD with RMPP Active and
// type 0 gives its whole records and a TruncatedError (before: dropped as
// a control of no transfer, the call timed out); a GetMultiResp whose
// PayloadLength (the request's) ends inside a PathRecord gives the whole
// paths and a TruncatedError (before: the same paths, silently).
func TestSATruncatedAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, h := hostileSession(t, nil)
		h.answer = func(req []byte, rh rmpp.Header) [][]byte {
			if mad.IsResponse(req) {
				return nil
			}
			if rmpp.IsActive(req) && rh.Type == rmpp.TypeData && rh.Flags&rmpp.FlagLast != 0 {
				// The GetMulti request: answer once it is whole.
				b := segment(req, 1, rmpp.FlagFirst|rmpp.FlagLast, rh.Data2)
				sa.SetAttributeOffset(b, uint16(sa.PathRecord.Stride))
				return [][]byte{b}
			}
			if rmpp.IsActive(req) {
				return nil
			}
			b := segment(req, 1, 0, 0)
			(&rmpp.Header{Version: rmpp.Version, Flags: rmpp.FlagActive}).Put(b)
			return [][]byte{b}
		}
		recs, err := s.SAGetTable(t.Context(), &sa.NodeRecord, 0, nil)
		var te *engine.TruncatedError
		if !errors.As(err, &te) || !errors.Is(err, engine.ErrTruncated) || len(recs) != 1 || te.Records != 1 {
			t.Fatalf("type-0 GetTable answer: %d records, %v", len(recs), err)
		}
		g := mad.NewGID(0xfe80000000000000, 1)
		paths, err := s.MultiPathRecords(t.Context(), []mad.GID{g, g}, []mad.GID{g, g})
		if !errors.As(err, &te) || len(paths) != 1 || te.Records != 1 {
			t.Fatalf("GetMultiResp cut by its PayloadLength: %d paths, %v", len(paths), err)
		}
		t.Logf("%v", err)
	})
}
