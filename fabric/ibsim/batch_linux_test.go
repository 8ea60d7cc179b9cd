//go:build linux

package ibsim

import (
	"bytes"
	"errors"
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

// TestBatchReceiver: one recvmmsg takes every queued datagram up to
// maxBatch, in order, each with its length (a longer one cut at
// requestSize+1, as ReadFrom cuts it); the next call takes the rest; a
// closed connection ends a waiting call with net.ErrClosed.
func TestBatchReceiver(t *testing.T) {
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	tx, err := net.DialUDP("udp4", nil, rx.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	br := newBatchReceiver(rx)
	if br == nil {
		t.Fatal("no batch receiver")
	}
	const n = maxBatch + 3
	sizes := make([]int, n)
	for i := range n {
		sizes[i] = requestSize
		switch i {
		case 2:
			sizes[i] = 7
		case 5:
			sizes[i] = requestSize + 40
		}
		d := make([]byte, sizes[i])
		for j := range d {
			d[j] = byte(i*31 + j)
		}
		if _, err := tx.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	rx.SetReadDeadline(time.Now().Add(5 * time.Second))
	var lens [maxBatch]int
	got := 0
	for got < n {
		k, err := br.recv(&lens)
		if err != nil {
			t.Fatalf("after %d datagrams: %v", got, err)
		}
		if k < 1 || k > maxBatch {
			t.Fatalf("recv: %d datagrams", k)
		}
		for i := range k {
			want := min(sizes[got], requestSize+1)
			if lens[i] != want {
				t.Errorf("datagram %d: %d bytes, want %d", got, lens[i], want)
			}
			for j := range min(lens[i], want) {
				if br.bufs[i][j] != byte(got*31+j) {
					t.Fatalf("datagram %d: byte %d is %d, want %d", got, j, br.bufs[i][j], byte(got*31+j))
				}
			}
			got++
		}
	}
	done := make(chan error, 1)
	go func() {
		rx.SetReadDeadline(time.Time{})
		_, err := br.recv(&lens)
		done <- err
	}()
	time.Sleep(10 * time.Millisecond) // let it wait in the poller (either way the result is the same)
	rx.Close()
	select {
	case err := <-done:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("recv on a closed connection: %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("recv did not end when the connection closed")
	}
}
