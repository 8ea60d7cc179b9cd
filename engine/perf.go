package engine

import (
	"context"
	"fmt"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// qp1QKey is the well-known Q_Key of QP1.
const qp1QKey = 0x80010000

// Perf sends one PerfMgt MAD (method Get, Set, ...) for attribute attrID
// with PortSelect port to the PMA of t and returns the 192 bytes of
// attribute data of the response. data, when not nil, is the whole
// attribute as encoded (PortSelect included) and replaces the one built
// from port. PerfMgt is LID-routed: a DR target is asked for its LID
// first, a GUID target takes it from discovery. A response with a
// non-zero status returns its data and a *StatusError.
func (s *Session) Perf(ctx context.Context, t Target, method uint8, attrID uint16, port uint8, data []byte, opts ...CallOption) ([]byte, error) {
	if len(data) > mad.Size-mad.SMPDataOff {
		return nil, fmt.Errorf("engine: perf to %s: %d bytes of data: %w", t, len(data), fabric.ErrInvalid)
	}
	o, err := s.perfCall(ctx, t, method, attrID, port, data, opts)
	if err != nil {
		return nil, err
	}
	defer s.release(o)
	out := append([]byte(nil), perf.Data(o.resp[:])...)
	return out, o.madStatus()
}

func (s *Session) perfCall(ctx context.Context, t Target, method uint8, attrID uint16, port uint8, data []byte, opts []CallOption) (*op, error) {
	c := s.callOpts(opts)
	lt, err := s.lidOf(ctx, t)
	if err != nil {
		return nil, err
	}
	agent, err := s.agent(ctx, mad.ClassPerf, perf.Version)
	if err != nil {
		return nil, err
	}
	o := s.getOp()
	b, err := perf.NewRequest(o.req[:], method, 0, attrID, port)
	if err != nil {
		s.release(o)
		return nil, fmt.Errorf("engine: perf to %s: %w", t, err)
	}
	if data != nil {
		d := perf.Data(b)
		copy(d, data)
		clear(d[len(data):])
	}
	o.n = len(b)
	o.pkt.Addr = fabric.Addr{LID: lt.LID, QPN: 1, QKey: qp1QKey}
	o.setup(agent, c, t, false)
	if err := s.call(ctx, o); err != nil {
		return nil, err
	}
	if err := o.result(); err != nil {
		s.release(o)
		return nil, err
	}
	if o.rn < mad.Size {
		s.release(o)
		return nil, fmt.Errorf("engine: %s %s: response: %w (have %d, need %d)", t, attrName(mad.ClassPerf, attrID, 0), mad.ErrTruncated, o.rn, mad.Size)
	}
	return o, nil
}

// lidOf returns a LID target for t: as is, from the last discovery
// (GUID), or by asking the node its LID (DR).
func (s *Session) lidOf(ctx context.Context, t Target) (Target, error) {
	switch t.Kind {
	case ByLID:
		return t, nil
	case ByGUID:
		if _, err := s.resolve(ctx, t); err != nil {
			return t, err
		}
		if d := s.LastDiscovery(); d != nil {
			if lid := d.lidOf(t.GUID); lid != 0 {
				return LID(lid), nil
			}
		}
		return t, fmt.Errorf("engine: %s has no LID: %w", t, ErrNotFound)
	case ByDR:
		ni, err := s.NodeInfo(ctx, t)
		if err != nil {
			return t, err
		}
		port := ni.LocalPortNum
		if ni.NodeType == smp.NodeTypeSwitch {
			port = 0
		}
		pi, err := s.PortInfo(ctx, t, port)
		if err != nil {
			return t, err
		}
		if pi.LID == 0 {
			return t, fmt.Errorf("engine: %s has no LID (unconfigured port): %w", t, ErrNotFound)
		}
		return LID(pi.LID), nil
	}
	return t, fmt.Errorf("engine: target %s: %w", t, ErrBadTarget)
}

// lidOf returns the LID of the node or port with the given GUID.
func (d *Discovery) lidOf(guid uint64) uint16 {
	for _, n := range d.Fabric.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if p.GUID == guid || n.GUID == guid {
				if n.Type == topo.Switch {
					return n.Ports[0].LID
				}
				if p.LID != 0 {
					return p.LID
				}
			}
		}
	}
	return 0
}

// PortCounters returns the PortCounters of port of t's PMA.
func (s *Session) PortCounters(ctx context.Context, t Target, port uint8, opts ...CallOption) (perf.PortCounters, error) {
	o, err := s.perfCall(ctx, t, mad.MethodGet, perf.AttrPortCounters, port, nil, opts)
	return decode[perf.PortCounters](s, o, err, perf.Data)
}

// PortCountersExtended returns the PortCountersExtended of port of t's
// PMA.
func (s *Session) PortCountersExtended(ctx context.Context, t Target, port uint8, opts ...CallOption) (perf.PortCountersExtended, error) {
	o, err := s.perfCall(ctx, t, mad.MethodGet, perf.AttrPortCountersExtended, port, nil, opts)
	return decode[perf.PortCountersExtended](s, o, err, perf.Data)
}
