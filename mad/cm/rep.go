package cm

import "github.com/ibscript/ibscript/mad"

// REP rows: rdmacm-abi.md section 10.2, "REP (0x0013)" (IBA vol. 1
// chapter 12, CM message REP); bits from the start of the CM message
// (MAD byte 24).
var (
	repLocalCommID         = mad.Field{Name: "LocalCommID", LuaKey: "local_comm_id", Bit: 0, Width: 32, Kind: mad.Hex}
	repRemoteCommID        = mad.Field{Name: "RemoteCommID", LuaKey: "remote_comm_id", Bit: 32, Width: 32, Kind: mad.Hex}
	repLocalQKey           = mad.Field{Name: "LocalQKey", LuaKey: "local_q_key", Bit: 64, Width: 32, Kind: mad.Hex}
	repLocalQPN            = mad.Field{Name: "LocalQPN", LuaKey: "local_qp_n", Bit: 96, Width: 24, Kind: mad.Hex}
	repLocalEECN           = mad.Field{Name: "LocalEECN", LuaKey: "local_eecn", Bit: 128, Width: 24, Kind: mad.Hex}
	repStartingPSN         = mad.Field{Name: "StartingPSN", LuaKey: "starting_psn", Bit: 160, Width: 24, Kind: mad.Hex}
	repResponderResources  = mad.Field{Name: "ResponderResources", LuaKey: "responder_resources", Bit: 192, Width: 8}
	repInitiatorDepth      = mad.Field{Name: "InitiatorDepth", LuaKey: "initiator_depth", Bit: 200, Width: 8}
	repTargetACKDelay      = mad.Field{Name: "TargetACKDelay", LuaKey: "target_ack_delay", Bit: 208, Width: 5}
	repFailoverAccepted    = mad.Field{Name: "FailoverAccepted", LuaKey: "failover_accepted", Bit: 213, Width: 2}
	repEndToEndFlowControl = mad.Field{Name: "EndToEndFlowControl", LuaKey: "end_to_end_flow_control", Bit: 215, Width: 1}
	repRNRRetryCount       = mad.Field{Name: "RNRRetryCount", LuaKey: "rnr_retry_count", Bit: 216, Width: 3}
	repSRQ                 = mad.Field{Name: "SRQ", LuaKey: "srq", Bit: 219, Width: 1}
	repLocalCAGUID         = mad.Field{Name: "LocalCAGUID", LuaKey: "local_caguid", Bit: 224, Width: 64, Kind: mad.Hex}
	repPrivateData         = mad.Field{Name: "PrivateData", LuaKey: "private_data", Bit: 288, Width: 1568, Kind: mad.Bytes}
)

// REPLayout is the REP message (0x0013, 232 bytes).
var REPLayout = mad.Layout{
	Name:   "REP",
	ID:     AttrREP,
	Size:   MsgSize,
	Fields: []mad.Field{repLocalCommID, repRemoteCommID, repLocalQKey, repLocalQPN, repLocalEECN, repStartingPSN, repResponderResources, repInitiatorDepth, repTargetACKDelay, repFailoverAccepted, repEndToEndFlowControl, repRNRRetryCount, repSRQ, repLocalCAGUID, repPrivateData},
}

// REP is the CM REP message (attribute 0x0013).
type REP struct {
	LocalCommID         uint32
	RemoteCommID        uint32
	LocalQKey           uint32
	LocalQPN            uint32
	LocalEECN           uint32
	StartingPSN         uint32
	ResponderResources  uint8
	InitiatorDepth      uint8
	TargetACKDelay      uint8
	FailoverAccepted    uint8
	EndToEndFlowControl uint8
	RNRRetryCount       uint8
	SRQ                 uint8
	LocalCAGUID         uint64
	PrivateData         [196]byte
}

// UnmarshalBinary decodes m from the first 232 bytes of b (the MAD from
// byte 24) without allocating; a shorter b is an error wrapping
// mad.ErrTruncated.
func (m *REP) UnmarshalBinary(b []byte) error {
	if err := REPLayout.Check(b); err != nil {
		return err
	}
	m.LocalCommID = uint32(repLocalCommID.Get(b))
	m.RemoteCommID = uint32(repRemoteCommID.Get(b))
	m.LocalQKey = uint32(repLocalQKey.Get(b))
	m.LocalQPN = uint32(repLocalQPN.Get(b))
	m.LocalEECN = uint32(repLocalEECN.Get(b))
	m.StartingPSN = uint32(repStartingPSN.Get(b))
	m.ResponderResources = uint8(repResponderResources.Get(b))
	m.InitiatorDepth = uint8(repInitiatorDepth.Get(b))
	m.TargetACKDelay = uint8(repTargetACKDelay.Get(b))
	m.FailoverAccepted = uint8(repFailoverAccepted.Get(b))
	m.EndToEndFlowControl = uint8(repEndToEndFlowControl.Get(b))
	m.RNRRetryCount = uint8(repRNRRetryCount.Get(b))
	m.SRQ = uint8(repSRQ.Get(b))
	m.LocalCAGUID = uint64(repLocalCAGUID.Get(b))
	copy(m.PrivateData[:], repPrivateData.Slice(b))
	return nil
}

// AppendBinary appends the 232-byte message to b. A value too wide for its
// field is an error wrapping mad.ErrRange, and b is returned unchanged.
func (m *REP) AppendBinary(b []byte) ([]byte, error) {
	all, d := REPLayout.Append(b)
	w := mad.Writer{Layout: &REPLayout, B: d}
	w.Uint(repLocalCommID, uint64(m.LocalCommID))
	w.Uint(repRemoteCommID, uint64(m.RemoteCommID))
	w.Uint(repLocalQKey, uint64(m.LocalQKey))
	w.Uint(repLocalQPN, uint64(m.LocalQPN))
	w.Uint(repLocalEECN, uint64(m.LocalEECN))
	w.Uint(repStartingPSN, uint64(m.StartingPSN))
	w.Uint(repResponderResources, uint64(m.ResponderResources))
	w.Uint(repInitiatorDepth, uint64(m.InitiatorDepth))
	w.Uint(repTargetACKDelay, uint64(m.TargetACKDelay))
	w.Uint(repFailoverAccepted, uint64(m.FailoverAccepted))
	w.Uint(repEndToEndFlowControl, uint64(m.EndToEndFlowControl))
	w.Uint(repRNRRetryCount, uint64(m.RNRRetryCount))
	w.Uint(repSRQ, uint64(m.SRQ))
	w.Uint(repLocalCAGUID, uint64(m.LocalCAGUID))
	w.Bytes(repPrivateData, m.PrivateData[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 232-byte message.
func (m *REP) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }
