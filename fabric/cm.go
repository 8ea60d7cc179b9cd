package fabric

// The RDMA CM contract (CMProvider, CMDevice, CMChannel): what a Fabric
// offers when the platform does RDMA CM itself (the kernel's rdma_cm and
// ib_cm behind /dev/infiniband/rdma_cm). The rules are CMChannel's doc.

import (
	"context"
	"fmt"
	"net/netip"
	"time"
)

// CMProvider is implemented by a Fabric whose platform does RDMA CM
// itself. rdmacm.New uses it instead of the user-space IB CM
// (rdmacm/ibcm).
type CMProvider interface {
	// OpenCM opens the platform's RDMA CM. An error wrapping
	// errors.ErrUnsupported means this host has none (no rdma_cm
	// device); callers may then fall back to their own CM.
	OpenCM() (CMDevice, error)
}

// CMDevice is the platform's RDMA CM: it opens event channels.
type CMDevice interface {
	// OpenChannel opens one channel (rdma_create_event_channel: one fd).
	OpenChannel() (CMChannel, error)
	// Close closes every channel opened from the device.
	Close() error
}

// CMAddr is a struct sockaddr as rdma_cm takes it: AF_IB (struct
// sockaddr_ib: GID, PKey, ServiceID) when IP is the zero netip.Addr, else
// AF_INET (an IPv4 address) or AF_INET6 with Port. A zero GID, and the
// IP addresses 0.0.0.0 and ::, are the wildcard address; a zero
// ServiceID or Port asks Bind for an ephemeral port.
type CMAddr struct {
	GID       [16]byte
	PKey      uint16
	ServiceID uint64
	IP        netip.Addr
	Port      uint16
}

// IsIP reports whether a is an AF_INET or AF_INET6 address.
func (a CMAddr) IsIP() bool { return a.IP.IsValid() }

// String formats a as "10.0.0.1:7471", "[fd00::1]:7471" or
// "fe80:...:0001 sid 0x...".
func (a CMAddr) String() string {
	if a.IsIP() {
		return netip.AddrPortFrom(a.IP, a.Port).String()
	}
	return fmt.Sprintf("%v sid %#x", netip.AddrFrom16(a.GID), a.ServiceID)
}

// CMConnParam is struct rdma_ucm_conn_param (Valid is set by Connect and
// Accept themselves, except for the active side's Accept after
// CONNECT_RESPONSE, which passes nil).
type CMConnParam struct {
	PrivateData        []byte // at most 256 bytes; the platform checks the message's limit
	QPNum              uint32
	QKey               uint32
	SRQ                uint8
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        uint8
	RetryCount         uint8
	RNRRetryCount      uint8
	// ResponseTimeout (the CM response timeout exponent, 4.096 us x 2^v)
	// and MaxCMRetries override a user-space CM's defaults for one
	// Connect; 0 keeps them. The kernel's rdma_cm has no such field and
	// ignores both.
	ResponseTimeout uint8
	MaxCMRetries    uint8
}

// CMUDParam is struct rdma_ucm_ud_param: the param of the events of UD
// ids (AHAttr is struct ib_uverbs_ah_attr, raw).
type CMUDParam struct {
	QPNum       uint32
	QKey        uint32
	AHAttr      [32]byte
	PrivateData []byte
}

// CMRawEvent is one event as GetEvent returns it (struct
// rdma_ucm_event_resp). Type is the RDMA_CM_EVENT_* value of rdma_cma.h;
// Status is 0, a negative errno, an IB CM reject reason or a SIDR status.
// The kernel fills the param union as ud for UD ids and as conn for the
// others; both readings are given, and the caller picks by its id's QP
// type.
type CMRawEvent struct {
	UID    uint64
	ID     uint32
	Type   int
	Status int
	Conn   CMConnParam
	UD     CMUDParam
}

// CMAddrInfo is what the platform reports of an id's addresses (QUERY
// with RDMA_USER_CM_QUERY_ADDR): the source and destination, and the
// local port's node GUID, port number and P_Key. HasSrc and HasDst say
// whether the id has each address yet.
type CMAddrInfo struct {
	Src, Dst       CMAddr
	HasSrc, HasDst bool
	NodeGUID       uint64
	PortNum        uint8
	PKey           uint16
}

// CMChannel is one event channel of a CMDevice: one rdma_cm file
// descriptor (what librdmacm calls an event channel). Its methods are the
// ucma commands with the kernel's rules (include/uapi/rdma/rdma_user_cm.h
// and drivers/infiniband/core/ucma.c):
//
//   - ids are the kernel's handles, unique across every channel of the
//     device; uid is an opaque cookie the caller picks, echoed in every
//     event of that id (the new id of a CONNECT_REQUEST has uid 0 until
//     Accept sets one, and the kernel queues no other event for it);
//   - a command naming an id must go to the channel that owns it: an
//     unknown id is ENOENT, an id of another channel EINVAL;
//   - each channel has one FIFO of events; GetEvent removes the next one
//     and counts it in its id's events_reported (a CONNECT_REQUEST is
//     counted on the listener). There is no kernel ack: acknowledging is
//     the caller's protocol (librdmacm's events_completed);
//   - MigrateID is written to the destination channel, names the channel
//     that owns the id, moves the id's unread events to the destination's
//     tail in order, and returns the id's events_reported; DestroyID tears
//     the connection down (DREQ or REJ to the peer), drops the id's unread
//     events (a listener's unread requests destroy their new ids) and
//     returns events_reported; closing a channel destroys its ids;
//   - addresses are AF_IB (struct sockaddr_ib): a GID, a P_Key and a
//     service ID, (port space << 16) + port for RDMA CM's port spaces;
//     or AF_INET and AF_INET6: an IP address of a local netdev (IPoIB,
//     a RoCE NIC) and a port. The platform resolves addresses (ARP/ND or
//     its IPoIB table for IP) and routes itself (the kernel asks the SA on
//     InfiniBand) and reports the outcome as events. With IP addresses the
//     REQ's (SIDR_REQ's) private data starts with RDMA CM's 36-byte IP
//     header, which the platform adds and strips: the caller's data is
//     at most 56 (180) bytes, and a CONNECT_REQUEST reports 56 (180).
//
// Errors wrap the syscall.Errno the platform returns (EINVAL, ENOENT,
// ENOSPC ...), so callers use errors.Is, and name the command and id.
//
// A CMChannel (and a CMDevice) is safe for concurrent use; GetEvent and
// Wait may block while other commands run on the same channel. Whoever
// opens a CMDevice or CMChannel closes it; closing a CMDevice closes the
// channels opened from it.
type CMChannel interface {
	// CreateID is CREATE_ID: a new id of port space ps and QP type
	// qpType (2 RC, 4 UD) whose events carry uid.
	CreateID(uid uint64, ps uint16, qpType uint8) (uint32, error)
	// DestroyID is DESTROY_ID; it returns the id's events_reported.
	DestroyID(id uint32) (uint32, error)
	// MigrateID is MIGRATE_ID written to this channel (the destination)
	// for an id owned by from; it returns the id's events_reported.
	MigrateID(id uint32, from CMChannel) (uint32, error)
	// Bind is BIND.
	Bind(id uint32, a CMAddr) error
	// ResolveAddr is RESOLVE_ADDR (src nil: the platform picks the
	// source); ADDR_RESOLVED or ADDR_ERROR follows within timeout.
	ResolveAddr(id uint32, src *CMAddr, dst CMAddr, timeout time.Duration) error
	// ResolveRoute is RESOLVE_ROUTE; ROUTE_RESOLVED or ROUTE_ERROR
	// follows within timeout.
	ResolveRoute(id uint32, timeout time.Duration) error
	// Listen is LISTEN (backlog <= 0: the platform's maximum).
	Listen(id uint32, backlog int) error
	// Connect is CONNECT.
	Connect(id uint32, p *CMConnParam) error
	// Accept is ACCEPT, setting the id's uid: with p on the passive side
	// (REP, or SIDR_REP for UD), with nil p on the active side after
	// CONNECT_RESPONSE (the RTU).
	Accept(id uint32, uid uint64, p *CMConnParam) error
	// Reject is REJECT (reason: consumer defined) with private data.
	Reject(id uint32, privateData []byte) error
	// Disconnect is DISCONNECT: DREQ, or DREP after the peer's DREQ.
	Disconnect(id uint32) error
	// QueryAddr is QUERY with RDMA_USER_CM_QUERY_ADDR.
	QueryAddr(id uint32) (CMAddrInfo, error)
	// GetEvent waits until an event is queued or ctx ends, then fetches
	// it (GET_EVENT).
	GetEvent(ctx context.Context) (CMRawEvent, error)
	// Wait waits until an event is queued (poll(2)'s POLLIN) or ctx
	// ends, fetching nothing.
	Wait(ctx context.Context) error
	// Close closes the channel; the platform destroys the ids it owns.
	Close() error
}

// IPoIBAddr is an IP address of a local CA port's IPoIB interface (ib0 of
// the port): what an RDMA CM resolves an AF_INET or AF_INET6 address to.
type IPoIBAddr struct {
	IP      netip.Addr
	CAName  string
	PortNum int
}

// IPoIB is implemented by a Fabric whose CA ports have IPoIB addresses
// (the embedded simulator's, from its topology file or set by a script):
// the user-space RDMA CM (rdmacm/ibcm) resolves IP addresses through
// them, as the kernel's rdma_cm resolves them through the IPoIB netdevs
// (ARP and neighbour discovery).
type IPoIB interface {
	// IPoIBAddrs lists the fabric's IPoIB addresses.
	IPoIBAddrs() []IPoIBAddr
}
