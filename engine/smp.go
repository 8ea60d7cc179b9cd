package engine

import (
	"context"
	"fmt"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// SMP sends one SMP (method Get, Set, ...) for attribute attrID with
// modifier attrMod to t, with data (at most 64 bytes) as the attribute,
// and returns the 64 bytes of attribute data of the response. A response
// with a non-zero status returns its data and a *StatusError. SMPs to one
// destination node are sent one at a time.
func (s *Session) SMP(ctx context.Context, t Target, method uint8, attrID uint16, attrMod uint32, data []byte, opts ...CallOption) ([]byte, error) {
	if len(data) > mad.SMPDataLen {
		return nil, fmt.Errorf("engine: smp to %s: %d bytes of data: %w (at most %d)", t, len(data), fabric.ErrInvalid, mad.SMPDataLen)
	}
	o, err := s.smpCall(ctx, t, method, attrID, attrMod, data, opts)
	if err != nil {
		return nil, err
	}
	return s.copyData(o, smp.Data)
}

// copyData returns a copy of the attribute data (data picks it) of o's
// response and, for a non-zero status, a *StatusError; it releases o.
func (s *Session) copyData(o *op, data func([]byte) []byte) ([]byte, error) {
	defer s.release(o)
	out := append([]byte(nil), data(o.resp[:])...)
	return out, o.madStatus()
}

// smpCall runs one SMP transaction and returns its op with a whole
// response, which the caller releases; or an error, timeouts included.
func (s *Session) smpCall(ctx context.Context, t Target, method uint8, attrID uint16, attrMod uint32, data []byte, opts []CallOption) (*op, error) {
	if t.Via != nil {
		return s.viaCall(ctx, t, method, attrID, attrMod, data, opts)
	}
	t, err := s.resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	o, err := s.smpOp(ctx, t, method, attrID, attrMod, data, s.callOpts(opts))
	if err != nil {
		return nil, err
	}
	return s.finish(ctx, o, t, attrID, attrMod)
}

// finish runs the transaction of o and returns it with a whole
// response, which the caller releases; or an error, timeouts included
// (o released).
//
// Where answers may arrive damaged (Session.Verifies), a Get is read
// again until its answers agree (verified): one damaged answer is never
// returned.
func (s *Session) finish(ctx context.Context, o *op, t Target, attrID uint16, attrMod uint32) (*op, error) {
	if o.method != mad.MethodGet || !s.Verifies() {
		return s.finishOne(ctx, o, t, attrID, attrMod)
	}
	return s.verified(ctx, o, t, attrID, attrMod)
}

// finishOne runs one transaction of finish.
func (s *Session) finishOne(ctx context.Context, o *op, t Target, attrID uint16, attrMod uint32) (*op, error) {
	if err := s.call(ctx, o); err != nil {
		return nil, err
	}
	if err := o.result(); err != nil {
		s.release(o)
		return nil, err
	}
	if o.rn < mad.Size {
		s.release(o)
		return nil, fmt.Errorf("engine: %s %s: response: %w (have %d, need %d)", t, attrName(o.class, attrID, attrMod), mad.ErrTruncated, o.rn, mad.Size)
	}
	return o, nil
}

// smpOp builds an SMP op for a LID or DR target, serialized on its
// destination.
func (s *Session) smpOp(ctx context.Context, t Target, method uint8, attrID uint16, attrMod uint32, data []byte, c callOpts) (*op, error) {
	var (
		path   []uint8
		addr   = fabric.Addr{QPN: 0}
		drSLID = uint16(smp.PermissiveLID)
	)
	if s.roce {
		return nil, s.roceErr(t)
	}
	switch t.Kind {
	case ByLID:
		addr.LID = t.LID
	case ByDR:
		if len(t.Path) == 0 || len(t.Path)-1 > maxHops {
			return nil, fmt.Errorf("engine: target %s: %w", t, ErrBadTarget)
		}
		path = t.Path
		addr.LID = fabric.PermissiveLID
		// A combined route: LID-routed to t.LID with DrSLID the local
		// LID, as libibmad sends it; without a local LID, libibmad's
		// DrSLID is permissive and the SMP goes directed from here.
		if t.LID != 0 {
			if self := s.tr.Port().LID; self != 0 {
				addr.LID, drSLID = t.LID, self
			}
		}
	case ByGID:
		return nil, fmt.Errorf("engine: target %s: SMPs go by LID or directed route, never with a GRH: %w", t, ErrBadTarget)
	default:
		return nil, fmt.Errorf("engine: target %s: %w", t, ErrBadTarget)
	}
	class := mad.ClassSubnLID
	if path != nil {
		class = mad.ClassSubnDR
	}
	agent, err := s.agent(ctx, class, smp.Version)
	if err != nil {
		return nil, err
	}
	o := s.getOp()
	b, err := smp.NewRequest(o.req[:], method, 0, attrID, attrMod, path)
	if err != nil {
		s.release(o)
		return nil, fmt.Errorf("engine: smp to %s: %w", t, err)
	}
	smp.SetMKey(b, c.mkey)
	if path != nil {
		smp.SetDrSLID(b, drSLID)
	}
	copy(smp.Data(b), data)
	o.n = len(b)
	o.pkt.Addr = addr
	o.setup(agent, c, t, true)
	return o, nil
}

// NodeInfo returns t's NodeInfo.
func (s *Session) NodeInfo(ctx context.Context, t Target, opts ...CallOption) (smp.NodeInfo, error) {
	o, err := s.smpCall(ctx, t, mad.MethodGet, smp.AttrNodeInfo, 0, nil, opts)
	return decode[smp.NodeInfo](s, o, err, smp.Data)
}

// NodeDesc returns t's NodeDescription.
func (s *Session) NodeDesc(ctx context.Context, t Target, opts ...CallOption) (smp.NodeDescription, error) {
	o, err := s.smpCall(ctx, t, mad.MethodGet, smp.AttrNodeDescription, 0, nil, opts)
	return decode[smp.NodeDescription](s, o, err, smp.Data)
}

// PortInfo returns the PortInfo of port of t (a switch's port 0 is its
// management port).
func (s *Session) PortInfo(ctx context.Context, t Target, port uint8, opts ...CallOption) (smp.PortInfo, error) {
	o, err := s.smpCall(ctx, t, mad.MethodGet, smp.AttrPortInfo, uint32(port), nil, opts)
	return decode[smp.PortInfo](s, o, err, smp.Data)
}

// SwitchInfo returns t's SwitchInfo.
func (s *Session) SwitchInfo(ctx context.Context, t Target, opts ...CallOption) (smp.SwitchInfo, error) {
	o, err := s.smpCall(ctx, t, mad.MethodGet, smp.AttrSwitchInfo, 0, nil, opts)
	return decode[smp.SwitchInfo](s, o, err, smp.Data)
}

// PKeyTable returns block of the P_Key table of t; on a switch, of port.
func (s *Session) PKeyTable(ctx context.Context, t Target, port uint8, block uint16, opts ...CallOption) (smp.PKeyTable, error) {
	o, err := s.smpCall(ctx, t, mad.MethodGet, smp.AttrPKeyTable, uint32(port)<<16|uint32(block), nil, opts)
	return decode[smp.PKeyTable](s, o, err, smp.Data)
}

// LFTBlock returns block of switch t's linear forwarding table (LIDs
// block*64 .. block*64+63).
func (s *Session) LFTBlock(ctx context.Context, t Target, block uint32, opts ...CallOption) (smp.LinearForwardingTable, error) {
	o, err := s.smpCall(ctx, t, mad.MethodGet, smp.AttrLinearForwardingTable, block, nil, opts)
	return decode[smp.LinearForwardingTable](s, o, err, smp.Data)
}

// SMInfo returns the SMInfo of the subnet manager at t.
func (s *Session) SMInfo(ctx context.Context, t Target, opts ...CallOption) (smp.SMInfo, error) {
	o, err := s.smpCall(ctx, t, mad.MethodGet, smp.AttrSMInfo, 0, nil, opts)
	return decode[smp.SMInfo](s, o, err, smp.Data)
}

// GUIDInfo returns block of the GUID table of t's port (8 GUIDs a block).
func (s *Session) GUIDInfo(ctx context.Context, t Target, block uint32, opts ...CallOption) (smp.GUIDInfo, error) {
	o, err := s.smpCall(ctx, t, mad.MethodGet, smp.AttrGUIDInfo, block, nil, opts)
	return decode[smp.GUIDInfo](s, o, err, smp.Data)
}

// PKeys returns the whole P_Key table of t's port as smpquery pkeys reads
// it: as many entries as the node's NodeInfo PartitionCap, or for a
// switch's external port (port not 0) its SwitchInfo
// PartitionEnforcementCap, one P_KeyTable block of 32 after the other. A
// port past NodeInfo's NumPorts is an error naming it.
func (s *Session) PKeys(ctx context.Context, t Target, port uint8, opts ...CallOption) ([]uint16, error) {
	ni, err := s.NodeInfo(ctx, t, opts...)
	if err != nil {
		return nil, err
	}
	if port > ni.NumPorts {
		return nil, fmt.Errorf("engine: %s P_Key table: port %d past the node's %d ports: %w", t, port, ni.NumPorts, fabric.ErrInvalid)
	}
	n := int(ni.PartitionCap)
	if ni.NodeType == smp.NodeTypeSwitch && port != 0 {
		si, err := s.SwitchInfo(ctx, t, opts...)
		if err != nil {
			return nil, err
		}
		n = int(si.PartitionEnforcementCap)
	}
	keys := make([]uint16, 0, n+31)
	for b := 0; b*32 < n; b++ {
		pt, err := s.PKeyTable(ctx, t, port, uint16(b), opts...)
		if err != nil {
			return nil, fmt.Errorf("engine: %s P_Key table block %d of %d: %w", t, b, (n+31)/32, err)
		}
		keys = append(keys, pt.PKeys[:]...)
	}
	return keys[:n], nil
}

// GUIDs returns the whole GUID table of t's port as smpquery GUIDInfo (guids) reads
// it: as many entries as PortInfo's GUIDCap (the PortInfo of modifier 0:
// a switch's port 0, a CA's arrival port), one GUIDInfo block of 8 after
// the other.
func (s *Session) GUIDs(ctx context.Context, t Target, opts ...CallOption) ([]uint64, error) {
	pi, err := s.PortInfo(ctx, t, 0, opts...)
	if err != nil {
		return nil, err
	}
	n := int(pi.GUIDCap)
	guids := make([]uint64, 0, n+7)
	for b := 0; b*8 < n; b++ {
		gi, err := s.GUIDInfo(ctx, t, uint32(b), opts...)
		if err != nil {
			return nil, fmt.Errorf("engine: %s GUID table block %d of %d: %w", t, b, (n+7)/8, err)
		}
		guids = append(guids, gi.GUIDs[:]...)
	}
	return guids[:n], nil
}

// unmarshaler is the pointer side of an attribute codec.
type unmarshaler[T any] interface {
	*T
	UnmarshalBinary([]byte) error
}

// decode finishes a typed query: the call's error, then the response's
// MAD status, then its attribute data (located by data) decoded as a T.
func decode[T any, P unmarshaler[T]](s *Session, o *op, err error, data func([]byte) []byte) (T, error) {
	var v T
	if err != nil {
		return v, err
	}
	defer s.release(o)
	if err := o.madStatus(); err != nil {
		return v, err
	}
	return v, P(&v).UnmarshalBinary(data(o.resp[:]))
}
