package cm

import "github.com/ibscript/ibscript/mad"

// REJ rows: rdmacm-abi.md section 10.2, "REJ (0x0012)" (IBA vol. 1
// chapter 12, CM message REJ); bits from the start of the CM message
// (MAD byte 24).
var (
	rejLocalCommID      = mad.Field{Name: "LocalCommID", LuaKey: "local_comm_id", Bit: 0, Width: 32, Kind: mad.Hex}
	rejRemoteCommID     = mad.Field{Name: "RemoteCommID", LuaKey: "remote_comm_id", Bit: 32, Width: 32, Kind: mad.Hex}
	rejMessageRejected  = mad.Field{Name: "MessageRejected", LuaKey: "message_rejected", Bit: 64, Width: 2}
	rejRejectInfoLength = mad.Field{Name: "RejectInfoLength", LuaKey: "reject_info_length", Bit: 72, Width: 7}
	rejReason           = mad.Field{Name: "Reason", LuaKey: "reason", Bit: 80, Width: 16}
	rejARI              = mad.Field{Name: "ARI", LuaKey: "ari", Bit: 96, Width: 576, Kind: mad.Bytes}
	rejPrivateData      = mad.Field{Name: "PrivateData", LuaKey: "private_data", Bit: 672, Width: 1184, Kind: mad.Bytes}
)

// REJLayout is the REJ message (0x0012, 232 bytes).
var REJLayout = mad.Layout{
	Name:   "REJ",
	ID:     AttrREJ,
	Size:   MsgSize,
	Fields: []mad.Field{rejLocalCommID, rejRemoteCommID, rejMessageRejected, rejRejectInfoLength, rejReason, rejARI, rejPrivateData},
}

// REJ is the CM REJ message (attribute 0x0012).
type REJ struct {
	LocalCommID      uint32
	RemoteCommID     uint32
	MessageRejected  uint8
	RejectInfoLength uint8
	Reason           uint16
	ARI              [72]byte
	PrivateData      [148]byte
}

// UnmarshalBinary decodes m from the first 232 bytes of b (the MAD from
// byte 24) without allocating; a shorter b is an error wrapping
// mad.ErrTruncated.
func (m *REJ) UnmarshalBinary(b []byte) error {
	if err := REJLayout.Check(b); err != nil {
		return err
	}
	m.LocalCommID = uint32(rejLocalCommID.Get(b))
	m.RemoteCommID = uint32(rejRemoteCommID.Get(b))
	m.MessageRejected = uint8(rejMessageRejected.Get(b))
	m.RejectInfoLength = uint8(rejRejectInfoLength.Get(b))
	m.Reason = uint16(rejReason.Get(b))
	copy(m.ARI[:], rejARI.Slice(b))
	copy(m.PrivateData[:], rejPrivateData.Slice(b))
	return nil
}

// AppendBinary appends the 232-byte message to b. A value too wide for its
// field is an error wrapping mad.ErrRange, and b is returned unchanged.
func (m *REJ) AppendBinary(b []byte) ([]byte, error) {
	all, d := REJLayout.Append(b)
	w := mad.Writer{Layout: &REJLayout, B: d}
	w.Uint(rejLocalCommID, uint64(m.LocalCommID))
	w.Uint(rejRemoteCommID, uint64(m.RemoteCommID))
	w.Uint(rejMessageRejected, uint64(m.MessageRejected))
	w.Uint(rejRejectInfoLength, uint64(m.RejectInfoLength))
	w.Uint(rejReason, uint64(m.Reason))
	w.Bytes(rejARI, m.ARI[:])
	w.Bytes(rejPrivateData, m.PrivateData[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 232-byte message.
func (m *REJ) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }
