//go:build linux

package ibsim

import (
	"encoding/binary"
	"net"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mmsghdr is struct mmsghdr: a msghdr and the byte count the kernel
// writes back. Go pads it to the C size on every architecture (64 bytes
// on 64-bit ones).
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

// batchSender sends several datagrams to one address with one sendmmsg.
type batchSender struct {
	rc   syscall.RawConn
	name []byte // the raw sockaddr of the destination
	hdrs [maxBatch]mmsghdr
	iovs [maxBatch]unix.Iovec
}

// rawConn is conn's syscall.RawConn, nil when it has none.
func rawConn(conn net.PacketConn) syscall.RawConn {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return rc
}

func newBatchSender(conn net.PacketConn, to net.Addr) *batchSender {
	rc := rawConn(conn)
	if rc == nil {
		return nil
	}
	var name []byte
	switch a := to.(type) {
	case *net.UnixAddr:
		var sa unix.RawSockaddrUnix
		sa.Family = unix.AF_UNIX
		path := a.Name
		if len(path) > 0 && path[0] == '@' {
			path = "\x00" + path[1:] // Go's spelling of an abstract name
		}
		if len(path) > len(sa.Path) {
			return nil
		}
		for i := range len(path) {
			sa.Path[i] = int8(path[i])
		}
		n := int(unsafe.Offsetof(sa.Path)) + len(path)
		name = unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))[:n:n]
		name = append([]byte(nil), name...)
	case *net.UDPAddr:
		ip4 := a.IP.To4()
		if ip4 == nil {
			return nil
		}
		var sa unix.RawSockaddrInet4
		sa.Family = unix.AF_INET
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], uint16(a.Port))
		copy(sa.Addr[:], ip4)
		name = append([]byte(nil), unsafe.Slice((*byte)(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))...)
	default:
		return nil
	}
	return &batchSender{rc: rc, name: name}
}

// send writes bufs[:n] with as few sendmmsg calls as the kernel allows,
// waiting (through the poller, under the connection's write deadline)
// while the peer's queue is full. It returns the first error.
func (b *batchSender) send(bufs *[maxBatch][requestSize]byte, n int) error {
	for i := range n {
		b.iovs[i] = unix.Iovec{Base: &bufs[i][0]}
		b.iovs[i].SetLen(requestSize)
		b.hdrs[i] = mmsghdr{}
		b.hdrs[i].hdr.Name = &b.name[0]
		b.hdrs[i].hdr.Namelen = uint32(len(b.name))
		b.hdrs[i].hdr.Iov = &b.iovs[i]
		b.hdrs[i].hdr.SetIovlen(1)
	}
	sent := 0
	var serr error
	err := b.rc.Write(func(fd uintptr) bool {
		for sent < n {
			r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[sent])), uintptr(n-sent), unix.MSG_DONTWAIT, 0, 0)
			switch e {
			case 0:
				sent += int(r)
			case unix.EAGAIN:
				return false // wait until writable
			case unix.EINTR:
			default:
				serr = e
				return true
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return serr
}

// batchReceiver reads several datagrams with one recvmmsg.
type batchReceiver struct {
	rc   syscall.RawConn
	hdrs [maxBatch]mmsghdr
	iovs [maxBatch]unix.Iovec
	bufs [maxBatch][requestSize + 1]byte // one byte more: a longer datagram shows
}

func newBatchReceiver(conn net.PacketConn) *batchReceiver {
	rc := rawConn(conn)
	if rc == nil {
		return nil
	}
	return &batchReceiver{rc: rc}
}

// recv waits (through the poller, under the connection's read deadline)
// until at least one datagram is queued, and reads as many as are, up to
// maxBatch; datagram i is bufs[i][:lens[i]]. A datagram longer than
// requestSize+1 bytes is cut, as ReadFrom cuts it.
func (b *batchReceiver) recv(lens *[maxBatch]int) (int, error) {
	for i := range b.hdrs {
		b.iovs[i] = unix.Iovec{Base: &b.bufs[i][0]}
		b.iovs[i].SetLen(len(b.bufs[i]))
		b.hdrs[i] = mmsghdr{}
		b.hdrs[i].hdr.Iov = &b.iovs[i]
		b.hdrs[i].hdr.SetIovlen(1)
	}
	var n int
	var rerr error
	err := b.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&b.hdrs[0])), maxBatch, unix.MSG_DONTWAIT, 0, 0)
			switch e {
			case 0:
				n = int(r)
				return true
			case unix.EAGAIN:
				return false // wait until readable
			case unix.EINTR:
			default:
				rerr = e
				return true
			}
		}
	})
	if err != nil {
		return 0, err
	}
	if rerr != nil {
		return 0, &net.OpError{Op: "recvmmsg", Net: "unixgram", Err: os.NewSyscallError("recvmmsg", rerr)}
	}
	for i := range n {
		lens[i] = int(b.hdrs[i].n)
	}
	return n, nil
}

// connectBack connects the unix socket conn to the address to.
func connectBack(conn net.PacketConn, to net.Addr) error {
	a, ok := to.(*net.UnixAddr)
	if !ok {
		return syscall.EAFNOSUPPORT
	}
	rc := rawConn(conn)
	if rc == nil {
		return syscall.EINVAL
	}
	var cerr error
	err := rc.Control(func(fd uintptr) {
		cerr = syscall.Connect(int(fd), &syscall.SockaddrUnix{Name: a.Name})
	})
	if err != nil {
		return err
	}
	return cerr
}

// shutdownRead shuts the reading side of conn down, which wakes a reader
// blocked in recvfrom.
func shutdownRead(conn net.PacketConn) error {
	rc := rawConn(conn)
	if rc == nil {
		return syscall.EINVAL
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Shutdown(int(fd), syscall.SHUT_RD) }); err != nil {
		return err
	}
	return serr
}
