package sa_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

func TestLayouts(t *testing.T) {
	madtest.CheckLayout(t, sa.HeaderLayout())
	for _, a := range sa.Attrs() {
		t.Run(a.Name(), func(t *testing.T) {
			madtest.CheckLayout(t, a.Layout)
			if len(a.Comp) != len(a.Layout.Fields) {
				t.Fatalf("%d component numbers for %d rows", len(a.Comp), len(a.Layout.Fields))
			}
			seen := map[int]string{}
			for i, c := range a.Comp {
				if c < 0 {
					continue
				}
				if c > 63 {
					t.Errorf("%s: component %d", a.Layout.Fields[i].Name, c)
				}
				if o, dup := seen[c]; dup {
					t.Errorf("%s and %s share component %d", o, a.Layout.Fields[i].Name, c)
				}
				seen[c] = a.Layout.Fields[i].Name
			}
			if a.Stride*8 < a.Layout.Size || a.Stride*8 >= a.Layout.Size+8 {
				t.Errorf("stride %d (x8) for %d bytes", a.Stride, a.Layout.Size)
			}
		})
	}
}

// TestComponents pins component numbers the spec and OpenSM's
// IB_*_COMPMASK_* constants give.
func TestComponents(t *testing.T) {
	for _, c := range []struct {
		attr  *sa.Attr
		field string
		comp  int
	}{
		{sa.NodeRecord(), "lid", 0}, {sa.NodeRecord(), "node_type", 4}, {sa.NodeRecord(), "node_guid", 7},
		{sa.NodeRecord(), "vendor_id", 13}, {sa.NodeRecord(), "node_description", 14},
		{sa.PortInfoRecord(), "endport_lid", 0}, {sa.PortInfoRecord(), "port_num", 1},
		{sa.PortInfoRecord(), "m_key", 3}, {sa.PortInfoRecord(), "lid", 5}, {sa.PortInfoRecord(), "capability_mask", 7},
		{sa.PortInfoRecord(), "local_port_num", 10}, {sa.PortInfoRecord(), "port_state", 15},
		{sa.PortInfoRecord(), "m_key_protect_bits", 18}, {sa.PortInfoRecord(), "lmc", 20},
		{sa.PathRecord(), "dgid", 2}, {sa.PathRecord(), "dlid", 4}, {sa.PathRecord(), "slid", 5},
		{sa.PathRecord(), "numb_path", 12}, {sa.PathRecord(), "mtu", 17}, {sa.PathRecord(), "preference", 22},
		{sa.MCMemberRecord(), "join_state", 16}, {sa.ServiceRecord(), "service_name", 6},
		{sa.ServiceRecord(), "service_data641", 36}, {sa.LinkRecord(), "to_lid", 3},
		{sa.SwitchInfoRecord(), "linear_fdb_cap", 2},
		{sa.MultiPathRecord(), "flow_label", 2}, {sa.MultiPathRecord(), "mtu", 11},
		{sa.MultiPathRecord(), "independence_selector", 17}, {sa.MultiPathRecord(), "sgid_count", 19},
		{sa.MultiPathRecord(), "dgid_count", 20},
		// OpenSM IB_SMIR_COMPMASK_*, IB_SLVL_*, IB_VLA_*, IB_MFTR_*, IB_IIR_*.
		{sa.SMInfoRecord(), "lid", 0}, {sa.SMInfoRecord(), "guid", 2}, {sa.SMInfoRecord(), "sm_key", 3},
		{sa.SMInfoRecord(), "act_count", 4}, {sa.SMInfoRecord(), "priority", 5}, {sa.SMInfoRecord(), "sm_state", 6},
		{sa.SLtoVLMappingTableRecord(), "input_port_num", 1}, {sa.SLtoVLMappingTableRecord(), "output_port_num", 2},
		{sa.VLArbitrationTableRecord(), "output_port_num", 1}, {sa.VLArbitrationTableRecord(), "block_num", 2},
		{sa.MulticastForwardingTableRecord(), "position", 1}, {sa.MulticastForwardingTableRecord(), "block_num", 3},
		{sa.InformInfoRecord(), "subscriber_gid", 0}, {sa.InformInfoRecord(), "enum", 1}, {sa.InformInfoRecord(), "gid", 3},
		{sa.InformInfoRecord(), "lid_range_end", 5}, {sa.InformInfoRecord(), "is_generic", 7},
		{sa.InformInfoRecord(), "trap_number", 10}, {sa.InformInfoRecord(), "QPN", 11},
	} {
		_, got, ok := c.attr.Field(c.field)
		if !ok || got != c.comp {
			t.Errorf("%s.%s: component %d (found %v), want %d", c.attr.Name(), c.field, got, ok, c.comp)
		}
	}
}

func TestWalkingOnes(t *testing.T) {
	for _, a := range sa.Attrs() {
		t.Run(a.Name(), func(t *testing.T) {
			madtest.WalkingOnes(t, a.Layout, func() madtest.Codec { return &sa.Record{Attr: a} })
		})
	}
	t.Run("NodeRec", func(t *testing.T) {
		madtest.WalkingOnes(t, sa.NodeRecordLayout(), func() madtest.Codec { return new(sa.NodeRec) })
	})
	t.Run("PathRec", func(t *testing.T) {
		madtest.WalkingOnes(t, sa.PathRecordLayout(), func() madtest.Codec { return new(sa.PathRec) })
	})
	t.Run("Header", func(t *testing.T) {
		madtest.WalkingOnes(t, sa.HeaderLayout(), func() madtest.Codec { return new(sa.Header) })
	})
}

// response is a captured SA response MAD seen as its header and first
// record, the rest kept raw so the capture re-encodes byte for byte.
type response struct {
	Header sa.Header
	First  madtest.Codec
	size   int
	Rest   []byte
}

func (r *response) UnmarshalBinary(b []byte) error {
	if err := r.Header.UnmarshalBinary(b); err != nil {
		return err
	}
	if err := r.First.UnmarshalBinary(b[sa.HeaderSize:]); err != nil {
		return err
	}
	r.Rest = b[sa.HeaderSize+r.size:]
	return nil
}

func (r *response) AppendBinary(b []byte) ([]byte, error) {
	b, _ = r.Header.AppendBinary(b)
	b, err := r.First.AppendBinary(b)
	return append(b, r.Rest...), err
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		file  string
		codec madtest.Codec
		size  int
	}{
		{"noderecord_get", new(sa.NodeRec), 108},
		{"noderecord_table", new(sa.NodeRec), 108},
		{"pathrecord_get", new(sa.PathRec), 64},
		{"pathrecord_hca1_lid1", new(sa.PathRec), 64},
		{"pathrecord_hca1_lid2", new(sa.PathRec), 64},
		{"pathrecord_hca1_lid4", new(sa.PathRec), 64},
		{"portinforecord_get", &sa.Record{Attr: sa.PortInfoRecord()}, 68},
		{"linkrecord_table", &sa.Record{Attr: sa.LinkRecord()}, 8},
		{"switchinforecord_table", &sa.Record{Attr: sa.SwitchInfoRecord()}, 24},
		{"guidinforecord_get", &sa.Record{Attr: sa.GUIDInfoRecord()}, 72},
		{"lftrecord_table", &sa.Record{Attr: sa.LinearForwardingTableRecord()}, 72},
		{"mcmemberrecord_table", &sa.Record{Attr: sa.MCMemberRecord()}, 52},
		{"classportinfo_get", new(mad.ClassPortInfo), 72},
	} {
		t.Run(c.file, func(t *testing.T) {
			r := &response{First: c.codec, size: c.size}
			var views []madtest.View
			if rec, ok := c.codec.(*sa.Record); ok {
				views = append(views, madtest.View{Layout: rec.Attr.Layout, Offset: sa.HeaderSize})
			}
			madtest.Golden(t, "testdata/"+c.file+".hex", r, views...)
		})
	}
}

// TestCaptureFacts pins what the captures show about OpenSM's SA behind a
// transport without RMPP (umad2sim): the GetTableResp carries RMPP version
// 1 and the Active flag but type 0, segment 0, PayloadLength 0 (the kernel
// would fill them in), and only the first 256 bytes of the message.
func TestCaptureFacts(t *testing.T) {
	c := madtest.ReadCapture(t, "testdata/noderecord_table.hex")
	var h sa.Header
	if err := h.UnmarshalBinary(c.Bytes); err != nil {
		t.Fatal(err)
	}
	if h.RMPP.Version != 1 || h.RMPP.Flags != 1 || h.RMPP.Type != 0 || h.RMPP.Data1 != 0 || h.AttributeOffset != 14 {
		t.Errorf("RMPP header %+v, attribute offset %d", h.RMPP, h.AttributeOffset)
	}
	var n sa.NodeRec
	if err := n.UnmarshalBinary(c.Bytes[56:]); err != nil {
		t.Fatal(err)
	}
	if n.NodeInfo.NodeType != smp.NodeTypeSwitch && n.NodeInfo.NodeType != smp.NodeTypeCA {
		t.Errorf("node type %d", n.NodeInfo.NodeType)
	}
}

func FuzzRecords(f *testing.F) {
	for _, c := range madtest.Captures(f, "testdata/*.hex") {
		f.Add(c.Bytes[56:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, nv := range []func() madtest.Codec{
			func() madtest.Codec { return new(sa.NodeRec) },
			func() madtest.Codec { return new(sa.PathRec) },
			func() madtest.Codec { return &sa.Record{Attr: sa.PortInfoRecord()} },
			func() madtest.Codec { return &sa.Record{Attr: sa.ServiceRecord()} },
		} {
			v := nv()
			if v.UnmarshalBinary(b) != nil {
				continue
			}
			enc, err := v.AppendBinary(nil)
			if err != nil {
				t.Fatal(err)
			}
			w := nv()
			if err := w.UnmarshalBinary(enc); err != nil {
				t.Fatal(err)
			}
			again, _ := w.AppendBinary(nil)
			if !bytes.Equal(enc, again) {
				t.Fatalf("%T: not stable", v)
			}
		}
		var h sa.Header
		_ = h.UnmarshalBinary(b)
		_, _ = sa.Records(b)
	})
}

func TestZeroAllocs(t *testing.T) {
	c := madtest.ReadCapture(t, "testdata/noderecord_table.hex")
	var h sa.Header
	var n sa.NodeRec
	var p sa.PathRec
	r := sa.Record{Attr: sa.PortInfoRecord()}
	madtest.ZeroAllocs(t, "sa header", func() { _ = h.UnmarshalBinary(c.Bytes) })
	madtest.ZeroAllocs(t, "NodeRecord", func() { _ = n.UnmarshalBinary(c.Bytes[56:]) })
	madtest.ZeroAllocs(t, "PathRecord", func() { _ = p.UnmarshalBinary(c.Bytes[56:]) })
	madtest.ZeroAllocs(t, "PortInfoRecord", func() { _ = r.UnmarshalBinary(c.Bytes[56:]) })
}

func TestMatchesAndRecords(t *testing.T) {
	a := sa.NodeRecord()
	rec := make([]byte, 108)
	f, comp, _ := a.Field("node_type")
	f.Put(rec, 2)
	tmpl := make([]byte, 108)
	f.Put(tmpl, 1)
	if a.Matches(rec, tmpl, 1<<comp) || !a.Matches(rec, tmpl, 0) || !a.Matches(rec, tmpl, 1<<0) {
		t.Error("component matching")
	}
	msg := make([]byte, 56+3*112)
	sa.SetAttributeOffset(msg, 14)
	rs, err := sa.Records(msg)
	if err != nil || len(rs) != 3 || len(rs[2]) != 112 {
		t.Errorf("Records: %d %v", len(rs), err)
	}
	sa.SetAttributeOffset(msg, 0)
	if rs, _ := sa.Records(msg); len(rs) != 0 {
		t.Error("zero AttributeOffset")
	}
	if _, err := sa.NewRequest(1, 0x11, 1, 0, make([]byte, 201)); err == nil {
		t.Error("oversized template accepted")
	}
	_ = fmt.Sprint
}

func TestMultiPathRecordGIDs(t *testing.T) {
	s := []mad.GID{mad.NewGID(0xfe80<<48, 1), mad.NewGID(0xfe80<<48, 2)}
	d := []mad.GID{mad.NewGID(0xfe80<<48, 3)}
	b, err := sa.AppendMPR(nil, make([]byte, 24), s, d)
	if err != nil || len(b) != 24+3*16 {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	gs, gd, err := sa.MPRGIDs(b)
	if err != nil || len(gs) != 2 || len(gd) != 1 || gs[1] != s[1] || gd[0] != d[0] {
		t.Errorf("GIDs %v %v %v", gs, gd, err)
	}
	if _, _, err := sa.MPRGIDs(b[:50]); !errors.Is(err, mad.ErrTruncated) {
		t.Errorf("short record: %v", err)
	}
}

func TestAliases(t *testing.T) {
	for name, want := range map[string]*sa.Attr{
		"SL2VLTableRecord": sa.SLtoVLMappingTableRecord(), "sminforecord": sa.SMInfoRecord(),
		"VLArbTableRecord": sa.VLArbitrationTableRecord(), "MFTRecord": sa.MulticastForwardingTableRecord(),
		"InformInfoRecord": sa.InformInfoRecord(),
	} {
		if got, ok := sa.AttrByName(name); !ok || got != want {
			t.Errorf("AttrByName(%q) = %v, %v", name, got, ok)
		}
	}
	if _, ok := sa.AttrByName("NoSuchRecord"); ok {
		t.Error("AttrByName of an unknown name")
	}
}
