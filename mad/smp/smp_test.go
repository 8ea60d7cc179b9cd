package smp_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/smp"
)

func newSMP() madtest.Codec { return new(smp.SMP) }

func TestSMPWalkingOnes(t *testing.T) {
	// MgmtClass chooses the framing, so it is part of the background.
	madtest.WalkingOnesOn(t, smp.SMPLayout(), withClass(mad.ClassSubnLID), newSMP)
	dr := withClass(mad.ClassSubnDR)
	// MgmtClass all ones (0xff) is not 0x81 any more: the SMP is decoded and
	// encoded LID-routed, and the DR fields are gone.
	madtest.WalkingOnesOn(t, smp.DRSMPLayout(), dr, newSMP, "MgmtClass")
}

// withClass returns a zero MAD of class c.
func withClass(c uint8) []byte {
	b := make([]byte, mad.Size)
	h := mad.Header{MgmtClass: c}
	h.Put(b)
	return b
}

func TestSMPRoundTrip(t *testing.T) {
	want := smp.SMP{
		Header: mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSubnDR, ClassVersion: 1,
			Method: mad.MethodGetResp, Status: 0x001c, TID: 0x1122334455667788,
			AttrID: smp.AttrPortInfo, AttrMod: 3},
		MKey: 0xfedcba9876543210, Direction: true, HopPointer: 2, HopCount: 3,
		DrSLID: 5, DrDLID: smp.PermissiveLID,
		Data:        [64]byte{1, 2, 3, 63: 4},
		InitialPath: [64]byte{0, 1, 3, 7},
		ReturnPath:  [64]byte{0, 5, 2, 1},
	}
	b, err := want.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != mad.Size {
		t.Fatalf("MarshalBinary gave %d bytes", len(b))
	}
	if mad.StatusOf(b) != 0x801c {
		t.Errorf("wire status %#04x, want the D bit over 0x001c", mad.StatusOf(b))
	}
	var got smp.SMP
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}

	// LID-routed: the DR fields are neither encoded nor decoded.
	lid := want
	lid.MgmtClass = mad.ClassSubnLID
	b, err = lid.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b[128:], make([]byte, 128)) {
		t.Errorf("LID-routed SMP carries data after byte 128:\n% x", b[128:])
	}
	got = smp.SMP{}
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	lid.Direction, lid.HopPointer, lid.HopCount, lid.DrSLID, lid.DrDLID = false, 0, 0, 0, 0
	lid.InitialPath, lid.ReturnPath = [64]byte{}, [64]byte{}
	if d := cmp.Diff(lid, got); d != "" {
		t.Errorf("LID-routed round trip (-want +got):\n%s", d)
	}
	if got.Layout() != smp.SMPLayout() || (&want).Layout() != smp.DRSMPLayout() {
		t.Error("Layout() picks the wrong framing")
	}
}

func TestSMPTruncated(t *testing.T) {
	err := new(smp.SMP).UnmarshalBinary(make([]byte, 255))
	if !errors.Is(err, mad.ErrTruncated) || err.Error() != "smp: truncated (have 255, need 256)" {
		t.Errorf("UnmarshalBinary(255 bytes) = %v", err)
	}
}

func TestNewGetDirected(t *testing.T) {
	path, err := smp.ParsePath("0,1,3")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, mad.Size)
	b, err := smp.NewGet(buf, 0xabcd, smp.AttrNodeInfo, 0, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != mad.Size || &b[0] != &buf[:1][0] {
		t.Fatal("NewGet did not build into the caller's buffer")
	}
	var s smp.SMP
	if err := s.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	want := smp.SMP{
		Header: mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSubnDR, ClassVersion: 1,
			Method: mad.MethodGet, TID: 0xabcd, AttrID: smp.AttrNodeInfo},
		HopCount: 2, DrSLID: 0xffff, DrDLID: 0xffff,
		InitialPath: [64]byte{1: 1, 2: 3},
	}
	if d := cmp.Diff(want, s); d != "" {
		t.Errorf("DR Get (-want +got):\n%s", d)
	}
	if !smp.IsDR(b) || smp.HopCount(b) != 2 || smp.HopPointer(b) != 0 || smp.Direction(b) {
		t.Error("raw accessors disagree with the decoded SMP")
	}
	if ip := smp.InitialPath(b); len(ip) != 64 || ip[1] != 1 || ip[2] != 3 || ip[0] != 0 {
		t.Errorf("InitialPath = % x", smp.InitialPath(b)[:4])
	}
}

// TestNewGetFirstPathElement: a route's first element goes out as
// InitialPath[0], as libibmad sends str2drpath's first element (smpquery
// -D 5,1 sends 5 there; the SMA skips it).
func TestNewGetFirstPathElement(t *testing.T) {
	b, err := smp.NewGet(make([]byte, mad.Size), 1, smp.AttrNodeInfo, 0, []uint8{5, 1})
	if err != nil {
		t.Fatal(err)
	}
	if ip := smp.InitialPath(b); ip[0] != 5 || ip[1] != 1 || smp.HopCount(b) != 1 {
		t.Errorf("InitialPath % x, hop count %d; want 05 01, 1", ip[:2], smp.HopCount(b))
	}
}

func TestNewGetLocalAndLID(t *testing.T) {
	b, err := smp.NewGet(make([]byte, mad.Size), 1, smp.AttrPortInfo, 1, []uint8{0})
	if err != nil {
		t.Fatal(err)
	}
	if !smp.IsDR(b) || smp.HopCount(b) != 0 || smp.DrDLID(b) != smp.PermissiveLID {
		t.Error(`path "0" should be a DR SMP with hop count 0`)
	}
	b, err = smp.NewGet(make([]byte, 300), 2, smp.AttrPortInfo, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var s smp.SMP
	_ = s.UnmarshalBinary(b)
	want := smp.SMP{Header: mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSubnLID, ClassVersion: 1,
		Method: mad.MethodGet, TID: 2, AttrID: smp.AttrPortInfo, AttrMod: 1}}
	if d := cmp.Diff(want, s); d != "" || len(b) != mad.Size {
		t.Errorf("LID-routed Get (-want +got):\n%s", d)
	}
	if smp.IsDR(b) {
		t.Error("IsDR on a LID-routed SMP")
	}
}

func TestNewRequestErrors(t *testing.T) {
	if _, err := smp.NewGet(make([]byte, 100), 1, 1, 0, nil); !errors.Is(err, mad.ErrTruncated) {
		t.Errorf("short buffer: %v", err)
	}
	if _, err := smp.NewGet(make([]byte, mad.Size), 1, 1, 0, make([]uint8, 65)); !errors.Is(err, mad.ErrRange) {
		t.Errorf("65-entry path: %v", err)
	}
	if _, err := smp.NewGet(make([]byte, mad.Size), 1, 1, 0, make([]uint8, 64)); err != nil {
		t.Errorf("63 hops: %v", err)
	}
}

// TestWorkedExample walks the directed-route example of mad-formats.md
// section 6.1 with the raw helpers, as the simulator does.
func TestWorkedExample(t *testing.T) {
	b, _ := smp.NewGet(make([]byte, mad.Size), 7, smp.AttrNodeInfo, 0, []uint8{0, 1, 3, 7})
	arrive := []uint8{5, 2, 1} // ports the SMP enters S1, S2 and the target through
	smp.SetHopPointer(b, 1)    // originator sends on InitialPath[1]
	for hop := 1; hop <= 3; hop++ {
		hp := smp.HopPointer(b)
		smp.ReturnPath(b)[hp] = arrive[hop-1]
		smp.SetHopPointer(b, hp+1)
	}
	if smp.HopPointer(b) != 4 {
		t.Fatalf("hop pointer %d at the target, want hc+1 = 4", smp.HopPointer(b))
	}
	smp.MakeGetResp(b, 0)
	if !smp.Direction(b) || mad.MethodOf(b) != mad.MethodGetResp || smp.Status(b) != 0 {
		t.Errorf("response: D %v method %#x status %#x", smp.Direction(b), mad.MethodOf(b), smp.Status(b))
	}
	var out []uint8
	for smp.HopPointer(b) > 1 {
		hp := smp.HopPointer(b) - 1
		out = append(out, smp.ReturnPath(b)[hp])
		smp.SetHopPointer(b, hp)
	}
	if d := cmp.Diff([]uint8{1, 2, 5}, out); d != "" {
		t.Errorf("return ports (-want +got):\n%s", d)
	}
	if got := smp.InitialPath(b)[:4]; !bytes.Equal(got, []byte{0, 1, 3, 7}) {
		t.Errorf("responder changed the initial path: % x", got)
	}
}

func TestMakeGetResp(t *testing.T) {
	b, _ := smp.NewGet(make([]byte, mad.Size), 9, smp.AttrSMInfo, 0, nil)
	smp.MakeGetResp(b, mad.StatusMethodAttrUnsup)
	if mad.MethodOf(b) != mad.MethodGetResp || mad.StatusOf(b) != 0x000c || smp.Status(b) != 0x000c {
		t.Errorf("LID-routed response: method %#x status %#x", mad.MethodOf(b), mad.StatusOf(b))
	}
	b, _ = smp.NewGet(make([]byte, mad.Size), 9, smp.AttrSMInfo, 0, []uint8{0, 1})
	smp.MakeGetResp(b, mad.StatusMethodAttrUnsup)
	if mad.StatusOf(b) != 0x800c || smp.Status(b) != 0x000c || !smp.Direction(b) {
		t.Errorf("DR response: status %#x", mad.StatusOf(b))
	}
}

func TestRawHelpers(t *testing.T) {
	b := withClass(mad.ClassSubnDR)
	smp.SetDirection(b, true)
	smp.SetHopPointer(b, 4)
	smp.SetHopCount(b, 3)
	smp.SetDrSLID(b, 0x12)
	smp.SetDrDLID(b, 0x34)
	smp.SetMKey(b, 0x5566)
	copy(smp.Data(b), "data")
	var s smp.SMP
	_ = s.UnmarshalBinary(b)
	if !s.Direction || s.HopPointer != 4 || s.HopCount != 3 || s.DrSLID != 0x12 || s.DrDLID != 0x34 ||
		s.MKey != 0x5566 || string(s.Data[:4]) != "data" {
		t.Errorf("setters and the decoder disagree: %+v", s)
	}
	if smp.DrSLID(b) != 0x12 || smp.DrDLID(b) != 0x34 || smp.MKey(b) != 0x5566 || smp.HopCount(b) != 3 {
		t.Error("getters and setters disagree")
	}
	smp.SetDirection(b, false)
	if smp.Direction(b) {
		t.Error("SetDirection(false) left the D bit set")
	}

	// The slices alias b and end with their field.
	d := smp.Data(b)
	if len(d) != 64 || cap(d) != 64 {
		t.Errorf("Data: len %d cap %d, want 64 64", len(d), cap(d))
	}
	pi := smp.PortInfo{LID: 0x42}
	if _, err := pi.AppendBinary(d[:0]); err != nil {
		t.Fatal(err)
	}
	if got := smp.PortInfoLayout().Fields[2].Get(smp.Data(b)); got != 0x42 {
		t.Errorf("AppendBinary(Data(b)[:0]) did not encode in place: LID %#x", got)
	}
	if c := cap(smp.InitialPath(b)); c != 64 {
		t.Errorf("InitialPath cap %d", c)
	}

	// Short buffers: zero values, no panics, no writes.
	short := make([]byte, 100)
	smp.SetHopPointer(short, 1)
	smp.SetDirection(short, true)
	smp.SetMKey(short, 1)
	if smp.HopPointer(short) != 0 || smp.Direction(short) || smp.IsDR(short) || smp.Data(short) != nil ||
		smp.InitialPath(short) != nil || smp.ReturnPath(short) != nil || smp.Status(short) != 0 ||
		!bytes.Equal(short, make([]byte, 100)) {
		t.Error("helpers on a short buffer")
	}
	smp.MakeGetResp(short, 0)
	smp.MakeGetResp(nil, 0)
}

func TestRawAllocs(t *testing.T) {
	buf := make([]byte, mad.Size)
	path := []uint8{0, 1, 3}
	madtest.ZeroAllocs(t, "NewGet", func() { _, _ = smp.NewGet(buf, 1, smp.AttrNodeInfo, 0, path) })
	madtest.ZeroAllocs(t, "helpers", func() {
		smp.SetHopPointer(buf, smp.HopPointer(buf)+1)
		_ = smp.Direction(buf)
		smp.ReturnPath(buf)[1] = smp.InitialPath(buf)[1]
		_ = smp.Data(buf)
		smp.MakeGetResp(buf, 0)
	})
	var s smp.SMP
	madtest.ZeroAllocs(t, "SMP.UnmarshalBinary", func() { _ = s.UnmarshalBinary(buf) })
	out := make([]byte, 0, mad.Size)
	madtest.ZeroAllocs(t, "SMP.AppendBinary", func() { _, _ = s.AppendBinary(out[:0]) })
}

func TestParsePath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []uint8
		err  bool
	}{
		{in: "0", want: []uint8{0}},
		{in: "0,1,3", want: []uint8{0, 1, 3}},
		{in: " 0, 1 ,36 ", want: []uint8{0, 1, 36}},
		{in: "0,0x10", want: []uint8{0, 16}},
		{in: "", err: true},
		{in: "0,256", err: true},
		{in: "0,a", err: true},
		{in: "0,,1", err: true},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := smp.ParsePath(tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("ParsePath(%q) error %v, want error %v", tc.in, err, tc.err)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ParsePath(%q) (-want +got):\n%s", tc.in, d)
			}
			if err == nil && smp.FormatPath(got) != smp.FormatPath(tc.want) {
				t.Errorf("FormatPath = %q", smp.FormatPath(got))
			}
		})
	}
	long := "0" + string(bytes.Repeat([]byte(",1"), 64))
	if _, err := smp.ParsePath(long); !errors.Is(err, mad.ErrRange) {
		t.Errorf("64 hops: %v", err)
	}
	if got := smp.FormatPath([]uint8{0, 1, 3}); got != "0,1,3" {
		t.Errorf("FormatPath = %q", got)
	}
}
