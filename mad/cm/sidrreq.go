package cm

import "github.com/ibscript/ibscript/mad"

// SIDR_REQ rows: rdmacm-abi.md section 10.2, "SIDR_REQ (0x0017)" (IBA vol. 1
// chapter 12, CM message SIDR_REQ); bits from the start of the CM message
// (MAD byte 24).
var (
	sidrreqRequestID   = mad.Field{Name: "RequestID", LuaKey: "request_id", Bit: 0, Width: 32, Kind: mad.Hex}
	sidrreqPKey        = mad.Field{Name: "PartitionKey", LuaKey: "partition_key", Bit: 32, Width: 16, Kind: mad.Hex}
	sidrreqServiceID   = mad.Field{Name: "ServiceID", LuaKey: "service_id", Bit: 64, Width: 64, Kind: mad.Hex}
	sidrreqPrivateData = mad.Field{Name: "PrivateData", LuaKey: "private_data", Bit: 128, Width: 1728, Kind: mad.Bytes}
)

// SIDRReqLayout is the SIDR_REQ message (0x0017, 232 bytes).
var SIDRReqLayout = mad.Layout{
	Name:   "SIDR_REQ",
	ID:     AttrSIDRReq,
	Size:   MsgSize,
	Fields: []mad.Field{sidrreqRequestID, sidrreqPKey, sidrreqServiceID, sidrreqPrivateData},
}

// SIDRReq is the CM SIDR_REQ message (attribute 0x0017).
type SIDRReq struct {
	RequestID   uint32
	PKey        uint16
	ServiceID   uint64
	PrivateData [216]byte
}

// UnmarshalBinary decodes m from the first 232 bytes of b (the MAD from
// byte 24) without allocating; a shorter b is an error wrapping
// mad.ErrTruncated.
func (m *SIDRReq) UnmarshalBinary(b []byte) error {
	if err := SIDRReqLayout.Check(b); err != nil {
		return err
	}
	m.RequestID = uint32(sidrreqRequestID.Get(b))
	m.PKey = uint16(sidrreqPKey.Get(b))
	m.ServiceID = uint64(sidrreqServiceID.Get(b))
	copy(m.PrivateData[:], sidrreqPrivateData.Slice(b))
	return nil
}

// AppendBinary appends the 232-byte message to b. A value too wide for its
// field is an error wrapping mad.ErrRange, and b is returned unchanged.
func (m *SIDRReq) AppendBinary(b []byte) ([]byte, error) {
	all, d := SIDRReqLayout.Append(b)
	w := mad.Writer{Layout: &SIDRReqLayout, B: d}
	w.Uint(sidrreqRequestID, uint64(m.RequestID))
	w.Uint(sidrreqPKey, uint64(m.PKey))
	w.Uint(sidrreqServiceID, uint64(m.ServiceID))
	w.Bytes(sidrreqPrivateData, m.PrivateData[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 232-byte message.
func (m *SIDRReq) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }
