package smp

import (
	"fmt"
	"strings"
)

// Port states (PortInfo.PortState).
const (
	PortStateNoChange uint8 = 0
	PortStateDown     uint8 = 1
	PortStateInit     uint8 = 2
	PortStateArmed    uint8 = 3
	PortStateActive   uint8 = 4
)

// Physical port states (PortInfo.PortPhysicalState).
const (
	PhysStateNoChange          uint8 = 0
	PhysStateSleep             uint8 = 1
	PhysStatePolling           uint8 = 2
	PhysStateDisabled          uint8 = 3
	PhysStateConfigTraining    uint8 = 4
	PhysStateLinkUp            uint8 = 5
	PhysStateLinkErrorRecovery uint8 = 6
	PhysStatePhyTest           uint8 = 7
)

// PortInfo.CapabilityMask bits (value 1<<bit). Bit 13 is reserved, so from
// bit 14 on these follow IBA, OpenSM's ib_types.h and libibmad (and what
// smpquery prints), not the bit list of mad-formats.md, which is one off.
const (
	CapIsSM                                  uint32 = 1 << 1
	CapIsNoticeSupported                     uint32 = 1 << 2
	CapIsTrapSupported                       uint32 = 1 << 3
	CapIsOptionalIPDSupported                uint32 = 1 << 4
	CapIsAutomaticMigrationSupported         uint32 = 1 << 5
	CapIsSLMappingSupported                  uint32 = 1 << 6
	CapIsMKeyNVRAM                           uint32 = 1 << 7
	CapIsPKeyNVRAM                           uint32 = 1 << 8
	CapIsLEDInfoSupported                    uint32 = 1 << 9
	CapIsSMDisabled                          uint32 = 1 << 10
	CapIsSystemImageGUIDSupported            uint32 = 1 << 11
	CapIsPKeySwitchExternalPortTrapSupported uint32 = 1 << 12
	CapIsExtendedSpeedsSupported             uint32 = 1 << 14
	CapIsCapabilityMask2Supported            uint32 = 1 << 15
	CapIsCommunicationManagementSupported    uint32 = 1 << 16
	CapIsSNMPTunnelingSupported              uint32 = 1 << 17
	CapIsReinitSupported                     uint32 = 1 << 18
	CapIsDeviceManagementSupported           uint32 = 1 << 19
	CapIsVendorClassSupported                uint32 = 1 << 20
	CapIsDRNoticeSupported                   uint32 = 1 << 21
	CapIsCapabilityMaskNoticeSupported       uint32 = 1 << 22
	CapIsBootManagementSupported             uint32 = 1 << 23
	CapIsLinkRoundTripLatencySupported       uint32 = 1 << 24
	CapIsClientReregistrationSupported       uint32 = 1 << 25
	CapIsOtherLocalChangesNoticeSupported    uint32 = 1 << 26
	CapIsLinkSpeedWidthPairsTableSupported   uint32 = 1 << 27
	CapIsVendorSpecificMadsTableSupported    uint32 = 1 << 28
	CapIsMcastPKeyTrapSuppressionSupported   uint32 = 1 << 29
	CapIsMulticastFDBTopSupported            uint32 = 1 << 30
	CapIsHierarchyInfoSupported              uint32 = 1 << 31
)

func undefined(v uint8) string { return fmt.Sprintf("undefined (%d)", v) }

// NodeTypeName names a NodeInfo.NodeType as smpquery does: "Channel
// Adapter", "Switch", "Router".
func NodeTypeName(t uint8) string {
	switch t {
	case NodeTypeCA:
		return "Channel Adapter"
	case NodeTypeSwitch:
		return "Switch"
	case NodeTypeRouter:
		return "Router"
	}
	return undefined(t)
}

// PortStateName names a PortInfo.PortState: "NoChange", "Down",
// "Initialize", "Armed", "Active".
func PortStateName(s uint8) string {
	switch s {
	case PortStateNoChange:
		return "NoChange"
	case PortStateDown:
		return "Down"
	case PortStateInit:
		return "Initialize"
	case PortStateArmed:
		return "Armed"
	case PortStateActive:
		return "Active"
	}
	return undefined(s)
}

// PhysStateName names a PortInfo.PortPhysicalState, e.g. "LinkUp".
func PhysStateName(s uint8) string {
	switch s {
	case PhysStateNoChange:
		return "NoChange"
	case PhysStateSleep:
		return "Sleep"
	case PhysStatePolling:
		return "Polling"
	case PhysStateDisabled:
		return "Disabled"
	case PhysStateConfigTraining:
		return "PortConfigurationTraining"
	case PhysStateLinkUp:
		return "LinkUp"
	case PhysStateLinkErrorRecovery:
		return "LinkErrorRecovery"
	case PhysStatePhyTest:
		return "PhyTest"
	}
	return undefined(s)
}

// LinkDownDefaultStateName names a PortInfo.LinkDownDefaultState:
// "NoChange", "Sleep", "Polling".
func LinkDownDefaultStateName(s uint8) string {
	switch s {
	case 0:
		return "NoChange"
	case 1:
		return "Sleep"
	case 2:
		return "Polling"
	}
	return undefined(s)
}

// WidthName names one link width bit as smpquery does: 1 "1X", 2 "4X",
// 4 "8X", 8 "12X", 16 "2X".
func WidthName(w uint8) string {
	switch w {
	case 1:
		return "1X"
	case 2:
		return "4X"
	case 4:
		return "8X"
	case 8:
		return "12X"
	case 16:
		return "2X"
	}
	return undefined(w)
}

// WidthMaskName names a link width mask as smpquery does, e.g. "1X or 4X
// or 8X or 12X or 2X".
func WidthMaskName(m uint8) string {
	if m == 0 || m>>5 != 0 {
		return undefined(m)
	}
	return joinBits(uint32(m), 5, func(bit uint32) string { return WidthName(uint8(bit)) })
}

// SpeedName names one LinkSpeed bit as smpquery does: 1 "2.5 Gbps",
// 2 "5.0 Gbps", 4 "10.0 Gbps".
func SpeedName(s uint8) string {
	switch s {
	case 1:
		return "2.5 Gbps"
	case 2:
		return "5.0 Gbps"
	case 4:
		return "10.0 Gbps"
	}
	return undefined(s)
}

// SpeedMaskName names a LinkSpeed mask, e.g. "2.5 Gbps or 5.0 Gbps or 10.0
// Gbps".
func SpeedMaskName(m uint8) string {
	if m == 0 || m>>3 != 0 {
		return undefined(m)
	}
	return joinBits(uint32(m), 3, func(bit uint32) string { return SpeedName(uint8(bit)) })
}

// SpeedShortName names one LinkSpeed bit by its data rate: "SDR", "DDR",
// "QDR".
func SpeedShortName(s uint8) string {
	switch s {
	case 1:
		return "SDR"
	case 2:
		return "DDR"
	case 4:
		return "QDR"
	}
	return undefined(s)
}

// ExtSpeedName names one LinkSpeedExt bit as smpquery does: 0 "No Extended
// Speed", 1 "14.0625 Gbps", 2 "25.78125 Gbps", 4 "53.125 Gbps",
// 8 "106.25 Gbps"; and XDR, libibnetdisc's aggregated 32 (ExtSpeedXDR),
// "212.5 Gbps" as ibnd_dump_agg_linkspeedext names it.
func ExtSpeedName(s uint8) string {
	switch s {
	case ExtSpeedXDR:
		return "212.5 Gbps"
	case 0:
		return "No Extended Speed"
	case 1:
		return "14.0625 Gbps"
	case 2:
		return "25.78125 Gbps"
	case 4:
		return "53.125 Gbps"
	case 8:
		return "106.25 Gbps"
	}
	return undefined(s)
}

// ExtSpeedShortName names one bit of an aggregated extended speed mask
// by its data rate: "FDR", "EDR", "HDR", "NDR", and "XDR" for 32
// (ExtSpeedXDR, as ibnetdiscover's dump_linkspeedext_compat).
func ExtSpeedShortName(s uint8) string {
	switch s {
	case ExtSpeedXDR:
		return "XDR"
	case 1:
		return "FDR"
	case 2:
		return "EDR"
	case 4:
		return "HDR"
	case 8:
		return "NDR"
	}
	return undefined(s)
}

// LinkText is ibnetdiscover's text for an active link, e.g. "4xSDR" or
// "12xEDR": WidthShortName followed by LinkSpeedText.
func LinkText(width, speed, extSpeed uint8) string {
	return WidthShortName(width) + LinkSpeedText(speed, extSpeed)
}

// WidthShortName is the width part of ibnetdiscover's link text
// (dump_linkwidth_compat): "1x", "4x", "8x", "12x", "2x"; "??" otherwise.
func WidthShortName(width uint8) string {
	switch width {
	case 1:
		return "1x"
	case 2:
		return "4x"
	case 4:
		return "8x"
	case 8:
		return "12x"
	case 16:
		return "2x"
	}
	return "??"
}

// LinkSpeedText is the speed part of ibnetdiscover's link text: the
// extended speed when extSpeed is non-zero ("FDR", "EDR", "HDR", "NDR",
// "XDR" for libibnetdisc's aggregated 32),
// else the base speed ("SDR", "DDR", "QDR"); "???" for a value it cannot
// name.
func LinkSpeedText(speed, extSpeed uint8) string {
	switch {
	case extSpeed != 0:
		switch extSpeed {
		case 1, 2, 4, 8, ExtSpeedXDR:
			return ExtSpeedShortName(extSpeed)
		}
	default:
		switch speed {
		case 1, 2, 4:
			return SpeedShortName(speed)
		}
	}
	return "???"
}

// MTUBytes returns the size in bytes of an MTU code (NeighborMTU, MTUCap):
// 1 256, 2 512, 3 1024, 4 2048, 5 4096; 0 for other codes.
func MTUBytes(m uint8) int {
	if m < 1 || m > 5 {
		return 0
	}
	return 128 << m
}

// VLCapName names a VLCap or OperationalVLs code as smpquery does: 1 "VL0",
// 2 "VL0-1", 3 "VL0-3", 4 "VL0-7", 5 "VL0-14".
func VLCapName(v uint8) string {
	switch v {
	case 1:
		return "VL0"
	case 2:
		return "VL0-1"
	case 3:
		return "VL0-3"
	case 4:
		return "VL0-7"
	case 5:
		return "VL0-14"
	}
	return undefined(v)
}

// SMStateName names an SMInfo.SMState: "NotActive", "Discovering",
// "Standby", "Master".
func SMStateName(s uint8) string {
	switch s {
	case SMStateNotActive:
		return "NotActive"
	case SMStateDiscovering:
		return "Discovering"
	case SMStateStandby:
		return "Standby"
	case SMStateMaster:
		return "Master"
	}
	return undefined(s)
}

// CapabilityMaskNames lists the names of the PortInfo.CapabilityMask bits
// set in m, lowest bit first, as smpquery does ("IsSM", "IsTrapSupported",
// ...). A set reserved bit is listed as "bit N".
func CapabilityMaskNames(m uint32) []string {
	var names []string
	for bit := range 32 {
		if m&(1<<bit) != 0 {
			names = append(names, capName(bit))
		}
	}
	return names
}

func capName(bit int) string {
	switch uint32(1) << bit {
	case CapIsSM:
		return "IsSM"
	case CapIsNoticeSupported:
		return "IsNoticeSupported"
	case CapIsTrapSupported:
		return "IsTrapSupported"
	case CapIsOptionalIPDSupported:
		return "IsOptionalIPDSupported"
	case CapIsAutomaticMigrationSupported:
		return "IsAutomaticMigrationSupported"
	case CapIsSLMappingSupported:
		return "IsSLMappingSupported"
	case CapIsMKeyNVRAM:
		return "IsMKeyNVRAM"
	case CapIsPKeyNVRAM:
		return "IsPKeyNVRAM"
	case CapIsLEDInfoSupported:
		return "IsLEDInfoSupported"
	case CapIsSMDisabled:
		return "IsSMdisabled"
	case CapIsSystemImageGUIDSupported:
		return "IsSystemImageGUIDSupported"
	case CapIsPKeySwitchExternalPortTrapSupported:
		return "IsPKeySwitchExternalPortTrapSupported"
	case CapIsExtendedSpeedsSupported:
		return "IsExtendedSpeedsSupported"
	case CapIsCapabilityMask2Supported:
		return "IsCapabilityMask2Supported"
	case CapIsCommunicationManagementSupported:
		return "IsCommunicationManagementSupported"
	case CapIsSNMPTunnelingSupported:
		return "IsSNMPTunnelingSupported"
	case CapIsReinitSupported:
		return "IsReinitSupported"
	case CapIsDeviceManagementSupported:
		return "IsDeviceManagementSupported"
	case CapIsVendorClassSupported:
		return "IsVendorClassSupported"
	case CapIsDRNoticeSupported:
		return "IsDRNoticeSupported"
	case CapIsCapabilityMaskNoticeSupported:
		return "IsCapabilityMaskNoticeSupported"
	case CapIsBootManagementSupported:
		return "IsBootManagementSupported"
	case CapIsLinkRoundTripLatencySupported:
		return "IsLinkRoundTripLatencySupported"
	case CapIsClientReregistrationSupported:
		return "IsClientReregistrationSupported"
	case CapIsOtherLocalChangesNoticeSupported:
		return "IsOtherLocalChangesNoticeSupported"
	case CapIsLinkSpeedWidthPairsTableSupported:
		return "IsLinkSpeedWidthPairsTableSupported"
	case CapIsVendorSpecificMadsTableSupported:
		return "IsVendorSpecificMadsTableSupported"
	case CapIsMcastPKeyTrapSuppressionSupported:
		return "IsMcastPkeyTrapSuppressionSupported"
	case CapIsMulticastFDBTopSupported:
		return "IsMulticastFDBTopSupported"
	case CapIsHierarchyInfoSupported:
		return "IsHierarchyInfoSupported"
	}
	return fmt.Sprintf("bit %d", bit)
}

// CapabilityMask2Names lists the names of the PortInfo.CapabilityMask2
// bits set in m that libibmad names (bits 0 to 5), lowest first; other set
// bits are listed as "bit N".
func CapabilityMask2Names(m uint16) []string {
	var names []string
	for bit := range 16 {
		if m&(1<<bit) == 0 {
			continue
		}
		name := fmt.Sprintf("bit %d", bit)
		switch bit {
		case 0:
			name = "IsSetNodeDescriptionSupported"
		case 1:
			name = "IsPortInfoExtendedSupported"
		case 2:
			name = "IsVirtualizationSupported"
		case 3:
			name = "IsSwitchPortStateTableSupported"
		case 4:
			name = "IsLinkWidth2xSupported"
		case 5:
			name = "IsLinkSpeedHDRSupported"
		}
		names = append(names, name)
	}
	return names
}

// joinBits names each set bit of m below bit n with name and joins the
// names with " or ".
func joinBits(m uint32, n int, name func(bit uint32) string) string {
	var parts []string
	for i := range n {
		if bit := uint32(1) << i; m&bit != 0 {
			parts = append(parts, name(bit))
		}
	}
	return strings.Join(parts, " or ")
}

// FieldText names the value of a field of an SMP attribute for people, by
// the field's IBA name in the layouts ("PortState" 4 -> "Active",
// "LinkWidthActive" 2 -> "4X", "NeighborMTU" 4 -> "2048"). It reports
// false for fields whose numbers speak for themselves.
func FieldText(field string, v uint64) (string, bool) {
	b := uint8(v)
	switch field {
	case "NodeType":
		return NodeTypeName(b), true
	case "PortState":
		return PortStateName(b), true
	case "PortPhysicalState":
		return PhysStateName(b), true
	case "LinkDownDefaultState":
		return LinkDownDefaultStateName(b), true
	case "LinkWidthEnabled", "LinkWidthSupported":
		return WidthMaskName(b), true
	case "LinkWidthActive":
		return WidthName(b), true
	case "LinkSpeedEnabled", "LinkSpeedSupported":
		return SpeedMaskName(b), true
	case "LinkSpeedActive":
		return SpeedShortName(b), true
	case "LinkSpeedExtActive":
		if v == 0 {
			return "none", true
		}
		return ExtSpeedShortName(b), true
	case "NeighborMTU", "MTUCap":
		if n := MTUBytes(b); n != 0 {
			return fmt.Sprintf("%d bytes", n), true
		}
		return undefined(b), true
	case "VLCap", "OperationalVLs":
		return VLCapName(b), true
	case "SMState":
		return SMStateName(b), true
	}
	return "", false
}

// LaneDataRate is the data rate of one lane at an active speed in bits per
// second, after line encoding (8b/10b up to QDR, 64b/66b for FDR and
// EDR): SDR 2, DDR 4, QDR 8, FDR 13.64, EDR 25, HDR 50, NDR 100 Gb/s. The
// extended speed wins when not 0, as in LinkSpeedText; 0 for a value it
// cannot name. One byte takes 8/LaneDataRate seconds on a lane: the
// symbol time PortXmitWait's tick is counted in (4 ns at SDR).
func LaneDataRate(speed, extSpeed uint8) float64 {
	switch extSpeed {
	case 0:
	case 1:
		return 14.0625e9 * 64 / 66
	case 2:
		return 25.78125e9 * 64 / 66
	case 4:
		return 50e9
	case 8:
		return 100e9
	case 32: // XDR, libibnetdisc's aggregated value (LinkSpeedExtActive2 bit 0)
		return 200e9
	default:
		return 0
	}
	switch speed {
	case 1:
		return 2e9
	case 2:
		return 4e9
	case 4:
		return 8e9
	}
	return 0
}

// SysfsRate is a port's link rate in Gb/s as the kernel's sysfs rate file
// begins ("10 Gb/sec (4X)", "2.5 Gb/sec (1X)"), and so as libibumad's
// umad_port_t.rate gives it, which keeps the integer part: active lanes
// times the lane's signalling rate, 2.5 (SDR), 5 (DDR), 10 (QDR), 14 (FDR),
// 25 (EDR), 50 (HDR), 100 (NDR), 200 (XDR: the aggregated 32, as the
// kernel's ib_rate for IB_SPEED_XDR). The extended speed wins when not 0, as in
// LinkSpeedText; 0 for a width it cannot name.
func SysfsRate(width, speed, extSpeed uint8) int {
	lanes := WidthLanes(width)
	switch extSpeed {
	case 1:
		return lanes * 14
	case 2:
		return lanes * 25
	case 4:
		return lanes * 50
	case 8:
		return lanes * 100
	case ExtSpeedXDR:
		return lanes * 200
	}
	switch speed {
	case 2:
		return lanes * 5
	case 4:
		return lanes * 10
	}
	return lanes * 5 / 2
}

// WidthLanes is the number of lanes of a link width (PortInfo
// LinkWidthActive: 1 1x, 2 4x, 4 8x, 8 12x, 16 2x), 0 for a value that is
// no single width.
func WidthLanes(width uint8) int {
	switch width {
	case 1:
		return 1
	case 2:
		return 4
	case 4:
		return 8
	case 8:
		return 12
	case 16:
		return 2
	}
	return 0
}
