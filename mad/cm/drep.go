package cm

import "github.com/ibscript/ibscript/mad"

// DREP rows: rdmacm-abi.md section 10.2, "DREP (0x0016)" (IBA vol. 1
// chapter 12, CM message DREP); bits from the start of the CM message
// (MAD byte 24).
var (
	drepLocalCommID  = mad.Field{Name: "LocalCommID", LuaKey: "local_comm_id", Bit: 0, Width: 32, Kind: mad.Hex}
	drepRemoteCommID = mad.Field{Name: "RemoteCommID", LuaKey: "remote_comm_id", Bit: 32, Width: 32, Kind: mad.Hex}
	drepPrivateData  = mad.Field{Name: "PrivateData", LuaKey: "private_data", Bit: 64, Width: 1792, Kind: mad.Bytes}
)

// DREPLayout is the DREP message (0x0016, 232 bytes).
var DREPLayout = mad.Layout{
	Name:   "DREP",
	ID:     AttrDREP,
	Size:   MsgSize,
	Fields: []mad.Field{drepLocalCommID, drepRemoteCommID, drepPrivateData},
}

// DREP is the CM DREP message (attribute 0x0016).
type DREP struct {
	LocalCommID  uint32
	RemoteCommID uint32
	PrivateData  [224]byte
}

// UnmarshalBinary decodes m from the first 232 bytes of b (the MAD from
// byte 24) without allocating; a shorter b is an error wrapping
// mad.ErrTruncated.
func (m *DREP) UnmarshalBinary(b []byte) error {
	if err := DREPLayout.Check(b); err != nil {
		return err
	}
	m.LocalCommID = uint32(drepLocalCommID.Get(b))
	m.RemoteCommID = uint32(drepRemoteCommID.Get(b))
	copy(m.PrivateData[:], drepPrivateData.Slice(b))
	return nil
}

// AppendBinary appends the 232-byte message to b. A value too wide for its
// field is an error wrapping mad.ErrRange, and b is returned unchanged.
func (m *DREP) AppendBinary(b []byte) ([]byte, error) {
	all, d := DREPLayout.Append(b)
	w := mad.Writer{Layout: &DREPLayout, B: d}
	w.Uint(drepLocalCommID, uint64(m.LocalCommID))
	w.Uint(drepRemoteCommID, uint64(m.RemoteCommID))
	w.Bytes(drepPrivateData, m.PrivateData[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 232-byte message.
func (m *DREP) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }
