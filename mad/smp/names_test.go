package smp_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/mad/smp"
)

func TestNames(t *testing.T) {
	for _, tc := range []struct {
		name, got, want string
	}{
		{"PortStateName(4)", smp.PortStateName(4), "Active"},
		{"PortStateName(1)", smp.PortStateName(1), "Down"},
		{"PortStateName(2)", smp.PortStateName(2), "Initialize"},
		{"PortStateName(9)", smp.PortStateName(9), "undefined (9)"},
		{"PhysStateName(5)", smp.PhysStateName(5), "LinkUp"},
		{"PhysStateName(2)", smp.PhysStateName(2), "Polling"},
		{"PhysStateName(3)", smp.PhysStateName(3), "Disabled"},
		{"WidthName(2)", smp.WidthName(2), "4X"},
		{"WidthName(8)", smp.WidthName(8), "12X"},
		{"WidthName(16)", smp.WidthName(16), "2X"},
		{"WidthName(3)", smp.WidthName(3), "undefined (3)"},
		{"WidthMaskName(3)", smp.WidthMaskName(3), "1X or 4X"},
		{"SpeedName(1)", smp.SpeedName(1), "2.5 Gbps"},
		{"SpeedName(4)", smp.SpeedName(4), "10.0 Gbps"},
		{"SpeedShortName(1)", smp.SpeedShortName(1), "SDR"},
		{"SpeedShortName(2)", smp.SpeedShortName(2), "DDR"},
		{"SpeedShortName(4)", smp.SpeedShortName(4), "QDR"},
		{"SpeedMaskName(7)", smp.SpeedMaskName(7), "2.5 Gbps or 5.0 Gbps or 10.0 Gbps"},
		{"ExtSpeedName(0)", smp.ExtSpeedName(0), "No Extended Speed"},
		{"ExtSpeedName(1)", smp.ExtSpeedName(1), "14.0625 Gbps"},
		{"ExtSpeedShortName(1)", smp.ExtSpeedShortName(1), "FDR"},
		{"ExtSpeedShortName(2)", smp.ExtSpeedShortName(2), "EDR"},
		{"ExtSpeedShortName(4)", smp.ExtSpeedShortName(4), "HDR"},
		{"ExtSpeedShortName(8)", smp.ExtSpeedShortName(8), "NDR"},
		{"NodeTypeName(1)", smp.NodeTypeName(1), "Channel Adapter"},
		{"NodeTypeName(3)", smp.NodeTypeName(3), "Router"},
		{"SMStateName(3)", smp.SMStateName(3), "Master"},
		{"SMStateName(2)", smp.SMStateName(2), "Standby"},
		{"LinkDownDefaultStateName(2)", smp.LinkDownDefaultStateName(2), "Polling"},
		{"VLCapName(5)", smp.VLCapName(5), "VL0-14"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("%s = %q, want %q", tc.name, tc.got, tc.want)
			}
		})
	}
}

// TestLinkText pins ibnetdiscover's "4xSDR" link texts.
func TestLinkText(t *testing.T) {
	for _, tc := range []struct {
		width, speed, ext uint8
		want              string
	}{
		{2, 1, 0, "4xSDR"},
		{1, 2, 0, "1xDDR"},
		{8, 4, 0, "12xQDR"},
		{4, 4, 0, "8xQDR"},
		{16, 1, 0, "2xSDR"},
		{2, 4, 1, "4xFDR"},
		{2, 1, 2, "4xEDR"}, // the extended speed wins whenever it is non-zero
		{8, 4, 4, "12xHDR"},
		{2, 4, 8, "4xNDR"},
		{2, 4, 32, "4xXDR"}, // libibnetdisc's aggregated XDR (dump_linkspeedext_compat)
		{3, 1, 0, "??SDR"},
		{2, 3, 0, "4x???"},
		{2, 1, 3, "4x???"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := smp.LinkText(tc.width, tc.speed, tc.ext); got != tc.want {
				t.Errorf("LinkText(%d, %d, %d) = %q, want %q", tc.width, tc.speed, tc.ext, got, tc.want)
			}
		})
	}
}

func TestMTUBytes(t *testing.T) {
	var got []int
	for m := range uint8(7) {
		got = append(got, smp.MTUBytes(m))
	}
	if d := cmp.Diff([]int{0, 256, 512, 1024, 2048, 4096, 0}, got); d != "" {
		t.Errorf("MTUBytes (-want +got):\n%s", d)
	}
}

func TestCapabilityMaskNames(t *testing.T) {
	got := smp.CapabilityMaskNames(smp.CapIsSM | smp.CapIsSMDisabled | smp.CapIsClientReregistrationSupported | 1<<13)
	want := []string{"IsSM", "IsSMdisabled", "bit 13", "IsClientReregistrationSupported"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if smp.CapabilityMaskNames(0) != nil {
		t.Error("no bits, no names")
	}
	if d := cmp.Diff([]string{"IsSetNodeDescriptionSupported", "bit 9"}, smp.CapabilityMask2Names(1|1<<9)); d != "" {
		t.Errorf("CapabilityMask2Names (-want +got):\n%s", d)
	}
}

func TestLinkSpeedText(t *testing.T) {
	for _, tc := range []struct {
		speed, ext uint8
		want       string
	}{{1, 0, "SDR"}, {4, 0, "QDR"}, {4, 2, "EDR"}, {0, 8, "NDR"}, {0, 0, "???"}, {1, 16, "???"}} {
		if got := smp.LinkSpeedText(tc.speed, tc.ext); got != tc.want {
			t.Errorf("LinkSpeedText(%d, %d) = %q, want %q", tc.speed, tc.ext, got, tc.want)
		}
	}
}

func TestFieldText(t *testing.T) {
	for _, c := range []struct {
		field string
		v     uint64
		want  string
	}{
		{"PortState", 4, "Active"},
		{"PortPhysicalState", 5, "LinkUp"},
		{"LinkWidthActive", 2, "4X"},
		{"LinkWidthEnabled", 3, "1X or 4X"},
		{"LinkSpeedActive", 4, "QDR"},
		{"LinkSpeedExtActive", 4, "HDR"},
		{"NeighborMTU", 4, "2048 bytes"},
		{"NodeType", 2, "Switch"},
		{"SMState", 3, "Master"},
	} {
		if got, ok := smp.FieldText(c.field, c.v); !ok || got != c.want {
			t.Errorf("smp.FieldText(%q, %d) = %q, %v; want %q", c.field, c.v, got, ok, c.want)
		}
	}
	if _, ok := smp.FieldText("LID", 5); ok {
		t.Error("FieldText names a LID")
	}
	// Every named field exists in some layout, so a typo cannot hide.
	for _, name := range []string{"NodeType", "PortState", "PortPhysicalState", "LinkDownDefaultState",
		"LinkWidthEnabled", "LinkWidthSupported", "LinkWidthActive", "LinkSpeedEnabled",
		"LinkSpeedSupported", "LinkSpeedActive", "LinkSpeedExtActive", "NeighborMTU", "MTUCap",
		"VLCap", "OperationalVLs", "SMState"} {
		found := false
		for _, l := range smp.Layouts() {
			if _, ok := l.Field(name); ok {
				found = true
			}
		}
		if !found {
			t.Errorf("FieldText names %q, which no layout has", name)
		}
	}
}

// TestEnumNamesAgree: the schema's value names (EnumName) are the texts
// the name functions give smpquery's output.
func TestEnumNamesAgree(t *testing.T) {
	for _, c := range []struct {
		id    uint16
		field string
		fn    func(uint8) string
	}{
		{smp.AttrNodeInfo, "NodeType", smp.NodeTypeName},
		{smp.AttrPortInfo, "PortState", smp.PortStateName},
		{smp.AttrPortInfo, "PortPhysicalState", smp.PhysStateName},
		{smp.AttrPortInfo, "VLCap", smp.VLCapName},
		{smp.AttrPortInfo, "OperationalVLs", smp.VLCapName},
		{smp.AttrPortInfo, "NeighborMTU", func(v uint8) string { return strconv.Itoa(smp.MTUBytes(v)) }},
		{smp.AttrPortInfo, "MTUCap", func(v uint8) string { return strconv.Itoa(smp.MTUBytes(v)) }},
		{smp.AttrSMInfo, "SMState", smp.SMStateName},
	} {
		names := smp.EnumNames(c.id, c.field)
		if len(names) == 0 {
			t.Errorf("%#04x %s: no value names", c.id, c.field)
		}
		for v := range uint64(16) {
			got, ok := smp.EnumName(c.id, c.field, v)
			want := c.fn(uint8(v))
			defined := !strings.HasPrefix(want, "undefined") && want != "0"
			if ok != defined || ok && got != want {
				t.Errorf("%#04x %s %d: EnumName %q %v, name function %q", c.id, c.field, v, got, ok, want)
			}
		}
	}
	if _, ok := smp.EnumName(smp.AttrPortInfo, "LID", 1); ok {
		t.Error("LID has value names")
	}
}

// TestSysfsRate: the rate file's leading integer as the kernel writes it
// (ib_rate_to_mbps over ib_width_enum_to_int), which umad_port_t.rate
// keeps.
func TestSysfsRate(t *testing.T) {
	for _, c := range []struct {
		width, speed, ext uint8
		want              int
	}{
		{1, 1, 0, 2},   // 2.5 Gb/sec (1X)
		{2, 1, 0, 10},  // 10 Gb/sec (4X)
		{8, 4, 0, 120}, // 120 Gb/sec (12X QDR)
		{4, 2, 0, 40},  // 40 Gb/sec (8X DDR)
		{16, 1, 0, 5},  // 5 Gb/sec (2X)
		{2, 4, 1, 56},  // 56 Gb/sec (4X FDR)
		{2, 4, 2, 100}, // 100 Gb/sec (4X EDR)
		{2, 4, 4, 200}, // 200 Gb/sec (4X HDR)
		{2, 4, 8, 400}, // 400 Gb/sec (4X NDR)
		{3, 1, 0, 0},   // no width
	} {
		if got := smp.SysfsRate(c.width, c.speed, c.ext); got != c.want {
			t.Errorf("SysfsRate(%d, %d, %d) = %d, want %d", c.width, c.speed, c.ext, got, c.want)
		}
	}
}

// TestAggExtSpeeds: libibnetdisc's ibnd_get_agg_linkspeedext_field on
// the capability masks and fields: nothing without extended speeds, the
// ...2 fields shifted by 5 only with IsCapabilityMask2Supported and
// IsExtendedSpeeds2Supported, an active ...2 speed replacing
// LinkSpeedExtActive, an enabled 30 read as 0.
func TestAggExtSpeeds(t *testing.T) {
	const ext, cm2 = smp.CapIsExtendedSpeedsSupported, smp.CapIsCapabilityMask2Supported
	xdr := smp.PortInfo{LinkSpeedExtActive: 8, LinkSpeedExtEnabled: 15, LinkSpeedExtSupported: 15,
		LinkSpeedExtActive2: 1, LinkSpeedExtEnabled2: 1, LinkSpeedExtSupported2: 1}
	for _, tc := range []struct {
		name          string
		capMask       uint32
		capMask2      uint16
		info          smp.PortInfo
		act, en, supp uint8
	}{
		{"no extended speeds", cm2, smp.Cap2IsExtendedSpeeds2Supported, xdr, 0, 0, 0},
		{"no CapabilityMask2", ext, smp.Cap2IsExtendedSpeeds2Supported, xdr, 8, 15, 15},
		{"no IsExtendedSpeeds2Supported", ext | cm2, 0, xdr, 8, 15, 15},
		{"XDR", ext | cm2, smp.Cap2IsExtendedSpeeds2Supported, xdr, 32, 47, 47},
		{"NDR on an XDR port", ext | cm2, smp.Cap2IsExtendedSpeeds2Supported,
			smp.PortInfo{LinkSpeedExtActive: 8, LinkSpeedExtEnabled: 30, LinkSpeedExtEnabled2: 1}, 8, 32, 0},
	} {
		c := smp.PortInfo{CapabilityMask: tc.capMask, CapabilityMask2: tc.capMask2}
		act, en, supp := smp.AggExtSpeeds(&c, &tc.info)
		if act != tc.act || en != tc.en || supp != tc.supp {
			t.Errorf("%s: %d %d %d, want %d %d %d", tc.name, act, en, supp, tc.act, tc.en, tc.supp)
		}
	}
}
