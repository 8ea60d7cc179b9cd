package madtest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/mad"
)

var update = flag.Bool("update", false, "rewrite the .golden renderings in testdata (never the .hex captures)")

// Codec is a typed MAD value: it decodes in place and appends its encoding.
type Codec interface {
	UnmarshalBinary(b []byte) error
	AppendBinary(b []byte) ([]byte, error)
}

// CheckLayout checks the table of fields of l: a name and a size, fields in
// bit order without overlaps and within the size, unique names and unique
// Lua keys, no field straddling a 32-bit word unless it is at least 32 bits
// wide and byte aligned, numeric fields of at most 64 bits, and String and
// Bytes fields byte aligned.
func CheckLayout(t testing.TB, l *mad.Layout) {
	t.Helper()
	if l.Name == "" || l.Size <= 0 || len(l.Fields) == 0 {
		t.Errorf("layout %q: needs a name, a size and fields (size %d, %d fields)", l.Name, l.Size, len(l.Fields))
		return
	}
	names := map[string]bool{}
	keys := map[string]string{}
	end := 0
	for _, f := range l.Fields {
		if f.Name == "" || f.Width <= 0 || f.Bit < 0 {
			t.Errorf("%s: bad field %v", l.Name, f)
			continue
		}
		if names[f.Name] {
			t.Errorf("%s: duplicate field name %s", l.Name, f.Name)
		}
		names[f.Name] = true
		if other, dup := keys[f.Key()]; dup {
			t.Errorf("%s: fields %s and %s share the Lua key %q", l.Name, other, f.Name, f.Key())
		}
		keys[f.Key()] = f.Name
		if f.Bit < end {
			t.Errorf("%s: field %v starts before the previous field ends (bit %d): out of order or overlapping", l.Name, f, end)
		}
		end = f.End()
		if f.End() > 8*l.Size {
			t.Errorf("%s: field %v ends at bit %d, beyond the %d-byte layout", l.Name, f, f.End(), l.Size)
		}
		aligned := f.Bit%8 == 0 && f.Width%8 == 0
		if f.Bit/32 != (f.End()-1)/32 && !(f.Width >= 32 && aligned) {
			t.Errorf("%s: field %v straddles a 32-bit word", l.Name, f)
		}
		if (f.Kind == mad.String || f.Kind == mad.Bytes) && !aligned {
			t.Errorf("%s: %v field %v is not byte aligned", l.Name, f.Kind, f)
		}
		if f.Width > 64 && f.Kind != mad.String && f.Kind != mad.Bytes {
			t.Errorf("%s: field %v is wider than 64 bits but not String or Bytes", l.Name, f)
		}
	}
}

// WalkingOnes checks a codec against its layout: for each field of l but
// the exempt ones (derived fields), it sets that field's bits alone in a
// zero buffer of l.Size bytes, decodes it with a new value, and requires
// that the value differs from the decoded zero buffer and that encoding it
// returns exactly those bytes. It proves the codec reads and writes every
// row of its table and that no two rows alias.
func WalkingOnes(t testing.TB, l *mad.Layout, newValue func() Codec, exempt ...string) {
	t.Helper()
	WalkingOnesOn(t, l, make([]byte, l.Size), newValue, exempt...)
}

// WalkingOnesOn is WalkingOnes over the background base instead of zeros,
// for codecs whose framing depends on a fixed value (a DR SMP needs class
// 0x81). Each field's bits are set to ones over base.
func WalkingOnesOn(t testing.TB, l *mad.Layout, base []byte, newValue func() Codec, exempt ...string) {
	t.Helper()
	for _, name := range exempt {
		if _, ok := l.Field(name); !ok {
			t.Errorf("%s: exempt field %q is not in the layout", l.Name, name)
		}
	}
	ref := newValue()
	if err := ref.UnmarshalBinary(base); err != nil {
		t.Fatalf("%s: decoding the background: %v", l.Name, err)
	}
	for _, f := range l.Fields {
		if slices.Contains(exempt, f.Name) {
			continue
		}
		in := bytes.Clone(base)
		if f.Numeric() {
			f.Put(in, f.Max())
		} else {
			for i := range f.Slice(in) {
				f.Slice(in)[i] = 0xFF
			}
		}
		v := newValue()
		if err := v.UnmarshalBinary(in); err != nil {
			t.Errorf("%s.%s: decode: %v", l.Name, f.Name, err)
			continue
		}
		if reflect.DeepEqual(v, ref) {
			t.Errorf("%s.%s: setting the field's bits changed nothing in the decoded value", l.Name, f.Name)
		}
		prefix := []byte{0xA5}
		out, err := v.AppendBinary(prefix)
		if err != nil {
			t.Errorf("%s.%s: encode: %v", l.Name, f.Name, err)
			continue
		}
		if len(out) == 0 || out[0] != 0xA5 {
			t.Errorf("%s.%s: AppendBinary did not keep the bytes it appends to", l.Name, f.Name)
			continue
		}
		if out = out[1:]; !bytes.Equal(out, in) {
			t.Errorf("%s.%s: decode then encode of the field's bits alone differs\nwant:\n%sgot:\n%s",
				l.Name, f.Name, hex.Dump(in), hex.Dump(out))
		}
	}
}

// SetReserved sets to one every bit of b[:l.Size] that no field of l
// covers: the reserved bits.
func SetReserved(l *mad.Layout, b []byte) {
	for bit := 0; bit < 8*l.Size && bit/8 < len(b); bit++ {
		if !covered(l, bit) {
			b[bit/8] |= 0x80 >> (bit % 8)
		}
	}
}

func covered(l *mad.Layout, bit int) bool {
	for _, f := range l.Fields {
		if f.Bit <= bit && bit < f.End() {
			return true
		}
	}
	return false
}

// ReservedIgnored checks that a codec ignores reserved bits on decode and
// writes them as zero: base with every reserved bit of l set decodes like
// base, and encoding gives zero reserved bits.
func ReservedIgnored(t testing.TB, l *mad.Layout, base []byte, newValue func() Codec) {
	t.Helper()
	want := newValue()
	if err := want.UnmarshalBinary(base); err != nil {
		t.Fatalf("%s: decode: %v", l.Name, err)
	}
	dirty := bytes.Clone(base)
	SetReserved(l, dirty)
	got := newValue()
	if err := got.UnmarshalBinary(dirty); err != nil {
		t.Fatalf("%s: decode with reserved bits set: %v", l.Name, err)
	}
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: reserved bits changed the decoded value (-clean +dirty):\n%s", l.Name, TextDiff(Render(want), Render(got)))
	}
	out, err := got.AppendBinary(nil)
	if err != nil {
		t.Fatalf("%s: encode: %v", l.Name, err)
	}
	for bit := 0; bit < 8*l.Size && bit/8 < len(out); bit++ {
		if !covered(l, bit) && out[bit/8]&(0x80>>(bit%8)) != 0 {
			t.Errorf("%s: reserved bit %d (byte %d.%d) encoded as 1", l.Name, bit, bit/8, bit%8)
			break
		}
	}
}

// Capture is a MAD read from a testdata .hex file.
type Capture struct {
	Path    string
	Comment string // the '#' lines, without the '#', joined by newlines
	Bytes   []byte
}

// ReadCapture reads a .hex capture: hex digits with any whitespace, and
// '#' comment lines that must say where the bytes come from.
func ReadCapture(t testing.TB, path string) Capture {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read capture: %v", err)
	}
	c, err := ParseCapture(string(text))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	c.Path = path
	return c
}

// ParseCapture parses the text of a .hex capture (see ReadCapture).
func ParseCapture(text string) (Capture, error) {
	var c Capture
	var comments []string
	var digits strings.Builder
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			comments = append(comments, strings.TrimSpace(rest))
			continue
		}
		for _, r := range line {
			if r != ' ' && r != '\t' && r != '\r' {
				digits.WriteRune(r)
			}
		}
	}
	if len(comments) == 0 {
		return c, errors.New("capture has no '#' comment giving its source")
	}
	b, err := hex.DecodeString(digits.String())
	if err != nil {
		return c, fmt.Errorf("capture hex: %w", err)
	}
	c.Comment = strings.Join(comments, "\n")
	c.Bytes = b
	return c, nil
}

// Captures reads every capture matching the glob pattern, in name order.
func Captures(t testing.TB, pattern string) []Capture {
	t.Helper()
	paths, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatalf("captures %q: %v", pattern, err)
	}
	slices.Sort(paths)
	cs := make([]Capture, 0, len(paths))
	for _, p := range paths {
		cs = append(cs, ReadCapture(t, p))
	}
	return cs
}

// View asks Golden to render the bytes of a capture at Offset through
// Layout, as a generic printer would: one "key = value" line per field.
type View struct {
	Layout *mad.Layout
	Offset int
}

// Golden decodes the capture hexPath ("testdata/NAME.hex") into v, renders
// v (Render) and the views, and compares that text with
// "testdata/NAME.golden", which -update rewrites. Then it re-encodes v and
// requires exactly the captured bytes, showing hex dumps on a mismatch.
func Golden(t testing.TB, hexPath string, v Codec, views ...View) {
	t.Helper()
	c := ReadCapture(t, hexPath)
	if err := v.UnmarshalBinary(c.Bytes); err != nil {
		t.Fatalf("%s: decode: %v", hexPath, err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s decoded as %T; go test -update rewrites this file\n", filepath.Base(hexPath), v)
	sb.WriteString(Render(v))
	for _, view := range views {
		fmt.Fprintf(&sb, "\n## %s at byte %d\n", view.Layout.Name, view.Offset)
		if view.Offset > len(c.Bytes) {
			t.Fatalf("%s: view %s at %d beyond the %d-byte capture", hexPath, view.Layout.Name, view.Offset, len(c.Bytes))
		}
		err := view.Layout.Each(c.Bytes[view.Offset:], func(f mad.Field, n uint64, raw []byte) {
			fmt.Fprintf(&sb, "%s = %s\n", f.Key(), f.Format(n, raw))
		})
		if err != nil {
			t.Fatalf("%s: view %s: %v", hexPath, view.Layout.Name, err)
		}
	}
	GoldenText(t, strings.TrimSuffix(hexPath, ".hex")+".golden", sb.String())
	out, err := v.AppendBinary(nil)
	if err != nil {
		t.Fatalf("%s: re-encode: %v", hexPath, err)
	}
	if !bytes.Equal(out, c.Bytes) {
		t.Errorf("%s: re-encoding differs from the capture\nwant:\n%sgot:\n%s", hexPath, hex.Dump(c.Bytes), hex.Dump(out))
	}
}

// GoldenText compares got with the golden file path, which -update
// rewrites. Only files named *.golden may be rewritten.
func GoldenText(t testing.TB, path, got string) {
	t.Helper()
	if !strings.HasSuffix(path, ".golden") {
		t.Fatalf("golden file %s: name must end in .golden", path)
	}
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatalf("update golden: %v", err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if d := TextDiff(string(want), got); d != "" {
		t.Errorf("%s differs (-want +got):\n%s", path, d)
	}
}

// Fuzz runs a round-trip fuzz target over newValue's codec, seeded with
// seeds: decoding never panics and fails only with mad.ErrTruncated, and
// after a successful decode, encoding succeeds and decoding the encoding
// gives the same value.
func Fuzz(f *testing.F, newValue func() Codec, seeds ...[]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) { RoundTrip(t, newValue, b) })
}

// RoundTrip checks a codec on arbitrary input b: decoding fails only with
// mad.ErrTruncated, and what decodes encodes, decodes to the same value and
// encodes to the same bytes again. Fuzz targets call it.
func RoundTrip(t testing.TB, newValue func() Codec, b []byte) {
	t.Helper()
	v := newValue()
	if err := v.UnmarshalBinary(b); err != nil {
		if !errors.Is(err, mad.ErrTruncated) {
			t.Fatalf("decode error does not wrap mad.ErrTruncated: %v", err)
		}
		return
	}
	enc, err := v.AppendBinary(nil)
	if err != nil {
		t.Fatalf("encode of a decoded value: %v", err)
	}
	w := newValue()
	if err := w.UnmarshalBinary(enc); err != nil {
		t.Fatalf("decode of an encoding: %v", err)
	}
	if !reflect.DeepEqual(v, w) {
		t.Fatalf("decode(encode(v)) != v (-v +decoded):\n%s", TextDiff(Render(v), Render(w)))
	}
	again, err := w.AppendBinary(nil)
	if err != nil || !bytes.Equal(again, enc) {
		t.Fatalf("encoding is not stable: %v\n%s\n%s", err, hex.Dump(enc), hex.Dump(again))
	}
}

// ZeroAllocs fails t when fn allocates on average.
func ZeroAllocs(t testing.TB, name string, fn func()) {
	t.Helper()
	if n := testing.AllocsPerRun(100, fn); n != 0 {
		t.Errorf("%s: %v allocations per run, want 0", name, n)
	}
}

// Registry is the index a package of generated attributes exports (smp,
// perf): its layouts and the lookups by ID and name, and the codec of an
// attribute ID.
type Registry struct {
	Layouts      func() []*mad.Layout
	LayoutByID   func(uint16) *mad.Layout
	LayoutByName func(string) *mad.Layout
	NewCodec     func(uint16) mad.Codec
	// CodecOf, when set, gives the codec of a layout: a package with two
	// layouts under one ID (cc's CongestionLog) sets it, and its second
	// layout need not be LayoutByID's.
	CodecOf func(*mad.Layout) mad.Codec
}

// codec returns a new value of l's Go type.
func (r Registry) codec(l *mad.Layout) Codec {
	if r.CodecOf != nil {
		return r.CodecOf(l)
	}
	return r.NewCodec(l.ID)
}

// EveryAttribute runs the codec checks over every attribute of r, so an
// attribute added to the schema is covered without a test of its own: a
// codec, the name and ID index, a doc and the modifier's meaning, the
// layout (CheckLayout), walking ones, reserved bits, and zero allocations
// to decode and encode.
func EveryAttribute(t *testing.T, r Registry) {
	t.Helper()
	ls := r.Layouts()
	if len(ls) == 0 {
		t.Fatal("no layouts")
	}
	for _, l := range ls {
		t.Run(l.Name, func(t *testing.T) {
			newValue := func() Codec { return r.codec(l) }
			if r.codec(l) == nil || r.NewCodec(l.ID) == nil {
				t.Fatalf("%s (%#04x) has no codec", l.Name, l.ID)
			}
			if a, ok := r.codec(l).(mad.Attribute); ok && a.AttrLayout() != l {
				t.Errorf("%s: its codec's layout is %s", l.Name, a.AttrLayout().Name)
			}
			if (r.LayoutByID(l.ID) != l && r.CodecOf == nil) || r.LayoutByName(l.Name) != l {
				t.Errorf("%s is not indexed by ID and name", l.Name)
			}
			if l.Doc == "" || l.Mod == "" {
				t.Errorf("%s: the schema gives no doc or modifier meaning", l.Name)
			}
			CheckLayout(t, l)
			WalkingOnes(t, l, newValue)
			ReservedIgnored(t, l, make([]byte, l.Size), newValue)
			v := newValue()
			in := make([]byte, l.Size)
			out := make([]byte, 0, l.Size)
			ZeroAllocs(t, l.Name+".UnmarshalBinary", func() { _ = v.UnmarshalBinary(in) })
			ZeroAllocs(t, l.Name+".AppendBinary", func() { _, _ = v.AppendBinary(out[:0]) })
		})
	}
	if r.NewCodec(0xffff) != nil || r.LayoutByName("NoSuchAttribute") != nil {
		t.Error("an unknown attribute has a codec or a layout")
	}
}

// FuzzAttributes decodes arbitrary bytes as every attribute of r (the
// first byte picks it) and checks the round trip (RoundTrip).
func FuzzAttributes(f *testing.F, r Registry) {
	ls := r.Layouts()
	for i, l := range ls {
		f.Add(append([]byte{byte(i)}, make([]byte, l.Size)...))
		ones := bytes.Repeat([]byte{0xff}, l.Size+1)
		ones[0] = byte(i)
		f.Add(ones)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) == 0 {
			return
		}
		l := ls[int(b[0])%len(ls)]
		RoundTrip(t, func() Codec { return r.codec(l) }, b[1:])
	})
}

// BenchmarkCodecs decodes and re-encodes every attribute of r (a buffer of
// varied bytes, reserved bits and all, re-encoded after a decode that
// keeps only its rows).
func BenchmarkCodecs(b *testing.B, r Registry) {
	for _, l := range r.Layouts() {
		b.Run(l.Name, func(b *testing.B) {
			in := make([]byte, l.Size)
			for i := range in {
				in[i] = byte(i * 7)
			}
			v := r.codec(l)
			out := make([]byte, 0, l.Size)
			b.ReportAllocs()
			for b.Loop() {
				_ = v.UnmarshalBinary(in)
				out, _ = v.AppendBinary(out[:0])
			}
		})
	}
}
