package smp_test

import (
	"testing"

	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/smp"
)

// TestEveryAttribute runs the codec checks over every attribute of the
// schema, so an attribute added there is covered without a test of its
// own: its layout, walking ones, reserved bits, the name and ID index, and
// zero allocations.
func TestEveryAttribute(t *testing.T) {
	ls := smp.Layouts()
	if len(ls) == 0 {
		t.Fatal("no layouts")
	}
	for _, l := range ls {
		t.Run(l.Name, func(t *testing.T) {
			newValue := func() madtest.Codec { return smp.NewCodec(l.ID) }
			if smp.NewCodec(l.ID) == nil {
				t.Fatalf("%s (%#04x) has no codec", l.Name, l.ID)
			}
			if smp.LayoutByID(l.ID) != l || smp.LayoutByName(l.Name) != l {
				t.Errorf("%s is not indexed by ID and name", l.Name)
			}
			if l.Doc == "" || l.Mod == "" {
				t.Errorf("%s: the schema gives no doc or modifier meaning", l.Name)
			}
			madtest.CheckLayout(t, l)
			madtest.WalkingOnes(t, l, newValue)
			madtest.ReservedIgnored(t, l, make([]byte, l.Size), newValue)
			v := newValue()
			in := make([]byte, l.Size)
			out := make([]byte, 0, l.Size)
			madtest.ZeroAllocs(t, l.Name+".UnmarshalBinary", func() { _ = v.UnmarshalBinary(in) })
			madtest.ZeroAllocs(t, l.Name+".AppendBinary", func() { _, _ = v.AppendBinary(out[:0]) })
		})
	}
	if smp.NewCodec(0xffff) != nil || smp.LayoutByName("NoSuchAttribute") != nil {
		t.Error("an unknown attribute has a codec or a layout")
	}
}

// FuzzAttributes decodes arbitrary bytes as every attribute of the schema
// (the first byte picks it) and checks the round trip.
func FuzzAttributes(f *testing.F) {
	ls := smp.Layouts()
	for i, l := range ls {
		f.Add(append([]byte{byte(i)}, make([]byte, l.Size)...))
		ones := make([]byte, l.Size+1)
		for j := range ones {
			ones[j] = 0xff
		}
		ones[0] = byte(i)
		f.Add(ones)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		l := ls[int(b[0])%len(ls)]
		madtest.RoundTrip(t, func() madtest.Codec { return smp.NewCodec(l.ID) }, b[1:])
	})
}

// BenchmarkCodecs decodes and re-encodes every attribute of the schema
// (a buffer of varied bytes, its reserved bits and out-of-range values
// included, re-encoded after a decode that keeps only its rows).
func BenchmarkCodecs(b *testing.B) {
	for _, l := range smp.Layouts() {
		b.Run(l.Name, func(b *testing.B) {
			in := make([]byte, l.Size)
			for i := range in {
				in[i] = byte(i * 7)
			}
			v := smp.NewCodec(l.ID)
			out := make([]byte, 0, l.Size)
			b.ReportAllocs()
			for b.Loop() {
				_ = v.UnmarshalBinary(in)
				out, _ = v.AppendBinary(out[:0])
			}
		})
	}
}
