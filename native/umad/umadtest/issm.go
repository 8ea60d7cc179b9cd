package umadtest

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/native/umad"
)

// ISSM is an open /dev/infiniband/issmN: while it is open the port's
// CapabilityMask has IsSM. It is exclusive (a second open gets EAGAIN, as
// with O_NONBLOCK) and has no read, write or ioctl.
type ISSM struct {
	port   *Port
	path   string
	closed bool
}

var _ umad.Dev = (*ISSM)(nil)

// OpenISSM opens the port's issm node.
func (p *Port) OpenISSM(path string) (*ISSM, error) {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	switch {
	case p.dead:
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENXIO}
	case p.isSM:
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.EAGAIN}
	}
	p.isSM = true
	return &ISSM{port: p, path: path}, nil
}

// IsSM reports whether an issm node of the port is open.
func (p *Port) IsSM() bool {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	return p.isSM
}

func (d *ISSM) err(op string, e error) error { return &fs.PathError{Op: op, Path: d.path, Err: e} }

func (d *ISSM) Read([]byte) (int, error)        { return 0, d.err("read", syscall.EINVAL) }
func (d *ISSM) Write([]byte) (int, error)       { return 0, d.err("write", syscall.EINVAL) }
func (d *ISSM) Ioctl(uint32, []byte) error      { return d.err("ioctl", syscall.ENOTTY) }
func (d *ISSM) Poll() (int, error)              { return 0, d.err("poll", syscall.EINVAL) }
func (d *ISSM) SetReadDeadline(time.Time) error { return d.err("setdeadline", syscall.EINVAL) }

// Close clears IsSM.
func (d *ISSM) Close() error {
	d.port.k.mu.Lock()
	defer d.port.k.mu.Unlock()
	if d.closed {
		return d.err("close", os.ErrClosed)
	}
	d.closed = true
	d.port.isSM = false
	return nil
}
