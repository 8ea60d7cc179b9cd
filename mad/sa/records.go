package sa

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ibscript/ibscript/mad"
)

// SA attribute IDs without a layout of their own (the others are generated
// with their layouts in attrs_gen.go, from mad/internal/madgen's schema).
const (
	AttrClassPortInfo uint16 = 0x0001
	AttrNotice        uint16 = 0x0002
)

// Attr describes one SA attribute: its layout, the component number of
// each row (Comp, parallel to Layout.Fields, -1 for none) and the stride of
// its records in a GetTable response (AttributeOffset, 8-byte units).
type Attr struct {
	Layout *mad.Layout
	Comp   []int
	Stride int // AttributeOffset
}

// Name is the IBA name of the attribute.
func (a *Attr) Name() string { return a.Layout.Name }

// Field returns the row named by its IBA name or its snake_case key, and
// its component number.
func (a *Attr) Field(name string) (mad.Field, int, bool) {
	for i, f := range a.Layout.Fields {
		if f.Name == name || f.Key() == name {
			return f, a.Comp[i], true
		}
	}
	return mad.Field{}, -1, false
}

// Span returns the width bits from the start of the row name: a member
// of a C struct that covers several rows, which the C tools read and
// write whole (saquery's hop_flow_raw of a PathRecord: raw traffic, flow
// label and hop limit in one 32-bit word). It is false when the row is
// unknown or the bits end past the record.
func (a *Attr) Span(name string, width int) (mad.Field, bool) {
	f, _, ok := a.Field(name)
	if !ok || width <= 0 || width > 64 || f.Bit+width > 8*a.Layout.Size {
		return mad.Field{}, false
	}
	f.Width, f.Kind = width, mad.Hex
	return f, true
}

// Matches reports whether rec (a record of this attribute) equals the
// template tmpl in every component selected by mask. Components without a
// row (reserved) are ignored.
func (a *Attr) Matches(rec, tmpl []byte, mask uint64) bool {
	if mask == 0 {
		return true
	}
	for i, f := range a.Layout.Fields {
		c := a.Comp[i]
		if c < 0 || mask&(1<<uint(c)) == 0 {
			continue
		}
		if f.Numeric() {
			if f.Get(rec) != f.Get(tmpl) {
				return false
			}
		} else if string(f.Slice(rec)) != string(f.Slice(tmpl)) {
			return false
		}
	}
	return true
}

// MPRGIDs returns the source and destination GIDs of a MultiPathRecord
// (SGIDCount then DGIDCount GIDs after the fixed part), or an error
// wrapping mad.ErrTruncated when b is too short for them.
func MPRGIDs(b []byte) (sgids, dgids []mad.GID, err error) {
	if err := layoutMultiPathRecord.Check(b); err != nil {
		return nil, nil, err
	}
	ns, nd := int(mprSGIDCount.Get(b)), int(mprDGIDCount.Get(b))
	if need := layoutMultiPathRecord.Size + 16*(ns+nd); len(b) < need {
		return nil, nil, fmt.Errorf("multipathrecord: %w (have %d, need %d for %d+%d GIDs)", mad.ErrTruncated, len(b), need, ns, nd)
	}
	gid := func(i int) mad.GID {
		var g mad.GID
		copy(g[:], b[layoutMultiPathRecord.Size+16*i:])
		return g
	}
	for i := range ns {
		sgids = append(sgids, gid(i))
	}
	for i := range nd {
		dgids = append(dgids, gid(ns+i))
	}
	return sgids, dgids, nil
}

// AppendMPR appends a MultiPathRecord: the fixed part fixed (24 bytes, its
// GID counts overwritten) and the GIDs.
func AppendMPR(b, fixed []byte, sgids, dgids []mad.GID) ([]byte, error) {
	if len(fixed) < layoutMultiPathRecord.Size || len(sgids) > 255 || len(dgids) > 255 {
		return b, fmt.Errorf("multipathrecord: %d-byte fixed part, %d+%d GIDs: %w", len(fixed), len(sgids), len(dgids), mad.ErrRange)
	}
	n := len(b)
	b = append(b, fixed[:layoutMultiPathRecord.Size]...)
	mprSGIDCount.Put(b[n:], uint64(len(sgids)))
	mprDGIDCount.Put(b[n:], uint64(len(dgids)))
	for _, g := range sgids {
		b = append(b, g[:]...)
	}
	for _, g := range dgids {
		b = append(b, g[:]...)
	}
	return b, nil
}

// Attrs lists the SA attributes this package knows, by ID.
func Attrs() []*Attr { return slices.Clone(attrs) }

// AttrByID returns the attribute with that ID.
func AttrByID(id uint16) (*Attr, bool) {
	for _, a := range attrs {
		if a.Layout.ID == id {
			return a, true
		}
	}
	return nil, false
}

// AttrByName returns the attribute named as the IBA names it
// ("NodeRecord") or as saquery does ("SL2VLTableRecord"),
// case-insensitively.
func AttrByName(name string) (*Attr, bool) {
	for _, a := range attrs {
		if equalFold(a.Layout.Name, name) {
			return a, true
		}
	}
	a, ok := aliases[strings.ToLower(name)]
	return a, ok
}

func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// MaxRecordSize is the largest record (ServiceRecord).
const MaxRecordSize = 176

// Record is any SA record as its layout sees it: decoding keeps the bits
// of the layout's rows and zeroes the reserved ones, encoding writes them
// back. It is the generic codec behind every record; NodeRecord and
// PathRecord also have typed structs.
type Record struct {
	Attr *Attr
	Data [MaxRecordSize]byte
}

// UnmarshalBinary decodes r.Attr's record from b without allocating.
func (r *Record) UnmarshalBinary(b []byte) error {
	l := r.Attr.Layout
	if err := l.Check(b); err != nil {
		return err
	}
	r.Data = [MaxRecordSize]byte{}
	for _, f := range l.Fields {
		if f.Bit%8 == 0 && f.Width%8 == 0 {
			copy(f.Slice(r.Data[:]), f.Slice(b))
		} else {
			f.Put(r.Data[:], f.Get(b))
		}
	}
	return nil
}

// AppendBinary appends the record's Layout.Size bytes.
func (r *Record) AppendBinary(b []byte) ([]byte, error) {
	if r.Attr == nil {
		return b, fmt.Errorf("sa: record without an attribute: %w", mad.ErrRange)
	}
	return append(b, r.Data[:r.Attr.Layout.Size]...), nil
}

// Get returns the numeric field named name.
func (r *Record) Get(name string) (uint64, bool) {
	f, _, ok := r.Attr.Field(name)
	if !ok || !f.Numeric() {
		return 0, false
	}
	return f.Get(r.Data[:]), true
}
