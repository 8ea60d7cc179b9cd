// Package ibsim is a native client of ibsim's datagram protocol (as
// ibsim's ibsim/sim.h and umad2sim/sim_client.c define it): it attaches to one port of an ibsim fabric as
// umad2sim does, without LD_PRELOAD, and gives it umad semantics through a
// fabric/mux Mux.
//
// ibsim answers SMPs and PerfMgt MADs itself, forwards other requests to
// the clients attached to the destination port (QP0/QP1 requests only to
// an issm client, Options.ISSM), and never times anything out: the Mux's
// timers are the only ones. ibsim overwrites bits 48..63 of every request
// TID with the sender's slot; the Mux of a Transport is created with that
// slot as its TID tag (mux.NewPortTagged), so the TIDs the Mux keeps, the
// peer sees and the response carries are the same.
//
// A packet ibsim cannot route or deliver comes back at once as the
// sender's own packet with status 110; the Transport counts it
// (Stats.Dropped) and ends that try of the request now (mux.Mux.Lost): the
// next try goes out at once, and the request times out when none is left,
// as umad2sim hands the bounce to libibmad as an immediate ETIMEDOUT. The
// retries are those of a fabric that lost the MAD, without the waits.
//
// ibsim has 10 client slots fabric-wide: Close DISCONNECTs, so no slot
// leaks on any exit path that runs Close.
package ibsim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/mux"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// DefaultSockName is the socket base name ibsim and umad2sim use when
// IBSIM_SOCKNAME is unset; Open and NewFabric use it for an empty name
// (reading the environment is the caller's business).
const DefaultSockName = "sim"

// ErrNoServer is wrapped by Open's error when nothing listens on the
// socket name's control socket (no ibsim runs with that name).
var ErrNoServer = errors.New("no ibsim listens on that socket name")

// DefaultCtlTimeout bounds every control-channel exchange.
const DefaultCtlTimeout = 2 * time.Second

// SendTimeout bounds how long one MAD waits for room in ibsim's socket
// queue before Send fails.
const SendTimeout = 5 * time.Second

// CAName is the CA name a Transport reports, as umad2sim names its CA.
const CAName = "ibsim0"

// Options configure Open. A nil *Options means defaults.
type Options struct {
	// Node is the node id or node description to attach to (SIM_HOST);
	// empty attaches to ibsim's default node. ibsim attaches to the
	// node's first port: port 0 of a switch, port 1 of a CA.
	Node string
	// ISSM connects with issm=1: the port's QP0/QP1 requests that ibsim
	// does not answer itself (SA, SMInfo, vendor classes) are forwarded
	// to this client. ibsim allows one issm client per node. It does not
	// change the port's CapabilityMask.
	ISSM bool
	// SetISSM also sends SET_ISSM(1), which sets CapabilityMask.IsSM on
	// the port (as opening /dev/infiniband/issm0 does); Close clears it.
	SetISSM bool
	// QP > 1 makes this client receive requests sent to that QP of the
	// port, without being issm.
	QP uint32
	// Nodes makes a Fabric offer several local ports, one per node (id or
	// description): Ports lists them with the node as CA name and Open
	// attaches to the node named by ca, so one program can hold endpoints
	// on several hosts (RDMA CM between two of them). Open with an empty
	// ca attaches to Node, else to the first of Nodes. Transport ignores
	// it.
	Nodes []string
	// Server selects ibsim's UDP mode (ibsim -r): "host" or "host:port"
	// of its control port (default port 7070). Empty means the local
	// abstract unix sockets.
	Server string
	// CtlTimeout bounds each control exchange; 0 means DefaultCtlTimeout.
	CtlTimeout time.Duration
	// QueueLimit is passed to the Mux.
	QueueLimit int
	// Logger gets a debug line for every malformed datagram or MAD
	// ibsim sends (the latter through the Mux); nil discards.
	Logger *slog.Logger
	// UnixQueueLen is the host's net.unix.max_dgram_qlen
	// (/proc/sys/net/unix/max_dgram_qlen), which bounds the window when
	// the input socket cannot be paired with ibsim's (MaxWindow); 0
	// means 10, the kernel's default.
	UnixQueueLen int
}

// Stats are a Transport's counters: the Mux's and the client's own.
type Stats struct {
	mux.Stats
	Dropped    uint64 // packets ibsim bounced with status 110
	BadPacket  uint64 // datagrams of the wrong size
	SendErrors uint64 // MADs held for a batched write that failed (lost, as on a wire)
}

// Transport is one ibsim client with umad semantics (a fabric/mux Mux
// over ibsim's sockets) and the client's identity.
type Transport struct {
	m *mux.Mux
	c *client
}

var _ fabric.Transport = (*Transport)(nil)

// Register implements fabric.Transport.
func (t *Transport) Register(ctx context.Context, a fabric.Agent) (fabric.AgentID, error) {
	return t.m.Register(ctx, a)
}

// Unregister implements fabric.Transport.
func (t *Transport) Unregister(ctx context.Context, id fabric.AgentID) error {
	return t.m.Unregister(ctx, id)
}

// Send implements fabric.Transport.
func (t *Transport) Send(ctx context.Context, p *fabric.Packet) error { return t.m.Send(ctx, p) }

// Recv implements fabric.Transport.
func (t *Transport) Recv(ctx context.Context, p *fabric.Packet) error { return t.m.Recv(ctx, p) }

// Port describes the attached port.
func (t *Transport) Port() fabric.PortAttr { return t.m.Port() }

// Close DISCONNECTs (ibsim gets its slot back) and closes the sockets; it
// is idempotent.
func (t *Transport) Close() error { return t.m.Close() }

// Slot is the client slot ibsim gave this Transport (0..9).
func (t *Transport) Slot() int { return int(t.c.slot) }

// NodeID is the id of the node ibsim attached this Transport to.
func (t *Transport) NodeID() string { return t.c.nodeID }

// maxWindow is how many requests the Transport should have in flight at
// most (fabric.Caps.MaxWindow). ibsim answers with a non-blocking write
// that it retries in a busy loop while our input socket's queue is full.
// Over a unix socket that queue holds net.unix.max_dgram_qlen datagrams
// (10 by default) unless the sockets are a connected pair, which Open
// makes them: then, and over UDP, where the queue is counted in bytes,
// there is no limit (0). Should the pairing fail, the window stays two
// below the queue length, two places kept for traps and unsolicited MADs
// (measured on a 2,000-node fabric without pairing: 30-40 ms of ibsim CPU
// per sweep at 8 in flight, 170-800 ms at 16 to 64, and sweeps 3-20x
// slower).
func (t *Transport) maxWindow() int {
	if t.c.udp || t.c.paired {
		return 0
	}
	q := t.c.qlen
	if q <= 0 {
		q = 10
	}
	return max(1, q-2)
}

// Stats returns the counters.
func (t *Transport) Stats() Stats {
	return Stats{Stats: t.m.Stats(), Dropped: t.c.dropped.Load(), BadPacket: t.c.bad.Load(), SendErrors: t.c.sendErrs.Load()}
}

// client is the wire: the control and data sockets of one attachment.
type client struct {
	where  string // "ibsim sim" or "ibsim udp host:port", for errors
	ctlTO  time.Duration
	until  time.Time      // while attaching: the Open ctx's deadline, if any
	ctl    net.Conn       // connected to the control socket
	data   net.PacketConn // bound input socket
	out    net.Addr       // ibsim's data socket for our slot
	slot   uint32
	nodeID string
	issm   bool // SET_ISSM(1) sent
	served bool // CONNECTed issm: QP0/QP1 requests to the port come here
	udp    bool // attached over UDP (Options.Server), not a unix socket
	paired bool // our input socket is connected back to ibsim's (Open)
	qlen   int  // Options.UnixQueueLen

	mux *mux.Mux     // set before the reader starts
	log *slog.Logger // likewise; never nil

	ctlMu sync.Mutex // serialises control exchanges

	inMu     sync.Mutex // guards inbox and free
	inbox    []*inPacket
	free     []*inPacket
	wake     chan struct{} // cap 1: the inbox may be non-empty
	readDone chan struct{} // closed when read returns

	dropped, bad atomic.Uint64

	// Sends made while the deliverer hands a batch of answers to the Mux
	// (the next requests, mostly) are held and written together with one
	// sendmmsg when the batch is done: one system call, and one wake-up
	// of ibsim, instead of one each. nil batch: no holding.
	batch     *batchSender
	outMu     sync.Mutex // guards the fields below
	corked    bool
	nOut      int
	outBufs   [maxBatch][requestSize]byte
	sendErrs  atomic.Uint64 // held MADs the flush could not write
	goneErr   atomic.Pointer[fabric.PeerGoneError]
	wg        sync.WaitGroup
	closeOnce sync.Once
	closing   atomic.Bool
	onClose   atomic.Pointer[func()] // run once closed (Fabric forgets the Transport)
}

var idSeq atomic.Uint32

// Open attaches a new client to the ibsim fabric whose socket base name is
// sock (empty: DefaultSockName) and returns it as a Transport.
// ctx bounds the attachment; the control exchanges are bounded by
// Options.CtlTimeout as well.
func Open(ctx context.Context, sock string, opts *Options) (*Transport, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CtlTimeout <= 0 {
		o.CtlTimeout = DefaultCtlTimeout
	}
	if sock == "" {
		sock = DefaultSockName
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	c, id, err := bind(sock, &o)
	if err != nil {
		return nil, err
	}
	c.ctlTO = o.CtlTimeout
	c.qlen = o.UnixQueueLen
	c.until, _ = ctx.Deadline()
	fail := func(err error) (*Transport, error) {
		c.ctl.Close()
		c.data.Close()
		return nil, err
	}
	// CONNECT
	var req simCtl
	req.Type = ctlConnect
	req.Len = clientInfoSize
	ci := clientInfo{ID: id, QP: o.QP, NodeID: o.Node}
	if o.ISSM || o.SetISSM {
		ci.ISSM = 1
		c.served = true
	}
	if err := ci.Put(req.Data[:]); err != nil {
		return fail(err)
	}
	rep, err := c.exchange(&req)
	if err != nil {
		return fail(fmt.Errorf("%s: connect: %w", c.where, err))
	}
	if rep.Type == ctlError {
		node := o.Node
		if node == "" {
			node = "(default node)"
		}
		return fail(fmt.Errorf("%s: connect to node %q refused: %s", c.where, node, c.refusal(&ci)))
	}
	ci.Get(rep.Data[:])
	c.slot, c.nodeID = ci.ID, ci.NodeID
	if c.slot >= maxClients {
		return fail(fmt.Errorf("%s: connect: slot %d out of range", c.where, c.slot))
	}
	c.out, err = c.outAddr(sock, &o)
	if err != nil {
		c.disconnect()
		return fail(err)
	}
	c.batch = newBatchSender(c.data, c.out)
	if !c.udp {
		// ibsim's socket for our slot is connected to our input socket;
		// connecting ours back makes the two a pair, and the kernel
		// does not hold a pair's datagrams to the receive queue's
		// length limit (net.unix.max_dgram_qlen), only to its memory.
		// Without it, ibsim spins on a full queue (see MaxWindow).
		c.paired = connectBack(c.data, c.out) == nil
	}
	attr, err := c.portAttr()
	if err == nil && o.SetISSM {
		if err = c.setISSM(1); err == nil {
			c.issm = true
			attr.CapMask |= smp.CapIsSM
		}
	}
	if err != nil {
		c.disconnect()
		return fail(err)
	}
	c.until = time.Time{} // later exchanges (Close) get their own CtlTimeout
	c.log = o.Logger
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.mux = mux.New(c, attr, &mux.Options{Port: mux.NewPortTagged(uint16(c.slot)), QueueLimit: o.QueueLimit, Logger: c.log, Intact: fabric.Always})
	c.wake, c.readDone = make(chan struct{}, 1), make(chan struct{})
	c.wg.Go(c.read)
	c.wg.Go(c.deliver)
	return &Transport{m: c.mux, c: c}, nil
}

// refusal says why ibsim refused CONNECT ci. Its reply is the same
// ERROR whether every slot is taken, the node is unknown or the node has
// an issm client already, so refusal asks: CONNECT to the default node
// without issm succeeds unless the slots are taken; the same node without
// issm succeeds unless it is unknown. A probe that gets a slot gives it
// back at once. ibsim's state can change between the probes; the answer
// is what they saw.
func (c *client) refusal(ci *clientInfo) string {
	const full = "all 10 of ibsim's client slots are taken"
	if ci.NodeID == "" && ci.ISSM == 0 {
		return full // the default node always exists
	}
	if ci.NodeID != "" && !c.probe(&clientInfo{ID: ci.ID}) {
		return full
	}
	if ci.ISSM != 0 && c.probe(&clientInfo{ID: ci.ID, QP: ci.QP, NodeID: ci.NodeID}) {
		return "another issm client (an SM such as OpenSM, or an ibscript with issm=1) is attached to that node"
	}
	if ci.NodeID == "" {
		return full
	}
	return "ibsim has no node of that id or NodeDescription"
}

// probe reports whether ibsim accepts CONNECT ci, giving the slot back if
// it does. The input socket is bound under ci.ID, as ibsim requires.
func (c *client) probe(ci *clientInfo) bool {
	req := simCtl{Type: ctlConnect, Len: clientInfoSize}
	if ci.Put(req.Data[:]) != nil {
		return false
	}
	rep, err := c.exchange(&req)
	if err != nil || rep.Type == ctlError {
		return false
	}
	var got clientInfo
	got.Get(rep.Data[:])
	if got.ID < maxClients {
		c.slot = got.ID
		_ = c.disconnect()
	}
	return true
}

// bind creates the control and input sockets under a fresh client ID.
func bind(sock string, o *Options) (*client, uint32, error) {
	if o.Server != "" {
		host, port, err := net.SplitHostPort(o.Server)
		if err != nil {
			host, port = o.Server, "7070"
		}
		raddr, err := net.ResolveUDPAddr("udp4", net.JoinHostPort(host, port))
		if err != nil {
			return nil, 0, fmt.Errorf("ibsim udp %s: %w", o.Server, err)
		}
		where := "ibsim udp " + raddr.String()
		data, err := net.ListenUDP("udp4", &net.UDPAddr{})
		if err != nil {
			return nil, 0, fmt.Errorf("%s: input socket: %w", where, err)
		}
		ctl, err := net.DialUDP("udp4", nil, raddr)
		if err != nil {
			data.Close()
			return nil, 0, fmt.Errorf("%s: control socket: %w", where, err)
		}
		id := uint32(data.LocalAddr().(*net.UDPAddr).Port)
		return &client{where: where, ctl: ctl, data: data, udp: true}, id, nil
	}
	where := fmt.Sprintf("ibsim %q", sock)
	pid := uint32(os.Getpid()) & 0x3fffff
	var lastErr error
	for range 16 {
		id := pid<<8 | (idSeq.Add(1) & 0xff)
		if id == 0 {
			continue
		}
		sid := strconv.FormatUint(uint64(id), 10)
		data, err := net.ListenUnixgram("unixgram", abstract(sock+":in"+sid))
		if err != nil {
			lastErr = err
			continue
		}
		ctl, err := net.DialUnix("unixgram", abstract(sock+":ctl"+sid), abstract(sock+":ctl"))
		if err != nil {
			data.Close()
			lastErr = err
			if errors.Is(err, syscall.EADDRINUSE) {
				continue
			}
			if errors.Is(err, syscall.ECONNREFUSED) {
				return nil, 0, fmt.Errorf("%s: control socket: %w: %w", where, plainErr(err), ErrNoServer)
			}
			return nil, 0, fmt.Errorf("%s: control socket: %w", where, plainErr(err))
		}
		return &client{where: where, ctl: ctl, data: data}, id, nil
	}
	return nil, 0, fmt.Errorf("%s: binding client sockets: %w", where, plainErr(lastErr))
}

// abstract is the abstract unix address ibsim uses for name: a leading
// NUL and a trailing NUL that is part of the name.
func abstract(name string) *net.UnixAddr {
	return &net.UnixAddr{Net: "unixgram", Name: "@" + name + "\x00"}
}

func (c *client) outAddr(sock string, o *Options) (net.Addr, error) {
	if o.Server == "" {
		return abstract(sock + ":out" + strconv.FormatUint(uint64(c.slot), 10)), nil
	}
	r := *c.ctl.RemoteAddr().(*net.UDPAddr)
	r.Port += 1 + int(c.slot)
	return &r, nil
}

// exchange sends one control request and reads its reply.
func (c *client) exchange(req *simCtl) (*simCtl, error) {
	c.ctlMu.Lock()
	defer c.ctlMu.Unlock()
	req.Magic = ctlMagic
	if req.Type != ctlConnect {
		req.ClientID = c.slot
	}
	deadline := time.Now().Add(c.ctlTO)
	if !c.until.IsZero() && c.until.Before(deadline) {
		deadline = c.until
	}
	if err := c.ctl.SetDeadline(deadline); err != nil {
		return nil, err
	}
	if _, err := c.ctl.Write(req.Marshal()); err != nil {
		return nil, fmt.Errorf("%w (is ibsim running?)", plainErr(err))
	}
	var buf [ctlSize + 1]byte
	for {
		n, err := c.ctl.Read(buf[:])
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return nil, fmt.Errorf("no reply to control request %d in time (%v at most): %w", req.Type, c.ctlTO, fabric.ErrTimeout)
			}
			return nil, fmt.Errorf("%w (is ibsim running?)", plainErr(err))
		}
		var rep simCtl
		if rep.Unmarshal(buf[:n]) != nil || rep.Magic != ctlMagic {
			continue
		}
		if rep.Type != req.Type && rep.Type != ctlError {
			continue // a late reply to an earlier, timed-out request
		}
		return &rep, nil
	}
}

// plainErr strips a *net.OpError, whose text would show the abstract
// socket names with their NUL bytes; the syscall error says enough, and
// the callers name the ibsim instance.
func plainErr(err error) error {
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Err != nil {
		return oe.Err
	}
	return err
}

// portAttr asks ibsim for the attached node's NodeInfo and port's PortInfo.
func (c *client) portAttr() (fabric.PortAttr, error) {
	var ni smp.NodeInfo
	var pi smp.PortInfo
	rep, err := c.exchange(&simCtl{Type: ctlGetNodeInfo})
	if err == nil && rep.Type == ctlError {
		err = errors.New("refused")
	}
	if err == nil {
		err = ni.UnmarshalBinary(rep.Data[:])
	}
	if err != nil {
		return fabric.PortAttr{}, fmt.Errorf("%s: get nodeinfo: %w", c.where, err)
	}
	rep, err = c.exchange(&simCtl{Type: ctlGetPortInfo, Len: 1})
	if err == nil && rep.Type == ctlError {
		err = errors.New("refused")
	}
	if err == nil {
		err = pi.UnmarshalBinary(rep.Data[:])
	}
	if err != nil {
		return fabric.PortAttr{}, fmt.Errorf("%s: get portinfo: %w", c.where, err)
	}
	a := fabric.PortAttr{
		CAName:    CAName,
		PortNum:   int(pi.LocalPortNum),
		NodeType:  int(ni.NodeType),
		NodeGUID:  ni.NodeGUID,
		PortGUID:  ni.NodeGUID,
		GIDPrefix: pi.GIDPrefix,
		LID:       pi.LID,
		LMC:       pi.LMC,
		SMLID:     pi.MasterSMLID,
		SMSL:      pi.MasterSMSL,
		State:     int(pi.PortState),
		PhysState: int(pi.PortPhysicalState),
		CapMask:   pi.CapabilityMask,
		// umad2sim's sysfs: one port directory, the client's.
		CAType: "simulator", FWVer: "1", HWVer: strconv.FormatUint(uint64(ni.Revision), 16),
		SysGUID: ni.SystemImageGUID, CANumPorts: int(pi.LocalPortNum),
	}
	// umad2sim's rate file: the extended speed only where the port
	// says it supports extended speeds.
	ext := pi.LinkSpeedExtActive
	if pi.CapabilityMask&smp.CapIsExtendedSpeedsSupported == 0 {
		ext = 0
	}
	a.Rate = smp.SysfsRate(pi.LinkWidthActive, pi.LinkSpeedActive, ext)
	if ni.NodeType != smp.NodeTypeSwitch {
		// ibsim's CA port GUIDs are the node GUID plus the port number.
		a.PortGUID = ni.NodeGUID + uint64(pi.LocalPortNum)
	}
	// The P_Keys as umad2sim lists them (pkeys/0..31): GET_PKEYS, 32
	// big-endian entries, zero-padded.
	rep, err = c.exchange(&simCtl{Type: ctlGetPKeys})
	if err == nil && rep.Type == ctlError {
		err = errors.New("refused")
	}
	if err != nil {
		return fabric.PortAttr{}, fmt.Errorf("%s: get pkeys: %w", c.where, err)
	}
	a.PKeys = make([]uint16, ctlDataSize/2)
	for i := range a.PKeys {
		a.PKeys[i] = uint16(rep.Data[2*i])<<8 | uint16(rep.Data[2*i+1])
	}
	return a, nil
}

func (c *client) setISSM(v uint32) error {
	req := simCtl{Type: ctlSetISSM, Len: 4}
	req.Data[0] = byte(v)
	rep, err := c.exchange(&req)
	if err == nil && rep.Type == ctlError {
		err = errors.New("refused")
	}
	if err != nil {
		return fmt.Errorf("%s: set issm %d: %w", c.where, v, err)
	}
	return nil
}

func (c *client) disconnect() error {
	rep, err := c.exchange(&simCtl{Type: ctlDisconnect})
	if err == nil && rep.Type == ctlError {
		err = errors.New("refused")
	}
	if err != nil {
		return fmt.Errorf("%s: disconnect slot %d: %w", c.where, c.slot, err)
	}
	return nil
}

var bufPool = sync.Pool{New: func() any { return new([requestSize]byte) }}

// Transmit implements mux.Wire.
func (c *client) Transmit(p *fabric.Packet) error {
	if c.closing.Load() {
		return fmt.Errorf("%s: transmit: %w", c.where, net.ErrClosed)
	}
	if p.Addr.GRH {
		// struct sim_request is LIDs, QPs and the MAD: no field holds a
		// GRH, and umad2sim drops one silently. Refused, not dropped.
		return fmt.Errorf("%s: send with a GRH (GID %v): ibsim's protocol carries no Global Route Header (struct sim_request has only LIDs and QPs): %w",
			c.where, netip.AddrFrom16(p.Addr.GID), fabric.ErrInvalid)
	}
	var r simRequest
	copy(r.MAD[:], p.Data)
	r.Length = mad.Size
	r.DLID = p.Addr.LID
	r.DQP = p.Addr.QPN
	class := mad.MgmtClassOf(p.Data)
	switch {
	case class == mad.ClassSubnDR:
		r.DLID, r.SLID = fabric.PermissiveLID, fabric.PermissiveLID
	case class == mad.ClassSubnLID:
	default:
		r.SQP = 1
	}
	if c.batch != nil {
		c.outMu.Lock()
		if c.corked {
			r.Put(c.outBufs[c.nOut][:])
			c.nOut++
			if c.nOut == maxBatch {
				c.flushLocked()
			}
			c.outMu.Unlock()
			return nil
		}
		c.outMu.Unlock()
	}
	b := bufPool.Get().(*[requestSize]byte)
	defer bufPool.Put(b)
	r.Put(b[:])
	// A write blocks while ibsim's socket queue is full; ibsim drains it
	// unless it is stopped (console Wait, SIGSTOP). Bound the wait. The
	// deadline is shared by concurrent writers, each extends it.
	_ = c.data.SetWriteDeadline(time.Now().Add(SendTimeout))
	if _, err := c.data.WriteTo(b[:], c.out); err != nil {
		if g := c.gone(err); g != nil {
			return g
		}
		return fmt.Errorf("%s: send to slot %d: %w (is ibsim still running?)", c.where, c.slot, plainErr(err))
	}
	return nil
}

// gone reports whether err shows that ibsim is gone (its socket refuses,
// resets or no longer exists); if so, the first time, it fails the Mux
// with the one error every waiter gets, and returns that error.
func (c *client) gone(err error) error {
	if g := c.goneErr.Load(); g != nil {
		return g
	}
	err = plainErr(err)
	if !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.ENOENT) &&
		!errors.Is(err, syscall.ENOTCONN) && !errors.Is(err, syscall.EPIPE) {
		return nil
	}
	g := &fabric.PeerGoneError{Peer: fmt.Sprintf("%s (slot %d)", c.where, c.slot), Err: err}
	if c.goneErr.CompareAndSwap(nil, g) {
		c.log.Debug("ibsim: the simulator is gone", "where", c.where, "slot", c.slot, "err", err)
		c.mux.Fail(g)
	}
	return c.goneErr.Load()
}

// inPacket is a received packet waiting for the deliverer.
type inPacket struct {
	addr fabric.Addr
	mad  [mad.Size]byte
	n    int // valid bytes of mad
	// bounced: our own request, which ibsim could not route or deliver
	// (status 110).
	bounced bool
}

// read drains the data socket into the inbox until the socket closes. It
// never calls the Mux itself: Deliver can run a handler that sends, and a
// send can block while ibsim's socket is full; if the reader were blocked
// there, ibsim could block writing to us and neither would ever drain the
// other (seen with 256 MADs in flight on a 2000-node fabric). The inbox is
// bounded by what ibsim sends, which is bounded by what is in flight.
func (c *client) read() {
	defer close(c.readDone)
	br := newBatchReceiver(c.data)
	var one [requestSize + 1]byte
	var lens [maxBatch]int
	for {
		// One recvmmsg takes every answer ibsim has queued (up to
		// maxBatch): one system call and one wake-up of the deliverer
		// for all of them.
		var n int
		var err error
		if br != nil {
			n, err = br.recv(&lens)

		} else {
			lens[0], _, err = c.data.ReadFrom(one[:])
			n = 1
		}
		if c.closing.Load() {
			return
		}
		if err != nil {
			if errors.Is(err, net.ErrClosed) || c.gone(err) != nil {
				return
			}
			continue
		}
		queued := false
		for i := range n {
			b := one[:lens[i]]
			if br != nil {
				b = br.bufs[i][:lens[i]]
			}
			queued = c.take(b) || queued
		}
		if queued {
			select {
			case c.wake <- struct{}{}:
			default:
			}
		}
	}
}

// take puts the datagram b in the inbox and reports whether it did (a
// malformed datagram is dropped and counted; a bounced one of ours is
// counted and goes to the Mux's Lost).
func (c *client) take(b []byte) bool {
	var r simRequest
	if r.Get(b) != nil {
		c.bad.Add(1)
		c.log.Debug("ibsim: malformed datagram dropped", "len", len(b), "want", requestSize, "from", c.where)
		return false
	}
	if r.Status != 0 {
		// Our own packet, bounced: its try is lost now (Mux.Lost).
		c.dropped.Add(1)
	}
	c.inMu.Lock()
	var ip *inPacket
	if k := len(c.free); k > 0 {
		ip, c.free = c.free[k-1], c.free[:k-1]
	} else {
		ip = new(inPacket)
	}
	ip.addr = fabric.Addr{LID: r.SLID, QPN: r.SQP}
	if r.SQP != 0 {
		ip.addr.QKey = 0x80010000
	}
	ip.mad = r.MAD
	ip.n = validLength(r.Length, &r.MAD)
	ip.bounced = r.Status != 0
	c.inbox = append(c.inbox, ip)
	c.inMu.Unlock()
	return true
}

// validLength is how much of a received MAD the sender said is valid
// (sim_request.length): the whole 256 bytes unless the sender gave a
// shorter length a MAD can have. OpenSM under umad2sim gives the length of
// the answer it built, cut at 256: an SA answer left unsegmented (its RMPP
// is the kernel's, which umad2sim does not have) holds exactly the records
// that fit, and the bytes after them are OpenSM's stale buffer, not
// records (as umad_recv's length tells a libibumad caller under umad2sim).
// An RMPP segment (Active, with a type) stays whole: its PayloadLength
// says what is valid, and the RMPP driver reads it.
func validLength(n uint64, m *[mad.Size]byte) int {
	if n < mad.HeaderSize || n >= mad.Size {
		return mad.Size
	}
	const rmppType, rmppFlags = 25, 26 // in the RMPP header after the common one
	if m[1] == mad.ClassSubnAdm && m[rmppFlags]&1 != 0 && m[rmppType] != 0 {
		return mad.Size
	}
	return int(n)
}

// deliver hands the inbox to the Mux, in order, until read has ended and
// the inbox is empty.
func (c *client) deliver() {
	var batch []*inPacket
	for {
		select {
		case <-c.wake:
		case <-c.readDone:
			// Drain what is left once more, then stop.
			c.inMu.Lock()
			batch, c.inbox = c.inbox, batch[:0]
			c.inMu.Unlock()
			c.deliverBatch(batch)
			return
		}
		c.inMu.Lock()
		batch, c.inbox = c.inbox, batch[:0]
		c.inMu.Unlock()
		c.deliverBatch(batch)
	}
}

// maxBatch is the most sends held for one sendmmsg.
const maxBatch = 16

func (c *client) deliverBatch(batch []*inPacket) {
	cork := c.batch != nil && len(batch) > 1
	if cork {
		c.outMu.Lock()
		c.corked = true
		c.outMu.Unlock()
	}
	for _, ip := range batch {
		p := fabric.Packet{Addr: ip.addr, Data: ip.mad[:ip.n]}
		if ip.bounced {
			c.mux.Lost(&p)
			continue
		}
		c.mux.Deliver(&p)
	}
	if cork {
		c.outMu.Lock()
		c.corked = false
		c.flushLocked()
		c.outMu.Unlock()
	}
	c.inMu.Lock()
	c.free = append(c.free, batch...)
	c.inMu.Unlock()
	clear(batch)
}

// flushLocked writes the held sends; c.outMu is held. A MAD that cannot
// be written is lost as on a wire (its request, if any, times out and is
// retried by the Mux); it is counted in Stats.SendErrors.
func (c *client) flushLocked() {
	if c.nOut == 0 {
		return
	}
	_ = c.data.SetWriteDeadline(time.Now().Add(SendTimeout))
	if err := c.batch.send(&c.outBufs, c.nOut); err != nil {
		c.sendErrs.Add(uint64(c.nOut))
		c.gone(err)
	}
	c.nOut = 0
}

// poke sends one byte to the input socket so that a read in progress
// returns and the reader sees closing. Closing the socket alone should
// wake it, but a data socket has been seen in blocking mode (O_NONBLOCK
// cleared, cause unknown), where Close waits for the read instead.
func (c *client) poke() {
	if c.paired {
		// A paired socket takes datagrams from its peer only; shutting
		// its reading side down wakes the reader instead.
		_ = shutdownRead(c.data)
		return
	}
	var (
		w   net.Conn
		err error
	)
	switch a := c.data.LocalAddr().(type) {
	case *net.UnixAddr:
		// Go reports the abstract name cut at its NUL; ibsim's names
		// end in one.
		name := a.Name
		if !strings.HasSuffix(name, "\x00") {
			name += "\x00"
		}
		w, err = net.DialUnix("unixgram", nil, &net.UnixAddr{Net: "unixgram", Name: name})
	case *net.UDPAddr:
		w, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: a.Port})
	default:
		return
	}
	if err != nil {
		return
	}
	_ = w.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = w.Write([]byte{0})
	w.Close()
}

// Close implements mux.Wire: SET_ISSM(0) if it was set, DISCONNECT, and
// close the sockets. The sockets are closed even when ibsim is gone.
func (c *client) Close() error {
	var err error
	c.closeOnce.Do(func() {
		var errs []error
		if c.issm {
			errs = append(errs, c.setISSM(0))
		}
		errs = append(errs, c.disconnect())
		c.closing.Store(true)
		c.poke()
		c.data.Close()
		c.ctl.Close()
		c.wg.Wait()
		err = errors.Join(errs...)
		if f := c.onClose.Load(); f != nil {
			(*f)()
		}
	})
	return err
}

// Caps are the Mux's (retransmissions counted, a handler, ibsim's exit
// noticed) with MaxWindow.
func (t *Transport) Caps() fabric.Caps {
	c := t.m.Caps()
	c.MaxWindow = t.maxWindow()
	// ibsim forwards QP0/QP1 requests (an SA's Reports) to issm clients
	// only (docs: the ibsim protocol's request routing).
	c.NoRequests = !t.c.served
	// ibsim keeps no timers; umad2sim neither (the protocol's section 7.4).
	c.NoTimeouts = true
	return c
}
