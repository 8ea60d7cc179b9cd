package ibcm

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
)

// TestIPHeaderGolden: RDMA CM's IP header as the kernel's cma_format_hdr
// writes it for 10.0.0.2:50000 -> 10.0.0.1 and [fd00::2]:50000 ->
// fd00::1 (version 0, IP version in the upper nibble, the source port
// big-endian, IPv4 addresses in the last 4 bytes of their 16), and back.
func TestIPHeaderGolden(t *testing.T) {
	for _, c := range []struct {
		src, dst string
		want     string
	}{
		{"10.0.0.2", "10.0.0.1", "00 40 c350 000000000000000000000000 0a000002 000000000000000000000000 0a000001"},
		{"fd00::2", "fd00::1", "00 60 c350 fd000000000000000000000000000002 fd000000000000000000000000000001"},
	} {
		want, err := hex.DecodeString(strings.ReplaceAll(c.want, " ", ""))
		if err != nil || len(want) != ipHdrSize {
			t.Fatalf("bad golden %q", c.want)
		}
		b := make([]byte, ipHdrSize)
		putIPHdr(b, netip.MustParseAddr(c.src), netip.MustParseAddr(c.dst), 50000)
		if !bytes.Equal(b, want) {
			t.Errorf("%s -> %s:\n%s\nwant:\n%s", c.src, c.dst, hex.Dump(b), hex.Dump(want))
		}
		src, dst, port, ok := parseIPHdr(want)
		if !ok || src.String() != c.src || dst.String() != c.dst || port != 50000 {
			t.Errorf("parse: %v %v %d %v", src, dst, port, ok)
		}
	}
	bad := make([]byte, ipHdrSize)
	bad[1] = 5 << 4
	if _, _, _, ok := parseIPHdr(bad); ok {
		t.Error("IP version 5 parsed")
	}
	bad[0], bad[1] = 1, 4<<4
	if _, _, _, ok := parseIPHdr(bad); ok {
		t.Error("CMA version 1 parsed")
	}
}
