package ibcm

import (
	"context"
	"encoding/binary"
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

// Channel is one event channel of a Device (an rdma_cm fd): a
// fabric.CMChannel whose FIFO holds the events of the ids it owns.
type Channel struct {
	d *Device
	// guarded by d.mu
	q      []*event
	wake   chan struct{} // closed and replaced when q grows or on close
	closed bool
}

var _ fabric.CMChannel = (*Channel)(nil)

// event is one queued event: of id (for a CONNECT_REQUEST, the new id),
// counted on credited when fetched (the listener, for a CONNECT_REQUEST).
type event struct {
	raw      fabric.CMRawEvent
	id       *kid
	credited *kid
}

func (ch *Channel) push(ev *event) {
	ch.q = append(ch.q, ev)
	close(ch.wake)
	ch.wake = make(chan struct{})
}

// queueLocked puts an event of i on the channel that owns it; as
// ucma_event_handler does, events of a new id whose uid is not set yet
// (not accepted) are dropped.
func (d *Device) queueLocked(i *kid, typ int, status int, fill func(*fabric.CMRawEvent)) {
	if i.ch == nil || i.ch.closed || (i.uid == 0 && i.listener != nil) {
		return
	}
	ev := &event{raw: fabric.CMRawEvent{UID: i.uid, ID: i.handle, Type: typ, Status: status}, id: i, credited: i}
	if fill != nil {
		fill(&ev.raw)
	}
	i.ch.push(ev)
}

// closeLocked closes the channel: its ids are destroyed.
func (ch *Channel) closeLocked() {
	if ch.closed {
		return
	}
	d := ch.d
	for _, i := range d.ids {
		if i.ch == ch {
			d.destroyLocked(i)
		}
	}
	ch.closed = true
	ch.q = nil
	close(ch.wake)
	delete(d.chans, ch)
}

// Close closes the channel; the device destroys the ids it owns.
// Idempotent.
func (ch *Channel) Close() error {
	ch.d.mu.Lock()
	defer ch.d.mu.Unlock()
	ch.closeLocked()
	return nil
}

// lookupLocked finds id for a command on ch: ENOENT when unknown, EINVAL
// when another channel owns it.
func (ch *Channel) lookupLocked(op string, id uint32) (*kid, error) {
	d := ch.d
	if ch.closed || d.closed {
		return nil, fmt.Errorf("ibcm: %s: id %d: %w", op, id, net.ErrClosed)
	}
	i, ok := d.ids[id]
	if !ok {
		return nil, devErr(op, id, syscall.ENOENT, "")
	}
	if i.ch != ch {
		return nil, devErr(op, id, syscall.EINVAL, "owned by another channel")
	}
	return i, nil
}

// do runs cmd on the id for a command of ch, under d.mu.
func (ch *Channel) do(op string, id uint32, cmd func(*kid) error) error {
	ch.d.mu.Lock()
	defer ch.d.mu.Unlock()
	i, err := ch.lookupLocked(op, id)
	if err != nil {
		return err
	}
	return cmd(i)
}

// CreateID is CREATE_ID.
func (ch *Channel) CreateID(uid uint64, ps uint16, qpType uint8) (uint32, error) {
	d := ch.d
	d.mu.Lock()
	defer d.mu.Unlock()
	if ch.closed || d.closed {
		return 0, fmt.Errorf("ibcm: create_id: %w", net.ErrClosed)
	}
	d.nextHandle++
	i := &kid{handle: d.nextHandle, uid: uid, ps: ps, ud: qpType == qpTypeUD, ch: ch}
	d.ids[i.handle] = i
	return i.handle, nil
}

// DestroyID is DESTROY_ID: the connection torn down, the id's unread
// events dropped (a listener's unread requests destroy their new ids).
func (ch *Channel) DestroyID(id uint32) (uint32, error) {
	d := ch.d
	d.mu.Lock()
	defer d.mu.Unlock()
	i, err := ch.lookupLocked("destroy_id", id)
	if err != nil {
		return 0, err
	}
	d.destroyLocked(i)
	return i.reported, nil
}

// MigrateID is MIGRATE_ID written to ch for an id owned by from: the id's
// unread events (and a listener's CONNECT_REQUESTs, whose new ids move with
// it) go to ch's tail, in order.
func (ch *Channel) MigrateID(id uint32, from fabric.CMChannel) (uint32, error) {
	d := ch.d
	d.mu.Lock()
	defer d.mu.Unlock()
	old, ok := from.(*Channel)
	if !ok || old.d != d {
		return 0, devErr("migrate_id", id, syscall.EINVAL, "the source is no channel of this device")
	}
	if ch.closed {
		return 0, fmt.Errorf("ibcm: migrate_id: id %d: %w", id, net.ErrClosed)
	}
	i, err := old.lookupLocked("migrate_id", id)
	if err != nil {
		return 0, err
	}
	var keep, moved []*event
	for _, ev := range old.q {
		if ev.id == i || (ev.credited == i && ev.id.ch == old) {
			moved = append(moved, ev)
			if ev.id != i {
				ev.id.ch = ch
			}
			continue
		}
		keep = append(keep, ev)
	}
	old.q = keep
	i.ch = ch
	for _, ev := range moved {
		ch.push(ev)
	}
	return i.reported, nil
}

// Bind is BIND: a zero GID is the default port, a zero service ID an
// ephemeral port number.
func (ch *Channel) Bind(id uint32, a fabric.CMAddr) error {
	d := ch.d
	return ch.do("bind", id, func(i *kid) error {
		return d.bindLocked("bind", i, a)
	})
}

func (d *Device) bindLocked(op string, i *kid, a fabric.CMAddr) error {
	if i.state != stIdle {
		return devErr(op, i.handle, syscall.EINVAL, "not idle")
	}
	gid, num := a.GID, uint16(a.ServiceID)
	if a.IsIP() {
		// An IP address names the port whose IPoIB interface has it.
		a.IP = a.IP.Unmap()
		gid, num = mad.GID{}, a.Port
		if !a.IP.IsUnspecified() {
			pa, ok := d.portOfIP(context.Background(), a.IP)
			if !ok {
				return devErr(op, i.handle, syscall.EADDRNOTAVAIL, "no IPoIB interface has address %v", a.IP)
			}
			gid = gidOf(pa)
		}
	} else if a.ServiceID != 0 && a.ServiceID>>16 != uint64(i.ps) {
		return devErr(op, i.handle, syscall.EPROTONOSUPPORT, "service ID 0x%x is not of port space 0x%04x", a.ServiceID, i.ps)
	}
	// A wildcard address takes the default port as its source, and a
	// listener on it answers on every port (listenerFor).
	wild := gid == (mad.GID{})
	p, err := d.portLocked(context.Background(), gid, 0)
	if err != nil {
		return fmt.Errorf("ibcm: %s: id %d: %w", op, i.handle, err)
	}
	if num == 0 {
		num = uint16(ephemeralLow + rand.IntN(ephemeralN))
	}
	was := *i
	i.port, i.wild, i.srcPort, i.ip, i.srcIP, i.afonly = p, wild, num, a.IsIP(), a.IP, a.IsIP() && a.IP.Is4()
	for _, o := range d.ids {
		if o != i && o.ps == i.ps && o.srcPort == num && o.listener == nil && o.state != stIdle {
			if e := bindConflict(i, o); e != 0 {
				*i = was
				return devErr(op, i.handle, e, "port %d of port space 0x%04x on lid %d", num, i.ps, p.attr.LID)
			}
		}
	}
	i.pkey, i.state = a.PKey, stBound
	if i.pkey == 0 {
		i.pkey = 0xffff
	}
	return nil
}

// bindConflict is why i and o, bound to the same port number of one port
// space, cannot both be (0: they can). Between IP ids it is
// cma_check_port's rule: AF_INET and AF_INET6 ids that are both
// family-only never clash, a wildcard clashes with everything
// (EADDRNOTAVAIL), the same address is EADDRINUSE. AF_IB ids clash on the
// same port or with a wildcard (EADDRINUSE); an IP and an AF_IB id only
// when one is a wildcard.
func bindConflict(i, o *kid) syscall.Errno {
	switch {
	case i.ip && o.ip:
		if i.afonly && o.afonly && i.srcIP.Is4() != o.srcIP.Is4() {
			return 0
		}
		if i.srcIP.IsUnspecified() || o.srcIP.IsUnspecified() {
			return syscall.EADDRNOTAVAIL
		}
		if i.srcIP == o.srcIP {
			return syscall.EADDRINUSE
		}
		return 0
	case i.ip != o.ip:
		if i.wild || o.wild {
			return syscall.EADDRNOTAVAIL
		}
		return 0
	}
	if o.port == i.port || o.wild || i.wild {
		return syscall.EADDRINUSE
	}
	return 0
}

// ResolveAddr is RESOLVE_ADDR: ADDR_RESOLVED follows at once (an AF_IB
// destination needs no lookup; its LID is found by the route).
func (ch *Channel) ResolveAddr(id uint32, src *fabric.CMAddr, dst fabric.CMAddr, timeout time.Duration) error {
	const op = "resolve_addr"
	d := ch.d
	return ch.do(op, id, func(i *kid) error {
		if i.state == stIdle {
			var a fabric.CMAddr
			switch {
			case src != nil:
				a = *src
			case dst.IsIP():
				a = fabric.CMAddr{IP: ipFamilyAny(dst.IP.Unmap().Is4())}
			}
			if a.IsIP() != dst.IsIP() {
				return devErr(op, id, syscall.EINVAL, "source %v and destination %v are of different families", a, dst)
			}
			if err := d.bindLocked(op, i, a); err != nil {
				return err
			}
		}
		if i.state != stBound {
			return devErr(op, id, syscall.EINVAL, "not bound")
		}
		if i.ip != dst.IsIP() {
			return devErr(op, id, syscall.EINVAL, "bound to an address of another family than %v", dst)
		}
		if dst.IsIP() {
			return d.resolveIPLocked(i, dst, timeout)
		}
		if dst.GID == (mad.GID{}) {
			return devErr(op, id, syscall.EINVAL, "no destination GID")
		}
		i.dgid, i.dport = dst.GID, uint16(dst.ServiceID)
		i.dlid = d.lidOfGID(context.Background(), dst.GID)
		i.state = stAddrResolved
		d.queueLocked(i, evAddrResolved, 0, nil)
		return nil
	})
}

// resolveIPLocked resolves an IP destination as IPoIB's neighbour
// discovery would: to the port whose IPoIB interface has the address,
// from a local port with an address of the same family (the bound one,
// else the id's port's, else any port's). ADDR_RESOLVED follows at once;
// an address no port has is ADDR_ERROR -ETIMEDOUT after timeout, no
// local address of the family ADDR_ERROR -ENETUNREACH at once (no route).
func (d *Device) resolveIPLocked(i *kid, dst fabric.CMAddr, timeout time.Duration) error {
	ctx := context.Background()
	dip := dst.IP.Unmap()
	if !i.srcIP.IsUnspecified() && i.srcIP.Is4() != dip.Is4() {
		return devErr("resolve_addr", i.handle, syscall.EINVAL, "source %v and destination %v are of different families", i.srcIP, dip)
	}
	src, port := i.srcIP, i.port
	if src.IsUnspecified() {
		ok := false
		if src, ok = d.ipOfPort(port.attr, dip.Is4()); !ok {
			for _, a := range d.ipoibAddrs() {
				if a.IP.Is4() != dip.Is4() {
					continue
				}
				if pa, found := d.portOfIP(ctx, a.IP); found {
					p, err := d.portLocked(ctx, gidOf(pa), 0)
					if err == nil {
						src, port, ok = a.IP, p, true
						break
					}
				}
			}
		}
		if !ok {
			d.queueLocked(i, evAddrError, -int(syscall.ENETUNREACH), nil)
			return nil
		}
	}
	pa, ok := d.portOfIP(ctx, dip)
	if !ok {
		gen := i.gen
		time.AfterFunc(timeout, func() {
			d.mu.Lock()
			defer d.mu.Unlock()
			if i.gen == gen && i.state == stBound && !d.closed {
				d.queueLocked(i, evAddrError, -int(syscall.ETIMEDOUT), nil)
			}
		})
		return nil
	}
	i.port, i.wild, i.srcIP = port, false, src
	i.dstIP, i.dport, i.dgid, i.dlid = dip, dst.Port, gidOf(pa), pa.LID
	i.state = stAddrResolved
	d.queueLocked(i, evAddrResolved, 0, nil)
	return nil
}

// ResolveRoute is RESOLVE_ROUTE: a PathRecord query to the SA, in the
// background as the kernel's; ROUTE_RESOLVED or ROUTE_ERROR follows
// within timeout (-ETIMEDOUT when the SA did not answer in time,
// -EHOSTUNREACH when it had no path).
func (ch *Channel) ResolveRoute(id uint32, timeout time.Duration) error {
	const op = "resolve_route"
	d := ch.d
	return ch.do(op, id, func(i *kid) error {
		if i.state != stAddrResolved {
			return devErr(op, id, syscall.EINVAL, "not addr resolved")
		}
		i.state = stRouteQuery
		slid, dlid := i.port.attr.LID, i.dlid
		sgid, dgid := mad.NewGID(i.port.attr.GIDPrefix, i.port.attr.PortGUID), i.dgid
		d.wg.Go(func() {
			ctx, cancel := context.WithTimeout(d.ctx, timeout)
			pr, err := d.pathTo(ctx, slid, dlid, sgid, dgid)
			cancel()
			d.mu.Lock()
			defer d.mu.Unlock()
			if i.state != stRouteQuery {
				return // destroyed meanwhile
			}
			if err != nil {
				st := -int(syscall.EHOSTUNREACH)
				if errors.Is(err, fabric.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
					st = -int(syscall.ETIMEDOUT)
				}
				d.log.Debug("ibcm: route", "slid", slid, "dgid", dgid, "err", err)
				i.state = stAddrResolved
				d.queueLocked(i, evRouteError, st, nil)
				return
			}
			i.route, i.sl, i.dlid = pr, pr.SL, pr.DLID
			if pr.PKey != 0 {
				i.pkey = pr.PKey
			}
			i.state = stRouteResolved
			d.queueLocked(i, evRouteResolved, 0, nil)
		})
		return nil
	})
}

// Listen is LISTEN (backlog <= 0 or over 1024: 1024).
func (ch *Channel) Listen(id uint32, backlog int) error {
	d := ch.d
	return ch.do("listen", id, func(i *kid) error {
		if i.state != stBound {
			return devErr("listen", id, syscall.EINVAL, "not bound")
		}
		for _, o := range d.ids {
			if o != i && o.state == stListen && o.ps == i.ps && o.srcPort == i.srcPort && bindConflict(i, o) != 0 {
				return devErr("listen", id, syscall.EADDRINUSE, "port %d already has a listener", i.srcPort)
			}
		}
		if backlog <= 0 || backlog > maxBacklog {
			backlog = maxBacklog
		}
		i.backlog = backlog
		i.state = stListen
		return nil
	})
}

// Connect is CONNECT: REQ (SIDR_REQ for UD ids) resent on the CM timer.
func (ch *Channel) Connect(id uint32, p *fabric.CMConnParam) error {
	const op = "connect"
	d := ch.d
	return ch.do(op, id, func(i *kid) error {
		if i.state != stRouteResolved || p == nil {
			return devErr(op, id, syscall.EINVAL, "not route resolved")
		}
		max := cm.REQPrivateData
		if i.ud {
			max = cm.SIDRReqPrivateData
		}
		pd := p.PrivateData
		if i.ip {
			// RDMA CM's IP header goes first (cma_format_hdr).
			max -= ipHdrSize
			if len(pd) <= max {
				pd = make([]byte, ipHdrSize+len(p.PrivateData))
				putIPHdr(pd, i.srcIP, i.dstIP, i.srcPort)
				copy(pd[ipHdrSize:], p.PrivateData)
			}
		}
		if len(p.PrivateData) > max {
			return devErr(op, id, syscall.EINVAL, "%d bytes of private data > %d", len(p.PrivateData), max)
		}
		rt, retries := d.opts.ResponseTimeout, d.opts.MaxRetries
		if p.ResponseTimeout != 0 {
			rt = min(p.ResponseTimeout, 31)
		}
		if p.MaxCMRetries != 0 {
			retries = min(p.MaxCMRetries, 15)
		}
		d.peerPortLocked(context.Background(), i.dlid)
		i.localComm = d.newCommLocked(i)
		i.tid = rand.Uint64() &^ (0xffffffff << 32)
		plt := i.route.PacketLifeTime
		i.timeout = 2*cm.Duration(plt) + cm.Duration(rt)
		i.qpn = p.QPNum & 0xffffff
		sgid := mad.NewGID(i.port.attr.GIDPrefix, i.port.attr.PortGUID)
		sid := uint64(i.ps)<<16 | uint64(i.dport)
		if i.ud {
			r := cm.SIDRReq{RequestID: i.localComm, PKey: i.pkey, ServiceID: sid}
			copy(r.PrivateData[:], pd)
			b, body := cm.NewMAD(cm.AttrSIDRReq, i.tid)
			_, _ = r.AppendBinary(body[:0])
			i.state = stSIDRReqSent
			d.sendTimedLocked(i, b, int(retries))
			return nil
		}
		pr := i.route
		r := cm.REQ{LocalCommID: i.localComm, ServiceID: sid, LocalCAGUID: i.port.attr.NodeGUID,
			LocalQPN: i.qpn, ResponderResources: p.ResponderResources, InitiatorDepth: p.InitiatorDepth,
			RemoteCMResponseTimeout: rt, LocalCMResponseTimeout: rt,
			EndToEndFlowControl: p.FlowControl & 1, StartingPSN: rand.Uint32N(1 << 24),
			RetryCount: min(p.RetryCount, 7), PKey: i.pkey, PathMTU: pr.MTU, RNRRetryCount: min(p.RNRRetryCount, 7),
			MaxCMRetries: retries, SRQ: p.SRQ & 1, PrimaryLocalLID: i.port.attr.LID, PrimaryRemoteLID: i.dlid,
			PrimaryFlowLabel: pr.FlowLabel, PrimaryPacketRate: pr.Rate, PrimaryTrafficClass: pr.TClass,
			PrimaryHopLimit: pr.HopLimit, PrimarySL: pr.SL, PrimarySubnetLocal: 1,
			PrimaryLocalACKTimeout: min(plt+1, 31)}
		r.PrimaryLocalGID, r.PrimaryRemoteGID = sgid, i.dgid
		copy(r.PrivateData[:], pd)
		b, body := cm.NewMAD(cm.AttrREQ, i.tid)
		if _, err := r.AppendBinary(body[:0]); err != nil {
			return fmt.Errorf("ibcm: %s: id %d: %w", op, id, err)
		}
		i.state = stReqSent
		d.sendTimedLocked(i, b, int(retries))
		return nil
	})
}

// Accept is ACCEPT: with p on a passive id, REP (SIDR_REP for UD); with
// nil p on an active id after CONNECT_RESPONSE, the RTU.
func (ch *Channel) Accept(id uint32, uid uint64, p *fabric.CMConnParam) error {
	const op = "accept"
	d := ch.d
	return ch.do(op, id, func(i *kid) error {
		if p == nil {
			if i.state != stRepRcvd {
				return devErr(op, id, syscall.EINVAL, "no CONNECT_RESPONSE to answer")
			}
			i.uid = uid
			d.sendLocked(i, d.simpleLocked(i, cm.AttrRTU))
			i.state = stEstablished
			return nil
		}
		switch i.state {
		case stReqRcvd:
			if len(p.PrivateData) > cm.REPPrivateData {
				return devErr(op, id, syscall.EINVAL, "%d bytes of private data > %d", len(p.PrivateData), cm.REPPrivateData)
			}
			i.uid = uid
			i.qpn = p.QPNum & 0xffffff
			r := cm.REP{LocalCommID: i.localComm, RemoteCommID: i.remoteComm, LocalQPN: i.qpn,
				StartingPSN: rand.Uint32N(1 << 24), ResponderResources: p.ResponderResources,
				InitiatorDepth: p.InitiatorDepth, EndToEndFlowControl: p.FlowControl & 1,
				RNRRetryCount: min(p.RNRRetryCount, 7), SRQ: p.SRQ & 1, LocalCAGUID: i.port.attr.NodeGUID}
			copy(r.PrivateData[:], p.PrivateData)
			b, body := cm.NewMAD(cm.AttrREP, i.tid)
			_, _ = r.AppendBinary(body[:0])
			i.state = stRepSent
			d.sendTimedLocked(i, b, i.maxTries)
		case stSIDRReqRcvd:
			if len(p.PrivateData) > cm.SIDRRepPrivateData {
				return devErr(op, id, syscall.EINVAL, "%d bytes of private data > %d", len(p.PrivateData), cm.SIDRRepPrivateData)
			}
			i.uid = uid
			i.qpn = p.QPNum & 0xffffff
			qkey := p.QKey
			if i.ps == psUDP || i.ps == psIPoIB {
				qkey = udpQKey
			}
			d.sendSIDRRepLocked(i, cm.SIDRValid, qkey, p.PrivateData)
			i.state = stEstablished
		default:
			return devErr(op, id, syscall.EINVAL, "not a connect request")
		}
		return nil
	})
}

// Reject is REJECT: REJ (reason 28, consumer defined) with private data,
// or SIDR_REP status 2 for UD.
func (ch *Channel) Reject(id uint32, pd []byte) error {
	const op = "reject"
	d := ch.d
	return ch.do(op, id, func(i *kid) error {
		max := cm.REJPrivateData
		if i.ud {
			max = cm.SIDRRepPrivateData
		}
		if len(pd) > max {
			return devErr(op, id, syscall.EINVAL, "%d bytes of private data > %d", len(pd), max)
		}
		switch i.state {
		case stReqRcvd:
			d.sendLocked(i, d.rejLocked(i, cm.MsgREQ, cm.RejConsumerDefined, pd))
		case stRepRcvd:
			d.sendLocked(i, d.rejLocked(i, cm.MsgREP, cm.RejConsumerDefined, pd))
		case stSIDRReqRcvd:
			d.sendSIDRRepLocked(i, cm.SIDRRejected, 0, pd)
		default:
			return devErr(op, id, syscall.EINVAL, "not a connect request")
		}
		d.idleLocked(i, stTimewait)
		return nil
	})
}

// Disconnect is DISCONNECT: DREQ, or the DREP after the peer's DREQ.
func (ch *Channel) Disconnect(id uint32) error {
	d := ch.d
	return ch.do("disconnect", id, func(i *kid) error {
		switch {
		case i.state == stEstablished && !i.ud:
			i.state = stDreqSent
			d.sendTimedLocked(i, d.dreqLocked(i), i.maxTries)
		case i.state == stDreqRcvd:
			d.sendLocked(i, d.simpleLocked(i, cm.AttrDREP))
			d.idleLocked(i, stTimewait)
		default:
			return devErr("disconnect", id, syscall.EINVAL, "not connected")
		}
		return nil
	})
}

// QueryAddr is QUERY with RDMA_USER_CM_QUERY_ADDR.
func (ch *Channel) QueryAddr(id uint32) (fabric.CMAddrInfo, error) {
	d := ch.d
	d.mu.Lock()
	defer d.mu.Unlock()
	i, err := ch.lookupLocked("query", id)
	if err != nil {
		return fabric.CMAddrInfo{}, err
	}
	info := fabric.CMAddrInfo{PKey: i.pkey}
	if i.ip {
		if i.port != nil {
			a := i.port.attr
			info.HasSrc, info.NodeGUID, info.PortNum = true, a.NodeGUID, uint8(a.PortNum)
			info.Src = fabric.CMAddr{IP: i.srcIP, Port: i.srcPort}
		}
		if i.dstIP.IsValid() {
			info.HasDst, info.Dst = true, fabric.CMAddr{IP: i.dstIP, Port: i.dport}
		}
		return info, nil
	}
	if i.port != nil {
		a := i.port.attr
		info.HasSrc, info.NodeGUID, info.PortNum = true, a.NodeGUID, uint8(a.PortNum)
		info.Src = fabric.CMAddr{GID: mad.NewGID(a.GIDPrefix, a.PortGUID), PKey: i.pkey, ServiceID: i.sid()}
		if i.wild {
			info.Src.GID = mad.GID{} // the wildcard, as the kernel reports it
		}
	}
	if i.dgid != (mad.GID{}) {
		info.HasDst = true
		info.Dst = fabric.CMAddr{GID: i.dgid, PKey: i.pkey, ServiceID: uint64(i.ps)<<16 | uint64(i.dport)}
	}
	return info, nil
}

// GetEvent waits until an event is queued or ctx ends, then fetches it,
// counting it in its id's events_reported (a CONNECT_REQUEST on the
// listener, which gets its backlog credit back).
func (ch *Channel) GetEvent(ctx context.Context) (fabric.CMRawEvent, error) {
	d := ch.d
	for {
		d.mu.Lock()
		if ch.closed {
			d.mu.Unlock()
			return fabric.CMRawEvent{}, fmt.Errorf("ibcm: get_event: %w", net.ErrClosed)
		}
		if len(ch.q) > 0 {
			ev := ch.q[0]
			ch.q = ch.q[1:]
			ev.credited.reported++
			if ev.raw.Type == evConnectRequest {
				ev.credited.backlog++
			}
			d.mu.Unlock()
			return ev.raw, nil
		}
		wake := ch.wake
		d.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return fabric.CMRawEvent{}, ctx.Err()
		}
	}
}

// Wait waits until an event is queued or ctx ends.
func (ch *Channel) Wait(ctx context.Context) error { return ch.WaitPending(ctx, 1) }

// WaitPending waits until at least n events are queued, unfetched, or ctx
// ends.
func (ch *Channel) WaitPending(ctx context.Context, n int) error {
	d := ch.d
	for {
		d.mu.Lock()
		have, closed, wake := len(ch.q), ch.closed, ch.wake
		d.mu.Unlock()
		switch {
		case closed:
			return fmt.Errorf("ibcm: poll: %w", net.ErrClosed)
		case have >= n:
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Pending returns the number of events queued and not yet fetched.
func (ch *Channel) Pending() int {
	ch.d.mu.Lock()
	defer ch.d.mu.Unlock()
	return len(ch.q)
}

// destroyLocked is DESTROY_ID's work: the connection torn down, timers
// stopped, the id's unread events dropped, a listener's unread requests'
// new ids destroyed (REJ to their peers).
func (d *Device) destroyLocked(i *kid) {
	if i.state == stDestroyed {
		return
	}
	switch i.state {
	case stEstablished:
		if !i.ud {
			d.sendLocked(i, d.dreqLocked(i))
		}
	case stDreqRcvd:
		d.sendLocked(i, d.simpleLocked(i, cm.AttrDREP))
	case stReqRcvd:
		d.sendLocked(i, d.rejLocked(i, cm.MsgREQ, cm.RejConsumerDefined, nil))
	case stRepRcvd:
		d.sendLocked(i, d.rejLocked(i, cm.MsgREP, cm.RejConsumerDefined, nil))
	case stRepSent:
		// cm_format_rej names no message from REP_SENT: "other".
		d.sendLocked(i, d.rejLocked(i, cm.MsgOther, cm.RejConsumerDefined, nil))
	case stReqSent, stMRARcvd:
		// REJ timeout with the local CA's GUID as ARI, as cm_destroy_id.
		b := d.rejLocked(i, cm.MsgOther, cm.RejTimeout, nil)
		var r cm.REJ
		_ = r.UnmarshalBinary(b[mad.HeaderSize:])
		r.RejectInfoLength = 8
		binary.BigEndian.PutUint64(r.ARI[:], i.port.attr.NodeGUID)
		_, _ = r.AppendBinary(b[mad.HeaderSize:mad.HeaderSize])
		d.sendLocked(i, b)
	case stSIDRReqRcvd:
		d.sendSIDRRepLocked(i, cm.SIDRRejected, 0, nil)
	}
	d.stopTimerLocked(i)
	if i.localComm != 0 {
		delete(d.comms, i.localComm)
	}
	i.state = stDestroyed
	delete(d.ids, i.handle)
	var keep []*event
	var children []*kid
	for _, ev := range i.ch.q {
		switch {
		case ev.id == i:
		case ev.credited == i && ev.raw.Type == evConnectRequest:
			children = append(children, ev.id)
		default:
			keep = append(keep, ev)
		}
	}
	i.ch.q = keep
	for _, c := range children {
		d.destroyLocked(c)
	}
}
