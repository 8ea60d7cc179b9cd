package rdmacm

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"syscall"
)

// ABI constants of include/uapi/rdma/rdma_user_cm.h.
const (
	ABIVersion        = 4   // RDMA_USER_CM_ABI_VERSION
	MinABIVersion     = 3   // librdmacm accepts 3..4
	MaxPrivateData    = 256 // RDMA_MAX_PRIVATE_DATA
	HeaderSize        = 8   // sizeof(struct rdma_ucm_cmd_hdr)
	EventRespSize     = 336 // sizeof(struct rdma_ucm_event_resp), with reserved and ece
	EventRespMinSize  = 324 // the kernel's minimum out for GET_EVENT (older user space)
	ConnParamSize     = 272
	UDParamSize       = 304
	AHAttrSize        = 32
	CreateIDSize      = 24
	DestroyIDSize     = 16
	GetEventSize      = 8
	MigrateIDSize     = 16
	ListenSize        = 8
	DisconnectSize    = 4
	ResolveRouteSize  = 8
	ConnectSize       = 288
	AcceptSize        = 296
	RejectSize        = 264
	BindSize          = 136
	ResolveAddrSize   = 272
	SockaddrIBSize    = 48 // sizeof(struct sockaddr_ib)
	SockaddrStoreSize = 128
	RespIDSize        = 4 // create_id_resp, destroy_id_resp, migrate_resp
)

// Commands (the enum of rdma_user_cm.h).
const (
	CmdCreateID         uint32 = 0
	CmdDestroyID        uint32 = 1
	CmdBindIP           uint32 = 2
	CmdResolveIP        uint32 = 3
	CmdResolveRoute     uint32 = 4
	CmdQueryRoute       uint32 = 5
	CmdConnect          uint32 = 6
	CmdListen           uint32 = 7
	CmdAccept           uint32 = 8
	CmdReject           uint32 = 9
	CmdDisconnect       uint32 = 10
	CmdInitQPAttr       uint32 = 11
	CmdGetEvent         uint32 = 12
	CmdGetOption        uint32 = 13
	CmdSetOption        uint32 = 14
	CmdNotify           uint32 = 15
	CmdJoinIPMcast      uint32 = 16
	CmdLeaveMcast       uint32 = 17
	CmdMigrateID        uint32 = 18
	CmdQuery            uint32 = 19
	CmdBind             uint32 = 20
	CmdResolveAddr      uint32 = 21
	CmdJoinMcast        uint32 = 22
	CmdResolveIBService uint32 = 23
	CmdWriteCMEvent     uint32 = 24
)

// Port spaces (enum rdma_ucm_port_space) and QP types.
const (
	PSIPoIB uint16 = 0x0002
	PSTCP   uint16 = 0x0106
	PSUDP   uint16 = 0x0111
	PSIB    uint16 = 0x013F

	QPTypeRC uint8 = 2 // IB_QPT_RC
	QPTypeUD uint8 = 4 // IB_QPT_UD
)

// Address families of the sockaddrs rdma_cm takes (linux/socket.h).
const (
	AF_INET  = 2
	AF_INET6 = 10
	AF_IB    = 27
)

// Sizes of struct sockaddr_in and struct sockaddr_in6.
const (
	SockaddrInSize  = 16
	SockaddrIn6Size = 28
)

// sockaddrInLayout is struct sockaddr_in (netinet/in.h):
//
//	struct sockaddr_in {
//		sa_family_t    sin_family;  /* host order */
//		__be16         sin_port;
//		struct in_addr sin_addr;    /* __be32 */
//		unsigned char  sin_zero[8];
//	};
var sockaddrInLayout = []abiField{{"sin_family", 0, 2}, {"sin_port", 2, 2}, {"sin_addr", 4, 4}, {"sin_zero", 8, 8}}

// sockaddrIn6Layout is struct sockaddr_in6 (linux/in6.h):
//
//	struct sockaddr_in6 {
//		unsigned short  sin6_family;   /* host order */
//		__be16          sin6_port;
//		__be32          sin6_flowinfo;
//		struct in6_addr sin6_addr;
//		__u32           sin6_scope_id; /* host order */
//	};
var sockaddrIn6Layout = []abiField{{"sin6_family", 0, 2}, {"sin6_port", 2, 2}, {"sin6_flowinfo", 4, 4},
	{"sin6_addr", 8, 16}, {"sin6_scope_id", 24, 4}}

// SockaddrIP encodes an IP address and port as struct sockaddr_in (an
// IPv4 address, or an IPv4-mapped one) or struct sockaddr_in6, as
// librdmacm's callers pass them; the family is host order, the port and
// address network order.
func SockaddrIP(ip netip.Addr, port uint16) []byte {
	if ip.Is4() || ip.Is4In6() {
		b := make([]byte, SockaddrInSize)
		ne.PutUint16(b[0:], AF_INET)
		binary.BigEndian.PutUint16(b[2:], port)
		a := ip.Unmap().As4()
		copy(b[4:8], a[:])
		return b
	}
	b := make([]byte, SockaddrIn6Size)
	ne.PutUint16(b[0:], AF_INET6)
	binary.BigEndian.PutUint16(b[2:], port)
	a := ip.As16()
	copy(b[8:24], a[:])
	return b
}

// ParseSockaddrIP decodes struct sockaddr_in or sockaddr_in6: false when
// b is shorter than its family's struct or of another family.
func ParseSockaddrIP(b []byte) (ip netip.Addr, port uint16, ok bool) {
	if len(b) < 2 {
		return ip, 0, false
	}
	switch ne.Uint16(b[0:]) {
	case AF_INET:
		if len(b) < SockaddrInSize {
			return ip, 0, false
		}
		return netip.AddrFrom4([4]byte(b[4:8])), binary.BigEndian.Uint16(b[2:]), true
	case AF_INET6:
		if len(b) < SockaddrIn6Size {
			return ip, 0, false
		}
		return netip.AddrFrom16([16]byte(b[8:24])), binary.BigEndian.Uint16(b[2:]), true
	}
	return ip, 0, false
}

// SockaddrFamily is the family of an encoded sockaddr (0 when too short).
func SockaddrFamily(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	return int(ne.Uint16(b))
}

// abiField is one row of a kernel struct's layout table. Every ABI field is
// host order.
type abiField struct {
	Name   string
	Offset int
	Size   int
}

// headerLayout is struct rdma_ucm_cmd_hdr:
//
//	struct rdma_ucm_cmd_hdr {
//		__u32 cmd;
//		__u16 in;
//		__u16 out;
//	};
var headerLayout = []abiField{{"cmd", 0, 4}, {"in", 4, 2}, {"out", 6, 2}}

// createIDLayout is struct rdma_ucm_create_id:
//
//	struct rdma_ucm_create_id {
//		__u64 uid;
//		__u64 response;
//		__u16 ps;
//		__u8  qp_type;
//		__u8  reserved[5];
//	};
var createIDLayout = []abiField{{"uid", 0, 8}, {"response", 8, 8}, {"ps", 16, 2}, {"qp_type", 18, 1}, {"reserved", 19, 5}}

// destroyIDLayout is struct rdma_ucm_destroy_id:
//
//	struct rdma_ucm_destroy_id {
//		__u64 response;
//		__u32 id;
//		__u32 reserved;
//	};
var destroyIDLayout = []abiField{{"response", 0, 8}, {"id", 8, 4}, {"reserved", 12, 4}}

// getEventLayout is struct rdma_ucm_get_event { __u64 response; }.
var getEventLayout = []abiField{{"response", 0, 8}}

// migrateIDLayout is struct rdma_ucm_migrate_id:
//
//	struct rdma_ucm_migrate_id {
//		__u64 response;
//		__u32 id;
//		__u32 fd;
//	};
var migrateIDLayout = []abiField{{"response", 0, 8}, {"id", 8, 4}, {"fd", 12, 4}}

// listenLayout is struct rdma_ucm_listen { __u32 id; __u32 backlog; }.
var listenLayout = []abiField{{"id", 0, 4}, {"backlog", 4, 4}}

// resolveRouteLayout is struct rdma_ucm_resolve_route { __u32 id; __u32 timeout_ms; }.
var resolveRouteLayout = []abiField{{"id", 0, 4}, {"timeout_ms", 4, 4}}

// disconnectLayout is struct rdma_ucm_disconnect { __u32 id; }.
var disconnectLayout = []abiField{{"id", 0, 4}}

// connParamLayout is struct rdma_ucm_conn_param:
//
//	struct rdma_ucm_conn_param {
//		__u32 qp_num;
//		__u32 qkey;
//		__u8  private_data[RDMA_MAX_PRIVATE_DATA];
//		__u8  private_data_len;
//		__u8  srq;
//		__u8  responder_resources;
//		__u8  initiator_depth;
//		__u8  flow_control;
//		__u8  retry_count;
//		__u8  rnr_retry_count;
//		__u8  valid;
//	};
var connParamLayout = []abiField{{"qp_num", 0, 4}, {"qkey", 4, 4}, {"private_data", 8, 256},
	{"private_data_len", 264, 1}, {"srq", 265, 1}, {"responder_resources", 266, 1},
	{"initiator_depth", 267, 1}, {"flow_control", 268, 1}, {"retry_count", 269, 1},
	{"rnr_retry_count", 270, 1}, {"valid", 271, 1}}

// ahAttrLayout is struct ib_uverbs_ah_attr (ib_user_verbs.h):
//
//	struct ib_uverbs_ah_attr {
//		struct ib_uverbs_global_route grh; /* dgid[16], flow_label, sgid_index, hop_limit, traffic_class, reserved */
//		__u16 dlid;
//		__u8  sl;
//		__u8  src_path_bits;
//		__u8  static_rate;
//		__u8  is_global;
//		__u8  port_num;
//		__u8  reserved;
//	};
var ahAttrLayout = []abiField{{"dgid", 0, 16}, {"flow_label", 16, 4}, {"sgid_index", 20, 1},
	{"hop_limit", 21, 1}, {"traffic_class", 22, 1}, {"grh_reserved", 23, 1}, {"dlid", 24, 2},
	{"sl", 26, 1}, {"src_path_bits", 27, 1}, {"static_rate", 28, 1}, {"is_global", 29, 1},
	{"port_num", 30, 1}, {"reserved", 31, 1}}

// udParamLayout is struct rdma_ucm_ud_param:
//
//	struct rdma_ucm_ud_param {
//		__u32 qp_num;
//		__u32 qkey;
//		struct ib_uverbs_ah_attr ah_attr;
//		__u8  private_data[RDMA_MAX_PRIVATE_DATA];
//		__u8  private_data_len;
//		__u8  reserved[7];
//	};
var udParamLayout = []abiField{{"qp_num", 0, 4}, {"qkey", 4, 4}, {"ah_attr", 8, 32},
	{"private_data", 40, 256}, {"private_data_len", 296, 1}, {"reserved", 297, 7}}

// eventRespLayout is struct rdma_ucm_event_resp (newer kernels add the
// reserved word and struct rdma_ucm_ece; older user space reads 324 bytes):
//
//	struct rdma_ucm_event_resp {
//		__u64 uid;
//		__u32 id;
//		__u32 event;
//		__u32 status;
//		union {
//			struct rdma_ucm_conn_param conn;
//			struct rdma_ucm_ud_param   ud;
//			__u64 arg;
//		} param;
//		__u32 reserved;
//		struct rdma_ucm_ece ece; /* vendor_id, attr_mod */
//	};
var eventRespLayout = []abiField{{"uid", 0, 8}, {"id", 8, 4}, {"event", 12, 4}, {"status", 16, 4},
	{"param", 20, 304}, {"reserved", 324, 4}, {"ece.vendor_id", 328, 4}, {"ece.attr_mod", 332, 4}}

// connectLayout is struct rdma_ucm_connect:
//
//	struct rdma_ucm_connect {
//		struct rdma_ucm_conn_param conn_param;
//		__u32 id;
//		__u32 reserved;
//		struct rdma_ucm_ece ece;
//	};
//
// The ece part is newer; the spec's 288 bytes are without it.
var connectLayout = []abiField{{"conn_param", 0, 272}, {"id", 272, 4}, {"reserved", 276, 4}, {"ece", 280, 8}}

// acceptLayout is struct rdma_ucm_accept:
//
//	struct rdma_ucm_accept {
//		__u64 uid;
//		struct rdma_ucm_conn_param conn_param;
//		__u32 id;
//		__u32 reserved;
//		struct rdma_ucm_ece ece;
//	};
var acceptLayout = []abiField{{"uid", 0, 8}, {"conn_param", 8, 272}, {"id", 280, 4}, {"reserved", 284, 4}, {"ece", 288, 8}}

// rejectLayout is struct rdma_ucm_reject:
//
//	struct rdma_ucm_reject {
//		__u32 id;
//		__u8  private_data_len;
//		__u8  reason;      /* reserved[3] in older headers */
//		__u8  reserved[2];
//		__u8  private_data[RDMA_MAX_PRIVATE_DATA];
//	};
var rejectLayout = []abiField{{"id", 0, 4}, {"private_data_len", 4, 1}, {"reason", 5, 1}, {"reserved", 6, 2}, {"private_data", 8, 256}}

// bindLayout is struct rdma_ucm_bind:
//
//	struct rdma_ucm_bind {
//		__u32 id;
//		__u16 addr_size;
//		__u16 reserved;
//		struct sockaddr_storage addr;
//	};
var bindLayout = []abiField{{"id", 0, 4}, {"addr_size", 4, 2}, {"reserved", 6, 2}, {"addr", 8, 128}}

// resolveAddrLayout is struct rdma_ucm_resolve_addr:
//
//	struct rdma_ucm_resolve_addr {
//		__u32 id;
//		__u32 timeout_ms;
//		__u16 src_size;
//		__u16 dst_size;
//		__u32 reserved;
//		struct sockaddr_storage src_addr;
//		struct sockaddr_storage dst_addr;
//	};
var resolveAddrLayout = []abiField{{"id", 0, 4}, {"timeout_ms", 4, 4}, {"src_size", 8, 2}, {"dst_size", 10, 2},
	{"reserved", 12, 4}, {"src_addr", 16, 128}, {"dst_addr", 144, 128}}

// sockaddrIBLayout is struct sockaddr_ib (rdma/ib.h): AF_IB addresses.
//
//	struct sockaddr_ib {
//		unsigned short int	sib_family;	/* AF_IB */
//		__be16			sib_pkey;
//		__be32			sib_flowinfo;
//		struct ib_addr		sib_addr;	/* GID, 16 bytes */
//		__be64			sib_sid;
//		__be64			sib_sid_mask;
//		__u64			sib_scope_id;
//	};
var sockaddrIBLayout = []abiField{{"sib_family", 0, 2}, {"sib_pkey", 2, 2}, {"sib_flowinfo", 4, 4},
	{"sib_addr", 8, 16}, {"sib_sid", 24, 8}, {"sib_sid_mask", 32, 8}, {"sib_scope_id", 40, 8}}

var ne = binary.NativeEndian

// field returns the row named name of l; it panics on a programming error
// (a name missing from a table), which the layout tests catch.
func field(l []abiField, name string) abiField {
	for _, f := range l {
		if f.Name == name {
			return f
		}
	}
	panic("rdmacm: no field " + name)
}

// Command is one framed command: the header and the struct, ready for
// write(2) except for the response address, which the Dev fills in at
// RespOff (-1: the command has no response).
type Command struct {
	B       []byte
	RespOff int
}

// Cmd returns the command number of c.
func (c *Command) Cmd() uint32 { return ne.Uint32(c.B[0:]) }

// In and Out return the header's sizes.
func (c *Command) In() int  { return int(ne.Uint16(c.B[4:])) }
func (c *Command) Out() int { return int(ne.Uint16(c.B[6:])) }

// Body returns the struct after the header.
func (c *Command) Body() []byte { return c.B[HeaderSize:] }

func newCommand(cmd uint32, size, out int, resp []abiField) Command {
	b := make([]byte, HeaderSize+size)
	ne.PutUint32(b[0:], cmd)
	ne.PutUint16(b[4:], uint16(size))
	ne.PutUint16(b[6:], uint16(out))
	off := -1
	if resp != nil {
		off = HeaderSize + field(resp, "response").Offset
	}
	return Command{B: b, RespOff: off}
}

func put32(c Command, l []abiField, name string, v uint32) {
	ne.PutUint32(c.B[HeaderSize+field(l, name).Offset:], v)
}

// CreateIDCmd frames CREATE_ID.
func CreateIDCmd(uid uint64, ps uint16, qpType uint8) Command {
	c := newCommand(CmdCreateID, CreateIDSize, RespIDSize, createIDLayout)
	ne.PutUint64(c.Body()[field(createIDLayout, "uid").Offset:], uid)
	ne.PutUint16(c.Body()[field(createIDLayout, "ps").Offset:], ps)
	c.Body()[field(createIDLayout, "qp_type").Offset] = qpType
	return c
}

// DestroyIDCmd frames DESTROY_ID.
func DestroyIDCmd(id uint32) Command {
	c := newCommand(CmdDestroyID, DestroyIDSize, RespIDSize, destroyIDLayout)
	put32(c, destroyIDLayout, "id", id)
	return c
}

// GetEventCmd frames GET_EVENT with an out of EventRespSize.
func GetEventCmd() Command {
	return newCommand(CmdGetEvent, GetEventSize, EventRespSize, getEventLayout)
}

// MigrateIDCmd frames MIGRATE_ID, written to the destination channel; fd
// is the channel that owns the id now.
func MigrateIDCmd(id uint32, fd int) Command {
	c := newCommand(CmdMigrateID, MigrateIDSize, RespIDSize, migrateIDLayout)
	put32(c, migrateIDLayout, "id", id)
	put32(c, migrateIDLayout, "fd", uint32(fd))
	return c
}

// ListenCmd frames LISTEN.
func ListenCmd(id uint32, backlog int) Command {
	c := newCommand(CmdListen, ListenSize, 0, nil)
	put32(c, listenLayout, "id", id)
	put32(c, listenLayout, "backlog", uint32(backlog))
	return c
}

// ResolveRouteCmd frames RESOLVE_ROUTE.
func ResolveRouteCmd(id uint32, timeoutMS int) Command {
	c := newCommand(CmdResolveRoute, ResolveRouteSize, 0, nil)
	put32(c, resolveRouteLayout, "id", id)
	put32(c, resolveRouteLayout, "timeout_ms", uint32(timeoutMS))
	return c
}

// DisconnectCmd frames DISCONNECT.
func DisconnectCmd(id uint32) Command {
	c := newCommand(CmdDisconnect, DisconnectSize, 0, nil)
	put32(c, disconnectLayout, "id", id)
	return c
}

// SockaddrIB encodes an AF_IB address (GID, P_Key, service ID) as struct
// sockaddr_ib; the be fields are big-endian, the family host order.
func SockaddrIB(gid [16]byte, pkey uint16, sid uint64) []byte {
	b := make([]byte, SockaddrIBSize)
	ne.PutUint16(b[0:], AF_IB)
	binary.BigEndian.PutUint16(b[2:], pkey)
	copy(b[8:24], gid[:])
	binary.BigEndian.PutUint64(b[24:], sid)
	if sid != 0 {
		binary.BigEndian.PutUint64(b[32:], ^uint64(0))
	}
	return b
}

// BindCmd frames BIND with a sockaddr (at most 128 bytes).
func BindCmd(id uint32, addr []byte) Command {
	c := newCommand(CmdBind, BindSize, 0, nil)
	put32(c, bindLayout, "id", id)
	ne.PutUint16(c.Body()[field(bindLayout, "addr_size").Offset:], uint16(len(addr)))
	copy(c.Body()[field(bindLayout, "addr").Offset:], addr)
	return c
}

// ResolveAddrCmd frames RESOLVE_ADDR.
func ResolveAddrCmd(id uint32, src, dst []byte, timeoutMS int) Command {
	c := newCommand(CmdResolveAddr, ResolveAddrSize, 0, nil)
	b := c.Body()
	put32(c, resolveAddrLayout, "id", id)
	put32(c, resolveAddrLayout, "timeout_ms", uint32(timeoutMS))
	ne.PutUint16(b[field(resolveAddrLayout, "src_size").Offset:], uint16(len(src)))
	ne.PutUint16(b[field(resolveAddrLayout, "dst_size").Offset:], uint16(len(dst)))
	copy(b[field(resolveAddrLayout, "src_addr").Offset:], src)
	copy(b[field(resolveAddrLayout, "dst_addr").Offset:], dst)
	return c
}

// ConnParam is struct rdma_ucm_conn_param.
type ConnParam struct {
	QPNum, QKey        uint32
	PrivateData        []byte // at most 256 bytes
	SRQ                uint8
	ResponderResources uint8
	InitiatorDepth     uint8
	FlowControl        uint8
	RetryCount         uint8
	RNRRetryCount      uint8
	Valid              uint8
}

func (p *ConnParam) put(b []byte) {
	ne.PutUint32(b[0:], p.QPNum)
	ne.PutUint32(b[4:], p.QKey)
	n := copy(b[8:8+MaxPrivateData], p.PrivateData)
	b[264], b[265], b[266], b[267] = uint8(n), p.SRQ, p.ResponderResources, p.InitiatorDepth
	b[268], b[269], b[270], b[271] = p.FlowControl, p.RetryCount, p.RNRRetryCount, p.Valid
}

func (p *ConnParam) get(b []byte) {
	p.QPNum, p.QKey = ne.Uint32(b[0:]), ne.Uint32(b[4:])
	n := min(int(b[264]), MaxPrivateData)
	p.PrivateData = append([]byte(nil), b[8:8+n]...)
	p.SRQ, p.ResponderResources, p.InitiatorDepth = b[265], b[266], b[267]
	p.FlowControl, p.RetryCount, p.RNRRetryCount, p.Valid = b[268], b[269], b[270], b[271]
}

// ConnectCmd frames CONNECT.
func ConnectCmd(id uint32, p *ConnParam) Command {
	c := newCommand(CmdConnect, ConnectSize, 0, nil)
	p.put(c.Body())
	put32(c, connectLayout, "id", id)
	return c
}

// AcceptCmd frames ACCEPT (uid is the cookie the id's events carry from
// then on; Valid 0 on an active id asks the kernel for the RTU).
func AcceptCmd(id uint32, uid uint64, p *ConnParam) Command {
	c := newCommand(CmdAccept, AcceptSize, 0, nil)
	ne.PutUint64(c.Body()[0:], uid)
	p.put(c.Body()[8:])
	put32(c, acceptLayout, "id", id)
	return c
}

// RejectCmd frames REJECT with private data (reason 0: consumer defined).
func RejectCmd(id uint32, pd []byte) Command {
	c := newCommand(CmdReject, RejectSize, 0, nil)
	put32(c, rejectLayout, "id", id)
	n := copy(c.Body()[field(rejectLayout, "private_data").Offset:], pd)
	c.Body()[field(rejectLayout, "private_data_len").Offset] = uint8(n)
	return c
}

// Event is struct rdma_ucm_event_resp decoded.
type Event struct {
	UID    uint64
	ID     uint32
	Event  uint32
	Status int32
	Conn   ConnParam // the param union read as conn (events of RC ids)
	UD     UDParam   // the param union read as ud (events of UD ids)
	Raw    [UDParamSize]byte
}

// ParseEvent decodes an event response of at least 324 bytes.
func ParseEvent(b []byte) (Event, error) {
	var e Event
	if len(b) < EventRespMinSize {
		return e, fmt.Errorf("rdmacm: event response of %d bytes: %w", len(b), syscall.ENOSPC)
	}
	e.UID, e.ID, e.Event = ne.Uint64(b[0:]), ne.Uint32(b[8:]), ne.Uint32(b[12:])
	e.Status = int32(ne.Uint32(b[16:]))
	copy(e.Raw[:], b[20:324])
	e.Conn.get(e.Raw[:ConnParamSize])
	e.UD = ParseUDParam(e.Raw[:])
	return e, nil
}

// PutEvent encodes an event response (what the kernel writes); the
// kernel model uses it.
func PutEvent(b []byte, e *Event) {
	ne.PutUint64(b[0:], e.UID)
	ne.PutUint32(b[8:], e.ID)
	ne.PutUint32(b[12:], e.Event)
	ne.PutUint32(b[16:], uint32(e.Status))
	copy(b[20:324], e.Raw[:])
}

// QUERY (rdma_ucm_query) and its RDMA_USER_CM_QUERY_ADDR answer, which
// librdmacm issues after ADDR_RESOLVED and for the new id of a
// CONNECT_REQUEST to learn the id's addresses.
const (
	QuerySize                   = 16
	QueryAddrRespSize           = 280 // with ibdev_index and reserved1 (newer kernels)
	QueryAddrRespMinSize        = 272 // older kernels end after dst_addr
	QueryAddr            uint32 = 0   // RDMA_USER_CM_QUERY_ADDR
)

// queryLayout is struct rdma_ucm_query:
//
//	struct rdma_ucm_query {
//		__u64 response;
//		__u32 id;
//		__u32 option;
//	};
var queryLayout = []abiField{{"response", 0, 8}, {"id", 8, 4}, {"option", 12, 4}}

// queryAddrRespLayout is struct rdma_ucm_query_addr_resp:
//
//	struct rdma_ucm_query_addr_resp {
//		__aligned_u64 node_guid;
//		__u8  port_num;
//		__u8  reserved;
//		__u16 pkey;
//		__u16 src_size;
//		__u16 dst_size;
//		struct __kernel_sockaddr_storage src_addr;
//		struct __kernel_sockaddr_storage dst_addr;
//		__u32 ibdev_index;
//		__u32 reserved1;
//	};
var queryAddrRespLayout = []abiField{{"node_guid", 0, 8}, {"port_num", 8, 1}, {"reserved", 9, 1},
	{"pkey", 10, 2}, {"src_size", 12, 2}, {"dst_size", 14, 2}, {"src_addr", 16, 128},
	{"dst_addr", 144, 128}, {"ibdev_index", 272, 4}, {"reserved1", 276, 4}}

// QueryAddrCmd frames QUERY with option RDMA_USER_CM_QUERY_ADDR.
func QueryAddrCmd(id uint32) Command {
	c := newCommand(CmdQuery, QuerySize, QueryAddrRespSize, queryLayout)
	put32(c, queryLayout, "id", id)
	put32(c, queryLayout, "option", QueryAddr)
	return c
}

// AddrInfo is struct rdma_ucm_query_addr_resp decoded; Src and Dst are
// the raw sockaddrs (SockaddrIB for AF_IB ids).
type AddrInfo struct {
	NodeGUID uint64
	PortNum  uint8
	PKey     uint16
	Src, Dst []byte
}

// ParseAddrInfo decodes a QUERY_ADDR answer of at least 272 bytes.
func ParseAddrInfo(b []byte) (AddrInfo, error) {
	var a AddrInfo
	if len(b) < QueryAddrRespMinSize {
		return a, fmt.Errorf("rdmacm: query_addr response of %d bytes: %w", len(b), syscall.ENOSPC)
	}
	a.NodeGUID, a.PortNum, a.PKey = ne.Uint64(b[0:]), b[8], ne.Uint16(b[10:])
	ss, ds := min(int(ne.Uint16(b[12:])), SockaddrStoreSize), min(int(ne.Uint16(b[14:])), SockaddrStoreSize)
	a.Src = append([]byte(nil), b[16:16+ss]...)
	a.Dst = append([]byte(nil), b[144:144+ds]...)
	return a, nil
}

// PutAddrInfo encodes a QUERY_ADDR answer (what the kernel writes); the
// kernel model uses it. b holds at least 272 bytes.
func PutAddrInfo(b []byte, a *AddrInfo) {
	ne.PutUint64(b[0:], a.NodeGUID)
	b[8] = a.PortNum
	ne.PutUint16(b[10:], a.PKey)
	ne.PutUint16(b[12:], uint16(copy(b[16:144], a.Src)))
	ne.PutUint16(b[14:], uint16(copy(b[144:272], a.Dst)))
}

// ParseSockaddrIB decodes struct sockaddr_ib: false when b is shorter or
// its family is not AF_IB.
func ParseSockaddrIB(b []byte) (gid [16]byte, pkey uint16, sid uint64, ok bool) {
	if len(b) < SockaddrIBSize || ne.Uint16(b[0:]) != AF_IB {
		return gid, 0, 0, false
	}
	copy(gid[:], b[8:24])
	return gid, binary.BigEndian.Uint16(b[2:]), binary.BigEndian.Uint64(b[24:]), true
}

// ParseConnParam decodes struct rdma_ucm_conn_param (272 bytes); the
// kernel model reads CONNECT and ACCEPT with it.
func ParseConnParam(b []byte) ConnParam {
	var p ConnParam
	p.get(b[:ConnParamSize])
	return p
}

// PutConnParam encodes p as struct rdma_ucm_conn_param into b (272 bytes).
func PutConnParam(b []byte, p *ConnParam) { p.put(b[:ConnParamSize]) }

// UDParam is struct rdma_ucm_ud_param: the param of events of UD ids.
type UDParam struct {
	QPNum, QKey uint32
	AHAttr      [AHAttrSize]byte // struct ib_uverbs_ah_attr, raw
	PrivateData []byte           // at most 256 bytes
}

// ParseUDParam decodes struct rdma_ucm_ud_param (304 bytes).
func ParseUDParam(b []byte) UDParam {
	var p UDParam
	p.QPNum, p.QKey = ne.Uint32(b[0:]), ne.Uint32(b[4:])
	copy(p.AHAttr[:], b[8:40])
	n := min(int(b[296]), MaxPrivateData)
	p.PrivateData = append([]byte(nil), b[40:40+n]...)
	return p
}

// PutUDParam encodes p as struct rdma_ucm_ud_param into b (304 bytes).
func PutUDParam(b []byte, p *UDParam) {
	ne.PutUint32(b[0:], p.QPNum)
	ne.PutUint32(b[4:], p.QKey)
	copy(b[8:40], p.AHAttr[:])
	b[296] = uint8(copy(b[40:40+MaxPrivateData], p.PrivateData))
}
