package sa

import (
	"fmt"

	"github.com/ibscript/ibscript/mad"
)

// Template is the record of an SA query and its component mask: setting a
// row selects the row's component, so the two cannot disagree. The typed
// templates (PathRecordTemplate, MCMemberRecordTemplate, ...; generated
// from the schema with their rows' component numbers) set rows by Go
// name; Set and SetBytes set any row of the layout (an embedded
// attribute's too, as "CapabilityMask" of a PortInfoRecord) by its IBA
// name or snake_case key.
//
// The zero Template has no attribute: use NewTemplate or a typed
// template's constructor.
type Template struct {
	attr *Attr
	data [MaxRecordSize]byte
	mask uint64
}

// NewTemplate returns an empty template of attr: no component selected.
func NewTemplate(attr *Attr) *Template { return &Template{attr: attr} }

// Attr is the template's attribute.
func (t *Template) Attr() *Attr { return t.attr }

// ComponentMask is the components selected so far.
func (t *Template) ComponentMask() uint64 { return t.mask }

// Bytes returns a copy of the record (the attribute's layout size).
func (t *Template) Bytes() []byte {
	return append([]byte(nil), t.data[:t.attr.Layout.Size]...)
}

// Set stores the numeric row name (IBA name or key) and selects its
// component; v is cut to the row's width, as the wire has it.
func (t *Template) Set(name string, v uint64) error {
	f, c, err := t.row(name)
	if err != nil {
		return err
	}
	if !f.Numeric() {
		return fmt.Errorf("sa: %s.%s is not a number: %w", t.attr.Name(), name, mad.ErrRange)
	}
	t.set(f, c, v)
	return nil
}

// SetBytes stores the byte row name (a GID, a name: NUL padded, cut to
// the row) and selects its component.
func (t *Template) SetBytes(name string, b []byte) error {
	f, c, err := t.row(name)
	if err != nil {
		return err
	}
	if f.Numeric() {
		return fmt.Errorf("sa: %s.%s is a number, not bytes: %w", t.attr.Name(), name, mad.ErrRange)
	}
	t.setBytes(f, c, b)
	return nil
}

// Select selects the component of row name without changing the row
// (a zero to match, or a value Put stored).
func (t *Template) Select(name string) error {
	_, c, err := t.row(name)
	if err != nil {
		return err
	}
	t.SelectComponent(c)
	return nil
}

// SelectComponent selects component c (0 to 63) whatever row it has:
// PathRecord's ServiceID, for one, answers to components 0 and 1.
func (t *Template) SelectComponent(c int) {
	if c >= 0 && c < 64 {
		t.mask |= 1 << uint(c)
	}
}

// Put stores v in the bits of f, a field of the record that need not be
// one of its rows, and selects nothing. It is for the C tools' words over
// several rows (saquery's hop_flow_raw of a PathRecord: its hop limit's
// high bits spill into the flow label), whose components they select
// apart from the value; f must lie inside the record.
func (t *Template) Put(f mad.Field, v uint64) error {
	if f.Bit < 0 || f.Width <= 0 || f.Width > 64 || f.End() > 8*t.attr.Layout.Size {
		return fmt.Errorf("sa: %s: bits %d+%d outside the %d-byte record: %w", t.attr.Name(), f.Bit, f.Width, t.attr.Layout.Size, mad.ErrRange)
	}
	f.Put(t.data[:], v)
	return nil
}

func (t *Template) row(name string) (mad.Field, int, error) {
	f, c, ok := t.attr.Field(name)
	if !ok {
		return f, c, fmt.Errorf("sa: %s has no row %q: %w", t.attr.Name(), name, mad.ErrRange)
	}
	return f, c, nil
}

// set stores a numeric row and selects its component (c < 0: none).
func (t *Template) set(f mad.Field, c int, v uint64) {
	f.Put(t.data[:], v)
	t.SelectComponent(c)
}

// setBytes stores a byte row, NUL padded, and selects its component.
func (t *Template) setBytes(f mad.Field, c int, b []byte) {
	d := f.Slice(t.data[:])
	clear(d)
	copy(d, b)
	t.SelectComponent(c)
}

func boolBit(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}
