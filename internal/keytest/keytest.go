// Package keytest finds a management key in output, in any encoding a
// program could have written it: hex with or without 0x (either case,
// padded or not, bytes separated or not), decimal, raw big- or
// little-endian bytes, base64. Tests of what a run writes use it to show
// that no key escapes.
package keytest

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
)

// Encodings returns every form of key that Find looks for, by name.
func Encodings(key uint64) map[string][]byte {
	var be, le [8]byte
	binary.BigEndian.PutUint64(be[:], key)
	binary.LittleEndian.PutUint64(le[:], key)
	hexSep := func(sep string) string {
		parts := make([]string, 8)
		for i, c := range be {
			parts[i] = fmt.Sprintf("%02x", c)
		}
		return strings.Join(parts, sep)
	}
	hexPairs := func() string {
		return fmt.Sprintf("%04x %04x %04x %04x", key>>48, key>>32&0xffff, key>>16&0xffff, key&0xffff)
	}
	return map[string][]byte{
		"hex":             fmt.Appendf(nil, "%x", key),
		"HEX":             fmt.Appendf(nil, "%X", key),
		"hex padded":      fmt.Appendf(nil, "%016x", key),
		"hex spaced":      []byte(hexSep(" ")),
		"hex colons":      []byte(hexSep(":")),
		"hex pairs":       []byte(hexPairs()), // libibmad's xdump, smpdump's output
		"decimal":         strconv.AppendUint(nil, key, 10),
		"float":           []byte(strconv.FormatFloat(float64(key), 'g', -1, 64)),
		"raw big-endian":  be[:],
		"raw little-end.": le[:],
		"base64":          []byte(base64.StdEncoding.EncodeToString(be[:])[:10]),
	}
}

// Find reports the first encoding of key found in out (case-insensitive
// for text encodings), and where.
func Find(out []byte, key uint64) (string, int, bool) {
	lower := bytes.ToLower(out)
	for name, enc := range Encodings(key) {
		hay := out
		if !strings.HasPrefix(name, "raw") && !strings.HasPrefix(name, "base64") {
			hay, enc = lower, bytes.ToLower(enc)
		}
		if i := bytes.Index(hay, enc); i >= 0 {
			return name, i, true
		}
	}
	return "", 0, false
}
