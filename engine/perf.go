package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
	return s.copyData(o, perf.Data)
}

func (s *Session) perfCall(ctx context.Context, t Target, method uint8, attrID uint16, port uint8, data []byte, opts []CallOption) (*op, error) {
	return s.gmpCall(ctx, t, mad.ClassPerf, perf.Version, attrID, 0, opts, func(buf []byte, _ callOpts) ([]byte, error) {
		b, err := perf.NewRequest(buf, method, 0, attrID, port)
		if err != nil {
			return nil, fmt.Errorf("engine: perf to %s: %w", t, err)
		}
		if data != nil {
			d := perf.Data(b)
			copy(d, data)
			clear(d[len(data):])
		}
		return b, nil
	})
}

// gmpCall runs one transaction of a GMP class (PerfMgt, Congestion
// Control) with QP1 of t, LID-routed (lidOf): build writes the request
// into the op's buffer. It returns the op with a whole response, which the
// caller releases, or an error.
func (s *Session) gmpCall(ctx context.Context, t Target, class, version uint8, attrID uint16, mod uint32, opts []CallOption,
	build func(buf []byte, c callOpts) ([]byte, error)) (*op, error) {
	c := s.callOpts(opts)
	lt, err := s.lidOf(ctx, t)
	if err != nil {
		return nil, err
	}
	agent, err := s.agent(ctx, class, version)
	if err != nil {
		return nil, err
	}
	o := s.getOp()
	b, err := build(o.req[:], c)
	if err != nil {
		s.release(o)
		return nil, err
	}
	o.n = len(b)
	o.pkt.Addr = s.gmpAddr(lt)
	o.pkt.Addr.PKeyIndex = c.pkeyIdx
	o.setup(agent, c, t, false)
	return s.finish(ctx, o, t, attrID, mod)
}

// gmpAddr is the address of a GMP to t, a target lidOf returned: by LID,
// with a GRH to a GID target (from the local GID of the destination's
// kind, hop limit 64).
func (s *Session) gmpAddr(t Target) fabric.Addr {
	a := fabric.Addr{LID: t.LID, QPN: 1, QKey: qp1QKey}
	if t.Kind == ByGID {
		a.GRH, a.GID, a.HopLimit = true, t.GID, 64
		a.GIDIndex = uint8(s.Port().SourceGIDIndex(t.GID))
	}
	return a
}

// roceErr is the error for a target a RoCE port cannot reach: it has no
// LIDs and no QP0, and every MAD needs a GRH.
func (s *Session) roceErr(t Target) error {
	p := s.Port()
	return fmt.Errorf("engine: %s: %s port %d is RoCE (link layer Ethernet): no LIDs and no SMPs there; name a port by its GID (gid:fd00::2): %w",
		t, p.CAName, p.PortNum, ErrBadTarget)
}

// LIDOf returns a LID-routed target for t: t itself when LID-routed,
// the LID discovery found for a GUID, or the LID a directed-route
// target's node reports (port 0's on a switch). The LID-routed classes
// (PerfMgt, and the diag tools naming what they ask) use it.
func (s *Session) LIDOf(ctx context.Context, t Target) (Target, error) { return s.lidOf(ctx, t) }

// lidOf returns a LID target for t: as is, from the last discovery
// (GUID), or by asking the node its LID (DR).
func (s *Session) lidOf(ctx context.Context, t Target) (Target, error) {
	if s.roce && t.Kind != ByGID {
		return t, s.roceErr(t)
	}
	switch t.Kind {
	case ByGID:
		// On InfiniBand the packet is LID-routed: to the port whose GUID
		// is the GID's interface ID, by the last discovery.
		if !s.roce {
			lt, err := s.lidOf(ctx, GUID(mad.GID(t.GID).GUID()))
			if err != nil {
				return t, fmt.Errorf("engine: %s: %w", t, err)
			}
			t.LID = lt.LID
		}
		return t, nil
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

// Counters is a port's PortCounters or PortCountersExtended as perfquery
// reads them (PerfCounters).
type Counters struct {
	Layout *mad.Layout // perf.PortCounters's or perf.PortCountersExtended's
	Data   []byte      // the attribute; fields in Absent are zero
	// CapabilityMask and CapabilityMask2 are those of the PMA's
	// ClassPortInfo, which chose the fields.
	CapabilityMask  uint16
	CapabilityMask2 uint32
	// Absent names the fields the PMA's capabilities say it does not give.
	Absent []string
	// Summed lists the ports whose counters were added up to emulate
	// AllPortSelect (nil when the PMA answered for the port itself).
	Summed []uint8
}

// Value returns the value of the field with IBA name name.
func (c *Counters) Value(name string) (uint64, bool) {
	f, ok := c.Layout.Field(name)
	if !ok {
		return 0, false
	}
	return f.Get(c.Data), true
}

// perfCountersSelects are the PortCounters fields perfquery -a does not
// add up: the selects keep the last port's values.
var perfCountersSelects = map[string]bool{"PortSelect": true, "CounterSelect": true, "CounterSelect2": true}

// PerfCounters reads the PortCounters (extended false) or the
// PortCountersExtended of port of t's PMA as perfquery does. It asks the
// PMA's ClassPortInfo first; the fields its CapabilityMask and
// CapabilityMask2 say the PMA does not fill read zero and are named in
// Absent: PortCounters' PortXmitWait without CapPortXmitWait;
// PortCountersExtended's unicast and multicast packet counters without
// CapExtendedWidth (the NoIETF layout) and its CounterSelect2 and
// additional error counters without Cap2AdditionalPortCounters. For port
// perf.AllPorts on a PMA without CapAllPortSelect it emulates
// AllPortSelect as perfquery -a does: it reads ports 1 to NumPorts (from
// 0 on a switch with an enhanced port 0) one by one and adds each
// counter up, stopping at the counter's largest value; PortSelect reads
// 255 and the selects are the last port's.
func (s *Session) PerfCounters(ctx context.Context, t Target, port uint8, extended bool, opts ...CallOption) (*Counters, error) {
	lt, cpi, err := s.pmaClassPortInfo(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	c := &Counters{Layout: perf.LayoutByID(perf.AttrPortCounters), CapabilityMask: cpi.CapabilityMask, CapabilityMask2: cpi.CapabilityMask2}
	if extended {
		c.Layout = perf.LayoutByID(perf.AttrPortCountersExtended)
	}
	absent := map[string]bool{}
	switch {
	case !extended:
		if cpi.CapabilityMask&perf.CapPortXmitWait == 0 {
			absent["PortXmitWait"] = true
		}
	default:
		addl, _ := c.Layout.Field("SymbolErrorCounter")
		for _, f := range c.Layout.Fields {
			switch {
			case f.Name == "CounterSelect2" || f.Bit >= addl.Bit:
				absent[f.Name] = cpi.CapabilityMask2&perf.Cap2AdditionalPortCounters == 0
			case strings.HasPrefix(f.Name, "PortUnicast") || strings.HasPrefix(f.Name, "PortMulticast"):
				absent[f.Name] = cpi.CapabilityMask&perf.CapExtendedWidth == 0
			}
		}
	}
	for _, f := range c.Layout.Fields {
		if absent[f.Name] {
			c.Absent = append(c.Absent, f.Name)
		}
	}
	ports := []uint8{port}
	if port == perf.AllPorts && cpi.CapabilityMask&perf.CapAllPortSelect == 0 {
		if ports, err = s.pmaPorts(ctx, lt, opts); err != nil {
			return nil, fmt.Errorf("engine: %s: emulating AllPortSelect: %w", t, err)
		}
		c.Summed = ports
	}
	for _, p := range ports {
		d, err := s.Perf(ctx, lt, mad.MethodGet, c.Layout.ID, p, nil, opts...)
		if err != nil {
			if c.Summed != nil {
				return nil, fmt.Errorf("engine: %s: emulating AllPortSelect, port %d: %w", t, p, err)
			}
			return nil, err
		}
		if c.Data == nil {
			c.Data = d
			continue
		}
		addCounters(c.Layout, c.Data, d)
	}
	if c.Summed != nil {
		ps, _ := c.Layout.Field("PortSelect")
		ps.Put(c.Data, uint64(perf.AllPorts))
	}
	for _, f := range c.Layout.Fields {
		if absent[f.Name] {
			f.Put(c.Data, 0)
		}
	}
	return c, nil
}

// addCounters adds the counters of d into sum, each saturating at its
// width as the PMA's do (AllPortSelect emulated); the select fields are
// d's.
func addCounters(l *mad.Layout, sum, d []byte) {
	for _, f := range l.Fields {
		if perfCountersSelects[f.Name] {
			f.Put(sum, f.Get(d))
			continue
		}
		max := uint64(1)<<f.Width - 1
		if f.Width >= 64 {
			max = ^uint64(0)
		}
		v, a := f.Get(sum), f.Get(d)
		if v > max-a {
			v = max
		} else {
			v += a
		}
		f.Put(sum, v)
	}
}

// pmaPorts are the ports perfquery -a reads one by one: 1 to NumPorts, 0
// to NumPorts on a switch whose SwitchInfo has EnhancedPort0.
func (s *Session) pmaPorts(ctx context.Context, t Target, opts []CallOption) ([]uint8, error) {
	ni, err := s.NodeInfo(ctx, t, opts...)
	if err != nil {
		return nil, err
	}
	if ni.NumPorts == 0 {
		return nil, errors.New("NodeInfo NumPorts 0")
	}
	first := 1
	if ni.NodeType == smp.NodeTypeSwitch {
		si, err := s.SwitchInfo(ctx, t, opts...)
		if err != nil {
			return nil, err
		}
		if si.EnhancedPort0 {
			first = 0
		}
	}
	var ports []uint8
	for p := first; p <= int(ni.NumPorts); p++ {
		ports = append(ports, uint8(p))
	}
	return ports, nil
}

// ExtendedSpeedsCounters reads PortExtendedSpeedsCounters of port of t's
// PMA in the layout perfquery -T chooses: the RS-FEC layout
// (perf.PortExtendedSpeedsCountersRSFECLayout()) when the PMA's
// ClassPortInfo has CapRSFECCounters, the node's PortInfo (port 0 of a
// switch) says in CapabilityMask2 that it answers PortInfoExtended, and
// the port's PortInfoExtended has PIECapFECModeSupported with
// FECModeActive RS-FEC (2) or RS-FEC2 (4); else the layout without
// RS-FEC. The Counters' Layout says which.
func (s *Session) ExtendedSpeedsCounters(ctx context.Context, t Target, port uint8, opts ...CallOption) (*Counters, error) {
	lt, cpi, err := s.pmaClassPortInfo(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	c := &Counters{Layout: perf.PortExtendedSpeedsCountersLayout(), CapabilityMask: cpi.CapabilityMask, CapabilityMask2: cpi.CapabilityMask2}
	if cpi.CapabilityMask&perf.CapRSFECCounters != 0 {
		rs, err := s.rsFECActive(ctx, lt, port, opts)
		if err != nil {
			return nil, fmt.Errorf("engine: %s port %d: is RS-FEC active: %w", t, port, err)
		}
		if rs {
			c.Layout = perf.PortExtendedSpeedsCountersRSFECLayout()
		}
	}
	if c.Data, err = s.Perf(ctx, lt, mad.MethodGet, perf.AttrPortExtendedSpeedsCounters, port, nil, opts...); err != nil {
		return nil, err
	}
	return c, nil
}

// rsFECActive is perfquery's is_rsfec_mode_active past the PMA's
// capability: whether port of t says, in PortInfoExtended, that RS-FEC is
// active. A node whose PortInfo does not announce PortInfoExtended is
// not asked it (perfquery warns and prints the layout without RS-FEC).
func (s *Session) rsFECActive(ctx context.Context, t Target, port uint8, opts []CallOption) (bool, error) {
	ni, err := s.NodeInfo(ctx, t, opts...)
	if err != nil {
		return false, err
	}
	pn := port
	if ni.NodeType == smp.NodeTypeSwitch {
		pn = 0
	}
	pi, err := s.PortInfo(ctx, t, pn, opts...)
	if err != nil {
		return false, err
	}
	if pi.CapabilityMask&smp.CapIsCapabilityMask2Supported == 0 || pi.CapabilityMask2&smp.Cap2IsPortInfoExtendedSupported == 0 {
		return false, nil
	}
	pie, err := Get[smp.PortInfoExtended](ctx, s, t, uint32(port), opts...)
	if err != nil {
		return false, err
	}
	return pie.CapabilityMask&smp.PIECapFECModeSupported != 0 &&
		(pie.FECModeActive == smp.FECModeRS || pie.FECModeActive == smp.FECModeRS2), nil
}

// pmaClassPortInfo returns t's LID target (lidOf) and the ClassPortInfo
// of the PMA there.
func (s *Session) pmaClassPortInfo(ctx context.Context, t Target, opts []CallOption) (lt Target, cpi mad.ClassPortInfo, err error) {
	if lt, err = s.lidOf(ctx, t); err != nil {
		return lt, cpi, err
	}
	d, err := s.Perf(ctx, lt, mad.MethodGet, perf.AttrClassPortInfo, 0, nil, opts...)
	if err == nil {
		err = cpi.UnmarshalBinary(d)
	}
	if err != nil {
		return lt, cpi, fmt.Errorf("engine: %s PMA ClassPortInfo: %w", t, err)
	}
	return lt, cpi, nil
}
