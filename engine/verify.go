package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// Answers that may be damaged. A transport whose Caps().Intact is false
// (the simulator injecting corruption) or says nothing may hand over an
// answer with a byte changed past every CRC. There the Session reads each
// Get until two answers in a row agree, verifyReads at most: an answer
// is only returned when it was given twice, so one damaged answer never
// becomes a node description, a LID or a forwarding table entry. Where
// answers arrive intact (the kernel's ports, ibsim) one read is what the
// agent answered, and the Session sends exactly one request per Get, as
// the C tools do.

// verifyReads bounds the reads of one Get where answers may be damaged.
const verifyReads = 6

// ErrUnverified is wrapped by an *UnverifiedError: a Get whose answers
// never agreed twice in a row where answers may arrive damaged.
var ErrUnverified = errors.New("answers could not be verified")

// UnverifiedError is a Get read Reads times, no two answers in a row
// alike, on a transport whose answers may arrive damaged.
type UnverifiedError struct {
	Class   uint8
	AttrID  uint16
	AttrMod uint32
	Target  Target
	Reads   int
}

func (e *UnverifiedError) Error() string {
	return fmt.Sprintf("%s %s: %d reads, no two in a row alike (answers may be damaged on this fabric)",
		e.Target, attrName(e.Class, e.AttrID, e.AttrMod), e.Reads)
}

// Is matches ErrUnverified.
func (e *UnverifiedError) Is(target error) bool { return target == ErrUnverified }

// Unreadable reports whether err says a read could not be done rather
// than what the fabric answered: no answer after every try
// (fabric.ErrTimeout), answers that could not be verified
// (ErrUnverified). A validation plan reports such a read as "could not be
// read", never as the fabric's fault.
func Unreadable(err error) bool {
	return err != nil && (errors.Is(err, fabric.ErrTimeout) || errors.Is(err, ErrUnverified))
}

// Verifies reports whether the Session reads each Get twice (or more)
// because its transport's answers may arrive damaged.
func (s *Session) Verifies() bool { return s.intact == nil || !s.intact() }

// clone returns a new op with o's request, ready to submit.
func (o *op) clone(s *Session) *op {
	n := s.getOp()
	n.req = o.req
	n.n = o.n
	n.pkt.Addr = o.pkt.Addr
	n.pkt.Agent, n.pkt.Timeout, n.pkt.Retries = o.pkt.Agent, o.pkt.Timeout, o.pkt.Retries
	n.target, n.serial, n.key = o.target, o.serial, o.key
	n.class, n.method, n.attrID, n.attrMod = o.class, o.method, o.attrID, o.attrMod
	return n
}

// sameAnswer reports whether two answers to one request agree: the whole
// MAD but its TID, and what changes between two reads of a healthy agent
// (SMInfo's ActCount).
func sameAnswer(a, b *op) bool {
	x, y := a.resp[:a.rn], b.resp[:b.rn]
	if len(x) != len(y) || len(x) < mad.HeaderSize {
		return false
	}
	if !bytes.Equal(x[:8], y[:8]) {
		return false
	}
	x, y = x[16:], y[16:]
	if (a.class == mad.ClassSubnLID || a.class == mad.ClassSubnDR) && a.attrID == smp.AttrSMInfo {
		// ActCount (bytes 16-19 of the attribute) counts the SM's
		// activity: it moves between two reads.
		off := mad.SMPDataOff - 16 + 16
		if len(x) >= off+4 {
			return bytes.Equal(x[:off], y[:off]) && bytes.Equal(x[off+4:], y[off+4:])
		}
	}
	return bytes.Equal(x, y)
}

// verified runs o's Get until its answers agree, verifyReads at most
// (two more for counters), and returns the op of the answer it vouches
// for (the caller releases it): the second of two equal answers in a
// row; for counters, which move between two reads, the middle one of
// three in a row whose counters do not go backwards (sameCounters), so
// a damaged value would have to fall between two honest reads of it.
func (s *Session) verified(ctx context.Context, o *op, t Target, attrID uint16, attrMod uint32) (*op, error) {
	need, reads := 2, verifyReads
	class := o.class // o is released once read
	counters := class == mad.ClassPerf && movingCounters(attrID) != nil
	if counters {
		need, reads = 3, verifyReads+2
	}
	var got []*op
	release := func() {
		for _, a := range got {
			s.release(a)
		}
	}
	next := o
	for n := 1; ; n++ {
		again := next.clone(s)
		a, err := s.finishOne(ctx, next, t, attrID, attrMod)
		if err != nil {
			s.release(again)
			release()
			return nil, err
		}
		got = append(got, a)
		if len(got) > need {
			s.release(got[0])
			got = got[1:]
		}
		if len(got) == need {
			ok := false
			if counters {
				ok = sameCounters(got[0], got[1], got[2], movingCounters(attrID))
			} else {
				ok = sameAnswer(got[0], got[1])
			}
			if ok {
				keep := got[need-1]
				if counters {
					keep = got[1]
				}
				for _, x := range got {
					if x != keep {
						s.release(x)
					}
				}
				s.release(again)
				return keep, nil
			}
		}
		if n >= reads {
			s.release(again)
			release()
			return nil, &UnverifiedError{Class: class, AttrID: attrID, AttrMod: attrMod, Target: t, Reads: n}
		}
		next = again
	}
}

// movingCounters returns the layout of a PerfMgt attribute made of
// counters, which move between two reads of a healthy port (traffic,
// errors; the MADs that read them), or nil.
func movingCounters(attrID uint16) *mad.Layout {
	switch attrID {
	case perf.AttrPortCounters, perf.AttrPortCountersExtended, perf.AttrPortRcvErrorDetails, perf.AttrPortXmitDiscardDetails:
		return perf.LayoutByID(attrID)
	}
	return nil
}

// sameCounters reports whether three answers in a row agree as counters
// do: the MAD header but the TID equal, PortSelect and CounterSelect
// equal, every other field of l never smaller in a later answer.
func sameCounters(a, b, c *op, l *mad.Layout) bool {
	x, y, z := a.resp[:a.rn], b.resp[:b.rn], c.resp[:c.rn]
	if len(x) != len(y) || len(y) != len(z) || len(x) < mad.SMPDataOff {
		return false
	}
	for _, r := range [][2][]byte{{x, y}, {y, z}} {
		if !bytes.Equal(r[0][:8], r[1][:8]) || !bytes.Equal(r[0][16:mad.SMPDataOff], r[1][16:mad.SMPDataOff]) {
			return false
		}
	}
	dx, dy, dz := x[mad.SMPDataOff:], y[mad.SMPDataOff:], z[mad.SMPDataOff:]
	for _, f := range l.Fields {
		va, vb, vc := f.Get(dx), f.Get(dy), f.Get(dz)
		switch f.Name {
		case "PortSelect", "CounterSelect", "CounterSelect2":
			if va != vb || vb != vc {
				return false
			}
		default:
			if va > vb || vb > vc {
				return false
			}
		}
	}
	return true
}
