//go:build !linux

package ibsim

import (
	"errors"
	"net"
)

// batchSender sends several datagrams to one address; without sendmmsg,
// one write each.
type batchSender struct {
	conn net.PacketConn
	to   net.Addr
}

func newBatchSender(conn net.PacketConn, to net.Addr) *batchSender {
	return &batchSender{conn: conn, to: to}
}

func (b *batchSender) send(bufs *[maxBatch][requestSize]byte, n int) error {
	for i := range n {
		if _, err := b.conn.WriteTo(bufs[i][:], b.to); err != nil {
			return err
		}
	}
	return nil
}

// connectBack is not done off Linux (ibsim's abstract unix sockets are
// Linux's).
func connectBack(net.PacketConn, net.Addr) error { return errors.ErrUnsupported }

func shutdownRead(net.PacketConn) error { return errors.ErrUnsupported }

// batchReceiver reads several datagrams at once; there is none without
// recvmmsg (the reader reads one at a time).
type batchReceiver struct {
	bufs [maxBatch][requestSize + 1]byte
}

func newBatchReceiver(net.PacketConn) *batchReceiver { return nil }

func (b *batchReceiver) recv(*[maxBatch]int) (int, error) { return 0, errors.ErrUnsupported }
