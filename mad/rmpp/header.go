// Package rmpp implements the Reliable Multi-Packet Transaction Protocol
// (IBA vol. 1 section 13.6): the RMPP header codec, the
// segmentation arithmetic, and pure sender and receiver state machines.
//
// # Purpose
//
// The machines do no I/O, start no goroutines and never read the clock:
// they take a received segment or a tick plus the current time and return
// what to transmit and when to be ticked next. engine drives them as a
// requester for transports without kernel RMPP, and sim drives them as the
// SA's responder.
//
// # Concurrency
//
// A Sender or Receiver is owned by one goroutine.
//
// # Errors
//
// Decoding errors wrap mad.ErrTruncated; a transfer that ends badly
// reports an *AbortError naming who ended it and the status.
package rmpp

import (
	"fmt"

	"github.com/ibscript/ibscript/mad"
)

// Version is the only RMPP version (RMPPVersion field).
const Version = 1

// Type is RMPPType.
type Type uint8

// RMPP packet types (rmpp.md section 2).
const (
	TypeData  Type = 1
	TypeAck   Type = 2
	TypeStop  Type = 3
	TypeAbort Type = 4
)

func (t Type) String() string {
	switch t {
	case TypeData:
		return "DATA"
	case TypeAck:
		return "ACK"
	case TypeStop:
		return "STOP"
	case TypeAbort:
		return "ABORT"
	}
	return fmt.Sprintf("type %d", uint8(t))
}

// RMPPFlags bits.
const (
	FlagActive = 0x1
	FlagFirst  = 0x2
	FlagLast   = 0x4
)

// RMPPStatus values (rmpp.md section 2).
const (
	StatusNormal    uint8 = 0
	StatusResX      uint8 = 1   // STOP: resources exhausted
	StatusT2L       uint8 = 118 // total time too long
	StatusBadLen    uint8 = 119 // inconsistent Last and PayloadLength
	StatusBadSeg    uint8 = 120 // inconsistent First and SegmentNumber
	StatusBadType   uint8 = 121 // bad RMPPType
	StatusW2S       uint8 = 122 // NewWindowLast too small
	StatusS2B       uint8 = 123 // SegmentNumber too big
	StatusBadStatus uint8 = 124 // illegal status
	StatusUnV       uint8 = 125 // unsupported version
	StatusTMR       uint8 = 126 // too many retries
	StatusUnspec    uint8 = 127 // unspecified
)

// StatusText names an RMPPStatus value.
func StatusText(s uint8) string {
	switch s {
	case StatusNormal:
		return "normal"
	case StatusResX:
		return "resources exhausted"
	case StatusT2L:
		return "total time too long"
	case StatusBadLen:
		return "inconsistent Last and PayloadLength"
	case StatusBadSeg:
		return "inconsistent First and SegmentNumber"
	case StatusBadType:
		return "bad RMPPType"
	case StatusW2S:
		return "NewWindowLast too small"
	case StatusS2B:
		return "SegmentNumber too big"
	case StatusBadStatus:
		return "illegal status"
	case StatusUnV:
		return "unsupported version"
	case StatusTMR:
		return "too many retries"
	case StatusUnspec:
		return "unspecified"
	}
	return fmt.Sprintf("status %d", s)
}

// Sizes of an RMPP MAD (rmpp.md section 1 and 3).
const (
	HeaderOff = 24  // RMPP header offset in the MAD
	HeaderEnd = 36  // first byte after the RMPP header
	Payload   = 220 // R: RMPP payload per segment (class header + data)
)

// Header rows: mad-formats.md section 5 "RMPP header", offsets within the
// MAD.
var (
	hVersion  = mad.Field{Name: "RMPPVersion", LuaKey: "rmpp_version", Bit: 192, Width: 8}
	hType     = mad.Field{Name: "RMPPType", LuaKey: "rmpp_type", Bit: 200, Width: 8}
	hRespTime = mad.Field{Name: "RRespTime", LuaKey: "r_resp_time", Bit: 208, Width: 5}
	hFlags    = mad.Field{Name: "RMPPFlags", LuaKey: "rmpp_flags", Bit: 213, Width: 3, Kind: mad.Hex}
	hStatus   = mad.Field{Name: "RMPPStatus", LuaKey: "rmpp_status", Bit: 216, Width: 8}
	hData1    = mad.Field{Name: "Data1", LuaKey: "data1", Bit: 224, Width: 32}
	hData2    = mad.Field{Name: "Data2", LuaKey: "data2", Bit: 256, Width: 32}
)

// HeaderLayout returns the common MAD header followed by the RMPP header: the
// first 36 bytes of every MAD of an RMPP-capable class. Data1 is the
// SegmentNumber (DATA, ACK); Data2 the PayloadLength (DATA) or
// NewWindowLast (ACK).
// It is shared and must not be modified.
func HeaderLayout() *mad.Layout { return &layoutHeader }

var layoutHeader = mad.Layout{
	Name:   "RMPPHeader",
	Size:   HeaderEnd,
	Fields: append(append([]mad.Field(nil), mad.HeaderLayout().Fields...), hVersion, hType, hRespTime, hFlags, hStatus, hData1, hData2),
}

// Header is the RMPP header (MAD bytes 24-35).
type Header struct {
	Version  uint8
	Type     Type
	RespTime uint8 // 5 bits; 0x1f = none given
	Flags    uint8 // FlagActive | FlagFirst | FlagLast
	Status   uint8
	Data1    uint32 // SegmentNumber
	Data2    uint32 // PayloadLength or NewWindowLast
}

// Active reports whether the Active flag is set.
func (h *Header) Active() bool { return h.Flags&FlagActive != 0 }

// UnmarshalBinary decodes the RMPP header from a MAD (at least 36 bytes),
// without allocating.
func (h *Header) UnmarshalBinary(b []byte) error {
	if len(b) < HeaderEnd {
		return fmt.Errorf("rmpp header: %w (have %d, need %d)", mad.ErrTruncated, len(b), HeaderEnd)
	}
	h.Version = uint8(hVersion.Get(b))
	h.Type = Type(hType.Get(b))
	h.RespTime = uint8(hRespTime.Get(b))
	h.Flags = uint8(hFlags.Get(b))
	h.Status = uint8(hStatus.Get(b))
	h.Data1 = uint32(hData1.Get(b))
	h.Data2 = uint32(hData2.Get(b))
	return nil
}

// Put stores the header into bytes 24-35 of the MAD b (at least 36 bytes),
// truncating values to their fields.
func (h *Header) Put(b []byte) {
	hVersion.Put(b, uint64(h.Version))
	hType.Put(b, uint64(h.Type))
	hRespTime.Put(b, uint64(h.RespTime))
	hFlags.Put(b, uint64(h.Flags))
	hStatus.Put(b, uint64(h.Status))
	hData1.Put(b, uint64(h.Data1))
	hData2.Put(b, uint64(h.Data2))
}

// IsActive reports whether the MAD b has the RMPP Active flag set. b must
// be at least 36 bytes long; shorter MADs are not active.
func IsActive(b []byte) bool {
	return len(b) >= HeaderEnd && hFlags.Get(b)&FlagActive != 0
}

// ClassUsesRMPP reports whether the management class may use RMPP (Linux
// ib_is_mad_class_rmpp): SA, DevMgt, DevAdm, BIS and vendor range 2.
func ClassUsesRMPP(class uint8) bool {
	switch class {
	case mad.ClassSubnAdm, mad.ClassDevMgt, 0x10, 0x12:
		return true
	}
	return class >= mad.ClassVendorLo && class <= mad.ClassVendorHi
}

// DataOffset is H, the offset of the class data in a MAD of the class
// (rmpp.md section 1): 56 for SA, 40 for vendor range 2, 64 otherwise.
func DataOffset(class uint8) int {
	switch {
	case class == mad.ClassSubnAdm:
		return 56
	case class >= mad.ClassVendorLo && class <= mad.ClassVendorHi:
		return 40
	}
	return 64
}

// Geometry is the segmentation arithmetic of one class (rmpp.md section 3).
type Geometry struct {
	H int // class data offset
}

// S is the class data bytes per segment.
func (g Geometry) S() int { return mad.Size - g.H }

// C is the class header bytes repeated in every segment.
func (g Geometry) C() int { return g.H - HeaderEnd }

// Segments is N for a message with d bytes of class data.
func (g Geometry) Segments(d int) int {
	return max(1, (d+g.S()-1)/g.S())
}

// PayloadLength returns the PayloadLength of the first and of the last
// segment of a message with d bytes of class data (equal when N is 1).
func (g Geometry) PayloadLength(d int) (first, last int) {
	n := g.Segments(d)
	return d + n*g.C(), g.C() + (d - (n-1)*g.S())
}

// MessageLength is the Linux receiver's length of a reassembled message
// of n segments whose last segment carried PayloadLength pl: H + n*S -
// pad, pad = 220 - pl, forced to 0 when outside 0..220.
func (g Geometry) MessageLength(n int, pl uint32) int {
	pad := Payload - int(pl)
	if pl > Payload || pad < 0 || pad > Payload {
		pad = 0
	}
	return g.H + n*g.S() - pad
}
