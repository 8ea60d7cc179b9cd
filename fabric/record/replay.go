package record

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net"
	"os"
	"slices"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// maxLine bounds one line of a recording: a 256-byte MAD is 512 hex
// digits, an RMPP message of the kernel's at most some hundred KiB.
const maxLine = 4 << 20

// Recording is a decoded recording.
type Recording struct {
	Header Header
	Events []Event
}

// Read decodes a recording. It checks the header's format and version
// and each event's op; it never panics on what r holds.
func Read(r io.Reader) (*Recording, error) {
	return ReadContext(context.Background(), r)
}

// ReadContext is Read, ended when ctx is done (Ctrl-C, SIGTERM,
// --time-limit): it looks every 1,024 lines, and the error wraps the
// cause.
func ReadContext(ctx context.Context, r io.Reader) (*Recording, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	rec := &Recording{}
	line, header := 0, false
	for sc.Scan() {
		line++
		if line%1024 == 0 {
			if err := context.Cause(ctx); err != nil {
				return nil, fmt.Errorf("record: line %d: read stopped: %w", line, err)
			}
		}
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if !header {
			// The first line that is not blank is the header; what is
			// not one is not a recording (its text is not quoted).
			if err := json.Unmarshal(b, &rec.Header); err != nil || rec.Header.Format == "" {
				return nil, fmt.Errorf("record: line %d: not a recording: want the JSON header line of ibscript --record ({\"format\":%q,...})", line, Format)
			}
			if rec.Header.Format != Format {
				return nil, fmt.Errorf("record: line %d: format %q, want %q", line, rec.Header.Format, Format)
			}
			if rec.Header.Version < 1 || rec.Header.Version > Version {
				return nil, fmt.Errorf("record: line %d: version %d, want 1 to %d", line, rec.Header.Version, Version)
			}
			header = true
			continue
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, fmt.Errorf("record: line %d: %w", line, err)
		}
		switch e.Op {
		case OpRegister:
			if e.Reg == nil {
				return nil, fmt.Errorf("record: line %d: register without reg", line)
			}
		case OpUnregister, OpClose:
		case OpOpen:
			if e.Port == nil {
				return nil, fmt.Errorf("record: line %d: open without port", line)
			}
		case OpSend, OpRecv:
			if e.Addr == nil {
				return nil, fmt.Errorf("record: line %d: %s without addr", line, e.Op)
			}
			if len(e.Data) < mad.HeaderSize {
				// Such an answer is no MAD: replay: waited on it forever.
				return nil, fmt.Errorf("record: line %d: %s of %d bytes, shorter than the %d-byte MAD header", line, e.Op, len(e.Data), mad.HeaderSize)
			}
		default:
			return nil, fmt.Errorf("record: line %d: unknown op %q", line, e.Op)
		}
		if e.Tr < 0 {
			return nil, fmt.Errorf("record: line %d: transport %d", line, e.Tr)
		}
		rec.Events = append(rec.Events, e)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, fmt.Errorf("record: line %d: longer than %d bytes", line+1, maxLine)
		}
		return nil, fmt.Errorf("record: line %d: %w", line+1, err)
	}
	if !header {
		return nil, errors.New("record: empty recording: want the JSON header line of ibscript --record")
	}
	return rec, nil
}

// ReadFile decodes the recording in a file.
//
// It opens path without blocking (a FIFO with no writer reads as empty)
// and refuses a device, a directory or a socket (/dev/zero would be read
// forever), as topo.OpenFile does for every other loader.
func ReadFile(path string) (*Recording, error) {
	return ReadFileContext(context.Background(), path)
}

// ReadFileContext is ReadFile, ended when ctx is done (ReadContext).
func ReadFileContext(ctx context.Context, path string) (*Recording, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	} else if m := st.Mode(); !m.IsRegular() && m&os.ModeNamedPipe == 0 {
		return nil, fmt.Errorf("record: %s: not a regular file (mode %v)", path, m.Type())
	}
	rec, err := ReadContext(ctx, f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err) // FILE: record: line N: ...
	}
	return rec, nil
}

// tidOff is the TID's place in the MAD header.
const tidOff, tidEnd = 8, 16

// key is what replay matches requests by: the destination (LID, QP and
// GID) and the MAD without its TID.
func key(a *fabric.Addr, d []byte) string {
	var b []byte
	b = fmt.Appendf(b, "%d/%d/", a.LID, a.QPN)
	if a.GRH {
		b = append(b, a.GID[:]...)
	}
	if len(d) < tidEnd {
		return string(append(b, d...))
	}
	b = append(b, d[:tidOff]...)
	return string(append(b, d[tidEnd:]...))
}

// lowTID is the part of a TID the kernel keeps (it puts the agent in the
// high 32 bits on the way out), with the agent.
type lowTID struct {
	agent int
	tid   uint32
}

func tidOf(d []byte) (uint32, bool) {
	if len(d) < tidEnd {
		return 0, false
	}
	return uint32(d[12])<<24 | uint32(d[13])<<16 | uint32(d[14])<<8 | uint32(d[15]), true
}

// byTID yields the events whose MAD carries a TID, each with its agent
// and the TID's low 32 bits.
func byTID(events []Event) iter.Seq2[lowTID, Event] {
	return func(yield func(lowTID, Event) bool) {
		for _, e := range events {
			if t, ok := tidOf(e.Data); ok && !yield(lowTID{e.Agent, t}, e) {
				return
			}
		}
	}
}

// Replay is a Transport that plays a recording back: a request sent to it
// is answered with what answered the same request (byte for byte but for
// the TID) in the recording, in the order they were recorded, carrying
// the caller's TID; a request the recording has no answer for times out
// at once. MADs the recording received unsolicited are not replayed. It is
// safe for concurrent use.
type Replay struct {
	hdr Header

	g     drGraph
	canon map[string][]string // DR requests: by node reached, the exact keys of answers

	mu      sync.Mutex // guards the fields below
	answers map[string][][]answer
	agents  int
	queue   []queued // by due time
	closed  bool
	ready   chan struct{} // signalled (buffer 1: one wake-up pending is enough) when queue grows
	done    chan struct{} // closed by Close
}

// NewReplay returns a Transport playing back rec's first transport (the
// header's); ReplayFabric plays the others.
func NewReplay(rec *Recording) *Replay {
	return newReplay(rec.Header, transport(rec.Events, 0))
}

// transport returns the events of transport n.
func transport(events []Event, n int) []Event {
	var out []Event
	for _, e := range events {
		if e.Tr == n {
			out = append(out, e)
		}
	}
	return out
}

func newReplay(hdr Header, events []Event) *Replay {
	rec := &Recording{Header: hdr, Events: events}
	r := &Replay{hdr: rec.Header, answers: map[string][][]answer{}, ready: make(chan struct{}, 1), done: make(chan struct{})}
	type slot struct {
		k string
		i int
		t int64 // the send's time
	}
	last := map[lowTID]slot{}
	// Requests are matched with their keys masked, as the Recorder wrote
	// them (and recordings made before it masked them are masked here).
	for i := range rec.Events {
		mad.MaskKeys(rec.Events[i].Data)
	}
	g := learnDR(rec.Events)
	r.canon, r.g = map[string][]string{}, g
	for lt, e := range byTID(rec.Events) {
		switch e.Op {
		case OpSend:
			k := key(e.Addr, e.Data)
			if ck, ok := g.canonKey(e.Data); ok && len(r.answers[k]) == 0 {
				r.canon[ck] = append(r.canon[ck], k)
			}
			r.answers[k] = append(r.answers[k], nil)
			last[lt] = slot{k, len(r.answers[k]) - 1, e.T}
		case OpRecv:
			s, ok := last[lt]
			if !ok {
				continue // unsolicited
			}
			r.answers[s.k][s.i] = append(r.answers[s.k][s.i], answer{e, time.Duration(max(e.T-s.t, 0))})
		}
	}
	return r
}

// answer is a recorded MAD that answered a send, after latency.
type answer struct {
	Event
	latency time.Duration
}

// queued is an answer due at a time.
type queued struct {
	due time.Time
	p   fabric.Packet
}

// Register hands out agent IDs in order, as the recorded transport did.
func (r *Replay) Register(ctx context.Context, a fabric.Agent) (fabric.AgentID, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return 0, fmt.Errorf("replay: register: %w", fabric.ErrPortClosed)
	}
	id := r.agents
	r.agents++
	return fabric.AgentID(id), nil
}

// Unregister accepts any agent.
func (r *Replay) Unregister(ctx context.Context, id fabric.AgentID) error { return nil }

// Send queues the recorded answers of p, or a timeout.
func (r *Replay) Send(ctx context.Context, p *fabric.Packet) error {
	if len(p.Data) < tidEnd {
		return fmt.Errorf("replay: send %d bytes: %w", len(p.Data), fabric.ErrInvalid)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return fmt.Errorf("replay: send: %w", fabric.ErrPortClosed)
	}
	req := append([]byte(nil), p.Data...)
	mad.MaskKeys(req) // recordings hold requests with their keys zeroed
	k := key(&p.Addr, req)
	now := time.Now()
	var ans []answer
	found := false
	if q := r.answers[k]; len(q) > 0 {
		ans, r.answers[k], found = q[0], q[1:], true
	} else if ck, ok := r.g.canonKey(req); ok {
		// A directed route the recording did not take to a node it
		// reached another way: the answer of that node's SMA.
		for _, k2 := range r.canon[ck] {
			if q := r.answers[k2]; len(q) > 0 {
				ans, r.answers[k2], found = q[0], q[1:], true
				break
			}
		}
		if !found {
			// A NodeInfo probe across a link the recorded sweep probed
			// from its other end only: the switch's NodeInfo, arriving
			// at the port the graph says.
			if a, ok := r.g.switchNodeInfo(req); ok {
				ans, found = []answer{a}, true
			}
		}
	}
	// An answer shorter than a MAD header is dropped by every reader: the
	// request would wait for it forever. It times out instead.
	ans = slices.DeleteFunc(slices.Clone(ans), func(a answer) bool { return len(a.Data) < mad.HeaderSize })
	for _, e := range ans {
		d := append([]byte(nil), e.Data...)
		if len(d) >= tidEnd {
			copy(d[tidOff:tidEnd], p.Data[tidOff:tidEnd])
		}
		r.push(queued{now.Add(e.latency), fabric.Packet{Agent: p.Agent, Status: e.Status, Bounced: e.Bounced, Addr: *e.Addr, Data: d}})
	}
	if (!found || len(ans) == 0) && p.Timeout != 0 {
		r.push(queued{now, fabric.Packet{Agent: p.Agent, Status: fabric.StatusTimeout, Addr: p.Addr,
			Data: append([]byte(nil), p.Data...)}})
	}
	if len(r.queue) > 0 {
		select {
		case r.ready <- struct{}{}:
		default:
		}
	}
	return nil
}

// push inserts q in due order (after equal ones). r.mu is held.
func (r *Replay) push(q queued) {
	i := sort.Search(len(r.queue), func(i int) bool { return r.queue[i].due.After(q.due) })
	r.queue = slices.Insert(r.queue, i, q)
}

// Recv returns the next answer when it is due: as long after its request
// as it came in the recording, so concurrent requests complete in the
// recorded order.
func (r *Replay) Recv(ctx context.Context, p *fabric.Packet) error {
	for {
		r.mu.Lock()
		var wait time.Duration
		if len(r.queue) > 0 {
			wait = time.Until(r.queue[0].due)
		}
		if len(r.queue) > 0 && wait <= 0 {
			q := r.queue[0].p
			r.queue = r.queue[1:]
			more := len(r.queue) > 0
			r.mu.Unlock()
			if more {
				select {
				case r.ready <- struct{}{}:
				default:
				}
			}
			d := append(p.Data[:0], q.Data...)
			*p = q
			p.Data = d
			return nil
		}
		closed, queued := r.closed, len(r.queue) > 0
		r.mu.Unlock()
		if closed {
			return fmt.Errorf("replay: recv: %w", fabric.ErrPortClosed)
		}
		var tm *time.Timer
		var due <-chan time.Time
		if queued {
			tm = time.NewTimer(wait)
			due = tm.C
		}
		select {
		case <-ctx.Done():
		case <-r.ready:
		case <-r.done:
		case <-due:
		}
		if tm != nil {
			tm.Stop()
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// Port is the recorded port.
func (r *Replay) Port() fabric.PortAttr { return r.hdr.Port }

// Caps: RMPP, Intact and NoTimeouts as the recorded Transport had them,
// so a replayed discovery asks what the recorded one asked and a timeout
// reads as it did; nothing else (a replay counts no retransmissions and
// is no production fabric).
func (r *Replay) Caps() fabric.Caps {
	c := fabric.Caps{RMPP: r.hdr.RMPP, NoTimeouts: r.hdr.NoTimeouts}
	if r.hdr.Intact {
		c.Intact = fabric.Always
	}
	return c
}

// Close ends the replay; a blocked Recv returns net.ErrClosed.
func (r *Replay) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		close(r.done)
	}
	return nil
}

// ReplayFabric is the Fabric of a recording: its first port is the
// recorded session's (NewReplay), and Open hands out the ports the
// recording opened later (umad.open_port, the RDMA CM's), each playing its
// own traffic back.
type ReplayFabric struct {
	rec   *Recording
	ports []replayPort // transports 1, 2, ... in recorded order

	mu     sync.Mutex // guards the fields below
	open   []*Replay
	closed bool
}

type replayPort struct {
	hdr    Header
	n      int
	opened bool
}

// NewReplayFabric returns the Fabric of rec.
func NewReplayFabric(rec *Recording) *ReplayFabric {
	f := &ReplayFabric{rec: rec}
	for _, e := range rec.Events {
		if e.Op == OpOpen && e.Port != nil {
			h := rec.Header
			h.Port, h.RMPP, h.Intact, h.NoTimeouts = *e.Port, e.RMPP, e.Intact, e.NoTimeouts
			f.ports = append(f.ports, replayPort{hdr: h, n: e.Tr})
		}
	}
	return f
}

// Ports lists the recorded ports: the session's, then those opened later,
// each once.
func (f *ReplayFabric) Ports(ctx context.Context) ([]fabric.PortAttr, error) {
	out := []fabric.PortAttr{f.rec.Header.Port}
	for _, p := range f.ports {
		if !slices.ContainsFunc(out, func(a fabric.PortAttr) bool {
			return a.CAName == p.hdr.Port.CAName && a.PortNum == p.hdr.Port.PortNum
		}) {
			out = append(out, p.hdr.Port)
		}
	}
	return out, nil
}

// Open plays back the next transport the recording opened on that port
// (ca empty and port 0 match any), in recorded order.
func (f *ReplayFabric) Open(ctx context.Context, ca string, port int) (fabric.Transport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, fmt.Errorf("replay: open: %w", net.ErrClosed)
	}
	for i := range f.ports {
		p := &f.ports[i]
		if p.opened || (ca != "" && ca != p.hdr.Port.CAName) || (port != 0 && port != p.hdr.Port.PortNum) {
			continue
		}
		p.opened = true
		r := newReplay(p.hdr, transport(f.rec.Events, p.n))
		f.open = append(f.open, r)
		return r, nil
	}
	return nil, fabric.NoDevice("replay: open %q port %d: the recording opened no more ports there", ca, port)
}

// Close closes every port opened from f.
func (f *ReplayFabric) Close() error {
	f.mu.Lock()
	open := f.open
	f.open, f.closed = nil, true
	f.mu.Unlock()
	var errs []error
	for _, r := range open {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}
