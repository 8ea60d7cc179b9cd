package rmpp

import (
	"fmt"
	"time"

	"github.com/ibscript/ibscript/mad"
)

// ReceiverConfig tunes a Receiver; the zero value is Linux's behaviour.
type ReceiverConfig struct {
	H            int           // class data offset; 0 takes DataOffset of the first segment's class
	Window       int           // W, segments granted per ACK; 0 means DefaultWindow (64)
	TotalTimeout time.Duration // whole-transfer timer; 0 means DefaultTotalTimeout (40 s)
	Linger       time.Duration // how long a completed transfer absorbs duplicates; 0 means DefaultLinger
	MaxLength    int           // largest message accepted (bytes); beyond it the receiver sends STOP(1); 0: no limit
}

// firstReserve is the most a First segment's PayloadLength makes a
// Receiver reserve before the data arrives.
const firstReserve = 64 << 10

type recvState uint8

const (
	rIdle recvState = iota
	rActive
	rComplete
	rDone
)

// Receiver reassembles one RMPP transfer (rmpp.md section 5). A driver
// keys receivers by (TID, source LID and QP, class, version, method) and
// feeds each the DATA segments of its key. Owned by one goroutine.
type Receiver struct {
	cfg ReceiverConfig
	g   Geometry

	msg      []byte // segment 1 whole, then the data part of each later segment in order
	pending  map[int][]byte
	hdr      [HeaderEnd]byte // headers for ACKs: the last DATA's common and RMPP header
	classHdr []byte          // msg[HeaderEnd:H]
	respTime uint8

	segNum, newWin int
	n              int    // segment count, once the Last segment was seen
	lastPL         uint32 // PayloadLength of the Last segment
	claim          int    // the message length the First segment announced (capped by MaxLength)
	state          recvState
	deadline       time.Time
	err            error
}

// NewReceiver returns a receiver waiting for segment 1.
func NewReceiver(cfg ReceiverConfig) *Receiver {
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.TotalTimeout <= 0 {
		cfg.TotalTimeout = DefaultTotalTimeout
	}
	if cfg.Linger <= 0 {
		cfg.Linger = DefaultLinger
	}
	return &Receiver{cfg: cfg}
}

// Err is why the transfer ended without completing.
func (r *Receiver) Err() error { return r.err }

// Message returns the reassembled message once Complete was reported: the
// first segment's 256 bytes (its RMPP header as received: Active, First,
// SegmentNumber 1, the total PayloadLength) followed by the data part of
// segments 2..N, cut to the Linux length H + N*S - pad. It aliases the
// receiver's buffer.
func (r *Receiver) Message() []byte {
	if r.state != rComplete {
		return nil
	}
	return r.msg[:min(len(r.msg), r.g.MessageLength(r.n, r.lastPL))]
}

// TakeMessage is Message without the aliasing: the receiver gives up its
// buffer to the caller (later calls return nil; ACKs still work).
func (r *Receiver) TakeMessage() []byte {
	m := r.Message()
	if m != nil {
		r.classHdr = append([]byte(nil), r.classHdr...)
		r.msg = nil
	}
	return m
}

// SegmentNumber and NewWindowLast are what the next ACK carries.
func (r *Receiver) SegmentNumber() int { return r.segNum }

// NewWindowLast is the last segment the receiver accepts now.
func (r *Receiver) NewWindowLast() int { return r.newWin }

// Ack appends an ACK of the current state to dst: the DATA packets'
// headers with the method's R bit flipped, SegmentNumber and
// NewWindowLast, RRespTime echoed.
func (r *Receiver) Ack(dst []byte) []byte {
	return appendControl(dst, r.header(), true, TypeAck, 0, r.respTime, uint32(r.segNum), uint32(r.newWin))
}

// Control appends a STOP or ABORT with status st, addressed like an ACK.
func (r *Receiver) Control(dst []byte, t Type, st uint8) []byte {
	return appendControl(dst, r.header(), true, t, st, 0, 0, 0)
}

func (r *Receiver) header() []byte {
	if r.classHdr == nil {
		return r.hdr[:]
	}
	b := make([]byte, 0, r.g.H)
	b = append(b, r.hdr[:]...)
	return append(b, r.classHdr...)
}

func (r *Receiver) fail(t Type, st uint8, reason string) Output {
	r.state = rDone
	r.err = &AbortError{Type: t, Status: st, Reason: reason}
	r.msg, r.pending = nil, nil
	return Output{Control: t, ControlStatus: st, Done: true, Err: r.err}
}

// Handle processes one received MAD of the transfer (256 bytes, RMPP
// Active).
func (r *Receiver) Handle(seg []byte, now time.Time) Output {
	var h Header
	if err := h.UnmarshalBinary(seg); err != nil || len(seg) < mad.Size {
		return Output{Timer: r.deadline}
	}
	if r.state == rIdle {
		copy(r.hdr[:], seg[:HeaderEnd])
	}
	switch {
	case r.state == rDone:
		return Output{Done: true}
	case h.Version != Version:
		return r.reject(StatusUnV, fmt.Sprintf("RMPPVersion %d", h.Version))
	}
	switch h.Type {
	case TypeData:
	case TypeAck:
		if r.state == rComplete && h.Data1 == 0 {
			return Output{Timer: r.deadline, SwitchWindow: max(int(h.Data2), 1)}
		}
		return Output{Timer: r.deadline}
	case TypeStop, TypeAbort:
		if r.state == rActive || r.state == rIdle {
			r.state = rDone
			r.msg, r.pending = nil, nil
			r.err = &AbortError{Type: h.Type, Status: h.Status, Remote: true, Reason: "sender ended the transfer"}
			return Output{Done: true, Err: r.err}
		}
		return Output{Timer: r.deadline}
	default:
		return r.reject(StatusBadType, fmt.Sprintf("RMPPType %d", h.Type))
	}
	if h.Status != 0 {
		return r.reject(StatusBadStatus, fmt.Sprintf("DATA with status %d", h.Status))
	}
	k := int(h.Data1)
	first := h.Flags&FlagFirst != 0
	r.respTime = h.RespTime
	switch r.state {
	case rComplete:
		return Output{Ack: true, Timer: r.deadline}
	case rIdle:
		return r.firstSegment(seg, h, k, first, now)
	}
	return r.nextSegment(seg, h, k, first, now)
}

// firstSegment handles DATA segment k in rIdle: segment 1 (First) starts
// the message, sized by what its PayloadLength claims.
func (r *Receiver) firstSegment(seg []byte, h Header, k int, first bool, now time.Time) Output {
	if k == 1 != first {
		return r.reject(StatusBadSeg, fmt.Sprintf("segment %d with First %v", k, first))
	}
	if k != 1 {
		r.state = rDone
		return Output{Done: true}
	}
	r.g = Geometry{H: r.cfg.H}
	if r.g.H == 0 {
		r.g.H = DataOffset(mad.MgmtClassOf(seg))
	}
	// The First segment's PayloadLength (D + N*C) is a claim of the
	// peer's: it reserves at most firstReserve bytes, and the buffer
	// grows with the segments that really arrive.
	hint := mad.Size
	if h.Flags&FlagLast == 0 {
		r.claim = r.g.H + int(h.Data2)
		if r.cfg.MaxLength > 0 {
			r.claim = min(r.claim, r.cfg.MaxLength)
		}
		hint = max(min(r.claim, firstReserve), mad.Size)
	}
	r.msg = append(make([]byte, 0, hint), seg[:mad.Size]...)
	r.classHdr = r.msg[HeaderEnd:r.g.H]
	r.state = rActive
	r.segNum, r.newWin = 1, 1
	r.deadline = now.Add(r.cfg.TotalTimeout)
	if h.Flags&FlagLast != 0 {
		r.n, r.lastPL = 1, h.Data2
	}
	return r.advance(now)
}

// nextSegment handles DATA segment k in rActive: in order it is appended
// (with the segments held for it), ahead within the window it is held,
// behind it is acknowledged again.
func (r *Receiver) nextSegment(seg []byte, h Header, k int, first bool, now time.Time) Output {
	if first && k != 1 {
		return r.reject(StatusBadSeg, fmt.Sprintf("segment %d with First", k))
	}
	switch {
	case k <= r.segNum:
		return Output{Ack: true, Timer: r.deadline}
	case k > r.newWin:
		return Output{Timer: r.deadline}
	}
	if h.Flags&FlagLast != 0 {
		r.n, r.lastPL = k, h.Data2
	}
	if k != r.segNum+1 {
		if r.pending == nil {
			r.pending = make(map[int][]byte)
		}
		if _, dup := r.pending[k]; !dup {
			r.pending[k] = append([]byte(nil), seg[r.g.H:mad.Size]...)
		}
		return Output{Timer: r.deadline}
	}
	if !r.appendData(seg[r.g.H:mad.Size]) {
		return r.stop()
	}
	r.segNum = k
	for {
		d, ok := r.pending[r.segNum+1]
		if !ok {
			break
		}
		delete(r.pending, r.segNum+1)
		if !r.appendData(d) {
			return r.stop()
		}
		r.segNum++
	}
	return r.advance(now)
}

// Buffered is the memory the transfer holds: the reassembly buffer's
// capacity and the segments held out of order.
func (r *Receiver) Buffered() int {
	return cap(r.msg) + len(r.pending)*(mad.Size-r.g.H)
}

// Active reports whether the transfer started and is still reassembling.
func (r *Receiver) Active() bool { return r.state == rActive }

// End ends a transfer that has not completed from the receiver's side:
// the Output asks for a STOP or ABORT of status st (send it with Control)
// and reports Done with an *AbortError carrying reason. A driver uses it
// when it gives up on a transfer (memory limits, its request timed out).
// A transfer that completed or ended already is only forgotten.
func (r *Receiver) End(t Type, st uint8, reason string) Output {
	if r.state != rActive {
		r.state = rDone
		r.msg, r.pending = nil, nil
		return Output{Done: true}
	}
	return r.fail(t, st, reason)
}

func (r *Receiver) appendData(d []byte) bool {
	if r.cfg.MaxLength > 0 && len(r.msg)+len(d) > r.cfg.MaxLength {
		return false
	}
	if n := len(r.msg) + len(d); n > cap(r.msg) {
		// Grow fourfold, but not past the announced length when
		// that is enough: an honest PayloadLength costs a few copies,
		// a false one at most four times what really arrived.
		c := max(4*cap(r.msg), n)
		if r.claim >= n {
			c = min(c, r.claim)
		}
		r.msg = append(make([]byte, 0, c), r.msg...)
		r.classHdr = r.msg[HeaderEnd:r.g.H]
	}
	r.msg = append(r.msg, d...)
	return true
}

func (r *Receiver) stop() Output {
	o := r.fail(TypeStop, StatusResX, fmt.Sprintf("message longer than %d bytes", r.cfg.MaxLength))
	return o
}

// reject answers a bad segment with ABORT(st); an active transfer ends.
func (r *Receiver) reject(st uint8, reason string) Output {
	return r.fail(TypeAbort, st, reason)
}

// advance acknowledges after in-order progress.
func (r *Receiver) advance(now time.Time) Output {
	if r.n != 0 && r.segNum == r.n {
		r.state = rComplete
		r.pending = nil
		r.deadline = now.Add(r.cfg.Linger)
		return Output{Ack: true, Complete: true, Timer: r.deadline}
	}
	if r.segNum == r.newWin {
		r.newWin += r.cfg.Window
		return Output{Ack: true, Timer: r.deadline}
	}
	return Output{Timer: r.deadline}
}

// Tick handles the receiver's timers: an active transfer past the total
// timer ends with ABORT(118) (the sender vanished or stalled); a completed
// one is Done after its linger time.
func (r *Receiver) Tick(now time.Time) Output {
	switch {
	case r.state == rDone:
		return Output{Done: true}
	case r.state == rIdle || now.Before(r.deadline):
		return Output{Timer: r.deadline}
	case r.state == rComplete:
		r.state = rDone
		r.msg = nil
		return Output{Done: true}
	}
	return r.fail(TypeAbort, StatusT2L, fmt.Sprintf("segment %d of the transfer not received within %v", r.segNum+1, r.cfg.TotalTimeout))
}
