package mad

import (
	"encoding/binary"
	"fmt"
)

// Kind says how a field's value is shown to people and scripts. It does not
// change how the bits are read: every field is a big-endian bit string.
type Kind uint8

const (
	// Uint is an unsigned number (the default).
	Uint Kind = iota
	// Hex is a number best shown in hexadecimal: GUIDs, keys, masks. Lua
	// sees 64-bit Hex fields as "0x%016x" strings, since Lua numbers are
	// float64.
	Hex
	// String is NUL-padded text (NodeDescription).
	String
	// Bytes is an opaque byte array (GIDs, path vectors), shown as hex.
	Bytes
)

// Field is one field of a MAD or attribute, located as the IBA tables locate
// it: Bit is the offset in bits from the start of the structure, where bit 0
// is the most significant bit of byte 0, and Width is its size in bits. Every
// field is big-endian on the wire.
//
// A field of at most 64 bits is read and written as a number with Get and
// Put; a wider field must be byte aligned and is reached with Slice.
type Field struct {
	Name  string
	Bit   int
	Width int
	Kind  Kind
}

// Get returns the field's value from b. b must be long enough to hold the
// field (Layout.Size bytes for any field of that layout); Get panics
// otherwise, like a slice index, so callers check lengths once per
// structure, not once per field.
func (f Field) Get(b []byte) uint64 {
	if f.Bit%8 == 0 && f.Width%8 == 0 {
		o := f.Bit / 8
		switch f.Width {
		case 8:
			return uint64(b[o])
		case 16:
			return uint64(binary.BigEndian.Uint16(b[o:]))
		case 32:
			return uint64(binary.BigEndian.Uint32(b[o:]))
		case 64:
			return binary.BigEndian.Uint64(b[o:])
		}
	}
	var v uint64
	first, last := f.Bit/8, (f.Bit+f.Width-1)/8
	for i := first; i <= last; i++ {
		v = v<<8 | uint64(b[i])
	}
	shift := uint(8*(last+1) - (f.Bit + f.Width))
	return (v >> shift) & f.mask()
}

// Put stores v, truncated to the field's width, into b, leaving every other
// bit of b as it was.
func (f Field) Put(b []byte, v uint64) {
	if f.Bit%8 == 0 && f.Width%8 == 0 {
		o := f.Bit / 8
		switch f.Width {
		case 8:
			b[o] = byte(v)
			return
		case 16:
			binary.BigEndian.PutUint16(b[o:], uint16(v))
			return
		case 32:
			binary.BigEndian.PutUint32(b[o:], uint32(v))
			return
		case 64:
			binary.BigEndian.PutUint64(b[o:], v)
			return
		}
	}
	first, last := f.Bit/8, (f.Bit+f.Width-1)/8
	shift := uint(8*(last+1) - (f.Bit + f.Width))
	m := f.mask() << shift
	v = (v << shift) & m
	for i := last; i >= first; i-- {
		b[i] = b[i]&^byte(m) | byte(v)
		m >>= 8
		v >>= 8
	}
}

func (f Field) mask() uint64 {
	if f.Width >= 64 {
		return ^uint64(0)
	}
	return 1<<uint(f.Width) - 1
}

// Slice returns the bytes of a byte-aligned field, aliasing b.
func (f Field) Slice(b []byte) []byte {
	return b[f.Bit/8 : (f.Bit+f.Width)/8]
}

// Numeric reports whether the field is read with Get (at most 64 bits and
// not a String or Bytes field).
func (f Field) Numeric() bool {
	return f.Width <= 64 && f.Kind != String && f.Kind != Bytes
}

// End is the first bit after the field.
func (f Field) End() int { return f.Bit + f.Width }

func (f Field) String() string {
	return fmt.Sprintf("%s@%d.%d/%d", f.Name, f.Bit/8, f.Bit%8, f.Width)
}

// Layout is the table of fields of one structure: an attribute, a header. It
// is the single place its offsets live; the typed codecs, the pretty
// printers and the Lua tables are all driven by it. Reserved fields are not
// listed.
type Layout struct {
	Name   string // IBA name, e.g. "PortInfo"
	ID     uint16 // attribute ID, 0 for headers
	Size   int    // bytes on the wire
	Fields []Field
}

// Field returns the field named name (the IBA name, as in the table).
func (l *Layout) Field(name string) (Field, bool) {
	for _, f := range l.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// Check returns an error when b is too short for the layout.
func (l *Layout) Check(b []byte) error {
	if len(b) < l.Size {
		return fmt.Errorf("%s: %w (have %d, need %d)", lowerName(l.Name), ErrTruncated, len(b), l.Size)
	}
	return nil
}

func lowerName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
