package mad

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	Name string
	// LuaKey is the field's Lua table key (snake_case), written by the
	// generator (mad/internal/madgen) for every generated row and by hand,
	// from the same rule, for the few hand-written header layouts.
	LuaKey string
	Bit    int
	Width  int
	Kind   Kind
	Doc    string // one line, from the schema (mad/internal/madgen)
}

// Get returns the field's value from b. b must be long enough to hold the
// field (Layout.Size bytes for any field of that layout); Get panics
// otherwise, like a slice index, so callers check lengths once per
// structure, not once per field.
func (f Field) Get(b []byte) uint64 {
	// One big-endian load covers any field that fits in the 8 bytes from
	// its first byte, when b has them: shift off the bits before it and
	// after it.
	if o, r := f.Bit>>3, f.Bit&7; r+f.Width <= 64 && o+8 <= len(b) && o >= 0 {
		return binary.BigEndian.Uint64(b[o:]) << r >> (64 - f.Width)
	}
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
	if hi, lo, ok := f.split(); ok {
		return hi.Get(b)<<uint(lo.Width) | lo.Get(b)
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
	// Byte by byte, not one 8-byte read-modify-write: consecutive Puts
	// (a header) would then each read what the previous one just wrote,
	// which the CPU cannot forward from its store buffer (measured: a
	// NodeInfo round trip 25% slower).
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
	if first == last && f.Width < 8 {
		// Within one byte (a state, a flag): most of PortInfo's fields.
		shift := uint(8 - f.Bit%8 - f.Width)
		m := byte(1<<uint(f.Width)-1) << shift
		b[first] = b[first]&^m | byte(v)<<shift&m
		return
	}
	if last-first >= 8 {
		hi, lo, _ := f.split()
		hi.Put(b, v>>uint(lo.Width))
		lo.Put(b, v)
		return
	}
	shift := uint(8*(last+1) - (f.Bit + f.Width))
	m := f.mask() << shift
	v = (v << shift) & m
	for i := last; i >= first; i-- {
		b[i] = b[i]&^byte(m) | byte(v)
		m >>= 8
		v >>= 8
	}
}

// split cuts a field that spans nine bytes (an unaligned field of 57 to 64
// bits), which does not fit one 64-bit word, into the bits of its first
// byte and the byte-aligned rest.
func (f Field) split() (hi, lo Field, ok bool) {
	if (f.Bit+f.Width-1)/8-f.Bit/8 < 8 {
		return f, f, false
	}
	n := 8 - f.Bit%8
	return Field{Bit: f.Bit, Width: n}, Field{Bit: f.Bit + n, Width: f.Width - n}, true
}

// Max is the largest value a numeric field holds.
func (f Field) Max() uint64 { return f.mask() }

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

// Key is the field's Lua table key (LuaKey).
func (f Field) Key() string { return f.LuaKey }

// Format renders a value as printers and golden files show it: Uint fields
// in decimal, Hex fields as 0x followed by one digit per 4 bits of width,
// String fields as their text up to the trailing NULs, Bytes fields as
// lower-case hex. v is used for numeric fields, raw for the others (see
// Layout.Each).
func (f Field) Format(v uint64, raw []byte) string {
	switch {
	case f.Kind == String:
		return string(TrimNUL(raw))
	case !f.Numeric():
		return hex.EncodeToString(raw)
	case f.Kind == Hex:
		return fmt.Sprintf("0x%0*x", (f.Width+3)/4, v)
	}
	return strconv.FormatUint(v, 10)
}

// TrimNUL returns b without its trailing NUL bytes, aliasing b.
func TrimNUL(b []byte) []byte {
	for len(b) > 0 && b[len(b)-1] == 0 {
		b = b[:len(b)-1]
	}
	return b
}

// Repeat returns n copies of the row f, the i-th one stride bits after f and
// named f.Name followed by i ("GUID0", "GUID1", ...). It describes the IBA
// tables that are arrays of equal entries (GUIDInfo, P_KeyTable,
// LinearForwardingTable).
func Repeat(f Field, n, stride int) []Field {
	fs := make([]Field, n)
	for i := range fs {
		fs[i] = f
		fs[i].Name = f.Name + strconv.Itoa(i)
		fs[i].Bit = f.Bit + i*stride
	}
	return fs
}

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
	Mod    string // what the attribute modifier means, e.g. "port number"
	Doc    string // one sentence
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

// CheckMin returns an error when b is shorter than n bytes, the least a
// decoder of the layout accepts (a Notice in an SMP Trap lacks its last 16
// bytes).
func (l *Layout) CheckMin(b []byte, n int) error {
	if len(b) < n {
		return fmt.Errorf("%s: %w (have %d, need %d)", lowerName(l.Name), ErrTruncated, len(b), n)
	}
	return nil
}

// RangeError is an encoder's error for a value v that does not fit the
// field of the structure layout (lower case), whose largest value is max:
// "portinfo: PortState: value out of range (17 > 15)".
func RangeError(layout, field string, v, max uint64) error {
	return fmt.Errorf("%s: %s: %w (%d > %d)", layout, field, ErrRange, v, max)
}

// LengthError is an encoder's error for n bytes of text or data that do not
// fit the max bytes of the field.
func LengthError(layout, field string, n, max int) error {
	return fmt.Errorf("%s: %s: %w (%d bytes > %d)", layout, field, ErrRange, n, max)
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

// Append grows b by l.Size zero bytes. It returns the grown slice and the
// part that was added, where an encoder writes the structure. It allocates
// only when b lacks the capacity.
func (l *Layout) Append(b []byte) (all, added []byte) {
	n := len(b)
	all = slices.Grow(b, l.Size)[:n+l.Size]
	added = all[n:]
	clear(added)
	return all, added
}

// Each calls fn for every field of l, in table order, with its value in b:
// v for numeric fields (Field.Numeric), raw (aliasing b) for String and
// Bytes fields. It is the generic walk behind printers and the Lua tables.
// It returns an error wrapping ErrTruncated when b is shorter than l.Size,
// before calling fn.
func (l *Layout) Each(b []byte, fn func(f Field, v uint64, raw []byte)) error {
	if err := l.Check(b); err != nil {
		return err
	}
	for _, f := range l.Fields {
		if f.Numeric() {
			fn(f, f.Get(b), nil)
		} else {
			fn(f, 0, f.Slice(b))
		}
	}
	return nil
}

// Writer stores the fields of one structure into B for an encoder and checks
// that every value fits its field. It keeps the first failure in Err, so the
// encoder checks once at the end; later calls still write, truncating.
// Layout names the structure in errors, e.g.
// "portinfo: PortState: value out of range (17 > 15)".
type Writer struct {
	Layout *Layout
	B      []byte // at least Layout.Size bytes
	Err    error
}

// Uint stores v into f.
func (w *Writer) Uint(f Field, v uint64) {
	if v > f.mask() {
		w.fail(RangeError(w.name(), f.Name, v, f.mask()))
	}
	f.Put(w.B, v)
}

// Bool stores 1 for true and 0 for false into f.
func (w *Writer) Bool(f Field, v bool) {
	var u uint64
	if v {
		u = 1
	}
	f.Put(w.B, u)
}

// Bytes copies v into the byte-aligned field f and zeroes the rest of it.
func (w *Writer) Bytes(f Field, v []byte) {
	dst := f.Slice(w.B)
	if len(v) > len(dst) {
		w.fail(LengthError(w.name(), f.Name, len(v), len(dst)))
	}
	clear(dst[copy(dst, v):])
}

// Text copies s into the byte-aligned field f, NUL padded.
func (w *Writer) Text(f Field, s string) {
	dst := f.Slice(w.B)
	if len(s) > len(dst) {
		w.fail(LengthError(w.name(), f.Name, len(s), len(dst)))
	}
	clear(dst[copy(dst, s):])
}

func (w *Writer) fail(err error) {
	if w.Err == nil {
		w.Err = err
	}
}

func (w *Writer) name() string {
	if w.Layout == nil {
		return "mad"
	}
	return lowerName(w.Layout.Name)
}

// Codec is a typed attribute value: it decodes in place from the wire and
// appends its wire encoding. Every generated attribute type is one; the
// packages' NewCodec functions make them by attribute ID.
type Codec interface {
	UnmarshalBinary(b []byte) error
	AppendBinary(b []byte) ([]byte, error)
}

// Attribute is a generated attribute type: its codec and its layout (ID,
// size, rows).
type Attribute interface {
	Codec
	AttrLayout() *Layout
}

// Text renders the structure in b as people read it, one field a line
// under its name, as the REPL prints a decoded attribute:
//
//	PortInfo
//	  m_key          <masked>
//	  gid_prefix     0xfe80000000000000
//	  lid            1
//
// Keys (IsKeyField) read "<masked>". A b shorter than the layout gives
// the ErrTruncated error's text after the name.
func (l *Layout) Text(b []byte) string {
	var sb strings.Builder
	sb.WriteString(l.Name)
	width := 0
	for _, f := range l.Fields {
		width = max(width, len(f.Key()))
	}
	err := l.Each(b, func(f Field, v uint64, raw []byte) {
		s := f.Format(v, raw)
		if IsKeyField(f.Name) {
			s = "<masked>"
		}
		fmt.Fprintf(&sb, "\n  %-*s  %s", width, f.Key(), s)
	})
	if err != nil {
		sb.WriteString(": " + err.Error())
	}
	return sb.String()
}
