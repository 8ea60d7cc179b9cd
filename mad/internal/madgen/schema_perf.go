package main

import (
	"slices"

	"github.com/ibscript/ibscript/mad"
)

// PerfMgt attributes (class 0x04): mad-formats.md section 9, IBA vol. 1
// chapter 16.1, rdma-core libibmad's field table.
func perfAttrs() []*Attr {
	return slices.Concat(perfFromClassPortInfo(), perfFromPortSamplesControl(), perfFromPortOpRcvCounters(), perfFromPortExtendedSpeedsCounters(), perfFromPortXmitConCtrl())
}

// perfFromClassPortInfo is the perf schema from ClassPortInfo on (part of perfAttrs).
func perfFromClassPortInfo() []*Attr {
	return []*Attr{
		{Pkg: "perf", Name: "ClassPortInfo", Ref: "ClassPortInfo"},
		{
			Pkg: "perf", Name: "PortCounters", ID: 0x0012, Size: 44, Prefix: "pc", Type: "PortCounters",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortCounters is the PortCounters attribute: the error and traffic counters of one port (PortSelect), 16 and 32 bits wide, saturating. PortXmitData and PortRcvData count 4-byte words.",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "SymbolErrorCounter", Bit: 32, Width: 16, Counter: true, Prom: "symbol_error_total", Select: 1, Dump: mad.DumpUint},
				{Name: "LinkErrorRecoveryCounter", Bit: 48, Width: 8, Counter: true, Prom: "link_error_recovery_total", Select: 2, Dump: mad.DumpUint},
				{Name: "LinkDownedCounter", Bit: 56, Width: 8, Counter: true, Prom: "link_downed_total", Select: 3, Dump: mad.DumpUint},
				{Name: "PortRcvErrors", Bit: 64, Width: 16, Counter: true, Prom: "receive_errors_total", Select: 4, Dump: mad.DumpUint},
				{Name: "PortRcvRemotePhysicalErrors", Bit: 80, Width: 16, Counter: true, Prom: "receive_remote_physical_errors_total", Select: 5, Dump: mad.DumpUint},
				{Name: "PortRcvSwitchRelayErrors", Bit: 96, Width: 16, Counter: true, Prom: "receive_switch_relay_errors_total", Select: 6, Dump: mad.DumpUint},
				{Name: "PortXmitDiscards", Bit: 112, Width: 16, Counter: true, Prom: "transmit_discards_total", Select: 7, Dump: mad.DumpUint},
				{Name: "PortXmitConstraintErrors", Bit: 128, Width: 8, Counter: true, Prom: "transmit_constraint_errors_total", Select: 8, Dump: mad.DumpUint},
				{Name: "PortRcvConstraintErrors", Bit: 136, Width: 8, Counter: true, Prom: "receive_constraint_errors_total", Select: 9, Dump: mad.DumpUint},
				{Name: "CounterSelect2", Bit: 144, Width: 8, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "LocalLinkIntegrityErrors", Bit: 152, Width: 4, Counter: true, Prom: "local_link_integrity_errors_total", Select: 10, Dump: mad.DumpUint, Doc: "4 bits"},
				{Name: "ExcessiveBufferOverrunErrors", Bit: 156, Width: 4, Counter: true, Prom: "excessive_buffer_overrun_errors_total", Select: 11, Dump: mad.DumpUint, Doc: "4 bits"},
				{Name: "QP1Dropped", Bit: 160, Width: 16, Counter: true, Prom: "qp1_dropped_total", Dump: mad.DumpQP1Dropped},
				{Name: "VL15Dropped", Bit: 176, Width: 16, Counter: true, Prom: "vl15_dropped_total", Select: 12, Dump: mad.DumpUint},
				{Name: "PortXmitData", Bit: 192, Width: 32, Counter: true, Select: 13, Dump: mad.DumpUint, Doc: "4-byte words"},
				{Name: "PortRcvData", Bit: 224, Width: 32, Counter: true, Select: 14, Dump: mad.DumpUint, Doc: "4-byte words"},
				{Name: "PortXmitPkts", Bit: 256, Width: 32, Counter: true, Select: 15, Dump: mad.DumpUint},
				{Name: "PortRcvPkts", Bit: 288, Width: 32, Counter: true, Select: 16, Dump: mad.DumpUint},
				{Name: "PortXmitWait", Bit: 320, Width: 32, Counter: true, Prom: "transmit_wait_total", Select: 17, Cap: "CapPortXmitWait", Dump: mad.DumpUint},
			},
		},
		{
			Pkg: "perf", Name: "PortCountersExtended", ID: 0x001D, Size: 184, Prefix: "pce", Type: "PortCountersExtended",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortCountersExtended is the PortCountersExtended attribute: the 64-bit counters of one port. The fields from SymbolErrorCounter on are the additional counters (byte 72 on), present when the PMA's ClassPortInfo has Cap2AdditionalPortCounters; otherwise those bytes are reserved and read as zero.",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "CounterSelect2", Bit: 32, Width: 32, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortXmitData", Bit: 64, Width: 64, Counter: true, Prom: "transmit_data_bytes_total", Dump: mad.DumpUint, Doc: "4-byte words"},
				{Name: "PortRcvData", Bit: 128, Width: 64, Counter: true, Prom: "receive_data_bytes_total", Dump: mad.DumpUint, Doc: "4-byte words"},
				{Name: "PortXmitPkts", Bit: 192, Width: 64, Counter: true, Prom: "transmit_packets_total", Dump: mad.DumpUint},
				{Name: "PortRcvPkts", Bit: 256, Width: 64, Counter: true, Prom: "receive_packets_total", Dump: mad.DumpUint},
				{Name: "PortUnicastXmitPkts", Bit: 320, Width: 64, Counter: true, Prom: "unicast_transmit_packets_total", Cap: "CapExtendedWidth", Dump: mad.DumpUint},
				{Name: "PortUnicastRcvPkts", Bit: 384, Width: 64, Counter: true, Prom: "unicast_receive_packets_total", Cap: "CapExtendedWidth", Dump: mad.DumpUint},
				{Name: "PortMulticastXmitPkts", Bit: 448, Width: 64, Counter: true, Prom: "multicast_transmit_packets_total", Cap: "CapExtendedWidth", Dump: mad.DumpUint},
				{Name: "PortMulticastRcvPkts", Bit: 512, Width: 64, Counter: true, Prom: "multicast_receive_packets_total", Cap: "CapExtendedWidth", Dump: mad.DumpUint},
				{Name: "SymbolErrorCounter", Bit: 576, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "LinkErrorRecoveryCounter", Bit: 640, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "LinkDownedCounter", Bit: 704, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "PortRcvErrors", Bit: 768, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "PortRcvRemotePhysicalErrors", Bit: 832, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "PortRcvSwitchRelayErrors", Bit: 896, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "PortXmitDiscards", Bit: 960, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "PortXmitConstraintErrors", Bit: 1024, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "PortRcvConstraintErrors", Bit: 1088, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "LocalLinkIntegrityErrors", Bit: 1152, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "ExcessiveBufferOverrunErrors", Bit: 1216, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "VL15Dropped", Bit: 1280, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "PortXmitWait", Bit: 1344, Width: 64, Counter: true, Dump: mad.DumpUint},
				{Name: "QP1Dropped", Bit: 1408, Width: 64, Counter: true, Dump: mad.DumpUint},
			},
		},
	}
}

// perfFromPortSamplesControl is the perf schema from PortSamplesControl on (part of perfAttrs).
func perfFromPortSamplesControl() []*Attr {
	return []*Attr{
		{
			Pkg: "perf", Name: "PortSamplesControl", ID: 0x0010, Size: 80, Prefix: "psc", Type: "PortSamplesControl",
			Mod: "none (0)",
			Doc: "PortSamplesControl is the PortSamplesControl attribute: the PMA's sampling engine, which counts up to 15 selected counters over an interval.",
			Fields: []Field{
				{Name: "OpCode", Bit: 0, Width: 8, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "Tick", Bit: 16, Width: 8, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "CounterWidth", Bit: 29, Width: 3, Dump: mad.DumpUint},
				{Name: "CounterMask0", Bit: 34, Width: 3, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "CounterMasks1to9", Bit: 37, Width: 27, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "CounterMasks10to14", Bit: 65, Width: 15, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "SampleMechanisms", Bit: 80, Width: 8, Dump: mad.DumpUint},
				{Name: "SampleStatus", Bit: 94, Width: 2, Dump: mad.DumpUint, Enum: map[uint64]string{0: "Done", 1: "Started", 2: "Running"}},
				{Name: "OptionMask", Bit: 96, Width: 64, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "VendorMask", Bit: 160, Width: 64, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "SampleStart", Bit: 224, Width: 32, Dump: mad.DumpUint},
				{Name: "SampleInterval", Bit: 256, Width: 32, Dump: mad.DumpUint},
				{Name: "Tag", Bit: 288, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "CounterSelect", Bit: 304, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex, Count: 15, Stride: 16},
				{Name: "SamplesOnlyOptionMask", Bit: 576, Width: 64, Dump: mad.DumpHex, Kind: mad.Hex},
			},
		},
		{
			Pkg: "perf", Name: "PortSamplesResult", ID: 0x0011, Size: 64, Prefix: "psr", Type: "PortSamplesResult",
			Mod: "none (0)",
			Doc: "PortSamplesResult is the PortSamplesResult attribute: the 15 counters of the last sample.",
			Fields: []Field{
				{Name: "Tag", Bit: 0, Width: 16, Kind: mad.Hex},
				{Name: "SampleStatus", Bit: 30, Width: 2},
				{Name: "Counter", Bit: 32, Width: 32, Count: 15, Stride: 32},
			},
		},
		{
			Pkg: "perf", Name: "PortRcvErrorDetails", ID: 0x0015, Size: 16, Prefix: "pred", Type: "PortRcvErrorDetails",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortRcvErrorDetails is the PortRcvErrorDetails attribute: what the PortRcvErrors of a port were (perfquery -E).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortLocalPhysicalErrors", Bit: 32, Width: 16, Counter: true, Prom: "local_physical_errors_total", Dump: mad.DumpUint},
				{Name: "PortMalformedPacketErrors", Bit: 48, Width: 16, Counter: true, Prom: "malformed_packet_errors_total", Dump: mad.DumpUint, IB: "PortMalformedPktErrors"},
				{Name: "PortBufferOverrunErrors", Bit: 64, Width: 16, Counter: true, Prom: "buffer_overrun_errors_total", Dump: mad.DumpUint},
				{Name: "PortDLIDMappingErrors", Bit: 80, Width: 16, Counter: true, Prom: "dli_mapping_errors_total", Dump: mad.DumpUint},
				{Name: "PortVLMappingErrors", Bit: 96, Width: 16, Counter: true, Prom: "vl_mapping_errors_total", Dump: mad.DumpUint},
				{Name: "PortLoopingErrors", Bit: 112, Width: 16, Counter: true, Prom: "looping_errors_total", Dump: mad.DumpUint},
			},
		},
		{
			Pkg: "perf", Name: "PortXmitDiscardDetails", ID: 0x0016, Size: 12, Prefix: "pxdd", Type: "PortXmitDiscardDetails",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortXmitDiscardDetails is the PortXmitDiscardDetails attribute: why a port discarded packets it was to send (perfquery -D).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortInactiveDiscards", Bit: 32, Width: 16, Counter: true, Prom: "inactive_discards_total", Dump: mad.DumpUint},
				{Name: "PortNeighborMTUDiscards", Bit: 48, Width: 16, Counter: true, Prom: "neighbor_mtu_discards_total", Dump: mad.DumpUint},
				{Name: "PortSwLifetimeLimitDiscards", Bit: 64, Width: 16, Counter: true, Prom: "sw_lifetime_limit_discards_total", Dump: mad.DumpUint},
				{Name: "PortSwHOQLifetimeLimitDiscards", Bit: 80, Width: 16, Counter: true, Prom: "sw_hoq_lifetime_limit_discards_total", Dump: mad.DumpUint},
			},
		},
	}
}

// perfFromPortOpRcvCounters is the perf schema from PortOpRcvCounters on (part of perfAttrs).
func perfFromPortOpRcvCounters() []*Attr {
	return []*Attr{
		{
			Pkg: "perf", Name: "PortOpRcvCounters", ID: 0x0017, Size: 12, Prefix: "porc", Type: "PortOpRcvCounters",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortOpRcvCounters is the PortOpRcvCounters attribute: packets and data words a port received with one opcode (perfquery --oprcvcounters).",
			Fields: []Field{
				{Name: "OpCode", Bit: 0, Width: 8, Kind: mad.Hex},
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortOpRcvPkts", Bit: 32, Width: 32, Dump: mad.DumpUint},
				{Name: "PortOpRcvData", Bit: 64, Width: 32, Dump: mad.DumpUint},
			},
		},
		{
			Pkg: "perf", Name: "PortFlowCtlCounters", ID: 0x0018, Size: 12, Prefix: "pfc", Type: "PortFlowCtlCounters",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortFlowCtlCounters is the PortFlowCtlCounters attribute: flow control packets a port sent and received (perfquery --flowctlcounters).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortXmitFlowPkts", Bit: 32, Width: 32, Dump: mad.DumpUint},
				{Name: "PortRcvFlowPkts", Bit: 64, Width: 32, Dump: mad.DumpUint},
			},
		},
		{
			Pkg: "perf", Name: "PortVLOpPackets", ID: 0x0019, Size: 36, Prefix: "pvop", Type: "PortVLOpPackets",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortVLOpPackets is the PortVLOpPackets attribute: packets received per VL (perfquery --vloppackets).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortVLOpPackets", Bit: 32, Width: 16, Dump: mad.DumpUint, Count: 16, Stride: 16, Doc: "VL i"},
			},
		},
		{
			Pkg: "perf", Name: "PortVLOpData", ID: 0x001A, Size: 68, Prefix: "pvod", Type: "PortVLOpData",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortVLOpData is the PortVLOpData attribute: data words received per VL (perfquery --vlopdata).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortVLOpData", Bit: 32, Width: 32, Dump: mad.DumpUint, Count: 16, Stride: 32, Doc: "VL i"},
			},
		},
		{
			Pkg: "perf", Name: "PortVLXmitFlowCtlUpdateErrors", ID: 0x001B, Size: 8, Prefix: "pvfe", Type: "PortVLXmitFlowCtlUpdateErrors",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortVLXmitFlowCtlUpdateErrors is the PortVLXmitFlowCtlUpdateErrors attribute: 2-bit counts of flow control updates missed per VL (perfquery --vlxmitflowctlerrors).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortVLXmitFlowCtlUpdateErrors", Bit: 32, Width: 2, Dump: mad.DumpUint, Count: 16, Stride: 2, Doc: "VL i, 2 bits"},
			},
		},
		{
			Pkg: "perf", Name: "PortVLXmitWaitCounters", ID: 0x001C, Size: 36, Prefix: "pvxw", Type: "PortVLXmitWaitCounters",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortVLXmitWaitCounters is the PortVLXmitWaitCounters attribute: ticks a port had data to send but no credit, per VL (perfquery --vlxmitcounters).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortVLXmitWait", Bit: 32, Width: 16, Dump: mad.DumpUint, Count: 16, Stride: 16, Doc: "VL i"},
			},
		},
	}
}

// perfFromPortExtendedSpeedsCounters is the perf schema from PortExtendedSpeedsCounters on (part of perfAttrs).
func perfFromPortExtendedSpeedsCounters() []*Attr {
	return []*Attr{
		{
			Pkg: "perf", Name: "PortExtendedSpeedsCounters", ID: 0x001F, Size: 140, Prefix: "pesc", Type: "PortExtendedSpeedsCounters",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortExtendedSpeedsCounters is the PortExtendedSpeedsCounters attribute, in the layout without RS-FEC: per-lane error detection and FEC block counters of an FDR or faster link (perfquery -T).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 64, Width: 64, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "SyncHeaderErrorCounter", Bit: 128, Width: 16, Dump: mad.DumpUint},
				{Name: "UnknownBlockCounter", Bit: 144, Width: 16, Dump: mad.DumpUint},
				{Name: "ErrorDetectionCounterLane", Bit: 160, Width: 16, Dump: mad.DumpUint, Count: 12, Stride: 16, Doc: "lane i"},
				{Name: "FECCorrectableBlockCounterLane", Bit: 352, Width: 32, Dump: mad.DumpUint, IB: "FECCorrectableBlockCtrLane", Count: 12, Stride: 32, Doc: "lane i"},
				{Name: "FECUncorrectableBlockCounterLane", Bit: 736, Width: 32, Dump: mad.DumpUint, IB: "FECUncorrectableBlockCtrLane", Count: 12, Stride: 32, Doc: "lane i"},
			},
		},
		{
			Pkg: "perf", Name: "PortExtendedSpeedsCountersRSFEC", ID: 0x001F, Alt: true, Const: "AttrPortExtendedSpeedsCounters", Size: 152, Prefix: "pescrs", Type: "PortExtendedSpeedsCountersRSFEC",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortExtendedSpeedsCountersRSFEC is the PortExtendedSpeedsCounters attribute in its layout for a port with RS-FEC active (libibmad's IB_PESC_RSFEC fields): corrected symbols per lane and the port's FEC block and symbol counters (perfquery -T prints it when the PMA's ClassPortInfo has IsRSFECCountersSupported and the port's PortInfoExtended says RS-FEC is active; engine.Session.ExtendedSpeedsCounters chooses the same way).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 64, Width: 64, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "SyncHeaderErrorCounter", Bit: 128, Width: 16, Dump: mad.DumpUint},
				{Name: "UnknownBlockCounter", Bit: 144, Width: 16, Dump: mad.DumpUint},
				{Name: "FECCorrectableSymbolCounterLane", Bit: 352, Width: 32, Dump: mad.DumpUint, IB: "FECCorrectableSymbolCtrLane", Count: 12, Stride: 32, Doc: "lane i"},
				{Name: "PortFECCorrectableBlockCounter", Bit: 1120, Width: 32, Dump: mad.DumpUint, IB: "PortFECCorrectableBlockCtr"},
				{Name: "PortFECUncorrectableBlockCounter", Bit: 1152, Width: 32, Dump: mad.DumpUint, IB: "PortFECUncorrectableBlockCtr"},
				{Name: "PortFECCorrectedSymbolCounter", Bit: 1184, Width: 32, Dump: mad.DumpUint, IB: "PortFECCorrectedSymbolCtr"},
			},
		},
		{
			Pkg: "perf", Name: "SwPortVLCongestion", ID: 0x0030, Size: 36, Prefix: "svc", Type: "SwPortVLCongestion",
			Mod: "none (0); the port is PortSelect",
			Doc: "SwPortVLCongestion is the SwPortVLCongestion attribute of a switch port: congestion marks per VL (perfquery --swportvlcong).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "SWPortVLCongestion", Bit: 32, Width: 16, Dump: mad.DumpUint, Count: 16, Stride: 16, Doc: "VL i"},
			},
		},
		{
			Pkg: "perf", Name: "PortRcvConCtrl", ID: 0x0031, Size: 12, Prefix: "prcc", Type: "PortRcvConCtrl",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortRcvConCtrl is the PortRcvConCtrl attribute: packets a port received marked FECN and BECN (perfquery --rcvcc).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortPktRcvFECN", Bit: 32, Width: 32, Dump: mad.DumpUint},
				{Name: "PortPktRcvBECN", Bit: 64, Width: 32, Dump: mad.DumpUint},
			},
		},
		{
			Pkg: "perf", Name: "PortSLRcvFECN", ID: 0x0032, Size: 68, Prefix: "psfecn", Type: "PortSLRcvFECN",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortSLRcvFECN is the PortSLRcvFECN attribute: FECN-marked packets received per SL (perfquery --slrcvfecn).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortSLRcvFECN", Bit: 32, Width: 32, Dump: mad.DumpUint, Count: 16, Stride: 32, Doc: "SL i"},
			},
		},
		{
			Pkg: "perf", Name: "PortSLRcvBECN", ID: 0x0033, Size: 68, Prefix: "psbecn", Type: "PortSLRcvBECN",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortSLRcvBECN is the PortSLRcvBECN attribute: BECN-marked packets received per SL (perfquery --slrcvbecn).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortSLRcvBECN", Bit: 32, Width: 32, Dump: mad.DumpUint, Count: 16, Stride: 32, Doc: "SL i"},
			},
		},
	}
}

// perfFromPortXmitConCtrl is the perf schema from PortXmitConCtrl on (part of perfAttrs).
func perfFromPortXmitConCtrl() []*Attr {
	return []*Attr{
		{
			Pkg: "perf", Name: "PortXmitConCtrl", ID: 0x0034, Size: 8, Prefix: "pxcc", Type: "PortXmitConCtrl",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortXmitConCtrl is the PortXmitConCtrl attribute: the time a port spent in congestion (perfquery --xmitcc).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortXmitTimeCong", Bit: 32, Width: 32, Dump: mad.DumpUint},
			},
		},
		{
			Pkg: "perf", Name: "PortVLXmitTimeCong", ID: 0x0035, Size: 64, Prefix: "pvtc", Type: "PortVLXmitTimeCong",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortVLXmitTimeCong is the PortVLXmitTimeCong attribute: the time a port spent in congestion per VL 0-14 (perfquery --vlxmittimecc).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortVLXmitTimeCong", Bit: 32, Width: 32, Dump: mad.DumpUint, Count: 15, Stride: 32, Doc: "VL i"},
			},
		},
		{
			Pkg: "perf", Name: "PortXmitDataSL", ID: 0x0036, Size: 68, Prefix: "pxds", Type: "PortXmitDataSL",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortXmitDataSL is the PortXmitDataSL attribute: data words sent per SL (perfquery --xmtsl).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortXmitDataSL", Bit: 32, Width: 32, Dump: mad.DumpUint, IB: "XmtDataSL", Count: 16, Stride: 32, Doc: "SL i, 4-byte words"},
			},
		},
		{
			Pkg: "perf", Name: "PortRcvDataSL", ID: 0x0037, Size: 68, Prefix: "prds", Type: "PortRcvDataSL",
			Mod: "none (0); the port is PortSelect",
			Doc: "PortRcvDataSL is the PortRcvDataSL attribute: data words received per SL (perfquery --rcvsl).",
			Fields: []Field{
				{Name: "PortSelect", Bit: 8, Width: 8, Dump: mad.DumpUint},
				{Name: "CounterSelect", Bit: 16, Width: 16, Dump: mad.DumpHex, Kind: mad.Hex},
				{Name: "PortRcvDataSL", Bit: 32, Width: 32, Dump: mad.DumpUint, IB: "RcvDataSL", Count: 16, Stride: 32, Doc: "SL i, 4-byte words"},
			},
		},
	}
}
