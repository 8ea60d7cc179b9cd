// Package fabric declares the contract every ibscript backend keeps: the
// Transport, which behaves as a libibumad port does (umad_open_port,
// umad_register, umad_send, umad_recv), and the values it carries.
//
// # Contract
//
// A Transport is one open local port. Agents are registered on it for a
// management class, version and set of methods, as with umad_register. Send
// transmits a MAD; Recv returns the next received MAD for any agent of the
// Transport, as a read on an umad file descriptor does. The semantics are
// the kernel's (include/uapi/rdma/ib_user_mad.h, drivers/infiniband/core/
// user_mad.c, and libibumad's man pages), on every backend:
//
//   - A request sent with Timeout > 0 completes exactly once: with its
//     response, or with the request itself and Status == StatusTimeout once
//     1+Retries attempts have each waited Timeout. Timeout == 0 means no
//     response is expected (a response that comes anyway is dropped);
//     Timeout < 0 waits forever.
//   - The Transport owns the upper 32 bits of a request's TID; a response is
//     matched by the whole TID and routed to the agent that sent the request.
//   - Unsolicited MADs go only to the agent registered for their class,
//     version and method; others are dropped (or answered as the kernel
//     does).
//   - Recv returns ctx.Err() when ctx ends. After Close, Recv, Send and
//     Register fail with an error wrapping ErrPortClosed, which matches
//     both net.ErrClosed and syscall.EINVAL (libibumad's "-EINVAL invalid
//     port handle"). Close is idempotent and unblocks every call.
//   - A Transport whose peer goes away (ibsim exits, a device is removed)
//     notices it and fails every waiter with one error: outstanding
//     requests are dropped, and Recv (once the MADs already queued are
//     read), Send and Register return an error wrapping a
//     *PeerGoneError (errors.Is(err, ErrPeerGone)) until Close.
//   - Send may run concurrently with one Recv caller.
//
// # Concurrency
//
// A Transport is safe for concurrent use as described above.
//
// # Ownership
//
// Whoever opens a Transport must Close it.
package fabric

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"syscall"
	"time"
)

// StatusTimeout is Packet.Status of a request that got no response: the
// kernel's ETIMEDOUT.
const StatusTimeout = 110

// MaxAgents is the number of agents one Transport holds, as one umad fd.
const MaxAgents = 32

// Sentinel errors.
var (
	// ErrTimeout is matched by errors for MADs that got no response.
	ErrTimeout = errors.New("timeout")
	// ErrNoAgent is returned when an AgentID names no registered agent.
	ErrNoAgent = errors.New("no such agent")
	// ErrMethodInUse is returned by Register when another agent of the
	// port already owns one of the methods for that class and version.
	ErrMethodInUse = errors.New("method already registered")
	// ErrTooManyAgents is returned by Register past MaxAgents.
	ErrTooManyAgents = errors.New("too many agents")
	// ErrInvalid is returned for arguments the kernel would refuse with
	// EINVAL.
	ErrInvalid = errors.New("invalid argument")
	// ErrNoDevice is wrapped by Fabric.Open errors for a CA or port that
	// does not exist; it matches syscall.ENODEV, as umad_get_port and
	// umad_open_port return -ENODEV on every backend.
	ErrNoDevice error = &errnoError{"no such CA or port", []error{syscall.ENODEV}}
	// ErrPortClosed is wrapped by the errors of calls on a closed
	// Transport; it matches net.ErrClosed and syscall.EINVAL.
	ErrPortClosed error = &errnoError{"invalid port handle (the port is closed)", []error{net.ErrClosed, syscall.EINVAL}}
)

// ErrPeerGone is matched by the errors of a Transport whose peer went
// away (see PeerGoneError).
var ErrPeerGone = errors.New("the fabric's peer is gone")

// PeerGoneError is the one error a Transport fails every call with once
// its peer is gone: Peer names it ("ibsim \"sim\" slot 2"), Err is what
// showed it (the socket's ECONNREFUSED). It matches ErrPeerGone and Err.
type PeerGoneError struct {
	Peer string
	Err  error
}

func (e *PeerGoneError) Error() string   { return fmt.Sprintf("%s is gone: %v", e.Peer, e.Err) }
func (e *PeerGoneError) Unwrap() []error { return []error{ErrPeerGone, e.Err} }

// NoDevice returns an error with the given text that matches ErrNoDevice
// (and so syscall.ENODEV): what Fabric.Open returns for a CA or port that
// does not exist.
func NoDevice(format string, args ...any) error {
	return &noDevice{fmt.Sprintf(format, args...)}
}

type noDevice struct{ msg string }

func (e *noDevice) Error() string { return e.msg }
func (e *noDevice) Unwrap() error { return ErrNoDevice }

// errnoError is a sentinel that also matches the errno (and other
// sentinels) a C caller of libibumad would see.
type errnoError struct {
	msg  string
	also []error
}

func (e *errnoError) Error() string   { return e.msg }
func (e *errnoError) Unwrap() []error { return e.also }

// Addr is the address part of a MAD: where a sent MAD goes, or where a
// received one came from. It mirrors struct ib_user_mad_hdr, whose GRH
// fields are libibumad's struct ib_mad_addr as umad_set_grh fills them.
//
// With GRH set a MAD carries a Global Route Header: on send GID is the
// destination GID and GIDIndex the index of the source GID in the local
// port's GID table (PortAttr.GIDs), HopLimit, TClass and FlowLabel go in
// the header; on receive GID is the sender's GID and GIDIndex the index
// of the local GID the MAD was addressed to, with the header's traffic
// class and flow label, and the hop limit of the reply's route (255 on
// InfiniBand, as the kernel's ib_init_ah_attr_from_wc sets it). RoCE
// ports (PortAttr.LinkLayer "Ethernet") need a GRH on every MAD (the
// kernel's write() fails EINVAL without one) and ignore LID; InfiniBand
// ports route by LID and use the GRH for global routing. ibsim's
// protocol has no GRH fields: its Transport refuses a MAD with GRH set.
type Addr struct {
	LID       uint16 // destination LID on send, source LID on receive; 0xFFFF permissive
	QPN       uint32 // remote QP: 0 for SMPs, 1 for GMPs
	QKey      uint32
	SL        uint8
	PathBits  uint8
	PKeyIndex uint16
	GRH       bool
	GIDIndex  uint8
	HopLimit  uint8
	TClass    uint8
	FlowLabel uint32   // 20 bits
	GID       [16]byte // remote GID when GRH is set
}

// PermissiveLID addresses directed-route SMPs.
const PermissiveLID = 0xffff

// Agent describes a registration, as umad_register2's attributes.
type Agent struct {
	Class   uint8 // management class; 0 registers a send-only agent
	Version uint8 // class version
	// Methods is the set of unsolicited methods this agent receives: bit m
	// of Methods[m/64] for method m.
	Methods     [2]uint64
	OUI         uint32 // vendor classes 0x30-0x4f
	RMPPVersion uint8  // 1 asks the transport to do RMPP for this agent
}

// WithMethods returns a copy of a with the given methods added to its set.
func (a Agent) WithMethods(methods ...uint8) Agent {
	for _, m := range methods {
		a.Methods[m/64] |= 1 << (m % 64)
	}
	return a
}

// HasMethod reports whether m is in the agent's method set.
func (a Agent) HasMethod(m uint8) bool { return a.Methods[m/64]&(1<<(m%64)) != 0 }

func (a Agent) String() string {
	return fmt.Sprintf("class 0x%02x version %d", a.Class, a.Version)
}

// AgentID names a registered agent of one Transport (0..MaxAgents-1).
type AgentID int

// Packet is one MAD with its umad header: a MAD to send, or a received one.
// Recv fills the caller's Packet, reusing Data's capacity.
type Packet struct {
	Agent   AgentID
	Status  int           // 0, or StatusTimeout on a request that got no response
	Timeout time.Duration // per attempt; 0 = no response expected; < 0 = forever
	Retries int           // attempts after the first
	Addr    Addr
	Data    []byte // the MAD (256 bytes), or a whole RMPP message
	// Bounced, on a timeout completion: the fabric handed the last
	// attempt back at once as undeliverable (ibsim's status-110 echo:
	// nobody at the destination takes it), where umad2sim gives its
	// caller an ETIMEDOUT completion; false: the attempt's Timeout
	// passed. See Caps.NoTimeouts.
	Bounced bool
}

// Reset empties p, keeping Data's capacity.
func (p *Packet) Reset() {
	d := p.Data[:0]
	*p = Packet{Data: d}
}

// PortAttr describes the local port a Transport is open on, as
// umad_get_port fills umad_port_t.
type PortAttr struct {
	CAName    string
	PortNum   int
	NodeType  int // 1 CA, 2 switch, 3 router
	NodeGUID  uint64
	PortGUID  uint64
	GIDPrefix uint64
	LID       uint16
	LMC       uint8
	SMLID     uint16
	SMSL      uint8
	State     int // 1 Down .. 4 Active
	PhysState int
	Rate      int // Gb/s
	// FDR10 says the kernel's rate text names FDR10, which ibstat prints
	// after the rate (umad.PortInfo.FDR10); only the kernel backend sets it.
	FDR10   bool `json:",omitempty"`
	CapMask uint32
	// PKeys is the port's P_Key table, by index, as umad_get_port fills
	// pkeys (pkeys_size is its length): sysfs pkeys/<i> on the kernel,
	// the SMA's table on the simulator, ibsim's GET_PKEYS (32 entries).
	PKeys []uint16
	// LinkLayer is umad_port_t's link_layer: "InfiniBand", or "Ethernet"
	// for a RoCE port on the kernel; "" is InfiniBand.
	LinkLayer string `json:",omitempty"`
	// GIDs is the port's GID table by index, where it has more than the
	// GID of GIDPrefix and PortGUID (index 0): a RoCE port's (sysfs
	// gids/<i>; zero entries are unused). nil: index 0 only.
	GIDs [][16]byte `json:",omitempty"`
	// The port's CA, as umad_get_ca gives it (ibstat prints them):
	// hca_type, fw_ver, hw_rev, sys_image_guid and the highest port
	// number. On ibsim they are what umad2sim writes: "simulator", 1, the
	// NodeInfo revision in hex, one port (the client's).
	CAType     string `json:",omitempty"`
	FWVer      string `json:",omitempty"`
	HWVer      string `json:",omitempty"`
	SysGUID    uint64 `json:",omitempty"`
	CANumPorts int    `json:",omitempty"`
	// SMIName and SMIPort name the SMI side of a planarized port when the
	// Transport sends SMPs through another CA's port than this one (this
	// port is then the GSI side: fabric/pair); "" and 0 otherwise.
	SMIName string `json:",omitempty"`
	SMIPort int    `json:",omitempty"`
}

// Transport is an open local port with umad semantics; see the package doc.
type Transport interface {
	// Register adds an agent, as umad_register2.
	Register(ctx context.Context, a Agent) (AgentID, error)
	// Unregister removes an agent; its outstanding requests are dropped
	// without completion, as the kernel does.
	Unregister(ctx context.Context, id AgentID) error
	// Send transmits p.Data from agent p.Agent to p.Addr. Send does not
	// keep p or p.Data after it returns.
	Send(ctx context.Context, p *Packet) error
	// Recv waits for the next received MAD or completion and stores it
	// in p.
	Recv(ctx context.Context, p *Packet) error
	// Port describes the local port.
	Port() PortAttr
	// Caps says what the Transport can do beyond the calls above.
	Caps() Caps
	// Close releases the port.
	Close() error
}

// Caps is what a Transport can do beyond umad's calls: the one way to
// learn it. A Transport that wraps another (a recorder, the engine's RMPP
// driver, a fault injector) returns the wrapped one's Caps, changed only
// where the wrapper changes the behaviour: it passes every capability on
// (fabrictest.TestCapsPassed checks a wrapper, and fabrictest's
// conformance suite checks each capability a Transport reports), so
// wrapping never changes how a consumer drives the port. A wrapper that
// embeds the wrapped Transport inherits its Caps: one that intercepts Recv
// must wrap SetHandler (as record.Recorder does) or drop it, since with a
// handler set completions never pass through Recv. The zero Caps is a
// plain umad port.
type Caps struct {
	// RMPP: the Transport segments and reassembles RMPP messages itself
	// (the kernel does, for agents with RMPPVersion 1); without it the
	// engine runs its own RMPP driver in front.
	RMPP bool
	// MaxWindow is how many requests should be in flight at most, when
	// the peer stalls beyond that (ibsim over an unpaired unix socket);
	// 0: no limit.
	MaxWindow int
	// Production: the port is on a real fabric (the kernel's umad
	// devices), where the engine refuses Sets unless the run allows them.
	Production bool
	// Retransmits, when not nil, returns how many requests the Transport
	// resent after a timeout so far (it only grows). nil: it does not
	// count them (the kernel retries out of sight).
	Retransmits func() uint64
	// SetHandler, when not nil, makes the Transport hand everything Recv
	// would return to h instead, on the goroutine that produced it (p and
	// p.Data valid during the call only; h may call Send); nil h restores
	// Recv. It saves a consumer a goroutine wake-up per MAD.
	SetHandler func(h func(p *Packet))
	// Failed, when not nil, is closed once the Transport's peer is gone
	// (ibsim exited); FailErr then says why. It is closed too when the
	// Transport is closed (by its Fabric's Close, say), FailErr nil then.
	// With a handler set nobody calls Recv, so this is how the consumer
	// learns it.
	Failed  <-chan struct{}
	FailErr func() error
	// Intact, when not nil, reports whether every answer arrives as its
	// sender built it: true on the kernel's ports (the HCA drops a packet
	// whose ICRC or VCRC fails, so no damaged MAD reaches umad), on ibsim,
	// and on the simulator while it injects no corruption. nil, or false:
	// an answer may be damaged on its way, and the engine reads every Get
	// (discovery's answers, SMPs, PerfMgt) until its answers agree
	// (docs/faults.md).
	Intact func() bool
	// NoRequests: requests other ports send to this port's QP0 or QP1 never
	// reach the Transport (ibsim hands them only to a client attached
	// issm; Options.ISSM), so an SA's Reports of the traps it subscribed
	// to, and any other unsolicited request, never arrive. Responses to
	// its own requests still do.
	NoRequests bool
	// SetLost, when not nil, makes the Transport call h (nil: no one) with
	// a request of agent p.Agent that the fabric handed back at once as
	// undeliverable (ibsim's status-110 bounce) when the Transport itself
	// keeps no timer for it (sent with Timeout 0: a layer above keeps the
	// tries, as the engine's RMPP driver does for the SA's). h may end
	// that try now, as a Transport ends one it keeps (umad2sim hands the
	// bounce to libibmad as an immediate ETIMEDOUT). p and p.Data are
	// valid during the call only; h must not block.
	SetLost func(h func(p *Packet))
	// NoTimeouts: the fabric itself times nothing out (ibsim: umad2sim
	// keeps no timers). Only a request it cannot deliver comes back
	// (Packet.Bounced); one it delivers and nobody answers (a port whose
	// issm client has no agent for it) comes back to a libibumad caller
	// as nothing at all, and its umad_recv's own wait ends it. The
	// Transport's timer still completes such a request with
	// StatusTimeout, Bounced false, as the contract says; this says that
	// C tools on the same fabric would have seen no completion.
	NoTimeouts bool
}

// Always is an Intact (and any other func() bool capability) that is
// always true.
func Always() bool { return true }

// Fabric opens ports of one backend: the kernel's devices, an ibsim daemon,
// or the embedded simulator. It is what umad_get_port and umad_open_port
// see. cmd/ibscript picks the Fabric; everything else takes it as a value.
type Fabric interface {
	// Ports lists the local ports that can be opened, in the order the
	// default-port rules of umad_get_port consider them.
	Ports(ctx context.Context) ([]PortAttr, error)
	// Open opens a port by CA name and port number. An empty ca and port
	// 0 pick the default port as umad_get_port(NULL, 0) does; one of the
	// two given acts as a filter.
	Open(ctx context.Context, ca string, port int) (Transport, error)
	// Close releases the fabric; ports opened from it are closed too.
	Close() error
}

// RoCE reports whether the port is RoCE (link layer Ethernet): every MAD
// needs a GRH there, and LIDs mean nothing.
func (a PortAttr) RoCE() bool { return a.LinkLayer == "Ethernet" }

// GID returns the port's GID at index i: GIDs[i], or for index 0 of a port
// without a table the GID of GIDPrefix and PortGUID; false when the index
// holds none.
func (a PortAttr) GID(i int) ([16]byte, bool) {
	var g [16]byte
	if a.GIDs != nil {
		if i < 0 || i >= len(a.GIDs) || a.GIDs[i] == g {
			return g, false
		}
		return a.GIDs[i], true
	}
	if i != 0 {
		return g, false
	}
	binary.BigEndian.PutUint64(g[:8], a.GIDPrefix)
	binary.BigEndian.PutUint64(g[8:], a.PortGUID)
	return g, true
}

// GIDIndex returns the index of gid in the port's GID table, false when
// the port has no such GID.
func (a PortAttr) GIDIndex(gid [16]byte) (int, bool) {
	n := max(len(a.GIDs), 1)
	for i := range n {
		if g, ok := a.GID(i); ok && g == gid {
			return i, true
		}
	}
	return 0, false
}

// SourceGIDIndex picks the local GID a MAD to dgid goes from, as the
// kernel's RDMA CM picks a RoCE source address: a GID of the same kind
// (IPv4-mapped ::ffff:a.b.c.d for an IPv4-mapped destination, else an
// IPv6 one) sharing the destination's 64-bit prefix, else the first GID of
// that kind, else index 0. InfiniBand ports without a table use index 0.
func (a PortAttr) SourceGIDIndex(dgid [16]byte) int {
	mapped := func(g [16]byte) bool {
		return g[10] == 0xff && g[11] == 0xff && [10]byte(g[:10]) == [10]byte{}
	}
	first := -1
	for i := range a.GIDs {
		g, ok := a.GID(i)
		if !ok || mapped(g) != mapped(dgid) {
			continue
		}
		if mapped(g) || [8]byte(g[:8]) == [8]byte(dgid[:8]) {
			return i
		}
		if first < 0 {
			first = i
		}
	}
	return max(first, 0)
}
