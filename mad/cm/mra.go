package cm

import "github.com/ibscript/ibscript/mad"

// MRA rows: rdmacm-abi.md section 10.2, "MRA (0x0011)" (IBA vol. 1
// chapter 12, CM message MRA); bits from the start of the CM message
// (MAD byte 24).
var (
	mraLocalCommID    = mad.Field{Name: "LocalCommID", LuaKey: "local_comm_id", Bit: 0, Width: 32, Kind: mad.Hex}
	mraRemoteCommID   = mad.Field{Name: "RemoteCommID", LuaKey: "remote_comm_id", Bit: 32, Width: 32, Kind: mad.Hex}
	mraMessageMRAed   = mad.Field{Name: "MessageMRAed", LuaKey: "message_mr_aed", Bit: 64, Width: 2}
	mraServiceTimeout = mad.Field{Name: "ServiceTimeout", LuaKey: "service_timeout", Bit: 72, Width: 5}
	mraPrivateData    = mad.Field{Name: "PrivateData", LuaKey: "private_data", Bit: 80, Width: 1776, Kind: mad.Bytes}
)

// MRALayout is the MRA message (0x0011, 232 bytes).
var MRALayout = mad.Layout{
	Name:   "MRA",
	ID:     AttrMRA,
	Size:   MsgSize,
	Fields: []mad.Field{mraLocalCommID, mraRemoteCommID, mraMessageMRAed, mraServiceTimeout, mraPrivateData},
}

// MRA is the CM MRA message (attribute 0x0011).
type MRA struct {
	LocalCommID    uint32
	RemoteCommID   uint32
	MessageMRAed   uint8
	ServiceTimeout uint8
	PrivateData    [222]byte
}

// UnmarshalBinary decodes m from the first 232 bytes of b (the MAD from
// byte 24) without allocating; a shorter b is an error wrapping
// mad.ErrTruncated.
func (m *MRA) UnmarshalBinary(b []byte) error {
	if err := MRALayout.Check(b); err != nil {
		return err
	}
	m.LocalCommID = uint32(mraLocalCommID.Get(b))
	m.RemoteCommID = uint32(mraRemoteCommID.Get(b))
	m.MessageMRAed = uint8(mraMessageMRAed.Get(b))
	m.ServiceTimeout = uint8(mraServiceTimeout.Get(b))
	copy(m.PrivateData[:], mraPrivateData.Slice(b))
	return nil
}

// AppendBinary appends the 232-byte message to b. A value too wide for its
// field is an error wrapping mad.ErrRange, and b is returned unchanged.
func (m *MRA) AppendBinary(b []byte) ([]byte, error) {
	all, d := MRALayout.Append(b)
	w := mad.Writer{Layout: &MRALayout, B: d}
	w.Uint(mraLocalCommID, uint64(m.LocalCommID))
	w.Uint(mraRemoteCommID, uint64(m.RemoteCommID))
	w.Uint(mraMessageMRAed, uint64(m.MessageMRAed))
	w.Uint(mraServiceTimeout, uint64(m.ServiceTimeout))
	w.Bytes(mraPrivateData, m.PrivateData[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 232-byte message.
func (m *MRA) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }
