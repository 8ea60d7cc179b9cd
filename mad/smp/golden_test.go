package smp_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/smp"
)

// framed decodes a whole SMP and the attribute in its data.
type framed struct {
	SMP  smp.SMP
	Attr madtest.Codec
}

func (f *framed) UnmarshalBinary(b []byte) error {
	if err := f.SMP.UnmarshalBinary(b); err != nil {
		return err
	}
	return f.Attr.UnmarshalBinary(f.SMP.Data[:])
}

// AppendBinary re-encodes the attribute over the SMP's data (an SMP
// carries the first 64 bytes of it), then the SMP.
func (f *framed) AppendBinary(b []byte) ([]byte, error) {
	s := f.SMP
	enc, err := f.Attr.AppendBinary(nil)
	if err != nil {
		return b, err
	}
	copy(s.Data[:], enc)
	return s.AppendBinary(b)
}

func attrCodec(id uint16) madtest.Codec {
	switch id {
	case smp.AttrNodeInfo:
		return new(smp.NodeInfo)
	case smp.AttrNodeDescription:
		return new(smp.NodeDescription)
	case smp.AttrPortInfo:
		return new(smp.PortInfo)
	case smp.AttrSwitchInfo:
		return new(smp.SwitchInfo)
	case smp.AttrGUIDInfo:
		return new(smp.GUIDInfo)
	case smp.AttrPKeyTable:
		return new(smp.PKeyTable)
	case smp.AttrLinearForwardingTable:
		return new(smp.LinearForwardingTable)
	case smp.AttrSMInfo:
		return new(smp.SMInfo)
	case smp.AttrNotice:
		return new(smp.Notice)
	}
	return nil
}

// bare lists the captures that hold an attribute alone, not a whole SMP.
var bare = map[string]madtest.Codec{
	"notice_vendor.hex": new(smp.Notice),
}

// TestGolden decodes every capture in testdata, compares it with its
// .golden rendering and re-encodes it byte for byte.
func TestGolden(t *testing.T) {
	caps := madtest.Captures(t, "testdata/*.hex")
	if len(caps) < 12 {
		t.Fatalf("found %d captures in testdata", len(caps))
	}
	for _, c := range caps {
		name := filepath.Base(c.Path)
		t.Run(name, func(t *testing.T) {
			if v, ok := bare[name]; ok {
				l := smp.LayoutByID(smp.AttrNotice)
				madtest.Golden(t, c.Path, v, madtest.View{Layout: l})
				return
			}
			id := mad.AttrIDOf(c.Bytes)
			attr := attrCodec(id)
			if attr == nil {
				t.Fatalf("no codec for attribute %#04x", id)
			}
			var s smp.SMP
			if err := s.UnmarshalBinary(c.Bytes); err != nil {
				t.Fatal(err)
			}
			views := []madtest.View{{Layout: s.Layout()}}
			if l := smp.LayoutByID(id); l.Size <= mad.SMPDataLen {
				views = append(views, madtest.View{Layout: l, Offset: mad.SMPDataOff})
			}
			madtest.Golden(t, c.Path, &framed{Attr: attr}, views...)
		})
	}
}

func decodeCapture(t *testing.T, name string, attr madtest.Codec) smp.SMP {
	t.Helper()
	c := madtest.ReadCapture(t, filepath.Join("testdata", name))
	f := framed{Attr: attr}
	if err := f.UnmarshalBinary(c.Bytes); err != nil {
		t.Fatal(err)
	}
	if f.SMP.Status != 0 || f.SMP.Method != mad.MethodGetResp {
		t.Fatalf("%s: not a successful GetResp: method %#x status %#x", name, f.SMP.Method, f.SMP.Status)
	}
	return f.SMP
}

// TestReferenceValues checks decoded captures against what smpquery and
// ibroute printed for the same rig (infiniband-diags 44 through umad2sim;
// /tmp/ref/queries.txt when the captures were made).
func TestReferenceValues(t *testing.T) {
	t.Run("PortInfo CA", func(t *testing.T) {
		// smpquery portinfo 2 1
		var p smp.PortInfo
		decodeCapture(t, "portinfo_ca.hex", &p)
		want := smp.PortInfo{
			GIDPrefix: 0xfe80000000000000, LID: 2, MasterSMLID: 1, CapabilityMask: 0x50c048,
			MKeyLeasePeriod: 4089, LocalPortNum: 1, LinkWidthEnabled: 2, LinkWidthSupported: 0x1f,
			LinkWidthActive: 2, LinkSpeedSupported: 7, PortState: smp.PortStateActive,
			PortPhysicalState: smp.PhysStateLinkUp, LinkDownDefaultState: 2, LinkSpeedActive: 1,
			LinkSpeedEnabled: 1, NeighborMTU: 4, VLCap: 4, VLArbitrationHighCap: 8,
			VLArbitrationLowCap: 8, MTUCap: 4, VLStallCount: 7, OperationalVLs: 4, GUIDCap: 32,
			SubnetTimeOut: 31, CapabilityMask2: 0x30,
		}
		if d := cmp.Diff(want, p); d != "" {
			t.Errorf("PortInfo (-smpquery +decoded):\n%s", d)
		}
		names := []string{"IsTrapSupported", "IsSLMappingSupported", "IsExtendedSpeedsSupported",
			"IsCapabilityMask2Supported", "IsVendorClassSupported", "IsCapabilityMaskNoticeSupported"}
		if d := cmp.Diff(names, smp.CapabilityMaskNames(p.CapabilityMask)); d != "" {
			t.Errorf("CapMask names (-smpquery +got):\n%s", d)
		}
		if d := cmp.Diff([]string{"IsLinkWidth2xSupported", "IsLinkSpeedHDRSupported"}, smp.CapabilityMask2Names(p.CapabilityMask2)); d != "" {
			t.Errorf("CapabilityMask2 names (-smpquery +got):\n%s", d)
		}
		for _, c := range []struct{ got, want string }{
			{smp.WidthName(p.LinkWidthEnabled), "4X"},
			{smp.WidthMaskName(p.LinkWidthSupported), "1X or 4X or 8X or 12X or 2X"},
			{smp.SpeedMaskName(p.LinkSpeedSupported), "2.5 Gbps or 5.0 Gbps or 10.0 Gbps"},
			{smp.PortStateName(p.PortState), "Active"},
			{smp.PhysStateName(p.PortPhysicalState), "LinkUp"},
			{smp.LinkDownDefaultStateName(p.LinkDownDefaultState), "Polling"},
			{smp.SpeedName(p.LinkSpeedActive), "2.5 Gbps"},
			{smp.VLCapName(p.VLCap), "VL0-7"},
			{smp.ExtSpeedName(p.LinkSpeedExtActive), "No Extended Speed"},
			{p.LinkText(), "4xSDR"},
		} {
			if c.got != c.want {
				t.Errorf("got %q, smpquery printed %q", c.got, c.want)
			}
		}
		if smp.MTUBytes(p.NeighborMTU) != 2048 || smp.MTUBytes(p.MTUCap) != 2048 {
			t.Errorf("MTUs %d/%d, want 2048", smp.MTUBytes(p.NeighborMTU), smp.MTUBytes(p.MTUCap))
		}
	})
	t.Run("PortInfo switch port 0", func(t *testing.T) {
		// smpquery portinfo 1 0
		var p smp.PortInfo
		decodeCapture(t, "portinfo_switch_port0.hex", &p)
		if p.CapabilityMask != 0xc04a || p.LID != 1 || p.RespTimeValue != 8 || p.GUIDCap != 1 ||
			smp.MTUBytes(p.NeighborMTU) != 256 || smp.MTUBytes(p.MTUCap) != 1024 || p.MKeyLeasePeriod != 4089 {
			t.Errorf("decoded %+v", p)
		}
		if names := smp.CapabilityMaskNames(p.CapabilityMask); !slices.Equal(names, []string{"IsSM", "IsTrapSupported",
			"IsSLMappingSupported", "IsExtendedSpeedsSupported", "IsCapabilityMask2Supported"}) {
			t.Errorf("CapMask names %q", names)
		}
	})
	t.Run("PortInfo switch port 3", func(t *testing.T) {
		// smpquery portinfo 1 3
		var p smp.PortInfo
		decodeCapture(t, "portinfo_switch_port3.hex", &p)
		if p.HOQLife != 18 || p.LID != 0 || p.CapabilityMask != 0 || p.VLStallCount != 7 ||
			p.PortState != smp.PortStateActive || smp.MTUBytes(p.MTUCap) != 2048 {
			t.Errorf("decoded %+v", p)
		}
	})
	t.Run("SwitchInfo", func(t *testing.T) {
		// smpquery switchinfo 1
		var s smp.SwitchInfo
		decodeCapture(t, "switchinfo.hex", &s)
		want := smp.SwitchInfo{LinearFDBCap: 30720, MulticastFDBCap: 1024, LinearFDBTop: 6,
			LifeTimeValue: 18, PartitionEnforcementCap: 64, FilterRawInboundCap: true, FilterRawOutboundCap: true}
		if d := cmp.Diff(want, s); d != "" {
			t.Errorf("SwitchInfo (-smpquery +decoded):\n%s", d)
		}
	})
	t.Run("NodeInfo", func(t *testing.T) {
		// smpquery nodeinfo 2 (LID-routed) and smpquery -D nodeinfo 0,1 (the same CA)
		ca := smp.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: smp.NodeTypeCA, NumPorts: 2,
			SystemImageGUID: 0x100000, NodeGUID: 0x100000, PortGUID: 0x100001, PartitionCap: 64,
			Revision: 0xa1, LocalPortNum: 1}
		for _, name := range []string{"nodeinfo_ca.hex", "nodeinfo_ca_dr.hex"} {
			var n smp.NodeInfo
			decodeCapture(t, name, &n)
			if d := cmp.Diff(ca, n); d != "" {
				t.Errorf("%s (-smpquery +decoded):\n%s", name, d)
			}
		}
		// smpquery nodeinfo 1; the capture went through Switch1 port 2 instead of port 0.
		var n smp.NodeInfo
		s := decodeCapture(t, "nodeinfo_switch_dr.hex", &n)
		sw := smp.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: smp.NodeTypeSwitch, NumPorts: 8,
			SystemImageGUID: 0x200000, NodeGUID: 0x200000, PortGUID: 0x200000, PartitionCap: 8,
			Revision: 0xa1, LocalPortNum: 2}
		if d := cmp.Diff(sw, n); d != "" {
			t.Errorf("switch (-smpquery +decoded):\n%s", d)
		}
		if smp.NodeTypeName(n.NodeType) != "Switch" || smp.NodeTypeName(ca.NodeType) != "Channel Adapter" {
			t.Error("NodeTypeName")
		}
		if !s.IsDR() || !s.Direction || s.HopCount != 1 || s.DrSLID != smp.PermissiveLID {
			t.Errorf("DR framing %+v", s)
		}
	})
	t.Run("DR paths", func(t *testing.T) {
		// Hca3 -> Switch1 (in 2) -> port 1 -> Hca1 (in 1)
		s := decodeCapture(t, "nodeinfo_ca_dr.hex", new(smp.NodeInfo))
		if s.HopCount != 2 || s.InitialPath[1] != 1 || s.InitialPath[2] != 1 ||
			s.ReturnPath[1] != 2 || s.ReturnPath[2] != 1 || smp.FormatPath(s.InitialPath[:s.HopCount+1]) != "0,1,1" {
			t.Errorf("paths: hc %d initial % x return % x", s.HopCount, s.InitialPath[:4], s.ReturnPath[:4])
		}
	})
	t.Run("NodeDescription", func(t *testing.T) {
		var n smp.NodeDescription
		decodeCapture(t, "nodedesc_ca.hex", &n)
		if n.String() != "Hca1" {
			t.Errorf("NodeDescription %q, smpquery printed Hca1", n.NodeString)
		}
	})
	t.Run("P_KeyTable", func(t *testing.T) {
		// smpquery pkeys 2 1: 0xffff then zeros
		var p smp.PKeyTable
		decodeCapture(t, "pkeytable_ca.hex", &p)
		if d := cmp.Diff(smp.PKeyTable{PKeys: [32]uint16{smp.DefaultPKey}}, p); d != "" {
			t.Errorf("P_KeyTable (-smpquery +decoded):\n%s", d)
		}
		if !smp.PKeyFull(p.PKeys[0]) || smp.PKeyBase(p.PKeys[0]) != 0x7fff {
			t.Error("PKeyFull/PKeyBase")
		}
	})
	t.Run("LinearForwardingTable", func(t *testing.T) {
		// ibroute 1: LIDs 1..6 -> ports 0 1 3 3 2 5
		var l smp.LinearForwardingTable
		decodeCapture(t, "lft_block0.hex", &l)
		if d := cmp.Diff([]uint8{smp.DropPort, 0, 1, 3, 3, 2, 5, smp.DropPort}, l.Ports[:8]); d != "" {
			t.Errorf("LFT (-ibroute +decoded):\n%s", d)
		}
	})
	t.Run("GUIDInfo", func(t *testing.T) {
		var g smp.GUIDInfo
		decodeCapture(t, "guidinfo_ca.hex", &g)
		if d := cmp.Diff(smp.GUIDInfo{GUIDs: [8]uint64{0x100001}}, g); d != "" {
			t.Errorf("GUIDInfo: port GUID first (-want +decoded):\n%s", d)
		}
	})
	t.Run("SMInfo", func(t *testing.T) {
		// OpenSM on Switch1 (GUID 0x200000), master, default SM_Key 1
		var s smp.SMInfo
		decodeCapture(t, "sminfo.hex", &s)
		if s.GUID != 0x200000 || s.SMKey != 1 || smp.SMStateName(s.SMState) != "Master" || s.ActCount == 0 {
			t.Errorf("SMInfo %+v", s)
		}
	})
}
