package diag

import (
	"slices"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
)

// perfquery's attributes as libibmad dumps them (see ibmad.go).

func concat(parts ...[]ibField) []ibField {
	var out []ibField
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// named returns the fields of fs libibmad calls by the names given, in
// fs's order.
func named(fs []ibField, names ...string) []ibField {
	var out []ibField
	for _, f := range fs {
		if slices.Contains(names, f.name) {
			out = append(out, f)
		}
	}
	return out
}

// ibNamed returns the field of fs libibmad calls name; a name fs does not
// have is a mistake of the code (a panic at start-up).
func ibNamed(fs []ibField, name string) ibField {
	for _, f := range fs {
		if f.name == name {
			return f
		}
	}
	panic("diag: no field " + name)
}

// from returns the fields of fs from the one libibmad calls name on.
func from(fs []ibField, name string) []ibField {
	return fs[slices.IndexFunc(fs, func(f ibField) bool { return f.name == name }):]
}

var (
	// pcFields is PortCounters in mad_dump_perfcounters' order
	// (QP1Dropped before VL15Dropped).
	pcFields = ibRows(perf.DumpRows(perf.PortCountersLayout()))
	// pcVL15Dropped is where perfquery's QP1Dropped line reads
	// (mad.DumpQP1Dropped).
	pcVL15Dropped = ibNamed(pcFields, "VL15Dropped")

	// mad_dump_perfcounters_ext prints PortCountersExtended in three
	// steps: pcExtFields, the first six; then pcExtWidthFields, the four
	// unicast/multicast ones (CapExtendedWidth); then pcExtErrFields,
	// CounterSelect2 and the error counters (Cap2AdditionalPortCounters).
	pcExtAll    = ibRows(perf.DumpRows(perf.PortCountersExtendedLayout()))
	pcExtFields = named(pcExtAll, "PortSelect", "CounterSelect", "PortXmitData", "PortRcvData", "PortXmitPkts",
		"PortRcvPkts")
	pcExtWidthFields = named(pcExtAll, "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts",
		"PortMulticastRcvPkts")
	pcExtErrFields = concat(named(pcExtAll, "CounterSelect2"), from(pcExtAll, "SymbolErrorCounter"))

	portSamplesControlFields = ibRows(perf.DumpRows(perf.PortSamplesControlLayout()))
	extSpeedsFields          = ibRows(perf.DumpRows(perf.PortExtendedSpeedsCountersLayout()))
	extSpeedsRSFECFields     = ibRows(perf.DumpRows(perf.PortExtendedSpeedsCountersRSFECLayout()))
)

// portCounterRows are the rows of perf.Counters (the table perfquery
// and the exporter share): perfquery's aggregation (-a) sums them,
// saturating at their width, and keeps the other rows as read.
var portCounterRows = func() map[mad.Field]bool {
	m := map[mad.Field]bool{}
	for _, c := range perf.Counters() {
		m[c.Field] = true
	}
	return m
}()

// perfGroup is one of perfquery's per-attribute options: the title of
// its dump ("# NAME counters: ..."), the attribute and its fields
// (PortSelect and CounterSelect first).
type perfGroup struct {
	Name   string
	Attr   uint16
	Fields []ibField
}

func group(l *mad.Layout) perfGroup {
	return perfGroup{l.Name, l.ID, ibRows(perf.DumpRows(l))}
}

// perfGroups are perfquery's group options by their long option name.
var perfGroups = map[string]perfGroup{
	"xmtsl":               group(perf.PortXmitDataSLLayout()),
	"rcvsl":               group(perf.PortRcvDataSLLayout()),
	"xmtdisc":             group(perf.PortXmitDiscardDetailsLayout()),
	"rcverr":              group(perf.PortRcvErrorDetailsLayout()),
	"oprcvcounters":       group(perf.PortOpRcvCountersLayout()),
	"flowctlcounters":     group(perf.PortFlowCtlCountersLayout()),
	"vloppackets":         group(perf.PortVLOpPacketsLayout()),
	"vlopdata":            group(perf.PortVLOpDataLayout()),
	"vlxmitflowctlerrors": group(perf.PortVLXmitFlowCtlUpdateErrorsLayout()),
	"vlxmitcounters":      group(perf.PortVLXmitWaitCountersLayout()),
	"swportvlcong":        group(perf.SwPortVLCongestionLayout()),
	"rcvcc":               group(perf.PortRcvConCtrlLayout()),
	"slrcvfecn":           group(perf.PortSLRcvFECNLayout()),
	"slrcvbecn":           group(perf.PortSLRcvBECNLayout()),
	"xmitcc":              group(perf.PortXmitConCtrlLayout()),
	"vlxmittimecc":        group(perf.PortVLXmitTimeCongLayout()),
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
