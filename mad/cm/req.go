package cm

import "github.com/ibscript/ibscript/mad"

// REQ rows: rdmacm-abi.md section 10.2, "REQ (0x0010)" (IBA vol. 1
// chapter 12, CM message REQ); bits from the start of the CM message
// (MAD byte 24).
var (
	reqLocalCommID              = mad.Field{Name: "LocalCommID", LuaKey: "local_comm_id", Bit: 0, Width: 32, Kind: mad.Hex}
	reqVendorID                 = mad.Field{Name: "VendorID", LuaKey: "vendor_id", Bit: 40, Width: 24, Kind: mad.Hex}
	reqServiceID                = mad.Field{Name: "ServiceID", LuaKey: "service_id", Bit: 64, Width: 64, Kind: mad.Hex}
	reqLocalCAGUID              = mad.Field{Name: "LocalCAGUID", LuaKey: "local_caguid", Bit: 128, Width: 64, Kind: mad.Hex}
	reqLocalQKey                = mad.Field{Name: "LocalQKey", LuaKey: "local_q_key", Bit: 224, Width: 32, Kind: mad.Hex}
	reqLocalQPN                 = mad.Field{Name: "LocalQPN", LuaKey: "local_qp_n", Bit: 256, Width: 24, Kind: mad.Hex}
	reqResponderResources       = mad.Field{Name: "ResponderResources", LuaKey: "responder_resources", Bit: 280, Width: 8}
	reqLocalEECN                = mad.Field{Name: "LocalEECN", LuaKey: "local_eecn", Bit: 288, Width: 24, Kind: mad.Hex}
	reqInitiatorDepth           = mad.Field{Name: "InitiatorDepth", LuaKey: "initiator_depth", Bit: 312, Width: 8}
	reqRemoteEECN               = mad.Field{Name: "RemoteEECN", LuaKey: "remote_eecn", Bit: 320, Width: 24, Kind: mad.Hex}
	reqRemoteCMResponseTimeout  = mad.Field{Name: "RemoteCMResponseTimeout", LuaKey: "remote_cm_response_timeout", Bit: 344, Width: 5}
	reqTransportServiceType     = mad.Field{Name: "TransportServiceType", LuaKey: "transport_service_type", Bit: 349, Width: 2}
	reqEndToEndFlowControl      = mad.Field{Name: "EndToEndFlowControl", LuaKey: "end_to_end_flow_control", Bit: 351, Width: 1}
	reqStartingPSN              = mad.Field{Name: "StartingPSN", LuaKey: "starting_psn", Bit: 352, Width: 24, Kind: mad.Hex}
	reqLocalCMResponseTimeout   = mad.Field{Name: "LocalCMResponseTimeout", LuaKey: "local_cm_response_timeout", Bit: 376, Width: 5}
	reqRetryCount               = mad.Field{Name: "RetryCount", LuaKey: "retry_count", Bit: 381, Width: 3}
	reqPKey                     = mad.Field{Name: "PartitionKey", LuaKey: "partition_key", Bit: 384, Width: 16, Kind: mad.Hex}
	reqPathMTU                  = mad.Field{Name: "PathMTU", LuaKey: "path_mtu", Bit: 400, Width: 4}
	reqRDCExists                = mad.Field{Name: "RDCExists", LuaKey: "rdc_exists", Bit: 404, Width: 1}
	reqRNRRetryCount            = mad.Field{Name: "RNRRetryCount", LuaKey: "rnr_retry_count", Bit: 405, Width: 3}
	reqMaxCMRetries             = mad.Field{Name: "MaxCMRetries", LuaKey: "max_cm_retries", Bit: 408, Width: 4}
	reqSRQ                      = mad.Field{Name: "SRQ", LuaKey: "srq", Bit: 412, Width: 1}
	reqExtendedTransportType    = mad.Field{Name: "ExtendedTransportType", LuaKey: "extended_transport_type", Bit: 413, Width: 3}
	reqPrimaryLocalLID          = mad.Field{Name: "PrimaryLocalLID", LuaKey: "primary_local_lid", Bit: 416, Width: 16}
	reqPrimaryRemoteLID         = mad.Field{Name: "PrimaryRemoteLID", LuaKey: "primary_remote_lid", Bit: 432, Width: 16}
	reqPrimaryLocalGID          = mad.Field{Name: "PrimaryLocalGID", LuaKey: "primary_local_gid", Bit: 448, Width: 128, Kind: mad.Bytes}
	reqPrimaryRemoteGID         = mad.Field{Name: "PrimaryRemoteGID", LuaKey: "primary_remote_gid", Bit: 576, Width: 128, Kind: mad.Bytes}
	reqPrimaryFlowLabel         = mad.Field{Name: "PrimaryFlowLabel", LuaKey: "primary_flow_label", Bit: 704, Width: 20, Kind: mad.Hex}
	reqPrimaryPacketRate        = mad.Field{Name: "PrimaryPacketRate", LuaKey: "primary_packet_rate", Bit: 730, Width: 6}
	reqPrimaryTrafficClass      = mad.Field{Name: "PrimaryTrafficClass", LuaKey: "primary_traffic_class", Bit: 736, Width: 8}
	reqPrimaryHopLimit          = mad.Field{Name: "PrimaryHopLimit", LuaKey: "primary_hop_limit", Bit: 744, Width: 8}
	reqPrimarySL                = mad.Field{Name: "PrimarySL", LuaKey: "primary_sl", Bit: 752, Width: 4}
	reqPrimarySubnetLocal       = mad.Field{Name: "PrimarySubnetLocal", LuaKey: "primary_subnet_local", Bit: 756, Width: 1}
	reqPrimaryLocalACKTimeout   = mad.Field{Name: "PrimaryLocalACKTimeout", LuaKey: "primary_local_ack_timeout", Bit: 760, Width: 5}
	reqAlternateLocalLID        = mad.Field{Name: "AlternateLocalLID", LuaKey: "alternate_local_lid", Bit: 768, Width: 16}
	reqAlternateRemoteLID       = mad.Field{Name: "AlternateRemoteLID", LuaKey: "alternate_remote_lid", Bit: 784, Width: 16}
	reqAlternateLocalGID        = mad.Field{Name: "AlternateLocalGID", LuaKey: "alternate_local_gid", Bit: 800, Width: 128, Kind: mad.Bytes}
	reqAlternateRemoteGID       = mad.Field{Name: "AlternateRemoteGID", LuaKey: "alternate_remote_gid", Bit: 928, Width: 128, Kind: mad.Bytes}
	reqAlternateFlowLabel       = mad.Field{Name: "AlternateFlowLabel", LuaKey: "alternate_flow_label", Bit: 1056, Width: 20, Kind: mad.Hex}
	reqAlternatePacketRate      = mad.Field{Name: "AlternatePacketRate", LuaKey: "alternate_packet_rate", Bit: 1082, Width: 6}
	reqAlternateTrafficClass    = mad.Field{Name: "AlternateTrafficClass", LuaKey: "alternate_traffic_class", Bit: 1088, Width: 8}
	reqAlternateHopLimit        = mad.Field{Name: "AlternateHopLimit", LuaKey: "alternate_hop_limit", Bit: 1096, Width: 8}
	reqAlternateSL              = mad.Field{Name: "AlternateSL", LuaKey: "alternate_sl", Bit: 1104, Width: 4}
	reqAlternateSubnetLocal     = mad.Field{Name: "AlternateSubnetLocal", LuaKey: "alternate_subnet_local", Bit: 1108, Width: 1}
	reqAlternateLocalACKTimeout = mad.Field{Name: "AlternateLocalACKTimeout", LuaKey: "alternate_local_ack_timeout", Bit: 1112, Width: 5}
	reqSAPSupported             = mad.Field{Name: "SAPSupported", LuaKey: "sap_supported", Bit: 1117, Width: 1}
	reqPrivateData              = mad.Field{Name: "PrivateData", LuaKey: "private_data", Bit: 1120, Width: 736, Kind: mad.Bytes}
)

// REQLayout is the REQ message (0x0010, 232 bytes).
var REQLayout = mad.Layout{
	Name:   "REQ",
	ID:     AttrREQ,
	Size:   MsgSize,
	Fields: []mad.Field{reqLocalCommID, reqVendorID, reqServiceID, reqLocalCAGUID, reqLocalQKey, reqLocalQPN, reqResponderResources, reqLocalEECN, reqInitiatorDepth, reqRemoteEECN, reqRemoteCMResponseTimeout, reqTransportServiceType, reqEndToEndFlowControl, reqStartingPSN, reqLocalCMResponseTimeout, reqRetryCount, reqPKey, reqPathMTU, reqRDCExists, reqRNRRetryCount, reqMaxCMRetries, reqSRQ, reqExtendedTransportType, reqPrimaryLocalLID, reqPrimaryRemoteLID, reqPrimaryLocalGID, reqPrimaryRemoteGID, reqPrimaryFlowLabel, reqPrimaryPacketRate, reqPrimaryTrafficClass, reqPrimaryHopLimit, reqPrimarySL, reqPrimarySubnetLocal, reqPrimaryLocalACKTimeout, reqAlternateLocalLID, reqAlternateRemoteLID, reqAlternateLocalGID, reqAlternateRemoteGID, reqAlternateFlowLabel, reqAlternatePacketRate, reqAlternateTrafficClass, reqAlternateHopLimit, reqAlternateSL, reqAlternateSubnetLocal, reqAlternateLocalACKTimeout, reqSAPSupported, reqPrivateData},
}

// REQ is the CM REQ message (attribute 0x0010).
type REQ struct {
	LocalCommID              uint32
	VendorID                 uint32
	ServiceID                uint64
	LocalCAGUID              uint64
	LocalQKey                uint32
	LocalQPN                 uint32
	ResponderResources       uint8
	LocalEECN                uint32
	InitiatorDepth           uint8
	RemoteEECN               uint32
	RemoteCMResponseTimeout  uint8
	TransportServiceType     uint8
	EndToEndFlowControl      uint8
	StartingPSN              uint32
	LocalCMResponseTimeout   uint8
	RetryCount               uint8
	PKey                     uint16
	PathMTU                  uint8
	RDCExists                uint8
	RNRRetryCount            uint8
	MaxCMRetries             uint8
	SRQ                      uint8
	ExtendedTransportType    uint8
	PrimaryLocalLID          uint16
	PrimaryRemoteLID         uint16
	PrimaryLocalGID          [16]byte
	PrimaryRemoteGID         [16]byte
	PrimaryFlowLabel         uint32
	PrimaryPacketRate        uint8
	PrimaryTrafficClass      uint8
	PrimaryHopLimit          uint8
	PrimarySL                uint8
	PrimarySubnetLocal       uint8
	PrimaryLocalACKTimeout   uint8
	AlternateLocalLID        uint16
	AlternateRemoteLID       uint16
	AlternateLocalGID        [16]byte
	AlternateRemoteGID       [16]byte
	AlternateFlowLabel       uint32
	AlternatePacketRate      uint8
	AlternateTrafficClass    uint8
	AlternateHopLimit        uint8
	AlternateSL              uint8
	AlternateSubnetLocal     uint8
	AlternateLocalACKTimeout uint8
	SAPSupported             uint8
	PrivateData              [92]byte
}

// UnmarshalBinary decodes m from the first 232 bytes of b (the MAD from
// byte 24) without allocating; a shorter b is an error wrapping
// mad.ErrTruncated.
func (m *REQ) UnmarshalBinary(b []byte) error {
	if err := REQLayout.Check(b); err != nil {
		return err
	}
	m.LocalCommID = uint32(reqLocalCommID.Get(b))
	m.VendorID = uint32(reqVendorID.Get(b))
	m.ServiceID = uint64(reqServiceID.Get(b))
	m.LocalCAGUID = uint64(reqLocalCAGUID.Get(b))
	m.LocalQKey = uint32(reqLocalQKey.Get(b))
	m.LocalQPN = uint32(reqLocalQPN.Get(b))
	m.ResponderResources = uint8(reqResponderResources.Get(b))
	m.LocalEECN = uint32(reqLocalEECN.Get(b))
	m.InitiatorDepth = uint8(reqInitiatorDepth.Get(b))
	m.RemoteEECN = uint32(reqRemoteEECN.Get(b))
	m.RemoteCMResponseTimeout = uint8(reqRemoteCMResponseTimeout.Get(b))
	m.TransportServiceType = uint8(reqTransportServiceType.Get(b))
	m.EndToEndFlowControl = uint8(reqEndToEndFlowControl.Get(b))
	m.StartingPSN = uint32(reqStartingPSN.Get(b))
	m.LocalCMResponseTimeout = uint8(reqLocalCMResponseTimeout.Get(b))
	m.RetryCount = uint8(reqRetryCount.Get(b))
	m.PKey = uint16(reqPKey.Get(b))
	m.PathMTU = uint8(reqPathMTU.Get(b))
	m.RDCExists = uint8(reqRDCExists.Get(b))
	m.RNRRetryCount = uint8(reqRNRRetryCount.Get(b))
	m.MaxCMRetries = uint8(reqMaxCMRetries.Get(b))
	m.SRQ = uint8(reqSRQ.Get(b))
	m.ExtendedTransportType = uint8(reqExtendedTransportType.Get(b))
	m.PrimaryLocalLID = uint16(reqPrimaryLocalLID.Get(b))
	m.PrimaryRemoteLID = uint16(reqPrimaryRemoteLID.Get(b))
	copy(m.PrimaryLocalGID[:], reqPrimaryLocalGID.Slice(b))
	copy(m.PrimaryRemoteGID[:], reqPrimaryRemoteGID.Slice(b))
	m.PrimaryFlowLabel = uint32(reqPrimaryFlowLabel.Get(b))
	m.PrimaryPacketRate = uint8(reqPrimaryPacketRate.Get(b))
	m.PrimaryTrafficClass = uint8(reqPrimaryTrafficClass.Get(b))
	m.PrimaryHopLimit = uint8(reqPrimaryHopLimit.Get(b))
	m.PrimarySL = uint8(reqPrimarySL.Get(b))
	m.PrimarySubnetLocal = uint8(reqPrimarySubnetLocal.Get(b))
	m.PrimaryLocalACKTimeout = uint8(reqPrimaryLocalACKTimeout.Get(b))
	m.AlternateLocalLID = uint16(reqAlternateLocalLID.Get(b))
	m.AlternateRemoteLID = uint16(reqAlternateRemoteLID.Get(b))
	copy(m.AlternateLocalGID[:], reqAlternateLocalGID.Slice(b))
	copy(m.AlternateRemoteGID[:], reqAlternateRemoteGID.Slice(b))
	m.AlternateFlowLabel = uint32(reqAlternateFlowLabel.Get(b))
	m.AlternatePacketRate = uint8(reqAlternatePacketRate.Get(b))
	m.AlternateTrafficClass = uint8(reqAlternateTrafficClass.Get(b))
	m.AlternateHopLimit = uint8(reqAlternateHopLimit.Get(b))
	m.AlternateSL = uint8(reqAlternateSL.Get(b))
	m.AlternateSubnetLocal = uint8(reqAlternateSubnetLocal.Get(b))
	m.AlternateLocalACKTimeout = uint8(reqAlternateLocalACKTimeout.Get(b))
	m.SAPSupported = uint8(reqSAPSupported.Get(b))
	copy(m.PrivateData[:], reqPrivateData.Slice(b))
	return nil
}

// AppendBinary appends the 232-byte message to b. A value too wide for its
// field is an error wrapping mad.ErrRange, and b is returned unchanged.
func (m *REQ) AppendBinary(b []byte) ([]byte, error) {
	all, d := REQLayout.Append(b)
	w := mad.Writer{Layout: &REQLayout, B: d}
	w.Uint(reqLocalCommID, uint64(m.LocalCommID))
	w.Uint(reqVendorID, uint64(m.VendorID))
	w.Uint(reqServiceID, uint64(m.ServiceID))
	w.Uint(reqLocalCAGUID, uint64(m.LocalCAGUID))
	w.Uint(reqLocalQKey, uint64(m.LocalQKey))
	w.Uint(reqLocalQPN, uint64(m.LocalQPN))
	w.Uint(reqResponderResources, uint64(m.ResponderResources))
	w.Uint(reqLocalEECN, uint64(m.LocalEECN))
	w.Uint(reqInitiatorDepth, uint64(m.InitiatorDepth))
	w.Uint(reqRemoteEECN, uint64(m.RemoteEECN))
	w.Uint(reqRemoteCMResponseTimeout, uint64(m.RemoteCMResponseTimeout))
	w.Uint(reqTransportServiceType, uint64(m.TransportServiceType))
	w.Uint(reqEndToEndFlowControl, uint64(m.EndToEndFlowControl))
	w.Uint(reqStartingPSN, uint64(m.StartingPSN))
	w.Uint(reqLocalCMResponseTimeout, uint64(m.LocalCMResponseTimeout))
	w.Uint(reqRetryCount, uint64(m.RetryCount))
	w.Uint(reqPKey, uint64(m.PKey))
	w.Uint(reqPathMTU, uint64(m.PathMTU))
	w.Uint(reqRDCExists, uint64(m.RDCExists))
	w.Uint(reqRNRRetryCount, uint64(m.RNRRetryCount))
	w.Uint(reqMaxCMRetries, uint64(m.MaxCMRetries))
	w.Uint(reqSRQ, uint64(m.SRQ))
	w.Uint(reqExtendedTransportType, uint64(m.ExtendedTransportType))
	w.Uint(reqPrimaryLocalLID, uint64(m.PrimaryLocalLID))
	w.Uint(reqPrimaryRemoteLID, uint64(m.PrimaryRemoteLID))
	w.Bytes(reqPrimaryLocalGID, m.PrimaryLocalGID[:])
	w.Bytes(reqPrimaryRemoteGID, m.PrimaryRemoteGID[:])
	w.Uint(reqPrimaryFlowLabel, uint64(m.PrimaryFlowLabel))
	w.Uint(reqPrimaryPacketRate, uint64(m.PrimaryPacketRate))
	w.Uint(reqPrimaryTrafficClass, uint64(m.PrimaryTrafficClass))
	w.Uint(reqPrimaryHopLimit, uint64(m.PrimaryHopLimit))
	w.Uint(reqPrimarySL, uint64(m.PrimarySL))
	w.Uint(reqPrimarySubnetLocal, uint64(m.PrimarySubnetLocal))
	w.Uint(reqPrimaryLocalACKTimeout, uint64(m.PrimaryLocalACKTimeout))
	w.Uint(reqAlternateLocalLID, uint64(m.AlternateLocalLID))
	w.Uint(reqAlternateRemoteLID, uint64(m.AlternateRemoteLID))
	w.Bytes(reqAlternateLocalGID, m.AlternateLocalGID[:])
	w.Bytes(reqAlternateRemoteGID, m.AlternateRemoteGID[:])
	w.Uint(reqAlternateFlowLabel, uint64(m.AlternateFlowLabel))
	w.Uint(reqAlternatePacketRate, uint64(m.AlternatePacketRate))
	w.Uint(reqAlternateTrafficClass, uint64(m.AlternateTrafficClass))
	w.Uint(reqAlternateHopLimit, uint64(m.AlternateHopLimit))
	w.Uint(reqAlternateSL, uint64(m.AlternateSL))
	w.Uint(reqAlternateSubnetLocal, uint64(m.AlternateSubnetLocal))
	w.Uint(reqAlternateLocalACKTimeout, uint64(m.AlternateLocalACKTimeout))
	w.Uint(reqSAPSupported, uint64(m.SAPSupported))
	w.Bytes(reqPrivateData, m.PrivateData[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 232-byte message.
func (m *REQ) MarshalBinary() ([]byte, error) { return m.AppendBinary(nil) }
