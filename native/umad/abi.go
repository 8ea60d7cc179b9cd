package umad

import (
	"encoding/binary"
	"unsafe"
)

// ABI constants of include/uapi/rdma/ib_user_mad.h and libibumad.
const (
	ABIVersion    = 5   // IB_USER_MAD_ABI_VERSION; older kernels are refused
	HeaderSize    = 64  // sizeof(struct ib_user_mad_hdr), P_Key-index mode
	HeaderSizeOld = 56  // sizeof(struct ib_user_mad_hdr_old)
	MADSize       = 256 // one MAD
	MinMADWrite   = 36  // a write must carry at least this many MAD bytes (common + RMPP header)
	MaxAgents     = 32  // IB_UMAD_MAX_AGENTS: agent slots per fd
	RegReqSize    = 28  // sizeof(struct ib_user_mad_reg_req)
	RegReq2Size   = 40  // sizeof(struct ib_user_mad_reg_req2)

	// FlagUserRMPP is IB_USER_MAD_USER_RMPP: the agent does RMPP itself.
	FlagUserRMPP = 1 << 0

	// StatusTimedOut is Header.Status of a send that got no response
	// (ETIMEDOUT).
	StatusTimedOut = 110

	// DefaultOUI is what umad_register puts in reg_req.oui (00:14:05).
	DefaultOUI = 0x001405
)

// abiField is one row of a kernel struct's layout table.
type abiField struct {
	Name      string
	Offset    int
	Size      int
	BigEndian bool // false: host order (or bytes)
}

// headerLayout is struct ib_user_mad_hdr (include/uapi/rdma/ib_user_mad.h):
//
//	struct ib_user_mad_hdr {
//		__u32	id;
//		__u32	status;
//		__u32	timeout_ms;
//		__u32	retries;
//		__u32	length;
//		__be32	qpn;
//		__be32  qkey;
//		__be16	lid;
//		__u8	sl;
//		__u8	path_bits;
//		__u8	grh_present;
//		__u8	gid_index;
//		__u8	hop_limit;
//		__u8	traffic_class;
//		__u8	gid[16];
//		__be32	flow_label;
//		__u16	pkey_index;
//		__u8	reserved[6];
//	};
//
// ib_user_mad_hdr_old is the same without pkey_index and reserved (56
// bytes).
var headerLayout = []abiField{
	{"id", 0, 4, false},
	{"status", 4, 4, false},
	{"timeout_ms", 8, 4, false},
	{"retries", 12, 4, false},
	{"length", 16, 4, false},
	{"qpn", 20, 4, true},
	{"qkey", 24, 4, true},
	{"lid", 28, 2, true},
	{"sl", 30, 1, false},
	{"path_bits", 31, 1, false},
	{"grh_present", 32, 1, false},
	{"gid_index", 33, 1, false},
	{"hop_limit", 34, 1, false},
	{"traffic_class", 35, 1, false},
	{"gid", 36, 16, false},
	{"flow_label", 52, 4, true},
	{"pkey_index", 56, 2, false},
	{"reserved", 58, 6, false},
}

// regReqLayout is struct ib_user_mad_reg_req:
//
//	typedef unsigned long __attribute__((aligned(4))) packed_ulong;
//	#define IB_USER_MAD_LONGS_PER_METHOD_MASK (128 / (8 * sizeof (long)))
//	struct ib_user_mad_reg_req {
//		__u32	id;
//		packed_ulong method_mask[IB_USER_MAD_LONGS_PER_METHOD_MASK];
//		__u8	qpn;
//		__u8	mgmt_class;
//		__u8	mgmt_class_version;
//		__u8    oui[3];
//		__u8	rmpp_version;
//	};
//
// method_mask is native unsigned longs (two on 64-bit, four on 32-bit);
// oui is big-endian bytes. One byte of tail padding makes 28.
var regReqLayout = []abiField{
	{"id", 0, 4, false},
	{"method_mask", 4, 16, false},
	{"qpn", 20, 1, false},
	{"mgmt_class", 21, 1, false},
	{"mgmt_class_version", 22, 1, false},
	{"oui", 23, 3, true},
	{"rmpp_version", 26, 1, false},
}

// regReq2Layout is struct ib_user_mad_reg_req2:
//
//	struct ib_user_mad_reg_req2 {
//		__u32	id;
//		__u32	qpn;
//		__u8	mgmt_class;
//		__u8	mgmt_class_version;
//		__u16   res;
//		__u32   flags;
//		__aligned_u64 method_mask[2];
//		__u32   oui;
//		__u8	rmpp_version;
//		__u8	reserved[3];
//	};
//
// oui is a host-order 24-bit number here (not bytes as in reg_req).
var regReq2Layout = []abiField{
	{"id", 0, 4, false},
	{"qpn", 4, 4, false},
	{"mgmt_class", 8, 1, false},
	{"mgmt_class_version", 9, 1, false},
	{"res", 10, 2, false},
	{"flags", 12, 4, false},
	{"method_mask", 16, 16, false},
	{"oui", 32, 4, false},
	{"rmpp_version", 36, 1, false},
	{"reserved", 37, 3, false},
}

var ne = binary.NativeEndian

// Header is struct ib_user_mad_hdr as Go values: every number is a host
// value, whatever its byte order in the buffer.
type Header struct {
	Agent        uint32 // id
	Status       uint32 // 0 or StatusTimedOut on a read
	TimeoutMS    uint32 // per attempt; 0: no response expected; sign bit: forever
	Retries      uint32
	Length       uint32 // on read: header size + MAD length
	QPN          uint32
	QKey         uint32
	LID          uint16
	SL           uint8
	PathBits     uint8
	GRHPresent   bool
	GIDIndex     uint8
	HopLimit     uint8
	TrafficClass uint8
	GID          [16]byte
	FlowLabel    uint32
	PKeyIndex    uint16 // only with the 64-byte header
}

// Put encodes h into b, which must hold size (HeaderSize or
// HeaderSizeOld) bytes; with the old header PKeyIndex is not written.
func (h *Header) Put(b []byte, size int) {
	_ = b[size-1]
	ne.PutUint32(b[0:], h.Agent)
	ne.PutUint32(b[4:], h.Status)
	ne.PutUint32(b[8:], h.TimeoutMS)
	ne.PutUint32(b[12:], h.Retries)
	ne.PutUint32(b[16:], h.Length)
	binary.BigEndian.PutUint32(b[20:], h.QPN)
	binary.BigEndian.PutUint32(b[24:], h.QKey)
	binary.BigEndian.PutUint16(b[28:], h.LID)
	b[30] = h.SL
	b[31] = h.PathBits
	b[32] = 0
	if h.GRHPresent {
		b[32] = 1
	}
	b[33] = h.GIDIndex
	b[34] = h.HopLimit
	b[35] = h.TrafficClass
	copy(b[36:52], h.GID[:])
	binary.BigEndian.PutUint32(b[52:], h.FlowLabel)
	if size >= HeaderSize {
		ne.PutUint16(b[56:], h.PKeyIndex)
		clear(b[58:64])
	}
}

// Decode fills h from the first size bytes of b.
func (h *Header) Decode(b []byte, size int) {
	_ = b[size-1]
	h.Agent = ne.Uint32(b[0:])
	h.Status = ne.Uint32(b[4:])
	h.TimeoutMS = ne.Uint32(b[8:])
	h.Retries = ne.Uint32(b[12:])
	h.Length = ne.Uint32(b[16:])
	h.QPN = binary.BigEndian.Uint32(b[20:])
	h.QKey = binary.BigEndian.Uint32(b[24:])
	h.LID = binary.BigEndian.Uint16(b[28:])
	h.SL = b[30]
	h.PathBits = b[31]
	h.GRHPresent = b[32] != 0
	h.GIDIndex = b[33]
	h.HopLimit = b[34]
	h.TrafficClass = b[35]
	copy(h.GID[:], b[36:52])
	h.FlowLabel = binary.BigEndian.Uint32(b[52:])
	h.PKeyIndex = 0
	if size >= HeaderSize {
		h.PKeyIndex = ne.Uint16(b[56:])
	}
}

// RegReq is struct ib_user_mad_reg_req as Go values.
type RegReq struct {
	ID          uint32
	Methods     [2]uint64 // bit m of Methods[m/64] for method m
	QPN         uint8
	Class       uint8
	Version     uint8
	OUI         uint32 // 24 bits, stored as big-endian bytes
	RMPPVersion uint8
}

// putMask stores a 128-bit method mask as the C array of native unsigned
// longs of width wordSize (4 or 8).
func putMask(b []byte, m [2]uint64, wordSize uintptr) {
	if wordSize == 8 {
		ne.PutUint64(b[0:], m[0])
		ne.PutUint64(b[8:], m[1])
		return
	}
	for i := range 4 {
		ne.PutUint32(b[4*i:], uint32(m[i/2]>>(32*(i%2))))
	}
}

func getMask(b []byte, wordSize uintptr) (m [2]uint64) {
	if wordSize == 8 {
		return [2]uint64{ne.Uint64(b[0:]), ne.Uint64(b[8:])}
	}
	for i := range 4 {
		m[i/2] |= uint64(ne.Uint32(b[4*i:])) << (32 * (i % 2))
	}
	return m
}

const longSize = unsafe.Sizeof(uintptr(0)) // sizeof(long) on Linux

// Marshal returns the 28-byte ioctl argument.
func (r *RegReq) Marshal() [RegReqSize]byte {
	var b [RegReqSize]byte
	ne.PutUint32(b[0:], r.ID)
	putMask(b[4:20], r.Methods, longSize)
	b[20] = r.QPN
	b[21] = r.Class
	b[22] = r.Version
	b[23], b[24], b[25] = byte(r.OUI>>16), byte(r.OUI>>8), byte(r.OUI)
	b[26] = r.RMPPVersion
	return b
}

// Unmarshal decodes a 28-byte reg_req.
func (r *RegReq) Unmarshal(b []byte) {
	_ = b[RegReqSize-1]
	r.ID = ne.Uint32(b[0:])
	r.Methods = getMask(b[4:20], longSize)
	r.QPN, r.Class, r.Version = b[20], b[21], b[22]
	r.OUI = uint32(b[23])<<16 | uint32(b[24])<<8 | uint32(b[25])
	r.RMPPVersion = b[26]
}

// RegReq2 is struct ib_user_mad_reg_req2 as Go values.
type RegReq2 struct {
	ID          uint32
	QPN         uint32
	Class       uint8
	Version     uint8
	Flags       uint32
	Methods     [2]uint64
	OUI         uint32 // host order, below 2^24
	RMPPVersion uint8
}

// Marshal returns the 40-byte ioctl argument.
func (r *RegReq2) Marshal() [RegReq2Size]byte {
	var b [RegReq2Size]byte
	ne.PutUint32(b[0:], r.ID)
	ne.PutUint32(b[4:], r.QPN)
	b[8] = r.Class
	b[9] = r.Version
	ne.PutUint32(b[12:], r.Flags)
	putMask(b[16:32], r.Methods, 8)
	ne.PutUint32(b[32:], r.OUI)
	b[36] = r.RMPPVersion
	return b
}

// Unmarshal decodes a 40-byte reg_req2.
func (r *RegReq2) Unmarshal(b []byte) {
	_ = b[RegReq2Size-1]
	r.ID = ne.Uint32(b[0:])
	r.QPN = ne.Uint32(b[4:])
	r.Class, r.Version = b[8], b[9]
	r.Flags = ne.Uint32(b[12:])
	r.Methods = getMask(b[16:32], 8)
	r.OUI = ne.Uint32(b[32:])
	r.RMPPVersion = b[36]
}

// QPNFor is the QP libibumad registers a class on: 0 for the SMI classes
// (LID-routed 0x01 and directed-route 0x81), 1 for everything else.
func QPNFor(class uint8) uint8 {
	if class == 0x01 || class == 0x81 {
		return 0
	}
	return 1
}
