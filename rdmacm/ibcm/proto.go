package ibcm

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cm"
)

// Event types of rdma_cma.h the device reports.
const (
	evAddrResolved    = 0
	evAddrError       = 1
	evRouteResolved   = 2
	evRouteError      = 3
	evConnectRequest  = 4
	evConnectResponse = 5
	evUnreachable     = 7
	evRejected        = 8
	evEstablished     = 9
	evDisconnected    = 10
)

// sendLocked sends a CM MAD to i's peer.
func (d *Device) sendLocked(i *kid, b []byte) {
	if i.port == nil || b == nil {
		return
	}
	d.sendTo(i.port, i.dlid, i.sl, b)
}

func (d *Device) sendTo(p *port, dlid uint16, sl uint8, b []byte) {
	pk := fabric.Packet{Agent: p.agent, Addr: fabric.Addr{LID: dlid, QPN: 1, QKey: cm.QKey, SL: sl}, Data: b}
	if err := p.tr.Send(context.Background(), &pk); err != nil && !errors.Is(err, net.ErrClosed) {
		d.log.Debug("ibcm: send", "attr", cm.Name(mad.AttrIDOf(b)), "dlid", dlid, "err", err)
	}
}

// sendTimedLocked sends b and resends it every i.timeout up to retries
// times; then the state's timeout action runs (expire).
func (d *Device) sendTimedLocked(i *kid, b []byte, retries int) {
	i.last, i.tries, i.maxTries = b, 0, retries
	d.sendLocked(i, b)
	d.armLocked(i, i.timeout)
}

func (d *Device) armLocked(i *kid, dur time.Duration) {
	d.stopTimerLocked(i)
	gen := i.gen
	i.timer = time.AfterFunc(dur, func() { d.expire(i, gen) })
}

func (d *Device) stopTimerLocked(i *kid) {
	i.gen++
	if i.timer != nil {
		i.timer.Stop()
		i.timer = nil
	}
}

// expire is the CM timer of i: resend, or give up.
func (d *Device) expire(i *kid, gen int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if i.gen != gen || d.closed || i.state == stDestroyed {
		return
	}
	i.timer = nil
	if i.state == stMRARcvd {
		i.state = stReqSent // the MRA's service time is over: back to resending
	}
	if i.tries < i.maxTries {
		i.tries++
		d.sendLocked(i, i.last)
		d.armLocked(i, i.timeout)
		return
	}
	timedOut := -int(syscall.ETIMEDOUT)
	switch i.state {
	case stReqSent, stSIDRReqSent:
		// Linux's CM sends nothing when the REQ times out
		// (cm_process_send_error: back to idle, REQ_ERROR).
		d.idleLocked(i, stRouteResolved)
		d.queueLocked(i, evUnreachable, timedOut, nil)
	case stRepSent:
		d.idleLocked(i, stTimewait)
		d.queueLocked(i, evUnreachable, timedOut, nil)
	case stDreqSent:
		d.idleLocked(i, stTimewait)
		d.queueLocked(i, evDisconnected, timedOut, nil)
	}
}

// idleLocked ends i's connection: timers stop, its Comm ID is freed.
func (d *Device) idleLocked(i *kid, st state) {
	d.stopTimerLocked(i)
	if i.localComm != 0 {
		delete(d.comms, i.localComm)
		i.localComm = 0
	}
	i.state = st
}

func (d *Device) dreqLocked(i *kid) []byte {
	b, body := cm.NewMAD(cm.AttrDREQ, i.tid)
	r := cm.DREQ{LocalCommID: i.localComm, RemoteCommID: i.remoteComm, RemoteQPN: i.remoteQPN}
	_, _ = r.AppendBinary(body[:0])
	return b
}

// simpleLocked builds an RTU or a DREP of i.
func (d *Device) simpleLocked(i *kid, attr uint16) []byte {
	b, body := cm.NewMAD(attr, i.tid)
	switch attr {
	case cm.AttrRTU:
		r := cm.RTU{LocalCommID: i.localComm, RemoteCommID: i.remoteComm}
		_, _ = r.AppendBinary(body[:0])
	case cm.AttrDREP:
		r := cm.DREP{LocalCommID: i.localComm, RemoteCommID: i.remoteComm}
		_, _ = r.AppendBinary(body[:0])
	}
	return b
}

func (d *Device) rejLocked(i *kid, msg uint8, reason uint16, pd []byte) []byte {
	b, body := cm.NewMAD(cm.AttrREJ, i.tid)
	r := cm.REJ{LocalCommID: i.localComm, RemoteCommID: i.remoteComm, MessageRejected: msg, Reason: reason}
	copy(r.PrivateData[:], pd)
	_, _ = r.AppendBinary(body[:0])
	return b
}

func (d *Device) sendSIDRRepLocked(i *kid, status uint8, qkey uint32, pd []byte) {
	b, body := cm.NewMAD(cm.AttrSIDRRep, i.tid)
	r := cm.SIDRRep{RequestID: i.remoteComm, Status: status}
	if i.listener != nil {
		r.ServiceID = i.listener.sid()
	}
	if status == cm.SIDRValid {
		r.QPN, r.QKey = i.qpn, qkey
	}
	copy(r.PrivateData[:], pd)
	_, _ = r.AppendBinary(body[:0])
	d.sendLocked(i, b)
}

func (d *Device) mraLocked(i *kid) []byte {
	b, body := cm.NewMAD(cm.AttrMRA, i.tid)
	m := cm.MRA{LocalCommID: i.localComm, RemoteCommID: i.remoteComm, MessageMRAed: cm.MsgREQ,
		ServiceTimeout: DefaultMRAServiceTimeout}
	_, _ = m.AppendBinary(body[:0])
	return b
}

// read is the reader goroutine of one port.
func (d *Device) read(p *port) {
	pk := fabric.Packet{Data: make([]byte, 0, mad.Size)}
	for {
		if err := p.tr.Recv(context.Background(), &pk); err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if errors.Is(err, fabric.ErrPeerGone) {
				// The port's peer is gone: nothing more will come; the
				// ids' timers end their connections.
				d.log.Warn("ibcm: the port's peer is gone", "lid", p.attr.LID, "err", err)
				return
			}
			d.log.Warn("ibcm: recv", "err", err)
			continue
		}
		if pk.Status != 0 || len(pk.Data) < mad.Size || mad.MgmtClassOf(pk.Data) != mad.ClassCM ||
			mad.MethodOf(pk.Data) != mad.MethodSend {
			continue
		}
		d.mu.Lock()
		if !d.closed {
			d.handleLocked(p, &pk)
		}
		d.mu.Unlock()
	}
}

// byComm returns the id whose Local Comm ID is v.
func (d *Device) byComm(v uint32) *kid {
	if v == 0 {
		return nil
	}
	return d.comms[v]
}

func copyPD(b []byte) []byte { return append([]byte(nil), b...) }

// handleLocked runs one received CM message through the state machines of
// rdmacm-abi.md section 10.4.
func (d *Device) handleLocked(p *port, pk *fabric.Packet) {
	body := pk.Data[mad.HeaderSize:mad.Size]
	tid := mad.TIDOf(pk.Data)
	attr := mad.AttrIDOf(pk.Data)
	switch attr {
	case cm.AttrREQ:
		var r cm.REQ
		_ = r.UnmarshalBinary(body)
		d.onREQ(p, pk, tid, &r)
	case cm.AttrMRA:
		var r cm.MRA
		_ = r.UnmarshalBinary(body)
		d.onMRA(&r)
	case cm.AttrREJ:
		var r cm.REJ
		_ = r.UnmarshalBinary(body)
		d.onREJ(&r)
	case cm.AttrREP:
		var r cm.REP
		_ = r.UnmarshalBinary(body)
		d.onREP(&r)
	case cm.AttrRTU:
		var r cm.RTU
		_ = r.UnmarshalBinary(body)
		if i := d.byComm(r.RemoteCommID); i != nil && i.state == stRepSent {
			d.stopTimerLocked(i)
			i.state = stEstablished
			d.queueLocked(i, evEstablished, 0, func(ev *fabric.CMRawEvent) { ev.Conn.QPNum = i.remoteQPN })
		}
	case cm.AttrDREQ:
		var r cm.DREQ
		_ = r.UnmarshalBinary(body)
		d.onDREQ(p, pk, tid, &r)
	case cm.AttrDREP:
		var r cm.DREP
		_ = r.UnmarshalBinary(body)
		if i := d.byComm(r.RemoteCommID); i != nil && i.state == stDreqSent {
			d.idleLocked(i, stTimewait)
			d.queueLocked(i, evDisconnected, 0, nil)
		}
	case cm.AttrSIDRReq:
		var r cm.SIDRReq
		_ = r.UnmarshalBinary(body)
		d.onSIDRReq(p, pk, tid, &r)
	case cm.AttrSIDRRep:
		var r cm.SIDRRep
		_ = r.UnmarshalBinary(body)
		d.onSIDRRep(&r)
	default:
		d.log.Debug("ibcm: dropped", "attr", fmt.Sprintf("0x%04x", attr), "slid", pk.Addr.LID)
	}
}

// onMRA takes an MRA: the REQ or REP it names waits longer.
func (d *Device) onMRA(r *cm.MRA) {
	i := d.byComm(r.RemoteCommID)
	switch {
	case i == nil:
	case i.state == stReqSent && r.MessageMRAed == cm.MsgREQ:
		i.state = stMRARcvd
		d.armLocked(i, cm.Duration(r.ServiceTimeout)+i.timeout)
	case i.state == stRepSent && r.MessageMRAed == cm.MsgREP:
		// The active side needs time for the REP: its service
		// time is added to this try, as the kernel's ib_modify_mad.
		d.armLocked(i, cm.Duration(r.ServiceTimeout)+i.timeout)
	}
}

// onREJ takes a REJ: the id goes idle (or to timewait once a REP went
// either way) and reports it with its private data.
func (d *Device) onREJ(r *cm.REJ) {
	i := d.byComm(r.RemoteCommID)
	if i == nil {
		return
	}
	switch i.state {
	case stReqSent, stMRARcvd:
		d.idleLocked(i, stRouteResolved)
	case stRepSent, stRepRcvd, stEstablished, stDreqSent:
		// As cm_rej_handler: an established or disconnecting id
		// enters timewait and reports the REJ too.
		d.idleLocked(i, stTimewait)
	default:
		return
	}
	d.queueLocked(i, evRejected, int(r.Reason), func(ev *fabric.CMRawEvent) {
		ev.Conn.PrivateData = copyPD(r.PrivateData[:])
	})
}

// onREP takes a REP: a connecting id reports the connect response; an
// established one answers a duplicate REP with the RTU again.
func (d *Device) onREP(r *cm.REP) {
	i := d.byComm(r.RemoteCommID)
	if i == nil {
		return
	}
	switch i.state {
	case stReqSent, stMRARcvd:
		d.stopTimerLocked(i)
		i.remoteComm, i.remoteQPN, i.remoteGUID = r.LocalCommID, r.LocalQPN, r.LocalCAGUID
		i.state = stRepRcvd
		d.queueLocked(i, evConnectResponse, 0, func(ev *fabric.CMRawEvent) {
			ev.Conn = fabric.CMConnParam{PrivateData: copyPD(r.PrivateData[:]),
				ResponderResources: r.InitiatorDepth, InitiatorDepth: r.ResponderResources,
				FlowControl: r.EndToEndFlowControl, RNRRetryCount: r.RNRRetryCount, SRQ: r.SRQ, QPNum: r.LocalQPN}
		})
	case stEstablished:
		d.sendLocked(i, d.simpleLocked(i, cm.AttrRTU)) // duplicate REP: RTU again
	}
}

// onDREQ takes a DREQ: a DREP for an unknown or timewait id, the
// disconnect reported for an established one, a DREP for crossing DREQs.
func (d *Device) onDREQ(p *port, pk *fabric.Packet, tid uint64, r *cm.DREQ) {
	i := d.byComm(r.RemoteCommID)
	if i == nil || i.state == stTimewait {
		// Unknown or gone: answer so the peer's DREQ does not time out.
		b, b2 := cm.NewMAD(cm.AttrDREP, tid)
		rep := cm.DREP{LocalCommID: r.RemoteCommID, RemoteCommID: r.LocalCommID}
		_, _ = rep.AppendBinary(b2[:0])
		d.sendTo(p, pk.Addr.LID, pk.Addr.SL, b)
		return
	}
	switch i.state {
	case stEstablished, stRepSent:
		d.stopTimerLocked(i)
		i.state = stDreqRcvd
		d.queueLocked(i, evDisconnected, 0, nil)
	case stDreqSent:
		d.sendLocked(i, d.simpleLocked(i, cm.AttrDREP)) // crossing DREQs
	}
}

// onSIDRRep takes a SIDR REP: the id is established with the remote QP
// and Q_Key, or unreachable with the status.
func (d *Device) onSIDRRep(r *cm.SIDRRep) {
	i := d.byComm(r.RequestID)
	if i == nil || i.state != stSIDRReqSent {
		return
	}
	if r.Status != cm.SIDRValid {
		d.idleLocked(i, stRouteResolved)
		d.queueLocked(i, evUnreachable, int(r.Status), nil)
		return
	}
	d.stopTimerLocked(i)
	i.state = stEstablished
	i.remoteQPN = r.QPN
	d.queueLocked(i, evEstablished, 0, func(ev *fabric.CMRawEvent) {
		ev.UD = fabric.CMUDParam{QPNum: r.QPN, QKey: r.QKey, PrivateData: copyPD(r.PrivateData[:])}
	})
}

// listenerFor finds the listener of a request to service ID sid that came
// in on port p with private data pd: an AF_IB listener takes it as it is;
// one with an IP address only when pd starts with RDMA CM's IP header
// naming an address it takes (matchIPListener). any reports whether some
// listener had the service ID at all.
func (d *Device) listenerFor(p *port, sid uint64, ud bool, pd []byte) (l *kid, any bool) {
	_, dst, _, hdrOK := parseIPHdr(pd)
	for _, o := range d.ids {
		if o.state != stListen || !(o.port == p || o.wild) || o.ud != ud || o.sid() != sid {
			continue
		}
		any = true
		if !o.ip || hdrOK && matchIPListener(o, dst) {
			return o, true
		}
	}
	return nil, any
}

// takeIPHdrLocked gives the new id i of an IP listener the addresses of
// the request's IP header (cma_save_ip_info: its source is the header's
// destination with the listener's port, its peer the header's source
// and port) and returns the caller's private data after the header.
func takeIPHdrLocked(i *kid, pd []byte) []byte {
	src, dst, port, _ := parseIPHdr(pd)
	i.ip, i.srcIP, i.dstIP, i.dport = true, dst, src, port
	return pd[ipHdrSize:]
}

// newChildLocked makes the new id of a request to listener l that came in
// on port p, owned by l's channel, with uid 0 until it is accepted.
func (d *Device) newChildLocked(l *kid, p *port) *kid {
	d.nextHandle++
	i := &kid{handle: d.nextHandle, ps: l.ps, ud: l.ud, ch: l.ch, listener: l, port: p,
		srcPort: l.srcPort, pkey: l.pkey}
	d.ids[i.handle] = i
	return i
}

// queueRequestLocked queues the CONNECT_REQUEST of child on l's channel:
// it carries l's uid and the child's handle, and is counted on l.
func (d *Device) queueRequestLocked(l, child *kid, fill func(*fabric.CMRawEvent)) {
	if l.ch.closed {
		return
	}
	ev := &event{raw: fabric.CMRawEvent{UID: l.uid, ID: child.handle, Type: evConnectRequest}, id: child, credited: l}
	fill(&ev.raw)
	l.ch.push(ev)
}

func (d *Device) onREQ(p *port, pk *fabric.Packet, tid uint64, r *cm.REQ) {
	for _, i := range d.ids {
		if i.listener != nil && i.remoteComm == r.LocalCommID && i.remoteGUID == r.LocalCAGUID && i.port == p {
			// A duplicate REQ: the MRA again while the user decides
			// (cm_dup_req_handler); after the REP, whose own timer
			// resends it, nothing.
			if i.state == stReqRcvd {
				d.sendLocked(i, d.mraLocked(i))
			}
			return
		}
	}
	l, any := d.listenerFor(p, r.ServiceID, false, r.PrivateData[:])
	if l == nil {
		// No listener on the service ID: ib_cm's REJ 8. One whose IP
		// address the request does not name: cma finds no id, and ib_cm
		// rejects as its handler failed (REJ 28, consumer defined).
		reason := uint16(cm.RejInvalidServiceID)
		if any {
			reason = cm.RejConsumerDefined
		}
		b, body := cm.NewMAD(cm.AttrREJ, tid)
		rej := cm.REJ{RemoteCommID: r.LocalCommID, MessageRejected: cm.MsgREQ, Reason: reason}
		_, _ = rej.AppendBinary(body[:0])
		d.sendTo(p, pk.Addr.LID, pk.Addr.SL, b)
		return
	}
	if l.backlog <= 0 {
		return // the kernel refuses; the peer's retries may find room
	}
	l.backlog--
	i := d.newChildLocked(l, p)
	i.localComm = d.newCommLocked(i)
	i.remoteComm, i.remoteQPN, i.remoteGUID, i.tid = r.LocalCommID, r.LocalQPN, r.LocalCAGUID, tid
	i.dlid, i.sl, i.pkey = pk.Addr.LID, r.PrimarySL, r.PKey
	// AF_IB: the peer is the REQ's source GID (the port with its LID when
	// the REQ names none); the kernel reports no service ID for it.
	i.dgid = r.PrimaryLocalGID
	if i.dgid == (mad.GID{}) {
		i.dgid = d.gidOfLID(pk.Addr.LID)
	}
	// The REP (and DREQ) timer is the REQ's LocalCMResponseTimeout alone,
	// as cm_req_handler sets timeout_ms.
	i.timeout = cm.Duration(r.LocalCMResponseTimeout)
	i.maxTries = int(r.MaxCMRetries)
	i.state = stReqRcvd
	pd := r.PrivateData[:]
	if l.ip {
		pd = takeIPHdrLocked(i, pd)
	}
	d.sendLocked(i, d.mraLocked(i))
	d.queueRequestLocked(l, i, func(ev *fabric.CMRawEvent) {
		// The REQ carries the initiator's resources, which the passive
		// side sees crossed over.
		ev.Conn = fabric.CMConnParam{PrivateData: copyPD(pd),
			ResponderResources: r.InitiatorDepth, InitiatorDepth: r.ResponderResources,
			FlowControl: r.EndToEndFlowControl, RetryCount: r.RetryCount, RNRRetryCount: r.RNRRetryCount,
			SRQ: r.SRQ, QPNum: r.LocalQPN}
	})
}

func (d *Device) onSIDRReq(p *port, pk *fabric.Packet, tid uint64, r *cm.SIDRReq) {
	for _, i := range d.ids {
		if i.listener != nil && i.ud && i.remoteComm == r.RequestID && i.dlid == pk.Addr.LID && i.port == p {
			return // duplicate; the user has not answered yet
		}
	}
	l, _ := d.listenerFor(p, r.ServiceID, true, r.PrivateData[:])
	if l == nil || l.backlog <= 0 {
		b, body := cm.NewMAD(cm.AttrSIDRRep, tid)
		rep := cm.SIDRRep{RequestID: r.RequestID, Status: cm.SIDRUnsupportedSID, ServiceID: r.ServiceID}
		_, _ = rep.AppendBinary(body[:0])
		d.sendTo(p, pk.Addr.LID, pk.Addr.SL, b)
		return
	}
	l.backlog--
	i := d.newChildLocked(l, p)
	i.remoteComm, i.tid, i.dlid, i.sl, i.pkey = r.RequestID, tid, pk.Addr.LID, pk.Addr.SL, r.PKey
	// A SIDR_REQ names no source GID: the fabric's port with that LID.
	i.dgid = d.gidOfLID(pk.Addr.LID)
	i.state = stSIDRReqRcvd
	var qkey uint32
	if l.ps == psUDP || l.ps == psIPoIB {
		qkey = udpQKey
	}
	pd := r.PrivateData[:]
	if l.ip {
		pd = takeIPHdrLocked(i, pd)
	}
	d.queueRequestLocked(l, i, func(ev *fabric.CMRawEvent) {
		ev.UD = fabric.CMUDParam{QKey: qkey, PrivateData: copyPD(pd)}
	})
}

// gidOfLID finds the GID of the fabric's port with lid (zero when none).
func (d *Device) gidOfLID(lid uint16) mad.GID {
	ports, err := d.fab.Ports(context.Background())
	if err != nil {
		return mad.GID{}
	}
	for _, pa := range ports {
		if pa.LID == lid {
			return mad.NewGID(pa.GIDPrefix, pa.PortGUID)
		}
	}
	return mad.GID{}
}
