package smp

import "github.com/ibscript/ibscript/mad"

// NodeDescription rows: mad-formats.md section 7, "NodeDescription
// (0x0010), 64 bytes" (IBA vol. 1 table "NodeDescription").
var ndNodeString = mad.Field{Name: "NodeString", Bit: 0, Width: 512, Kind: mad.String}

// NodeDescriptionLayout is the NodeDescription attribute (0x0010, 64 bytes).
var NodeDescriptionLayout = mad.Layout{
	Name:   "NodeDescription",
	ID:     AttrNodeDescription,
	Size:   64,
	Fields: []mad.Field{ndNodeString},
}

// NodeDescription is the NodeDescription attribute: up to 64 bytes of
// UTF-8 text, NUL padded on the wire.
type NodeDescription struct {
	NodeString string // without the trailing NULs
}

// String returns the description.
func (n *NodeDescription) String() string { return n.NodeString }

// UnmarshalBinary decodes n from the first 64 bytes of b, dropping the
// trailing NULs. It allocates only when the text differs from n.NodeString,
// so polling the same node again costs nothing. It returns an error
// wrapping mad.ErrTruncated when b is shorter.
func (n *NodeDescription) UnmarshalBinary(b []byte) error {
	if err := NodeDescriptionLayout.Check(b); err != nil {
		return err
	}
	if s := mad.TrimNUL(ndNodeString.Slice(b)); string(s) != n.NodeString {
		n.NodeString = string(s)
	}
	return nil
}

// AppendBinary appends the 64-byte attribute to b, NUL padded. It returns
// an error wrapping mad.ErrRange, and b unchanged, when NodeString is
// longer than 64 bytes.
func (n *NodeDescription) AppendBinary(b []byte) ([]byte, error) {
	all, d := NodeDescriptionLayout.Append(b)
	w := mad.Writer{Layout: &NodeDescriptionLayout, B: d}
	w.Text(ndNodeString, n.NodeString)
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 64-byte attribute.
func (n *NodeDescription) MarshalBinary() ([]byte, error) { return n.AppendBinary(nil) }
