package smp

import "github.com/ibscript/ibscript/mad"

// PortInfo rows: mad-formats.md section 7, "PortInfo (0x0015), 64 bytes"
// (IBA vol. 1 table "PortInfo"), every field but the reserved ones.
var (
	piMKey                         = mad.Field{Name: "M_Key", Bit: 0, Width: 64, Kind: mad.Hex}
	piGIDPrefix                    = mad.Field{Name: "GidPrefix", Bit: 64, Width: 64, Kind: mad.Hex}
	piLID                          = mad.Field{Name: "LID", Bit: 128, Width: 16}
	piMasterSMLID                  = mad.Field{Name: "MasterSMLID", Bit: 144, Width: 16}
	piCapabilityMask               = mad.Field{Name: "CapabilityMask", Bit: 160, Width: 32, Kind: mad.Hex}
	piDiagCode                     = mad.Field{Name: "DiagCode", Bit: 192, Width: 16, Kind: mad.Hex}
	piMKeyLeasePeriod              = mad.Field{Name: "M_KeyLeasePeriod", Bit: 208, Width: 16}
	piLocalPortNum                 = mad.Field{Name: "LocalPortNum", Bit: 224, Width: 8}
	piLinkWidthEnabled             = mad.Field{Name: "LinkWidthEnabled", Bit: 232, Width: 8, Kind: mad.Hex}
	piLinkWidthSupported           = mad.Field{Name: "LinkWidthSupported", Bit: 240, Width: 8, Kind: mad.Hex}
	piLinkWidthActive              = mad.Field{Name: "LinkWidthActive", Bit: 248, Width: 8, Kind: mad.Hex}
	piLinkSpeedSupported           = mad.Field{Name: "LinkSpeedSupported", Bit: 256, Width: 4, Kind: mad.Hex}
	piPortState                    = mad.Field{Name: "PortState", Bit: 260, Width: 4}
	piPortPhysicalState            = mad.Field{Name: "PortPhysicalState", Bit: 264, Width: 4}
	piLinkDownDefaultState         = mad.Field{Name: "LinkDownDefaultState", Bit: 268, Width: 4}
	piMKeyProtectBits              = mad.Field{Name: "M_KeyProtectBits", Bit: 272, Width: 2}
	piLMC                          = mad.Field{Name: "LMC", Bit: 277, Width: 3}
	piLinkSpeedActive              = mad.Field{Name: "LinkSpeedActive", Bit: 280, Width: 4, Kind: mad.Hex}
	piLinkSpeedEnabled             = mad.Field{Name: "LinkSpeedEnabled", Bit: 284, Width: 4, Kind: mad.Hex}
	piNeighborMTU                  = mad.Field{Name: "NeighborMTU", Bit: 288, Width: 4}
	piMasterSMSL                   = mad.Field{Name: "MasterSMSL", Bit: 292, Width: 4}
	piVLCap                        = mad.Field{Name: "VLCap", Bit: 296, Width: 4}
	piInitType                     = mad.Field{Name: "InitType", Bit: 300, Width: 4, Kind: mad.Hex}
	piVLHighLimit                  = mad.Field{Name: "VLHighLimit", Bit: 304, Width: 8}
	piVLArbitrationHighCap         = mad.Field{Name: "VLArbitrationHighCap", Bit: 312, Width: 8}
	piVLArbitrationLowCap          = mad.Field{Name: "VLArbitrationLowCap", Bit: 320, Width: 8}
	piInitTypeReply                = mad.Field{Name: "InitTypeReply", Bit: 328, Width: 4, Kind: mad.Hex}
	piMTUCap                       = mad.Field{Name: "MTUCap", Bit: 332, Width: 4}
	piVLStallCount                 = mad.Field{Name: "VLStallCount", Bit: 336, Width: 3}
	piHOQLife                      = mad.Field{Name: "HOQLife", Bit: 339, Width: 5}
	piOperationalVLs               = mad.Field{Name: "OperationalVLs", Bit: 344, Width: 4}
	piPartitionEnforcementInbound  = mad.Field{Name: "PartitionEnforcementInbound", Bit: 348, Width: 1}
	piPartitionEnforcementOutbound = mad.Field{Name: "PartitionEnforcementOutbound", Bit: 349, Width: 1}
	piFilterRawInbound             = mad.Field{Name: "FilterRawInbound", Bit: 350, Width: 1}
	piFilterRawOutbound            = mad.Field{Name: "FilterRawOutbound", Bit: 351, Width: 1}
	piMKeyViolations               = mad.Field{Name: "M_KeyViolations", Bit: 352, Width: 16}
	piPKeyViolations               = mad.Field{Name: "P_KeyViolations", Bit: 368, Width: 16}
	piQKeyViolations               = mad.Field{Name: "Q_KeyViolations", Bit: 384, Width: 16}
	piGUIDCap                      = mad.Field{Name: "GUIDCap", Bit: 400, Width: 8}
	piClientReregister             = mad.Field{Name: "ClientReregister", Bit: 408, Width: 1}
	piMcastPKeyTrapSuppression     = mad.Field{Name: "MulticastPKeyTrapSuppressionEnabled", Bit: 409, Width: 2}
	piSubnetTimeOut                = mad.Field{Name: "SubnetTimeOut", Bit: 411, Width: 5}
	piRespTimeValue                = mad.Field{Name: "RespTimeValue", Bit: 419, Width: 5}
	piLocalPhyErrors               = mad.Field{Name: "LocalPhyErrors", Bit: 424, Width: 4}
	piOverrunErrors                = mad.Field{Name: "OverrunErrors", Bit: 428, Width: 4}
	piMaxCreditHint                = mad.Field{Name: "MaxCreditHint", Bit: 432, Width: 16}
	piLinkSpeedExtActive2          = mad.Field{Name: "LinkSpeedExtActive2", Bit: 449, Width: 2, Kind: mad.Hex}
	piLinkSpeedExtSupported2       = mad.Field{Name: "LinkSpeedExtSupported2", Bit: 451, Width: 2, Kind: mad.Hex}
	piLinkSpeedExtEnabled2         = mad.Field{Name: "LinkSpeedExtEnabled2", Bit: 453, Width: 3, Kind: mad.Hex}
	piLinkRoundTripLatency         = mad.Field{Name: "LinkRoundTripLatency", Bit: 456, Width: 24}
	piCapabilityMask2              = mad.Field{Name: "CapabilityMask2", Bit: 480, Width: 16, Kind: mad.Hex}
	piLinkSpeedExtActive           = mad.Field{Name: "LinkSpeedExtActive", Bit: 496, Width: 4, Kind: mad.Hex}
	piLinkSpeedExtSupported        = mad.Field{Name: "LinkSpeedExtSupported", Bit: 500, Width: 4, Kind: mad.Hex}
	piLinkSpeedExtEnabled          = mad.Field{Name: "LinkSpeedExtEnabled", Bit: 507, Width: 5, Kind: mad.Hex}
)

// PortInfoLayout is the PortInfo attribute (0x0015, 64 bytes).
var PortInfoLayout = mad.Layout{
	Name: "PortInfo",
	ID:   AttrPortInfo,
	Size: 64,
	Fields: []mad.Field{
		piMKey, piGIDPrefix, piLID, piMasterSMLID, piCapabilityMask,
		piDiagCode, piMKeyLeasePeriod, piLocalPortNum, piLinkWidthEnabled,
		piLinkWidthSupported, piLinkWidthActive, piLinkSpeedSupported,
		piPortState, piPortPhysicalState, piLinkDownDefaultState,
		piMKeyProtectBits, piLMC, piLinkSpeedActive, piLinkSpeedEnabled,
		piNeighborMTU, piMasterSMSL, piVLCap, piInitType, piVLHighLimit,
		piVLArbitrationHighCap, piVLArbitrationLowCap, piInitTypeReply,
		piMTUCap, piVLStallCount, piHOQLife, piOperationalVLs,
		piPartitionEnforcementInbound, piPartitionEnforcementOutbound,
		piFilterRawInbound, piFilterRawOutbound, piMKeyViolations,
		piPKeyViolations, piQKeyViolations, piGUIDCap, piClientReregister,
		piMcastPKeyTrapSuppression, piSubnetTimeOut, piRespTimeValue,
		piLocalPhyErrors, piOverrunErrors, piMaxCreditHint,
		piLinkSpeedExtActive2, piLinkSpeedExtSupported2,
		piLinkSpeedExtEnabled2, piLinkRoundTripLatency, piCapabilityMask2,
		piLinkSpeedExtActive, piLinkSpeedExtSupported, piLinkSpeedExtEnabled,
	},
}

// PortInfo is the PortInfo attribute of one port. Width fields are masks
// (1 1x, 2 4x, 4 8x, 8 12x, 16 2x), speed fields masks (1 SDR, 2 DDR,
// 4 QDR), extended speed fields masks (1 FDR, 2 EDR, 4 HDR, 8 NDR); see
// WidthName, SpeedName, ExtSpeedName and LinkText.
type PortInfo struct {
	MKey                                uint64
	GIDPrefix                           uint64
	LID                                 uint16
	MasterSMLID                         uint16
	CapabilityMask                      uint32 // Cap* bits
	DiagCode                            uint16
	MKeyLeasePeriod                     uint16
	LocalPortNum                        uint8
	LinkWidthEnabled                    uint8
	LinkWidthSupported                  uint8
	LinkWidthActive                     uint8
	LinkSpeedSupported                  uint8
	PortState                           uint8 // PortState* values
	PortPhysicalState                   uint8 // PhysState* values
	LinkDownDefaultState                uint8
	MKeyProtectBits                     uint8
	LMC                                 uint8
	LinkSpeedActive                     uint8
	LinkSpeedEnabled                    uint8
	NeighborMTU                         uint8 // 1 256 ... 5 4096, see MTUBytes
	MasterSMSL                          uint8
	VLCap                               uint8
	InitType                            uint8
	VLHighLimit                         uint8
	VLArbitrationHighCap                uint8
	VLArbitrationLowCap                 uint8
	InitTypeReply                       uint8
	MTUCap                              uint8
	VLStallCount                        uint8
	HOQLife                             uint8
	OperationalVLs                      uint8
	PartitionEnforcementInbound         bool
	PartitionEnforcementOutbound        bool
	FilterRawInbound                    bool
	FilterRawOutbound                   bool
	MKeyViolations                      uint16
	PKeyViolations                      uint16
	QKeyViolations                      uint16
	GUIDCap                             uint8
	ClientReregister                    bool
	MulticastPKeyTrapSuppressionEnabled uint8
	SubnetTimeOut                       uint8
	RespTimeValue                       uint8
	LocalPhyErrors                      uint8
	OverrunErrors                       uint8
	MaxCreditHint                       uint16
	LinkSpeedExtActive2                 uint8
	LinkSpeedExtSupported2              uint8
	LinkSpeedExtEnabled2                uint8
	LinkRoundTripLatency                uint32 // 24 bits
	CapabilityMask2                     uint16
	LinkSpeedExtActive                  uint8
	LinkSpeedExtSupported               uint8
	LinkSpeedExtEnabled                 uint8
}

// UnmarshalLink decodes only the fields that place a port and describe
// its link: LID, LMC, CapabilityMask, PortState, PortPhysicalState and
// the enabled and active link widths and speeds (extended speeds too). The
// other fields are left zero. A discovery sweep reads one PortInfo per
// port and needs no more; it is a quarter of the work of UnmarshalBinary.
func (p *PortInfo) UnmarshalLink(b []byte) error {
	if err := PortInfoLayout.Check(b); err != nil {
		return err
	}
	*p = PortInfo{
		LID:                 uint16(piLID.Get(b)),
		LMC:                 uint8(piLMC.Get(b)),
		CapabilityMask:      uint32(piCapabilityMask.Get(b)),
		PortState:           uint8(piPortState.Get(b)),
		PortPhysicalState:   uint8(piPortPhysicalState.Get(b)),
		LinkWidthEnabled:    uint8(piLinkWidthEnabled.Get(b)),
		LinkWidthActive:     uint8(piLinkWidthActive.Get(b)),
		LinkSpeedEnabled:    uint8(piLinkSpeedEnabled.Get(b)),
		LinkSpeedActive:     uint8(piLinkSpeedActive.Get(b)),
		LinkSpeedExtEnabled: uint8(piLinkSpeedExtEnabled.Get(b)),
		LinkSpeedExtActive:  uint8(piLinkSpeedExtActive.Get(b)),
	}
	return nil
}

// UnmarshalBinary decodes p from the first 64 bytes of b without
// allocating. It returns an error wrapping mad.ErrTruncated when b is
// shorter.
func (p *PortInfo) UnmarshalBinary(b []byte) error {
	if err := PortInfoLayout.Check(b); err != nil {
		return err
	}
	p.MKey = piMKey.Get(b)
	p.GIDPrefix = piGIDPrefix.Get(b)
	p.LID = uint16(piLID.Get(b))
	p.MasterSMLID = uint16(piMasterSMLID.Get(b))
	p.CapabilityMask = uint32(piCapabilityMask.Get(b))
	p.DiagCode = uint16(piDiagCode.Get(b))
	p.MKeyLeasePeriod = uint16(piMKeyLeasePeriod.Get(b))
	p.LocalPortNum = uint8(piLocalPortNum.Get(b))
	p.LinkWidthEnabled = uint8(piLinkWidthEnabled.Get(b))
	p.LinkWidthSupported = uint8(piLinkWidthSupported.Get(b))
	p.LinkWidthActive = uint8(piLinkWidthActive.Get(b))
	p.LinkSpeedSupported = uint8(piLinkSpeedSupported.Get(b))
	p.PortState = uint8(piPortState.Get(b))
	p.PortPhysicalState = uint8(piPortPhysicalState.Get(b))
	p.LinkDownDefaultState = uint8(piLinkDownDefaultState.Get(b))
	p.MKeyProtectBits = uint8(piMKeyProtectBits.Get(b))
	p.LMC = uint8(piLMC.Get(b))
	p.LinkSpeedActive = uint8(piLinkSpeedActive.Get(b))
	p.LinkSpeedEnabled = uint8(piLinkSpeedEnabled.Get(b))
	p.NeighborMTU = uint8(piNeighborMTU.Get(b))
	p.MasterSMSL = uint8(piMasterSMSL.Get(b))
	p.VLCap = uint8(piVLCap.Get(b))
	p.InitType = uint8(piInitType.Get(b))
	p.VLHighLimit = uint8(piVLHighLimit.Get(b))
	p.VLArbitrationHighCap = uint8(piVLArbitrationHighCap.Get(b))
	p.VLArbitrationLowCap = uint8(piVLArbitrationLowCap.Get(b))
	p.InitTypeReply = uint8(piInitTypeReply.Get(b))
	p.MTUCap = uint8(piMTUCap.Get(b))
	p.VLStallCount = uint8(piVLStallCount.Get(b))
	p.HOQLife = uint8(piHOQLife.Get(b))
	p.OperationalVLs = uint8(piOperationalVLs.Get(b))
	p.PartitionEnforcementInbound = piPartitionEnforcementInbound.Get(b) != 0
	p.PartitionEnforcementOutbound = piPartitionEnforcementOutbound.Get(b) != 0
	p.FilterRawInbound = piFilterRawInbound.Get(b) != 0
	p.FilterRawOutbound = piFilterRawOutbound.Get(b) != 0
	p.MKeyViolations = uint16(piMKeyViolations.Get(b))
	p.PKeyViolations = uint16(piPKeyViolations.Get(b))
	p.QKeyViolations = uint16(piQKeyViolations.Get(b))
	p.GUIDCap = uint8(piGUIDCap.Get(b))
	p.ClientReregister = piClientReregister.Get(b) != 0
	p.MulticastPKeyTrapSuppressionEnabled = uint8(piMcastPKeyTrapSuppression.Get(b))
	p.SubnetTimeOut = uint8(piSubnetTimeOut.Get(b))
	p.RespTimeValue = uint8(piRespTimeValue.Get(b))
	p.LocalPhyErrors = uint8(piLocalPhyErrors.Get(b))
	p.OverrunErrors = uint8(piOverrunErrors.Get(b))
	p.MaxCreditHint = uint16(piMaxCreditHint.Get(b))
	p.LinkSpeedExtActive2 = uint8(piLinkSpeedExtActive2.Get(b))
	p.LinkSpeedExtSupported2 = uint8(piLinkSpeedExtSupported2.Get(b))
	p.LinkSpeedExtEnabled2 = uint8(piLinkSpeedExtEnabled2.Get(b))
	p.LinkRoundTripLatency = uint32(piLinkRoundTripLatency.Get(b))
	p.CapabilityMask2 = uint16(piCapabilityMask2.Get(b))
	p.LinkSpeedExtActive = uint8(piLinkSpeedExtActive.Get(b))
	p.LinkSpeedExtSupported = uint8(piLinkSpeedExtSupported.Get(b))
	p.LinkSpeedExtEnabled = uint8(piLinkSpeedExtEnabled.Get(b))
	return nil
}

// AppendBinary appends the 64-byte attribute to b, reserved bits zero. It
// returns an error wrapping mad.ErrRange, and b unchanged, when a value does
// not fit its field (a PortState of 17, an LMC of 8).
func (p *PortInfo) AppendBinary(b []byte) ([]byte, error) {
	all, d := PortInfoLayout.Append(b)
	w := mad.Writer{Layout: &PortInfoLayout, B: d}
	w.Uint(piMKey, p.MKey)
	w.Uint(piGIDPrefix, p.GIDPrefix)
	w.Uint(piLID, uint64(p.LID))
	w.Uint(piMasterSMLID, uint64(p.MasterSMLID))
	w.Uint(piCapabilityMask, uint64(p.CapabilityMask))
	w.Uint(piDiagCode, uint64(p.DiagCode))
	w.Uint(piMKeyLeasePeriod, uint64(p.MKeyLeasePeriod))
	w.Uint(piLocalPortNum, uint64(p.LocalPortNum))
	w.Uint(piLinkWidthEnabled, uint64(p.LinkWidthEnabled))
	w.Uint(piLinkWidthSupported, uint64(p.LinkWidthSupported))
	w.Uint(piLinkWidthActive, uint64(p.LinkWidthActive))
	w.Uint(piLinkSpeedSupported, uint64(p.LinkSpeedSupported))
	w.Uint(piPortState, uint64(p.PortState))
	w.Uint(piPortPhysicalState, uint64(p.PortPhysicalState))
	w.Uint(piLinkDownDefaultState, uint64(p.LinkDownDefaultState))
	w.Uint(piMKeyProtectBits, uint64(p.MKeyProtectBits))
	w.Uint(piLMC, uint64(p.LMC))
	w.Uint(piLinkSpeedActive, uint64(p.LinkSpeedActive))
	w.Uint(piLinkSpeedEnabled, uint64(p.LinkSpeedEnabled))
	w.Uint(piNeighborMTU, uint64(p.NeighborMTU))
	w.Uint(piMasterSMSL, uint64(p.MasterSMSL))
	w.Uint(piVLCap, uint64(p.VLCap))
	w.Uint(piInitType, uint64(p.InitType))
	w.Uint(piVLHighLimit, uint64(p.VLHighLimit))
	w.Uint(piVLArbitrationHighCap, uint64(p.VLArbitrationHighCap))
	w.Uint(piVLArbitrationLowCap, uint64(p.VLArbitrationLowCap))
	w.Uint(piInitTypeReply, uint64(p.InitTypeReply))
	w.Uint(piMTUCap, uint64(p.MTUCap))
	w.Uint(piVLStallCount, uint64(p.VLStallCount))
	w.Uint(piHOQLife, uint64(p.HOQLife))
	w.Uint(piOperationalVLs, uint64(p.OperationalVLs))
	w.Bool(piPartitionEnforcementInbound, p.PartitionEnforcementInbound)
	w.Bool(piPartitionEnforcementOutbound, p.PartitionEnforcementOutbound)
	w.Bool(piFilterRawInbound, p.FilterRawInbound)
	w.Bool(piFilterRawOutbound, p.FilterRawOutbound)
	w.Uint(piMKeyViolations, uint64(p.MKeyViolations))
	w.Uint(piPKeyViolations, uint64(p.PKeyViolations))
	w.Uint(piQKeyViolations, uint64(p.QKeyViolations))
	w.Uint(piGUIDCap, uint64(p.GUIDCap))
	w.Bool(piClientReregister, p.ClientReregister)
	w.Uint(piMcastPKeyTrapSuppression, uint64(p.MulticastPKeyTrapSuppressionEnabled))
	w.Uint(piSubnetTimeOut, uint64(p.SubnetTimeOut))
	w.Uint(piRespTimeValue, uint64(p.RespTimeValue))
	w.Uint(piLocalPhyErrors, uint64(p.LocalPhyErrors))
	w.Uint(piOverrunErrors, uint64(p.OverrunErrors))
	w.Uint(piMaxCreditHint, uint64(p.MaxCreditHint))
	w.Uint(piLinkSpeedExtActive2, uint64(p.LinkSpeedExtActive2))
	w.Uint(piLinkSpeedExtSupported2, uint64(p.LinkSpeedExtSupported2))
	w.Uint(piLinkSpeedExtEnabled2, uint64(p.LinkSpeedExtEnabled2))
	w.Uint(piLinkRoundTripLatency, uint64(p.LinkRoundTripLatency))
	w.Uint(piCapabilityMask2, uint64(p.CapabilityMask2))
	w.Uint(piLinkSpeedExtActive, uint64(p.LinkSpeedExtActive))
	w.Uint(piLinkSpeedExtSupported, uint64(p.LinkSpeedExtSupported))
	w.Uint(piLinkSpeedExtEnabled, uint64(p.LinkSpeedExtEnabled))
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 64-byte attribute.
func (p *PortInfo) MarshalBinary() ([]byte, error) { return p.AppendBinary(nil) }

// LinkText is ibnetdiscover's text for the port's active link, e.g. "4xSDR";
// see the package-level LinkText.
func (p *PortInfo) LinkText() string {
	return LinkText(p.LinkWidthActive, p.LinkSpeedActive, p.LinkSpeedExtActive)
}
