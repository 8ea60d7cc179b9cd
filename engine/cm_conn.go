package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"syscall"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cm"
)

// cmHeaderSize is the RDMA IP CM header RDMA CM puts before the user's
// private data in REQ and SIDR_REQ (rdmacm-abi.md section 10.5).
const cmHeaderSize = 36

// Private data limits of the RDMA CM calls.
const (
	MaxConnectPrivateData = cm.REQPrivateData - cmHeaderSize     // 56
	MaxUDPrivateData      = cm.SIDRReqPrivateData - cmHeaderSize // 180
	MaxAcceptPrivateData  = cm.REPPrivateData                    // 196
	MaxRejectPrivateData  = cm.REJPrivateData                    // 148
)

// devLocked returns the CM's port with the given LID (0: the SA session's
// port), opening it on first use. c.mu is held.
func (c *CM) devLocked(ctx context.Context, a CMAddr) (*cmDev, error) {
	lid := a.LID
	ports, err := c.fab.Ports(ctx)
	if err != nil {
		return nil, err
	}
	if lid == 0 && a.GID == (mad.GID{}) {
		// The wildcard: the SA session's port when it is a CA port, else
		// the first CA port with a LID.
		lid = c.sa.Port().LID
		if !slices.ContainsFunc(ports, func(pa fabric.PortAttr) bool { return pa.LID == lid }) {
			for _, pa := range ports {
				if pa.LID != 0 {
					lid = pa.LID
					break
				}
			}
		}
	}
	if d, ok := c.devs[lid]; ok && lid != 0 {
		return d, nil
	}
	for _, pa := range ports {
		gid := mad.NewGID(pa.GIDPrefix, pa.PortGUID)
		if (lid != 0 && pa.LID == lid) || (lid == 0 && gid == a.GID) {
			if d, ok := c.devs[pa.LID]; ok {
				return d, nil
			}
			tr, err := c.fab.Open(ctx, pa.CAName, pa.PortNum)
			if err != nil {
				return nil, err
			}
			ag := fabric.Agent{Class: mad.ClassCM, Version: cm.ClassVersion}.WithMethods(mad.MethodSend)
			id, err := tr.Register(ctx, ag)
			if err != nil {
				tr.Close()
				return nil, err
			}
			d := &cmDev{tr: tr, agent: id, attr: tr.Port()}
			c.devs[pa.LID] = d
			c.wg.Go(func() { c.read(d) })
			return d, nil
		}
	}
	return nil, errno("bind", syscall.EADDRNOTAVAIL, "no local port has address %v", a)
}

// peerDevLocked opens the CM's port at dlid when the fabric offers that
// port (every CA of the embedded simulator, the nodes of an ibsim fabric:
// hosts of this process), so the peer's side answers as Linux's CM does on
// every port, REJ 8 (SIDR_REP 1) when nothing listens there. A port the CM
// cannot open (another agent owns CM Sends on it, no ibsim slot is free)
// stays silent, as a host without a CM. c.mu is held.
func (c *CM) peerDevLocked(ctx context.Context, dlid uint16) {
	if _, ok := c.devs[dlid]; ok || dlid == 0 {
		return
	}
	ports, err := c.fab.Ports(ctx)
	if err != nil || !slices.ContainsFunc(ports, func(pa fabric.PortAttr) bool { return pa.LID == dlid }) {
		return
	}
	if _, err := c.devLocked(ctx, CMAddr{LID: dlid}); err != nil {
		c.log.Debug("rdmacm: the peer's port has no CM here", "dlid", dlid, "err", err)
	}
}

// findPort looks a remote address up among the fabric's ports (a GID to a
// LID).
func (c *CM) lidOf(ctx context.Context, a CMAddr) (uint16, mad.GID, bool) {
	ports, err := c.fab.Ports(ctx)
	if err != nil {
		return a.LID, a.GID, a.LID != 0
	}
	for _, pa := range ports {
		gid := mad.NewGID(pa.GIDPrefix, pa.PortGUID)
		if (a.LID != 0 && pa.LID == a.LID) || (a.LID == 0 && gid == a.GID) {
			return pa.LID, gid, true
		}
	}
	return a.LID, a.GID, a.LID != 0
}

// BindAddr is rdma_bind_addr: it binds id to a local port by LID or GID
// (zero: the default port) and an RDMA CM port number (0: an ephemeral
// one).
func (c *CM) BindAddr(ctx context.Context, id *CMID, a CMAddr) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kdev != nil {
		if err := c.checkLocked("bind_addr", id); err != nil {
			return err
		}
		return c.kBindLocked(ctx, "bind_addr", id, a)
	}
	return c.bindLocked(ctx, "bind_addr", id, a)
}

func (c *CM) bindLocked(ctx context.Context, op string, id *CMID, a CMAddr) error {
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	if id.state != stIdle {
		return errno(op, syscall.EINVAL, "id %d is %v, not idle", id.handle, id.state)
	}
	d, err := c.devLocked(ctx, a)
	if err != nil {
		return fmt.Errorf("rdmacm: %s: %w", op, err)
	}
	if a.Port == 0 {
		a.Port = uint16(32768 + rand.IntN(28232))
	}
	for _, o := range c.ids {
		if o != id && o.dev == d && o.ps == id.ps && o.src.Port == a.Port && o.listener == nil && o.state != stIdle {
			return errno(op, syscall.EADDRINUSE, "port %d of port space 0x%04x on lid %d", a.Port, uint16(id.ps), d.attr.LID)
		}
	}
	a.LID = d.attr.LID
	a.GID = mad.NewGID(d.attr.GIDPrefix, d.attr.PortGUID)
	id.dev, id.src, id.state = d, a, stAddrBound
	return nil
}

// ResolveAddr is rdma_resolve_addr: it binds id (to src when not nil) and
// resolves dst (by LID, or by GID among the fabric's ports), then reports
// ADDR_RESOLVED or ADDR_ERROR.
func (c *CM) ResolveAddr(ctx context.Context, id *CMID, src *CMAddr, dst CMAddr) error {
	const op = "resolve_addr"
	if c.kdev != nil {
		return c.kResolveAddr(ctx, id, src, dst)
	}
	c.mu.Lock()
	if err := c.checkLocked(op, id); err != nil {
		c.mu.Unlock()
		return err
	}
	if id.state == stIdle {
		var a CMAddr
		if src != nil {
			a = *src
		}
		if err := c.bindLocked(ctx, op, id, a); err != nil {
			c.mu.Unlock()
			return err
		}
	} else if id.state != stAddrBound {
		c.mu.Unlock()
		return errno(op, syscall.EINVAL, "id %d is %v", id.handle, id.state)
	}
	lid, gid, ok := c.lidOf(ctx, dst)
	if ok {
		id.dst = CMAddr{LID: lid, GID: gid, Port: dst.Port}
		id.dlid = lid
		id.state = stAddrResolved
		c.queueLocked(id, &CMEvent{Type: EventAddrResolved})
	} else {
		c.queueLocked(id, &CMEvent{Type: EventAddrError, Status: -int(syscall.EHOSTUNREACH)})
	}
	c.mu.Unlock()
	return c.complete(ctx, op, id)
}

// ResolveRoute is rdma_resolve_route: a PathRecord query to the SA, then
// ROUTE_RESOLVED or ROUTE_ERROR.
func (c *CM) ResolveRoute(ctx context.Context, id *CMID) error {
	const op = "resolve_route"
	if c.kdev != nil {
		return c.kResolveRoute(ctx, id)
	}
	c.mu.Lock()
	if err := c.checkLocked(op, id); err != nil {
		c.mu.Unlock()
		return err
	}
	if id.state != stAddrResolved {
		c.mu.Unlock()
		return errno(op, syscall.EINVAL, "id %d is %v, not addr resolved", id.handle, id.state)
	}
	slid, dlid := id.src.LID, id.dlid
	c.mu.Unlock()
	pr, err := c.sa.PathRecord(ctx, slid, dlid)
	c.mu.Lock()
	if id.state == stAddrResolved {
		if err != nil {
			st := -int(syscall.EHOSTUNREACH)
			if errors.Is(err, fabric.ErrTimeout) {
				st = -int(syscall.ETIMEDOUT)
			}
			c.log.Debug("rdmacm: route", "slid", slid, "dlid", dlid, "err", err)
			c.queueLocked(id, &CMEvent{Type: EventRouteError, Status: st})
		} else {
			id.route, id.sl, id.pkey = pr, pr.SL, pr.PKey
			id.state = stRouteResolved
			c.queueLocked(id, &CMEvent{Type: EventRouteResolved})
		}
	}
	c.mu.Unlock()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return c.complete(ctx, op, id)
}

// Listen is rdma_listen: backlog <= 0 means 1024.
func (c *CM) Listen(ctx context.Context, id *CMID, backlog int) error {
	const op = "listen"
	if c.kdev != nil {
		return c.kListen(ctx, id, backlog)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	if id.state == stIdle {
		if err := c.bindLocked(ctx, op, id, CMAddr{}); err != nil {
			return err
		}
	}
	if id.state != stAddrBound {
		return errno(op, syscall.EINVAL, "id %d is %v, not bound", id.handle, id.state)
	}
	for _, o := range c.ids {
		if o != id && o.state == stListen && o.dev == id.dev && o.ps == id.ps && o.src.Port == id.src.Port {
			return errno(op, syscall.EADDRINUSE, "port %d already has a listener", id.src.Port)
		}
	}
	if backlog <= 0 || backlog > 1024 {
		backlog = 1024
	}
	id.backlog = backlog
	id.state = stListen
	return nil
}

func (id *CMID) serviceID() uint64 { return uint64(id.ps)<<16 | uint64(id.dst.Port) }

// Connect is rdma_connect: REQ (SIDR_REQ for UD ids) to the resolved peer,
// resent on the CM timer; ESTABLISHED, REJECTED or UNREACHABLE follow.
func (c *CM) Connect(ctx context.Context, id *CMID, p ConnParam) error {
	const op = "connect"
	if c.kdev != nil {
		return c.kConnect(ctx, id, p)
	}
	c.mu.Lock()
	if err := c.checkLocked(op, id); err != nil {
		c.mu.Unlock()
		return err
	}
	if id.state != stRouteResolved {
		c.mu.Unlock()
		return errno(op, syscall.EINVAL, "id %d is %v, not route resolved", id.handle, id.state)
	}
	max := MaxConnectPrivateData
	if id.ud {
		max = MaxUDPrivateData
	}
	if len(p.PrivateData) > max {
		c.mu.Unlock()
		return errno(op, syscall.EINVAL, "%d bytes of private data > %d", len(p.PrivateData), max)
	}
	rt, retries := c.opts.ResponseTimeout, c.opts.MaxRetries
	if p.ResponseTimeout != 0 {
		rt = min(p.ResponseTimeout, 31)
	}
	if p.MaxRetries != 0 {
		retries = min(p.MaxRetries, 15)
	}
	c.peerDevLocked(ctx, id.dlid)
	id.localComm = c.newCommLocked(id)
	id.tid = rand.Uint64() &^ (0xffffffff << 32)
	hdr := make([]byte, cmHeaderSize)
	hdr[1] = 6 << 4
	binary.BigEndian.PutUint16(hdr[2:], id.src.Port)
	copy(hdr[4:20], id.src.GID[:])
	copy(hdr[20:36], id.dst.GID[:])
	plt := id.route.PacketLifeTime
	id.timeout = 2*cm.Duration(plt) + cm.Duration(rt)
	if id.ud {
		var r cm.SIDRReq
		r.RequestID = id.localComm
		r.PKey = id.pkey
		r.ServiceID = id.serviceID()
		copy(r.PrivateData[copy(r.PrivateData[:], hdr):], p.PrivateData)
		b, body := cm.NewMAD(cm.AttrSIDRReq, id.tid)
		_, _ = r.AppendBinary(body[:0])
		id.state = stSIDRReqSent
		c.sendTimedLocked(id, b, int(retries))
	} else {
		if id.qpn == 0 {
			id.qpn = c.qpnLocked(p.QPNum)
		}
		pr := id.route
		r := cm.REQ{LocalCommID: id.localComm, ServiceID: id.serviceID(), LocalCAGUID: id.dev.attr.NodeGUID,
			LocalQPN: id.qpn, ResponderResources: p.ResponderResources, InitiatorDepth: p.InitiatorDepth,
			RemoteCMResponseTimeout: rt, LocalCMResponseTimeout: rt,
			EndToEndFlowControl: p.FlowControl & 1, StartingPSN: rand.Uint32N(1 << 24),
			RetryCount: min(p.RetryCount, 7), PKey: id.pkey, PathMTU: pr.MTU, RNRRetryCount: min(p.RNRRetryCount, 7),
			MaxCMRetries: retries, SRQ: p.SRQ & 1, PrimaryLocalLID: id.src.LID, PrimaryRemoteLID: id.dlid,
			PrimaryFlowLabel: pr.FlowLabel, PrimaryPacketRate: pr.Rate, PrimaryTrafficClass: pr.TClass,
			PrimaryHopLimit: pr.HopLimit, PrimarySL: pr.SL, PrimarySubnetLocal: 1,
			PrimaryLocalACKTimeout: min(plt+1, 31)}
		r.PrimaryLocalGID, r.PrimaryRemoteGID = id.src.GID, id.dst.GID
		copy(r.PrivateData[copy(r.PrivateData[:], hdr):], p.PrivateData)
		b, body := cm.NewMAD(cm.AttrREQ, id.tid)
		if _, err := r.AppendBinary(body[:0]); err != nil {
			c.mu.Unlock()
			return fmt.Errorf("rdmacm: %s: %w", op, err)
		}
		id.state = stReqSent
		c.sendTimedLocked(id, b, int(retries))
	}
	c.mu.Unlock()
	return c.complete(ctx, op, id)
}
