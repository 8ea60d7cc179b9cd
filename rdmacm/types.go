package rdmacm

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/ibscript/ibscript/mad"
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

// UDPQKey is the Q_Key RDMA CM gives ids of the UDP and IPoIB port spaces.
const UDPQKey uint32 = 0x01234567

// Private data limits of the calls with AF_IB addresses: the whole private
// data field of the IB CM message, since no RDMA CM header goes in front
// (rdmacm-abi.md section 10.5).
const (
	MaxConnectPrivateData = 92  // REQ
	MaxUDPrivateData      = 216 // SIDR_REQ
	MaxAcceptPrivateData  = 196 // REP
	MaxUDAcceptData       = 136 // SIDR_REP
	MaxRejectPrivateData  = 148 // REJ
)

// Private data limits of connect with IP addresses (AF_INET, AF_INET6):
// RDMA CM's 36-byte IP header takes the front of the REQ's (SIDR_REQ's)
// private data (the kernel's cma_user_data_offset), and a CONNECT_REQUEST
// reports what follows it. Accept and reject keep the AF_IB limits.
const (
	IPHeaderSize            = 36
	MaxConnectPrivateDataIP = MaxConnectPrivateData - IPHeaderSize // 56
	MaxUDPrivateDataIP      = MaxUDPrivateData - IPHeaderSize      // 180
)

// EventType is an RDMA CM event type (rdmacm-abi.md section 9).
type EventType int

// Event types, with librdmacm's values.
const (
	EventAddrResolved EventType = iota
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
func (t EventType) String() string {
	if t >= 0 && int(t) < len(eventNames) {
		return eventNames[t]
	}
	return "UNKNOWN EVENT"
}

// EventTypeByName returns the type named as librdmacm names it.
func EventTypeByName(s string) (EventType, bool) {
	for i, n := range eventNames {
		if n == s {
			return EventType(i), true
		}
	}
	return 0, false
}

// Defaults.
const (
	// DefaultAckWait bounds how long DestroyID and MigrateID wait for the
	// acks of events fetched and not acknowledged (librdmacm waits forever).
	DefaultAckWait = 30 * time.Second
	// DefaultResolveTimeout is the timeout given to address and route
	// resolution when the call's ctx has no deadline (librdmacm's callers
	// commonly pass 2000 ms).
	DefaultResolveTimeout = 2 * time.Second
)

// Addr is an address as the caller names it, as librdmacm takes a struct
// sockaddr: an IP address (IP valid: AF_INET for an IPv4 address,
// AF_INET6 otherwise; 0.0.0.0 and :: are the wildcard), or an IB port by
// LID or by GID (AF_IB; a zero LID and GID is the wildcard), and the RDMA
// CM port number within the port space. The CM gives the device IP
// addresses as they are (sockaddr_in, sockaddr_in6) and IB ones as
// sockaddr_ib (a GID and a service ID).
type Addr struct {
	IP   netip.Addr
	LID  uint16
	GID  mad.GID
	Port uint16
}

// IPAddr returns the IP address ip ("10.0.0.1", "fd00::1") with port.
func IPAddr(ip netip.Addr, port uint16) Addr { return Addr{IP: ip.Unmap(), Port: port} }

func (a Addr) String() string {
	if a.IP.IsValid() {
		return netip.AddrPortFrom(a.IP, a.Port).String()
	}
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
	// ResponseTimeout and MaxRetries override the CM's defaults for this
	// connect (an ibscript extension honoured by the user-space IB CM;
	// the kernel's rdma_cm takes its own defaults).
	ResponseTimeout uint8
	MaxRetries      uint8
}

// Event is one rdma_cm_event. Acknowledge it with CM.AckEvent.
type Event struct {
	Type     EventType
	Status   int // 0, negative errno, REJ reason or SIDR status
	ID       *ID
	ListenID *ID // CONNECT_REQUEST: the listener
	Param    ConnParam
	credited *ID // the id the device counted the event on
	acked    bool
}
