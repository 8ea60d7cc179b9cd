package sim

import (
	"fmt"
	"slices"
	"sync"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/mux"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// qp1QKey is the Q_Key of QP1 (GMPs).
const qp1QKey = 0x80010000

// attachments are the transports open on one port. They share one mux
// registry, so method ownership and TIDs are per port, as in the kernel.
type attachments struct {
	reg   *mux.Port
	wires []*wire // open ones, in attach order
}

// wire is the raw side of one attached transport: mux.Mux transmits
// through it, and the fabric delivers to the mux (rx).
type wire struct {
	f      *Fabric
	p      *port
	m      *mux.Mux // the transport; nil for tests' raw wires
	rx     receiver
	kind   wireKind // which device of a planarized CA (planes.go)
	closed bool     // guarded by f.mu
}

// receiver takes MADs delivered to a wire: a *mux.Mux.
type receiver interface {
	Deliver(p *fabric.Packet)
}

// txn is one MAD travelling through the fabric, with what its LRH and
// BTH/DETH would say about it, and where it ends up.
type txn struct {
	buf  [mad.Size]byte
	slid uint16 // source LID (permissive for directed route)
	sl   uint8
	qp   uint32 // source QP: 0 for SMPs, 1 for GMPs
	// The GRH, when the sender gave one (GMPs only): source and
	// destination GID, traffic class, flow label.
	grh        bool
	sgid, dgid mad.GID
	tclass     uint8
	flow       uint32

	to  receiver      // where to deliver out, set under f.mu
	out fabric.Packet // what to deliver
}

var txnPool = sync.Pool{New: func() any { return new(txn) }}

// Transmit sends a MAD from the wire's port. The fabric processes it
// synchronously under f.mu (forwarding, SMA/PMA answers, responses); the
// MAD that results for a transport, if any, is delivered to its mux after
// f.mu is released. MADs the fabric drops are simply gone, as on a real
// wire: the sender's mux times them out.
func (w *wire) Transmit(p *fabric.Packet) error {
	if len(p.Data) < mad.HeaderSize || len(p.Data) > mad.Size {
		return fmt.Errorf("sim: transmit %d bytes: %w", len(p.Data), fabric.ErrInvalid)
	}
	f := w.f
	if p.Addr.GRH {
		if c := mad.MgmtClassOf(p.Data); c == mad.ClassSubnLID || c == mad.ClassSubnDR {
			return fmt.Errorf("sim: SMP (class 0x%02x) with a GRH: QP0 sends no GRH: %w", c, fabric.ErrInvalid)
		}
		if p.Addr.GIDIndex != 0 {
			return fmt.Errorf("sim: GRH source gid_index %d: the port's GID table has index 0 only: %w", p.Addr.GIDIndex, fabric.ErrInvalid)
		}
	}
	t := txnPool.Get().(*txn)
	clear(t.buf[copy(t.buf[:], p.Data):])
	t.grh = false
	f.mu.Lock()
	if w.closed || f.closed {
		f.mu.Unlock()
		txnPool.Put(t)
		return errClosed("transmit")
	}
	src, err := w.source(t.buf[:], p.Addr.LID)
	if err != nil {
		f.mu.Unlock()
		txnPool.Put(t)
		return err
	}
	if f.inj != nil {
		w.transmitFaulty(src, p, t) // releases f.mu
		t.to, t.out = nil, fabric.Packet{}
		txnPool.Put(t)
		return nil
	}
	f.send(src, &p.Addr, t)
	to := t.to
	more := f.saTake()
	f.mu.Unlock()
	if to != nil {
		to.Deliver(&t.out)
	}
	saFlush(more)
	t.to, t.out = nil, fabric.Packet{}
	txnPool.Put(t)
	return nil
}

// Close detaches the wire; mux.Close calls it once.
func (w *wire) Close() error {
	f := w.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	w.p.att.wires = slices.DeleteFunc(w.p.att.wires, func(x *wire) bool { return x == w })
	f.open = slices.DeleteFunc(f.open, func(x *wire) bool { return x == w })
	return nil
}

// send starts a MAD on its way from port src. f.mu is held.
func (f *Fabric) send(src *port, a *fabric.Addr, t *txn) {
	b := t.buf[:]
	if mad.BaseVersionOf(b) != 1 {
		return // BaseVersion other than IB's
	}
	t.sl = a.SL
	switch mad.MgmtClassOf(b) {
	case mad.ClassSubnDR:
		t.slid, t.qp = fabric.PermissiveLID, 0
		f.sendDR(src, a.LID, t)
	case mad.ClassSubnLID:
		t.slid, t.qp = srcLID(src, a.PathBits), 0
		f.lidRoute(src, a.LID, t)
	default:
		t.slid, t.qp = srcLID(src, a.PathBits), 1
		if a.GRH {
			t.grh, t.dgid, t.tclass, t.flow = true, a.GID, a.TClass, a.FlowLabel&0xfffff
			t.sgid = mad.NewGID(src.get(piGIDPrefix), src.guid)
		}
		f.lidRoute(src, a.LID, t)
	}
}

func srcLID(p *port, pathBits uint8) uint16 {
	if p.lid == 0 {
		return 0
	}
	return p.lid + uint16(pathBits)&(1<<p.lmc-1)
}

// cross moves a MAD sent on SL sl over the cable at port e and returns
// the port it arrives on, or nil when the cable cannot carry it (counted
// as a PortXmitDiscard at e).
func (f *Fabric) cross(e *port, isSMP bool, sl uint8) *port {
	if !e.up(isSMP) {
		e.pc.add(pcXmitDiscards, 1)
		return nil
	}
	r := e.remote
	if f.inj != nil && f.deadDrop(r.node) {
		return nil
	}
	if f.samplers != nil {
		f.samplesAt(e)
		f.samplesAt(r)
	}
	e.pc.sent(sl)
	r.pc.received(sl)
	return r
}

// sendDR starts a directed-route SMP at its originator, port src, applying
// the sender's rules of IBA 14.2.2 (Linux smi.c): mad-formats.md 6.1.
func (f *Fabric) sendDR(src *port, lrhDLID uint16, t *txn) {
	b := t.buf[:]
	hc, hp := fHopCnt.u8(b), fHopPtr.u8(b)
	if hc > smp.MaxHops {
		return
	}
	n := src.node
	if fDBit.get(b) {
		f.drRespond(n, src, t) // an agent answering a DR SMP it received
		return
	}
	if fDrSLID.u16(b) != smp.PermissiveLID {
		// A LID-routed first leg: the SMP goes unchanged to the switch
		// at the LRH DLID, which starts the directed part.
		t.slid = src.lid
		f.lidRoute(src, lrhDLID, t)
		return
	}
	switch {
	case hc > 0 && hp == 0:
		e := int(fInitPath.bytes(b)[1])
		if n.typ == typeSwitch {
			if e < 1 || e > n.numPorts {
				return
			}
		} else if e != src.num {
			return // C14-9:1: the first hop must leave by the sending port
		}
		fHopPtr.set8(b, 1)
		f.traceHop(n, hp, b, e, "forward")
		if r := f.cross(n.ports[e], true, t.sl); r != nil {
			f.drRecv(r.node, r, t)
		}
	case hp == hc:
		fHopPtr.set8(b, hc+1)
		f.traceHop(n, hp, b, 0, "sma")
		f.drSMA(n, src, t) // hop count 0: the local SMA
	case hp == hc+1:
		f.traceHop(n, hp, b, 0, "sma")
		f.drSMA(n, src, t)
	}
}

// drRecv processes a directed-route SMP arriving at node m on port in and
// follows it from node to node, applying at each the receiver's and the
// sender's rules of mad-formats.md 6.1.
func (f *Fabric) drRecv(m *node, in *port, t *txn) {
	b := t.buf[:]
	for range 2*smp.MaxHops + 2 {
		hc, hp := fHopCnt.u8(b), fHopPtr.u8(b)
		if hc > smp.MaxHops {
			return
		}
		sw := m.typ == typeSwitch
		var out *port
		hpIn := hp
		if !fDBit.get(b) {
			switch {
			case hc > 0 && hp == 0:
				// The end of a LID-routed first leg: this switch starts
				// the directed part.
				if !sw || fDrSLID.u16(b) == smp.PermissiveLID {
					return
				}
				e := int(fInitPath.bytes(b)[1])
				if e < 1 || e > m.numPorts {
					return
				}
				fHopPtr.set8(b, 1)
				out = m.ports[e]
			case hp > 0 && hp < hc: // an intermediate hop
				if !sw {
					return
				}
				fRetPath.bytes(b)[hp] = uint8(in.num)
				e := int(fInitPath.bytes(b)[hp+1])
				if e < 1 || e > m.numPorts {
					return
				}
				fHopPtr.set8(b, hp+1)
				out = m.ports[e]
			case hp == hc: // the end of the directed part
				if hc > 0 {
					fRetPath.bytes(b)[hc] = uint8(in.num)
				}
				if fDrDLID.u16(b) != smp.PermissiveLID {
					return // LID-routed last legs are not supported
				}
				fHopPtr.set8(b, hc+1)
				f.traceHop(m, hpIn, b, 0, "sma")
				f.drSMA(m, in, t)
				return
			case hp == hc+1:
				f.traceHop(m, hpIn, b, 0, "sma")
				f.drSMA(m, in, t)
				return
			default:
				return
			}
		} else {
			switch {
			case hc > 0 && hp == hc+1:
				return
			case hp >= 2 && hp <= hc: // an intermediate hop back
				if !sw {
					return
				}
				e := int(fRetPath.bytes(b)[hp-1])
				if e < 1 || e > m.numPorts {
					return
				}
				fHopPtr.set8(b, hp-1)
				out = m.ports[e]
			case hp == 1: // the start of the directed part
				fHopPtr.set8(b, 0)
				if fDrSLID.u16(b) == smp.PermissiveLID {
					f.traceHop(m, hpIn, b, 0, "deliver")
					f.deliver(m.endport(in), t)
				} else if sw {
					f.traceHop(m, hpIn, b, 0, "lid-route")
					f.drLIDReturn(m, t)
				}
				return
			case hp == 0: // back at the requester by a LID-routed leg
				f.traceHop(m, hpIn, b, 0, "deliver")
				f.deliver(m.endport(in), t)
				return
			default:
				return
			}
		}
		f.traceHop(m, hpIn, b, out.num, "forward")
		r := f.cross(out, true, t.sl)
		if r == nil {
			return
		}
		m, in = r.node, r
	}
}

// drSMA hands a directed-route SMP that reached its destination, node m
// (arrived on port in), to the node's SMA, then sends the answer back.
func (f *Fabric) drSMA(m *node, in *port, t *txn) {
	b := t.buf[:]
	st, act := f.sma(m, in, b)
	switch act {
	case actRespond:
		makeResp(b, st)
		f.drRespond(m, in, t)
	case actDeliver:
		f.deliverRequest(m.endport(in), m, in, t)
	}
}

// drRespond sends a directed-route response from node m, whose request came
// in on port in: the responder's rules of mad-formats.md 6.1.
func (f *Fabric) drRespond(m *node, in *port, t *txn) {
	b := t.buf[:]
	hc, hp := fHopCnt.u8(b), fHopPtr.u8(b)
	switch {
	case hc > smp.MaxHops:
	case hc > 0 && hp == hc+1:
		e := int(fRetPath.bytes(b)[hc])
		if e < 1 || e > m.numPorts {
			return
		}
		fHopPtr.set8(b, hc)
		f.traceHop(m, hp, b, e, "forward")
		if r := f.cross(m.ports[e], true, t.sl); r != nil {
			f.drRecv(r.node, r, t)
		}
	case hp == 1: // hop count 0: the requester is local
		fHopPtr.set8(b, 0)
		if fDrSLID.u16(b) == smp.PermissiveLID {
			f.traceHop(m, hp, b, 0, "deliver")
			f.deliver(m.endport(in), t)
		} else if m.typ == typeSwitch {
			f.drLIDReturn(m, t)
		}
	}
}

// drLIDReturn sends a directed-route response from switch m, where its
// directed part began, LID-routed to DrSLID.
func (f *Fabric) drLIDReturn(m *node, t *txn) {
	p0 := m.ports[0]
	t.slid = p0.lid
	f.lidRoute(p0, fDrSLID.u16(t.buf[:]), t)
}

// lidRoute sends a MAD from endport from to dlid through the switches'
// linear forwarding tables. Packets to LID 0, to multicast or permissive
// LIDs, past a table's LinearFDBTop or its 0xFF entries, over a cable that
// is not up (Active, but for SMPs), or around a loop are dropped.
func (f *Fabric) lidRoute(from *port, dlid uint16, t *txn) {
	if dlid == 0 || dlid > maxUnicastLID {
		return
	}
	if from.owns(dlid) {
		f.arrive(from, t)
		return
	}
	class := mad.MgmtClassOf(t.buf[:])
	isSMP := class == mad.ClassSubnLID || class == mad.ClassSubnDR
	out := from
	if from.node.typ == typeSwitch {
		out = from.node.egress(dlid)
	}
	for range maxLIDHops {
		if out == nil {
			return
		}
		r := f.cross(out, isSMP, t.sl)
		if r == nil {
			return
		}
		m := r.node
		if m.typ != typeSwitch {
			if r.owns(dlid) {
				f.arrive(r, t)
			}
			return
		}
		if p0 := m.ports[0]; p0.owns(dlid) {
			f.arrive(p0, t)
			return
		}
		if out = m.egress(dlid); out == nil {
			r.pc.add(pcRcvSwitchRelayErrors, 1)
		}
	}
}

// egress returns the port switch n forwards lid to, or nil.
func (n *node) egress(lid uint16) *port {
	s := n.sw
	lft := s.table()
	if lid > s.top || int(lid) >= len(lft) {
		return nil
	}
	e := int(lft[lid])
	if e == 0 || e > n.numPorts {
		return nil
	}
	return n.ports[e]
}

// arrive handles a LID-routed MAD at its destination endport dst.
func (f *Fabric) arrive(dst *port, t *txn) {
	b := t.buf[:]
	if t.grh && t.dgid != mad.NewGID(dst.get(piGIDPrefix), dst.guid) {
		return // the HCA drops a packet whose GRH names another port's GID
	}
	if mad.IsResponse(b) {
		if f.isSMPort(dst) && mad.MgmtClassOf(b) == mad.ClassSubnAdm && mad.MethodOf(b) == mad.MethodReportResp && f.saReportResp(t) {
			return // answers one of the SA's Reports (inform.go)
		}
		f.deliver(dst, t)
		return
	}
	n := dst.node
	var st uint16
	var act action
	switch mad.MgmtClassOf(b) {
	case mad.ClassSubnDR:
		f.drRecv(n, dst, t)
		return
	case mad.ClassSubnLID:
		st, act = f.sma(n, dst, b)
	case mad.ClassPerf:
		st, act = f.pma(n, dst, b)
	case mad.ClassCC:
		st, act = f.ccAgent(n, dst, b)
	default:
		if f.saArrive(dst, t) {
			return
		}
		act = actDeliver
	}
	switch act {
	case actRespond:
		makeResp(b, st)
		f.lidRespond(dst, t)
	case actDeliver:
		f.deliverRequest(dst, n, dst, t)
	}
}

// lidRespond sends the response of a LID-routed request back to its
// source from endport dst.
func (f *Fabric) lidRespond(dst *port, t *txn) {
	to := t.slid
	t.slid = dst.lid
	if t.grh {
		// The answer to a request with a GRH carries one back, as the
		// kernel's agents answer (an address handle from the request).
		t.sgid, t.dgid = t.dgid, t.sgid
	}
	f.lidRoute(dst, to, t)
}

// deliver hands the MAD to the transports open on endport dst (the mux
// registry routes it to the right one). It reports false when none is
// open.
func (f *Fabric) deliver(dst *port, t *txn) bool {
	if dst.att == nil || len(dst.att.wires) == 0 {
		return false
	}
	t.to = dst.att.wires[0].rx
	t.out = fabric.Packet{Addr: fabric.Addr{LID: t.slid, QPN: t.qp, SL: t.sl}, Data: t.buf[:]}
	if t.qp == 1 {
		t.out.Addr.QKey = qp1QKey
	}
	if t.grh {
		// As ib_umad reports a GRH: the sender's GID, the index of the
		// local GID it was sent to (the port's only one), the header's
		// traffic class and flow label, and hop limit 255 (what
		// ib_init_ah_attr_from_wc gives a reply on InfiniBand).
		a := &t.out.Addr
		a.GRH, a.GID, a.GIDIndex, a.HopLimit, a.TClass, a.FlowLabel = true, t.sgid, 0, 0xff, t.tclass, t.flow
	}
	return true
}

// deliverRequest hands a request no SMA or PMA answers to the transports
// open on endport dst of node m (which it entered by port in). With none
// open it is answered as the Linux kernel does: Get and Set with status
// 0x000C, anything else dropped. (With transports open, their mux does
// the same for requests no agent owns.)
func (f *Fabric) deliverRequest(dst *port, m *node, in *port, t *txn) {
	if f.deliver(dst, t) {
		return
	}
	b := t.buf[:]
	if meth := mad.MethodOf(b); meth != mad.MethodGet && meth != mad.MethodSet {
		return
	}
	makeResp(b, mad.StatusMethodAttrUnsup)
	if mad.MgmtClassOf(b) == mad.ClassSubnDR {
		f.drRespond(m, in, t)
		return
	}
	f.lidRespond(dst, t)
}

// hop is one step of a directed-route SMP, for tests (Fabric.trace).
type hop struct {
	Node   string
	HPIn   uint8 // HopPointer on arrival
	HPOut  uint8 // HopPointer after the node's rules
	Out    int   // egress port, 0 when it went to an SMA or a transport
	Action string
}

func (f *Fabric) traceHop(n *node, hpIn uint8, b []byte, out int, action string) {
	if f.trace != nil {
		f.trace(hop{Node: n.id, HPIn: hpIn, HPOut: fHopPtr.u8(b), Out: out, Action: action})
	}
}
