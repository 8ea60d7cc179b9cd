package smp

import (
	"fmt"

	"github.com/ibscript/ibscript/mad"
)

// Notice types (Notice.Type).
const (
	NoticeFatal       uint8 = 0
	NoticeUrgent      uint8 = 1
	NoticeSecurity    uint8 = 2
	NoticeSubnetMgmt  uint8 = 3
	NoticeInformation uint8 = 4
	NoticeEmpty       uint8 = 0x7F
)

// Notice rows: mad-formats.md section 7, "Notice (0x0002) — payload of
// Trap/Report/TrapRepress, 80 bytes" (IBA vol. 1 table "Notice").
var (
	ntcIsGeneric    = mad.Field{Name: "IsGeneric", Bit: 0, Width: 1}
	ntcType         = mad.Field{Name: "Type", Bit: 1, Width: 7}
	ntcProducerType = mad.Field{Name: "ProducerType", Bit: 8, Width: 24, Kind: mad.Hex}
	ntcTrapNumber   = mad.Field{Name: "TrapNumber", Bit: 32, Width: 16}
	ntcIssuerLID    = mad.Field{Name: "IssuerLID", Bit: 48, Width: 16}
	ntcNoticeToggle = mad.Field{Name: "NoticeToggle", Bit: 64, Width: 1}
	ntcNoticeCount  = mad.Field{Name: "NoticeCount", Bit: 65, Width: 15}
	ntcDataDetails  = mad.Field{Name: "DataDetails", Bit: 80, Width: 432, Kind: mad.Bytes}
	ntcIssuerGID    = mad.Field{Name: "IssuerGID", Bit: 512, Width: 128, Kind: mad.Bytes}
)

// NoticeLayout is the Notice attribute (0x0002, 80 bytes), the payload of
// Trap, Report and TrapRepress. For a vendor notice (IsGeneric false)
// ProducerType holds the VendorID and TrapNumber the DeviceID.
var NoticeLayout = mad.Layout{
	Name: "Notice",
	ID:   AttrNotice,
	Size: 80,
	Fields: []mad.Field{
		ntcIsGeneric, ntcType, ntcProducerType, ntcTrapNumber, ntcIssuerLID,
		ntcNoticeToggle, ntcNoticeCount, ntcDataDetails, ntcIssuerGID,
	},
}

// NoticeSMPSize is the part of a Notice that an SMP carries: the 64-byte
// SMP data area holds every field but IssuerGID (the SM learns the issuer
// from the packet). SA Reports carry all 80 bytes.
const NoticeSMPSize = 64

// Notice is the Notice attribute: a trap or a notice report.
type Notice struct {
	IsGeneric    bool
	Type         uint8  // Notice* values, 7 bits
	ProducerType uint32 // generic: 1 CA, 2 switch, 3 router, 4 class manager; vendor: VendorID (24 bits)
	TrapNumber   uint16 // generic: trap number; vendor: DeviceID
	IssuerLID    uint16
	NoticeToggle bool
	NoticeCount  uint16   // 15 bits
	DataDetails  [54]byte // trap specific
	IssuerGID    mad.GID
}

// UnmarshalBinary decodes n from the first 80 bytes of b without
// allocating. A b of 64 to 79 bytes (the data of an SMP Trap) decodes with
// a zero IssuerGID. It returns an error wrapping mad.ErrTruncated when b is
// shorter than 64 bytes.
func (n *Notice) UnmarshalBinary(b []byte) error {
	if len(b) < NoticeSMPSize {
		return fmt.Errorf("notice: %w (have %d, need %d)", mad.ErrTruncated, len(b), NoticeSMPSize)
	}
	n.IsGeneric = ntcIsGeneric.Get(b) != 0
	n.Type = uint8(ntcType.Get(b))
	n.ProducerType = uint32(ntcProducerType.Get(b))
	n.TrapNumber = uint16(ntcTrapNumber.Get(b))
	n.IssuerLID = uint16(ntcIssuerLID.Get(b))
	n.NoticeToggle = ntcNoticeToggle.Get(b) != 0
	n.NoticeCount = uint16(ntcNoticeCount.Get(b))
	copy(n.DataDetails[:], ntcDataDetails.Slice(b))
	n.IssuerGID = mad.GID{}
	if len(b) >= NoticeLayout.Size {
		copy(n.IssuerGID[:], ntcIssuerGID.Slice(b))
	}
	return nil
}

// AppendBinary appends the 80-byte attribute to b; an SMP Trap carries its
// first NoticeSMPSize bytes. It returns an error
// wrapping mad.ErrRange, and b unchanged, when a value does not fit its
// field (a Type above 0x7F, a NoticeCount above 0x7FFF).
func (n *Notice) AppendBinary(b []byte) ([]byte, error) {
	all, d := NoticeLayout.Append(b)
	w := mad.Writer{Layout: &NoticeLayout, B: d}
	w.Bool(ntcIsGeneric, n.IsGeneric)
	w.Uint(ntcType, uint64(n.Type))
	w.Uint(ntcProducerType, uint64(n.ProducerType))
	w.Uint(ntcTrapNumber, uint64(n.TrapNumber))
	w.Uint(ntcIssuerLID, uint64(n.IssuerLID))
	w.Bool(ntcNoticeToggle, n.NoticeToggle)
	w.Uint(ntcNoticeCount, uint64(n.NoticeCount))
	w.Bytes(ntcDataDetails, n.DataDetails[:])
	w.Bytes(ntcIssuerGID, n.IssuerGID[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 80-byte attribute.
func (n *Notice) MarshalBinary() ([]byte, error) { return n.AppendBinary(nil) }
