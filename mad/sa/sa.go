// Package sa holds the Subnet Administration class (0x03, version 2)
// codecs: the SA MAD header (common header, RMPP header, SM_Key,
// AttributeOffset, ComponentMask) and the SA records, each with one layout
// table whose rows are also the record's components (mad-formats.md
// section 8).
//
// # Component masks
//
// A record's component numbers live in Attr.Comp, a table parallel to the
// layout's rows (Comp[i] is the component bit of Layout.Fields[i], -1 for
// a row no mask bit selects). mad.Field is shared by every codec and has
// no room for a number whose zero value means something (component 0),
// so the numbers stay here, next to the layouts, and a test checks the
// two tables agree.
//
// # Query templates
//
// A query's template and component mask are built together: Template
// (any record, rows by name) and the typed templates generated from the
// schema (NewPathRecordTemplate().SetSGID(g).SetNumbPath(1), ...) select
// a row's component as the row is set, so the two cannot disagree.
// Attr.Span reads the C tools' words that span several rows.
//
// # Concurrency
//
// Layouts and Attrs are read-only; values are owned by their user.
//
// # Errors
//
// Decoding errors wrap mad.ErrTruncated; encoding errors mad.ErrRange.
package sa

import (
	"fmt"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
)

// ClassVersion is the SA class version.
const ClassVersion = 2

// Sizes of the SA MAD (mad-formats.md section 8).
const (
	HeaderSize = 56  // common + RMPP + SA headers; the data starts here
	DataSize   = 200 // SA data per MAD or segment
)

// SA MAD status values (class-specific bits 8-15 of the status).
const (
	StatusNoResources    uint16 = 1 << 8
	StatusReqInvalid     uint16 = 2 << 8
	StatusNoRecords      uint16 = 3 << 8
	StatusTooManyRecords uint16 = 4 << 8
	StatusInvalidGID     uint16 = 5 << 8
	StatusInsufComps     uint16 = 6 << 8
)

// StatusText names the SA class-specific status (bits 8-15 of the MAD
// status), or returns "" when there is none.
func StatusText(st uint16) string {
	switch st & 0xff00 {
	case StatusNoResources:
		return "SA has no resources (ERR_NO_RESOURCES)"
	case StatusReqInvalid:
		return "request invalid (ERR_REQ_INVALID)"
	case StatusNoRecords:
		return "no records (ERR_NO_RECORDS)"
	case StatusTooManyRecords:
		return "too many records (ERR_TOO_MANY_RECORDS)"
	case StatusInvalidGID:
		return "invalid GID (ERR_REQ_INVALID_GID)"
	case StatusInsufComps:
		return "insufficient components (ERR_REQ_INSUFFICIENT_COMPONENTS)"
	}
	return ""
}

// SA header rows (mad-formats.md section 8, "SA MAD layout").
var (
	hdrSMKey      = mad.Field{Name: "SM_Key", LuaKey: "sm_key", Bit: 288, Width: 64, Kind: mad.Hex}
	hdrAttrOffset = mad.Field{Name: "AttributeOffset", LuaKey: "attribute_offset", Bit: 352, Width: 16}
	hdrCompMask   = mad.Field{Name: "ComponentMask", LuaKey: "component_mask", Bit: 384, Width: 64, Kind: mad.Hex}
)

// HeaderLayout returns the whole 56-byte SA header: common header, RMPP header
// and the SA class header.
// It is shared and must not be modified.
func HeaderLayout() *mad.Layout { return &layoutHeader }

var layoutHeader = mad.Layout{
	Name:   "SAHeader",
	Size:   HeaderSize,
	Fields: append(append([]mad.Field(nil), rmpp.HeaderLayout().Fields...), hdrSMKey, hdrAttrOffset, hdrCompMask),
}

// Header is the SA MAD header.
type Header struct {
	mad.Header
	RMPP            rmpp.Header
	SMKey           uint64
	AttributeOffset uint16 // record stride in 8-byte units
	ComponentMask   uint64
}

// UnmarshalBinary decodes the first 56 bytes of b without allocating.
func (h *Header) UnmarshalBinary(b []byte) error {
	if err := layoutHeader.Check(b); err != nil {
		return err
	}
	if err := h.Header.UnmarshalBinary(b); err != nil {
		return err
	}
	if err := h.RMPP.UnmarshalBinary(b); err != nil {
		return err
	}
	h.SMKey = hdrSMKey.Get(b)
	h.AttributeOffset = uint16(hdrAttrOffset.Get(b))
	h.ComponentMask = hdrCompMask.Get(b)
	return nil
}

// AppendBinary appends the 56-byte header to b.
func (h *Header) AppendBinary(b []byte) ([]byte, error) {
	all, d := layoutHeader.Append(b)
	h.Header.Put(d)
	h.RMPP.Put(d)
	hdrSMKey.Put(d, h.SMKey)
	hdrAttrOffset.Put(d, uint64(h.AttributeOffset))
	hdrCompMask.Put(d, h.ComponentMask)
	return all, nil
}

// MarshalBinary returns the 56-byte header.
func (h *Header) MarshalBinary() ([]byte, error) { return h.AppendBinary(nil) }

// ComponentMaskOf returns the ComponentMask of an SA MAD (56 bytes or
// more).
func ComponentMaskOf(b []byte) uint64 { return hdrCompMask.Get(b) }

// SetComponentMask stores the ComponentMask of an SA MAD.
func SetComponentMask(b []byte, m uint64) { hdrCompMask.Put(b, m) }

// SMKeyOf returns the SM_Key of the SA header of b.
func SMKeyOf(b []byte) uint64 { return hdrSMKey.Get(b) }

// SetSMKey sets the SM_Key of the SA header of b.
func SetSMKey(b []byte, k uint64) { hdrSMKey.Put(b, k) }

// AttributeOffsetOf returns the AttributeOffset (stride in 8-byte units).
func AttributeOffsetOf(b []byte) uint16 { return uint16(hdrAttrOffset.Get(b)) }

// SetAttributeOffset stores the AttributeOffset.
func SetAttributeOffset(b []byte, o uint16) { hdrAttrOffset.Put(b, uint64(o)) }

// NewRequest returns a 256-byte SA request: method (Get, GetTable ...),
// attribute, TID low bits, component mask and the template record (at
// most 200 bytes) in the data. The RMPP header is zero: a short request.
func NewRequest(method uint8, attr uint16, tid uint64, compMask uint64, template []byte) ([]byte, error) {
	if len(template) > DataSize {
		return nil, fmt.Errorf("sa: request template of %d bytes: %w (max %d)", len(template), mad.ErrRange, DataSize)
	}
	b := make([]byte, mad.Size)
	h := mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSubnAdm, ClassVersion: ClassVersion, Method: method, TID: tid, AttrID: attr}
	h.Put(b)
	hdrCompMask.Put(b, compMask)
	copy(b[HeaderSize:], template)
	return b, nil
}

// Records splits the data of an SA response message (the coalesced RMPP
// message or one MAD) into records: the stride is AttributeOffset*8 and
// the count (len-56)/stride, as rmpp.md section 8 says; never from
// PayloadLength. The records alias msg.
func Records(msg []byte) ([][]byte, error) {
	if len(msg) < HeaderSize {
		return nil, fmt.Errorf("sa: response: %w (have %d, need %d)", mad.ErrTruncated, len(msg), HeaderSize)
	}
	stride := int(AttributeOffsetOf(msg)) * 8
	if stride == 0 {
		return nil, nil
	}
	data := msg[HeaderSize:]
	n := len(data) / stride
	out := make([][]byte, n)
	for i := range out {
		out[i] = data[i*stride : (i+1)*stride : (i+1)*stride]
	}
	return out, nil
}
