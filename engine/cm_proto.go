package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cm"
)

// newCommLocked picks a fresh non-zero Local Communication ID for id.
func (c *CM) newCommLocked(id *CMID) uint32 {
	for {
		v := rand.Uint32()
		if _, used := c.comms[v]; v != 0 && !used {
			c.comms[v] = id
			return v
		}
	}
}

// qpnLocked returns want, or a fresh 24-bit QP number standing for the
// id's QP (ids have no verbs QP here).
func (c *CM) qpnLocked(want uint32) uint32 {
	if want != 0 {
		return want & 0xffffff
	}
	c.nextQPN++
	return c.nextQPN & 0xffffff
}

// sendLocked sends a CM MAD to id's peer.
func (c *CM) sendLocked(id *CMID, b []byte) {
	if id.dev == nil || b == nil {
		return
	}
	c.sendTo(id.dev, id.dlid, id.sl, b)
}

func (c *CM) sendTo(d *cmDev, dlid uint16, sl uint8, b []byte) {
	p := fabric.Packet{Agent: d.agent, Addr: fabric.Addr{LID: dlid, QPN: 1, QKey: cm.QKey, SL: sl}, Data: b}
	if err := d.tr.Send(context.Background(), &p); err != nil && !errors.Is(err, net.ErrClosed) {
		c.log.Debug("rdmacm: send", "attr", cm.Name(mad.AttrIDOf(b)), "dlid", dlid, "err", err)
	}
}

// sendTimedLocked sends b and resends it every id.timeout up to retries
// times; then the state's timeout action runs (expire).
func (c *CM) sendTimedLocked(id *CMID, b []byte, retries int) {
	id.last, id.tries, id.maxTries = b, 0, retries
	c.sendLocked(id, b)
	c.armLocked(id, id.timeout)
}

func (c *CM) armLocked(id *CMID, d time.Duration) {
	c.stopTimerLocked(id)
	gen := id.gen
	id.timer = time.AfterFunc(d, func() { c.expire(id, gen) })
}

func (c *CM) stopTimerLocked(id *CMID) {
	id.gen++
	if id.timer != nil {
		id.timer.Stop()
		id.timer = nil
	}
}

// expire is the CM timer of id: resend, or give up.
func (c *CM) expire(id *CMID, gen int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id.gen != gen || c.closed || id.state == stDestroyed {
		return
	}
	id.timer = nil
	if id.state == stMRARcvd {
		id.state = stReqSent // the MRA's service time is over: back to resending
	}
	if id.tries < id.maxTries {
		id.tries++
		c.sendLocked(id, id.last)
		c.armLocked(id, id.timeout)
		return
	}
	timedOut := -int(syscall.ETIMEDOUT)
	switch id.state {
	case stReqSent:
		// Linux's CM sends nothing when the REQ times out
		// (cm_process_send_error: back to idle, REQ_ERROR).
		c.idleLocked(id, stRouteResolved)
		c.queueLocked(id, &CMEvent{Type: EventUnreachable, Status: timedOut})
	case stRepSent:
		c.idleLocked(id, stTimewait)
		c.queueLocked(id, &CMEvent{Type: EventUnreachable, Status: timedOut})
	case stSIDRReqSent:
		c.idleLocked(id, stRouteResolved)
		c.queueLocked(id, &CMEvent{Type: EventUnreachable, Status: timedOut})
	case stDreqSent:
		c.idleLocked(id, stTimewait)
		c.queueLocked(id, &CMEvent{Type: EventDisconnected, Status: timedOut})
	}
}

// idleLocked ends id's connection: timers stop, its Comm ID is freed.
func (c *CM) idleLocked(id *CMID, st cmState) {
	c.stopTimerLocked(id)
	if id.localComm != 0 {
		delete(c.comms, id.localComm)
		id.localComm = 0
	}
	id.state = st
}

func (c *CM) dreqLocked(id *CMID) []byte {
	b, body := cm.NewMAD(cm.AttrDREQ, id.tid)
	r := cm.DREQ{LocalCommID: id.localComm, RemoteCommID: id.remoteComm, RemoteQPN: id.remoteQPN}
	_, _ = r.AppendBinary(body[:0])
	return b
}

// simpleLocked builds an RTU or a DREP of id.
func (c *CM) simpleLocked(id *CMID, attr uint16) []byte {
	b, body := cm.NewMAD(attr, id.tid)
	switch attr {
	case cm.AttrRTU:
		r := cm.RTU{LocalCommID: id.localComm, RemoteCommID: id.remoteComm}
		_, _ = r.AppendBinary(body[:0])
	case cm.AttrDREP:
		r := cm.DREP{LocalCommID: id.localComm, RemoteCommID: id.remoteComm}
		_, _ = r.AppendBinary(body[:0])
	}
	return b
}

func (c *CM) rejLocked(id *CMID, msg uint8, reason uint16, pd []byte) []byte {
	b, body := cm.NewMAD(cm.AttrREJ, id.tid)
	r := cm.REJ{LocalCommID: id.localComm, RemoteCommID: id.remoteComm, MessageRejected: msg, Reason: reason}
	copy(r.PrivateData[:], pd)
	_, _ = r.AppendBinary(body[:0])
	return b
}

func (c *CM) sendSIDRRepLocked(id *CMID, status uint8, pd []byte) {
	b, body := cm.NewMAD(cm.AttrSIDRRep, id.tid)
	r := cm.SIDRRep{RequestID: id.remoteComm, Status: status, ServiceID: id.listenerSID()}
	if status == cm.SIDRValid {
		r.QPN, r.QKey = id.qpn, UDPQKey
	}
	copy(r.PrivateData[:], pd)
	_, _ = r.AppendBinary(body[:0])
	c.sendLocked(id, b)
}

func (id *CMID) listenerSID() uint64 {
	if id.listener != nil {
		return uint64(id.ps)<<16 | uint64(id.listener.src.Port)
	}
	return 0
}

// Accept is rdma_accept on a passive id (after CONNECT_REQUEST): REP (or
// SIDR_REP for UD), then ESTABLISHED when the RTU comes. A synchronous id
// waits for it.
func (c *CM) Accept(ctx context.Context, id *CMID, p ConnParam) error {
	const op = "accept"
	if c.kdev != nil {
		return c.kAccept(ctx, id, p)
	}
	c.mu.Lock()
	if err := c.checkLocked(op, id); err != nil {
		c.mu.Unlock()
		return err
	}
	if len(p.PrivateData) > MaxAcceptPrivateData {
		c.mu.Unlock()
		return errno(op, syscall.EINVAL, "%d bytes of private data > %d", len(p.PrivateData), MaxAcceptPrivateData)
	}
	switch id.state {
	case stReqRcvd:
		id.qpn = c.qpnLocked(p.QPNum)
		r := cm.REP{LocalCommID: id.localComm, RemoteCommID: id.remoteComm, LocalQPN: id.qpn,
			StartingPSN: rand.Uint32N(1 << 24), ResponderResources: p.ResponderResources,
			InitiatorDepth: p.InitiatorDepth, EndToEndFlowControl: p.FlowControl & 1,
			RNRRetryCount: min(p.RNRRetryCount, 7), SRQ: p.SRQ & 1, LocalCAGUID: id.dev.attr.NodeGUID}
		copy(r.PrivateData[:], p.PrivateData)
		b, body := cm.NewMAD(cm.AttrREP, id.tid)
		_, _ = r.AppendBinary(body[:0])
		id.state = stRepSent
		c.sendTimedLocked(id, b, id.maxTries)
	case stSIDRReqRcvd:
		id.qpn = c.qpnLocked(p.QPNum)
		c.sendSIDRRepLocked(id, cm.SIDRValid, p.PrivateData)
		id.state = stEstablished
		c.mu.Unlock()
		return nil // no event on the passive side of UD
	default:
		c.mu.Unlock()
		return errno(op, syscall.EINVAL, "id %d is %v, not a connect request", id.handle, id.state)
	}
	c.mu.Unlock()
	return c.complete(ctx, op, id)
}

// Reject is rdma_reject: REJ (reason 28, consumer defined) with private
// data, or SIDR_REP status 2 for UD.
func (c *CM) Reject(ctx context.Context, id *CMID, pd []byte) error {
	const op = "reject"
	if c.kdev != nil {
		return c.kReject(id, pd)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	if len(pd) > MaxRejectPrivateData {
		return errno(op, syscall.EINVAL, "%d bytes of private data > %d", len(pd), MaxRejectPrivateData)
	}
	switch id.state {
	case stReqRcvd:
		c.sendLocked(id, c.rejLocked(id, cm.MsgREQ, cm.RejConsumerDefined, pd))
		c.idleLocked(id, stTimewait)
	case stSIDRReqRcvd:
		c.sendSIDRRepLocked(id, cm.SIDRRejected, pd)
		c.idleLocked(id, stTimewait)
	default:
		return errno(op, syscall.EINVAL, "id %d is %v, not a connect request", id.handle, id.state)
	}
	return nil
}

// Disconnect is rdma_disconnect: DREQ (DREP when the peer's DREQ came
// first); DISCONNECTED follows the DREP, or the DREQ timeout with status
// -ETIMEDOUT. A synchronous id waits for it.
func (c *CM) Disconnect(ctx context.Context, id *CMID) error {
	const op = "disconnect"
	if c.kdev != nil {
		return c.kDisconnect(ctx, id)
	}
	c.mu.Lock()
	if err := c.checkLocked(op, id); err != nil {
		c.mu.Unlock()
		return err
	}
	switch {
	case id.state == stEstablished && !id.ud:
		id.state = stDreqSent
		c.sendTimedLocked(id, c.dreqLocked(id), id.maxTries)
	case id.state == stDreqRcvd:
		c.sendLocked(id, c.simpleLocked(id, cm.AttrDREP))
		c.idleLocked(id, stTimewait)
		c.mu.Unlock()
		return nil
	default:
		c.mu.Unlock()
		return errno(op, syscall.EINVAL, "id %d is %v, not connected", id.handle, id.state)
	}
	c.mu.Unlock()
	return c.complete(ctx, op, id)
}

// read is the reader goroutine of one port.
func (c *CM) read(d *cmDev) {
	p := fabric.Packet{Data: make([]byte, 0, mad.Size)}
	for {
		if err := d.tr.Recv(context.Background(), &p); err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			if errors.Is(err, fabric.ErrPeerGone) {
				// The port's peer is gone: nothing more will come; the
				// ids' timers end their connections.
				c.log.Warn("rdmacm: the port's peer is gone", "lid", d.attr.LID, "err", err)
				return
			}
			c.log.Warn("rdmacm: recv", "err", err)
			continue
		}
		if p.Status != 0 || len(p.Data) < mad.Size || mad.MgmtClassOf(p.Data) != mad.ClassCM ||
			mad.MethodOf(p.Data) != mad.MethodSend {
			continue
		}
		c.mu.Lock()
		if !c.closed {
			c.handleLocked(d, &p)
		}
		c.mu.Unlock()
	}
}

// byComm returns the id whose Local Comm ID is v.
func (c *CM) byComm(v uint32) *CMID {
	if v == 0 {
		return nil
	}
	return c.comms[v]
}

// handleLocked runs one received CM message through the state machines of
// rdmacm-abi.md section 10.4.
func (c *CM) handleLocked(d *cmDev, p *fabric.Packet) {
	body := p.Data[mad.HeaderSize:mad.Size]
	tid := mad.TIDOf(p.Data)
	attr := mad.AttrIDOf(p.Data)
	switch attr {
	case cm.AttrREQ:
		var r cm.REQ
		_ = r.UnmarshalBinary(body)
		c.onREQ(d, p, tid, &r)
	case cm.AttrMRA:
		var r cm.MRA
		_ = r.UnmarshalBinary(body)
		id := c.byComm(r.RemoteCommID)
		switch {
		case id == nil:
		case id.state == stReqSent && r.MessageMRAed == cm.MsgREQ:
			id.state = stMRARcvd
			c.armLocked(id, cm.Duration(r.ServiceTimeout)+id.timeout)
		case id.state == stRepSent && r.MessageMRAed == cm.MsgREP:
			// The active side needs time for the REP: its service
			// time is added to this try, as the kernel's ib_modify_mad.
			c.armLocked(id, cm.Duration(r.ServiceTimeout)+id.timeout)
		}
	case cm.AttrREJ:
		var r cm.REJ
		_ = r.UnmarshalBinary(body)
		id := c.byComm(r.RemoteCommID)
		if id == nil {
			return
		}
		switch id.state {
		case stReqSent, stMRARcvd:
			c.idleLocked(id, stRouteResolved)
		case stRepSent, stEstablished, stDreqSent:
			// As cm_rej_handler: an established or disconnecting id
			// enters timewait and reports the REJ too.
			c.idleLocked(id, stTimewait)
		default:
			return
		}
		c.queueLocked(id, &CMEvent{Type: EventRejected, Status: int(r.Reason),
			Param: ConnParam{PrivateData: append([]byte(nil), r.PrivateData[:]...)}})
	case cm.AttrREP:
		var r cm.REP
		_ = r.UnmarshalBinary(body)
		id := c.byComm(r.RemoteCommID)
		if id == nil {
			return
		}
		switch id.state {
		case stReqSent, stMRARcvd:
			c.stopTimerLocked(id)
			id.remoteComm, id.remoteQPN, id.remoteGUID = r.LocalCommID, r.LocalQPN, r.LocalCAGUID
			// librdmacm with a QP: RTR/RTS, then ACCEPT(valid=0) makes the RTU.
			c.sendLocked(id, c.simpleLocked(id, cm.AttrRTU))
			id.state = stEstablished
			c.queueLocked(id, &CMEvent{Type: EventEstablished, Param: ConnParam{
				PrivateData:        append([]byte(nil), r.PrivateData[:]...),
				ResponderResources: r.InitiatorDepth, InitiatorDepth: r.ResponderResources,
				FlowControl: r.EndToEndFlowControl, RNRRetryCount: r.RNRRetryCount, SRQ: r.SRQ, QPNum: r.LocalQPN}})
		case stEstablished:
			c.sendLocked(id, c.simpleLocked(id, cm.AttrRTU)) // duplicate REP: RTU again
		}
	case cm.AttrRTU:
		var r cm.RTU
		_ = r.UnmarshalBinary(body)
		if id := c.byComm(r.RemoteCommID); id != nil && id.state == stRepSent {
			c.stopTimerLocked(id)
			id.state = stEstablished
			c.queueLocked(id, &CMEvent{Type: EventEstablished, Param: ConnParam{QPNum: id.remoteQPN}})
		}
	case cm.AttrDREQ:
		var r cm.DREQ
		_ = r.UnmarshalBinary(body)
		id := c.byComm(r.RemoteCommID)
		if id == nil || id.state == stTimewait {
			// Unknown or gone: answer so the peer's DREQ does not time out.
			b, b2 := cm.NewMAD(cm.AttrDREP, tid)
			rep := cm.DREP{LocalCommID: r.RemoteCommID, RemoteCommID: r.LocalCommID}
			_, _ = rep.AppendBinary(b2[:0])
			c.sendTo(d, p.Addr.LID, p.Addr.SL, b)
			return
		}
		switch id.state {
		case stEstablished, stRepSent:
			c.stopTimerLocked(id)
			id.state = stDreqRcvd
			c.queueLocked(id, &CMEvent{Type: EventDisconnected})
		case stDreqSent:
			c.sendLocked(id, c.simpleLocked(id, cm.AttrDREP)) // crossing DREQs
		}
	case cm.AttrDREP:
		var r cm.DREP
		_ = r.UnmarshalBinary(body)
		if id := c.byComm(r.RemoteCommID); id != nil && id.state == stDreqSent {
			c.idleLocked(id, stTimewait)
			c.queueLocked(id, &CMEvent{Type: EventDisconnected})
		}
	case cm.AttrSIDRReq:
		var r cm.SIDRReq
		_ = r.UnmarshalBinary(body)
		c.onSIDRReq(d, p, tid, &r)
	case cm.AttrSIDRRep:
		var r cm.SIDRRep
		_ = r.UnmarshalBinary(body)
		id := c.byComm(r.RequestID)
		if id == nil || id.state != stSIDRReqSent {
			return
		}
		if r.Status != cm.SIDRValid {
			c.idleLocked(id, stRouteResolved)
			c.queueLocked(id, &CMEvent{Type: EventUnreachable, Status: int(r.Status)})
			return
		}
		c.stopTimerLocked(id)
		id.state = stEstablished
		id.remoteQPN = r.QPN
		c.queueLocked(id, &CMEvent{Type: EventEstablished, Param: ConnParam{QPNum: r.QPN, QKey: r.QKey,
			PrivateData: append([]byte(nil), r.PrivateData[:]...)}})
	default:
		c.log.Debug("rdmacm: dropped", "attr", fmt.Sprintf("0x%04x", attr), "slid", p.Addr.LID)
	}
}

func (c *CM) listenerFor(d *cmDev, sid uint64, ud bool) *CMID {
	for _, l := range c.ids {
		if l.state == stListen && l.dev == d && l.ud == ud && uint64(l.ps)<<16|uint64(l.src.Port) == sid {
			return l
		}
	}
	return nil
}

func (c *CM) onREQ(d *cmDev, p *fabric.Packet, tid uint64, r *cm.REQ) {
	for _, id := range c.ids {
		if id.listener != nil && id.remoteComm == r.LocalCommID && id.remoteGUID == r.LocalCAGUID && id.dev == d {
			// A duplicate REQ: the MRA again while the user decides
			// (cm_dup_req_handler); after the REP, whose own timer
			// resends it, nothing.
			if id.state == stReqRcvd {
				c.sendLocked(id, c.mraLocked(id))
			}
			return
		}
	}
	l := c.listenerFor(d, r.ServiceID, false)
	if l == nil {
		b, body := cm.NewMAD(cm.AttrREJ, tid)
		rej := cm.REJ{RemoteCommID: r.LocalCommID, MessageRejected: cm.MsgREQ, Reason: cm.RejInvalidServiceID}
		_, _ = rej.AppendBinary(body[:0])
		c.sendTo(d, p.Addr.LID, p.Addr.SL, b)
		return
	}
	if l.backlog <= 0 {
		return // the kernel refuses; the peer's retries may find room
	}
	l.backlog--
	id := c.newChildLocked(l)
	id.localComm = c.newCommLocked(id)
	id.remoteComm, id.remoteQPN, id.remoteGUID, id.tid = r.LocalCommID, r.LocalQPN, r.LocalCAGUID, tid
	id.dlid, id.sl, id.pkey = p.Addr.LID, r.PrimarySL, r.PKey
	id.dst = CMAddr{LID: r.PrimaryLocalLID, GID: r.PrimaryLocalGID, Port: uint16(r.PrivateData[2])<<8 | uint16(r.PrivateData[3])}
	// The REP (and DREQ) timer is the REQ's LocalCMResponseTimeout alone,
	// as cm_req_handler sets timeout_ms.
	id.timeout = cm.Duration(r.LocalCMResponseTimeout)
	id.maxTries = int(r.MaxCMRetries)
	id.state = stReqRcvd
	c.sendLocked(id, c.mraLocked(id))
	c.queueLocked(l, &CMEvent{Type: EventConnectRequest, ID: id, ListenID: l, credited: l, Param: ConnParam{
		PrivateData:        append([]byte(nil), r.PrivateData[cmHeaderSize:]...),
		ResponderResources: r.InitiatorDepth, InitiatorDepth: r.ResponderResources,
		FlowControl: r.EndToEndFlowControl, RetryCount: r.RetryCount, RNRRetryCount: r.RNRRetryCount,
		SRQ: r.SRQ, QPNum: r.LocalQPN}})
}

func (c *CM) mraLocked(id *CMID) []byte {
	b, body := cm.NewMAD(cm.AttrMRA, id.tid)
	m := cm.MRA{LocalCommID: id.localComm, RemoteCommID: id.remoteComm, MessageMRAed: cm.MsgREQ,
		ServiceTimeout: DefaultMRAServiceTimeout}
	_, _ = m.AppendBinary(body[:0])
	return b
}

func (c *CM) onSIDRReq(d *cmDev, p *fabric.Packet, tid uint64, r *cm.SIDRReq) {
	for _, id := range c.ids {
		if id.listener != nil && id.ud && id.remoteComm == r.RequestID && id.dlid == p.Addr.LID && id.dev == d {
			return // duplicate; the user has not answered yet
		}
	}
	l := c.listenerFor(d, r.ServiceID, true)
	if l == nil || l.backlog <= 0 {
		b, body := cm.NewMAD(cm.AttrSIDRRep, tid)
		rep := cm.SIDRRep{RequestID: r.RequestID, Status: cm.SIDRUnsupportedSID, ServiceID: r.ServiceID}
		_, _ = rep.AppendBinary(body[:0])
		c.sendTo(d, p.Addr.LID, p.Addr.SL, b)
		return
	}
	l.backlog--
	id := c.newChildLocked(l)
	id.remoteComm, id.tid, id.dlid, id.sl, id.pkey = r.RequestID, tid, p.Addr.LID, p.Addr.SL, r.PKey
	id.dst = CMAddr{LID: p.Addr.LID, Port: uint16(r.PrivateData[2])<<8 | uint16(r.PrivateData[3])}
	copy(id.dst.GID[:], r.PrivateData[4:20])
	id.state = stSIDRReqRcvd
	c.queueLocked(l, &CMEvent{Type: EventConnectRequest, ID: id, ListenID: l, credited: l, Param: ConnParam{
		PrivateData: append([]byte(nil), r.PrivateData[cmHeaderSize:]...), QKey: UDPQKey}})
}
