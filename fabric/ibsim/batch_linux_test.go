//go:build linux

package ibsim

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"testing"
	"time"
)

// TestBatchSender: one sendmmsg delivers every held datagram, in order and
// whole, to an abstract unix address and to a UDP one.
func TestBatchSender(t *testing.T) {
	name := fmt.Sprintf("@ibscript-batch-%d\x00", os.Getpid())
	ua, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Net: "unixgram", Name: name})
	if err != nil {
		t.Fatal(err)
	}
	defer ua.Close()
	ud, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ud.Close()
	for _, tc := range []struct {
		name string
		rx   net.PacketConn
		to   net.Addr // Go reports an abstract name cut at its NUL: not LocalAddr
		tx   func() (net.PacketConn, error)
	}{
		{"unix", ua, &net.UnixAddr{Net: "unixgram", Name: name}, func() (net.PacketConn, error) {
			return net.ListenUnixgram("unixgram", &net.UnixAddr{Net: "unixgram", Name: fmt.Sprintf("@ibscript-batch-tx-%d", os.Getpid())})
		}},
		{"udp", ud, ud.LocalAddr(), func() (net.PacketConn, error) { return net.ListenUDP("udp4", nil) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx, err := tc.tx()
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			b := newBatchSender(tx, tc.to)
			if b == nil {
				t.Fatalf("no batch sender for %v", tc.to)
			}
			var bufs [maxBatch][requestSize]byte
			const n = 5
			for i := range n {
				for j := range bufs[i] {
					bufs[i][j] = byte(i*31 + j)
				}
			}
			if err := b.send(&bufs, n); err != nil {
				t.Fatal(err)
			}
			tc.rx.SetReadDeadline(time.Now().Add(5 * time.Second))
			var got [requestSize + 1]byte
			for i := range n {
				k, _, err := tc.rx.ReadFrom(got[:])
				if err != nil {
					t.Fatalf("datagram %d: %v", i, err)
				}
				if !bytes.Equal(got[:k], bufs[i][:]) {
					t.Fatalf("datagram %d: %d bytes, not the %d-byte datagram %d sent", i, k, requestSize, i)
				}
			}
		})
	}
}
