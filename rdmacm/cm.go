package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/rdmacm/ibcm"
)

// Options configure a CM. A nil *Options means defaults.
type Options struct {
	// ResponseTimeout and MaxRetries configure the user-space IB CM
	// (ibcm.Options); the kernel's rdma_cm has its own.
	ResponseTimeout uint8
	MaxRetries      uint8
	// IPoIB are IPoIB addresses of the fabric's ports for the user-space
	// IB CM, beside those the fabric gives (fabric.IPoIB: the simulator's
	// topology); how IP addresses resolve on ibsim. The kernel's rdma_cm
	// uses the host's netdevs.
	IPoIB []fabric.IPoIBAddr
	// AckWait bounds DestroyID's and MigrateID's wait for acks when the
	// call's ctx has no earlier deadline; 0 means DefaultAckWait.
	AckWait time.Duration
	// Logger gets debug records (events of unknown ids, dropped CM MADs).
	// nil discards.
	Logger *slog.Logger
}

// EventChannel is rdma_event_channel: one channel of the device, whose
// FIFO holds the events of the ids it owns. Safe for concurrent use.
type EventChannel struct {
	cm      *CM
	kch     fabric.CMChannel
	private bool // a synchronous id's own channel
	// guarded by cm.mu
	closed bool
	ids    int
}

// ID states, as the CM believes them from its calls and the events it
// fetched (the device holds the true state; a call it refuses is EINVAL).
type state int

const (
	stIdle state = iota
	stAddrBound
	stAddrResolved
	stRouteResolved
	stListen
	stReqSent
	stReqRcvd
	stRepSent
	stEstablished
	stDreqSent
	stDreqRcvd
	stTimewait
	stSIDRReqSent
	stDestroyed
)

var stateNames = [...]string{"idle", "addr bound", "addr resolved", "route resolved", "listen",
	"REQ sent", "REQ received", "REP sent", "established", "DREQ sent", "DREQ received", "timewait",
	"SIDR_REQ sent", "destroyed"}

func (s state) String() string { return stateNames[s] }

// ID is rdma_cm_id. Its methods are safe for concurrent use, with
// librdmacm's rules: no calls on an id while it migrates.
type ID struct {
	cm     *CM
	handle uint32
	ps     PortSpace
	ud     bool
	// guarded by cm.mu
	uid             uint64 // the cookie of the id's events (0 until a new id is accepted)
	ch              *EventChannel
	sync            bool
	parked          *Event // synchronous mode: the event of the last call
	eventsReported  int
	eventsCompleted int
	ackWake         chan struct{}
	state           state
	src, dst        Addr
	qpn, remoteQPN  uint32
	listener        *ID
}

// Handle is the id's number, unique in its CM (the device's id handle).
func (id *ID) Handle() uint32 { return id.handle }

// PortSpace returns the id's port space.
func (id *ID) PortSpace() PortSpace { return id.ps }

// Channel returns the channel that owns the id, nil in synchronous mode.
func (id *ID) Channel() *EventChannel {
	id.cm.mu.Lock()
	defer id.cm.mu.Unlock()
	if id.sync {
		return nil
	}
	return id.ch
}

// LocalAddr returns the bound address (with the LID of its local port).
func (id *ID) LocalAddr() Addr { id.cm.mu.Lock(); defer id.cm.mu.Unlock(); return id.src }

// PeerAddr returns the destination address (resolve_addr, or the
// request's source on a passive id).
func (id *ID) PeerAddr() Addr { id.cm.mu.Lock(); defer id.cm.mu.Unlock(); return id.dst }

// State names the id's CM state ("established").
func (id *ID) State() string { id.cm.mu.Lock(); defer id.cm.mu.Unlock(); return id.state.String() }

// CM is librdmacm over a fabric.CMDevice (see the package doc): event channels (one device
// channel each), ids, per-id acks (events_reported against
// events_completed), synchronous ids on private channels, migrate_id and
// destroy waiting for acks, and the CONNECT_RESPONSE answered with the
// RTU when it is fetched (reported as ESTABLISHED, or CONNECT_ERROR when
// that fails), as librdmacm does for an id with a QP. Addresses are IP
// (AF_INET, AF_INET6) or AF_IB, as the package doc says: the CM turns
// LIDs into GIDs through the fabric's ports, or the SA for remote LIDs,
// and the device resolves addresses and routes; private data has RDMA
// CM's IP header in front with IP addresses only (a CONNECT_REQUEST
// reports 56 bytes, a UD one 180; with AF_IB the REQ's 92 and the
// SIDR_REQ's 216), whatever the device.
//
// The device is the fabric's own (fabric.CMProvider: the kernel's rdma_cm)
// when it has one, else the user-space IB CM over class 0x07 (package
// ibcm). Differences from librdmacm, on purpose: ids have no verbs QP (QP
// numbers are made up, or taken from ConnParam.QPNum); DestroyID and
// MigrateID wait for acks at most Options.AckWait (or ctx), then return an
// error wrapping ETIMEDOUT, the id destroyed or migrated all the same; and
// when the device's channel cannot count its events (the kernel's),
// Pending reports 1 when one is queued and WaitPending for more than one
// is EOPNOTSUPP.
//
// Lock order: CM.mu, then the device's own locks (device commands are
// called under CM.mu and never block on the network; GetEvent and Wait are
// called without it). Close destroys every id and closes every channel.
type CM struct {
	fab      fabric.Fabric
	sa       *engine.Session
	dev      fabric.CMDevice
	platform bool
	opts     Options
	log      *slog.Logger

	mu      sync.Mutex // guards the fields below and every id's and channel's state
	closed  bool
	ids     map[uint32]*ID
	byUID   map[uint64]*ID
	nextUID uint64
	nextQPN uint32
	chans   map[*EventChannel]bool
}

// New returns a CM on fab whose routes and remote GIDs come from sa's SA
// (sa may be on any port of the subnet). The CM does not own fab or sa.
// When fab implements fabric.CMProvider and its OpenCM succeeds, the CM
// drives that device; when OpenCM reports errors.ErrUnsupported (or fab
// has none), it drives the user-space IB CM (ibcm.New); another OpenCM
// error is New's.
func New(fab fabric.Fabric, sa *engine.Session, opts *Options) (*CM, error) {
	if fab == nil || sa == nil {
		return nil, errors.New("rdmacm: nil fabric or session")
	}
	o := withDefaults(opts)
	if p, ok := fab.(fabric.CMProvider); ok {
		d, err := p.OpenCM()
		switch {
		case err == nil:
			return newCM(fab, sa, d, true, o), nil
		case !errors.Is(err, errors.ErrUnsupported):
			return nil, fmt.Errorf("rdmacm: %w", err)
		}
	}
	d := ibcm.New(fab, sa, &ibcm.Options{ResponseTimeout: o.ResponseTimeout, MaxRetries: o.MaxRetries, Logger: o.Logger,
		IPoIB: o.IPoIB})
	return newCM(fab, sa, d, false, o), nil
}

func withDefaults(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func newCM(fab fabric.Fabric, sa *engine.Session, dev fabric.CMDevice, platform bool, o Options) *CM {
	return &CM{fab: fab, sa: sa, dev: dev, platform: platform, opts: o, log: o.Logger,
		ids: map[uint32]*ID{}, byUID: map[uint64]*ID{}, chans: map[*EventChannel]bool{},
		nextQPN: 0x100 + rand.Uint32N(0x1000)}
}

// Platform reports whether the CM drives the fabric's own RDMA CM
// (fabric.CMProvider) rather than the user-space IB CM.
func (c *CM) Platform() bool { return c.platform }

// Close destroys every id without waiting for acks, closes every channel
// and the device. It is idempotent.
func (c *CM) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for _, id := range c.ids {
		c.forgetLocked(id) // closing its channel destroys it
	}
	for ch := range c.chans {
		ch.closeLocked()
	}
	c.mu.Unlock()
	return c.dev.Close()
}

func errno(op string, e syscall.Errno, format string, args ...any) error {
	return fmt.Errorf("rdmacm: %s: %s: %w", op, fmt.Sprintf(format, args...), e)
}

// devErr wraps a device error of op on id; an EINVAL also says what the
// CM believes of the id's state and what the call needs.
func devErr(op string, id *ID, err error, need string) error {
	if errors.Is(err, syscall.EINVAL) && need != "" {
		// The device's own words repeat the call and the id.
		return fmt.Errorf("rdmacm: %s: id %d is %v, %s: %w", op, id.handle, id.state, need, syscall.EINVAL)
	}
	return fmt.Errorf("rdmacm: %s: id %d: %w", op, id.handle, err)
}

// CreateEventChannel is rdma_create_event_channel.
func (c *CM) CreateEventChannel() (*EventChannel, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("rdmacm: create_event_channel: %w", net.ErrClosed)
	}
	ch, err := c.newChannelLocked(false)
	if err != nil {
		return nil, fmt.Errorf("rdmacm: create_event_channel: %w", err)
	}
	return ch, nil
}

func (c *CM) newChannelLocked(private bool) (*EventChannel, error) {
	kch, err := c.dev.OpenChannel()
	if err != nil {
		return nil, err
	}
	ch := &EventChannel{cm: c, kch: kch, private: private}
	c.chans[ch] = true
	return ch, nil
}

func (ch *EventChannel) closeLocked() {
	if ch.closed {
		return
	}
	ch.closed = true
	delete(ch.cm.chans, ch)
	if err := ch.kch.Close(); err != nil {
		ch.cm.log.Debug("rdmacm: close channel", "err", err)
	}
}

// Close is rdma_destroy_event_channel: EBUSY while ids still use it.
func (ch *EventChannel) Close() error {
	c := ch.cm
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch.closed {
		return nil
	}
	if ch.ids > 0 {
		return errno("destroy_event_channel", syscall.EBUSY, "%d ids still use the channel", ch.ids)
	}
	ch.closeLocked()
	return nil
}

// counter is what a device channel that counts its queued events offers
// (the user-space IB CM's); the kernel's reports only readiness.
type counter interface {
	Pending() int
	WaitPending(ctx context.Context, n int) error
}

// Poll waits until ch has an event to fetch (poll(2)'s POLLIN on an
// rdma_cm fd) or ctx ends.
func (ch *EventChannel) Poll(ctx context.Context) error { return ch.WaitPending(ctx, 1) }

// WaitPending waits until at least n events are queued on ch, unfetched,
// or ctx ends. On a device channel that reports only readiness, n > 1 is
// EOPNOTSUPP.
func (ch *EventChannel) WaitPending(ctx context.Context, n int) error {
	c := ch.cm
	c.mu.Lock()
	closed := ch.closed
	c.mu.Unlock()
	if closed {
		return fmt.Errorf("rdmacm: poll: %w", net.ErrClosed)
	}
	var err error
	if k, ok := ch.kch.(counter); ok {
		err = k.WaitPending(ctx, n)
	} else if n > 1 {
		return fmt.Errorf("rdmacm: poll: waiting for %d events: the device's channel reports only readiness: %w", n, syscall.EOPNOTSUPP)
	} else {
		err = ch.kch.Wait(ctx)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("rdmacm: poll: %w", err)
	}
	return nil
}

// Pending returns the number of events queued and not yet fetched (0 or 1
// on a device channel that reports only readiness).
func (ch *EventChannel) Pending() int {
	if k, ok := ch.kch.(counter); ok {
		return k.Pending()
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a poll with no wait
	if ch.kch.Wait(ctx) == nil {
		return 1
	}
	return 0
}

const (
	qpTypeRC uint8 = 2
	qpTypeUD uint8 = 4
)

// CreateID is rdma_create_id: ch nil puts the id in synchronous mode (it
// gets a private channel, and its calls block until they complete). ps is
// PSTCP, PSUDP, PSIPoIB or PSIB (RC, or UD when ud).
func (c *CM) CreateID(ch *EventChannel, ps PortSpace, ud bool) (*ID, error) {
	switch ps {
	case PSTCP:
		ud = false
	case PSUDP, PSIPoIB:
		ud = true
	case PSIB:
	default:
		return nil, errno("create_id", syscall.EINVAL, "port space 0x%04x", uint16(ps))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("rdmacm: create_id: %w", net.ErrClosed)
	}
	sync := ch == nil
	if sync {
		var err error
		if ch, err = c.newChannelLocked(true); err != nil {
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
	id := &ID{cm: c, handle: h, uid: c.nextUID, ps: ps, ud: ud, ch: ch, sync: sync, ackWake: make(chan struct{})}
	ch.ids++
	c.ids[h] = id
	c.byUID[id.uid] = id
	return id, nil
}

// GetEvent is rdma_get_cm_event: it waits for the next event of ch until
// ctx ends.
func (ch *EventChannel) GetEvent(ctx context.Context) (*Event, error) {
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
				return nil, fmt.Errorf("rdmacm: get_cm_event: %w (%w)", net.ErrClosed, err)
			}
			return nil, fmt.Errorf("rdmacm: get_cm_event: %w", err)
		}
		c.mu.Lock()
		ev := c.eventLocked(ctx, ch, &raw)
		c.mu.Unlock()
		if ev != nil {
			return ev, nil
		}
	}
}

// eventLocked is librdmacm's rdma_get_cm_event after GET_EVENT: it finds
// the id (by uid; uid 0 by handle), makes the new id of a
// CONNECT_REQUEST (on the listener's channel, or on a private channel of
// its own when the listener is synchronous), answers a CONNECT_RESPONSE
// with the RTU and reports ESTABLISHED (CONNECT_ERROR when that fails),
// and counts the event on the id it is credited to. An event of an id the
// CM does not know is skipped (nil).
func (c *CM) eventLocked(ctx context.Context, ch *EventChannel, raw *fabric.CMRawEvent) *Event {
	var id *ID
	if raw.UID != 0 {
		id = c.byUID[raw.UID]
	} else {
		id = c.ids[raw.ID]
	}
	if id == nil || id.state == stDestroyed {
		c.log.Debug("rdmacm: event of an unknown id", "uid", raw.UID, "id", raw.ID, "event", EventType(raw.Type))
		if EventType(raw.Type) == EventConnectRequest {
			// The listener is gone: destroy the request's new id, which
			// rejects its peer.
			if _, err := ch.kch.DestroyID(raw.ID); err != nil {
				c.log.Debug("rdmacm: destroy the new id of a gone listener", "id", raw.ID, "err", err)
			}
		}
		return nil
	}
	ev := &Event{Type: EventType(raw.Type), Status: raw.Status, ID: id, credited: id}
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
		child := &ID{cm: c, handle: raw.ID, ps: l.ps, ud: l.ud, ch: ch, listener: l, state: stReqRcvd,
			ackWake: make(chan struct{})}
		ch.ids++
		c.ids[child.handle] = child
		ev.ID, ev.ListenID = child, l
		child.remoteQPN = ev.Param.QPNum
		c.addrsLocked(ctx, child)
		if l.sync {
			// rdma_migrate_id(new, NULL): a synchronous listener hands out
			// synchronous ids.
			if err := c.migrateLocked(child, nil); err != nil {
				c.log.Warn("rdmacm: new id of a synchronous listener", "id", child.handle, "err", err)
			}
		}
	case EventConnectResponse:
		// librdmacm with a QP: RTR, RTS, then ACCEPT with no param so
		// the device sends the RTU; the event becomes ESTABLISHED.
		if err := id.ch.kch.Accept(id.handle, id.uid, nil); err != nil {
			ev.Type, ev.Status = EventConnectError, -int(errnoOf(err))
			id.state = stRouteResolved
		} else {
			ev.Type = EventEstablished
			id.state = stEstablished
			id.remoteQPN = raw.Conn.QPNum
		}
	case EventAddrResolved:
		id.state = stAddrResolved
		c.addrsLocked(ctx, id)
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

// errnoOf is the errno err wraps, EIO when none.
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return syscall.EIO
}

// AckEvent is rdma_ack_cm_event. Acking an event twice is EINVAL.
func (c *CM) AckEvent(ev *Event) error {
	if ev == nil {
		return errno("ack_cm_event", syscall.EINVAL, "nil event")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.acked {
		return errno("ack_cm_event", syscall.EINVAL, "event %v of id %d acked twice", ev.Type, ev.credited.handle)
	}
	c.completeEventLocked(ev)
	return nil
}

func (c *CM) completeEventLocked(ev *Event) {
	ev.acked = true
	id := ev.credited
	id.eventsCompleted++
	close(id.ackWake)
	id.ackWake = make(chan struct{})
}

// Unacked returns the number of events of id fetched and not acknowledged.
func (id *ID) Unacked() int {
	id.cm.mu.Lock()
	defer id.cm.mu.Unlock()
	return id.eventsReported - id.eventsCompleted
}

// waitAcksLocked waits until id's fetched events are all acked. c.mu is
// held and is held again on return.
func (c *CM) waitAcksLocked(ctx context.Context, op string, id *ID) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.AckWait)
	defer cancel()
	for id.eventsCompleted < id.eventsReported {
		wake := id.ackWake
		c.mu.Unlock()
		select {
		case <-wake:
			c.mu.Lock()
		case <-ctx.Done():
			c.mu.Lock()
			if id.eventsCompleted >= id.eventsReported {
				return nil
			}
			return fmt.Errorf("rdmacm: %s: id %d: %d events fetched and not acknowledged: %w (%w)",
				op, id.handle, id.eventsReported-id.eventsCompleted, syscall.ETIMEDOUT, ctx.Err())
		}
	}
	return nil
}

func (c *CM) checkLocked(op string, id *ID) error {
	if c.closed {
		return fmt.Errorf("rdmacm: %s: %w", op, net.ErrClosed)
	}
	if id == nil || id.cm != c {
		return errno(op, syscall.EINVAL, "not an id of this CM")
	}
	if id.state == stDestroyed {
		return errno(op, syscall.ENOENT, "id %d destroyed", id.handle)
	}
	return nil
}

// ackParkedLocked acks the event a synchronous id's last call parked.
func (c *CM) ackParkedLocked(id *ID) {
	if id.parked != nil && !id.parked.acked {
		c.completeEventLocked(id.parked)
	}
	id.parked = nil
}

// migrateLocked moves id to ch (nil: a new private channel) with
// MIGRATE_ID and updates the CM's side as librdmacm does, taking the
// device's events_reported as the count to wait for; it does not wait.
func (c *CM) migrateLocked(id *ID, ch *EventChannel) error {
	sync := ch == nil
	if sync {
		var err error
		if ch, err = c.newChannelLocked(true); err != nil {
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
		c.ackParkedLocked(id)
		if old.private && old.ids == 0 {
			old.closeLocked()
		}
	}
	id.sync = sync
	// librdmacm waits for the device's count, which is the CM's unless
	// the CM skipped events.
	id.eventsReported = max(id.eventsReported, int(n))
	return nil
}

// MigrateID is rdma_migrate_id: it moves id to ch (nil: synchronous mode),
// the device moving its unread events to the tail of ch's queue in order,
// then waits until the events of id fetched and not acked are acked —
// until ctx ends or the CM's AckWait passes, when it returns an error
// wrapping ETIMEDOUT (the id has moved by then). Migrating a synchronous
// id to nil is EINVAL.
func (c *CM) MigrateID(ctx context.Context, id *ID, ch *EventChannel) error {
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
	if err := c.migrateLocked(id, ch); err != nil {
		return devErr(op, id, err, "")
	}
	return c.waitAcksLocked(ctx, op, id)
}

// forgetLocked drops id from the CM's tables (the device has destroyed it
// or is about to).
func (c *CM) forgetLocked(id *ID) {
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

// DestroyID is rdma_destroy_id: the device tears the connection down (DREQ
// or REJ to the peer) and discards the id's unread events (a listener's
// unread CONNECT_REQUESTs destroy their new ids); then it waits as
// MigrateID does for the acks of the events already fetched.
func (c *CM) DestroyID(ctx context.Context, id *ID) error {
	const op = "destroy_id"
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	n, err := id.ch.kch.DestroyID(id.handle)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) {
			// The device has no such id any more: the CM forgets it too.
			c.forgetLocked(id)
		}
		return devErr(op, id, err, "")
	}
	c.forgetLocked(id)
	c.ackParkedLocked(id)
	id.eventsReported = max(id.eventsReported, int(n))
	return c.waitAcksLocked(ctx, op, id)
}

// complete is librdmacm's ucma_complete for synchronous ids: ack the
// parked event, fetch the next one from the private channel and park it;
// a non-zero status is the call's error.
func (c *CM) complete(ctx context.Context, op string, id *ID) error {
	c.mu.Lock()
	if !id.sync {
		c.mu.Unlock()
		return nil
	}
	c.ackParkedLocked(id)
	ch := id.ch
	c.mu.Unlock()
	ev, err := ch.GetEvent(ctx)
	if err != nil {
		return fmt.Errorf("rdmacm: %s: id %d: %w", op, id.handle, err)
	}
	c.mu.Lock()
	id.parked = ev
	c.mu.Unlock()
	switch {
	case ev.Type == EventRejected:
		return errno(op, syscall.ECONNREFUSED, "id %d: %v, reason %d", id.handle, ev.Type, ev.Status)
	case ev.Status < 0:
		return errno(op, syscall.Errno(-ev.Status), "id %d: %v", id.handle, ev.Type)
	case ev.Status > 0:
		return errno(op, syscall.Errno(ev.Status), "id %d: %v", id.handle, ev.Type)
	}
	return nil
}

// LastEvent returns the event a synchronous id's last call completed with.
func (id *ID) LastEvent() *Event {
	id.cm.mu.Lock()
	defer id.cm.mu.Unlock()
	return id.parked
}

// GetRequest is rdma_get_request for a synchronous listener: it waits for
// the next CONNECT_REQUEST on the listener's private channel, acks it, and
// returns the new id (synchronous, on a private channel of its own).
// Other events of the listener are acked and skipped.
func (c *CM) GetRequest(ctx context.Context, l *ID) (*ID, error) {
	const op = "get_request"
	c.mu.Lock()
	if err := c.checkLocked(op, l); err != nil {
		c.mu.Unlock()
		return nil, err
	}
	if !l.sync || l.state != stListen {
		c.mu.Unlock()
		return nil, errno(op, syscall.EINVAL, "id %d is not a synchronous listener", l.handle)
	}
	ch := l.ch
	c.mu.Unlock()
	for {
		ev, err := ch.GetEvent(ctx)
		if err != nil {
			return nil, fmt.Errorf("rdmacm: %s: id %d: %w", op, l.handle, err)
		}
		if err := c.AckEvent(ev); err != nil {
			return nil, err
		}
		if ev.Type == EventConnectRequest {
			return ev.ID, nil
		}
	}
}
