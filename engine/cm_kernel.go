package engine

// RDMA CM over a platform's own CM (fabric.CMProvider: the kernel's
// rdma_cm): the engine keeps librdmacm's userland layer (event channels,
// per-id acks with events_reported against events_completed, migrate and
// destroy waiting for acks, synchronous ids on private channels, the
// CONNECT_RESPONSE answered with the RTU) and drives the platform's
// channels, one per EventChannel, instead of its own IB CM. Addresses are
// AF_IB; the platform resolves addresses and routes (the kernel asks the
// SA).

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// DefaultResolveTimeout is the timeout given to the platform's address
// and route resolution when the call's ctx has no deadline (librdmacm's
// callers commonly pass 2000 ms).
const DefaultResolveTimeout = 2 * time.Second

// QP types of the ucma ABI.
const (
	qpTypeRC uint8 = 2
	qpTypeUD uint8 = 4
)

// defaultPKey is the P_Key of the addresses the engine builds: the
// default partition, full membership.
const defaultPKey = 0xffff

// kOpen opens the fabric's RDMA CM when it has one: the device, nil when
// the fabric offers none or the host lacks it (errors.ErrUnsupported).
func kOpen(fab fabric.Fabric) (fabric.CMDevice, error) {
	p, ok := fab.(fabric.CMProvider)
	if !ok {
		return nil, nil
	}
	d, err := p.OpenCM()
	switch {
	case err == nil:
		return d, nil
	case errors.Is(err, errors.ErrUnsupported):
		return nil, nil
	}
	return nil, fmt.Errorf("rdmacm: %w", err)
}

// kNewChannelLocked is newChannelLocked with the platform's channel.
func (c *CM) kNewChannelLocked(private bool) (*EventChannel, error) {
	kch, err := c.kdev.OpenChannel()
	if err != nil {
		return nil, err
	}
	ch := c.newChannelLocked(private)
	ch.kch = kch
	return ch, nil
}

// kErr wraps a platform error of op on id; an EINVAL also says what the
// engine believes of the id's state and what the call needs.
func kErr(op string, id *CMID, err error, need string) error {
	if errors.Is(err, syscall.EINVAL) && need != "" {
		return fmt.Errorf("rdmacm: %s: id %d is %v, %s: %w", op, id.handle, id.state, need, err)
	}
	return fmt.Errorf("rdmacm: %s: id %d: %w", op, id.handle, err)
}

// resolveTimeout is the platform timeout for a resolution under ctx.
func resolveTimeout(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl), time.Millisecond)
	}
	return DefaultResolveTimeout
}

// kLocal turns a local address into AF_IB: a LID names one of the
// fabric's ports, a GID goes as it is, neither is the wildcard.
func (c *CM) kLocal(ctx context.Context, op string, ps PortSpace, a CMAddr) (fabric.CMAddr, error) {
	out := fabric.CMAddr{GID: a.GID, PKey: defaultPKey}
	if a.Port != 0 {
		out.ServiceID = uint64(ps)<<16 | uint64(a.Port)
	}
	if a.LID == 0 {
		return out, nil
	}
	ports, err := c.fab.Ports(ctx)
	if err != nil {
		return out, fmt.Errorf("rdmacm: %s: %w", op, err)
	}
	for _, pa := range ports {
		if pa.LID == a.LID {
			out.GID = mad.NewGID(pa.GIDPrefix, pa.PortGUID)
			return out, nil
		}
	}
	return out, errno(op, syscall.EADDRNOTAVAIL, "no local port has address %v", a)
}

// kRemote turns a destination into AF_IB: a GID as it is, a LID of a
// local port by its GID, another LID by the DGID of a PathRecord from
// the SA (from slid, or the SA session's port).
func (c *CM) kRemote(ctx context.Context, op string, ps PortSpace, slid uint16, a CMAddr) (fabric.CMAddr, error) {
	out := fabric.CMAddr{GID: a.GID, PKey: defaultPKey, ServiceID: uint64(ps)<<16 | uint64(a.Port)}
	if a.GID != (mad.GID{}) {
		return out, nil
	}
	if a.LID == 0 {
		return out, errno(op, syscall.EINVAL, "destination %v has neither LID nor GID", a)
	}
	if l, err := c.kLocal(ctx, op, ps, CMAddr{LID: a.LID}); err == nil {
		out.GID = l.GID
		return out, nil
	}
	if slid == 0 {
		slid = c.sa.Port().LID
	}
	pr, err := c.sa.PathRecord(ctx, slid, a.LID)
	if err != nil {
		return out, fmt.Errorf("rdmacm: %s: GID of lid %d: %w (%w)", op, a.LID, syscall.EHOSTUNREACH, err)
	}
	out.GID = pr.DGID
	return out, nil
}

// kAddrsLocked asks the platform for id's addresses (librdmacm's
// ucma_query_addr) and records them, with the LIDs of local ports.
func (c *CM) kAddrsLocked(ctx context.Context, id *CMID) {
	info, err := id.ch.kch.QueryAddr(id.handle)
	if err != nil {
		c.log.Debug("rdmacm: query_addr", "id", id.handle, "err", err)
		return
	}
	ports, _ := c.fab.Ports(ctx)
	conv := func(a fabric.CMAddr, old CMAddr) CMAddr {
		out := CMAddr{GID: a.GID, Port: uint16(a.ServiceID)}
		for _, pa := range ports {
			if mad.NewGID(pa.GIDPrefix, pa.PortGUID) == out.GID {
				out.LID = pa.LID
			}
		}
		if out.LID == 0 && old.GID == out.GID {
			out.LID = old.LID // a remote LID the caller named
		}
		return out
	}
	if info.HasSrc {
		id.src = conv(info.Src, id.src)
	}
	if info.HasDst {
		id.dst = conv(info.Dst, id.dst)
		id.dlid = id.dst.LID
	}
}

func (c *CM) kCreateID(ch *EventChannel, ps PortSpace, ud bool) (*CMID, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("rdmacm: create_id: %w", net.ErrClosed)
	}
	sync := ch == nil
	if sync {
		var err error
		if ch, err = c.kNewChannelLocked(true); err != nil {
			return nil, fmt.Errorf("rdmacm: create_id: %w", err)
		}
	} else if ch.closed || ch.cm != c {
		return nil, errno("create_id", syscall.EINVAL, "closed or foreign channel")
	}
	qp := qpTypeRC
	if ud {
		qp = qpTypeUD
	}
	c.nextUID++
	h, err := ch.kch.CreateID(c.nextUID, uint16(ps), qp)
	if err != nil {
		if sync {
			ch.closeLocked()
		}
		return nil, fmt.Errorf("rdmacm: create_id: %w", err)
	}
	id := &CMID{cm: c, handle: h, uid: c.nextUID, ps: ps, ud: ud, ch: ch, sync: sync, ackWake: make(chan struct{})}
	ch.ids++
	c.ids[h] = id
	c.byUID[id.uid] = id
	return id, nil
}

// kGetEvent is GetEvent on the platform's channel: GET_EVENT, then
// librdmacm's processing of the event (kEventLocked).
func (ch *EventChannel) kGetEvent(ctx context.Context) (*CMEvent, error) {
	c := ch.cm
	for {
		c.mu.Lock()
		closed := ch.closed
		c.mu.Unlock()
		if closed {
			return nil, fmt.Errorf("rdmacm: get_cm_event: %w", net.ErrClosed)
		}
		raw, err := ch.kch.GetEvent(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			c.mu.Lock()
			closed := ch.closed
			c.mu.Unlock()
			if closed {
				// Closed under the call: say so as the engine's own CM does.
				return nil, fmt.Errorf("rdmacm: get_cm_event: %w (%w)", net.ErrClosed, err)
			}
			return nil, fmt.Errorf("rdmacm: get_cm_event: %w", err)
		}
		c.mu.Lock()
		ev := c.kEventLocked(ctx, ch, &raw)
		c.mu.Unlock()
		if ev != nil {
			return ev, nil
		}
	}
}

// kEventLocked is librdmacm's rdma_get_cm_event after GET_EVENT: it finds
// the id (by uid; uid 0 by handle), makes the new id of a
// CONNECT_REQUEST (on the listener's channel, or on a private channel of
// its own when the listener is synchronous), answers a
// CONNECT_RESPONSE with the RTU and reports ESTABLISHED (CONNECT_ERROR
// when that fails), and counts the event on the id it is credited to. An
// event of an id the CM does not know is skipped (nil).
func (c *CM) kEventLocked(ctx context.Context, ch *EventChannel, raw *fabric.CMRawEvent) *CMEvent {
	var id *CMID
	if raw.UID != 0 {
		id = c.byUID[raw.UID]
	} else {
		id = c.ids[raw.ID]
	}
	if id == nil || id.state == stDestroyed {
		c.log.Debug("rdmacm: event of an unknown id", "uid", raw.UID, "id", raw.ID, "event", CMEventType(raw.Type))
		if CMEventType(raw.Type) == EventConnectRequest {
			// The listener is gone: destroy the request's new id, which
			// rejects its peer.
			if _, err := ch.kch.DestroyID(raw.ID); err != nil {
				c.log.Debug("rdmacm: destroy the new id of a gone listener", "id", raw.ID, "err", err)
			}
		}
		return nil
	}
	ev := &CMEvent{Type: CMEventType(raw.Type), Status: raw.Status, ID: id, credited: id}
	if id.ud {
		ev.Param = ConnParam{PrivateData: raw.UD.PrivateData, QPNum: raw.UD.QPNum, QKey: raw.UD.QKey}
	} else {
		p := raw.Conn
		ev.Param = ConnParam{PrivateData: p.PrivateData, QPNum: p.QPNum, QKey: p.QKey, SRQ: p.SRQ,
			ResponderResources: p.ResponderResources, InitiatorDepth: p.InitiatorDepth,
			FlowControl: p.FlowControl, RetryCount: p.RetryCount, RNRRetryCount: p.RNRRetryCount}
	}
	id.eventsReported++
	switch ev.Type {
	case EventConnectRequest:
		l := id
		child := &CMID{cm: c, handle: raw.ID, ps: l.ps, ud: l.ud, ch: ch, listener: l, state: stReqRcvd,
			ackWake: make(chan struct{})}
		ch.ids++
		c.ids[child.handle] = child
		ev.ID, ev.ListenID = child, l
		child.remoteQPN = ev.Param.QPNum
		c.kAddrsLocked(ctx, child)
		if l.sync {
			// rdma_migrate_id(new, NULL): a synchronous listener hands out
			// synchronous ids.
			if err := c.kMigrateLocked(child, nil); err != nil {
				c.log.Warn("rdmacm: new id of a synchronous listener", "id", child.handle, "err", err)
			}
		}
	case EventConnectResponse:
		// librdmacm with a QP: RTR, RTS, then ACCEPT with no param so
		// the kernel sends the RTU; the event becomes ESTABLISHED.
		if err := id.ch.kch.Accept(id.handle, id.uid, nil); err != nil {
			ev.Type, ev.Status = EventConnectError, -int(cmErrno(err))
			id.state = stRouteResolved
		} else {
			ev.Type = EventEstablished
			id.state = stEstablished
			id.remoteQPN = raw.Conn.QPNum
		}
	case EventAddrResolved:
		id.state = stAddrResolved
		c.kAddrsLocked(ctx, id)
	case EventAddrError:
		id.state = stAddrBound
	case EventRouteResolved:
		id.state = stRouteResolved
	case EventRouteError:
		id.state = stAddrResolved
	case EventEstablished:
		id.state = stEstablished
		if id.ud {
			id.remoteQPN = raw.UD.QPNum
		}
	case EventRejected, EventUnreachable, EventConnectError:
		if id.listener == nil {
			id.state = stRouteResolved
		} else {
			id.state = stTimewait
		}
	case EventDisconnected:
		if id.state == stDreqSent {
			id.state = stTimewait
		} else {
			id.state = stDreqRcvd
		}
	}
	return ev
}

// cmErrno is the errno err wraps, EIO when none.
func cmErrno(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

// kMigrateLocked moves id to ch (nil: a new private channel) with
// MIGRATE_ID and updates the engine's side as librdmacm does, taking the
// platform's events_reported as the count to wait for; it does not wait.
func (c *CM) kMigrateLocked(id *CMID, ch *EventChannel) error {
	sync := ch == nil
	if sync {
		var err error
		if ch, err = c.kNewChannelLocked(true); err != nil {
			return err
		}
	}
	n, err := ch.kch.MigrateID(id.handle, id.ch.kch)
	if err != nil {
		if sync {
			ch.closeLocked()
		}
		return err
	}
	old := id.ch
	old.ids--
	ch.ids++
	id.ch = ch
	if id.sync {
		if id.parked != nil && !id.parked.acked {
			id.parked.acked = true
			id.parked.credited.eventsCompleted++
		}
		id.parked = nil
		if old.private && old.ids == 0 {
			old.closeLocked()
		}
	}
	id.sync = sync
	// librdmacm waits for the platform's count, which is the engine's
	// unless the engine skipped events.
	id.eventsReported = max(id.eventsReported, int(n))
	return nil
}

func (c *CM) kMigrateID(ctx context.Context, id *CMID, ch *EventChannel) error {
	const op = "migrate_id"
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	if ch == nil && id.sync {
		return errno(op, syscall.EINVAL, "id %d is already synchronous", id.handle)
	}
	if ch != nil && (ch.closed || ch.cm != c) {
		return errno(op, syscall.EINVAL, "closed or foreign channel")
	}
	if err := c.kMigrateLocked(id, ch); err != nil {
		return kErr(op, id, err, "")
	}
	return c.waitAcksLocked(ctx, op, id)
}

// kForgetLocked drops id from the engine's tables (the platform has
// destroyed it or is about to).
func (c *CM) kForgetLocked(id *CMID) {
	if id.state == stDestroyed {
		return
	}
	id.state = stDestroyed
	delete(c.ids, id.handle)
	delete(c.byUID, id.uid)
	id.ch.ids--
	if id.ch.private && id.ch.ids == 0 {
		id.ch.closeLocked()
	}
}

func (c *CM) kDestroyID(ctx context.Context, id *CMID) error {
	const op = "destroy_id"
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	n, err := id.ch.kch.DestroyID(id.handle)
	if err != nil {
		if !errors.Is(err, syscall.ENOENT) {
			return kErr(op, id, err, "")
		}
		// The platform has no such id any more: the engine forgets it too.
		c.kForgetLocked(id)
		return kErr(op, id, err, "")
	}
	c.kForgetLocked(id)
	if id.parked != nil && !id.parked.acked {
		id.parked.acked = true
		id.parked.credited.eventsCompleted++
	}
	id.eventsReported = max(id.eventsReported, int(n))
	return c.waitAcksLocked(ctx, op, id)
}

func (c *CM) kBindLocked(ctx context.Context, op string, id *CMID, a CMAddr) error {
	if id.state != stIdle {
		return errno(op, syscall.EINVAL, "id %d is %v, not idle", id.handle, id.state)
	}
	ka, err := c.kLocal(ctx, op, id.ps, a)
	if err != nil {
		return err
	}
	if err := id.ch.kch.Bind(id.handle, ka); err != nil {
		return kErr(op, id, err, "not idle")
	}
	id.state = stAddrBound
	c.kAddrsLocked(ctx, id)
	return nil
}

func (c *CM) kResolveAddr(ctx context.Context, id *CMID, src *CMAddr, dst CMAddr) error {
	const op = "resolve_addr"
	var slid uint16
	if src != nil {
		slid = src.LID
	}
	kdst, err := c.kRemote(ctx, op, id.ps, slid, dst)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if err := c.checkLocked(op, id); err != nil {
		c.mu.Unlock()
		return err
	}
	if id.state != stIdle && id.state != stAddrBound {
		c.mu.Unlock()
		return errno(op, syscall.EINVAL, "id %d is %v", id.handle, id.state)
	}
	var ksrc *fabric.CMAddr
	if src != nil && id.state == stIdle {
		a, err := c.kLocal(ctx, op, id.ps, *src)
		if err != nil {
			c.mu.Unlock()
			return err
		}
		ksrc = &a
	}
	if err := id.ch.kch.ResolveAddr(id.handle, ksrc, kdst, resolveTimeout(ctx)); err != nil {
		c.mu.Unlock()
		return kErr(op, id, err, "")
	}
	id.dst = CMAddr{LID: dst.LID, GID: kdst.GID, Port: dst.Port}
	id.dlid = dst.LID
	c.mu.Unlock()
	return c.complete(ctx, op, id)
}

// kCall runs one platform command on id under c.mu; EINVAL says need.
func (c *CM) kCall(op string, id *CMID, need string, cmd func(fabric.CMChannel) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	if err := cmd(id.ch.kch); err != nil {
		return kErr(op, id, err, need)
	}
	return nil
}

func (c *CM) kResolveRoute(ctx context.Context, id *CMID) error {
	const op = "resolve_route"
	err := c.kCall(op, id, "not addr resolved", func(k fabric.CMChannel) error {
		return k.ResolveRoute(id.handle, resolveTimeout(ctx))
	})
	if err != nil {
		return err
	}
	return c.complete(ctx, op, id)
}

func (c *CM) kListen(ctx context.Context, id *CMID, backlog int) error {
	const op = "listen"
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	if id.state == stIdle {
		// The wildcard address (every port), an ephemeral port number.
		if err := c.kBindLocked(ctx, op, id, CMAddr{}); err != nil {
			return err
		}
	}
	if err := id.ch.kch.Listen(id.handle, backlog); err != nil {
		return kErr(op, id, err, "not bound")
	}
	id.state = stListen
	return nil
}

func (c *CM) kParam(p ConnParam) *fabric.CMConnParam {
	return &fabric.CMConnParam{PrivateData: p.PrivateData, QPNum: c.qpnLocked(p.QPNum), QKey: p.QKey,
		SRQ: p.SRQ, ResponderResources: p.ResponderResources, InitiatorDepth: p.InitiatorDepth,
		FlowControl: p.FlowControl, RetryCount: p.RetryCount, RNRRetryCount: p.RNRRetryCount}
}

func (c *CM) kConnect(ctx context.Context, id *CMID, p ConnParam) error {
	const op = "connect"
	err := c.kCall(op, id, "not route resolved", func(k fabric.CMChannel) error {
		kp := c.kParam(p)
		if err := k.Connect(id.handle, kp); err != nil {
			return err
		}
		id.qpn = kp.QPNum
		id.state = stReqSent
		if id.ud {
			id.state = stSIDRReqSent
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.complete(ctx, op, id)
}

func (c *CM) kAccept(ctx context.Context, id *CMID, p ConnParam) error {
	const op = "accept"
	err := c.kCall(op, id, "not a connect request", func(k fabric.CMChannel) error {
		uid := id.uid
		if uid == 0 {
			c.nextUID++
			uid = c.nextUID
		}
		kp := c.kParam(p)
		if err := k.Accept(id.handle, uid, kp); err != nil {
			return err
		}
		if id.uid == 0 {
			id.uid = uid
			c.byUID[uid] = id
		}
		id.qpn = kp.QPNum
		id.state = stRepSent
		if id.ud {
			id.state = stEstablished
		}
		return nil
	})
	if err != nil || id.ud {
		return err // no event on the passive side of UD
	}
	return c.complete(ctx, op, id)
}

func (c *CM) kReject(id *CMID, pd []byte) error {
	return c.kCall("reject", id, "not a connect request", func(k fabric.CMChannel) error {
		if err := k.Reject(id.handle, pd); err != nil {
			return err
		}
		id.state = stTimewait
		return nil
	})
}

func (c *CM) kDisconnect(ctx context.Context, id *CMID) error {
	const op = "disconnect"
	answered := false
	err := c.kCall(op, id, "not connected", func(k fabric.CMChannel) error {
		if err := k.Disconnect(id.handle); err != nil {
			return err
		}
		if id.state == stDreqRcvd {
			id.state, answered = stTimewait, true // the DREP
		} else {
			id.state = stDreqSent
		}
		return nil
	})
	if err != nil || answered {
		return err
	}
	return c.complete(ctx, op, id)
}

// kWaitPending is WaitPending on the platform's channel: poll(2) tells
// whether an event is queued, not how many.
func (ch *EventChannel) kWaitPending(ctx context.Context, n int) error {
	c := ch.cm
	c.mu.Lock()
	closed := ch.closed
	c.mu.Unlock()
	if closed {
		return fmt.Errorf("rdmacm: poll: %w", net.ErrClosed)
	}
	if n > 1 {
		return fmt.Errorf("rdmacm: poll: waiting for %d events: the platform's channel reports only readiness: %w", n, syscall.EOPNOTSUPP)
	}
	if err := ch.kch.Wait(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("rdmacm: poll: %w", err)
	}
	return nil
}

// kPending is 1 when the platform's channel has an event queued, else 0.
func (ch *EventChannel) kPending() int {
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a poll with no wait
	if ch.kWaitPending(ctx, 1) == nil {
		return 1
	}
	return 0
}
