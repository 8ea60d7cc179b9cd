package main

import "github.com/ibscript/ibscript/mad"

// PerfMgt attributes (class 0x04): mad-formats.md section 9, IBA vol. 1
// chapter 16.1, rdma-core libibmad's field table.
func perfAttrs() []*Attr {
	return []*Attr{
		{Pkg: "perf", Name: "ClassPortInfo", Ref: "ClassPortInfo"},
		{
			Pkg: "perf", Name: "PortCounters", ID: 0x0012, Size: 44, Prefix: "pc", Type: "PortCounters",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortCounters is the PortCounters attribute: the error and traffic counters of one port (PortSelect), 16 and 32 bits wide, saturating. PortXmitData and PortRcvData count 4-byte words.",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8},
				{Name: "CounterSelect", Bit: 16, Width: 16, Kind: mad.Hex},
				{Name: "SymbolErrorCounter", Bit: 32, Width: 16},
				{Name: "LinkErrorRecoveryCounter", Bit: 48, Width: 8},
				{Name: "LinkDownedCounter", Bit: 56, Width: 8},
				{Name: "PortRcvErrors", Bit: 64, Width: 16},
				{Name: "PortRcvRemotePhysicalErrors", Bit: 80, Width: 16},
				{Name: "PortRcvSwitchRelayErrors", Bit: 96, Width: 16},
				{Name: "PortXmitDiscards", Bit: 112, Width: 16},
				{Name: "PortXmitConstraintErrors", Bit: 128, Width: 8},
				{Name: "PortRcvConstraintErrors", Bit: 136, Width: 8},
				{Name: "CounterSelect2", Bit: 144, Width: 8, Kind: mad.Hex},
				{Name: "LocalLinkIntegrityErrors", Bit: 152, Width: 4, Doc: "4 bits"},
				{Name: "ExcessiveBufferOverrunErrors", Bit: 156, Width: 4, Doc: "4 bits"},
				{Name: "QP1Dropped", Bit: 160, Width: 16},
				{Name: "VL15Dropped", Bit: 176, Width: 16},
				{Name: "PortXmitData", Bit: 192, Width: 32, Doc: "4-byte words"},
				{Name: "PortRcvData", Bit: 224, Width: 32, Doc: "4-byte words"},
				{Name: "PortXmitPkts", Bit: 256, Width: 32},
				{Name: "PortRcvPkts", Bit: 288, Width: 32},
				{Name: "PortXmitWait", Bit: 320, Width: 32},
			},
		},
		{
			Pkg: "perf", Name: "PortCountersExtended", ID: 0x001D, Size: 184, Prefix: "pce", Type: "PortCountersExtended",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortCountersExtended is the PortCountersExtended attribute: the 64-bit counters of one port. The fields from SymbolErrorCounter on are the additional counters (byte 72 on), present when the PMA's ClassPortInfo has Cap2AdditionalPortCounters; otherwise those bytes are reserved and read as zero.",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8},
				{Name: "CounterSelect", Bit: 16, Width: 16, Kind: mad.Hex},
				{Name: "CounterSelect2", Bit: 32, Width: 32, Kind: mad.Hex},
				{Name: "PortXmitData", Bit: 64, Width: 64, Doc: "4-byte words"},
				{Name: "PortRcvData", Bit: 128, Width: 64, Doc: "4-byte words"},
				{Name: "PortXmitPkts", Bit: 192, Width: 64},
				{Name: "PortRcvPkts", Bit: 256, Width: 64},
				{Name: "PortUnicastXmitPkts", Bit: 320, Width: 64},
				{Name: "PortUnicastRcvPkts", Bit: 384, Width: 64},
				{Name: "PortMulticastXmitPkts", Bit: 448, Width: 64},
				{Name: "PortMulticastRcvPkts", Bit: 512, Width: 64},
				{Name: "SymbolErrorCounter", Bit: 576, Width: 64},
				{Name: "LinkErrorRecoveryCounter", Bit: 640, Width: 64},
				{Name: "LinkDownedCounter", Bit: 704, Width: 64},
				{Name: "PortRcvErrors", Bit: 768, Width: 64},
				{Name: "PortRcvRemotePhysicalErrors", Bit: 832, Width: 64},
				{Name: "PortRcvSwitchRelayErrors", Bit: 896, Width: 64},
				{Name: "PortXmitDiscards", Bit: 960, Width: 64},
				{Name: "PortXmitConstraintErrors", Bit: 1024, Width: 64},
				{Name: "PortRcvConstraintErrors", Bit: 1088, Width: 64},
				{Name: "LocalLinkIntegrityErrors", Bit: 1152, Width: 64},
				{Name: "ExcessiveBufferOverrunErrors", Bit: 1216, Width: 64},
				{Name: "VL15Dropped", Bit: 1280, Width: 64},
				{Name: "PortXmitWait", Bit: 1344, Width: 64},
				{Name: "QP1Dropped", Bit: 1408, Width: 64},
			},
		},
	}
}
