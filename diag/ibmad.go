package diag

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// The text the point-query tools (smpquery, perfquery, sminfo, ...) print
// is libibmad's field dump: one "Name:.....value" line per field, the
// value shown by the field's dumper. The schema (mad/internal/madgen)
// tags each row libibmad dumps with libibmad's name of it (not always the
// IBA's) and its dumper (mad.Dump); the generated DumpRows of mad/smp and
// mad/perf give them in libibmad's order, and the tables below take them
// from there. dumpValue renders each dumper.

// ibField is one field as libibmad names, places and shows it: a row of
// a generated layout with libibmad's name and dumper (mad.DumpRow, from
// the schema's IB and Dump tags in mad/internal/madgen).
type ibField struct {
	name string
	f    mad.Field
	dump mad.Dump
}

// ibRows returns the dump rows of a generated layout as ibFields.
func ibRows(rows []mad.DumpRow) []ibField {
	out := make([]ibField, len(rows))
	for i, r := range rows {
		out[i] = ibField{r.IB, r.Field, r.Dump}
	}
	return out
}

// get is the field's value in b, 0 when b is too short to hold it.
func (f ibField) get(b []byte) uint64 {
	if (f.f.End()+7)/8 > len(b) {
		return 0
	}
	return f.f.Get(b)
}

// text is the field's value as libibmad's dumper shows it.
func (f ibField) text(b []byte) string {
	if f.dump == mad.DumpQP1Dropped {
		return dumpValue(mad.DumpUint, 16, pcVL15Dropped.get(b))
	}
	return dumpValue(f.dump, f.f.Width, f.get(b))
}

// dumpExtSpeed2 is current libibmad's mad_dump_linkspeedext2 (0 "No
// Extended Speed 2", 1 "212.5 Gbps") and dump_linkspeedext2 (0 "0", 1
// "212.5 Gbps", higher bits " undefined (N)" written over it).
func dumpExtSpeed2(d mad.Dump, v uint64) string {
	switch {
	case v == 0 && d == mad.DumpLinkSpeedExt2:
		return "No Extended Speed 2"
	case v == 0:
		return "0"
	case v == 1:
		return smp.ExtSpeedName(smp.ExtSpeedXDR)
	case d == mad.DumpLinkSpeedExt2:
		return fmt.Sprintf("undefined (%d)", v)
	}
	return fmt.Sprintf(" undefined (%d)", v)
}

// dumpValue shows v as dumper d shows a field of width bits.
func dumpValue(d mad.Dump, width int, v uint64) string {
	switch d {
	case mad.DumpHex:
		n := (width + 7) / 8
		if n > 8 {
			n = 8
		}
		return fmt.Sprintf("0x%0*x", 2*n, v)
	case mad.DumpLinkWidth:
		return smp.WidthName(uint8(v)) // "undefined (N)" past the names, as libibmad
	case mad.DumpLinkWidthSup, mad.DumpLinkWidthEn:
		s := orList(v, 5, smp.WidthName)
		if v == 0 || v>>5 != 0 {
			s += fmt.Sprintf("undefined (%d)", v)
		}
		if d == mad.DumpLinkWidthSup && v>>5 == 0 {
			switch v {
			case 1, 3, 7, 11, 15, 17, 19, 23, 27, 31:
			default:
				s += " (IBA extension)"
			}
		}
		return s
	case mad.DumpLinkSpeed:
		if v == 0 {
			return "Extended speed"
		}
		return smp.SpeedName(uint8(v))
	case mad.DumpLinkSpeedSup, mad.DumpLinkSpeedEn:
		s := orList(v, 3, smp.SpeedName)
		if v == 0 || v>>3 != 0 {
			s += fmt.Sprintf("undefined (%d)", v)
		}
		switch v {
		case 1, 3, 5, 7:
		default:
			if v>>3 == 0 {
				s += " (IBA extension)"
			}
		}
		return s
	case mad.DumpLinkSpeedExt:
		return smp.ExtSpeedName(uint8(v))
	case mad.DumpLinkSpeedExt2, mad.DumpLinkSpeedExtSup2:
		return dumpExtSpeed2(d, v)
	case mad.DumpLinkSpeedExtSup, mad.DumpLinkSpeedExtEn:
		if d == mad.DumpLinkSpeedExtEn && v == 30 {
			return "Extended link speeds disabled"
		}
		if v == 0 {
			return "0"
		}
		s := orList(v, 4, smp.ExtSpeedName)
		if v>>4 != 0 {
			s += fmt.Sprintf("undefined (%d)", v)
		}
		return s
	case mad.DumpPortState:
		if s, ok := pick(v, "NoChange", "Down", "Initialize", "Armed", "Active"); ok {
			return s
		}
		return fmt.Sprintf("?(%d)", v)
	case mad.DumpPhysPortState:
		if s, ok := pick(v, "NoChange", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"); ok {
			return s
		}
		return fmt.Sprintf("?(%d)", v)
	case mad.DumpLinkDownDefState:
		if s, ok := pick(v, "NoChange", "Sleep", "Polling"); ok {
			return s
		}
		return fmt.Sprintf("?(%d)", v)
	case mad.DumpMTU:
		if s, ok := pick(v, "", "256", "512", "1024", "2048", "4096"); ok && s != "" {
			return s
		}
		return fmt.Sprintf("?(%d)", v)
	case mad.DumpVLCap, mad.DumpOperVLs:
		switch {
		case v == 0 && d == mad.DumpOperVLs:
			return "No change"
		case v >= 1 && v <= 5:
			return smp.VLCapName(uint8(v))
		}
		return fmt.Sprintf("?(%d)", v)
	case mad.DumpPortCapMask:
		return capList(v, portCapNames)
	case mad.DumpPortCapMask2:
		return capList(v, portCap2Names)
	case mad.DumpNodeType:
		if v >= 1 && v <= 3 {
			return smp.NodeTypeName(uint8(v))
		}
		return fmt.Sprintf("?(%d)?", v)
	}
	return strconv.FormatUint(v, 10)
}

// orList joins the names of v's set bits below bit n with " or ", as
// libibmad's width and speed masks read; bits past n leave a trailing
// " or " for the "undefined (V)" libibmad writes after it.
func orList(v uint64, n int, name func(uint8) string) string {
	var parts []string
	for i := 0; i < n; i++ {
		if v&(1<<i) != 0 {
			parts = append(parts, name(uint8(1)<<i))
		}
	}
	s := strings.Join(parts, " or ")
	if s != "" && v>>n != 0 {
		s += " or "
	}
	return s
}

func pick(v uint64, names ...string) (string, bool) {
	if v < uint64(len(names)) {
		return names[v], true
	}
	return "", false
}

// capList is libibmad's capability mask dump: the mask in hex, then one
// line of four tabs and a name per set bit it knows.
func capList(v uint64, names map[int]string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "0x%x", v)
	for i := 0; i < 32; i++ {
		if n, ok := names[i]; ok && v&(1<<i) != 0 {
			b.WriteString("\n\t\t\t\t")
			b.WriteString(n)
		}
	}
	return b.String()
}

var portCapNames = map[int]string{
	1: "IsSM", 2: "IsNoticeSupported", 3: "IsTrapSupported", 4: "IsOptionalIPDSupported",
	5: "IsAutomaticMigrationSupported", 6: "IsSLMappingSupported", 7: "IsMKeyNVRAM", 8: "IsPKeyNVRAM",
	9: "IsLedInfoSupported", 10: "IsSMdisabled", 11: "IsSystemImageGUIDsupported",
	12: "IsPkeySwitchExternalPortTrapSupported", 14: "IsExtendedSpeedsSupported",
	15: "IsCapabilityMask2Supported", 16: "IsCommunicatonManagementSupported", 17: "IsSNMPTunnelingSupported",
	18: "IsReinitSupported", 19: "IsDeviceManagementSupported", 20: "IsVendorClassSupported",
	21: "IsDRNoticeSupported", 22: "IsCapabilityMaskNoticeSupported", 23: "IsBootManagementSupported",
	24: "IsLinkRoundTripLatencySupported", 25: "IsClientRegistrationSupported",
	26: "IsOtherLocalChangesNoticeSupported", 27: "IsLinkSpeedWidthPairsTableSupported",
	28: "IsVendorSpecificMadsTableSupported", 29: "IsMcastPkeyTrapSuppressionSupported",
	30: "IsMulticastFDBTopSupported", 31: "IsHierarchyInfoSupported",
}

var portCap2Names = map[int]string{
	0: "IsSetNodeDescriptionSupported", 1: "IsPortInfoExtendedSupported", 2: "IsVirtualizationSupported",
	3: "IsSwitchPortStateTableSupported", 4: "IsLinkWidth2xSupported", 5: "IsLinkSpeedHDRSupported",
	6: "IsMKeyProtectBitsExtSupported", 7: "IsEnhancedTrap128Supported", 8: "IsPartitionTopSupported",
	9: "IsEnhancedQoSArbiterSupported", 10: "IsLinkSpeedNDRSupported",
}

// mkeyText is a PortInfo's M_Key (its first 8 bytes, pi) as the C tools
// print it: with -K (show) the value, else "<not displayed>".
func mkeyText(pi []byte, show bool) string {
	if !show || len(pi) < 8 {
		return "<not displayed>"
	}
	f, _ := smp.PortInfoLayout().Field("M_Key")
	return fmt.Sprintf("0x%016x", f.Get(pi))
}

// dotLine writes one libibmad field line: the name, a colon, dots up to
// column 33 and the value.
func dotLine(b *strings.Builder, name, value string) {
	b.WriteString(name)
	b.WriteByte(':')
	if n := 32 - len(name); n > 0 {
		b.WriteString(strings.Repeat(".", n))
	}
	b.WriteString(value)
	b.WriteByte('\n')
}

// dumpFields writes every field of fs in data as libibmad's
// mad_dump_fields does.
func dumpFields(b *strings.Builder, data []byte, fs []ibField) {
	for _, f := range fs {
		dotLine(b, f.name, f.text(data))
	}
}

// Field is one field of an attribute in the tools' JSON: libibmad's name,
// the raw value and the text the C tool prints for it.
type Field struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
	Text  string `json:"text"`
}

// fieldsOf returns fs read from data, as JSON carries them.
func fieldsOf(data []byte, fs []ibField) []Field {
	out := make([]Field, 0, len(fs))
	for _, f := range fs {
		out = append(out, Field{Name: f.name, Value: f.get(data), Text: f.text(data)})
	}
	return out
}

// PortID is libibmad's portid2str of a target: "Lid 3", or "DR path slid
// 65535; dlid 65535; 0,1,3" for a directed route.
func PortID(t engine.Target) string {
	switch t.Kind {
	case engine.ByLID:
		return fmt.Sprintf("Lid %d", t.LID)
	case engine.ByDR:
		var b strings.Builder
		b.WriteString("DR path slid 65535; dlid 65535; ")
		for i, p := range t.Path {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%d", p)
		}
		if len(t.Path) == 0 {
			b.WriteByte('0')
		}
		return b.String()
	}
	return t.String()
}

// MadRPCWarning is the line libibmad's mad_rpc warns with (IBWARN, less
// its "[pid]") when an SMP, PerfMgt or Congestion Control query of the
// C tools failed: "mad_rpc: _do_madrpc failed; dport (Lid 99)" when it
// got no answer, and with showErrors (-e, as libibmad's ERRS) "mad_rpc:
// MAD completed with error status 0x1c; dport (Lid 1)" for an answer
// refusing it, naming the target as portid2str does. It is "" for any
// other error.
func MadRPCWarning(err error, showErrors bool) string {
	var te *engine.TimeoutError
	var se *engine.StatusError
	switch {
	case errors.As(err, &te) && rpcClass(te.Class):
		return "mad_rpc: _do_madrpc failed; dport (" + PortID(te.Target) + ")"
	case showErrors && errors.As(err, &se) && rpcClass(se.Class):
		return fmt.Sprintf("mad_rpc: MAD completed with error status 0x%x; dport (%s)", se.Status, PortID(se.Target))
	}
	return ""
}

// rpcClass: the C tools send class's queries through libibmad's mad_rpc.
func rpcClass(class uint8) bool {
	switch class {
	case mad.ClassSubnLID, mad.ClassSubnDR, mad.ClassPerf, mad.ClassCC:
		return true
	}
	return false
}

// The attributes' field tables, in libibmad's order.
var (
	nodeInfoFields = ibRows(smp.DumpRows(smp.NodeInfoLayout()))
	// portInfoFields are PortInfo's fields after M_Key (which the tools
	// print as "<not displayed>").
	portInfoFields        = ibRows(smp.DumpRows(smp.PortInfoLayout()))
	switchInfoFields      = ibRows(smp.DumpRows(smp.SwitchInfoLayout()))
	portInfoExtFields     = ibRows(smp.DumpRows(smp.PortInfoExtendedLayout())) // HDR and NDR FEC modes included
	mlnxExtPortInfoFields = ibRows(smp.DumpRows(smp.MlnxExtPortInfoLayout()))
	portInfoExt44Fields   = libibmad44PIE(portInfoExtFields)
	// portInfoXDRFields are the rows current rdma-core's dump_portinfo
	// prints after libibmad 44's (rdma-core #1497, libibmad's "More
	// PortInfo fields (XDR)"): see portInfoRows.
	portInfoXDRFields = []ibField{
		xdrRow("LinkSpeedExtActive2", mad.DumpLinkSpeedExt2),
		xdrRow("LinkSpeedExtSupported2", mad.DumpLinkSpeedExtSup2),
		xdrRow("LinkSpeedExtEnabled2", mad.DumpLinkSpeedExtSup2),
	}
	portInfoWithXDRFields = concat(portInfoFields, portInfoXDRFields)
)

func xdrRow(name string, d mad.Dump) ibField {
	f, ok := smp.PortInfoLayout().Field(name)
	if !ok {
		panic("diag: PortInfo has no field " + name)
	}
	return ibField{name, f, d}
}

// portInfoRows are the PortInfo rows smpquery prints of pi: libibmad 44's,
// then the three LinkSpeedExt*2 rows current rdma-core's dump_portinfo
// prints after them (rdma-core #1497) on every port with current (its
// --diags-version) and, under 44, where the port speaks XDR
// (CapabilityMask2's IsExtendedSpeeds2Supported, or any LinkSpeedExt*2
// field not zero: a switch's external ports carry the fields without the
// capability), which 44 cannot show. A port without XDR prints as
// infiniband-diags 44 by default.
func portInfoRows(pi []byte, current bool) []ibField {
	if current {
		return portInfoWithXDRFields
	}
	if len(pi) >= 64 {
		p := decode[smp.PortInfo](pi)
		if p.CapabilityMask2&smp.Cap2IsExtendedSpeeds2Supported != 0 ||
			p.LinkSpeedExtActive2|p.LinkSpeedExtSupported2|p.LinkSpeedExtEnabled2 != 0 {
			return portInfoWithXDRFields
		}
	}
	return portInfoFields
}

// libibmad44PIE returns the PortInfoExtended fields as smpquery 44 prints
// them: libibmad 44's table gives the HDR and NDR FEC fields without
// BITSOFFS, so its word-swizzled reader takes each from another halfword
// than IBA's (HDRFECModeSupported from bit 96, EDRFECModeEnabled's),
// found by feeding its mad_dump_portinfo_ext distinct halfwords. The text
// follows 44; the JSON fields (portInfoExtFields) are IBA's.
func libibmad44PIE(fs []ibField) []ibField {
	at := map[string]int{"HDRFECModeSupported": 96, "HDRFECModeEnabled": 144, "NDRFECModeSupported": 128, "NDRFECModeEnabled": 176}
	out := slices.Clone(fs)
	for i := range out {
		if bit, ok := at[out[i].name]; ok {
			out[i].f.Bit = bit
		}
	}
	return out
}
