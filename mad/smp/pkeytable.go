package smp

import "github.com/ibscript/ibscript/mad"

// P_KeyTable rows: mad-formats.md section 7, "P_KeyTable (0x0016), 64
// bytes" (IBA vol. 1 table "P_KeyTable"): 32 entries of 16 bits, entry i at
// bit 16*i, its top bit the membership type and the other 15 the P_Key
// base. The layout keeps each entry whole.
var pkPKey = mad.Field{Name: "P_Key", Bit: 0, Width: 16, Kind: mad.Hex}

// PKeyTableLayout is the P_KeyTable attribute (0x0016, 64 bytes): fields
// P_Key0 to P_Key31.
var PKeyTableLayout = mad.Layout{
	Name:   "P_KeyTable",
	ID:     AttrPKeyTable,
	Size:   64,
	Fields: mad.Repeat(pkPKey, 32, 16),
}

// Default partition keys.
const (
	DefaultPKey        uint16 = 0xFFFF // full member of the default partition
	DefaultPKeyLimited uint16 = 0x7FFF // limited member
)

// PKeyTable is one block of a port's partition table: entry i is table
// index block*32 + i. The attribute modifier's bits 15..0 are the block; on
// a switch, bits 31..16 are the port.
type PKeyTable struct {
	PKeys [32]uint16
}

// PKeyFull reports whether the P_Key k denotes full membership (its top
// bit).
func PKeyFull(k uint16) bool { return k&0x8000 != 0 }

// PKeyBase returns the 15-bit partition number of k, without the
// membership bit.
func PKeyBase(k uint16) uint16 { return k & 0x7FFF }

// UnmarshalBinary decodes t from the first 64 bytes of b without
// allocating. It returns an error wrapping mad.ErrTruncated when b is
// shorter.
func (t *PKeyTable) UnmarshalBinary(b []byte) error {
	if err := PKeyTableLayout.Check(b); err != nil {
		return err
	}
	for i, f := range PKeyTableLayout.Fields {
		t.PKeys[i] = uint16(f.Get(b))
	}
	return nil
}

// AppendBinary appends the 64-byte attribute to b.
func (t *PKeyTable) AppendBinary(b []byte) ([]byte, error) {
	all, d := PKeyTableLayout.Append(b)
	w := mad.Writer{Layout: &PKeyTableLayout, B: d}
	for i, f := range PKeyTableLayout.Fields {
		w.Uint(f, uint64(t.PKeys[i]))
	}
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 64-byte attribute.
func (t *PKeyTable) MarshalBinary() ([]byte, error) { return t.AppendBinary(nil) }
