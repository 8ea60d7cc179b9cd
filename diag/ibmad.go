package diag

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// The text the point-query tools (smpquery, perfquery, sminfo, ...) print
// is libibmad's field dump: one "Name:.....value" line per field, the
// value shown by the field's dumper. The tables below give, for each
// attribute, the fields in the order libibmad prints them, with the names
// libibmad gives them (not always the IBA's), their place in the
// attribute (IBA bit offset from the most significant bit of byte 0, and
// width) and how the value is shown.

// dumper is how libibmad shows one field's value.
type dumper uint8

const (
	dUint             dumper = iota // decimal
	dHex                            // 0x and (width+7)/8*2 hex digits
	dLinkWidth                      // 1X, 4X, ... (one width)
	dLinkWidthSup                   // "1X or 4X" and " (IBA extension)"
	dLinkWidthEn                    // "1X or 4X"
	dLinkSpeed                      // 2.5 Gbps, ...
	dLinkSpeedSup                   // "2.5 Gbps or 5.0 Gbps"
	dLinkSpeedEn                    // as dLinkSpeedSup
	dLinkSpeedExt                   // 14.0625 Gbps, ...
	dLinkSpeedExtSup                // "14.0625 Gbps or ..." or 0
	dLinkSpeedExtEn                 // as dLinkSpeedExtSup, 30 is "disabled"
	dPortState                      // Down, Initialize, Armed, Active
	dPhysPortState                  // Sleep, Polling, ... LinkUp
	dLinkDownDefState               // Sleep, Polling
	dMTU                            // 256 ... 4096
	dVLCap                          // VL0-7
	dOperVLs                        // VL0-7, "No change"
	dPortCapMask                    // 0x.. and one line per capability
	dPortCapMask2                   // the same for CapabilityMask2
	dNodeType                       // Channel Adapter, Switch, Router
	// dQP1Dropped is PortCounters' QP1Dropped as perfquery prints it:
	// libibmad's field table gives IB_PC_QP1_DROP_F no offset of its own
	// and mad_dump_perfcounters shows the 16 bits at VL15Dropped's (bit
	// 176), so the C tool prints VL15Dropped's value there (seen through
	// ibsim: VL15Dropped 5, QP1Dropped 0 prints 5 on both lines). The
	// value (JSON, Lua) stays the IBA's field at bit 160.
	dQP1Dropped
)

// ibField is one field as libibmad names, places and shows it.
type ibField struct {
	name  string
	bit   int
	width int
	dump  dumper
}

func (f ibField) get(b []byte) uint64 {
	if (f.bit+f.width+7)/8 > len(b) {
		return 0
	}
	return mad.Field{Bit: f.bit, Width: f.width}.Get(b)
}

// text is the field's value as libibmad's dumper shows it.
func (f ibField) text(b []byte) string {
	if f.dump == dQP1Dropped {
		return dumpValue(dUint, 16, ibField{bit: pcVL15DroppedBit, width: 16}.get(b))
	}
	return dumpValue(f.dump, f.width, f.get(b))
}

// dumpValue shows v as dumper d shows a field of width bits.
func dumpValue(d dumper, width int, v uint64) string {
	switch d {
	case dHex:
		n := (width + 7) / 8
		if n > 8 {
			n = 8
		}
		return fmt.Sprintf("0x%0*x", 2*n, v)
	case dLinkWidth:
		return smp.WidthName(uint8(v)) // "undefined (N)" past the names, as libibmad
	case dLinkWidthSup, dLinkWidthEn:
		s := orList(v, 5, smp.WidthName)
		if v == 0 || v>>5 != 0 {
			s += fmt.Sprintf("undefined (%d)", v)
		}
		if d == dLinkWidthSup && v>>5 == 0 {
			switch v {
			case 1, 3, 7, 11, 15, 17, 19, 23, 27, 31:
			default:
				s += " (IBA extension)"
			}
		}
		return s
	case dLinkSpeed:
		if v == 0 {
			return "Extended speed"
		}
		return smp.SpeedName(uint8(v))
	case dLinkSpeedSup, dLinkSpeedEn:
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
	case dLinkSpeedExt:
		return smp.ExtSpeedName(uint8(v))
	case dLinkSpeedExtSup, dLinkSpeedExtEn:
		if d == dLinkSpeedExtEn && v == 30 {
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
	case dPortState:
		if s, ok := pick(v, "NoChange", "Down", "Initialize", "Armed", "Active"); ok {
			return s
		}
		return fmt.Sprintf("?(%d)", v)
	case dPhysPortState:
		if s, ok := pick(v, "NoChange", "Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp", "LinkErrorRecovery", "PhyTest"); ok {
			return s
		}
		return fmt.Sprintf("?(%d)", v)
	case dLinkDownDefState:
		if s, ok := pick(v, "NoChange", "Sleep", "Polling"); ok {
			return s
		}
		return fmt.Sprintf("?(%d)", v)
	case dMTU:
		if s, ok := pick(v, "", "256", "512", "1024", "2048", "4096"); ok && s != "" {
			return s
		}
		return fmt.Sprintf("?(%d)", v)
	case dVLCap, dOperVLs:
		switch {
		case v == 0 && d == dOperVLs:
			return "No change"
		case v >= 1 && v <= 5:
			return smp.VLCapName(uint8(v))
		}
		return fmt.Sprintf("?(%d)", v)
	case dPortCapMask:
		return capList(v, portCapNames)
	case dPortCapMask2:
		return capList(v, portCap2Names)
	case dNodeType:
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

// The attributes' field tables, in libibmad's order.
var (
	nodeInfoFields = []ibField{
		{"BaseVers", 0, 8, dUint}, {"ClassVers", 8, 8, dUint}, {"NodeType", 16, 8, dNodeType},
		{"NumPorts", 24, 8, dUint}, {"SystemGuid", 32, 64, dHex}, {"Guid", 96, 64, dHex},
		{"PortGuid", 160, 64, dHex}, {"PartCap", 224, 16, dUint}, {"DevId", 240, 16, dHex},
		{"Revision", 256, 32, dHex}, {"LocalPort", 288, 8, dUint}, {"VendorId", 296, 24, dHex},
	}
	// portInfoFields are PortInfo's fields after M_Key (which the tools
	// print as "<not displayed>").
	portInfoFields = []ibField{
		{"GidPrefix", 64, 64, dHex}, {"Lid", 128, 16, dUint}, {"SMLid", 144, 16, dUint},
		{"CapMask", 160, 32, dPortCapMask}, {"DiagCode", 192, 16, dHex}, {"MkeyLeasePeriod", 208, 16, dUint},
		{"LocalPort", 224, 8, dUint}, {"LinkWidthEnabled", 232, 8, dLinkWidthEn},
		{"LinkWidthSupported", 240, 8, dLinkWidthSup}, {"LinkWidthActive", 248, 8, dLinkWidth},
		{"LinkSpeedSupported", 256, 4, dLinkSpeedSup}, {"LinkState", 260, 4, dPortState},
		{"PhysLinkState", 264, 4, dPhysPortState}, {"LinkDownDefState", 268, 4, dLinkDownDefState},
		{"ProtectBits", 272, 2, dUint}, {"LMC", 277, 3, dUint}, {"LinkSpeedActive", 280, 4, dLinkSpeed},
		{"LinkSpeedEnabled", 284, 4, dLinkSpeedEn}, {"NeighborMTU", 288, 4, dMTU}, {"SMSL", 292, 4, dUint},
		{"VLCap", 296, 4, dVLCap}, {"InitType", 300, 4, dHex}, {"VLHighLimit", 304, 8, dUint},
		{"VLArbHighCap", 312, 8, dUint}, {"VLArbLowCap", 320, 8, dUint}, {"InitReply", 328, 4, dHex},
		{"MtuCap", 332, 4, dMTU}, {"VLStallCount", 336, 3, dUint}, {"HoqLife", 339, 5, dUint},
		{"OperVLs", 344, 4, dOperVLs}, {"PartEnforceInb", 348, 1, dUint}, {"PartEnforceOutb", 349, 1, dUint},
		{"FilterRawInb", 350, 1, dUint}, {"FilterRawOutb", 351, 1, dUint}, {"MkeyViolations", 352, 16, dUint},
		{"PkeyViolations", 368, 16, dUint}, {"QkeyViolations", 384, 16, dUint}, {"GuidCap", 400, 8, dUint},
		{"ClientReregister", 408, 1, dUint}, {"McastPkeyTrapSuppressionEnabled", 409, 2, dUint},
		{"SubnetTimeout", 411, 5, dUint}, {"RespTimeVal", 419, 5, dUint}, {"LocalPhysErr", 424, 4, dUint},
		{"OverrunErr", 428, 4, dUint}, {"MaxCreditHint", 432, 16, dUint}, {"RoundTrip", 456, 24, dUint},
		{"CapabilityMask2", 480, 16, dPortCapMask2}, {"LinkSpeedExtActive", 496, 4, dLinkSpeedExt},
		{"LinkSpeedExtSupported", 500, 4, dLinkSpeedExtSup}, {"LinkSpeedExtEnabled", 507, 5, dLinkSpeedExtEn},
	}
	switchInfoFields = []ibField{
		{"LinearFdbCap", 0, 16, dUint}, {"RandomFdbCap", 16, 16, dUint}, {"McastFdbCap", 32, 16, dUint},
		{"LinearFdbTop", 48, 16, dUint}, {"DefPort", 64, 8, dUint}, {"DefMcastPrimPort", 72, 8, dUint},
		{"DefMcastNotPrimPort", 80, 8, dUint}, {"LifeTime", 88, 5, dUint}, {"StateChange", 93, 1, dUint},
		{"OptSLtoVLMapping", 94, 2, dUint}, {"LidsPerPort", 96, 16, dUint}, {"PartEnforceCap", 112, 16, dUint},
		{"InboundPartEnf", 128, 1, dUint}, {"OutboundPartEnf", 129, 1, dUint}, {"FilterRawInbound", 130, 1, dUint},
		{"FilterRawOutbound", 131, 1, dUint}, {"EnhancedPort0", 132, 1, dUint}, {"MulticastFDBTop", 144, 16, dHex},
	}
	// portInfoExtFields are PortInfoExtended's, HDR and NDR FEC modes
	// included.
	portInfoExtFields = []ibField{
		{"CapMask", 0, 32, dHex}, {"FECModeActive", 32, 16, dUint}, {"FDRFECModeSupported", 48, 16, dHex},
		{"FDRFECModeEnabled", 64, 16, dHex}, {"EDRFECModeSupported", 80, 16, dHex}, {"EDRFECModeEnabled", 96, 16, dHex},
		{"HDRFECModeSupported", 112, 16, dHex}, {"HDRFECModeEnabled", 128, 16, dHex},
		{"NDRFECModeSupported", 144, 16, dHex}, {"NDRFECModeEnabled", 160, 16, dHex},
	}
	mlnxExtPortInfoFields = []ibField{
		{"StateChangeEnable", 24, 8, dHex}, {"LinkSpeedSupported", 56, 8, dHex},
		{"LinkSpeedEnabled", 88, 8, dHex}, {"LinkSpeedActive", 120, 8, dHex},
	}
	smInfoFields = []ibField{
		{"SmInfoGuid", 0, 64, dHex}, {"SmInfoKey", 64, 64, dHex}, {"SmActivity", 128, 32, dUint},
		{"SmPriority", 160, 4, dUint}, {"SmState", 164, 4, dUint},
	}
)

// bits reads the field of width bits at IBA bit offset bit of b (0 when
// b is too short).
func bits(b []byte, bit, width int) uint64 { return ibField{bit: bit, width: width}.get(b) }
