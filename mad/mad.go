package mad

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// ErrTruncated is wrapped by every decoder when its input is too short.
var ErrTruncated = errors.New("truncated")

// ErrRange is wrapped by every encoder when a value does not fit its field
// (a PortState of 17 in a 4-bit field, a NodeDescription of 65 bytes).
var ErrRange = errors.New("value out of range")

// GID is a 128-bit global identifier as it appears on the wire: the 64-bit
// subnet prefix followed by the 64-bit interface ID (the port GUID).
type GID [16]byte

// Prefix returns the subnet prefix (the high 64 bits).
func (g GID) Prefix() uint64 { return binary.BigEndian.Uint64(g[:8]) }

// GUID returns the interface ID (the low 64 bits).
func (g GID) GUID() uint64 { return binary.BigEndian.Uint64(g[8:]) }

// NewGID builds a GID from a subnet prefix and an interface ID.
func NewGID(prefix, guid uint64) GID {
	var g GID
	binary.BigEndian.PutUint64(g[:8], prefix)
	binary.BigEndian.PutUint64(g[8:], guid)
	return g
}

// String formats the GID as eight groups of four hex digits, as
// infiniband-diags prints GIDs: "fe80:0000:0000:0000:0000:0000:0010:0001".
func (g GID) String() string {
	var b [39]byte
	const digits = "0123456789abcdef"
	j := 0
	for i, c := range g {
		if i > 0 && i%2 == 0 {
			b[j] = ':'
			j++
		}
		b[j], b[j+1] = digits[c>>4], digits[c&15]
		j += 2
	}
	return string(b[:])
}

// Sizes of the fixed parts of a MAD.
const (
	Size       = 256 // every IB MAD
	HeaderSize = 24  // common MAD header
	SMPDataOff = 64  // attribute data of an SMP and of a PerfMgt MAD
	SMPDataLen = 64
)

// Management classes (mad-formats.md section 4).
const (
	ClassSubnLID  uint8 = 0x01
	ClassSubnAdm  uint8 = 0x03
	ClassPerf     uint8 = 0x04
	ClassBM       uint8 = 0x05
	ClassDevMgt   uint8 = 0x06
	ClassCM       uint8 = 0x07
	ClassSNMP     uint8 = 0x08
	ClassSubnDR   uint8 = 0x81
	ClassCC       uint8 = 0x21
	ClassVendorLo uint8 = 0x30 // first vendor class with an OUI
	ClassVendorHi uint8 = 0x4f
)

// Methods (mad-formats.md section 3). Method values include the R bit.
const (
	MethodGet         uint8 = 0x01
	MethodSet         uint8 = 0x02
	MethodSend        uint8 = 0x03
	MethodTrap        uint8 = 0x05
	MethodReport      uint8 = 0x06
	MethodTrapRepress uint8 = 0x07
	MethodGetTable    uint8 = 0x12
	MethodGetTrace    uint8 = 0x13
	MethodGetMulti    uint8 = 0x14
	MethodDelete      uint8 = 0x15
	MethodResp        uint8 = 0x80 // the R bit
	MethodGetResp     uint8 = 0x81
	MethodReportResp  uint8 = 0x86
	MethodGetTableRes uint8 = 0x92
	MethodGetMultiRes uint8 = 0x94
	MethodDeleteResp  uint8 = 0x95
)

// Status bits of the common header (mad-formats.md section 3).
const (
	StatusBusy            uint16 = 0x0001
	StatusRedirect        uint16 = 0x0002
	StatusBadVersion      uint16 = 0x0004
	StatusMethodUnsupp    uint16 = 0x0008
	StatusMethodAttrUnsup uint16 = 0x000c
	StatusInvalidField    uint16 = 0x001c
	StatusDirection       uint16 = 0x8000 // D bit of a directed-route SMP
)

// Common MAD header fields (mad-formats.md section 1).
var (
	hdrBaseVersion   = Field{Name: "BaseVersion", LuaKey: "base_version", Bit: 0, Width: 8}
	hdrMgmtClass     = Field{Name: "MgmtClass", LuaKey: "mgmt_class", Bit: 8, Width: 8, Kind: Hex}
	hdrClassVersion  = Field{Name: "ClassVersion", LuaKey: "class_version", Bit: 16, Width: 8}
	hdrMethod        = Field{Name: "Method", LuaKey: "method", Bit: 24, Width: 8, Kind: Hex} // R bit + method
	hdrStatus        = Field{Name: "Status", LuaKey: "status", Bit: 32, Width: 16, Kind: Hex}
	hdrClassSpecific = Field{Name: "ClassSpecific", LuaKey: "class_specific", Bit: 48, Width: 16, Kind: Hex}
	hdrTID           = Field{Name: "TransactionID", LuaKey: "transaction_id", Bit: 64, Width: 64, Kind: Hex}
	hdrAttrID        = Field{Name: "AttributeID", LuaKey: "attribute_id", Bit: 128, Width: 16, Kind: Hex}
	hdrAttrMod       = Field{Name: "AttributeModifier", LuaKey: "attribute_modifier", Bit: 160, Width: 32, Kind: Hex}
)

// HeaderLayout returns the common MAD header. Method is kept whole (R bit
// included), as every tool shows it.
// It is shared and must not be modified.
func HeaderLayout() *Layout { return &layoutHeader }

var layoutHeader = Layout{
	Name: "MADHeader",
	Size: HeaderSize,
	Fields: []Field{hdrBaseVersion, hdrMgmtClass, hdrClassVersion, hdrMethod,
		hdrStatus, hdrClassSpecific, hdrTID, hdrAttrID, hdrAttrMod},
}

// Header is the common MAD header at the start of every MAD.
type Header struct {
	BaseVersion   uint8
	MgmtClass     uint8
	ClassVersion  uint8
	Method        uint8 // includes the R bit (0x80)
	Status        uint16
	ClassSpecific uint16 // DR SMP: HopPointer<<8 | HopCount
	TID           uint64
	AttrID        uint16
	AttrMod       uint32
}

// UnmarshalBinary decodes the header from the first 24 bytes of b.
func (h *Header) UnmarshalBinary(b []byte) error {
	if err := layoutHeader.Check(b); err != nil {
		return err
	}
	h.BaseVersion = uint8(hdrBaseVersion.Get(b))
	h.MgmtClass = uint8(hdrMgmtClass.Get(b))
	h.ClassVersion = uint8(hdrClassVersion.Get(b))
	h.Method = uint8(hdrMethod.Get(b))
	h.Status = uint16(hdrStatus.Get(b))
	h.ClassSpecific = uint16(hdrClassSpecific.Get(b))
	h.TID = hdrTID.Get(b)
	h.AttrID = uint16(hdrAttrID.Get(b))
	h.AttrMod = uint32(hdrAttrMod.Get(b))
	return nil
}

// Put writes the header into the first 24 bytes of b, which must hold them.
// Reserved bytes are zeroed.
func (h *Header) Put(b []byte) {
	_ = b[HeaderSize-1]
	clear(b[:HeaderSize])
	hdrBaseVersion.Put(b, uint64(h.BaseVersion))
	hdrMgmtClass.Put(b, uint64(h.MgmtClass))
	hdrClassVersion.Put(b, uint64(h.ClassVersion))
	hdrMethod.Put(b, uint64(h.Method))
	hdrStatus.Put(b, uint64(h.Status))
	hdrClassSpecific.Put(b, uint64(h.ClassSpecific))
	hdrTID.Put(b, h.TID)
	hdrAttrID.Put(b, uint64(h.AttrID))
	hdrAttrMod.Put(b, uint64(h.AttrMod))
}

// AppendBinary appends the 24-byte header to b.
func (h *Header) AppendBinary(b []byte) ([]byte, error) {
	n := len(b)
	b = append(b, make([]byte, HeaderSize)...)
	h.Put(b[n:])
	return b, nil
}

// MarshalBinary returns the 24-byte header.
func (h *Header) MarshalBinary() ([]byte, error) { return h.AppendBinary(nil) }

// Accessors for the header of a raw MAD, for hot paths that route packets
// without decoding the whole header. b must hold at least 24 bytes.

// BaseVersionOf returns the base version of the MAD in b (1 for IB's).
func BaseVersionOf(b []byte) uint8 { return b[0] }

// ClassVersionOf returns the class version of the MAD in b.
func ClassVersionOf(b []byte) uint8 { return b[2] }

// MgmtClassOf returns the management class of the MAD in b.
func MgmtClassOf(b []byte) uint8 { return b[1] }

// MethodOf returns the method byte (R bit included) of the MAD in b.
func MethodOf(b []byte) uint8 { return b[3] }

// SetMethod stores the method byte (R bit included) of the MAD in b.
func SetMethod(b []byte, method uint8) { b[3] = method }

// TIDOf returns the transaction ID of the MAD in b.
func TIDOf(b []byte) uint64 { return hdrTID.Get(b) }

// SetTID stores the transaction ID of the MAD in b.
func SetTID(b []byte, tid uint64) { hdrTID.Put(b, tid) }

// StatusOf returns the status field of the MAD in b.
func StatusOf(b []byte) uint16 { return uint16(hdrStatus.Get(b)) }

// SetStatus stores the status field of the MAD in b.
func SetStatus(b []byte, status uint16) { hdrStatus.Put(b, uint64(status)) }

// AttrIDOf returns the attribute ID of the MAD in b.
func AttrIDOf(b []byte) uint16 { return uint16(hdrAttrID.Get(b)) }

// AttrModOf returns the attribute modifier of the MAD in b.
func AttrModOf(b []byte) uint32 { return uint32(hdrAttrMod.Get(b)) }

// SetAttrMod stores the attribute modifier of the MAD in b.
func SetAttrMod(b []byte, mod uint32) { hdrAttrMod.Put(b, uint64(mod)) }

// vendorOUI is the OUI of a MAD of the vendor classes with one
// (ClassVendorLo to ClassVendorHi): bytes 37-39, after the RMPP header and
// a reserved byte (IBA 13.4.12's vendor MAD header).
var vendorOUI = Field{Name: "OUI", LuaKey: "oui", Bit: 296, Width: 24, Kind: Hex}

// VendorOUIOf returns the OUI of the vendor class MAD in b, which must
// hold at least 40 bytes.
func VendorOUIOf(b []byte) uint32 { return uint32(vendorOUI.Get(b)) }

// SetVendorOUI stores the OUI of the vendor class MAD in b, which must
// hold at least 40 bytes.
func SetVendorOUI(b []byte, oui uint32) { vendorOUI.Put(b, uint64(oui)) }

// IsResponse applies the rule Linux uses to route a MAD as a response:
// the R bit is set, or the method is TrapRepress, or the class is BM and
// bit 0 of the attribute modifier is set.
func IsResponse(b []byte) bool {
	m := b[3]
	return m&MethodResp != 0 || m == MethodTrapRepress ||
		(b[1] == ClassBM && b[23]&1 != 0)
}

// MethodName returns the IBA name of a method byte, e.g. "GetResp".
func MethodName(m uint8) string {
	switch m {
	case MethodGet:
		return "Get"
	case MethodSet:
		return "Set"
	case MethodSend:
		return "Send"
	case MethodTrap:
		return "Trap"
	case MethodReport:
		return "Report"
	case MethodTrapRepress:
		return "TrapRepress"
	case MethodGetTable:
		return "GetTable"
	case MethodGetTrace:
		return "GetTraceTable"
	case MethodGetMulti:
		return "GetMulti"
	case MethodDelete:
		return "Delete"
	case MethodGetResp:
		return "GetResp"
	case MethodReportResp:
		return "ReportResp"
	case MethodGetTableRes:
		return "GetTableResp"
	case MethodGetMultiRes:
		return "GetMultiResp"
	case MethodDeleteResp:
		return "DeleteResp"
	}
	return fmt.Sprintf("Method(0x%02x)", m)
}

// ClassName returns a short name for a management class, e.g. "SubnAdm".
func ClassName(c uint8) string {
	switch c {
	case ClassSubnLID:
		return "SubnMgmt"
	case ClassSubnDR:
		return "SubnMgmtDR"
	case ClassSubnAdm:
		return "SubnAdm"
	case ClassPerf:
		return "PerfMgt"
	case ClassBM:
		return "BM"
	case ClassDevMgt:
		return "DevMgt"
	case ClassCM:
		return "CM"
	case ClassSNMP:
		return "SNMP"
	case ClassCC:
		return "CongestionMgt"
	}
	return fmt.Sprintf("Class(0x%02x)", c)
}

// StatusText describes a MAD status value, e.g. "method/attribute
// combination not supported (0x000c)".
func StatusText(s uint16) string {
	var msg string
	switch {
	case s&0x7fff == 0:
		return "success"
	case s&StatusBusy != 0:
		msg = "busy"
	case s&StatusRedirect != 0:
		msg = "redirect required"
	default:
		switch (s >> 2) & 7 {
		case 1:
			msg = "bad base or class version"
		case 2:
			msg = "method not supported"
		case 3:
			msg = "method/attribute combination not supported"
		case 7:
			msg = "invalid attribute or modifier value"
		default:
			msg = "class-specific error"
		}
	}
	return fmt.Sprintf("%s (0x%04x)", msg, s)
}
