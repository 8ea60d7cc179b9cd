// Package record writes every MAD a Transport sends and receives to a
// recording, and plays a recording back as a Transport, so a run on one
// fabric can be reproduced elsewhere.
//
// # Format
//
// A recording is JSON Lines: one JSON object per line. The first line is
// the header,
//
//	{"format":"ibscript-record","version":1,"start":"2026-11-22T02:50:00Z","port":{...},"rmpp":false}
//
// with the local port's PortAttr and whether the transport did RMPP
// itself. Every further line is one event, t nanoseconds after start:
//
//	{"t":1200,"op":"register","agent":0,"reg":{"Class":129,...}}
//	{"t":1500,"op":"send","agent":0,"timeout":200000000,"retries":0,"addr":{...},"data":"0181..."}
//	{"t":9100,"op":"recv","agent":0,"status":0,"addr":{...},"data":"0181..."}
//	{"t":9900,"op":"unregister","agent":0}
//
// The header's port is transport 0, the one NewRecorder wraps. Ports
// opened later through the recording Fabric (Recorder.Fabric: the ports of
// umad.open_port, the RDMA CM's) are transports 1, 2, ... in the order
// they were opened: an "open" line gives each one's port and RMPP flag,
// its events carry "tr", and a "close" line ends it:
//
//	{"t":20000,"op":"open","tr":1,"agent":0,"port":{...},"rmpp":false}
//	{"t":20100,"op":"send","tr":1,"agent":0,"addr":{...},"data":"0107..."}
//	{"t":90000,"op":"close","tr":1,"agent":0}
//
// data is the MAD in hex, with every management key zeroed (mad.MaskKeys:
// the M_Key of SMPs and PortInfo, SM_Key, B_Key, CC_Key); the header says
// so with "keys":"masked". A recording never holds a key, and replay
// matches requests with their keys masked the same way. Readers reject
// other formats and versions; a later version adds fields, which older
// readers ignore. Version 2 added the transports after the first (tr, open,
// close); readers take version 1 and 2.
package record

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// Format and Version name the recording format in its header line.
const (
	Format  = "ibscript-record"
	Version = 2
)

// Header is a recording's first line.
type Header struct {
	Format  string          `json:"format"`
	Version int             `json:"version"`
	Start   time.Time       `json:"start"`
	Port    fabric.PortAttr `json:"port"`
	RMPP    bool            `json:"rmpp"` // the transport did RMPP itself
	// Intact: the transport said its answers arrive undamaged
	// (fabric.Caps.Intact), so discovery read each NodeInfo once; the
	// replay says the same, and asks what was recorded.
	Intact bool `json:"intact,omitempty"`
	// NoTimeouts: the fabric timed nothing out itself
	// (fabric.Caps.NoTimeouts, ibsim); the replay says the same.
	NoTimeouts bool `json:"notimeouts,omitempty"`
	// Keys is "masked": key fields were zeroed before writing (every
	// recording this package writes).
	Keys string `json:"keys,omitempty"`
}

// KeysMasked is Header.Keys of a recording whose keys were zeroed.
const KeysMasked = "masked"

// masked is a copy of a MAD with its keys zeroed (mad.MaskKeys).
func masked(d []byte) hexBytes {
	c := append([]byte(nil), d...)
	mad.MaskKeys(c)
	return c
}

// Event is one line after the header.
type Event struct {
	T      int64         `json:"t"`  // nanoseconds after Header.Start
	Op     string        `json:"op"` // register, unregister, send, recv
	Agent  int           `json:"agent"`
	Reg    *fabric.Agent `json:"reg,omitempty"`
	Status int           `json:"status,omitempty"`
	// Bounced: a timeout completion the fabric bounced back rather than
	// one it delivered and nobody answered (fabric.Packet.Bounced).
	Bounced bool         `json:"bounced,omitempty"`
	Timeout int64        `json:"timeout,omitempty"` // ns
	Retries int          `json:"retries,omitempty"`
	Addr    *fabric.Addr `json:"addr,omitempty"`
	Data    hexBytes     `json:"data,omitempty"`
	// Tr is the transport of the event: 0 the header's, n > 0 the n-th
	// opened through the recording Fabric (version 2).
	Tr int `json:"tr,omitempty"`
	// Port, RMPP, Intact and NoTimeouts describe transport Tr on its
	// open line.
	Port       *fabric.PortAttr `json:"port,omitempty"`
	RMPP       bool             `json:"rmpp,omitempty"`
	Intact     bool             `json:"intact,omitempty"`
	NoTimeouts bool             `json:"notimeouts,omitempty"`
}

// Ops of Event.
const (
	OpRegister   = "register"
	OpUnregister = "unregister"
	OpSend       = "send"
	OpRecv       = "recv"
	OpOpen       = "open"  // transport Tr was opened (version 2)
	OpClose      = "close" // transport Tr was closed (version 2)
)

type hexBytes []byte

func (h hexBytes) MarshalText() ([]byte, error) {
	out := make([]byte, hex.EncodedLen(len(h)))
	hex.Encode(out, h)
	return out, nil
}

func (h *hexBytes) UnmarshalText(b []byte) error {
	out := make([]byte, hex.DecodedLen(len(b)))
	if _, err := hex.Decode(out, b); err != nil {
		return err
	}
	*h = out
	return nil
}

// sink is the recording file every Recorder of one recording writes to.
// It is flushed and closed when its last user lets go of it.
type sink struct {
	start time.Time

	mu     sync.Mutex // guards the fields below
	w      *bufio.Writer
	enc    *json.Encoder
	c      io.Closer // closed with the sink; may be nil
	err    error     // the first write error
	closed bool
	refs   int // Recorders and Fabrics still open on the sink
	nextTr int // the number of the next transport opened
}

func (s *sink) log(e Event) {
	e.T = time.Since(s.start).Nanoseconds()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil && !s.closed {
		s.err = s.enc.Encode(e)
	}
}

func (s *sink) hold() {
	s.mu.Lock()
	s.refs++
	s.mu.Unlock()
}

// release drops one user; the last one flushes and closes the recording
// and gets its first error.
func (s *sink) release() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.refs--; s.refs > 0 || s.closed {
		return nil
	}
	s.closed = true
	err := s.err
	if err == nil {
		err = s.w.Flush()
	}
	if s.c != nil {
		err = errors.Join(err, s.c.Close())
		s.c = nil
	}
	s.err = err
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	return nil
}

// Recorder is a Transport that records the traffic of the one it wraps.
// It is safe for concurrent use as the wrapped Transport is.
type Recorder struct {
	tr   fabric.Transport
	s    *sink
	n    int     // the transport's number in the recording
	fab  *Fabric // the recording Fabric that opened it, or nil
	once sync.Once
}

// NewRecorder wraps tr, writing the recording to w (and closing w, when it
// is an io.Closer, once the Recorder and every Fabric made from it are
// closed).
func NewRecorder(tr fabric.Transport, w io.Writer) (*Recorder, error) {
	s := &sink{start: time.Now(), w: bufio.NewWriter(w), refs: 1, nextTr: 1}
	if c, ok := w.(io.Closer); ok {
		s.c = c
	}
	s.enc = json.NewEncoder(s.w)
	h := Header{Format: Format, Version: Version, Start: s.start.UTC(), Port: tr.Port(), Keys: KeysMasked}
	h.RMPP, h.Intact, h.NoTimeouts = tr.Caps().RMPP, isIntact(tr.Caps()), tr.Caps().NoTimeouts
	if err := s.enc.Encode(h); err != nil {
		return nil, fmt.Errorf("record: header: %w", err)
	}
	return &Recorder{tr: tr, s: s}, nil
}

func (r *Recorder) log(e Event) {
	e.Tr = r.n
	r.s.log(e)
}

// Register registers with the wrapped Transport and records it.
func (r *Recorder) Register(ctx context.Context, a fabric.Agent) (fabric.AgentID, error) {
	id, err := r.tr.Register(ctx, a)
	if err == nil {
		r.log(Event{Op: OpRegister, Agent: int(id), Reg: &a})
	}
	return id, err
}

// Unregister unregisters with the wrapped Transport and records it.
func (r *Recorder) Unregister(ctx context.Context, id fabric.AgentID) error {
	err := r.tr.Unregister(ctx, id)
	if err == nil {
		r.log(Event{Op: OpUnregister, Agent: int(id)})
	}
	return err
}

// Send records p and sends it. Once the recording cannot be written, it
// sends nothing more: the error names the recording's failure (a run
// that is recorded is not carried on unrecorded).
func (r *Recorder) Send(ctx context.Context, p *fabric.Packet) error {
	a := p.Addr
	r.log(Event{Op: OpSend, Agent: int(p.Agent), Timeout: int64(p.Timeout), Retries: p.Retries, Addr: &a,
		Data: masked(p.Data)})
	if err := r.Err(); err != nil {
		return err
	}
	return r.tr.Send(ctx, p)
}

// Err is the first error writing the recording (after Close, flushing and
// closing it included), or nil.
func (r *Recorder) Err() error {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if r.s.err != nil {
		return fmt.Errorf("record: %w", r.s.err)
	}
	return nil
}

// Recv receives from the wrapped Transport and records what it got.
func (r *Recorder) Recv(ctx context.Context, p *fabric.Packet) error {
	err := r.tr.Recv(ctx, p)
	if err == nil {
		r.logRecv(p)
	}
	return err
}

func (r *Recorder) logRecv(p *fabric.Packet) {
	a := p.Addr
	r.log(Event{Op: OpRecv, Agent: int(p.Agent), Status: p.Status, Bounced: p.Bounced, Addr: &a,
		Data: masked(p.Data)})
}

// Port is the wrapped Transport's port.
func (r *Recorder) Port() fabric.PortAttr { return r.tr.Port() }

// Caps are the wrapped Transport's: the Recorder changes nothing of how
// the port behaves. A handler set through it records what it is handed
// before passing it on, as Recv does.
func (r *Recorder) Caps() fabric.Caps {
	c := r.tr.Caps()
	if set := c.SetHandler; set != nil {
		c.SetHandler = func(h func(p *fabric.Packet)) {
			if h == nil {
				set(nil)
				return
			}
			set(func(p *fabric.Packet) {
				r.logRecv(p)
				h(p)
			})
		}
	}
	return c
}

// Close closes the wrapped Transport and lets go of the recording, which
// is flushed and closed once every Recorder and Fabric of it are closed;
// it reports the first error of either.
func (r *Recorder) Close() error {
	err := r.tr.Close()
	r.once.Do(func() {
		if r.n > 0 {
			r.log(Event{Op: OpClose})
		}
		if r.fab != nil {
			r.fab.forget(r)
		}
		err = errors.Join(err, r.s.release())
	})
	return err
}

// isIntact is c.Intact's answer, false when the transport does not tell.
func isIntact(c fabric.Caps) bool { return c.Intact != nil && c.Intact() }
