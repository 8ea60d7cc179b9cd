package diag

import (
	"fmt"
	"slices"
)

// perfquery's attributes as libibmad dumps them (see ibmad.go).

// series is n fields name0..name(n-1) of width bits from bit, step apart.
func series(name string, n, bit, width, step int, d dumper) []ibField {
	out := make([]ibField, n)
	for i := range out {
		out[i] = ibField{fmt.Sprintf("%s%d", name, i), bit + i*step, width, d}
	}
	return out
}

func concat(parts ...[]ibField) []ibField {
	var out []ibField
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// pcVL15DroppedBit is where PortCounters' VL15Dropped is, and where
// perfquery's QP1Dropped line reads (dQP1Dropped).
const pcVL15DroppedBit = 176

var (
	// pcFields is PortCounters in mad_dump_perfcounters' order
	// (QP1Dropped before VL15Dropped).
	pcFields = []ibField{
		{"PortSelect", 8, 8, dUint}, {"CounterSelect", 16, 16, dHex}, {"SymbolErrorCounter", 32, 16, dUint},
		{"LinkErrorRecoveryCounter", 48, 8, dUint}, {"LinkDownedCounter", 56, 8, dUint}, {"PortRcvErrors", 64, 16, dUint},
		{"PortRcvRemotePhysicalErrors", 80, 16, dUint}, {"PortRcvSwitchRelayErrors", 96, 16, dUint},
		{"PortXmitDiscards", 112, 16, dUint}, {"PortXmitConstraintErrors", 128, 8, dUint},
		{"PortRcvConstraintErrors", 136, 8, dUint}, {"CounterSelect2", 144, 8, dHex},
		{"LocalLinkIntegrityErrors", 152, 4, dUint}, {"ExcessiveBufferOverrunErrors", 156, 4, dUint},
		{"QP1Dropped", 160, 16, dQP1Dropped}, {"VL15Dropped", pcVL15DroppedBit, 16, dUint}, {"PortXmitData", 192, 32, dUint},
		{"PortRcvData", 224, 32, dUint}, {"PortXmitPkts", 256, 32, dUint}, {"PortRcvPkts", 288, 32, dUint},
		{"PortXmitWait", 320, 32, dUint},
	}
	// pcExtFields: PortCountersExtended's first six, then the four
	// unicast/multicast ones (CapExtendedWidth), then the error counters
	// (Cap2AdditionalPortCounters).
	pcExtFields = []ibField{
		{"PortSelect", 8, 8, dUint}, {"CounterSelect", 16, 16, dHex}, {"PortXmitData", 64, 64, dUint},
		{"PortRcvData", 128, 64, dUint}, {"PortXmitPkts", 192, 64, dUint}, {"PortRcvPkts", 256, 64, dUint},
	}
	pcExtWidthFields = []ibField{
		{"PortUnicastXmitPkts", 320, 64, dUint}, {"PortUnicastRcvPkts", 384, 64, dUint},
		{"PortMulticastXmitPkts", 448, 64, dUint}, {"PortMulticastRcvPkts", 512, 64, dUint},
	}
	pcExtErrFields = []ibField{
		{"CounterSelect2", 32, 32, dHex}, {"SymbolErrorCounter", 576, 64, dUint},
		{"LinkErrorRecoveryCounter", 640, 64, dUint}, {"LinkDownedCounter", 704, 64, dUint},
		{"PortRcvErrors", 768, 64, dUint}, {"PortRcvRemotePhysicalErrors", 832, 64, dUint},
		{"PortRcvSwitchRelayErrors", 896, 64, dUint}, {"PortXmitDiscards", 960, 64, dUint},
		{"PortXmitConstraintErrors", 1024, 64, dUint}, {"PortRcvConstraintErrors", 1088, 64, dUint},
		{"LocalLinkIntegrityErrors", 1152, 64, dUint}, {"ExcessiveBufferOverrunErrors", 1216, 64, dUint},
		{"VL15Dropped", 1280, 64, dUint}, {"PortXmitWait", 1344, 64, dUint}, {"QP1Dropped", 1408, 64, dUint},
	}
	// selectFields start every per-group dump (PortCountersExtended's
	// PortSelect and CounterSelect).
	selectFields = pcExtFields[:2]

	portSamplesControlFields = concat([]ibField{
		{"OpCode", 0, 8, dHex}, {"PortSelect", 8, 8, dUint}, {"Tick", 16, 8, dHex}, {"CounterWidth", 29, 3, dUint},
		{"CounterMask0", 34, 3, dHex}, {"CounterMasks1to9", 37, 27, dHex}, {"CounterMasks10to14", 65, 15, dHex},
		{"SampleMechanisms", 80, 8, dUint}, {"SampleStatus", 94, 2, dUint}, {"OptionMask", 96, 64, dHex},
		{"VendorMask", 160, 64, dHex}, {"SampleStart", 224, 32, dUint}, {"SampleInterval", 256, 32, dUint},
		{"Tag", 288, 16, dHex},
	}, series("CounterSelect", 15, 304, 16, 16, dHex), []ibField{{"SamplesOnlyOptionMask", 576, 64, dHex}})

	extSpeedsFields = concat([]ibField{
		{"PortSelect", 8, 8, dUint}, {"CounterSelect", 64, 64, dHex},
		{"SyncHeaderErrorCounter", 128, 16, dUint}, {"UnknownBlockCounter", 144, 16, dUint},
	}, series("ErrorDetectionCounterLane", 12, 160, 16, 16, dUint),
		series("FECCorrectableBlockCtrLane", 12, 352, 32, 32, dUint),
		series("FECUncorrectableBlockCtrLane", 12, 736, 32, 32, dUint))
	extSpeedsRSFECFields = concat(extSpeedsFields[:4],
		series("FECCorrectableSymbolCtrLane", 12, 352, 32, 32, dUint),
		[]ibField{{"PortFECCorrectableBlockCtr", 1120, 32, dUint}, {"PortFECUncorrectableBlockCtr", 1152, 32, dUint},
			{"PortFECCorrectedSymbolCtr", 1184, 32, dUint}})
)

// perfGroup is one of perfquery's per-attribute options: the title of
// its dump ("# NAME counters: ..."), the attribute and the fields after
// PortSelect and CounterSelect.
type perfGroup struct {
	Name   string
	Attr   uint16
	Fields []ibField
}

// perfGroups are perfquery's group options by their long option name.
var perfGroups = map[string]perfGroup{
	"xmtsl":   {"PortXmitDataSL", 0x36, series("XmtDataSL", 16, 32, 32, 32, dUint)},
	"rcvsl":   {"PortRcvDataSL", 0x37, series("RcvDataSL", 16, 32, 32, 32, dUint)},
	"xmtdisc": {"PortXmitDiscardDetails", 0x16, []ibField{{"PortInactiveDiscards", 32, 16, dUint}, {"PortNeighborMTUDiscards", 48, 16, dUint}, {"PortSwLifetimeLimitDiscards", 64, 16, dUint}, {"PortSwHOQLifetimeLimitDiscards", 80, 16, dUint}}},
	"rcverr": {"PortRcvErrorDetails", 0x15, []ibField{{"PortLocalPhysicalErrors", 32, 16, dUint}, {"PortMalformedPktErrors", 48, 16, dUint},
		{"PortBufferOverrunErrors", 64, 16, dUint}, {"PortDLIDMappingErrors", 80, 16, dUint}, {"PortVLMappingErrors", 96, 16, dUint}, {"PortLoopingErrors", 112, 16, dUint}}},
	"oprcvcounters":       {"PortOpRcvCounters", 0x17, []ibField{{"PortOpRcvPkts", 32, 32, dUint}, {"PortOpRcvData", 64, 32, dUint}}},
	"flowctlcounters":     {"PortFlowCtlCounters", 0x18, []ibField{{"PortXmitFlowPkts", 32, 32, dUint}, {"PortRcvFlowPkts", 64, 32, dUint}}},
	"vloppackets":         {"PortVLOpPackets", 0x19, series("PortVLOpPackets", 16, 32, 16, 16, dUint)},
	"vlopdata":            {"PortVLOpData", 0x1a, series("PortVLOpData", 16, 32, 32, 32, dUint)},
	"vlxmitflowctlerrors": {"PortVLXmitFlowCtlUpdateErrors", 0x1b, series("PortVLXmitFlowCtlUpdateErrors", 16, 32, 2, 2, dUint)},
	"vlxmitcounters":      {"PortVLXmitWaitCounters", 0x1c, series("PortVLXmitWait", 16, 32, 16, 16, dUint)},
	"swportvlcong":        {"SwPortVLCongestion", 0x30, series("SWPortVLCongestion", 16, 32, 16, 16, dUint)},
	"rcvcc":               {"PortRcvConCtrl", 0x31, []ibField{{"PortPktRcvFECN", 32, 32, dUint}, {"PortPktRcvBECN", 64, 32, dUint}}},
	"slrcvfecn":           {"PortSLRcvFECN", 0x32, series("PortSLRcvFECN", 16, 32, 32, 32, dUint)},
	"slrcvbecn":           {"PortSLRcvBECN", 0x33, series("PortSLRcvBECN", 16, 32, 32, 32, dUint)},
	"xmitcc":              {"PortXmitConCtrl", 0x34, []ibField{{"PortXmitTimeCong", 32, 32, dUint}}},
	"vlxmittimecc":        {"PortVLXmitTimeCong", 0x35, series("PortVLXmitTimeCong", 15, 32, 32, 32, dUint)},
}

// IsPerfGroup reports whether name is one of perfquery's group options
// by its long name ("xmtsl", "extended_speeds", "smplctl", ...), as
// PerfQueryOptions.Groups takes them.
func IsPerfGroup(name string) bool { return slices.Contains(perfGroupOrder, name) }

// perfGroupOrder is the order perfquery checks its group options in (the
// first one given wins).
var perfGroupOrder = []string{"xmtsl", "rcvsl", "xmtdisc", "rcverr", "extended_speeds", "oprcvcounters",
	"flowctlcounters", "vloppackets", "vlopdata", "vlxmitflowctlerrors", "vlxmitcounters", "swportvlcong",
	"rcvcc", "slrcvfecn", "slrcvbecn", "xmitcc", "vlxmittimecc", "smplctl"}
