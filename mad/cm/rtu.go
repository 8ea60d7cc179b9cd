package cm

import "github.com/ibscript/ibscript/mad"

// RTU rows: rdmacm-abi.md section 10.2, "RTU (0x0014)" (IBA vol. 1
// chapter 12, CM message RTU); bits from the start of the CM message
// (MAD byte 24).
var (
	rtuLocalCommID  = mad.Field{Name: "LocalCommID", LuaKey: "local_comm_id", Bit: 0, Width: 32, Kind: mad.Hex}
	rtuRemoteCommID = mad.Field{Name: "RemoteCommID", LuaKey: "remote_comm_id", Bit: 32, Width: 32, Kind: mad.Hex}
	rtuPrivateData  = mad.Field{Name: "PrivateData", LuaKey: "private_data", Bit: 64, Width: 1792, Kind: mad.Bytes}
)

// RTULayout is the RTU message (0x0014, 232 bytes).
var RTULayout = mad.Layout{
	Name:   "RTU",
	ID:     AttrRTU,
	Size:   MsgSize,
	Fields: []mad.Field{rtuLocalCommID, rtuRemoteCommID, rtuPrivateData},
}

// RTU is the CM RTU message (attribute 0x0014).
type RTU struct {
	LocalCommID  uint32
	RemoteCommID uint32
	PrivateData  [224]byte
}

// UnmarshalBinary decodes m from the first 232 bytes of b (the MAD from
// byte 24) without allocating; a shorter b is an error wrapping
// mad.ErrTruncated.
func (m *RTU) UnmarshalBinary(b []byte) error {
	if err := RTULayout.Check(b); err != nil {
		return err
	}
	m.LocalCommID = uint32(rtuLocalCommID.Get(b))
	m.RemoteCommID = uint32(rtuRemoteCommID.Get(b))
	copy(m.PrivateData[:], rtuPrivateData.Slice(b))
	return nil
}

// AppendBinary appends the 232-byte message to b. A value too wide for its
// field is an error wrapping mad.ErrRange, and b is returned unchanged.
func (m *RTU) AppendBinary(b []byte) ([]byte, error) {
	all, d := RTULayout.Append(b)
	w := mad.Writer{Layout: &RTULayout, B: d}
	w.Uint(rtuLocalCommID, uint64(m.LocalCommID))
	w.Uint(rtuRemoteCommID, uint64(m.RemoteCommID))
	w.Bytes(rtuPrivateData, m.PrivateData[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 232-byte message.
func (m *RTU) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }
