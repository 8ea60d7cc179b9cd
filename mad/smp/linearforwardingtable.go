package smp

import "github.com/ibscript/ibscript/mad"

// LinearForwardingTable rows: mad-formats.md section 7,
// "LinearForwardingTable (0x0019), 64 bytes" (IBA vol. 1 table
// "LinearForwardingTable"): entry i at bit 8*i is the egress port for LID
// block*64 + i.
var lftPort = mad.Field{Name: "Port", Bit: 0, Width: 8}

// LinearForwardingTableLayout is the LinearForwardingTable attribute
// (0x0019, 64 bytes): fields Port0 to Port63.
var LinearForwardingTableLayout = mad.Layout{
	Name:   "LinearForwardingTable",
	ID:     AttrLinearForwardingTable,
	Size:   64,
	Fields: mad.Repeat(lftPort, 64, 8),
}

// DropPort is the LinearForwardingTable entry of a LID the switch drops.
const DropPort uint8 = 0xFF

// LIDsPerLFTBlock is the number of LIDs one LinearForwardingTable block
// covers; the attribute modifier is the block number, LID / 64.
const LIDsPerLFTBlock = 64

// LinearForwardingTable is one block of a switch's unicast forwarding
// table: Ports[i] is the egress port of LID block*64 + i, or DropPort.
type LinearForwardingTable struct {
	Ports [64]uint8
}

// UnmarshalBinary decodes t from the first 64 bytes of b without
// allocating. It returns an error wrapping mad.ErrTruncated when b is
// shorter.
func (t *LinearForwardingTable) UnmarshalBinary(b []byte) error {
	if err := LinearForwardingTableLayout.Check(b); err != nil {
		return err
	}
	for i, f := range LinearForwardingTableLayout.Fields {
		t.Ports[i] = uint8(f.Get(b))
	}
	return nil
}

// AppendBinary appends the 64-byte attribute to b.
func (t *LinearForwardingTable) AppendBinary(b []byte) ([]byte, error) {
	all, d := LinearForwardingTableLayout.Append(b)
	w := mad.Writer{Layout: &LinearForwardingTableLayout, B: d}
	for i, f := range LinearForwardingTableLayout.Fields {
		w.Uint(f, uint64(t.Ports[i]))
	}
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 64-byte attribute.
func (t *LinearForwardingTable) MarshalBinary() ([]byte, error) { return t.AppendBinary(nil) }
