package madtest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...) }

func (r *recorder) has(t *testing.T, want string) {
	t.Helper()
	for _, e := range r.errs {
		if strings.Contains(e, want) {
			return
		}
	}
	t.Errorf("no failure mentions %q; got %q", want, r.errs)
}

func TestCheckLayoutCatches(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields []mad.Field
		want   string
	}{
		{"overlap", []mad.Field{{Name: "A", Bit: 0, Width: 8}, {Name: "B", Bit: 4, Width: 8}}, "overlapping"},
		{"order", []mad.Field{{Name: "A", Bit: 8, Width: 8}, {Name: "B", Bit: 0, Width: 8}}, "out of order"},
		{"beyond", []mad.Field{{Name: "A", Bit: 124, Width: 8}}, "beyond"},
		{"straddle", []mad.Field{{Name: "A", Bit: 24, Width: 16}}, "straddles"},
		{"unaligned 64", []mad.Field{{Name: "A", Bit: 4, Width: 32}}, "straddles"},
		{"dup name", []mad.Field{{Name: "A", Bit: 0, Width: 8}, {Name: "A", Bit: 8, Width: 8}}, "duplicate"},
		{"dup key", []mad.Field{{Name: "P_Key", Bit: 0, Width: 8}, {Name: "PKey", Bit: 8, Width: 8}}, "share the Lua key"},
		{"wide", []mad.Field{{Name: "A", Bit: 0, Width: 64 + 8}}, "wider than 64"},
		{"bytes unaligned", []mad.Field{{Name: "A", Bit: 4, Width: 4, Kind: mad.Bytes}}, "not byte aligned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &recorder{TB: t}
			madtest.CheckLayout(r, &mad.Layout{Name: "Bad", Size: 16, Fields: tc.fields})
			r.has(t, tc.want)
		})
	}
}

var (
	fA = mad.Field{Name: "A", Bit: 0, Width: 8}
	fB = mad.Field{Name: "B", Bit: 8, Width: 8}
	// aliasing has a codec that reads and writes B through A's row.
	aliasing = mad.Layout{Name: "Aliasing", Size: 2, Fields: []mad.Field{fA, fB}}
)

type buggy struct{ A, B uint8 }

func (v *buggy) UnmarshalBinary(b []byte) error {
	if err := aliasing.Check(b); err != nil {
		return err
	}
	v.A, v.B = uint8(fA.Get(b)), uint8(fA.Get(b))
	return nil
}

func (v *buggy) AppendBinary(b []byte) ([]byte, error) {
	all, d := aliasing.Append(b)
	fA.Put(d, uint64(v.B))
	return all, nil
}

func TestWalkingOnesCatches(t *testing.T) {
	r := &recorder{TB: t}
	madtest.WalkingOnes(r, &aliasing, func() madtest.Codec { return new(buggy) }, "C")
	r.has(t, `exempt field "C"`)
	r.has(t, "Aliasing.B: setting the field's bits changed nothing")
	r.has(t, "Aliasing.B: decode then encode")
}

func TestParseCapture(t *testing.T) {
	c, err := madtest.ParseCapture("# from somewhere\n0102 03\n\t04ff # not a comment\n")
	if err == nil {
		t.Fatalf("accepted a trailing comment: % x", c.Bytes)
	}
	c, err = madtest.ParseCapture("# from somewhere\n# second line\n0102 03\n\t04ff\n")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprintf("% x", c.Bytes) != "01 02 03 04 ff" || c.Comment != "from somewhere\nsecond line" {
		t.Errorf("parsed % x, comment %q", c.Bytes, c.Comment)
	}
	if _, err := madtest.ParseCapture("0102\n"); err == nil {
		t.Error("accepted a capture without a source comment")
	}
	if _, err := madtest.ParseCapture("# x\n012\n"); err == nil {
		t.Error("accepted an odd number of digits")
	}
}

func TestTextDiff(t *testing.T) {
	if d := madtest.TextDiff("a\nb\n", "a\nb\n"); d != "" {
		t.Errorf("equal texts: %q", d)
	}
	want := "  a\n- b\n+ B\n  c\n  d\n  ...\n"
	if d := madtest.TextDiff("a\nb\nc\nd\ne\nf\n", "a\nB\nc\nd\ne\nf\n"); d != want {
		t.Errorf("TextDiff:\n%s\nwant:\n%s", d, want)
	}
}

func TestRender(t *testing.T) {
	type inner struct{ X uint16 }
	type v struct {
		inner
		N    uint64
		B    bool
		S    string
		G    mad.GID
		Arr  [2]uint16
		Raw  [3]byte
		Ptr  *inner
		priv int
	}
	got := madtest.Render(&v{inner: inner{7}, N: 255, B: true, S: "hi", Arr: [2]uint16{1, 10}, Raw: [3]byte{1, 2, 3}, priv: 1})
	want := `X: 7
N: 255 (0xff)
B: true
S: "hi"
G: 0000:0000:0000:0000:0000:0000:0000:0000
Arr[0]: 1
Arr[1]: 10 (0xa)
Raw: 010203
Ptr: nil
`
	if got != want {
		t.Errorf("Render:\n%s", madtest.TextDiff(want, got))
	}
}

func TestSetReserved(t *testing.T) {
	l := &mad.Layout{Name: "R", Size: 2, Fields: []mad.Field{{Name: "A", Bit: 2, Width: 4}, {Name: "B", Bit: 8, Width: 4}}}
	b := make([]byte, 2)
	madtest.SetReserved(l, b)
	if b[0] != 0xc3 || b[1] != 0x0f {
		t.Errorf("SetReserved gave % x, want c3 0f", b)
	}
}
