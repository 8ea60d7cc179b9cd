package cm_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cm"
	"github.com/ibscript/ibscript/mad/madtest"
)

var msgs = []struct {
	layout *mad.Layout
	new    func() madtest.Codec
	pd     int
}{
	{cm.REQLayout(), func() madtest.Codec { return new(cm.REQ) }, cm.REQPrivateData},
	{cm.MRALayout(), func() madtest.Codec { return new(cm.MRA) }, cm.MRAPrivateData},
	{cm.REJLayout(), func() madtest.Codec { return new(cm.REJ) }, cm.REJPrivateData},
	{cm.REPLayout(), func() madtest.Codec { return new(cm.REP) }, cm.REPPrivateData},
	{cm.RTULayout(), func() madtest.Codec { return new(cm.RTU) }, cm.RTUPrivateData},
	{cm.DREQLayout(), func() madtest.Codec { return new(cm.DREQ) }, cm.DREQPrivateData},
	{cm.DREPLayout(), func() madtest.Codec { return new(cm.DREP) }, cm.DREPPrivateData},
	{cm.SIDRReqLayout(), func() madtest.Codec { return new(cm.SIDRReq) }, cm.SIDRReqPrivateData},
	{cm.SIDRRepLayout(), func() madtest.Codec { return new(cm.SIDRRep) }, cm.SIDRRepPrivateData},
}

func TestLayouts(t *testing.T) {
	if len(cm.Layouts()) != len(msgs) {
		t.Fatalf("Layouts() has %d, the test knows %d", len(cm.Layouts()), len(msgs))
	}
	for _, m := range msgs {
		t.Run(m.layout.Name, func(t *testing.T) {
			madtest.CheckLayout(t, m.layout)
			madtest.WalkingOnes(t, m.layout, m.new)
			if m.layout.Size != 232 {
				t.Errorf("size %d, want 232", m.layout.Size)
			}
			pd, ok := m.layout.Field("PrivateData")
			if !ok {
				t.Fatal("no PrivateData")
			}
			// Private data is the last field and ends the message.
			if pd.Width/8 != m.pd || pd.End() != 8*232 {
				t.Errorf("PrivateData %v: %d bytes ending at bit %d, want %d ending at %d", pd, pd.Width/8, pd.End(), m.pd, 8*232)
			}
			if cm.LayoutByID(m.layout.ID) != m.layout {
				t.Errorf("LayoutByID(%#x) is not this layout", m.layout.ID)
			}
			if cm.Name(m.layout.ID) != m.layout.Name {
				t.Errorf("Name(%#x) = %q", m.layout.ID, cm.Name(m.layout.ID))
			}
		})
	}
	if cm.LayoutByID(cm.AttrLAP) != nil || cm.Name(0x99) != "0x0099" {
		t.Error("LAP has no codec; unknown ids are shown in hex")
	}
}

// TestMADOffsets pins the MAD byte of some fields against the "MAD byte"
// column of rdmacm-abi.md section 10.2.
func TestMADOffsets(t *testing.T) {
	for _, c := range []struct {
		l     *mad.Layout
		field string
		byte_ int
	}{
		{cm.REQLayout(), "ServiceID", 32}, {cm.REQLayout(), "LocalQPN", 56}, {cm.REQLayout(), "PartitionKey", 72},
		{cm.REQLayout(), "MaxCMRetries", 75}, {cm.REQLayout(), "PrimaryLocalLID", 76}, {cm.REQLayout(), "PrimaryRemoteGID", 96},
		{cm.REQLayout(), "PrimarySL", 118}, {cm.REQLayout(), "PrivateData", 164}, {cm.REQLayout(), "AlternateLocalACKTimeout", 163},
		{cm.MRALayout(), "ServiceTimeout", 33}, {cm.MRALayout(), "PrivateData", 34},
		{cm.REJLayout(), "Reason", 34}, {cm.REJLayout(), "ARI", 36}, {cm.REJLayout(), "PrivateData", 108},
		{cm.REPLayout(), "StartingPSN", 44}, {cm.REPLayout(), "LocalCAGUID", 52}, {cm.REPLayout(), "PrivateData", 60},
		{cm.DREQLayout(), "RemoteQPN", 32}, {cm.DREQLayout(), "PrivateData", 36},
		{cm.SIDRReqLayout(), "ServiceID", 32}, {cm.SIDRReqLayout(), "PrivateData", 40},
		{cm.SIDRRepLayout(), "QPN", 32}, {cm.SIDRRepLayout(), "ServiceID", 36}, {cm.SIDRRepLayout(), "QKey", 44},
		{cm.SIDRRepLayout(), "PrivateData", 120},
	} {
		f, ok := c.l.Field(c.field)
		if !ok {
			t.Errorf("%s.%s missing", c.l.Name, c.field)
			continue
		}
		if got := 24 + f.Bit/8; got != c.byte_ {
			t.Errorf("%s.%s at MAD byte %d, want %d", c.l.Name, c.field, got, c.byte_)
		}
	}
}

func TestREQGolden(t *testing.T) {
	r := cm.REQ{LocalCommID: 0x11223344, ServiceID: 0x0000000001061D2F, LocalQPN: 0xABCDEF,
		RemoteCMResponseTimeout: 20, LocalCMResponseTimeout: 20, MaxCMRetries: 15, PKey: 0xffff,
		PathMTU: 4, PrimaryLocalLID: 3, PrimaryRemoteLID: 7, StartingPSN: 0x123456, RetryCount: 7}
	r.PrivateData[0] = 0x00
	r.PrivateData[1] = 0x40
	b, body := cm.NewMAD(cm.AttrREQ, 0x0102030405060708)
	if _, err := r.AppendBinary(body[:0]); err != nil {
		t.Fatal(err)
	}
	want := map[int][]byte{
		0: {1, 0x07, 2, 0x03}, 8: {1, 2, 3, 4, 5, 6, 7, 8}, 16: {0, 0x10},
		24: {0x11, 0x22, 0x33, 0x44}, 32: {0, 0, 0, 0, 1, 6, 0x1d, 0x2f}, 56: {0xab, 0xcd, 0xef},
		67: {20 << 3}, 68: {0x12, 0x34, 0x56, 20<<3 | 7}, 72: {0xff, 0xff, 4 << 4, 15 << 4},
		76: {0, 3, 0, 7}, 164: {0, 0x40},
	}
	for off, w := range want {
		if !bytes.Equal(b[off:off+len(w)], w) {
			t.Errorf("MAD byte %d: % x, want % x", off, b[off:off+len(w)], w)
		}
	}
	var back cm.REQ
	body2, err := cm.Body(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := back.UnmarshalBinary(body2); err != nil || back != r {
		t.Errorf("round trip: %v %+v", err, back)
	}
	if _, err := cm.Body(b[:100]); err == nil {
		t.Error("Body of a short MAD: no error")
	}
	if err := back.UnmarshalBinary(b[:100]); err == nil {
		t.Error("short REQ: no error")
	}
	bad := cm.REQ{MaxCMRetries: 16}
	if _, err := bad.MarshalBinary(); err == nil {
		t.Error("MaxCMRetries 16 fits 4 bits?")
	}
}

func TestDuration(t *testing.T) {
	if got := cm.Duration(20); got != 4294967296*time.Nanosecond {
		t.Errorf("Duration(20) = %v", got)
	}
	if got := cm.Duration(0); got != 4096*time.Nanosecond {
		t.Errorf("Duration(0) = %v", got)
	}
}

func FuzzMessages(f *testing.F) {
	f.Add(make([]byte, 232))
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, m := range msgs {
			v := m.new()
			if err := v.UnmarshalBinary(b); err != nil {
				continue
			}
			enc, err := v.AppendBinary(nil)
			if err != nil {
				t.Fatalf("%s: encode decoded: %v", m.layout.Name, err)
			}
			w := m.new()
			if err := w.UnmarshalBinary(enc); err != nil {
				t.Fatal(err)
			}
			again, _ := w.AppendBinary(nil)
			if !bytes.Equal(enc, again) {
				t.Fatalf("%s: unstable encoding", m.layout.Name)
			}
		}
	})
}

func TestZeroAllocs(t *testing.T) {
	b := make([]byte, 232)
	var r cm.REQ
	madtest.ZeroAllocs(t, "REQ decode", func() { _ = r.UnmarshalBinary(b) })
}
