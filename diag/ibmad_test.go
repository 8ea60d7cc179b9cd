package diag

import (
	"testing"

	"github.com/ibscript/ibscript/mad"
)

// TestDumpValueEdges: libibmad's dumpers on the values ibsim never shows
// (reserved bits, zero masks, out-of-range states), as its dump.c prints
// them: "undefined (N)" after a trailing " or ", " (IBA extension)" on
// masks that are not a prefix of the widths, "?(N)" for states.
func TestDumpValueEdges(t *testing.T) {
	for _, c := range []struct {
		d     mad.Dump
		width int
		v     uint64
		want  string
	}{
		{mad.DumpLinkWidthSup, 8, 0, "undefined (0) (IBA extension)"},
		{mad.DumpLinkWidthSup, 8, 3, "1X or 4X"},
		{mad.DumpLinkWidthSup, 8, 2, "4X (IBA extension)"},
		{mad.DumpLinkWidthSup, 8, 33, "1X or undefined (33)"},
		{mad.DumpLinkWidthEn, 8, 2, "4X"},
		{mad.DumpLinkWidthEn, 8, 255, "1X or 4X or 8X or 12X or 2X or undefined (255)"},
		{mad.DumpLinkWidth, 8, 3, "undefined (3)"},
		{mad.DumpLinkSpeedSup, 4, 0, "undefined (0) (IBA extension)"},
		{mad.DumpLinkSpeedSup, 4, 7, "2.5 Gbps or 5.0 Gbps or 10.0 Gbps"},
		{mad.DumpLinkSpeedSup, 4, 4, "10.0 Gbps (IBA extension)"},
		{mad.DumpLinkSpeedEn, 4, 9, "2.5 Gbps or undefined (9)"},
		{mad.DumpLinkSpeed, 4, 0, "Extended speed"},
		{mad.DumpLinkSpeed, 4, 3, "undefined (3)"},
		{mad.DumpLinkSpeedExtSup, 4, 0, "0"},
		{mad.DumpLinkSpeedExtSup, 4, 3, "14.0625 Gbps or 25.78125 Gbps"},
		{mad.DumpLinkSpeedExtEn, 5, 16, "undefined (16)"},
		{mad.DumpLinkSpeedExtEn, 5, 17, "14.0625 Gbps or undefined (17)"},
		{mad.DumpLinkSpeedExtEn, 5, 30, "Extended link speeds disabled"},
		{mad.DumpLinkSpeedExt, 4, 0, "No Extended Speed"},
		// current libibmad's XDR dumpers (rdma-core #1497): mad_dump_linkspeedext2,
		// and dump_linkspeedext2, whose " undefined" overwrites what it wrote
		{mad.DumpLinkSpeedExt2, 2, 0, "No Extended Speed 2"},
		{mad.DumpLinkSpeedExt2, 2, 1, "212.5 Gbps"},
		{mad.DumpLinkSpeedExt2, 2, 2, "undefined (2)"},
		{mad.DumpLinkSpeedExtSup2, 3, 0, "0"},
		{mad.DumpLinkSpeedExtSup2, 3, 1, "212.5 Gbps"},
		{mad.DumpLinkSpeedExtSup2, 3, 3, " undefined (3)"},
		{mad.DumpPortState, 4, 7, "?(7)"},
		{mad.DumpPhysPortState, 4, 5, "LinkUp"},
		{mad.DumpOperVLs, 4, 0, "No change"},
		{mad.DumpVLCap, 4, 0, "?(0)"},
		{mad.DumpVLCap, 4, 4, "VL0-7"},
		{mad.DumpMTU, 4, 0, "?(0)"},
		{mad.DumpMTU, 4, 5, "4096"},
		{mad.DumpNodeType, 8, 4, "?(4)?"},
		{mad.DumpHex, 4, 0, "0x00"},
		{mad.DumpHex, 24, 0x2c9, "0x0002c9"},
		{mad.DumpHex, 27, 1, "0x00000001"},
		{mad.DumpPortCapMask, 32, 0x2 | 1<<13 | 1<<16, "0x12002\n\t\t\t\tIsSM\n\t\t\t\tIsCommunicatonManagementSupported"},
		{mad.DumpPortCapMask2, 16, 0, "0x0"},
	} {
		if got := dumpValue(c.d, c.width, c.v); got != c.want {
			t.Errorf("dumper %d, %d bits, value %d: %q, want %q", c.d, c.width, c.v, got, c.want)
		}
	}
}

// TestWarnExtSpeed: ibportstate's validate_extended_speed (warnBelow) with
// get_link_speed_ext's choice: XDR both ends enable but NDR active warns
// "rather than 32 (212.5 Gbps)"; all enabled (31) reads the supported
// ones; the best common speed active warns nothing.
func TestWarnExtSpeed(t *testing.T) {
	for _, tc := range []struct {
		en, sup, pen, psup, act uint8
		want                    string
	}{
		{47, 47, 47, 47, 8, "Peer ports operating at active extended speed 8 rather than 32 (212.5 Gbps)"},
		{47, 47, 15, 15, 8, ""},
		{31, 7, 15, 15, 2, "Peer ports operating at active extended speed 2 rather than 4 (53.125 Gbps)"},
		{47, 47, 47, 47, 32, ""},
	} {
		var r IBPortState
		r.warnBelow("extended speed", linkSpeedExt(tc.en, tc.sup), linkSpeedExt(tc.pen, tc.psup), tc.act, psExtSpeeds)
		got := ""
		if len(r.Warnings) > 0 {
			got = r.Warnings[0]
		}
		if got != tc.want || len(r.Warnings) > 1 {
			t.Errorf("%+v: %q", tc, r.Warnings)
		}
	}
}

// TestMKeyText: -K prints PortInfo's M_Key, its first 8 bytes big-endian
// as libibmad's %016 field; without -K, or with a short answer, "<not
// displayed>" (ibsim's and the simulator's M_Keys are 0, so the
// differential tests cannot tell the bytes apart).
func TestMKeyText(t *testing.T) {
	pi := make([]byte, 64)
	copy(pi, []byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0xfe})
	for _, c := range []struct {
		pi   []byte
		show bool
		want string
	}{
		{pi, true, "0x0123456789abcdef"},
		{pi, false, "<not displayed>"},
		{pi[:7], true, "<not displayed>"},
	} {
		if got := mkeyText(c.pi, c.show); got != c.want {
			t.Errorf("mkeyText(% x, %v) = %q, want %q", c.pi[:min(len(c.pi), 9)], c.show, got, c.want)
		}
	}
}
