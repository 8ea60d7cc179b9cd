package diag

import "github.com/ibscript/ibscript/mad"

// codec is a generated attribute codec of mad, mad/smp, mad/perf or
// mad/cc (mad/internal/madgen): the tools read the fields they act on
// through these types, never at hand-written offsets (internal/archtest's
// TestNoHandOffsets).
type codec[T any] interface {
	*T
	UnmarshalBinary([]byte) error
	AttrLayout() *mad.Layout
}

// decode reads the attribute T from a MAD's data area as libibmad does:
// bytes past the end of data (an answer shorter than the attribute) read
// as zero, so decode never fails.
func decode[T any, P codec[T]](data []byte) T {
	var v T
	p := P(&v)
	if n := p.AttrLayout().Size; len(data) < n {
		full := make([]byte, n)
		copy(full, data)
		data = full
	}
	_ = p.UnmarshalBinary(data) // data holds the whole attribute
	return v
}

// encode is the data area of a Set or a request: the attribute v in the
// first bytes, zero to n bytes (the class's data area) when the attribute
// is shorter.
func encode[T any, P interface {
	*T
	AppendBinary([]byte) ([]byte, error)
}](v T, n int) ([]byte, error) {
	b, err := P(&v).AppendBinary(make([]byte, 0, n))
	if err != nil {
		return nil, err
	}
	if len(b) < n {
		b = append(b, make([]byte, n-len(b))...)
	}
	return b, nil
}
