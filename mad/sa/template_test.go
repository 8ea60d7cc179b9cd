package sa

import (
	"errors"
	"testing"

	"github.com/ibscript/ibscript/mad"
)

// TestTemplateSelectsWhatItSets: setting any numbered row of any record
// stores the row's bits (cut to its width) and nothing else, and selects
// exactly the row's component.
func TestTemplateSelectsWhatItSets(t *testing.T) {
	n := 0
	for _, a := range Attrs() {
		for i, f := range a.Layout.Fields {
			c := a.Comp[i]
			if c < 0 {
				continue
			}
			tm := NewTemplate(a)
			var want uint64
			if f.Numeric() {
				if err := tm.Set(f.Name, ^uint64(0)); err != nil {
					t.Fatalf("%s.%s: %v", a.Name(), f.Name, err)
				}
				want = ^uint64(0) >> (64 - f.Width)
			} else if err := tm.SetBytes(f.Key(), []byte{0xab}); err != nil {
				t.Fatalf("%s.%s: %v", a.Name(), f.Name, err)
			}
			if m := tm.ComponentMask(); m != 1<<uint(c) {
				t.Errorf("%s.%s: mask %#x, want component %d", a.Name(), f.Name, m, c)
			}
			b := tm.Bytes()
			if len(b) != a.Layout.Size {
				t.Fatalf("%s: %d bytes, want %d", a.Name(), len(b), a.Layout.Size)
			}
			if f.Numeric() && f.Get(b) != want {
				t.Errorf("%s.%s: %#x, want %#x", a.Name(), f.Name, f.Get(b), want)
			}
			if !f.Numeric() && f.Slice(b)[0] != 0xab {
				t.Errorf("%s.%s: % x", a.Name(), f.Name, f.Slice(b))
			}
			// Nothing outside the row.
			rest := append([]byte(nil), b...)
			if f.Numeric() {
				f.Put(rest, 0)
			} else {
				clear(f.Slice(rest))
			}
			if string(rest) != string(make([]byte, len(rest))) {
				t.Errorf("%s.%s: bits outside the row: % x", a.Name(), f.Name, rest)
			}
			n++
		}
	}
	if n < 100 {
		t.Errorf("only %d rows with components", n)
	}
}

// TestTypedTemplates: the generated setters give the bytes and mask of
// the same rows set by hand (a PathRecord from a GID to a LID, reversible;
// an MCMemberRecord of a group).
func TestTypedTemplates(t *testing.T) {
	g := mad.GID{0xfe, 0x80, 15: 7}
	pr := NewPathRecordTemplate().SetSGID(g).SetDLID(9).SetReversible(true).SetNumbPath(1).SetMTU(4)
	want := make([]byte, 64)
	copy(want[24:40], g[:])
	want[40], want[41] = 0, 9
	want[49] = 0x81
	want[54] = 4
	if got := pr.Bytes(); string(got) != string(want) {
		t.Errorf("PathRecord % x\nwant      % x", got, want)
	}
	if m := pr.ComponentMask(); m != 1<<3|1<<4|1<<11|1<<12|1<<17 {
		t.Errorf("PathRecord mask %#x", m)
	}
	mc := NewMCMemberRecordTemplate().SetMGID(g).SetMLID(0xc000).SetJoinState(1).SetProxyJoin(true)
	want = make([]byte, 52)
	copy(want, g[:])
	want[36], want[37], want[48], want[49] = 0xc0, 0, 1, 0x80
	if got := mc.Bytes(); string(got) != string(want) {
		t.Errorf("MCMemberRecord % x\nwant           % x", got, want)
	}
	if m := mc.ComponentMask(); m != 1<<0|1<<3|1<<16|1<<17 {
		t.Errorf("MCMemberRecord mask %#x", m)
	}
	if pr.Attr() != PathRecord() || mc.Attr() != MCMemberRecord() {
		t.Error("typed templates of the wrong attribute")
	}
}

// TestTemplateErrors: an unknown row, a number set as bytes and bytes as
// a number, and Put outside the record are errors naming them; Put and
// Select apart store and select.
func TestTemplateErrors(t *testing.T) {
	tm := NewTemplate(PathRecord())
	for _, err := range []error{
		tm.Set("NoSuchRow", 1), tm.Set("DGID", 1), tm.SetBytes("DLID", []byte{1}), tm.Select("nope"),
		tm.Put(mad.Field{Bit: 500, Width: 32}, 1), tm.Put(mad.Field{Bit: 0, Width: 0}, 1),
	} {
		if !errors.Is(err, mad.ErrRange) {
			t.Errorf("err %v, want mad.ErrRange", err)
		}
	}
	if tm.ComponentMask() != 0 || string(tm.Bytes()) != string(make([]byte, 64)) {
		t.Fatalf("failed calls changed the template: %#x % x", tm.ComponentMask(), tm.Bytes())
	}
	if err := tm.Put(mad.Field{Bit: 352, Width: 32}, 0x452c); err != nil {
		t.Fatal(err)
	}
	if err := tm.Select("hop_limit"); err != nil {
		t.Fatal(err)
	}
	tm.SelectComponent(64) // no such bit: nothing
	b := tm.Bytes()
	if b[46] != 0x45 || b[47] != 0x2c || tm.ComponentMask() != 1<<9 {
		t.Errorf("Put/Select: % x mask %#x", b[44:48], tm.ComponentMask())
	}
}

// TestSpan: a C word from a row's start reads the rows it covers; an
// unknown row, a width past the record or over 64 bits is refused.
func TestSpan(t *testing.T) {
	b := NewPathRecordTemplate().SetFlowLabel(0x12345).SetHopLimit(0x40).SetRawTraffic(true).Bytes()
	f, ok := PathRecord().Span("RawTraffic", 32)
	if !ok || f.Get(b) != 0x80000000|0x12345<<8|0x40 {
		t.Errorf("hop_flow_raw %#x (%v)", f.Get(b), ok)
	}
	for _, c := range []struct {
		row   string
		width int
	}{{"NoSuchRow", 8}, {"Preference", 57}, {"ServiceID", 65}, {"DLID", 0}} {
		if _, ok := PathRecord().Span(c.row, c.width); ok {
			t.Errorf("Span(%q, %d) accepted", c.row, c.width)
		}
	}
}
