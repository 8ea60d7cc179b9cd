package main

import (
	"slices"

	"github.com/ibscript/ibscript/mad"
)

// Value names of the SMP rows, as smpquery prints them.
var (
	enumNodeType  = map[uint64]string{1: "Channel Adapter", 2: "Switch", 3: "Router"}
	enumPortState = map[uint64]string{0: "NoChange", 1: "Down", 2: "Initialize", 3: "Armed", 4: "Active"}
	enumPhysState = map[uint64]string{0: "NoChange", 1: "Sleep", 2: "Polling", 3: "Disabled",
		4: "PortConfigurationTraining", 5: "LinkUp", 6: "LinkErrorRecovery", 7: "PhyTest"}
	enumMTU     = map[uint64]string{1: "256", 2: "512", 3: "1024", 4: "2048", 5: "4096"}
	enumVLs     = map[uint64]string{1: "VL0", 2: "VL0-1", 3: "VL0-3", 4: "VL0-7", 5: "VL0-14"}
	enumSMState = map[uint64]string{0: "NotActive", 1: "Discovering", 2: "Standby", 3: "Master"}
	enumNotice  = map[uint64]string{0: "Fatal", 1: "Urgent", 2: "Security", 3: "SubnetManagement", 4: "Informational", 0x7f: "Empty"}
)

// Subnet management attributes (SMPs, classes 0x01 and 0x81):
// mad-formats.md section 7, IBA vol. 1 chapter 14.2.5, rdma-core
// libibmad's field table.
func smpAttrs() []*Attr {
	return slices.Concat(smpFromNotice(), smpFromGUIDInfo(), smpFromPortInfo(), smpFromPKeyTable(), smpFromPortInfoExtended())
}

// smpFromNotice is the smp schema from Notice on (part of smpAttrs).
func smpFromNotice() []*Attr {
	return []*Attr{
		{
			Pkg: "smp", Name: "Notice", ID: 0x0002, Size: 80, MinSize: 64, Prefix: "ntc", Type: "Notice",
			Mod: "none (0)",
			Doc: "Notice is the Notice attribute: a trap or a notice report, the payload of Trap, Report and TrapRepress. For a vendor notice (IsGeneric false) ProducerType holds the VendorID and TrapNumber the DeviceID. An SMP carries its first 64 bytes (NoticeSMPSize), without IssuerGID; SA Reports carry all 80.",
			Fields: []Field{
				{Name: "IsGeneric", Bit: 0, Width: 1},
				{Name: "Type", Bit: 1, Width: 7, Doc: "Notice* values, 7 bits", Enum: enumNotice},
				{Name: "ProducerType", Bit: 8, Width: 24, Kind: mad.Hex, Doc: "generic: 1 CA, 2 switch, 3 router, 4 class manager; vendor: VendorID (24 bits)"},
				{Name: "TrapNumber", Bit: 32, Width: 16, Doc: "generic: trap number; vendor: DeviceID"},
				{Name: "IssuerLID", Bit: 48, Width: 16},
				{Name: "NoticeToggle", Bit: 64, Width: 1},
				{Name: "NoticeCount", Bit: 65, Width: 15, Doc: "15 bits"},
				{Name: "DataDetails", Bit: 80, Width: 432, Kind: mad.Bytes, Doc: "trap specific"},
				{Name: "IssuerGID", Bit: 512, Width: 128, Kind: mad.Bytes},
			},
		},
		{
			Pkg: "smp", Name: "NodeDescription", ID: 0x0010, Size: 64, Prefix: "nd", Type: "NodeDescription",
			Mod: "none (0)",
			Doc: "NodeDescription is the NodeDescription attribute: up to 64 bytes of UTF-8 text, NUL padded on the wire.",
			Fields: []Field{
				{Name: "NodeString", Bit: 0, Width: 512, Kind: mad.String, Doc: "without the trailing NULs"},
			},
		},
		{
			Pkg: "smp", Name: "NodeInfo", ID: 0x0011, Size: 40, Prefix: "ni", Type: "NodeInfo",
			Mod: "none (0)",
			Doc: "NodeInfo is the NodeInfo attribute: what a node is and which port the SMP arrived on.",
			Fields: []Field{
				{Name: "BaseVersion", Bit: 0, Width: 8, Dump: mad.DumpUint, IB: "BaseVers"},
				{Name: "ClassVersion", Bit: 8, Width: 8, Dump: mad.DumpUint, IB: "ClassVers"},
				{Name: "NodeType", Bit: 16, Width: 8, Dump: mad.DumpNodeType, Doc: "NodeTypeCA, NodeTypeSwitch, NodeTypeRouter", Enum: enumNodeType},
				{Name: "NumPorts", Bit: 24, Width: 8, Dump: mad.DumpUint, Doc: "physical ports"},
				{Name: "SystemImageGUID", Bit: 32, Width: 64, Dump: mad.DumpHex, IB: "SystemGuid", Kind: mad.Hex},
				{Name: "NodeGUID", Bit: 96, Width: 64, Dump: mad.DumpHex, IB: "Guid", Kind: mad.Hex},
				{Name: "PortGUID", Bit: 160, Width: 64, Dump: mad.DumpHex, IB: "PortGuid", Kind: mad.Hex, Doc: "the port the SMP arrived on (switch: port 0)"},
				{Name: "PartitionCap", Bit: 224, Width: 16, Dump: mad.DumpUint, IB: "PartCap", Doc: "P_Key table entries"},
				{Name: "DeviceID", Bit: 240, Width: 16, Dump: mad.DumpHex, IB: "DevId", Kind: mad.Hex},
				{Name: "Revision", Bit: 256, Width: 32, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "LocalPortNum", Bit: 288, Width: 8, Dump: mad.DumpUint, IB: "LocalPort", Doc: "the port the SMP arrived on"},
				{Name: "VendorID", Bit: 296, Width: 24, Dump: mad.DumpHex, IB: "VendorId", Kind: mad.Hex, Doc: "IEEE OUI, 24 bits"},
			},
		},
		{
			Pkg: "smp", Name: "SwitchInfo", ID: 0x0012, Size: 20, Prefix: "si", Type: "SwitchInfo",
			Mod: "none (0)",
			Doc: "SwitchInfo is the SwitchInfo attribute of a switch: forwarding table capacities and switch-wide settings.",
			Fields: []Field{
				{Name: "LinearFDBCap", Bit: 0, Width: 16, Dump: mad.DumpUint, IB: "LinearFdbCap"},
				{Name: "RandomFDBCap", Bit: 16, Width: 16, Dump: mad.DumpUint, IB: "RandomFdbCap"},
				{Name: "MulticastFDBCap", Bit: 32, Width: 16, Dump: mad.DumpUint, IB: "McastFdbCap"},
				{Name: "LinearFDBTop", Bit: 48, Width: 16, Dump: mad.DumpUint, IB: "LinearFdbTop"},
				{Name: "DefaultPort", Bit: 64, Width: 8, Dump: mad.DumpUint, IB: "DefPort"},
				{Name: "DefaultMulticastPrimaryPort", Bit: 72, Width: 8, Dump: mad.DumpUint, IB: "DefMcastPrimPort"},
				{Name: "DefaultMulticastNotPrimaryPort", Bit: 80, Width: 8, Dump: mad.DumpUint, IB: "DefMcastNotPrimPort"},
				{Name: "LifeTimeValue", Bit: 88, Width: 5, Dump: mad.DumpUint, IB: "LifeTime"},
				{Name: "PortStateChange", Bit: 93, Width: 1, Dump: mad.DumpUint, IB: "StateChange", Doc: "write 1 to clear"},
				{Name: "OptimizedSLtoVLMappingProgramming", Bit: 94, Width: 2, Dump: mad.DumpUint, IB: "OptSLtoVLMapping"},
				{Name: "LIDsPerPort", Bit: 96, Width: 16, Dump: mad.DumpUint, IB: "LidsPerPort"},
				{Name: "PartitionEnforcementCap", Bit: 112, Width: 16, Dump: mad.DumpUint, IB: "PartEnforceCap"},
				{Name: "InboundEnforcementCap", Bit: 128, Width: 1, Dump: mad.DumpUint, IB: "InboundPartEnf"},
				{Name: "OutboundEnforcementCap", Bit: 129, Width: 1, Dump: mad.DumpUint, IB: "OutboundPartEnf"},
				{Name: "FilterRawInboundCap", Bit: 130, Width: 1, Dump: mad.DumpUint, IB: "FilterRawInbound"},
				{Name: "FilterRawOutboundCap", Bit: 131, Width: 1, Dump: mad.DumpUint, IB: "FilterRawOutbound"},
				{Name: "EnhancedPort0", Bit: 132, Width: 1, Dump: mad.DumpUint},
				{Name: "MulticastFDBTop", Bit: 144, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
			},
		},
	}
}

// smpFromGUIDInfo is the smp schema from GUIDInfo on (part of smpAttrs).
func smpFromGUIDInfo() []*Attr {
	return []*Attr{
		{
			Pkg: "smp", Name: "GUIDInfo", ID: 0x0014, Size: 64, Prefix: "gi", Type: "GUIDInfo",
			Mod: "block number (8 GUIDs a block)",
			Doc: "GUIDInfo is one block of a port's GUID table: entry i is table index block*8 + i, where the attribute modifier is the block number.",
			Fields: []Field{
				{Name: "GUID", Go: "GUIDs", Bit: 0, Width: 64, Kind: mad.Hex, Count: 8, Stride: 64},
			},
		},
	}
}

// smpFromPortInfo is the smp schema from PortInfo on (part of smpAttrs).
func smpFromPortInfo() []*Attr {
	return []*Attr{
		{
			Pkg: "smp", Name: "PortInfo", ID: 0x0015, Size: 64, Prefix: "pi", Type: "PortInfo",
			Mod: "port number (a switch's port 0, or a CA's own port with 0)",
			Doc: "PortInfo is the PortInfo attribute of one port. Width fields are masks (1 1x, 2 4x, 4 8x, 8 12x, 16 2x), speed fields masks (1 SDR, 2 DDR, 4 QDR), extended speed fields masks (1 FDR, 2 EDR, 4 HDR, 8 NDR); see WidthName, SpeedName, ExtSpeedName and LinkText.",
			Fields: []Field{
				{Name: "M_Key", Bit: 0, Width: 64, Kind: mad.Hex},
				{Name: "GidPrefix", Go: "GIDPrefix", Bit: 64, Width: 64, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "LID", Bit: 128, Width: 16, Dump: mad.DumpUint, IB: "Lid"},
				{Name: "MasterSMLID", Bit: 144, Width: 16, Dump: mad.DumpUint, IB: "SMLid"},
				{Name: "CapabilityMask", Bit: 160, Width: 32, Dump: mad.DumpPortCapMask, IB: "CapMask", Kind: mad.Hex, Doc: "Cap* bits"},
				{Name: "DiagCode", Bit: 192, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "M_KeyLeasePeriod", Bit: 208, Width: 16, Dump: mad.DumpUint, IB: "MkeyLeasePeriod"},
				{Name: "LocalPortNum", Bit: 224, Width: 8, Dump: mad.DumpUint, IB: "LocalPort"},
				{Name: "LinkWidthEnabled", Bit: 232, Width: 8, Dump: mad.DumpLinkWidthEn, Kind: mad.Hex},
				{Name: "LinkWidthSupported", Bit: 240, Width: 8, Dump: mad.DumpLinkWidthSup, Kind: mad.Hex},
				{Name: "LinkWidthActive", Bit: 248, Width: 8, Dump: mad.DumpLinkWidth, Kind: mad.Hex},
				{Name: "LinkSpeedSupported", Bit: 256, Width: 4, Dump: mad.DumpLinkSpeedSup, Kind: mad.Hex},
				{Name: "PortState", Bit: 260, Width: 4, Dump: mad.DumpPortState, IB: "LinkState", Doc: "PortState* values", Enum: enumPortState},
				{Name: "PortPhysicalState", Bit: 264, Width: 4, Dump: mad.DumpPhysPortState, IB: "PhysLinkState", Doc: "PhysState* values", Enum: enumPhysState},
				{Name: "LinkDownDefaultState", Bit: 268, Width: 4, Dump: mad.DumpLinkDownDefState, IB: "LinkDownDefState"},
				{Name: "M_KeyProtectBits", Bit: 272, Width: 2, Dump: mad.DumpUint, IB: "ProtectBits"},
				{Name: "LMC", Bit: 277, Width: 3, Dump: mad.DumpUint},
				{Name: "LinkSpeedActive", Bit: 280, Width: 4, Dump: mad.DumpLinkSpeed, Kind: mad.Hex},
				{Name: "LinkSpeedEnabled", Bit: 284, Width: 4, Dump: mad.DumpLinkSpeedEn, Kind: mad.Hex},
				{Name: "NeighborMTU", Bit: 288, Width: 4, Dump: mad.DumpMTU, Doc: "1 256 ... 5 4096, see MTUBytes", Enum: enumMTU},
				{Name: "MasterSMSL", Bit: 292, Width: 4, Dump: mad.DumpUint, IB: "SMSL"},
				{Name: "VLCap", Bit: 296, Width: 4, Dump: mad.DumpVLCap, Enum: enumVLs},
				{Name: "InitType", Bit: 300, Width: 4, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "VLHighLimit", Bit: 304, Width: 8, Dump: mad.DumpUint},
				{Name: "VLArbitrationHighCap", Bit: 312, Width: 8, Dump: mad.DumpUint, IB: "VLArbHighCap"},
				{Name: "VLArbitrationLowCap", Bit: 320, Width: 8, Dump: mad.DumpUint, IB: "VLArbLowCap"},
				{Name: "InitTypeReply", Bit: 328, Width: 4, Dump: mad.DumpHex, IB: "InitReply", Kind: mad.Hex},
				{Name: "MTUCap", Bit: 332, Width: 4, Dump: mad.DumpMTU, IB: "MtuCap", Enum: enumMTU},
				{Name: "VLStallCount", Bit: 336, Width: 3, Dump: mad.DumpUint},
				{Name: "HOQLife", Bit: 339, Width: 5, Dump: mad.DumpUint, IB: "HoqLife"},
				{Name: "OperationalVLs", Bit: 344, Width: 4, Dump: mad.DumpOperVLs, IB: "OperVLs", Enum: enumVLs},
				{Name: "PartitionEnforcementInbound", Bit: 348, Width: 1, Dump: mad.DumpUint, IB: "PartEnforceInb"},
				{Name: "PartitionEnforcementOutbound", Bit: 349, Width: 1, Dump: mad.DumpUint, IB: "PartEnforceOutb"},
				{Name: "FilterRawInbound", Bit: 350, Width: 1, Dump: mad.DumpUint, IB: "FilterRawInb"},
				{Name: "FilterRawOutbound", Bit: 351, Width: 1, Dump: mad.DumpUint, IB: "FilterRawOutb"},
				{Name: "M_KeyViolations", Bit: 352, Width: 16, Dump: mad.DumpUint, IB: "MkeyViolations"},
				{Name: "P_KeyViolations", Bit: 368, Width: 16, Dump: mad.DumpUint, IB: "PkeyViolations"},
				{Name: "Q_KeyViolations", Bit: 384, Width: 16, Dump: mad.DumpUint, IB: "QkeyViolations"},
				{Name: "GUIDCap", Bit: 400, Width: 8, Dump: mad.DumpUint, IB: "GuidCap"},
				{Name: "ClientReregister", Bit: 408, Width: 1, Dump: mad.DumpUint},
				{Name: "MulticastPKeyTrapSuppressionEnabled", Bit: 409, Width: 2, Dump: mad.DumpUint, IB: "McastPkeyTrapSuppressionEnabled"},
				{Name: "SubnetTimeOut", Bit: 411, Width: 5, Dump: mad.DumpUint, IB: "SubnetTimeout"},
				{Name: "RespTimeValue", Bit: 419, Width: 5, Dump: mad.DumpUint, IB: "RespTimeVal"},
				{Name: "LocalPhyErrors", Bit: 424, Width: 4, Dump: mad.DumpUint, IB: "LocalPhysErr"},
				{Name: "OverrunErrors", Bit: 428, Width: 4, Dump: mad.DumpUint, IB: "OverrunErr"},
				{Name: "MaxCreditHint", Bit: 432, Width: 16, Dump: mad.DumpUint},
				{Name: "LinkSpeedExtActive2", Bit: 449, Width: 2, Kind: mad.Hex},
				{Name: "LinkSpeedExtSupported2", Bit: 451, Width: 2, Kind: mad.Hex},
				{Name: "LinkSpeedExtEnabled2", Bit: 453, Width: 3, Kind: mad.Hex},
				{Name: "LinkRoundTripLatency", Bit: 456, Width: 24, Dump: mad.DumpUint, IB: "RoundTrip", Doc: "24 bits"},
				{Name: "CapabilityMask2", Bit: 480, Width: 16, Dump: mad.DumpPortCapMask2, Kind: mad.Hex},
				{Name: "LinkSpeedExtActive", Bit: 496, Width: 4, Dump: mad.DumpLinkSpeedExt, Kind: mad.Hex},
				{Name: "LinkSpeedExtSupported", Bit: 500, Width: 4, Dump: mad.DumpLinkSpeedExtSup, Kind: mad.Hex},
				{Name: "LinkSpeedExtEnabled", Bit: 507, Width: 5, Dump: mad.DumpLinkSpeedExtEn, Kind: mad.Hex},
			},
			Partial: []Partial{{
				Method: "UnmarshalLink",
				Doc:    "UnmarshalLink decodes only the fields that place a port and describe its link: LID, LMC, CapabilityMask, PortState, PortPhysicalState, the supported, enabled and active link widths and speeds (extended speeds too, with CapabilityMask2 and the LinkSpeedExt*2 fields of XDR), HOQLife and VLStallCount (iblinkinfo prints them) and VLCap (ibnetdiscover -f). The other fields are left zero. A discovery sweep reads one PortInfo per port and needs no more; it is a quarter of the work of UnmarshalBinary.",
				Fields: []string{"LID", "LMC", "CapabilityMask", "PortState", "PortPhysicalState", "LinkWidthEnabled",
					"LinkWidthActive", "LinkSpeedEnabled", "LinkSpeedActive", "LinkSpeedExtEnabled", "LinkSpeedExtActive",
					"LinkWidthSupported", "LinkSpeedSupported", "LinkSpeedExtSupported", "HOQLife", "VLStallCount", "VLCap",
					"CapabilityMask2", "LinkSpeedExtActive2", "LinkSpeedExtSupported2", "LinkSpeedExtEnabled2"},
			}},
		},
	}
}

// smpFromPKeyTable is the smp schema from PKeyTable on (part of smpAttrs).
func smpFromPKeyTable() []*Attr {
	return []*Attr{
		{
			Pkg: "smp", Name: "P_KeyTable", ID: 0x0016, Const: "AttrPKeyTable", Size: 64, Prefix: "pk", Type: "PKeyTable",
			Mod: "bits 15..0 the block (32 P_Keys a block); on a switch bits 31..16 the port",
			Doc: "PKeyTable is one block of a port's partition table: entry i is table index block*32 + i; its top bit is the membership type and the other 15 the P_Key base.",
			Fields: []Field{
				{Name: "P_Key", Go: "PKeys", Bit: 0, Width: 16, Kind: mad.Hex, Count: 32, Stride: 16},
			},
		},
		{
			Pkg: "smp", Name: "LinearForwardingTable", ID: 0x0019, Size: 64, Prefix: "lft", Type: "LinearForwardingTable",
			Mod: "block number: LIDs block*64 .. block*64+63",
			Doc: "LinearForwardingTable is one block of a switch's unicast forwarding table: Ports[i] is the egress port of LID block*64 + i, or DropPort.",
			Fields: []Field{
				{Name: "Port", Go: "Ports", Bit: 0, Width: 8, Count: 64, Stride: 8},
			},
		},
		{
			Pkg: "smp", Name: "SLtoVLMappingTable", ID: 0x0017, Size: 8, Prefix: "slvl", Type: "SLtoVLMappingTable",
			Aliases: []string{"SL2VLMappingTable", "SL2VL"},
			Mod:     "a CA's port: 0; a switch: bits 15..8 the input port, 7..0 the output port",
			Doc:     "SLtoVLMappingTable is the SLtoVLMappingTable attribute of a port: the VL each of the 16 SLs is sent on (smpquery sl2vl).",
			Fields: []Field{
				{Name: "SLtoVL", Go: "VL", Bit: 0, Width: 4, Count: 16, Stride: 4, Doc: "the VL of SL i"},
			},
		},
		{
			Pkg: "smp", Name: "VLArbitrationTable", ID: 0x0018, Size: 64, Prefix: "vla", Type: "VLArbitrationTable",
			Aliases: []string{"VLArb"},
			Mod:     "bits 31..16: 1 low-priority entries 0-31, 2 low 32-63, 3 high 0-31, 4 high 32-63; on a switch bits 15..0 the port",
			Doc:     "VLArbitrationTable is one block of a port's VL arbitration table: 32 entries of a VL and its weight (smpquery vlarb).",
			Fields: []Field{
				{Name: "VL", Bit: 4, Width: 4, Count: 32, Stride: 16, Doc: "the VL of entry i"},
				{Name: "Weight", Bit: 8, Width: 8, Count: 32, Stride: 16, Doc: "its weight in 64-byte units"},
			},
		},
		{
			Pkg: "smp", Name: "SMInfo", ID: 0x0020, Size: 21, Prefix: "sm", Type: "SMInfo",
			Mod: "none (0) for Get; the SM control for Set",
			Doc: "SMInfo is the SMInfo attribute of a subnet manager.",
			Fields: []Field{
				{Name: "GUID", Bit: 0, Width: 64, Dump: mad.DumpHex, IB: "SmInfoGuid", Kind: mad.Hex},
				{Name: "SM_Key", Bit: 64, Width: 64, Dump: mad.DumpHex, IB: "SmInfoKey", Kind: mad.Hex, Doc: "zero unless the requester is authenticated"},
				{Name: "ActCount", Bit: 128, Width: 32, Dump: mad.DumpUint, IB: "SmActivity"},
				{Name: "Priority", Bit: 160, Width: 4, Dump: mad.DumpUint, IB: "SmPriority"},
				{Name: "SMState", Bit: 164, Width: 4, Dump: mad.DumpUint, IB: "SmState", Doc: "SMState* values", Enum: enumSMState},
			},
		},
		{
			Pkg: "smp", Name: "MulticastForwardingTable", ID: 0x001B, Size: 64, Prefix: "mft", Type: "MulticastForwardingTable",
			Aliases: []string{"MFT"},
			Mod:     "bits 31..28 the position (ports 16*position .. 16*position+15), bits 8..0 the block (MLIDs 0xC000 + 32*block ..)",
			Doc:     "MulticastForwardingTable is one block of a switch's multicast forwarding table: for 32 MLIDs, a mask of 16 ports each (bit i is port 16*position + i).",
			Fields: []Field{
				{Name: "PortMask", Bit: 0, Width: 16, Kind: mad.Hex, Count: 32, Stride: 16, Doc: "ports of MLID 0xC000 + 32*block + i"},
			},
		},
		{
			Pkg: "smp", Name: "LedInfo", ID: 0x0031, Size: 4, Prefix: "led", Type: "LedInfo",
			Mod: "none (0)",
			Doc: "LedInfo is the LedInfo attribute of a port: its beacon LED.",
			Fields: []Field{
				{Name: "LedMask", Bit: 0, Width: 1, Doc: "the LED blinks"},
			},
		},
	}
}

// smpFromPortInfoExtended is the smp schema from PortInfoExtended on (part of smpAttrs).
func smpFromPortInfoExtended() []*Attr {
	return []*Attr{
		{
			Pkg: "smp", Name: "PortInfoExtended", ID: 0x0033, Size: 64, Prefix: "pie", Type: "PortInfoExtended",
			Mod: "port number",
			Doc: "PortInfoExtended is the PortInfoExtended attribute of a port: its FEC modes (smpquery portinfoext).",
			Fields: []Field{
				{Name: "CapabilityMask", Bit: 0, Width: 32, Dump: mad.DumpHex, IB: "CapMask", Kind: mad.Hex, Doc: "bit 0: the FEC mode fields are valid"},
				{Name: "FECModeActive", Bit: 32, Width: 16, Dump: mad.DumpUint},
				{Name: "FDRFECModeSupported", Bit: 48, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "FDRFECModeEnabled", Bit: 64, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "EDRFECModeSupported", Bit: 80, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "EDRFECModeEnabled", Bit: 96, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "HDRFECModeSupported", Bit: 112, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "HDRFECModeEnabled", Bit: 128, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "NDRFECModeSupported", Bit: 144, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "NDRFECModeEnabled", Bit: 160, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
			},
		},
		{
			Pkg: "smp", Name: "MlnxExtPortInfo", ID: 0xFF90, Size: 16, Prefix: "mepi", Type: "MlnxExtPortInfo",
			Aliases: []string{"MlnxExtendedPortInfo"},
			Mod:     "port number",
			Doc:     "MlnxExtPortInfo is Mellanox's vendor ExtendedPortInfo attribute (0xFF90): the FDR10 speed fields (smpquery mlnxextportinfo).",
			Fields: []Field{
				{Name: "StateChangeEnable", Bit: 24, Width: 8, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "LinkSpeedSupported", Bit: 56, Width: 8, Dump: mad.DumpHex, Kind: mad.Hex, Doc: "bit 0: FDR10"},
				{Name: "LinkSpeedEnabled", Bit: 88, Width: 8, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "LinkSpeedActive", Bit: 120, Width: 8, Dump: mad.DumpHex, Kind: mad.Hex},
			},
		},
	}
}
