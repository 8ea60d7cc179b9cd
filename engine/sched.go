package engine

import (
	"context"
	"fmt"
	"net"
	"sync/atomic"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// The scheduler. An op is one transaction. It waits in its destination's
// queue while another SMP to the same node is outstanding, then in the
// ready queue for a window slot, then is sent and sits in ops until the
// reader goroutine routes its completion (response or timeout record) to
// it. Retries are the transport's: the op is sent once with Timeout and
// Retries and completes exactly once.
//
// Sending happens outside s.mu, by whichever goroutine freed the window
// slot or the destination (a caller, or the reader goroutine completing
// the previous op). The Transport's Send never blocks for long (umad
// write semantics), so the reader goroutine can send.

type opState uint8

const (
	stateNew opState = iota
	stateQueued
	stateSent
	stateDone
)

type op struct {
	s *Session

	// request, set before submit
	pkt     fabric.Packet // Agent, Timeout, Retries, Addr; Data = req[:n] at send
	req     [mad.Size]byte
	n       int
	target  Target
	key     destKey
	serial  bool // at most one outstanding per key
	class   uint8
	method  uint8
	attrID  uint16
	attrMod uint32

	// completion, set by the reader before delivery
	resp   [mad.Size]byte
	rn     int
	status int // transport status: 0 or fabric.StatusTimeout
	// bounced: a timeout whose last try the fabric handed back at once
	// (fabric.Packet.Bounced).
	bounced bool
	raddr   fabric.Addr
	err     error

	// guarded by s.mu
	tid       uint32
	state     opState
	abandoned bool
	next      *op

	refs atomic.Int32  // the consumer's reference, and the sender's while it sends
	done chan struct{} // cap 1: completion signal for a parked synchronous caller
	// fin tells a synchronous caller its op is delivered without a
	// channel operation when it is already (a transport that answers
	// inside Send): finPending, then finDone by deliver, or finParked by
	// a caller about to wait on done, which deliver then signals.
	fin atomic.Uint32
	cb  func(o *op) // asynchronous completion, called on the delivering goroutine
	ctx any         // the async caller's state
}

// opQueue is an intrusive FIFO of ops.
type opQueue struct{ head, tail *op }

func (q *opQueue) push(o *op) {
	o.next = nil
	if q.tail == nil {
		q.head = o
	} else {
		q.tail.next = o
	}
	q.tail = o
}

func (q *opQueue) pop() *op {
	o := q.head
	if o != nil {
		q.head = o.next
		if q.head == nil {
			q.tail = nil
		}
		o.next = nil
	}
	return o
}

func (q *opQueue) each(f func(*op)) {
	for o := q.head; o != nil; {
		next := o.next
		f(o)
		o = next
	}
}

func (s *Session) getOp() *op {
	o := s.pool.Get().(*op)
	o.refs.Store(1)
	return o
}

// release drops one reference; the last one recycles o.
func (s *Session) release(o *op) {
	if o.refs.Add(-1) != 0 {
		return
	}
	o.pkt = fabric.Packet{}
	o.target = Target{}
	o.err, o.cb, o.ctx = nil, nil, nil
	o.state, o.abandoned, o.next = stateNew, false, nil
	o.status, o.rn, o.bounced = 0, 0, false
	o.fin.Store(finPending)
	s.pool.Put(o)
}

// setup fills the fields every op needs; o.req[:o.n] and o.pkt.Addr are
// set.
func (o *op) setup(agent fabric.AgentID, c callOpts, t Target, serial bool) {
	o.pkt.Agent, o.pkt.Timeout, o.pkt.Retries = agent, c.timeout, c.retries
	o.target, o.serial = t, serial
	if serial {
		o.key = t.key()
	}
	b := o.req[:o.n]
	o.class, o.method = mad.MgmtClassOf(b), mad.MethodOf(b)
	o.attrID, o.attrMod = mad.AttrIDOf(b), mad.AttrModOf(b)
}

// result turns the completion into an error: the op's own error, a
// timeout, or (checkStatus) a non-zero MAD status.
func (o *op) result() error {
	if o.err != nil {
		return o.err
	}
	if o.status != 0 {
		tid := uint64(o.tid)
		if o.rn >= mad.HeaderSize {
			tid = mad.TIDOf(o.resp[:o.rn])
		}
		return &TimeoutError{TID: tid, Tries: 1 + o.pkt.Retries, Class: o.class, AttrID: o.attrID, Target: o.target, Bounced: o.bounced}
	}
	return nil
}

// madStatus returns the response's MAD status (a DR SMP's without the D
// bit) as a *StatusError, or nil.
func (o *op) madStatus() error {
	st := mad.StatusOf(o.resp[:o.rn])
	if o.class == mad.ClassSubnDR {
		st &^= mad.StatusDirection
	}
	if st == 0 {
		return nil
	}
	return &StatusError{Class: o.class, Method: o.method, AttrID: o.attrID, AttrMod: o.attrMod, Status: st, Target: o.target}
}

// call submits o and waits for its completion or ctx. On nil the result
// fields are valid and the caller must release o; on error o is no
// longer the caller's.
func (s *Session) call(ctx context.Context, o *op) error {
	if err := ctx.Err(); err != nil {
		s.release(o)
		return err
	}
	s.submit(o)
	// On a transport that answers inside Send (the embedded simulator)
	// the op is already done: one atomic operation says so.
	if !o.fin.CompareAndSwap(finPending, finParked) {
		return nil // finDone
	}
	select {
	case <-o.done:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	if o.state != stateDone {
		o.abandoned = true // the delivering goroutine releases it
		s.mu.Unlock()
		return ctx.Err()
	}
	s.mu.Unlock()
	<-o.done // delivered, or about to be
	return nil
}

// start submits an asynchronous op: o.cb runs once with the completion,
// on the reader goroutine (or the goroutine that failed it), and o is
// released after it returns.
func (s *Session) start(o *op) { s.submit(o) }

func (s *Session) submit(o *op) {
	if s.maxMADs > 0 || o.method == mad.MethodSet {
		err := s.spend(o)
		if err == nil && o.method == mad.MethodSet {
			err = s.gateSet(o)
		}
		if err != nil {
			o.err, o.state = err, stateDone
			s.deliver(o)
			return
		}
	}
	s.mu.Lock()
	if s.closed || s.gone != nil {
		o.err = fmt.Errorf("engine: %w", net.ErrClosed)
		if s.gone != nil {
			o.err = fmt.Errorf("engine: %w", s.gone)
		}
		o.state = stateDone
		s.mu.Unlock()
		s.deliver(o)
		return
	}
	if o.serial {
		if q, _ := s.dests.Get(uint64(o.key)); q != nil {
			o.state = stateQueued
			q.push(o)
			s.mu.Unlock()
			return
		}
		s.dests.Set(uint64(o.key), s.newQueue())
	}
	o.state = stateQueued
	s.ready.push(o)
	var batch [4]*op
	send := s.fillLocked(batch[:0])
	s.mu.Unlock()
	s.sendAll(send)
}

func (s *Session) newQueue() *opQueue {
	if n := len(s.qFree); n > 0 {
		q := s.qFree[n-1]
		s.qFree = s.qFree[:n-1]
		return q
	}
	return new(opQueue)
}

// fillLocked moves ready ops into the window and returns those to send.
// Abandoned ops are dropped on the way. s.mu is held.
func (s *Session) fillLocked(send []*op) []*op {
	for s.inflight < s.window {
		o := s.ready.pop()
		if o == nil {
			break
		}
		if o.abandoned {
			o.state = stateDone
			s.releaseKeyLocked(o)
			s.release(o)
			continue
		}
		tid := s.nextTID
		for {
			tid++
			if _, busy := s.ops.Get(uint64(tid)); tid != 0 && !busy {
				break
			}
		}
		s.nextTID = tid
		o.tid = tid
		mad.SetTID(o.req[:o.n], uint64(tid))
		o.pkt.Data = o.req[:o.n]
		o.state = stateSent
		s.ops.Set(uint64(tid), o)
		s.inflight++
		o.refs.Add(1) // the sender's
		send = append(send, o)
	}
	return send
}

// releaseKeyLocked hands o's destination to the next op waiting for it.
// s.mu is held.
func (s *Session) releaseKeyLocked(o *op) {
	if !o.serial {
		return
	}
	q, _ := s.dests.Get(uint64(o.key))
	if q == nil {
		return
	}
	for {
		next := q.pop()
		if next == nil {
			s.dests.Delete(uint64(o.key))
			*q = opQueue{}
			s.qFree = append(s.qFree, q)
			return
		}
		if next.abandoned {
			next.state = stateDone
			s.release(next)
			continue
		}
		s.ready.push(next)
		return
	}
}

// sendAll sends ops; one whose Send fails completes with the error.
func (s *Session) sendAll(send []*op) {
	for len(send) > 0 {
		o := send[0]
		send = send[1:]
		err := s.tr.Send(context.Background(), &o.pkt)
		if err == nil {
			s.release(o) // the sender's reference
			continue
		}
		s.mu.Lock()
		if cur, _ := s.ops.Get(uint64(o.tid)); cur != o || o.state != stateSent {
			s.mu.Unlock() // completed anyway (Close)
			s.release(o)
			continue
		}
		s.ops.Delete(uint64(o.tid))
		s.inflight--
		o.err = fmt.Errorf("engine: send %s to %s: %w", attrName(o.class, o.attrID, o.attrMod), o.target, err)
		o.state = stateDone
		s.releaseKeyLocked(o)
		more := s.fillLocked(nil)
		s.mu.Unlock()
		s.release(o) // the sender's reference
		s.deliver(o)
		send = append(send, more...)
	}
}

// complete routes a completion from the transport to its op.
func (s *Session) complete(p *fabric.Packet) {
	if len(p.Data) < mad.HeaderSize {
		return
	}
	if p.Status == 0 && !mad.IsResponse(p.Data) {
		if !s.serve(p) { // a request for an agent of Serve (serve.go)
			s.unsolicited(p) // an SA Report (subscribe.go)
		}
		return
	}
	tid := uint32(mad.TIDOf(p.Data))
	s.mu.Lock()
	o, _ := s.ops.Get(uint64(tid))
	if o == nil || o.pkt.Agent != p.Agent || o.state != stateSent {
		s.mu.Unlock()
		s.log.Debug("engine: dropped MAD", "agent", int(p.Agent), "status", p.Status,
			"method", mad.MethodOf(p.Data), "tid", mad.TIDOf(p.Data))
		return
	}
	s.ops.Delete(uint64(tid))
	s.inflight--
	o.rn = copy(o.resp[:], p.Data)
	o.status, o.raddr, o.bounced = p.Status, p.Addr, p.Bounced
	o.state = stateDone
	s.releaseKeyLocked(o)
	var batch [4]*op
	send := s.fillLocked(batch[:0])
	s.mu.Unlock()
	s.deliver(o)
	s.sendAll(send)
}

// deliver hands a completed op to its consumer.
func (s *Session) deliver(o *op) {
	switch {
	case o.cb != nil:
		o.cb(o)
		s.release(o)
	case o.abandoned:
		s.release(o)
	default:
		if o.fin.Swap(finDone) == finParked {
			o.done <- struct{}{}
		}
	}
}

// States of op.fin.
const (
	finPending uint32 = iota
	finDone
	finParked
)
