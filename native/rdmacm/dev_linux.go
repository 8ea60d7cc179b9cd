//go:build linux

package rdmacm

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// DevicePath is the rdma_cm misc device.
const DevicePath = "/dev/infiniband/rdma_cm"

// respPtr is the address of a response buffer on its way into a command.
// It holds the pointer itself; the integer exists only in the command
// bytes, written by put just before write(2), and the caller keeps the
// buffer alive until write returns.
type respPtr struct{ p unsafe.Pointer }

func ptrOf(b []byte) respPtr {
	if len(b) == 0 {
		return respPtr{}
	}
	return respPtr{unsafe.Pointer(&b[0])}
}

func (r respPtr) put(dst []byte) { ne.PutUint64(dst, uint64(uintptr(r.p))) }

// fileDev is the device opened with os.OpenFile, non-blocking so the
// runtime poller owns it: Wait parks in epoll, deadlines work, Close
// unblocks a waiter.
type fileDev struct {
	f  *os.File
	rc syscall.RawConn
}

// Open opens the rdma_cm device (path "" is DevicePath) as an event
// channel. Errors are *fs.PathError, so errors.Is(err, fs.ErrNotExist) and
// fs.ErrPermission work.
func Open(path string) (ch *Channel, err error) {
	if path == "" {
		path = DevicePath
	}
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("rdmacm: %s: %w", path, err)
	}
	return NewChannel(&fileDev{f: f, rc: rc}), nil
}

// ReadABIVersion reads the ABI version from sysfs (fsys rooted at /).
func ReadABIVersion(fsys fs.FS) (int, error) {
	for _, p := range []string{"sys/class/misc/rdma_cm/abi_version", "sys/class/infiniband_ucma/abi_version"} {
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			continue
		}
		var v int
		if _, err := fmt.Sscanf(string(b), "%d", &v); err != nil {
			return 0, fmt.Errorf("rdmacm: %s: %q: %w", p, b, err)
		}
		return v, nil
	}
	return 0, fmt.Errorf("rdmacm: no abi_version in sysfs: %w", fs.ErrNotExist)
}

func (d *fileDev) Exec(c Command, resp []byte) error {
	if c.RespOff >= 0 {
		if len(resp) < c.Out() {
			return syscall.EINVAL
		}
		ptrOf(resp).put(c.B[c.RespOff:])
	}
	var n int
	var errno syscall.Errno
	err := d.rc.Write(func(fd uintptr) bool {
		r, _, e := unix.Syscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(&c.B[0])), uintptr(len(c.B)))
		n, errno = int(r), e
		return true // commands never wait for writability
	})
	runtime.KeepAlive(resp)
	runtime.KeepAlive(c.B)
	switch {
	case err != nil:
		return err
	case errno != 0:
		return errno
	case n != len(c.B):
		return syscall.ENODATA // librdmacm's choice for a short write
	}
	return nil
}

func (d *fileDev) Wait(ctx context.Context) error {
	if ctx.Err() != nil {
		// A poll without waiting: a past read deadline would make the
		// poller fail before asking the fd.
		ready := false
		d.rc.Control(func(fd uintptr) {
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, _ := unix.Poll(fds, 0)
			ready = n > 0
		})
		if ready {
			return nil
		}
		return ctx.Err()
	}
	// The past deadline ctx's end sets must not outlive this call: when
	// the AfterFunc has started, wait for it before clearing the deadline,
	// or a late one would fail the next Wait at once.
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		d.f.SetReadDeadline(time.Unix(1, 0))
		close(fired)
	})
	defer func() {
		if !stop() {
			<-fired
		}
		d.f.SetReadDeadline(time.Time{})
	}()
	err := d.rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, _ := unix.Poll(fds, 0)
		return n > 0
	})
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return ctx.Err()
	}
	return err
}

// Fd returns the descriptor without os.File.Fd, which would make it
// blocking.
func (d *fileDev) Fd() int {
	n := -1
	d.rc.Control(func(fd uintptr) { n = int(fd) })
	return n
}

func (d *fileDev) Close() error { return d.f.Close() }
