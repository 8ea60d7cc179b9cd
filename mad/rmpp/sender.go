package rmpp

import (
	"fmt"
	"time"

	"github.com/ibscript/ibscript/mad"
)

// AbortError ends a transfer that did not complete: Status is the RMPP
// status of the STOP or ABORT that ended it (0 for a local timeout without
// one), Remote says whether the peer sent it.
type AbortError struct {
	Type   Type // TypeStop or TypeAbort
	Status uint8
	Remote bool
	Reason string
}

func (e *AbortError) Error() string {
	who := "sent"
	if e.Remote {
		who = "received"
	}
	s := fmt.Sprintf("rmpp: %s %s %d (%s)", who, e.Type, e.Status, StatusText(e.Status))
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Defaults (rmpp.md section 5 and 6, Linux values).
const (
	DefaultAckTimeout   = 2 * time.Second
	DefaultWindow       = 64
	DefaultTotalTimeout = 40 * time.Second
	DefaultLinger       = 10 * time.Second
)

// Output is what a machine wants done after an event.
type Output struct {
	// From..To are the DATA segments to transmit, in order (a Sender's
	// Segment builds them); none when From is 0.
	From, To int
	// Ack asks for an ACK of the receiver's current state (Receiver.Ack).
	Ack bool
	// Control is a STOP or ABORT to transmit with status ControlStatus
	// (built by Control); 0 for none.
	Control       Type
	ControlStatus uint8
	// Timer is when to Tick the machine next; zero for no timer.
	Timer time.Time
	// Complete is set once, when a Receiver's message is whole.
	Complete bool
	// Done says the machine is finished and may be forgotten: a Sender's
	// transfer was acknowledged or ended (Err), a Receiver lingered or
	// ended.
	Done bool
	Err  error
	// SwitchWindow is set when a completed Receiver gets the requester's
	// direction-switch ACK (SegmentNumber 0): the window it grants for
	// the response (section 7).
	SwitchWindow int
}

// SenderConfig tunes a Sender; the zero value is Linux's behaviour.
type SenderConfig struct {
	H        int           // class data offset; 0 takes DataOffset of the message's class
	Window   int           // initial NewWindowLast; 0 means 1 (a direction switch grants another)
	Timeout  time.Duration // ACK wait per window; 0 means DefaultAckTimeout
	Retries  int           // retransmissions of a window before giving up
	RespTime uint8         // RRespTime in DATA segments (Linux sends 0)
}

type senderState uint8

const (
	sIdle senderState = iota
	sWaiting
	sDone
)

// Sender sends one message as RMPP DATA segments (rmpp.md section 4). The
// message is a whole MAD buffer: common header, RMPP header (ignored),
// class header and all the class data, as umad_send takes it. Sender
// keeps msg and reads it until Done; it is owned by one goroutine.
type Sender struct {
	msg      []byte
	g        Geometry
	n        int
	first    uint32 // PayloadLength of segment 1
	last     uint32 // PayloadLength of segment N
	respTime uint8

	segNum, lastAck, newWin int
	retries, retriesLeft    int
	timeout                 time.Duration
	deadline                time.Time
	state                   senderState
	err                     error
}

// NewSender prepares the transfer of msg. msg must hold at least the
// class header (H bytes).
func NewSender(msg []byte, cfg SenderConfig) (*Sender, error) {
	if len(msg) < HeaderEnd {
		return nil, fmt.Errorf("rmpp: send: %w (have %d, need %d)", mad.ErrTruncated, len(msg), HeaderEnd)
	}
	h := cfg.H
	if h == 0 {
		h = DataOffset(mad.MgmtClassOf(msg))
	}
	if len(msg) < h {
		return nil, fmt.Errorf("rmpp: send: %w (have %d, need the %d-byte class header)", mad.ErrTruncated, len(msg), h)
	}
	s := &Sender{msg: msg, g: Geometry{H: h}, respTime: cfg.RespTime, retries: max(cfg.Retries, 0)}
	d := len(msg) - h
	s.n = s.g.Segments(d)
	f, l := s.g.PayloadLength(d)
	s.first, s.last = uint32(f), uint32(l)
	s.newWin = max(cfg.Window, 1)
	s.timeout = cfg.Timeout
	if s.timeout <= 0 {
		s.timeout = DefaultAckTimeout
	}
	s.retriesLeft = s.retries
	return s, nil
}

// Segments is N, the number of DATA segments.
func (s *Sender) Segments() int { return s.n }

// Err is why the transfer ended, nil while it runs or after success.
func (s *Sender) Err() error { return s.err }

// Done reports whether the transfer ended.
func (s *Sender) Done() bool { return s.state == sDone }

// Deadline is when the Sender wants its next Tick: the ACK timer while
// it waits, zero otherwise.
func (s *Sender) Deadline() time.Time {
	if s.state != sWaiting {
		return time.Time{}
	}
	return s.deadline
}

// Start sends the first window.
func (s *Sender) Start(now time.Time) Output {
	if s.state != sIdle {
		return Output{}
	}
	s.state = sWaiting
	to := min(s.newWin, s.n)
	s.segNum = to
	s.deadline = now.Add(s.timeout)
	return Output{From: 1, To: to, Timer: s.deadline}
}

func (s *Sender) abort(status uint8, sendIt bool, remote Type, reason string) Output {
	s.state = sDone
	o := Output{Done: true}
	if remote != 0 {
		s.err = &AbortError{Type: remote, Status: status, Remote: true, Reason: reason}
		if sendIt {
			o.Control, o.ControlStatus = TypeAbort, StatusBadStatus
		}
	} else {
		s.err = &AbortError{Type: TypeAbort, Status: status, Reason: reason}
		o.Control, o.ControlStatus = TypeAbort, status
	}
	o.Err = s.err
	return o
}

// Handle processes an ACK, STOP or ABORT for this transfer (h decoded from
// the received MAD).
func (s *Sender) Handle(h *Header, now time.Time) Output {
	if s.state != sWaiting {
		return Output{}
	}
	if h.Version != Version {
		return s.abort(StatusUnV, true, 0, fmt.Sprintf("RMPPVersion %d", h.Version))
	}
	switch h.Type {
	case TypeStop:
		if h.Status != StatusResX {
			return s.abort(h.Status, true, TypeStop, "STOP with a status other than 1")
		}
		return s.abort(h.Status, false, TypeStop, "receiver stopped the transfer")
	case TypeAbort:
		if h.Status < StatusT2L || h.Status > StatusUnspec {
			return s.abort(h.Status, true, TypeAbort, "ABORT status outside 118..127")
		}
		return s.abort(h.Status, false, TypeAbort, "receiver aborted the transfer")
	case TypeData:
		return Output{Timer: s.deadline}
	case TypeAck:
	default:
		return s.abort(StatusBadType, false, 0, fmt.Sprintf("RMPPType %d", h.Type))
	}
	seg, nwl := int(h.Data1), int(h.Data2)
	switch {
	case h.Status != 0:
		return s.abort(StatusBadStatus, false, 0, fmt.Sprintf("ACK with status %d", h.Status))
	case nwl < seg:
		return s.abort(StatusW2S, false, 0, fmt.Sprintf("ACK of segment %d with NewWindowLast %d", seg, nwl))
	case seg > s.n || seg > s.newWin:
		return s.abort(StatusS2B, false, 0, fmt.Sprintf("ACK of segment %d of %d, window %d", seg, s.n, s.newWin))
	case nwl < s.newWin || seg < s.lastAck:
		return Output{Timer: s.deadline} // stale
	}
	advanced := seg > s.lastAck
	if advanced {
		s.lastAck = seg
		s.retriesLeft = s.retries
	}
	s.newWin = nwl
	if s.lastAck == s.n {
		s.state = sDone
		return Output{Done: true}
	}
	o := Output{}
	if s.segNum < s.newWin && s.segNum < s.n {
		o.From, o.To = s.segNum+1, min(s.newWin, s.n)
		s.segNum = o.To
		advanced = true
	}
	if advanced {
		s.deadline = now.Add(s.timeout)
	}
	o.Timer = s.deadline
	return o
}

// Tick handles the ACK timer: before the deadline it does nothing; after
// it, it resends the unacknowledged part of the window (go-back-N) or,
// with no retries left, ends the transfer with ABORT(126) as IBA says
// (Linux sends no ABORT).
func (s *Sender) Tick(now time.Time) Output {
	if s.state != sWaiting {
		return Output{}
	}
	if now.Before(s.deadline) {
		return Output{Timer: s.deadline}
	}
	if s.retriesLeft == 0 {
		return s.abort(StatusTMR, false, 0, fmt.Sprintf("no ACK after %d tries (last ACK %d of %d)", s.retries+1, s.lastAck, s.n))
	}
	s.retriesLeft--
	s.deadline = now.Add(s.timeout)
	return Output{From: s.lastAck + 1, To: s.segNum, Timer: s.deadline}
}

// Each calls fn for every segment number o asks to transmit.
func (o *Output) Each(fn func(k int)) {
	if o.From == 0 {
		return
	}
	for k := o.From; k <= o.To; k++ {
		fn(k)
	}
}

// Segment appends DATA segment k (1..N) to dst: a 256-byte MAD with the
// message's common and class headers, the RMPP header of segment k and
// the k-th slice of class data, zero padded.
func (s *Sender) Segment(dst []byte, k int) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, mad.Size)...)
	b := dst[n:]
	copy(b, s.msg[:s.g.H])
	h := Header{Version: Version, Type: TypeData, RespTime: s.respTime, Flags: FlagActive, Data1: uint32(k)}
	if k == 1 {
		h.Flags |= FlagFirst
		h.Data2 = s.first
	}
	if k == s.n {
		h.Flags |= FlagLast
		h.Data2 = s.last
	}
	h.Put(b)
	S := s.g.S()
	lo := s.g.H + (k-1)*S
	if lo < len(s.msg) {
		copy(b[s.g.H:], s.msg[lo:min(lo+S, len(s.msg))])
	}
	return dst
}

// Control appends a STOP or ABORT with status st for this transfer to dst,
// built from the message's own headers.
func (s *Sender) Control(dst []byte, t Type, st uint8) []byte {
	return appendControl(dst, s.msg[:s.g.H], false, t, st, 0, 0, 0)
}

// appendControl appends a 256-byte ACK, STOP or ABORT made from hdr (the
// common and class headers of a DATA segment), flipping the method's R
// bit when flip is set.
func appendControl(dst, hdr []byte, flip bool, t Type, st uint8, respTime uint8, d1, d2 uint32) []byte {
	n := len(dst)
	dst = append(dst, make([]byte, mad.Size)...)
	b := dst[n:]
	copy(b, hdr)
	if flip {
		b[3] ^= mad.MethodResp
	}
	h := Header{Version: Version, Type: t, RespTime: respTime, Flags: FlagActive, Status: st, Data1: d1, Data2: d2}
	h.Put(b)
	return dst
}

// AppendSwitchAck appends the requester's direction-switch ACK of a
// double-sided transfer (rmpp.md section 7): the request's headers (hdr,
// at least 36 bytes), SegmentNumber 0 and NewWindowLast window.
func AppendSwitchAck(dst, hdr []byte, window int) []byte {
	return appendControl(dst, hdr[:HeaderEnd], false, TypeAck, 0, 0, 0, uint32(window))
}
