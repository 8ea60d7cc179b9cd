package cm

import "github.com/ibscript/ibscript/mad"

// SIDR_REP rows: rdmacm-abi.md section 10.2, "SIDR_REP (0x0018)" (IBA vol. 1
// chapter 12, CM message SIDR_REP); bits from the start of the CM message
// (MAD byte 24).
var (
	sidrrepRequestID            = mad.Field{Name: "RequestID", LuaKey: "request_id", Bit: 0, Width: 32, Kind: mad.Hex}
	sidrrepStatus               = mad.Field{Name: "Status", LuaKey: "status", Bit: 32, Width: 8}
	sidrrepAdditionalInfoLength = mad.Field{Name: "AdditionalInfoLength", LuaKey: "additional_info_length", Bit: 40, Width: 8}
	sidrrepQPN                  = mad.Field{Name: "QPN", LuaKey: "qp_n", Bit: 64, Width: 24, Kind: mad.Hex}
	sidrrepServiceID            = mad.Field{Name: "ServiceID", LuaKey: "service_id", Bit: 96, Width: 64, Kind: mad.Hex}
	sidrrepQKey                 = mad.Field{Name: "QKey", LuaKey: "q_key", Bit: 160, Width: 32, Kind: mad.Hex}
	sidrrepAdditionalInfo       = mad.Field{Name: "AdditionalInfo", LuaKey: "additional_info", Bit: 192, Width: 576, Kind: mad.Bytes}
	sidrrepPrivateData          = mad.Field{Name: "PrivateData", LuaKey: "private_data", Bit: 768, Width: 1088, Kind: mad.Bytes}
)

// SIDRRepLayout is the SIDR_REP message (0x0018, 232 bytes).
var SIDRRepLayout = mad.Layout{
	Name:   "SIDR_REP",
	ID:     AttrSIDRRep,
	Size:   MsgSize,
	Fields: []mad.Field{sidrrepRequestID, sidrrepStatus, sidrrepAdditionalInfoLength, sidrrepQPN, sidrrepServiceID, sidrrepQKey, sidrrepAdditionalInfo, sidrrepPrivateData},
}

// SIDRRep is the CM SIDR_REP message (attribute 0x0018).
type SIDRRep struct {
	RequestID            uint32
	Status               uint8
	AdditionalInfoLength uint8
	QPN                  uint32
	ServiceID            uint64
	QKey                 uint32
	AdditionalInfo       [72]byte
	PrivateData          [136]byte
}

// UnmarshalBinary decodes m from the first 232 bytes of b (the MAD from
// byte 24) without allocating; a shorter b is an error wrapping
// mad.ErrTruncated.
func (m *SIDRRep) UnmarshalBinary(b []byte) error {
	if err := SIDRRepLayout.Check(b); err != nil {
		return err
	}
	m.RequestID = uint32(sidrrepRequestID.Get(b))
	m.Status = uint8(sidrrepStatus.Get(b))
	m.AdditionalInfoLength = uint8(sidrrepAdditionalInfoLength.Get(b))
	m.QPN = uint32(sidrrepQPN.Get(b))
	m.ServiceID = uint64(sidrrepServiceID.Get(b))
	m.QKey = uint32(sidrrepQKey.Get(b))
	copy(m.AdditionalInfo[:], sidrrepAdditionalInfo.Slice(b))
	copy(m.PrivateData[:], sidrrepPrivateData.Slice(b))
	return nil
}

// AppendBinary appends the 232-byte message to b. A value too wide for its
// field is an error wrapping mad.ErrRange, and b is returned unchanged.
func (m *SIDRRep) AppendBinary(b []byte) ([]byte, error) {
	all, d := SIDRRepLayout.Append(b)
	w := mad.Writer{Layout: &SIDRRepLayout, B: d}
	w.Uint(sidrrepRequestID, uint64(m.RequestID))
	w.Uint(sidrrepStatus, uint64(m.Status))
	w.Uint(sidrrepAdditionalInfoLength, uint64(m.AdditionalInfoLength))
	w.Uint(sidrrepQPN, uint64(m.QPN))
	w.Uint(sidrrepServiceID, uint64(m.ServiceID))
	w.Uint(sidrrepQKey, uint64(m.QKey))
	w.Bytes(sidrrepAdditionalInfo, m.AdditionalInfo[:])
	w.Bytes(sidrrepPrivateData, m.PrivateData[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 232-byte message.
func (m *SIDRRep) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }
