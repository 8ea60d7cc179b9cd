package engine

// RDMA CM with librdmacm's semantics over the engine's own IB CM (class
// 0x07): event channels, ids, address and route resolution through the SA,
// connections, events with ack, and migrate_id (rdmacm-abi.md sections 6-10).

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cm"
	"github.com/ibscript/ibscript/mad/sa"
)

// PortSpace is an RDMA CM port space (rdmacm-abi.md section 5).
type PortSpace uint16

// Port spaces.
const (
	PSIPoIB PortSpace = 0x0002
	PSTCP   PortSpace = 0x0106
	PSUDP   PortSpace = 0x0111
	PSIB    PortSpace = 0x013F
)

// UDPQKey is the Q_Key RDMA CM uses for the UDP port space.
const UDPQKey uint32 = 0x01234567

// CMEventType is an RDMA CM event type (rdmacm-abi.md section 9).
type CMEventType int

// Event types, with librdmacm's values.
const (
	EventAddrResolved CMEventType = iota
	EventAddrError
	EventRouteResolved
	EventRouteError
	EventConnectRequest
	EventConnectResponse
	EventConnectError
	EventUnreachable
	EventRejected
	EventEstablished
	EventDisconnected
	EventDeviceRemoval
	EventMulticastJoin
	EventMulticastError
	EventAddrChange
	EventTimewaitExit
)

var eventNames = [...]string{"RDMA_CM_EVENT_ADDR_RESOLVED", "RDMA_CM_EVENT_ADDR_ERROR",
	"RDMA_CM_EVENT_ROUTE_RESOLVED", "RDMA_CM_EVENT_ROUTE_ERROR", "RDMA_CM_EVENT_CONNECT_REQUEST",
	"RDMA_CM_EVENT_CONNECT_RESPONSE", "RDMA_CM_EVENT_CONNECT_ERROR", "RDMA_CM_EVENT_UNREACHABLE",
	"RDMA_CM_EVENT_REJECTED", "RDMA_CM_EVENT_ESTABLISHED", "RDMA_CM_EVENT_DISCONNECTED",
	"RDMA_CM_EVENT_DEVICE_REMOVAL", "RDMA_CM_EVENT_MULTICAST_JOIN", "RDMA_CM_EVENT_MULTICAST_ERROR",
	"RDMA_CM_EVENT_ADDR_CHANGE", "RDMA_CM_EVENT_TIMEWAIT_EXIT"}

// String returns librdmacm's name of the event type, as rdma_event_str.
func (t CMEventType) String() string {
	if t >= 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return "UNKNOWN EVENT"
}

// CMEventTypeByName returns the type named as librdmacm names it.
func CMEventTypeByName(s string) (CMEventType, bool) {
	for i, n := range eventNames {
		if n == s {
			return CMEventType(i), true
		}
	}
	return 0, false
}

// CM defaults (rdmacm-abi.md section 10.4, RDMA CM's choices).
const (
	DefaultCMResponseTimeout uint8 = 20 // 4.096 us x 2^20, about 4.3 s
	DefaultMaxCMRetries      uint8 = 15
	DefaultMRAServiceTimeout uint8 = 24 // about 68.7 s
	// DefaultAckWait bounds how long DestroyID and MigrateID wait for the
	// acks of events fetched and not acknowledged (librdmacm waits forever).
	DefaultAckWait = 30 * time.Second
)

// CMOptions configure a CM. A nil *CMOptions means defaults.
type CMOptions struct {
	// ResponseTimeout is the CM response timeout exponent (4.096 us x
	// 2^v) put in REQs; 0 means DefaultCMResponseTimeout.
	ResponseTimeout uint8
	// MaxRetries is the CM retries of REQ, REP and DREQ; 0 means
	// DefaultMaxCMRetries (at most 15, the field's width).
	MaxRetries uint8
	// AckWait bounds DestroyID's and MigrateID's wait for acks when the
	// call's ctx has no earlier deadline; 0 means DefaultAckWait.
	AckWait time.Duration
	// Logger gets debug records of dropped CM MADs. nil discards.
	Logger *slog.Logger
}

// CMAddr is an IB address (AF_IB's sockaddr_ib): a port named by LID or by
// GID, and the RDMA CM port number within the port space. A zero LID and
// GID is the wildcard address.
type CMAddr struct {
	LID  uint16
	GID  mad.GID
	Port uint16
}

func (a CMAddr) String() string {
	if a.LID == 0 && a.GID == (mad.GID{}) {
		return fmt.Sprintf("*:%d", a.Port)
	}
	if a.LID != 0 {
		return fmt.Sprintf("lid:%d:%d", a.LID, a.Port)
	}
	return fmt.Sprintf("gid:%v:%d", a.GID, a.Port)
}

// ConnParam is rdma_conn_param, and the ud param of UD events.
type ConnParam struct {
	PrivateData        []byte
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        uint8
	RetryCount         uint8
	RNRRetryCount      uint8
	SRQ                uint8
	QPNum              uint32
	QKey               uint32 // UD events
	// ResponseTimeout and MaxRetries override the CM's options for this
	// connect (an ibscript extension; the kernel takes them from its own
	// defaults).
	ResponseTimeout uint8
	MaxRetries      uint8
}

// CMEvent is one rdma_cm_event. Acknowledge it with AckEvent.
type CMEvent struct {
	Type     CMEventType
	Status   int // 0, negative errno, REJ reason or SIDR status
	ID       *CMID
	ListenID *CMID // CONNECT_REQUEST: the listener
	Param    ConnParam
	credited *CMID // the id the kernel counted the event on
	acked    bool
}

// EventChannel is rdma_event_channel: a FIFO of events of the ids it owns.
// Safe for concurrent use.
type EventChannel struct {
	cm      *CM
	private bool // a synchronous id's own channel
	// guarded by cm.mu
	q      []*CMEvent
	wake   chan struct{} // closed and replaced when q grows or on close
	closed bool
	ids    int
	// kch is the platform's channel (one rdma_cm fd) on a CM over a
	// fabric.CMProvider; nil on the engine's own CM.
	kch fabric.CMChannel
}

// CMID states.
type cmState int

const (
	stIdle cmState = iota
	stAddrBound
	stAddrResolved
	stRouteResolved
	stListen
	stReqSent
	stMRARcvd
	stReqRcvd
	stRepSent
	stEstablished
	stDreqSent
	stDreqRcvd
	stTimewait
	stSIDRReqSent
	stSIDRReqRcvd
	stDestroyed
)

var stateNames = [...]string{"idle", "addr bound", "addr resolved", "route resolved", "listen",
	"REQ sent", "MRA received", "REQ received", "REP sent", "established", "DREQ sent",
	"DREQ received", "timewait", "SIDR_REQ sent", "SIDR_REQ received", "destroyed"}

func (s cmState) String() string { return stateNames[s] }

// CMID is rdma_cm_id. Its methods are safe for concurrent use, with
// librdmacm's rules: no calls on an id while it migrates.
type CMID struct {
	cm     *CM
	handle uint32
	ps     PortSpace
	ud     bool
	// guarded by cm.mu
	uid             uint64 // the platform's cookie for the id's events (0 until a new id is accepted)
	ch              *EventChannel
	sync            bool
	parked          *CMEvent // synchronous mode: the event of the last call
	eventsReported  int
	eventsCompleted int
	ackWake         chan struct{}
	state           cmState
	dev             *cmDev
	src, dst        CMAddr
	dlid            uint16
	sl              uint8
	pkey            uint16
	qpn             uint32
	localComm       uint32
	remoteComm      uint32
	remoteQPN       uint32
	remoteGUID      uint64
	tid             uint64
	last            []byte // the MAD a timer resends
	tries, maxTries int
	timeout         time.Duration
	timer           *time.Timer
	listener        *CMID
	backlog         int
	route           *sa.PathRec
	gen             int // timer generation: a stale timer does nothing
}

// Handle is the id's number, unique in its CM (the kernel's id handle).
func (id *CMID) Handle() uint32 { return id.handle }

// PortSpace returns the id's port space.
func (id *CMID) PortSpace() PortSpace { return id.ps }

// Channel returns the channel that owns the id, nil in synchronous mode.
func (id *CMID) Channel() *EventChannel {
	id.cm.mu.Lock()
	defer id.cm.mu.Unlock()
	if id.sync {
		return nil
	}
	return id.ch
}

// LocalAddr and PeerAddr return the bound and the resolved addresses.
func (id *CMID) LocalAddr() CMAddr { id.cm.mu.Lock(); defer id.cm.mu.Unlock(); return id.src }

// PeerAddr returns the destination address (resolve_addr, or the REQ's
// source on a passive id).
func (id *CMID) PeerAddr() CMAddr { id.cm.mu.Lock(); defer id.cm.mu.Unlock(); return id.dst }

// State names the id's CM state ("established").
func (id *CMID) State() string { id.cm.mu.Lock(); defer id.cm.mu.Unlock(); return id.state.String() }

// cmDev is one local port the CM speaks on: a transport of its own with an
// agent for CM Sends, and the reader goroutine.
type cmDev struct {
	tr    fabric.Transport
	agent fabric.AgentID
	attr  fabric.PortAttr
}

// CM is a process's RDMA CM over a fabric: librdmacm and the kernel's
// rdma_cm and ib_cm in one. It opens the ports its ids bind to (one
// transport each, registered for CM Sends) and asks the SA for routes
// through sa. Safe for concurrent use.
//
// The CM owns one reader goroutine per opened port and the CM timers;
// Close stops them, destroys every id and closes every channel and port.
// Lock order: CM.mu alone (it guards every id and channel); transports
// are called under it (their Send only queues).
//
// The IB CM follows Linux's (drivers/infiniband/core/cm.c with rdma_cm's
// choices): a REQ for a service nobody listens to gets REJ 8 (invalid
// service ID), a SIDR_REQ SIDR_REP 1, a DREQ for an unknown connection a
// DREP, at once; the passive side MRAs a REQ as it reports it (service
// timeout 24, as rdma_cm); a duplicate REQ gets the MRA again until the
// user accepts, and nothing after the REP (the REP's timer resends it); an
// MRA adds its service time to the try it answers; the REP and DREQ of a
// passive id are timed by the REQ's LocalCMResponseTimeout alone, an
// active id's tries by 2 x PacketLifeTime + the response timeout; a REQ
// that times out is not REJected (UNREACHABLE -ETIMEDOUT); destroying an
// id whose REQ is out sends REJ 4 with the CA's GUID as ARI, one whose REP
// is out REJ 28 of message "other"; a REJ on an established or
// disconnecting id reports REJECTED; a REQ on a listener without backlog
// credits is dropped (ucma's -ENOMEM: the peer's retries may find room);
// REP, RTU, DREP, MRA, REJ and SIDR_REP for unknown Comm IDs are dropped.
// The CM answers on every port it has open: those its ids bound, and the
// destination port of every connect when the fabric offers that port (every
// CA of the embedded simulator, the nodes= of an ibsim fabric), which it
// opens for the purpose, so a connect to a host of this fabric where no id
// listens is REJECTED 8 as on Linux. A port where another agent owns CM
// Sends (a umad agent of the script) is left to that agent.
//
// Differences from Linux + librdmacm, on purpose:
//   - ids have no verbs QP, but the active side behaves as librdmacm does
//     for an id with a QP: the REP is answered with an RTU at once and
//     the event is ESTABLISHED (never CONNECT_RESPONSE); QP numbers are
//     made up (or taken from ConnParam.QPNum);
//   - REQ and SIDR_REQ carry RDMA CM's 36-byte header (IP version 6, the
//     GIDs as addresses, the source port) before the user's private
//     data, as for IP addresses; the kernel puts no header in front of
//     AF_IB private data. Events report the full private data fields
//     (REQ 56 bytes, REP 196, REJ 148, SIDR_REQ 180);
//   - no timewait: an id leaves it at once and no TIMEWAIT_EXIT event
//     comes, so a duplicate REQ of a finished connection gets no REJ 10
//     (stale connection) and a REQ from a remote QP still in timewait is
//     not refused as stale;
//   - timers are 4.096 us x 2^n exactly; Linux rounds each to 2^(n-8) ms
//     (cm_convert_to_ms), about 4.6% less, and never below 1 ms;
//   - an MRA extends the try by its service time plus the id's whole
//     try time, where Linux adds the path's ACK timeout;
//   - a REQ from another program to a port this CM never opened goes
//     unanswered (ibsim drops it; the simulator's hosts have no CM of
//     their own);
//   - LAP and APR (alternate paths) are dropped: rdma_cm sets no
//     alternate path and ignores their events;
//   - DestroyID and MigrateID wait for acks at most AckWait (or ctx),
//     then return an error wrapping ETIMEDOUT (librdmacm waits forever);
//     the id is destroyed or migrated all the same.
//
// On a fabric that implements fabric.CMProvider (the kernel backend with
// /dev/infiniband/rdma_cm) the CM is librdmacm alone: the platform does
// the IB CM, resolves addresses and routes (the kernel asks the SA) and
// queues the events, and the CM keeps librdmacm's layer over it
// (cm_kernel.go). There, addresses are AF_IB (LIDs are turned into GIDs
// through the fabric's ports, or the SA for remote LIDs), so private data
// has no RDMA CM header in front (events report REQ 92 bytes, SIDR_REQ
// 216), a wildcard bind means every port, the CONNECT_RESPONSE is
// answered with the RTU only when it is fetched (as librdmacm does, so a
// synchronous accept waits until the active side fetches it), per-connect
// ResponseTimeout and MaxRetries are the platform's own, no reader
// goroutine runs, and Pending reports 1 when the platform's channel has
// an event (it gives no count) while WaitPending for more than one event
// is EOPNOTSUPP.
type CM struct {
	fab  fabric.Fabric
	sa   *Session
	opts CMOptions
	log  *slog.Logger
	wg   sync.WaitGroup

	mu         sync.Mutex // guards the fields below and every id's and channel's state
	closed     bool
	devs       map[uint16]*cmDev // by LID
	ids        map[uint32]*CMID
	comms      map[uint32]*CMID // by local Comm ID
	nextHandle uint32
	nextQPN    uint32
	chans      map[*EventChannel]bool
	// kdev is the platform's RDMA CM (nil: the engine's own IB CM);
	// byUID finds its ids by the cookie their events carry.
	kdev    fabric.CMDevice
	byUID   map[uint64]*CMID
	nextUID uint64
}

// NewCM returns a CM on fab whose routes come from sa's SA (sa may be on any
// port of the subnet). The CM does not own fab or sa. When fab implements
// fabric.CMProvider and its OpenCM succeeds, the CM drives that platform
// CM (see CM); when OpenCM reports errors.ErrUnsupported, it runs its own
// IB CM; another OpenCM error is NewCM's.
func NewCM(fab fabric.Fabric, sa *Session, opts *CMOptions) (*CM, error) {
	if fab == nil || sa == nil {
		return nil, errors.New("rdmacm: nil fabric or session")
	}
	var o CMOptions
	if opts != nil {
		o = *opts
	}
	if o.ResponseTimeout == 0 {
		o.ResponseTimeout = DefaultCMResponseTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxCMRetries
	}
	o.MaxRetries = min(o.MaxRetries, 15)
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	kdev, err := kOpen(fab)
	if err != nil {
		return nil, err
	}
	return &CM{fab: fab, sa: sa, opts: o, log: o.Logger, devs: map[uint16]*cmDev{},
		ids: map[uint32]*CMID{}, comms: map[uint32]*CMID{}, chans: map[*EventChannel]bool{},
		nextQPN: 0x100 + rand.Uint32N(0x1000), kdev: kdev, byUID: map[uint64]*CMID{}}, nil
}

// Platform reports whether the CM drives the fabric's own RDMA CM
// (fabric.CMProvider) rather than the engine's IB CM.
func (c *CM) Platform() bool { return c.kdev != nil }

// Close destroys every id without waiting for acks, closes every channel
// and port, and waits for the reader goroutines. It is idempotent.
func (c *CM) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	for _, id := range c.ids {
		if c.kdev != nil {
			c.kForgetLocked(id) // closing its channel destroys it
		} else {
			c.teardownLocked(id)
		}
	}
	for ch := range c.chans {
		ch.closeLocked()
	}
	devs := c.devs
	c.devs = map[uint16]*cmDev{}
	c.mu.Unlock()
	var errs []error
	if c.kdev != nil {
		if err := c.kdev.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, d := range devs {
		if err := d.tr.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	c.wg.Wait()
	return errors.Join(errs...)
}

func errno(op string, e syscall.Errno, format string, args ...any) error {
	return fmt.Errorf("rdmacm: %s: %s: %w", op, fmt.Sprintf(format, args...), e)
}

// CreateEventChannel is rdma_create_event_channel.
func (c *CM) CreateEventChannel() (*EventChannel, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("rdmacm: create_event_channel: %w", net.ErrClosed)
	}
	if c.kdev != nil {
		ch, err := c.kNewChannelLocked(false)
		if err != nil {
			return nil, fmt.Errorf("rdmacm: create_event_channel: %w", err)
		}
		return ch, nil
	}
	return c.newChannelLocked(false), nil
}

func (c *CM) newChannelLocked(private bool) *EventChannel {
	ch := &EventChannel{cm: c, private: private, wake: make(chan struct{})}
	c.chans[ch] = true
	return ch
}

func (ch *EventChannel) closeLocked() {
	if !ch.closed {
		ch.closed = true
		close(ch.wake)
		delete(ch.cm.chans, ch)
		if ch.kch != nil {
			if err := ch.kch.Close(); err != nil {
				ch.cm.log.Debug("rdmacm: close channel", "err", err)
			}
		}
	}
}

func (ch *EventChannel) push(ev *CMEvent) {
	ch.q = append(ch.q, ev)
	close(ch.wake)
	ch.wake = make(chan struct{})
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

// Poll waits until ch has an event to fetch (poll(2)'s POLLIN on an
// rdma_cm fd) or ctx ends.
func (ch *EventChannel) Poll(ctx context.Context) error { return ch.WaitPending(ctx, 1) }

// WaitPending waits until at least n events are queued on ch, unfetched,
// or ctx ends.
func (ch *EventChannel) WaitPending(ctx context.Context, n int) error {
	c := ch.cm
	if ch.kch != nil {
		return ch.kWaitPending(ctx, n)
	}
	for {
		c.mu.Lock()
		have, closed, wake := len(ch.q), ch.closed, ch.wake
		c.mu.Unlock()
		switch {
		case closed:
			return fmt.Errorf("rdmacm: poll: %w", net.ErrClosed)
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
func (ch *EventChannel) Pending() int {
	if ch.kch != nil {
		return ch.kPending()
	}
	ch.cm.mu.Lock()
	defer ch.cm.mu.Unlock()
	return len(ch.q)
}

// CreateID is rdma_create_id: ch nil puts the id in synchronous mode (it
// gets a private channel, and its calls block until they complete). ps is
// PSTCP, PSUDP, PSIPoIB or PSIB (RC, or UD when ud).
func (c *CM) CreateID(ch *EventChannel, ps PortSpace, ud bool) (*CMID, error) {
	switch ps {
	case PSTCP:
		ud = false
	case PSUDP, PSIPoIB:
		ud = true
	case PSIB:
	default:
		return nil, errno("create_id", syscall.EINVAL, "port space 0x%04x", uint16(ps))
	}
	if c.kdev != nil {
		return c.kCreateID(ch, ps, ud)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, fmt.Errorf("rdmacm: create_id: %w", net.ErrClosed)
	}
	sync := ch == nil
	if sync {
		ch = c.newChannelLocked(true)
	} else if ch.closed || ch.cm != c {
		return nil, errno("create_id", syscall.EINVAL, "closed or foreign channel")
	}
	c.nextHandle++
	id := &CMID{cm: c, handle: c.nextHandle, ps: ps, ud: ud, ch: ch, sync: sync, ackWake: make(chan struct{})}
	ch.ids++
	c.ids[id.handle] = id
	return id, nil
}

func (c *CM) newChildLocked(l *CMID) *CMID {
	c.nextHandle++
	id := &CMID{cm: c, handle: c.nextHandle, ps: l.ps, ud: l.ud, ch: l.ch, ackWake: make(chan struct{}),
		listener: l, dev: l.dev, src: l.src}
	l.ch.ids++
	c.ids[id.handle] = id
	return id
}

// queueLocked puts an event of id on the channel that owns it now.
func (c *CM) queueLocked(id *CMID, ev *CMEvent) {
	if ev.ID == nil {
		ev.ID = id
	}
	if ev.credited == nil {
		ev.credited = id
	}
	if id.ch.closed {
		return
	}
	id.ch.push(ev)
}

// GetEvent is rdma_get_cm_event: it waits for the next event of ch until
// ctx ends.
func (ch *EventChannel) GetEvent(ctx context.Context) (*CMEvent, error) {
	c := ch.cm
	if ch.kch != nil {
		return ch.kGetEvent(ctx)
	}
	for {
		c.mu.Lock()
		if ch.closed {
			c.mu.Unlock()
			return nil, fmt.Errorf("rdmacm: get_cm_event: %w", net.ErrClosed)
		}
		if len(ch.q) > 0 {
			ev := ch.q[0]
			ch.q = ch.q[1:]
			ev.credited.eventsReported++
			if ev.Type == EventConnectRequest {
				ev.credited.backlog++
				if ev.credited.sync {
					// A synchronous listener hands out synchronous ids.
					child := ev.ID
					child.ch.ids--
					child.ch = c.newChannelLocked(true)
					child.ch.ids++
					child.sync = true
				}
			}
			c.mu.Unlock()
			return ev, nil
		}
		wake := ch.wake
		c.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// AckEvent is rdma_ack_cm_event. Acking an event twice is EINVAL.
func (c *CM) AckEvent(ev *CMEvent) error {
	if ev == nil {
		return errno("ack_cm_event", syscall.EINVAL, "nil event")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if ev.acked {
		return errno("ack_cm_event", syscall.EINVAL, "event %v of id %d acked twice", ev.Type, ev.credited.handle)
	}
	ev.acked = true
	id := ev.credited
	id.eventsCompleted++
	close(id.ackWake)
	id.ackWake = make(chan struct{})
	return nil
}

// Unacked returns the number of events of id fetched and not acknowledged.
func (id *CMID) Unacked() int {
	id.cm.mu.Lock()
	defer id.cm.mu.Unlock()
	return id.eventsReported - id.eventsCompleted
}

// waitAcks waits until id's fetched events are all acked. c.mu is held and
// is held again on return.
func (c *CM) waitAcksLocked(ctx context.Context, op string, id *CMID) error {
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

func (c *CM) checkLocked(op string, id *CMID) error {
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

// MigrateID is rdma_migrate_id: it moves id to ch (nil: synchronous mode),
// moving its unread events to the tail of ch's queue in order, then waits
// until the events of id fetched and not acked are acked — until ctx ends
// or the CM's AckWait passes, when it returns an error wrapping ETIMEDOUT
// (the id has moved by then). Migrating a synchronous id to nil is EINVAL.
func (c *CM) MigrateID(ctx context.Context, id *CMID, ch *EventChannel) error {
	const op = "migrate_id"
	if c.kdev != nil {
		return c.kMigrateID(ctx, id, ch)
	}
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
	sync := ch == nil
	if sync {
		ch = c.newChannelLocked(true)
	}
	old := id.ch
	var keep, moved []*CMEvent
	for _, ev := range old.q {
		if ev.ID == id || (ev.credited == id && ev.ID.ch == old) {
			// The kernel moves the id's events; a CONNECT_REQUEST of a
			// listener moves with it (the child is owned with it).
			moved = append(moved, ev)
			if ev.ID != id {
				old.ids--
				ev.ID.ch = ch
				ch.ids++
			}
			continue
		}
		keep = append(keep, ev)
	}
	old.q = keep
	ch.q = append(ch.q, moved...) // to the tail, in order (also when ch is old)
	old.ids--
	ch.ids++
	id.ch = ch
	if len(ch.q) > 0 {
		close(ch.wake)
		ch.wake = make(chan struct{})
	}
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
	return c.waitAcksLocked(ctx, op, id)
}

// DestroyID is rdma_destroy_id: it tears the connection down (DREQ or REJ
// to the peer), discards the id's unread events (a listener's unread
// CONNECT_REQUESTs destroy their new ids), then waits as MigrateID does
// for the acks of the events already fetched.
func (c *CM) DestroyID(ctx context.Context, id *CMID) error {
	const op = "destroy_id"
	if c.kdev != nil {
		return c.kDestroyID(ctx, id)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	c.teardownLocked(id)
	if id.parked != nil && !id.parked.acked {
		id.parked.acked = true
		id.parked.credited.eventsCompleted++
	}
	err := c.waitAcksLocked(ctx, op, id)
	return err
}

// teardownLocked is the kernel half of DESTROY_ID.
func (c *CM) teardownLocked(id *CMID) {
	if id.state == stDestroyed {
		return
	}
	switch id.state {
	case stEstablished, stDreqRcvd:
		if id.state == stEstablished {
			c.sendLocked(id, c.dreqLocked(id))
		} else {
			c.sendLocked(id, c.simpleLocked(id, cm.AttrDREP))
		}
	case stReqRcvd:
		c.sendLocked(id, c.rejLocked(id, cm.MsgREQ, cm.RejConsumerDefined, nil))
	case stRepSent:
		// cm_format_rej names no message from REP_SENT: "other".
		c.sendLocked(id, c.rejLocked(id, cm.MsgOther, cm.RejConsumerDefined, nil))
	case stReqSent, stMRARcvd:
		if id.dev == nil {
			break
		}
		// REJ timeout with the local CA's GUID as ARI, as cm_destroy_id.
		b := c.rejLocked(id, cm.MsgOther, cm.RejTimeout, nil)
		var r cm.REJ
		_ = r.UnmarshalBinary(b[mad.HeaderSize:])
		r.RejectInfoLength = 8
		binary.BigEndian.PutUint64(r.ARI[:], id.dev.attr.NodeGUID)
		_, _ = r.AppendBinary(b[mad.HeaderSize:mad.HeaderSize])
		c.sendLocked(id, b)
	case stSIDRReqRcvd:
		c.sendSIDRRepLocked(id, cm.SIDRRejected, nil)
	}
	c.stopTimerLocked(id)
	if id.localComm != 0 {
		delete(c.comms, id.localComm)
	}
	id.state = stDestroyed
	delete(c.ids, id.handle)
	var keep []*CMEvent
	var children []*CMID
	for _, ev := range id.ch.q {
		switch {
		case ev.ID == id:
		case ev.credited == id && ev.Type == EventConnectRequest:
			children = append(children, ev.ID)
		default:
			keep = append(keep, ev)
		}
	}
	id.ch.q = keep
	id.ch.ids--
	if id.ch.private && id.ch.ids == 0 {
		id.ch.closeLocked()
	}
	// A listener's unread requests destroy their new ids (REJ to the peers).
	for _, child := range children {
		c.teardownLocked(child)
	}
}

// complete is librdmacm's ucma_complete for synchronous ids: ack the
// parked event, fetch the next one from the private channel and park it;
// a non-zero status is the call's error.
func (c *CM) complete(ctx context.Context, op string, id *CMID) error {
	c.mu.Lock()
	if !id.sync {
		c.mu.Unlock()
		return nil
	}
	if id.parked != nil && !id.parked.acked {
		id.parked.acked = true
		id.parked.credited.eventsCompleted++
	}
	id.parked = nil
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
func (id *CMID) LastEvent() *CMEvent {
	id.cm.mu.Lock()
	defer id.cm.mu.Unlock()
	return id.parked
}

// GetRequest is rdma_get_request for a synchronous listener: it waits for
// the next CONNECT_REQUEST on the listener's private channel, acks it, and
// returns the new id (synchronous, on a private channel of its own).
// Other events of the listener are acked and skipped.
func (c *CM) GetRequest(ctx context.Context, l *CMID) (*CMID, error) {
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
