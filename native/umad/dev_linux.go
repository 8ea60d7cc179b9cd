//go:build linux

package umad

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// fileDev is a device node opened with os.OpenFile, so the runtime
// poller owns the fd: reads wait in epoll, deadlines work and Close
// unblocks them.
type fileDev struct {
	f  *os.File
	rc syscall.RawConn
}

// OpenDev opens a umad or issm node read-write, non-blocking and
// close-on-exec, as libibumad does plus O_CLOEXEC. umad supports poll, so
// os.OpenFile registers the fd with the runtime poller: Read waits in
// epoll instead of returning EAGAIN, deadlines work and Close unblocks a
// pending Read. Errors are *fs.PathError, so errors.Is(err,
// fs.ErrPermission) works.
func OpenDev(path string) (Dev, error) {
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("umad: %s: %w", path, err)
	}
	return &fileDev{f: f, rc: rc}, nil
}

func (d *fileDev) Read(b []byte) (int, error)  { return d.f.Read(b) }
func (d *fileDev) Write(b []byte) (int, error) { return d.f.Write(b) }
func (d *fileDev) Close() error                { return d.f.Close() }

func (d *fileDev) SetReadDeadline(t time.Time) error { return d.f.SetReadDeadline(t) }

func (d *fileDev) Ioctl(req uint32, arg []byte) error {
	var ptr unsafe.Pointer
	if len(arg) > 0 {
		ptr = unsafe.Pointer(&arg[0])
	}
	var errno syscall.Errno
	err := d.rc.Control(func(fd uintptr) {
		_, _, errno = unix.Syscall(unix.SYS_IOCTL, fd, uintptr(req), uintptr(ptr))
	})
	runtime.KeepAlive(arg)
	if err != nil {
		return &os.PathError{Op: "ioctl", Path: d.f.Name(), Err: err}
	}
	if errno != 0 {
		return &os.PathError{Op: fmt.Sprintf("ioctl 0x%08x", req), Path: d.f.Name(), Err: errno}
	}
	return nil
}

// Poll waits in the runtime poller until poll(2) reports the fd.
func (d *fileDev) Poll() (int, error) {
	var revents int
	var perr error
	err := d.rc.Read(func(fd uintptr) bool {
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, 0)
		if err == unix.EINTR {
			return false
		}
		if err != nil {
			perr = err
			return true
		}
		if n > 0 && fds[0].Revents != 0 {
			revents = int(fds[0].Revents)
			return true
		}
		return false
	})
	if err != nil {
		return 0, &os.PathError{Op: "poll", Path: d.f.Name(), Err: err}
	}
	if perr != nil {
		return 0, &os.PathError{Op: "poll", Path: d.f.Name(), Err: perr}
	}
	return revents, nil
}
