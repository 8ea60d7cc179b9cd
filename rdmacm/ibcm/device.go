// Package ibcm is an RDMA CM in user space: the kernel's rdma_cm (ucma and
// cma) and ib_cm over the IB CM's MADs (class 0x07), as a fabric.CMDevice,
// for fabrics whose platform has none (the embedded simulator, ibsim, a
// host without /dev/infiniband/rdma_cm). It is to the kernel's rdma_cm what
// fabric/mux is to its umad: package rdmacm drives it through the same
// contract as the kernel's, so librdmacm's layer is written once.
//
// Addresses are AF_IB (fabric.CMAddr: a GID, a P_Key, a service ID), so
// private data has no RDMA CM header in front, as the kernel does for
// AF_IB: a REQ carries up to 92 bytes of the caller's data, a SIDR_REQ
// 216, and events report the message's whole private data field. Or they
// are IP addresses (AF_INET, AF_INET6), which resolve as IPoIB's would:
// to the port whose IPoIB interface has the address (fabric.IPoIB, the
// simulator's topology "# ipoib" lines, and Options.IPoIB); an address no
// port has is ADDR_ERROR -ETIMEDOUT once the resolve timeout passes (the
// neighbour never answered). Then the REQ's (SIDR_REQ's) private data
// starts with RDMA CM's 36-byte IP header (iphdr.go), as the kernel's cma
// writes it: the caller's data is at most 56 (180) bytes, a listener with
// an IP address takes requests whose header names its address (any, for
// a wildcard AF_INET6 one; IPv4 only for a wildcard AF_INET one), reports
// the 56 (180) bytes after the header and gives the new id the header's
// addresses; a request no such listener takes is REJected 28 (consumer
// defined), as Linux does when cma finds no id for it.
//
// The device follows Linux (drivers/infiniband/core/cm.c with rdma_cm's
// choices): a REQ for a service nobody listens to gets REJ 8 (invalid
// service ID), a SIDR_REQ SIDR_REP 1, a DREQ for an unknown connection a
// DREP, at once; the passive side MRAs a REQ as it reports it (service
// timeout 24, as rdma_cm); a duplicate REQ gets the MRA again until the
// user accepts, and nothing after the REP (the REP's timer resends it); an
// MRA adds its service time to the try it answers; the REP and DREQ of a
// passive id are timed by the REQ's LocalCMResponseTimeout alone, an
// active id's tries by 2 x PacketLifeTime + the response timeout; a REQ
// that times out is not REJected (UNREACHABLE -ETIMEDOUT); a REP is
// reported as CONNECT_RESPONSE and the RTU goes when the caller accepts
// it (ACCEPT with no param, as librdmacm does for an id with a QP);
// destroying an id whose REQ is out sends REJ 4 with the CA's GUID as ARI,
// one whose REP is out REJ 28 of message "other"; a REJ on an established
// or disconnecting id reports REJECTED; a REQ on a listener without
// backlog credits is dropped (ucma's -ENOMEM: the peer's retries may find
// room; a credit comes back as the CONNECT_REQUEST is fetched); REP, RTU,
// DREP, MRA, REJ and SIDR_REP for unknown Comm IDs are dropped; events of
// a new id are dropped until it is accepted (ucma_event_handler).
//
// The device answers on every port it has open: those its ids bound, and
// the destination port of every connect when the fabric offers that port
// (every CA of the embedded simulator, the nodes= of an ibsim fabric),
// which it opens for the purpose, so a connect to a host of this fabric
// where no id listens is REJECTED 8 as on Linux. A port where another
// agent owns CM Sends (a umad agent of the script) is left to that agent.
// An id bound to the wildcard address takes the SA session's port (or the
// first CA port with a LID) as its source; a listener on it answers
// requests on every port the device has open, and its new ids are on the
// port each request came in on.
//
// Differences from Linux, on purpose:
//   - no timewait: an id leaves it at once and no TIMEWAIT_EXIT event
//     comes, so a duplicate REQ of a finished connection gets no REJ 10
//     (stale connection);
//   - timers are 4.096 us x 2^n exactly; Linux rounds each to 2^(n-8) ms
//     (cm_convert_to_ms), about 4.6% less, and never below 1 ms;
//   - an MRA extends the try by its service time plus the id's whole
//     try time, where Linux adds the path's ACK timeout;
//   - a REQ from another program to a port this device never opened goes
//     unanswered (ibsim drops it; the simulator's hosts have no CM of
//     their own);
//   - LAP and APR (alternate paths) are dropped: rdma_cm sets no
//     alternate path and ignores their events;
//   - a channel counts its queued events (Pending, WaitPending), which an
//     rdma_cm fd cannot.
//
// The device owns one reader goroutine per opened port, one goroutine per
// RESOLVE_ROUTE's SA query, and the CM timers; Close stops them, closes every channel (destroying its ids) and port.
// Lock order: Device.mu alone (it guards every id and channel);
// transports are called under it (their Send only queues).
package ibcm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cm"
	"github.com/ibscript/ibscript/mad/sa"
)

// Defaults (rdmacm-abi.md section 10.4, RDMA CM's choices).
const (
	DefaultResponseTimeout   uint8 = 20 // 4.096 us x 2^20, about 4.3 s
	DefaultMaxRetries        uint8 = 15
	DefaultMRAServiceTimeout uint8 = 24 // about 68.7 s
	udpQKey                        = 0x01234567
	psUDP, psIPoIB                 = 0x0111, 0x0002
	qpTypeUD                 uint8 = 4
	maxBacklog                     = 1024
	ephemeralLow, ephemeralN       = 32768, 28232
)

// Options configure a Device. A nil *Options means defaults.
type Options struct {
	// ResponseTimeout is the CM response timeout exponent (4.096 us x
	// 2^v) put in REQs; 0 means DefaultResponseTimeout.
	ResponseTimeout uint8
	// MaxRetries is the CM retries of REQ, REP and DREQ; 0 means
	// DefaultMaxRetries (at most 15, the field's width).
	MaxRetries uint8
	// Logger gets debug records of dropped CM MADs. nil discards.
	Logger *slog.Logger
	// IPoIB are IPoIB addresses of the fabric's ports in addition to
	// those the fabric itself gives (fabric.IPoIB: the simulator's): how
	// IP addresses resolve on a fabric that has none of its own (ibsim).
	IPoIB []fabric.IPoIBAddr
}

// Device is the user-space RDMA CM on one fabric: a fabric.CMDevice.
type Device struct {
	fab  fabric.Fabric
	sa   *engine.Session
	opts Options
	log  *slog.Logger
	wg   sync.WaitGroup
	// ctx ends with Close: the SA queries of RESOLVE_ROUTE stop.
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex // guards the fields below and every id's and channel's state
	closed     bool
	ports      map[uint16]*port // by LID
	ids        map[uint32]*kid
	comms      map[uint32]*kid // by local Comm ID
	nextHandle uint32
	chans      map[*Channel]bool
}

var _ fabric.CMDevice = (*Device)(nil)

// port is one local port the device speaks on: a transport of its own with
// an agent for CM Sends, and its reader goroutine.
type port struct {
	tr    fabric.Transport
	agent fabric.AgentID
	attr  fabric.PortAttr
}

// New returns the device on fab whose routes come from sa's SA (sa may be
// on any port of the subnet). The device does not own fab or sa.
func New(fab fabric.Fabric, sa *engine.Session, opts *Options) *Device {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ResponseTimeout == 0 {
		o.ResponseTimeout = DefaultResponseTimeout
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = DefaultMaxRetries
	}
	o.MaxRetries = min(o.MaxRetries, 15)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Device{fab: fab, sa: sa, opts: o, log: o.Logger, ctx: ctx, cancel: cancel, ports: map[uint16]*port{},
		ids: map[uint32]*kid{}, comms: map[uint32]*kid{}, chans: map[*Channel]bool{}}
}

// OpenChannel opens one event channel.
func (d *Device) OpenChannel() (fabric.CMChannel, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("ibcm: create_event_channel: %w", net.ErrClosed)
	}
	ch := &Channel{d: d, wake: make(chan struct{})}
	d.chans[ch] = true
	return ch, nil
}

// Close closes every channel (destroying their ids: DREQ or REJ to the
// peers) and port, and waits for the reader goroutines. It is idempotent.
func (d *Device) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	for ch := range d.chans {
		ch.closeLocked()
	}
	d.closed = true
	d.cancel()
	ports := d.ports
	d.ports = map[uint16]*port{}
	d.mu.Unlock()
	var errs []error
	for _, p := range ports {
		if err := p.tr.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	d.wg.Wait()
	return errors.Join(errs...)
}

// kid states (ib_cm's and rdma_cm's, merged).
type state int

const (
	stIdle state = iota
	stBound
	stAddrResolved
	stRouteQuery // RESOLVE_ROUTE's SA query is out
	stRouteResolved
	stListen
	stReqSent
	stMRARcvd
	stReqRcvd
	stRepSent
	stRepRcvd
	stEstablished
	stDreqSent
	stDreqRcvd
	stTimewait
	stSIDRReqSent
	stSIDRReqRcvd
	stDestroyed
)

// kid is one id of the device (the kernel's rdma_id_private with its
// cm_id_private).
type kid struct {
	handle     uint32
	uid        uint64
	ps         uint16
	ud         bool
	ch         *Channel
	reported   uint32
	state      state
	port       *port
	wild       bool   // bound to the wildcard address (port is the default one)
	srcPort    uint16 // the RDMA CM port number bound
	pkey       uint16
	dgid       mad.GID
	dport      uint16
	dlid       uint16
	sl         uint8
	qpn        uint32
	localComm  uint32
	remoteComm uint32
	remoteQPN  uint32
	remoteGUID uint64
	tid        uint64
	last       []byte // the MAD a timer resends
	tries      int
	maxTries   int
	timeout    time.Duration
	timer      *time.Timer
	gen        int // timer generation: a stale timer does nothing
	listener   *kid
	backlog    int
	route      *sa.PathRec
	// IP addresses (AF_INET, AF_INET6): ip says the id has them; srcIP
	// is the bound address (unspecified: the wildcard) or, once resolved
	// or accepted, the one in use; dstIP and dport the peer's. afonly: an
	// AF_INET id (IPv4 only), as cma_bind_addr sets it.
	ip           bool
	afonly       bool
	srcIP, dstIP netip.Addr
}

func (i *kid) sid() uint64 { return uint64(i.ps)<<16 | uint64(i.srcPort) }

// devErr is a command's error: the command, the id, the errno.
func devErr(op string, id uint32, e syscall.Errno, format string, args ...any) error {
	if format == "" {
		return fmt.Errorf("ibcm: %s: id %d: %w", op, id, e)
	}
	return fmt.Errorf("ibcm: %s: id %d: %s: %w", op, id, fmt.Sprintf(format, args...), e)
}

// defaultLIDLocked is the port a wildcard address takes: the SA session's
// port when it is a CA port of the fabric, else the first port with a LID.
func (d *Device) defaultLID(ports []fabric.PortAttr) uint16 {
	lid := d.sa.Port().LID
	if slices.ContainsFunc(ports, func(pa fabric.PortAttr) bool { return pa.LID == lid }) {
		return lid
	}
	for _, pa := range ports {
		if pa.LID != 0 {
			return pa.LID
		}
	}
	return 0
}

// portLocked returns the device's port with the given GID (zero: the
// default port) or LID, opening it on first use.
func (d *Device) portLocked(ctx context.Context, gid mad.GID, lid uint16) (*port, error) {
	ports, err := d.fab.Ports(ctx)
	if err != nil {
		return nil, err
	}
	if lid == 0 && gid == (mad.GID{}) {
		lid = d.defaultLID(ports)
	}
	if p, ok := d.ports[lid]; ok && lid != 0 {
		return p, nil
	}
	for _, pa := range ports {
		if (lid != 0 && pa.LID == lid) || (lid == 0 && mad.NewGID(pa.GIDPrefix, pa.PortGUID) == gid) {
			if p, ok := d.ports[pa.LID]; ok {
				return p, nil
			}
			tr, err := d.fab.Open(ctx, pa.CAName, pa.PortNum)
			if err != nil {
				return nil, err
			}
			ag := fabric.Agent{Class: mad.ClassCM, Version: cm.ClassVersion}.WithMethods(mad.MethodSend)
			id, err := tr.Register(ctx, ag)
			if err != nil {
				tr.Close()
				return nil, err
			}
			p := &port{tr: tr, agent: id, attr: tr.Port()}
			d.ports[pa.LID] = p
			d.wg.Go(func() { d.read(p) })
			return p, nil
		}
	}
	if lid != 0 {
		return nil, fmt.Errorf("no local port has lid %d: %w", lid, syscall.ENODEV)
	}
	return nil, fmt.Errorf("no local port has GID %v: %w", gid, syscall.ENODEV)
}

// peerPortLocked opens the device's port at dlid when the fabric offers
// that port, so the peer's side answers as Linux's CM does on every port
// (REJ 8, SIDR_REP 1 when nothing listens there). A port the device cannot
// open (another agent owns CM Sends on it, no ibsim slot is free) stays
// silent, as a host without a CM.
func (d *Device) peerPortLocked(ctx context.Context, dlid uint16) {
	if _, ok := d.ports[dlid]; ok || dlid == 0 {
		return
	}
	ports, err := d.fab.Ports(ctx)
	if err != nil || !slices.ContainsFunc(ports, func(pa fabric.PortAttr) bool { return pa.LID == dlid }) {
		return
	}
	if _, err := d.portLocked(ctx, mad.GID{}, dlid); err != nil {
		d.log.Debug("ibcm: the peer's port has no CM here", "dlid", dlid, "err", err)
	}
}

// lidOfGID finds gid among the fabric's ports.
func (d *Device) lidOfGID(ctx context.Context, gid mad.GID) uint16 {
	ports, err := d.fab.Ports(ctx)
	if err != nil {
		return 0
	}
	for _, pa := range ports {
		if mad.NewGID(pa.GIDPrefix, pa.PortGUID) == gid {
			return pa.LID
		}
	}
	return 0
}

// pathTo asks the SA for a PathRecord from slid to dlid, or to dgid when
// the fabric does not know its LID.
func (d *Device) pathTo(ctx context.Context, slid, dlid uint16, sgid, dgid mad.GID) (*sa.PathRec, error) {
	if dlid != 0 {
		return d.sa.PathRecord(ctx, slid, dlid)
	}
	t := sa.NewPathRecordTemplate().SetSGID(sgid).SetDGID(dgid).SetNumbPath(1)
	rec, err := d.sa.SAGet(ctx, t.Attr(), t.ComponentMask(), t.Bytes())
	if err != nil {
		return nil, err
	}
	var p sa.PathRec
	if err := p.UnmarshalBinary(rec); err != nil {
		return nil, fmt.Errorf("PathRecord to %v: %w", dgid, err)
	}
	return &p, nil
}

func (d *Device) newCommLocked(i *kid) uint32 {
	for {
		v := rand.Uint32()
		if _, used := d.comms[v]; v != 0 && !used {
			d.comms[v] = i
			return v
		}
	}
}
