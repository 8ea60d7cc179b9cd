package diag

import "testing"

// TestDumpValueEdges: libibmad's dumpers on the values ibsim never shows
// (reserved bits, zero masks, out-of-range states), as its dump.c prints
// them: "undefined (N)" after a trailing " or ", " (IBA extension)" on
// masks that are not a prefix of the widths, "?(N)" for states.
func TestDumpValueEdges(t *testing.T) {
	for _, c := range []struct {
		d     dumper
		width int
		v     uint64
		want  string
	}{
		{dLinkWidthSup, 8, 0, "undefined (0) (IBA extension)"},
		{dLinkWidthSup, 8, 3, "1X or 4X"},
		{dLinkWidthSup, 8, 2, "4X (IBA extension)"},
		{dLinkWidthSup, 8, 33, "1X or undefined (33)"},
		{dLinkWidthEn, 8, 2, "4X"},
		{dLinkWidthEn, 8, 255, "1X or 4X or 8X or 12X or 2X or undefined (255)"},
		{dLinkWidth, 8, 3, "undefined (3)"},
		{dLinkSpeedSup, 4, 0, "undefined (0) (IBA extension)"},
		{dLinkSpeedSup, 4, 7, "2.5 Gbps or 5.0 Gbps or 10.0 Gbps"},
		{dLinkSpeedSup, 4, 4, "10.0 Gbps (IBA extension)"},
		{dLinkSpeedEn, 4, 9, "2.5 Gbps or undefined (9)"},
		{dLinkSpeed, 4, 0, "Extended speed"},
		{dLinkSpeed, 4, 3, "undefined (3)"},
		{dLinkSpeedExtSup, 4, 0, "0"},
		{dLinkSpeedExtSup, 4, 3, "14.0625 Gbps or 25.78125 Gbps"},
		{dLinkSpeedExtEn, 5, 16, "undefined (16)"},
		{dLinkSpeedExtEn, 5, 17, "14.0625 Gbps or undefined (17)"},
		{dLinkSpeedExtEn, 5, 30, "Extended link speeds disabled"},
		{dLinkSpeedExt, 4, 0, "No Extended Speed"},
		{dPortState, 4, 7, "?(7)"},
		{dPhysPortState, 4, 5, "LinkUp"},
		{dOperVLs, 4, 0, "No change"},
		{dVLCap, 4, 0, "?(0)"},
		{dVLCap, 4, 4, "VL0-7"},
		{dMTU, 4, 0, "?(0)"},
		{dMTU, 4, 5, "4096"},
		{dNodeType, 8, 4, "?(4)?"},
		{dHex, 4, 0, "0x00"},
		{dHex, 24, 0x2c9, "0x0002c9"},
		{dHex, 27, 1, "0x00000001"},
		{dPortCapMask, 32, 0x2 | 1<<13 | 1<<16, "0x12002\n\t\t\t\tIsSM\n\t\t\t\tIsCommunicatonManagementSupported"},
		{dPortCapMask2, 16, 0, "0x0"},
	} {
		if got := dumpValue(c.d, c.width, c.v); got != c.want {
			t.Errorf("dumper %d, %d bits, value %d: %q, want %q", c.d, c.width, c.v, got, c.want)
		}
	}
}
