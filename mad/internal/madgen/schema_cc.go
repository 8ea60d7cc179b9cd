package main

import (
	"slices"

	"github.com/ibscript/ibscript/mad"
)

// Congestion Control attributes (class 0x21, class version 2): IBA vol. 1
// Annex A10 (A10.4.3), rdma-core libibmad's field table (the IB_CC_*
// rows of fields.c) and infiniband-diags' ibccquery, whose names they
// keep. CongestionLog sits in the MAD's log data (from byte 32), every
// other attribute in its management data (from byte 64).
func ccAttrs() []*Attr {
	return slices.Concat(ccFromClassPortInfo(), ccFromSwitchCongestionSetting())
}

// ccFromClassPortInfo is the cc schema from ClassPortInfo on (part of ccAttrs).
func ccFromClassPortInfo() []*Attr {
	return []*Attr{
		{Pkg: "cc", Name: "ClassPortInfo", Ref: "ClassPortInfo", Aliases: []string{"CP"}},
		{
			Pkg: "cc", Name: "CongestionInfo", ID: 0x0011, Size: 4, Prefix: "ci", Type: "CongestionInfo",
			Aliases: []string{"CI"},
			Mod:     "none (0)",
			Doc:     "CongestionInfo is the CongestionInfo attribute: which congestion control the node supports and how many 64-entry blocks its CongestionControlTable has (ibccquery CongestionInfo).",
			Fields: []Field{
				{Name: "CongestionInfo", Bit: 0, Width: 16, Kind: mad.Hex, Doc: "capability bits (IBA A10.4.3.3)", Go: "Info"},
				{Name: "ControlTableCap", Bit: 16, Width: 8, Doc: "64-entry blocks of the CongestionControlTable (CA)"},
			},
		},
		{
			Pkg: "cc", Name: "CongestionKeyInfo", ID: 0x0012, Size: 16, Prefix: "cki", Type: "CongestionKeyInfo",
			Aliases: []string{"CK"},
			Mod:     "none (0)",
			Doc:     "CongestionKeyInfo is the CongestionKeyInfo attribute: the node's CC_Key and its protection (ibccquery CongestionKeyInfo). Its CC_Key is a secret: masked wherever ibscript shows or records it.",
			Fields: []Field{
				{Name: "CC_Key", Bit: 0, Width: 64, Kind: mad.Hex},
				{Name: "CC_KeyProtectBit", Bit: 64, Width: 1},
				{Name: "CC_KeyLeasePeriod", Bit: 80, Width: 16, Doc: "seconds"},
				{Name: "CC_KeyViolations", Bit: 96, Width: 16},
			},
		},
		{
			Pkg: "cc", Name: "CongestionLog", ID: 0x0013, Size: 220, Prefix: "cl", Type: "CongestionLog",
			Aliases: []string{"CongestionLogSwitch", "CL"},
			Mod:     "none (0)",
			Doc:     "CongestionLog is the CongestionLog attribute of a switch (LogType 1): the ports that saw congestion and the last 15 marking events (ibccquery CongestionLog). It sits in the MAD's log data, from byte 32; a CA answers in the CongestionLogCA layout.",
			Fields: []Field{
				{Name: "LogType", Bit: 0, Width: 8, Enum: enumLogType},
				{Name: "CongestionFlags", Bit: 8, Width: 8, Kind: mad.Hex},
				{Name: "LogEventsCounter", Bit: 16, Width: 16},
				{Name: "CurrentTimeStamp", Bit: 32, Width: 32, Doc: "1.024 us units"},
				{Name: "PortMap", Bit: 64, Width: 256, Kind: mad.Bytes, Doc: "bit i: port i saw congestion"},
				{Name: "SLID", Bit: 320, Width: 16, Count: 15, Stride: 96, Doc: "event i's source LID"},
				{Name: "DLID", Bit: 336, Width: 16, Count: 15, Stride: 96, Doc: "its destination LID"},
				{Name: "SL", Bit: 352, Width: 4, Count: 15, Stride: 96, Doc: "its SL"},
				{Name: "Timestamp", Bit: 384, Width: 32, Count: 15, Stride: 96, Doc: "its time"},
			},
		},
		{
			Pkg: "cc", Name: "CongestionLogCA", ID: 0x0013, Alt: true, Const: "AttrCongestionLog", Size: 220, Prefix: "clca", Type: "CongestionLogCA",
			Mod: "none (0)",
			Doc: "CongestionLogCA is the CongestionLog attribute of a CA (LogType 2): the threshold events and the last 13 congestion notifications received, in libibmad's layout (entries from byte 12, 16 bytes each). It sits in the MAD's log data, from byte 32.",
			Fields: []Field{
				{Name: "LogType", Bit: 0, Width: 8, Enum: enumLogType},
				{Name: "CongestionFlags", Bit: 8, Width: 8, Kind: mad.Hex},
				{Name: "ThresholdEventCounter", Bit: 16, Width: 16},
				{Name: "ThresholdCongestionEventMap", Bit: 32, Width: 16, Kind: mad.Hex, Doc: "bit i: SL i crossed its threshold"},
				{Name: "CurrentTimeStamp", Bit: 64, Width: 32, Doc: "1.024 us units"},
				{Name: "Local_QP_CN_Entry", Bit: 96, Width: 24, Count: 13, Stride: 128, Doc: "entry i's local QP"},
				{Name: "SL_CN_Entry", Bit: 120, Width: 4, Count: 13, Stride: 128},
				{Name: "Service_Type_CN_Entry", Bit: 124, Width: 4, Kind: mad.Hex, Count: 13, Stride: 128},
				{Name: "Remote_QP_Number_CN_Entry", Bit: 128, Width: 24, Count: 13, Stride: 128},
				{Name: "Local_LID_CN", Bit: 160, Width: 16, Count: 13, Stride: 128},
				{Name: "Remote_LID_CN_Entry", Bit: 176, Width: 16, Count: 13, Stride: 128},
				{Name: "Timestamp_CN_Entry", Bit: 192, Width: 32, Count: 13, Stride: 128},
			},
		},
	}
}

// ccFromSwitchCongestionSetting is the cc schema from SwitchCongestionSetting on (part of ccAttrs).
func ccFromSwitchCongestionSetting() []*Attr {
	return []*Attr{
		{
			Pkg: "cc", Name: "SwitchCongestionSetting", ID: 0x0014, Size: 76, Prefix: "scs", Type: "SwitchCongestionSetting",
			Aliases: []string{"SS"},
			Mod:     "none (0)",
			Doc:     "SwitchCongestionSetting is the SwitchCongestionSetting attribute: how a switch marks congestion, per port (ibccquery SwitchCongestionSetting).",
			Fields: []Field{
				{Name: "Control_Map", Bit: 0, Width: 32, Kind: mad.Hex, Doc: "which of the following fields a Set changes"},
				{Name: "Victim_Mask", Bit: 32, Width: 256, Kind: mad.Bytes, Doc: "bit i: port i is a victim port"},
				{Name: "Credit_Mask", Bit: 288, Width: 256, Kind: mad.Bytes, Doc: "bit i: port i signals credit starvation"},
				{Name: "Threshold", Bit: 544, Width: 4, Kind: mad.Hex},
				{Name: "Packet_Size", Bit: 552, Width: 8, Doc: "64-byte units"},
				{Name: "CS_Threshold", Bit: 560, Width: 4, Kind: mad.Hex},
				{Name: "CS_ReturnDelay", Bit: 576, Width: 16, Kind: mad.Hex},
				{Name: "Marking_Rate", Bit: 592, Width: 16},
			},
		},
		{
			Pkg: "cc", Name: "SwitchPortCongestionSetting", ID: 0x0015, Size: 128, Prefix: "spcs", Type: "SwitchPortCongestionSetting",
			Aliases: []string{"SP"},
			Mod:     "block: ports 32*mod to 32*mod+31",
			Doc:     "SwitchPortCongestionSetting is one block of the SwitchPortCongestionSetting attribute: the congestion settings of 32 switch ports, element i for port 32*block+i (ibccquery SwitchPortCongestionSetting, which reads 48 ports per block).",
			Fields: []Field{
				{Name: "Valid", Bit: 0, Width: 1, Count: 32, Stride: 32, Doc: "element i is valid"},
				{Name: "Control_Type", Bit: 1, Width: 1, Count: 32, Stride: 32, Doc: "0 congestion, 1 credit starvation"},
				{Name: "Threshold", Bit: 4, Width: 4, Kind: mad.Hex, Count: 32, Stride: 32},
				{Name: "Packet_Size", Bit: 8, Width: 8, Count: 32, Stride: 32, Doc: "64-byte units"},
				{Name: "Cong_Parm_Marking_Rate", Bit: 16, Width: 16, Count: 32, Stride: 32},
			},
		},
		{
			Pkg: "cc", Name: "CACongestionSetting", ID: 0x0016, Size: 132, Prefix: "cacs", Type: "CACongestionSetting",
			Aliases: []string{"CS"},
			Mod:     "none (0)",
			Doc:     "CACongestionSetting is the CACongestionSetting attribute: how a CA reacts to congestion notifications, per SL (ibccquery CACongestionSetting).",
			Fields: []Field{
				{Name: "Port_Control", Bit: 0, Width: 16, Kind: mad.Hex},
				{Name: "Control_Map", Bit: 16, Width: 16, Kind: mad.Hex, Doc: "bit i: SL i's entry is set"},
				{Name: "CCTI_Timer", Bit: 32, Width: 16, Count: 16, Stride: 64, Doc: "SL i's timer, 1.024 us units"},
				{Name: "CCTI_Increase", Bit: 48, Width: 8, Count: 16, Stride: 64},
				{Name: "Trigger_Threshold", Bit: 56, Width: 8, Count: 16, Stride: 64},
				{Name: "CCTI_Min", Bit: 64, Width: 8, Count: 16, Stride: 64},
			},
		},
		{
			Pkg: "cc", Name: "CongestionControlTable", ID: 0x0017, Size: 132, Prefix: "cct", Type: "CongestionControlTable",
			Aliases: []string{"CT"},
			Mod:     "block: entries 64*mod to 64*mod+63",
			Doc:     "CongestionControlTable is one block of a CA's CongestionControlTable: its CCTI_Limit and 64 entries of the inter-packet delay, entry i of block b being index 64*b+i (ibccquery CongestionControlTable).",
			Fields: []Field{
				{Name: "CCTI_Limit", Bit: 0, Width: 16, Doc: "the largest valid index"},
				{Name: "CCT_Shift", Bit: 32, Width: 2, Count: 64, Stride: 16},
				{Name: "CCT_Multiplier", Bit: 34, Width: 14, Count: 64, Stride: 16},
			},
		},
		{
			Pkg: "cc", Name: "Timestamp", ID: 0x0018, Size: 4, Prefix: "ts", Type: "Timestamp",
			Aliases: []string{"TI"},
			Mod:     "none (0)",
			Doc:     "Timestamp is the Timestamp attribute: the CC agent's free-running clock (ibccquery Timestamp).",
			Fields: []Field{
				{Name: "Timestamp", Bit: 0, Width: 32, Doc: "1.024 us units", Go: "Time"},
			},
		},
	}
}

// enumLogType names CongestionLog's LogType.
var enumLogType = map[uint64]string{1: "Switch", 2: "CA"}
