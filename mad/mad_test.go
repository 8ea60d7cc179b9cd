package mad_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
)

func TestHeaderWalkingOnes(t *testing.T) {
	madtest.WalkingOnes(t, mad.HeaderLayout(), func() madtest.Codec { return new(mad.Header) })
}

func TestClassPortInfoWalkingOnes(t *testing.T) {
	madtest.WalkingOnes(t, mad.ClassPortInfoLayout(), func() madtest.Codec { return new(mad.ClassPortInfo) })
}

func TestClassPortInfoRoundTrip(t *testing.T) {
	want := mad.ClassPortInfo{
		BaseVersion: 1, ClassVersion: 1, CapabilityMask: 0x1200, CapabilityMask2: 0x7ffffff,
		RespTimeValue: 18, RedirectGID: mad.NewGID(0xfe80_0000_0000_0000, 0x0002_c903_0001_0002),
		RedirectTC: 3, RedirectSL: 15, RedirectFL: 0xfffff, RedirectLID: 0x1234,
		RedirectPKey: 0xffff, RedirectQP: 0xabcdef, RedirectQKey: 0x80010000,
		TrapGID: mad.NewGID(1, 2), TrapTC: 9, TrapSL: 1, TrapFL: 0x12345, TrapLID: 7,
		TrapPKey: 0x7fff, TrapHL: 64, TrapQP: 1, TrapQKey: 0x80010000,
	}
	b, err := want.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != mad.ClassPortInfoLayout().Size {
		t.Fatalf("MarshalBinary gave %d bytes, want %d", len(b), mad.ClassPortInfoLayout().Size)
	}
	var got mad.ClassPortInfo
	if err := got.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
}

func TestTruncated(t *testing.T) {
	for _, tc := range []struct {
		name string
		v    madtest.Codec
		n    int
		msg  string
	}{
		{"header", new(mad.Header), 23, "madheader: truncated (have 23, need 24)"},
		{"classportinfo", new(mad.ClassPortInfo), 40, "classportinfo: truncated (have 40, need 72)"},
		{"classportinfo nil", new(mad.ClassPortInfo), 0, "classportinfo: truncated (have 0, need 72)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.v.UnmarshalBinary(make([]byte, tc.n))
			if !errors.Is(err, mad.ErrTruncated) {
				t.Fatalf("error %v does not wrap ErrTruncated", err)
			}
			if err.Error() != tc.msg {
				t.Errorf("error %q, want %q", err, tc.msg)
			}
		})
	}
}

func TestRangeError(t *testing.T) {
	c := mad.ClassPortInfo{RespTimeValue: 32}
	prefix := []byte{1, 2, 3}
	out, err := c.AppendBinary(prefix)
	if !errors.Is(err, mad.ErrRange) {
		t.Fatalf("error %v does not wrap ErrRange", err)
	}
	if want := "classportinfo: RespTimeValue: value out of range (32 > 31)"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	if !bytes.Equal(out, prefix) {
		t.Errorf("AppendBinary returned % x on error, want the input % x", out, prefix)
	}
}

func TestWriter(t *testing.T) {
	l := &mad.Layout{Name: "Test", Size: 8, Fields: []mad.Field{
		{Name: "A", Bit: 0, Width: 4},
		{Name: "S", Bit: 8, Width: 24, Kind: mad.String},
		{Name: "B", Bit: 32, Width: 32, Kind: mad.Bytes},
	}}
	b := make([]byte, 8)
	w := mad.Writer{Layout: l, B: b}
	w.Uint(l.Fields[0], 15)
	w.Text(l.Fields[1], "ab")
	w.Bytes(l.Fields[2], []byte{9})
	if w.Err != nil {
		t.Fatal(w.Err)
	}
	if want := []byte{0xf0, 'a', 'b', 0, 9, 0, 0, 0}; !bytes.Equal(b, want) {
		t.Errorf("wrote % x, want % x", b, want)
	}
	w.Text(l.Fields[1], "abcd")
	w.Uint(l.Fields[0], 16)
	if !errors.Is(w.Err, mad.ErrRange) || !strings.Contains(w.Err.Error(), "test: S:") {
		t.Errorf("first error %v, want the S overflow", w.Err)
	}
}

func TestEachAndFormat(t *testing.T) {
	l := &mad.Layout{Name: "Test", Size: 12, Fields: []mad.Field{
		{Name: "Num", LuaKey: "num", Bit: 0, Width: 12},
		{Name: "Mask", LuaKey: "mask", Bit: 12, Width: 20, Kind: mad.Hex},
		{Name: "Text", LuaKey: "text", Bit: 32, Width: 32, Kind: mad.String},
		{Name: "Raw", LuaKey: "raw", Bit: 64, Width: 32, Kind: mad.Bytes},
	}}
	b := []byte{0x12, 0x30, 0x00, 0x1f, 'h', 'i', 0, 0, 0xde, 0xad, 0xbe, 0xef}
	var got []string
	if err := l.Each(b, func(f mad.Field, v uint64, raw []byte) {
		got = append(got, f.Key()+"="+f.Format(v, raw))
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"num=291", "mask=0x0001f", "text=hi", "raw=deadbeef"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Each (-want +got):\n%s", d)
	}
	if err := l.Each(b[:11], func(mad.Field, uint64, []byte) { t.Error("fn called on a short buffer") }); !errors.Is(err, mad.ErrTruncated) {
		t.Errorf("Each on a short buffer: %v", err)
	}
}

func TestRepeat(t *testing.T) {
	got := mad.Repeat(mad.Field{Name: "Port", Bit: 8, Width: 8}, 3, 16)
	want := []mad.Field{
		{Name: "Port0", Bit: 8, Width: 8},
		{Name: "Port1", Bit: 24, Width: 8},
		{Name: "Port2", Bit: 40, Width: 8},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Repeat (-want +got):\n%s", d)
	}
}

func TestGID(t *testing.T) {
	g := mad.NewGID(0xfe80000000000000, 0x0002c90300010002)
	if got, want := g.String(), "fe80:0000:0000:0000:0002:c903:0001:0002"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if g.Prefix() != 0xfe80000000000000 || g.GUID() != 0x0002c90300010002 {
		t.Errorf("Prefix/GUID = %#x/%#x", g.Prefix(), g.GUID())
	}
}

func TestDecodeAllocs(t *testing.T) {
	b := make([]byte, mad.Size)
	var h mad.Header
	madtest.ZeroAllocs(t, "Header.UnmarshalBinary", func() { _ = h.UnmarshalBinary(b) })
	var c mad.ClassPortInfo
	madtest.ZeroAllocs(t, "ClassPortInfo.UnmarshalBinary", func() { _ = c.UnmarshalBinary(b) })
	out := make([]byte, 0, mad.Size)
	madtest.ZeroAllocs(t, "ClassPortInfo.AppendBinary", func() { _, _ = c.AppendBinary(out[:0]) })
}

func FuzzHeader(f *testing.F) {
	var seeds [][]byte
	for _, c := range madtest.Captures(f, "*/testdata/*.hex") {
		seeds = append(seeds, c.Bytes)
	}
	madtest.Fuzz(f, func() madtest.Codec { return new(mad.Header) }, seeds...)
}

func FuzzClassPortInfo(f *testing.F) {
	var seeds [][]byte
	for _, c := range madtest.Captures(f, "perf/testdata/classportinfo*.hex") {
		seeds = append(seeds, c.Bytes[mad.SMPDataOff:])
	}
	madtest.Fuzz(f, func() madtest.Codec { return new(mad.ClassPortInfo) }, seeds...)
}

// TestFieldGetEveryPlacement checks Get and Put for every width and bit
// offset in a 16-byte buffer against a bit-by-bit reading, near the end of
// the buffer too (where Get cannot load a whole word).
func TestFieldGetEveryPlacement(t *testing.T) {
	b := make([]byte, 16)
	for i := range b {
		b[i] = byte(0x9d * (i + 3))
	}
	bit := func(i int) uint64 { return uint64(b[i/8]>>(7-i%8)) & 1 }
	for width := 1; width <= 64; width++ {
		for off := 0; off+width <= 8*len(b); off++ {
			f := mad.Field{Name: "f", Bit: off, Width: width}
			var want uint64
			for i := off; i < off+width; i++ {
				want = want<<1 | bit(i)
			}
			if got := f.Get(b); got != want {
				t.Fatalf("Field{Bit: %d, Width: %d}.Get = %#x, want %#x", off, width, got, want)
			}
			c := append([]byte(nil), b...)
			f.Put(c, want)
			if !bytes.Equal(c, b) {
				t.Fatalf("Field{Bit: %d, Width: %d}.Put of its own value changed the buffer", off, width)
			}
			// Another value changes the field's bits and no others.
			// The bits above its width are dropped.
			nv := ^want & f.Max()
			f.Put(c, nv|^f.Max())
			if got := f.Get(c); got != nv {
				t.Fatalf("Field{Bit: %d, Width: %d}: Put(%#x) then Get = %#x", off, width, nv, got)
			}
			for i := 0; i < 8*len(b); i++ {
				inField := i >= off && i < off+width
				changed := (b[i/8]^c[i/8])>>(7-i%8)&1 == 1
				if changed != inField {
					t.Fatalf("Field{Bit: %d, Width: %d}.Put(%#x): bit %d changed=%v", off, width, nv, i, changed)
				}
			}
		}
	}
}
