package cm

import "github.com/ibscript/ibscript/mad"

// DREQ rows: rdmacm-abi.md section 10.2, "DREQ (0x0015)" (IBA vol. 1
// chapter 12, CM message DREQ); bits from the start of the CM message
// (MAD byte 24).
var (
	dreqLocalCommID  = mad.Field{Name: "LocalCommID", LuaKey: "local_comm_id", Bit: 0, Width: 32, Kind: mad.Hex}
	dreqRemoteCommID = mad.Field{Name: "RemoteCommID", LuaKey: "remote_comm_id", Bit: 32, Width: 32, Kind: mad.Hex}
	dreqRemoteQPN    = mad.Field{Name: "RemoteQPN", LuaKey: "remote_qp_n", Bit: 64, Width: 24, Kind: mad.Hex}
	dreqPrivateData  = mad.Field{Name: "PrivateData", LuaKey: "private_data", Bit: 96, Width: 1760, Kind: mad.Bytes}
)

// DREQLayout is the DREQ message (0x0015, 232 bytes).
var DREQLayout = mad.Layout{
	Name:   "DREQ",
	ID:     AttrDREQ,
	Size:   MsgSize,
	Fields: []mad.Field{dreqLocalCommID, dreqRemoteCommID, dreqRemoteQPN, dreqPrivateData},
}

// DREQ is the CM DREQ message (attribute 0x0015).
type DREQ struct {
	LocalCommID  uint32
	RemoteCommID uint32
	RemoteQPN    uint32
	PrivateData  [220]byte
}

// UnmarshalBinary decodes m from the first 232 bytes of b (the MAD from
// byte 24) without allocating; a shorter b is an error wrapping
// mad.ErrTruncated.
func (m *DREQ) UnmarshalBinary(b []byte) error {
	if err := DREQLayout.Check(b); err != nil {
		return err
	}
	m.LocalCommID = uint32(dreqLocalCommID.Get(b))
	m.RemoteCommID = uint32(dreqRemoteCommID.Get(b))
	m.RemoteQPN = uint32(dreqRemoteQPN.Get(b))
	copy(m.PrivateData[:], dreqPrivateData.Slice(b))
	return nil
}

// AppendBinary appends the 232-byte message to b. A value too wide for its
// field is an error wrapping mad.ErrRange, and b is returned unchanged.
func (m *DREQ) AppendBinary(b []byte) ([]byte, error) {
	all, d := DREQLayout.Append(b)
	w := mad.Writer{Layout: &DREQLayout, B: d}
	w.Uint(dreqLocalCommID, uint64(m.LocalCommID))
	w.Uint(dreqRemoteCommID, uint64(m.RemoteCommID))
	w.Uint(dreqRemoteQPN, uint64(m.RemoteQPN))
	w.Bytes(dreqPrivateData, m.PrivateData[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 232-byte message.
func (m *DREQ) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }
