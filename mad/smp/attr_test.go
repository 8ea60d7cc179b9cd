package smp_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/smp"
)

// attrs lists every attribute codec of the package with its layout.
var attrs = []struct {
	name   string
	layout *mad.Layout
	new    func() madtest.Codec
}{
	{"NodeInfo", smp.NodeInfoLayout(), func() madtest.Codec { return new(smp.NodeInfo) }},
	{"NodeDescription", smp.NodeDescriptionLayout(), func() madtest.Codec { return new(smp.NodeDescription) }},
	{"PortInfo", smp.PortInfoLayout(), func() madtest.Codec { return new(smp.PortInfo) }},
	{"SwitchInfo", smp.SwitchInfoLayout(), func() madtest.Codec { return new(smp.SwitchInfo) }},
	{"GUIDInfo", smp.GUIDInfoLayout(), func() madtest.Codec { return new(smp.GUIDInfo) }},
	{"P_KeyTable", smp.PKeyTableLayout(), func() madtest.Codec { return new(smp.PKeyTable) }},
	{"LinearForwardingTable", smp.LinearForwardingTableLayout(), func() madtest.Codec { return new(smp.LinearForwardingTable) }},
	{"SMInfo", smp.SMInfoLayout(), func() madtest.Codec { return new(smp.SMInfo) }},
	{"Notice", smp.NoticeLayout(), func() madtest.Codec { return new(smp.Notice) }},
}

func TestCheckLayouts(t *testing.T) {
	for _, a := range attrs {
		t.Run(a.name, func(t *testing.T) { madtest.CheckLayout(t, a.layout) })
	}
	t.Run("SMP", func(t *testing.T) { madtest.CheckLayout(t, smp.SMPLayout()) })
	t.Run("DRSMP", func(t *testing.T) { madtest.CheckLayout(t, smp.DRSMPLayout()) })
}

func TestWalkingOnes(t *testing.T) {
	for _, a := range attrs {
		t.Run(a.name, func(t *testing.T) { madtest.WalkingOnes(t, a.layout, a.new) })
	}
}

func TestRegistry(t *testing.T) {
	ls := smp.Layouts()
	if len(ls) < len(attrs) {
		t.Errorf("Layouts() has %d layouts, the tests know %d", len(ls), len(attrs))
	}
	seen := map[uint16]string{}
	for i, l := range ls {
		if l.ID == 0 {
			t.Errorf("%s: no attribute ID", l.Name)
		}
		if other, dup := seen[l.ID]; dup {
			t.Errorf("%s and %s share ID %#04x", other, l.Name, l.ID)
		}
		seen[l.ID] = l.Name
		if i > 0 && ls[i-1].ID >= l.ID {
			t.Errorf("Layouts() not in ID order at %s", l.Name)
		}
		if got := smp.LayoutByID(l.ID); got != l {
			t.Errorf("LayoutByID(%#04x) = %v, want the %s layout", l.ID, got, l.Name)
		}
	}
	for _, a := range attrs {
		if smp.LayoutByID(a.layout.ID) != a.layout {
			t.Errorf("%s: LayoutByID(%#04x) does not return its layout", a.name, a.layout.ID)
		}
	}
	for _, id := range []uint16{0, smp.AttrRandomForwardingTable, 0xffff} {
		if l := smp.LayoutByID(id); l != nil {
			t.Errorf("LayoutByID(%#04x) = %s, want nil", id, l.Name)
		}
	}
	// The slice is fresh: changing it does not change the registry.
	ls[0] = nil
	if smp.Layouts()[0] == nil {
		t.Error("Layouts() returns shared state")
	}
}

func TestTruncated(t *testing.T) {
	for _, a := range attrs {
		t.Run(a.name, func(t *testing.T) {
			need := a.layout.Size
			if a.layout == smp.NoticeLayout() {
				need = smp.NoticeSMPSize
			}
			err := a.new().UnmarshalBinary(make([]byte, need-1))
			if !errors.Is(err, mad.ErrTruncated) {
				t.Fatalf("UnmarshalBinary(%d bytes) = %v, want ErrTruncated", need-1, err)
			}
			want := fmt.Sprintf("%s: truncated (have %d, need %d)", lower(a.layout.Name), need-1, need)
			if err.Error() != want {
				t.Errorf("error %q, want %q", err, want)
			}
			if err := a.new().UnmarshalBinary(nil); !errors.Is(err, mad.ErrTruncated) {
				t.Errorf("UnmarshalBinary(nil) = %v", err)
			}
		})
	}
	err := new(smp.PortInfo).UnmarshalBinary(make([]byte, 40))
	if got, want := err.Error(), "portinfo: truncated (have 40, need 64)"; got != want {
		t.Errorf("PortInfo error %q, want %q", got, want)
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func TestRangeErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    madtest.Codec
		want string
	}{
		{"PortState", &smp.PortInfo{PortState: 17}, "portinfo: PortState: value out of range (17 > 15)"},
		{"LMC", &smp.PortInfo{LMC: 8}, "portinfo: LMC: value out of range (8 > 7)"},
		{"VendorID", &smp.NodeInfo{VendorID: 1 << 24}, "nodeinfo: VendorID: value out of range (16777216 > 16777215)"},
		{"SMState", &smp.SMInfo{SMState: 16}, "sminfo: SMState: value out of range (16 > 15)"},
		{"NoticeCount", &smp.Notice{NoticeCount: 0x8000}, "notice: NoticeCount: value out of range (32768 > 32767)"},
		{"LifeTimeValue", &smp.SwitchInfo{LifeTimeValue: 32}, "switchinfo: LifeTimeValue: value out of range (32 > 31)"},
		{"NodeString", &smp.NodeDescription{NodeString: string(make([]byte, 65))}, "nodedescription: NodeString: value out of range (65 bytes > 64)"},
		{"DR status", &smp.SMP{Header: mad.Header{MgmtClass: mad.ClassSubnDR, Status: 0x8000}}, "drsmp: Status: value out of range (32768 > 32767)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.v.AppendBinary([]byte{7})
			if !errors.Is(err, mad.ErrRange) {
				t.Fatalf("AppendBinary error %v, want ErrRange", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error %q, want %q", err, tc.want)
			}
			if len(out) != 1 || out[0] != 7 {
				t.Errorf("AppendBinary returned % x on error, want its input", out)
			}
		})
	}
}

func TestRoundTrip(t *testing.T) {
	var pk smp.PKeyTable
	var lft smp.LinearForwardingTable
	for i := range pk.PKeys {
		pk.PKeys[i] = uint16(0x8000 | i*0x101)
	}
	for i := range lft.Ports {
		lft.Ports[i] = uint8(255 - i)
	}
	for _, tc := range []struct {
		name string
		v    madtest.Codec
		zero func() madtest.Codec
	}{
		{"NodeInfo", &smp.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: smp.NodeTypeSwitch, NumPorts: 36,
			SystemImageGUID: 0x0002c90300a1b2c3, NodeGUID: 0x0002c90300a1b2c4, PortGUID: 0x0002c90300a1b2c4,
			PartitionCap: 8, DeviceID: 0xc738, Revision: 0xa0, LocalPortNum: 17, VendorID: 0x0002c9},
			func() madtest.Codec { return new(smp.NodeInfo) }},
		{"NodeDescription", &smp.NodeDescription{NodeString: "switch-17 MF0;ib-sw17:MSB7700/U1"},
			func() madtest.Codec { return new(smp.NodeDescription) }},
		{"PortInfo", &smp.PortInfo{MKey: 1, GIDPrefix: 0xfe80000000000000, LID: 0xbfff, MasterSMLID: 1,
			CapabilityMask: smp.CapIsSM | smp.CapIsClientReregistrationSupported, MKeyLeasePeriod: 60,
			LocalPortNum: 1, LinkWidthEnabled: 2, LinkWidthSupported: 3, LinkWidthActive: 2,
			LinkSpeedSupported: 7, PortState: smp.PortStateArmed, PortPhysicalState: smp.PhysStateLinkUp,
			LinkDownDefaultState: 2, MKeyProtectBits: 3, LMC: 7, LinkSpeedActive: 4, LinkSpeedEnabled: 7,
			NeighborMTU: 5, MasterSMSL: 15, VLCap: 4, InitType: 0xf, VLHighLimit: 255,
			VLArbitrationHighCap: 8, VLArbitrationLowCap: 8, InitTypeReply: 1, MTUCap: 5, VLStallCount: 7,
			HOQLife: 31, OperationalVLs: 4, PartitionEnforcementInbound: true, FilterRawOutbound: true,
			MKeyViolations: 1, PKeyViolations: 2, QKeyViolations: 3, GUIDCap: 128, ClientReregister: true,
			MulticastPKeyTrapSuppressionEnabled: 2, SubnetTimeOut: 18, RespTimeValue: 31, LocalPhyErrors: 8,
			OverrunErrors: 8, MaxCreditHint: 0xffff, LinkSpeedExtActive2: 1, LinkSpeedExtSupported2: 3,
			LinkSpeedExtEnabled2: 7, LinkRoundTripLatency: 0xabcdef, CapabilityMask2: 0x30,
			LinkSpeedExtActive: 4, LinkSpeedExtSupported: 15, LinkSpeedExtEnabled: 31},
			func() madtest.Codec { return new(smp.PortInfo) }},
		{"SwitchInfo", &smp.SwitchInfo{LinearFDBCap: 49152, MulticastFDBCap: 4096, LinearFDBTop: 0xbfff,
			DefaultPort: 255, LifeTimeValue: 18, PortStateChange: true, OptimizedSLtoVLMappingProgramming: 2,
			LIDsPerPort: 1, PartitionEnforcementCap: 32, OutboundEnforcementCap: true, EnhancedPort0: true,
			MulticastFDBTop: 0xc3ff}, func() madtest.Codec { return new(smp.SwitchInfo) }},
		{"GUIDInfo", &smp.GUIDInfo{GUIDs: [8]uint64{1, 2, 3, 4, 5, 6, 7, ^uint64(0)}},
			func() madtest.Codec { return new(smp.GUIDInfo) }},
		{"P_KeyTable", &pk, func() madtest.Codec { return new(smp.PKeyTable) }},
		{"LinearForwardingTable", &lft, func() madtest.Codec { return new(smp.LinearForwardingTable) }},
		{"SMInfo", &smp.SMInfo{GUID: 0x200000, SMKey: 1, ActCount: 116, Priority: 15, SMState: smp.SMStateMaster},
			func() madtest.Codec { return new(smp.SMInfo) }},
		{"Notice", &smp.Notice{IsGeneric: true, Type: smp.NoticeSecurity, ProducerType: 1, TrapNumber: 256,
			IssuerLID: 9, NoticeToggle: true, NoticeCount: 0x7fff, DataDetails: [54]byte{1, 2, 3, 53: 0xff},
			IssuerGID: mad.NewGID(0xfe80000000000000, 0x100001)}, func() madtest.Codec { return new(smp.Notice) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.v.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			got := tc.zero()
			if err := got.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.v, got); d != "" {
				t.Errorf("decode(encode(v)) (-want +got):\n%s", d)
			}
		})
	}
}

// TestDecodeInPlace checks that decoding overwrites every field: a value
// decoded over a previous one equals a fresh decode.
func TestDecodeInPlace(t *testing.T) {
	ones := make([]byte, mad.Size)
	for i := range ones {
		ones[i] = 0xff
	}
	zeros := make([]byte, mad.Size)
	for _, a := range attrs {
		t.Run(a.name, func(t *testing.T) {
			v := a.new()
			if err := v.UnmarshalBinary(ones); err != nil {
				t.Fatal(err)
			}
			if err := v.UnmarshalBinary(zeros); err != nil {
				t.Fatal(err)
			}
			fresh := a.new()
			_ = fresh.UnmarshalBinary(zeros)
			if d := cmp.Diff(fresh, v); d != "" {
				t.Errorf("decode over a previous value left state behind (-fresh +reused):\n%s", d)
			}
		})
	}
}

func TestDecodeAllocs(t *testing.T) {
	b := make([]byte, mad.Size)
	copy(b[mad.SMPDataOff:], "Hca1")
	for _, a := range attrs {
		v := a.new()
		data := smp.Data(b)
		if a.layout == smp.NoticeLayout() {
			data = b[:smp.NoticeLayout().Size]
		}
		_ = v.UnmarshalBinary(data) // NodeDescription allocates its string once
		madtest.ZeroAllocs(t, a.name+".UnmarshalBinary", func() { _ = v.UnmarshalBinary(data) })
		out := make([]byte, 0, mad.Size)
		madtest.ZeroAllocs(t, a.name+".AppendBinary", func() { _, _ = v.AppendBinary(out[:0]) })
	}
}

// TestReservedIgnored sets every reserved bit of each attribute and frame
// (as the SMInfo capture from OpenSM had): decoding ignores them and
// encoding writes zeros.
func TestReservedIgnored(t *testing.T) {
	for _, a := range attrs {
		t.Run(a.name, func(t *testing.T) {
			madtest.ReservedIgnored(t, a.layout, make([]byte, a.layout.Size), a.new)
		})
	}
	for _, c := range madtest.Captures(t, "testdata/*.hex") {
		var s smp.SMP
		if s.UnmarshalBinary(c.Bytes) != nil {
			continue // a bare attribute
		}
		t.Run(c.Path, func(t *testing.T) { madtest.ReservedIgnored(t, s.Layout(), c.Bytes, newSMP) })
	}
}

func TestLayoutByNameAliases(t *testing.T) {
	for name, want := range map[string]*mad.Layout{
		"SL2VLMappingTable": smp.SLtoVLMappingTableLayout(), "sl2vl": smp.SLtoVLMappingTableLayout(),
		"slToVlMappingTable": smp.SLtoVLMappingTableLayout(), "VLArb": smp.VLArbitrationTableLayout(),
		"MFT": smp.MulticastForwardingTableLayout(), "p_keytable": smp.PKeyTableLayout(),
	} {
		if got := smp.LayoutByName(name); got != want {
			t.Errorf("LayoutByName(%q) = %v", name, got)
		}
	}
}
