package mad

// Dump says how libibmad's field dump (mad_dump_fields, which smpquery,
// perfquery, sminfo and ibportstate print) shows a row: the "dumper" of
// the row's entry in libibmad's field table. The schema
// (mad/internal/madgen) gives it, with libibmad's name of the row
// (Field.IB), for every row libibmad dumps; package diag renders it. A
// row with DumpNone is not in libibmad's dump.
type Dump uint8

const (
	DumpNone             Dump = iota // not dumped by libibmad
	DumpUint                         // decimal
	DumpHex                          // 0x and (width+7)/8*2 hex digits
	DumpLinkWidth                    // 1X, 4X, ... (one width)
	DumpLinkWidthSup                 // "1X or 4X" and " (IBA extension)"
	DumpLinkWidthEn                  // "1X or 4X"
	DumpLinkSpeed                    // 2.5 Gbps, ...
	DumpLinkSpeedSup                 // "2.5 Gbps or 5.0 Gbps"
	DumpLinkSpeedEn                  // as DumpLinkSpeedSup
	DumpLinkSpeedExt                 // 14.0625 Gbps, ...
	DumpLinkSpeedExtSup              // "14.0625 Gbps or ..." or 0
	DumpLinkSpeedExtEn               // as DumpLinkSpeedExtSup, 30 is "disabled"
	DumpPortState                    // Down, Initialize, Armed, Active
	DumpPhysPortState                // Sleep, Polling, ... LinkUp
	DumpLinkDownDefState             // Sleep, Polling
	DumpMTU                          // 256 ... 4096
	DumpVLCap                        // VL0-7
	DumpOperVLs                      // VL0-7, "No change"
	DumpPortCapMask                  // 0x.. and one line per capability
	DumpPortCapMask2                 // the same for CapabilityMask2
	DumpNodeType                     // Channel Adapter, Switch, Router
	// DumpQP1Dropped is PortCounters' QP1Dropped as perfquery prints it:
	// libibmad's field table gives IB_PC_QP1_DROP_F no offset of its own
	// and mad_dump_perfcounters shows the 16 bits at VL15Dropped's, so
	// the C tool prints VL15Dropped's value there (seen through ibsim:
	// VL15Dropped 5, QP1Dropped 0 prints 5 on both lines). The row's value
	// stays the IBA's field.
	DumpQP1Dropped
	// DumpLinkSpeedExt2 is PortInfo's LinkSpeedExtActive2 as current
	// libibmad shows it (mad_dump_linkspeedext2, rdma-core #1497): 0 "No
	// Extended Speed 2", 1 "212.5 Gbps" (XDR). libibmad 44 has no such row.
	DumpLinkSpeedExt2
	// DumpLinkSpeedExtSup2 is LinkSpeedExtSupported2 and
	// LinkSpeedExtEnabled2 as current libibmad shows them
	// (mad_dump_linkspeedextsup2, mad_dump_linkspeedexten2): "0", "212.5
	// Gbps" for bit 0, and for higher bits " undefined (N)" written over
	// it (dump_linkspeedext2 writes both at the buffer's start).
	DumpLinkSpeedExtSup2
)

var dumpNames = [...]string{"DumpNone", "DumpUint", "DumpHex", "DumpLinkWidth", "DumpLinkWidthSup",
	"DumpLinkWidthEn", "DumpLinkSpeed", "DumpLinkSpeedSup", "DumpLinkSpeedEn", "DumpLinkSpeedExt",
	"DumpLinkSpeedExtSup", "DumpLinkSpeedExtEn", "DumpPortState", "DumpPhysPortState",
	"DumpLinkDownDefState", "DumpMTU", "DumpVLCap", "DumpOperVLs", "DumpPortCapMask", "DumpPortCapMask2",
	"DumpNodeType", "DumpQP1Dropped", "DumpLinkSpeedExt2", "DumpLinkSpeedExtSup2"}

// String is the constant's name ("DumpHex"), as the generator writes it.
func (d Dump) String() string {
	if int(d) < len(dumpNames) {
		return dumpNames[d]
	}
	return "Dump(?)"
}

// DumpRow is one row of libibmad's field dump of an attribute: the
// schema's row (Field), libibmad's name of it and its dumper. The
// generated packages' DumpRows list them in libibmad's order.
type DumpRow struct {
	IB    string
	Dump  Dump
	Field Field
}
