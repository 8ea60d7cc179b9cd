package engine

import (
	"context"
	"fmt"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// attribute is the pointer side of a generated attribute type.
type attribute[T any] interface {
	*T
	mad.Attribute
}

// Get reads from t the attribute whose Go type is T: any SMP attribute of
// package smp (mod is the attribute modifier: a port, a block, ...),
// PerfMgt attribute of package perf (mod is the port, PortSelect) or
// Congestion Control attribute of package cc (mod is the attribute
// modifier; the CC_Key is Options.CCKey or the CCKey option), e.g.
//
//	sl2vl, err := engine.Get[smp.SLtoVLMappingTable](ctx, s, engine.LID(1), 2<<8|3)
//	rcv, err := engine.Get[perf.PortRcvErrorDetails](ctx, s, engine.LID(4), 1)
//	ci, err := engine.Get[cc.CongestionInfo](ctx, s, engine.LID(4), 0)
//
// It is the typed form of Session.SMP and Session.Perf: a response with a
// non-zero status returns a *StatusError.
func Get[T any, P attribute[T]](ctx context.Context, s *Session, t Target, mod uint32, opts ...CallOption) (T, error) {
	var v T
	l := P(&v).AttrLayout()
	switch {
	case smp.LayoutByID(l.ID) == l:
		o, err := s.smpCall(ctx, t, mad.MethodGet, l.ID, mod, nil, opts)
		return decode[T, P](s, o, err, smp.Data)
	case perf.LayoutByID(l.ID) == l:
		if mod > 0xff {
			return v, fmt.Errorf("engine: get %s from %s: port %d: %w", l.Name, t, mod, fabric.ErrInvalid)
		}
		o, err := s.perfCall(ctx, t, mad.MethodGet, l.ID, uint8(mod), nil, opts)
		return decode[T, P](s, o, err, perf.Data)
	case isCC(l):
		o, err := s.ccCall(ctx, t, mad.MethodGet, l.ID, mod, nil, opts)
		return decode[T, P](s, o, err, cc.Data)
	}
	return v, fmt.Errorf("engine: get %s from %s: not an SMP, PerfMgt or Congestion Control attribute: %w", l.Name, t, fabric.ErrInvalid)
}

// Set writes v to t with a Set of its attribute (SMP and Congestion
// Control: mod is the attribute modifier; PerfMgt: the attribute carries
// its PortSelect) and
// returns what the agent answered, decoded as a new value. Sets follow the
// session's safety rules (Options.AllowSet on the kernel backend, the
// audit log).
func Set[T any, P attribute[T]](ctx context.Context, s *Session, t Target, mod uint32, v P, opts ...CallOption) (T, error) {
	var out T
	l := v.AttrLayout()
	data, err := v.AppendBinary(nil)
	if err != nil {
		return out, fmt.Errorf("engine: set %s on %s: %w", l.Name, t, err)
	}
	var resp []byte
	switch {
	case smp.LayoutByID(l.ID) == l:
		resp, err = s.SMP(ctx, t, mad.MethodSet, l.ID, mod, data, opts...)
	case perf.LayoutByID(l.ID) == l:
		resp, err = s.Perf(ctx, t, mad.MethodSet, l.ID, uint8(mod), data, opts...)
	case isCC(l):
		resp, err = s.CC(ctx, t, mad.MethodSet, l.ID, mod, data, opts...)
	default:
		return out, fmt.Errorf("engine: set %s on %s: not an SMP, PerfMgt or Congestion Control attribute: %w", l.Name, t, fabric.ErrInvalid)
	}
	if err != nil {
		return out, err
	}
	return out, P(&out).UnmarshalBinary(resp)
}
