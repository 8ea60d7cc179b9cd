package perf

import (
	"fmt"
	"slices"

	"github.com/ibscript/ibscript/mad"
)

// Version is the class version of PerfMgt.
const Version uint8 = 1

// AllPorts is the PortSelect that selects every port, where the PMA's
// ClassPortInfo has CapAllPortSelect.
const AllPorts uint8 = 0xFF

// PerfMgt attribute IDs without a codec yet (mad-formats.md section 9); the
// others are generated with their layouts (attrs_gen.go).
const (
	AttrClassPortInfo                    = mad.AttrClassPortInfo
	AttrPortSamplesResultExtended uint16 = 0x001E
)

// PMA ClassPortInfo.CapabilityMask bits (class-specific bits 8-15) and
// CapabilityMask2 bits (mad-formats.md section 7, after ClassPortInfo).
const (
	CapAllPortSelect       uint16 = 1 << 8
	CapExtendedWidth       uint16 = 1 << 9 // PortCountersExtended supported
	CapExtendedWidthNoIETF uint16 = 1 << 10
	CapSamplesOnly         uint16 = 1 << 11
	CapPortXmitWait        uint16 = 1 << 12
	CapRSFECCounters       uint16 = 1 << 14 // PortExtendedSpeedsCounters has its RS-FEC layout on ports with RS-FEC active
	CapQP1Dropped          uint16 = 1 << 15

	Cap2AdditionalPortCounters uint32 = 1 << 1 // PortCountersExtended beyond byte 72
)

// PerfMgt MAD rows: mad-formats.md section 4, table "PerfMgt MAD": the
// common header, 40 reserved bytes, then 192 bytes of attribute data.
var pmaData = mad.Field{Name: "Data", LuaKey: "data", Bit: 512, Width: 1536, Kind: mad.Bytes}

// MADLayout returns a whole PerfMgt MAD (class 0x04, 256 bytes).
// It is shared and must not be modified.
func MADLayout() *mad.Layout { return &layoutMAD }

var layoutMAD = mad.Layout{
	Name:   "PerfMgtMAD",
	Size:   mad.Size,
	Fields: slices.Concat(mad.HeaderLayout().Fields, []mad.Field{pmaData}),
}

// MAD is a whole PerfMgt MAD.
type MAD struct {
	mad.Header
	Data [192]byte // the attribute
}

// UnmarshalBinary decodes the 256-byte MAD in b without allocating. It
// returns an error wrapping mad.ErrTruncated when b is shorter.
func (m *MAD) UnmarshalBinary(b []byte) error {
	if err := layoutMAD.Check(b); err != nil {
		return err
	}
	if err := m.Header.UnmarshalBinary(b); err != nil {
		return err
	}
	copy(m.Data[:], pmaData.Slice(b))
	return nil
}

// AppendBinary appends the 256-byte MAD to b, reserved bytes zero.
func (m *MAD) AppendBinary(b []byte) ([]byte, error) {
	all, d := layoutMAD.Append(b)
	m.Header.Put(d)
	w := mad.Writer{Layout: &layoutMAD, B: d}
	w.Bytes(pmaData, m.Data[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 256-byte MAD.
func (m *MAD) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }

// Data returns the 192 attribute bytes of the PerfMgt MAD in b (bytes
// 64..256), aliasing b, or nil when b is shorter than a MAD. Its capacity
// ends with the MAD, so pc.AppendBinary(perf.Data(b)[:0]) encodes in place.
func Data(b []byte) []byte {
	if len(b) < mad.Size {
		return nil
	}
	d := pmaData.Slice(b)
	return d[:len(d):len(d)]
}

// NewRequest builds a PerfMgt request into buf[:256] without allocating and
// returns that slice: the header with method, tid and attr (attribute
// modifier 0) and, for every attribute but ClassPortInfo, PortSelect = port
// in the data. The rest of the data is zero; for a Set, encode the
// attribute into Data(b).
//
// It returns an error wrapping mad.ErrTruncated when cap(buf) < 256.
func NewRequest(buf []byte, method uint8, tid uint64, attr uint16, port uint8) ([]byte, error) {
	if cap(buf) < mad.Size {
		return nil, fmt.Errorf("perf: request buffer: %w (have %d, need %d)", mad.ErrTruncated, cap(buf), mad.Size)
	}
	b := buf[:mad.Size]
	clear(b)
	h := mad.Header{
		BaseVersion:  1,
		MgmtClass:    mad.ClassPerf,
		ClassVersion: Version,
		Method:       method,
		TID:          tid,
		AttrID:       attr,
	}
	h.Put(b)
	if attr != AttrClassPortInfo {
		pcPortSelect.Put(Data(b), uint64(port))
	}
	return b, nil
}

// NewGet builds a PerfGet request of attr for port; see NewRequest.
func NewGet(buf []byte, tid uint64, attr uint16, port uint8) ([]byte, error) {
	return NewRequest(buf, mad.MethodGet, tid, attr, port)
}

// Counter is one port counter of a PerfMgt attribute, as the schema
// (mad/internal/madgen) describes it for perfquery and the exporter: the
// attribute holding it, its row (the IBA name and the width it saturates
// at), libibmad's name of it (perfquery's, "" when libibmad does not
// print it), the exporter's series name (treydock/infiniband_exporter's,
// after infiniband_{switch,hca}_port_; "" for none), its CounterSelect bit
// plus one (bits 16 on are CounterSelect2's; 0: none) and the
// ClassPortInfo capability it needs (0: none).
type Counter struct {
	Attr   uint16
	Field  mad.Field
	IB     string
	Prom   string
	Select uint8
	Cap    uint16
}
