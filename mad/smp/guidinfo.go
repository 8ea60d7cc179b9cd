package smp

import "github.com/ibscript/ibscript/mad"

// GUIDInfo rows: mad-formats.md section 7, "GUIDInfo (0x0014), 64 bytes (8
// entries per block)" (IBA vol. 1 table "GUIDInfo"): entry i at bit 64*i.
var giGUID = mad.Field{Name: "GUID", Bit: 0, Width: 64, Kind: mad.Hex}

// GUIDInfoLayout is the GUIDInfo attribute (0x0014, 64 bytes): fields GUID0
// to GUID7.
var GUIDInfoLayout = mad.Layout{
	Name:   "GUIDInfo",
	ID:     AttrGUIDInfo,
	Size:   64,
	Fields: mad.Repeat(giGUID, 8, 64),
}

// GUIDInfo is one block of a port's GUID table: entry i is table index
// block*8 + i, where the attribute modifier is the block number.
type GUIDInfo struct {
	GUIDs [8]uint64
}

// UnmarshalBinary decodes g from the first 64 bytes of b without
// allocating. It returns an error wrapping mad.ErrTruncated when b is
// shorter.
func (g *GUIDInfo) UnmarshalBinary(b []byte) error {
	if err := GUIDInfoLayout.Check(b); err != nil {
		return err
	}
	for i, f := range GUIDInfoLayout.Fields {
		g.GUIDs[i] = f.Get(b)
	}
	return nil
}

// AppendBinary appends the 64-byte attribute to b.
func (g *GUIDInfo) AppendBinary(b []byte) ([]byte, error) {
	all, d := GUIDInfoLayout.Append(b)
	w := mad.Writer{Layout: &GUIDInfoLayout, B: d}
	for i, f := range GUIDInfoLayout.Fields {
		w.Uint(f, g.GUIDs[i])
	}
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 64-byte attribute.
func (g *GUIDInfo) MarshalBinary() ([]byte, error) { return g.AppendBinary(nil) }
