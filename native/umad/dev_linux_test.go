//go:build linux

package umad

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A FIFO is a pollable character-like node: it exercises OpenDev's real
// syscalls (runtime poller, deadlines, Close unblocking a read, ioctl
// through SyscallConn, poll) without InfiniBand hardware.
func fifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "umad0")
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return p
}

func TestOpenDevFIFO(t *testing.T) {
	path := fifo(t)
	d, err := OpenDev(path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	fd := d.(*fileDev)
	// Section 13 #16: close-on-exec and non-blocking.
	fd.rc.Control(func(f uintptr) {
		if fl, _ := unix.FcntlInt(f, unix.F_GETFD, 0); fl&unix.FD_CLOEXEC == 0 {
			t.Error("fd lacks FD_CLOEXEC")
		}
		if fl, _ := unix.FcntlInt(f, unix.F_GETFL, 0); fl&unix.O_NONBLOCK == 0 {
			t.Error("fd lacks O_NONBLOCK")
		}
	})
	// ioctl through SyscallConn: a FIFO has no umad ioctls.
	err = d.Ioctl(Req().EnablePKey, nil)
	var pe *fs.PathError
	if !errors.Is(err, syscall.ENOTTY) || !errors.As(err, &pe) || pe.Path != path {
		t.Errorf("ioctl: %v, want ENOTTY naming %s", err, path)
	}
	// NewPort keeps the old header when ENABLE_PKEY is refused.
	// Read deadline.
	d.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := d.Read(make([]byte, 64)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past the deadline: %v", err)
	}
	if _, err := d.Poll(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("poll past the deadline: %v", err)
	}
	d.SetReadDeadline(time.Time{})
	if _, err := d.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if ev, err := d.Poll(); err != nil || ev&PollIn == 0 {
		t.Errorf("poll with data: %#x, %v", ev, err)
	}
	b := make([]byte, 8)
	if n, err := d.Read(b); err != nil || n != 1 {
		t.Errorf("read: %d, %v", n, err)
	}
	// Close unblocks a blocked read.
	done := make(chan error)
	go func() {
		_, err := d.Read(b)
		done <- err
	}()
	time.AfterFunc(20*time.Millisecond, func() { d.Close() })
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Errorf("read after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not unblock Read")
	}
}

func TestNewPortOnFIFO(t *testing.T) {
	path := fifo(t)
	d, err := OpenDev(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPort(d, path, "fifo", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.HeaderSize() != HeaderSizeOld {
		t.Errorf("header %d after ENOTTY, want 56", p.HeaderSize())
	}
}

func TestOpenDevErrors(t *testing.T) {
	_, err := OpenDev(filepath.Join(t.TempDir(), "umad9"))
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing node: %v", err)
	}
	if os.Geteuid() == 0 {
		t.Skip("root bypasses file permissions")
	}
	p := fifo(t)
	os.Chmod(p, 0)
	if _, err := OpenDev(p); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("mode 0: %v, want fs.ErrPermission", err)
	}
}
