package main

import (
	"slices"

	"github.com/ibscript/ibscript/mad"
)

// Subnet administration records (class 0x03): mad-formats.md section 8,
// IBA vol. 1 chapter 15.2.5, OpenSM's ib_types.h for the layouts IBA
// leaves to tables. Comp gives each row's component number (the bit of
// the ComponentMask that selects it).
func saAttrs() []*Attr {
	return slices.Concat(saNodeAttrs(), saLinkAttrs(), saPathAttrs(), saMulticastAttrs(), saTableAttrs())
}

// saNodeAttrs are the records of nodes, ports and switches.
func saNodeAttrs() []*Attr {
	return []*Attr{
		{Pkg: "sa", Name: "ClassPortInfo", Ref: "ClassPortInfo", SAVar: "ClassPortInfo", Stride: 9},
		{
			Pkg: "sa", Name: "InformInfo", ID: 0x0003, Size: 36, Prefix: "ii", Type: "Inform", SAVar: "InformInfo", Stride: 5,
			Mod: "none (0)",
			Doc: "Inform is an InformInfo, which subscribes to traps (generic form, OpenSM ib_inform_info_t); it is Set, so it has no component numbers.",
			Fields: []Field{
				{Name: "GID", Bit: 0, Width: 128, Kind: mad.Bytes},
				{Name: "LIDRangeBegin", Bit: 128, Width: 16},
				{Name: "LIDRangeEnd", Bit: 144, Width: 16},
				{Name: "IsGeneric", Bit: 176, Width: 8},
				{Name: "Subscribe", Bit: 184, Width: 8},
				{Name: "Type", Bit: 192, Width: 16},
				{Name: "TrapNumber", Bit: 208, Width: 16},
				{Name: "QPN", Bit: 224, Width: 24, Kind: mad.Hex},
				{Name: "RespTimeValue", Bit: 251, Width: 5},
				{Name: "ProducerType", Bit: 264, Width: 24, Kind: mad.Hex},
			},
		},
		{
			Pkg: "sa", Name: "NodeRecord", ID: 0x0011, Size: 108, Prefix: "nr", Type: "NodeRec", SAVar: "NodeRecord", Stride: 14,
			Doc: "NodeRec is a NodeRecord: the LID of a node's port and its NodeInfo and NodeDescription (mad-formats.md section 8).",
			Fields: []Field{
				{Name: "LID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "NodeInfo", Bit: 32, Width: 320, Embed: "NodeInfo", Comp: c(2)},
				{Name: "NodeDescription", Bit: 352, Width: 512, Kind: mad.String, Type: "[64]byte", Doc: "NUL padded; Description returns the text", Comp: c(14)},
			},
		},
		{
			Pkg: "sa", Name: "PortInfoRecord", ID: 0x0012, Size: 68, Prefix: "pir", SAVar: "PortInfoRecord", Stride: 9,
			Doc: "PortInfoRecord is a port's PortInfo with the LID and number of the port.",
			Fields: []Field{
				{Name: "EndportLID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "PortNum", Bit: 16, Width: 8, Comp: c(1)},
				{Name: "Options", Bit: 24, Width: 8, Kind: mad.Hex, Comp: c(2)},
				{Name: "PortInfo", Bit: 32, Width: 512, Embed: "PortInfo", Comp: c(3)},
			},
		},
		{
			Pkg: "sa", Name: "SwitchInfoRecord", ID: 0x0014, Size: 24, Prefix: "sir", SAVar: "SwitchInfoRecord", Stride: 3,
			Doc: "SwitchInfoRecord is a switch's SwitchInfo with its LID.",
			Fields: []Field{
				{Name: "LID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "SwitchInfo", Bit: 32, Width: 160, Embed: "SwitchInfo", Comp: c(2)},
			},
		},
		{
			Pkg: "sa", Name: "LinearForwardingTableRecord", ID: 0x0015, Const: "AttrLFTRecord", Size: 72, Prefix: "lftr",
			SAVar: "LinearForwardingTableRecord", Stride: 9,
			Doc: "LinearForwardingTableRecord is one block of a switch's LinearForwardingTable.",
			Fields: []Field{
				{Name: "LID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "BlockNum", Bit: 16, Width: 16, Comp: c(1)},
				{Name: "Port", Bit: 64, Width: 8, Count: 64, Stride: 8},
			},
		},
	}
}

// saLinkAttrs are the records of links, GUIDs, services and P_Keys.
func saLinkAttrs() []*Attr {
	return []*Attr{
		{
			Pkg: "sa", Name: "LinkRecord", ID: 0x0020, Size: 8, Prefix: "lr", SAVar: "LinkRecord", Stride: 1,
			Doc: "LinkRecord is one link: from a port to a port (the last 2 bytes reserved).",
			Fields: []Field{
				{Name: "FromLID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "FromPort", Bit: 16, Width: 8, Comp: c(1)},
				{Name: "ToPort", Bit: 24, Width: 8, Comp: c(2)},
				{Name: "ToLID", Bit: 32, Width: 16, Comp: c(3)},
			},
		},
		{
			Pkg: "sa", Name: "GUIDInfoRecord", ID: 0x0030, Size: 72, Prefix: "gir", SAVar: "GUIDInfoRecord", Stride: 9,
			Doc: "GUIDInfoRecord is one GUIDInfo block of a port (OpenSM ib_guidinfo_record_t): LID, BlockNum, two reserved fields, 8 GUIDs at byte 8.",
			Fields: []Field{
				{Name: "LID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "BlockNum", Bit: 16, Width: 8, Comp: c(1)},
				{Name: "GUID", Bit: 64, Width: 64, Kind: mad.Hex, Count: 8, Stride: 64, Comp: c(4)},
			},
		},
		{
			Pkg: "sa", Name: "ServiceRecord", ID: 0x0031, Size: 176, Prefix: "sr", SAVar: "ServiceRecord", Stride: 22,
			Doc: "ServiceRecord is a registered service.",
			Fields: []Field{
				{Name: "ServiceID", Bit: 0, Width: 64, Kind: mad.Hex, Comp: c(0)},
				{Name: "ServiceGID", Bit: 64, Width: 128, Kind: mad.Bytes, Comp: c(1)},
				{Name: "ServiceP_Key", Bit: 192, Width: 16, Kind: mad.Hex, Comp: c(2)},
				{Name: "ServiceLease", Bit: 224, Width: 32, Comp: c(4)},
				{Name: "ServiceKey", Bit: 256, Width: 128, Kind: mad.Bytes, Comp: c(5)},
				{Name: "ServiceName", Bit: 384, Width: 512, Kind: mad.String, Comp: c(6)},
				{Name: "ServiceData8_", Bit: 896, Width: 8, Kind: mad.Hex, Count: 16, Stride: 8, Comp: c(7)},
				{Name: "ServiceData16_", Bit: 1024, Width: 16, Kind: mad.Hex, Count: 8, Stride: 16, Comp: c(23)},
				{Name: "ServiceData32_", Bit: 1152, Width: 32, Kind: mad.Hex, Count: 4, Stride: 32, Comp: c(31)},
				{Name: "ServiceData64_", Bit: 1280, Width: 64, Kind: mad.Hex, Count: 2, Stride: 64, Comp: c(35)},
			},
		},
		{
			Pkg: "sa", Name: "P_KeyTableRecord", ID: 0x0033, Const: "AttrPKeyTableRecord", Size: 72, Prefix: "pkr",
			SAVar: "PKeyTableRecord", Stride: 9,
			Doc: "P_KeyTableRecord is one P_KeyTable block of a port: LID, BlockNum, PortNum, reserved, 32 P_Keys at byte 8.",
			Fields: []Field{
				{Name: "LID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "BlockNum", Bit: 16, Width: 16, Comp: c(1)},
				{Name: "PortNum", Bit: 32, Width: 8, Comp: c(2)},
				{Name: "P_Key", Bit: 64, Width: 16, Kind: mad.Hex, Count: 32, Stride: 16},
			},
		},
	}
}

// saPathAttrs is the PathRecord.
func saPathAttrs() []*Attr {
	return []*Attr{
		{
			Pkg: "sa", Name: "PathRecord", ID: 0x0035, Size: 64, Prefix: "pr", Type: "PathRec", SAVar: "PathRecord", Stride: 8,
			Doc: "PathRec is a PathRecord (mad-formats.md section 8). ServiceID takes components 0 and 1 (it was two reserved halves); selecting either compares the whole ID.",
			Fields: []Field{
				{Name: "ServiceID", Bit: 0, Width: 64, Kind: mad.Hex, Comp: c(0)},
				{Name: "DGID", Bit: 64, Width: 128, Kind: mad.Bytes, Comp: c(2)},
				{Name: "SGID", Bit: 192, Width: 128, Kind: mad.Bytes, Comp: c(3)},
				{Name: "DLID", Bit: 320, Width: 16, Comp: c(4)},
				{Name: "SLID", Bit: 336, Width: 16, Comp: c(5)},
				{Name: "RawTraffic", Bit: 352, Width: 1, Comp: c(6)},
				{Name: "FlowLabel", Bit: 356, Width: 20, Kind: mad.Hex, Comp: c(8)},
				{Name: "HopLimit", Bit: 376, Width: 8, Comp: c(9)},
				{Name: "TClass", Bit: 384, Width: 8, Comp: c(10)},
				{Name: "Reversible", Bit: 392, Width: 1, Comp: c(11)},
				{Name: "NumbPath", Bit: 393, Width: 7, Comp: c(12)},
				{Name: "P_Key", Bit: 400, Width: 16, Kind: mad.Hex, Comp: c(13)},
				{Name: "QOSClass", Go: "QoSClass", Bit: 416, Width: 12, Comp: c(14)},
				{Name: "SL", Bit: 428, Width: 4, Comp: c(15)},
				{Name: "MTUSelector", Bit: 432, Width: 2, Comp: c(16)},
				{Name: "MTU", Bit: 434, Width: 6, Comp: c(17)},
				{Name: "RateSelector", Bit: 440, Width: 2, Comp: c(18)},
				{Name: "Rate", Bit: 442, Width: 6, Comp: c(19)},
				{Name: "PacketLifeTimeSelector", Bit: 448, Width: 2, Comp: c(20)},
				{Name: "PacketLifeTime", Bit: 450, Width: 6, Comp: c(21)},
				{Name: "Preference", Bit: 456, Width: 8, Comp: c(22)},
			},
		},
	}
}

// saMulticastAttrs are the multicast and multipath records.
func saMulticastAttrs() []*Attr {
	return []*Attr{
		{
			Pkg: "sa", Name: "MCMemberRecord", ID: 0x0038, Size: 52, Prefix: "mcr", SAVar: "MCMemberRecord", Stride: 7,
			Doc: "MCMemberRecord is a multicast group member.",
			Fields: []Field{
				{Name: "MGID", Bit: 0, Width: 128, Kind: mad.Bytes, Comp: c(0)},
				{Name: "PortGID", Bit: 128, Width: 128, Kind: mad.Bytes, Comp: c(1)},
				{Name: "Q_Key", Bit: 256, Width: 32, Kind: mad.Hex, Comp: c(2)},
				{Name: "MLID", Bit: 288, Width: 16, Kind: mad.Hex, Comp: c(3)},
				{Name: "MTUSelector", Bit: 304, Width: 2, Comp: c(4)},
				{Name: "MTU", Bit: 306, Width: 6, Comp: c(5)},
				{Name: "TClass", Bit: 312, Width: 8, Comp: c(6)},
				{Name: "P_Key", Bit: 320, Width: 16, Kind: mad.Hex, Comp: c(7)},
				{Name: "RateSelector", Bit: 336, Width: 2, Comp: c(8)},
				{Name: "Rate", Bit: 338, Width: 6, Comp: c(9)},
				{Name: "PacketLifeTimeSelector", Bit: 344, Width: 2, Comp: c(10)},
				{Name: "PacketLifeTime", Bit: 346, Width: 6, Comp: c(11)},
				{Name: "SL", Bit: 352, Width: 4, Comp: c(12)},
				{Name: "FlowLabel", Bit: 356, Width: 20, Kind: mad.Hex, Comp: c(13)},
				{Name: "HopLimit", Bit: 376, Width: 8, Comp: c(14)},
				{Name: "Scope", Bit: 384, Width: 4, Comp: c(15)},
				{Name: "JoinState", Bit: 388, Width: 4, Kind: mad.Hex, Comp: c(16)},
				{Name: "ProxyJoin", Bit: 392, Width: 1, Comp: c(17)},
			},
		},
		{
			Pkg: "sa", Name: "MultiPathRecord", ID: 0x003a, Size: 24, Prefix: "mpr", SAVar: "MultiPathRecord", Stride: 3,
			GapComps: true,
			Doc:      "MultiPathRecord (OpenSM ib_multipath_rec_t) is 24 bytes of path properties followed by SGIDCount source and DGIDCount destination GIDs (16 bytes each); the layout is the fixed part, MPRGIDs reads the GIDs. It is queried with GetMulti, answered with PathRecords.",
			Fields: []Field{
				{Name: "RawTraffic", Bit: 0, Width: 1},
				{Name: "FlowLabel", Bit: 4, Width: 20, Kind: mad.Hex},
				{Name: "HopLimit", Bit: 24, Width: 8},
				{Name: "TClass", Bit: 32, Width: 8},
				{Name: "Reversible", Bit: 40, Width: 1},
				{Name: "NumbPath", Bit: 41, Width: 7},
				{Name: "P_Key", Bit: 48, Width: 16, Kind: mad.Hex},
				{Name: "QOSClass", Bit: 64, Width: 12},
				{Name: "SL", Bit: 76, Width: 4},
				{Name: "MTUSelector", Bit: 80, Width: 2},
				{Name: "MTU", Bit: 82, Width: 6},
				{Name: "RateSelector", Bit: 88, Width: 2},
				{Name: "Rate", Bit: 90, Width: 6},
				{Name: "PacketLifeTimeSelector", Bit: 96, Width: 2},
				{Name: "PacketLifeTime", Bit: 98, Width: 6},
				{Name: "ServiceID8MSB", Bit: 104, Width: 8, Kind: mad.Hex},
				{Name: "IndependenceSelector", Bit: 112, Width: 2},
				{Name: "SGIDCount", Bit: 120, Width: 8},
				{Name: "DGIDCount", Bit: 128, Width: 8},
				{Name: "ServiceID56LSB", Bit: 136, Width: 56, Kind: mad.Hex},
			},
		},
	}
}

// saTableAttrs are the records of the ports' and switches' tables, SMs
// and subscriptions.
func saTableAttrs() []*Attr {
	return []*Attr{
		{
			Pkg: "sa", Name: "SLtoVLMappingTableRecord", ID: 0x0013, Size: 16, Prefix: "slvlr", SAVar: "SLtoVLMappingTableRecord", Stride: 2,
			Aliases: []string{"SL2VLTableRecord", "SLVLTableRecord"},
			Doc:     "SLtoVLMappingTableRecord is the SLtoVLMappingTable of a port (OpenSM ib_slvl_table_record_t): for a switch, of one input to output port pair.",
			Fields: []Field{
				{Name: "LID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "InputPortNum", Bit: 16, Width: 8, Comp: c(1)},
				{Name: "OutputPortNum", Bit: 24, Width: 8, Comp: c(2)},
				{Name: "SLtoVLMappingTable", Bit: 64, Width: 64, Embed: "SLtoVLMappingTable"},
			},
		},
		{
			Pkg: "sa", Name: "MulticastForwardingTableRecord", ID: 0x0017, Size: 72, Prefix: "mftr", SAVar: "MulticastForwardingTableRecord", Stride: 9,
			Aliases: []string{"MFTRecord"},
			Doc:     "MulticastForwardingTableRecord is one block of a switch's MulticastForwardingTable (OpenSM ib_mft_record_t).",
			Fields: []Field{
				{Name: "LID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "Position", Bit: 16, Width: 4, Comp: c(1)},
				{Name: "BlockNum", Bit: 23, Width: 9, Comp: c(3)},
				{Name: "MulticastForwardingTable", Bit: 64, Width: 512, Embed: "MulticastForwardingTable"},
			},
		},
		{
			Pkg: "sa", Name: "SMInfoRecord", ID: 0x0018, Size: 32, Prefix: "smir", SAVar: "SMInfoRecord", Stride: 4,
			Doc: "SMInfoRecord is the SMInfo of a subnet manager with the LID of its port (OpenSM ib_sminfo_record_t); OpenSM blanks SM_Key unless the query carries the SM_Key.",
			Fields: []Field{
				{Name: "LID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "SMInfo", Bit: 32, Width: 168, Embed: "SMInfo", Comp: c(2)},
			},
		},
		{
			Pkg: "sa", Name: "VLArbitrationTableRecord", ID: 0x0036, Size: 72, Prefix: "vlar", SAVar: "VLArbitrationTableRecord", Stride: 9,
			Aliases: []string{"VLArbTableRecord"},
			Doc:     "VLArbitrationTableRecord is one block of a port's VLArbitrationTable (OpenSM ib_vl_arb_table_record_t); BlockNum is the attribute modifier's 1 to 4.",
			Fields: []Field{
				{Name: "LID", Bit: 0, Width: 16, Comp: c(0)},
				{Name: "OutputPortNum", Bit: 16, Width: 8, Comp: c(1)},
				{Name: "BlockNum", Bit: 24, Width: 8, Comp: c(2)},
				{Name: "VLArbitrationTable", Bit: 64, Width: 512, Embed: "VLArbitrationTable"},
			},
		},
		{
			Pkg: "sa", Name: "InformInfoRecord", ID: 0x00F3, Size: 64, Prefix: "iir", SAVar: "InformInfoRecord", Stride: 8,
			Doc: "InformInfoRecord is one trap subscription the SA holds (OpenSM ib_inform_info_record_t).",
			Fields: []Field{
				{Name: "SubscriberGID", Bit: 0, Width: 128, Kind: mad.Bytes, Comp: c(0)},
				{Name: "Enum", Bit: 128, Width: 16, Comp: c(1)},
				{Name: "InformInfo", Bit: 192, Width: 288, Embed: "InformInfo", Comp: c(3)},
			},
		},
	}
}
