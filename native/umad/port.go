package umad

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"
)

// Poll bits of Dev.Poll, as poll(2) reports them.
const (
	PollIn  = 0x1
	PollErr = 0x8
	PollOut = 0x4
)

// Dev is an open umad (or issm) character device: the raw fd operations,
// with the os.File semantics the runtime poller gives. Read blocks until
// a record is queued, the read deadline passes (os.ErrDeadlineExceeded)
// or Close is called (os.ErrClosed); it never returns EAGAIN. Read, Write
// and Ioctl return the kernel's errno wrapped in *fs.PathError or
// *os.SyscallError. Read and Poll may run concurrently with Write and
// Ioctl.
type Dev interface {
	Read(b []byte) (int, error)
	Write(b []byte) (int, error)
	// Ioctl issues request req with arg as its argument buffer (nil for
	// none); the kernel may write into arg.
	Ioctl(req uint32, arg []byte) error
	// Poll waits until the device is readable or reports an error
	// condition, or the read deadline passes, and returns the revents
	// mask (PollIn, PollOut, PollErr).
	Poll() (int, error)
	SetReadDeadline(t time.Time) error
	Close() error
}

// Options say where OpenPort finds sysfs and how it opens devices. A nil
// *Options means the real system.
type Options struct {
	// FS is the root of sysfs lookups; nil means os.DirFS("/").
	FS fs.FS
	// Open opens a device node by absolute path (/dev/infiniband/umadN or
	// issmN); nil means OpenDev.
	Open func(path string) (Dev, error)
	// SMI makes OpenPort resolve as umad_open_smi_port: ports with
	// IsSMDisabled are skipped.
	SMI bool
}

func (o *Options) fs() fs.FS {
	if o != nil && o.FS != nil {
		return o.FS
	}
	return os.DirFS("/")
}

func (o *Options) open() func(string) (Dev, error) {
	if o != nil && o.Open != nil {
		return o.Open
	}
	return OpenDev
}

// Port is an open umad port, as the fd umad_open_port returns. It knows
// its own header mode (64-byte P_Key header or the old 56-byte one).
//
// Read-side calls (Recv, Read, Poll, SetReadDeadline) are owned by one
// goroutine; Send, Register and Unregister may run concurrently with them
// and with each other. Close may be called from any goroutine and
// unblocks a pending Recv.
type Port struct {
	dev     Dev
	path    string
	ca      string
	portNum int
	hdr     int // HeaderSize or HeaderSizeOld

	rbuf []byte // owned by the read side

	closeOnce sync.Once
	closeErr  error
}

// OpenPort is umad_open_port: check the ABI version, resolve (ca, port)
// with the default-port rules, find umadN, open it (read-write,
// non-blocking, close-on-exec: section 13 #16) and enable the P_Key
// header. The Port owns the device until Close.
func OpenPort(ca string, port int, o *Options) (*Port, error) {
	fsys := o.fs()
	if err := CheckABI(fsys); err != nil {
		return nil, err
	}
	name, num, err := Resolve(fsys, ca, port, o != nil && o.SMI)
	if err != nil {
		return nil, err
	}
	idx, err := DevIndex(fsys, name, num)
	if err != nil {
		return nil, err
	}
	path := fmt.Sprintf("%s/umad%d", DevDir, idx)
	dev, err := o.open()(path)
	if err != nil {
		return nil, openError(path, name, num, err)
	}
	return newPort(dev, path, name, num)
}

// NewPort makes a Port of an already open device (for tests and for
// callers that open devices themselves) and enables the P_Key header on
// it. The Port owns dev.
func NewPort(dev Dev, path, ca string, port int) (*Port, error) { return newPort(dev, path, ca, port) }

func newPort(dev Dev, path, ca string, num int) (*Port, error) {
	p := &Port{dev: dev, path: path, ca: ca, portNum: num, hdr: HeaderSizeOld}
	err := dev.Ioctl(Req().EnablePKey, nil)
	switch {
	case err == nil:
		p.hdr = HeaderSize
	case errors.Is(err, syscall.ENOTTY), errors.Is(err, syscall.EINVAL):
		// A kernel without ENABLE_PKEY keeps the old header.
	default:
		dev.Close()
		return nil, fmt.Errorf("umad: %s: enable P_Key index: %w", path, err)
	}
	return p, nil
}

func openError(path, ca string, port int, err error) error {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("umad: open %s (%s port %d): permission denied: run as root or as a member of the rdma group (udev rule for /dev/infiniband/umad*): %w", path, ca, port, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("umad: open %s (%s port %d): no such device node (is ib_umad loaded?): %w", path, ca, port, err)
	}
	return fmt.Errorf("umad: open %s (%s port %d): %w", path, ca, port, err)
}

// OpenISSM opens /dev/infiniband/issmN of the resolved port, as an SM
// does to set IsSM in the port's CapabilityMask until Close. Opening
// needs root; a second opener gets EAGAIN (the device is exclusive).
func OpenISSM(ca string, port int, o *Options) (Dev, string, error) {
	fsys := o.fs()
	if err := CheckABI(fsys); err != nil {
		return nil, "", err
	}
	name, num, err := Resolve(fsys, ca, port, o != nil && o.SMI)
	if err != nil {
		return nil, "", err
	}
	idx, err := DevIndex(fsys, name, num)
	if err != nil {
		return nil, "", err
	}
	path := fmt.Sprintf("%s/issm%d", DevDir, idx)
	dev, err := o.open()(path)
	if err != nil {
		return nil, "", openError(path, name, num, err)
	}
	return dev, path, nil
}

// CA is the device name of the port.
func (p *Port) CA() string { return p.ca }

// Num is the port number.
func (p *Port) Num() int { return p.portNum }

// Path is the device node.
func (p *Port) Path() string { return p.path }

// HeaderSize is this port's umad header size: 64 once ENABLE_PKEY
// succeeded, else 56 (per port, never process-global: section 13 #15).
func (p *Port) HeaderSize() int { return p.hdr }

// Close closes the device: the kernel unregisters the agents and drops
// queued MADs. It is idempotent.
func (p *Port) Close() error {
	p.closeOnce.Do(func() { p.closeErr = p.dev.Close() })
	return p.closeErr
}

// RegisterError is a failed registration: the kernel's errno, and for
// REGISTER_AGENT2 the flags the kernel wrote back (the supported mask
// when unknown flags were asked for).
type RegisterError struct {
	Op    string // "REGISTER_AGENT" or "REGISTER_AGENT2"
	Path  string
	Class uint8
	Flags uint32
	Err   error
}

func (e *RegisterError) Error() string {
	return fmt.Sprintf("umad: %s: %s class 0x%02x: %v", e.Path, e.Op, e.Class, e.Err)
}

func (e *RegisterError) Unwrap() error { return e.Err }

// Register is umad_register: REGISTER_AGENT with the QP chosen from the
// class, OUI 00:14:05 and the given method mask. It returns the agent id
// or an error wrapping the kernel's errno (not libibumad's blanket EPERM:
// section 13 #13).
func (p *Port) Register(class, version, rmppVersion uint8, methods [2]uint64) (int, error) {
	return p.registerOld(RegReq{QPN: QPNFor(class), Class: class, Version: version, OUI: DefaultOUI,
		RMPPVersion: rmppVersion, Methods: methods})
}

// RegisterOUI is umad_register_oui: vendor classes 0x30-0x4F only, class
// version 1.
func (p *Port) RegisterOUI(class, rmppVersion uint8, oui uint32, methods [2]uint64) (int, error) {
	if class < 0x30 || class > 0x4f {
		return -1, &RegisterError{Op: "REGISTER_AGENT", Path: p.path, Class: class,
			Err: fmt.Errorf("OUI registration needs a vendor class 0x30-0x4f: %w", syscall.EINVAL)}
	}
	return p.registerOld(RegReq{QPN: 1, Class: class, Version: 1, OUI: oui & 0xffffff,
		RMPPVersion: rmppVersion, Methods: methods})
}

func (p *Port) registerOld(r RegReq) (int, error) {
	b := r.Marshal()
	if err := p.dev.Ioctl(Req().RegisterAgent, b[:]); err != nil {
		return -1, &RegisterError{Op: "REGISTER_AGENT", Path: p.path, Class: r.Class, Err: err}
	}
	r.Unmarshal(b[:])
	return int(r.ID), nil
}

// Agent is umad_register2's attributes.
type Agent struct {
	Class       uint8
	Version     uint8
	Flags       uint32 // FlagUserRMPP
	Methods     [2]uint64
	OUI         uint32 // vendor classes 0x30-0x4F: non-zero, below 2^24
	RMPPVersion uint8
}

// Register2 is umad_register2: REGISTER_AGENT2; when the kernel lacks it
// (ENOTTY, EINVAL) and no flags are asked for, REGISTER_AGENT. Failures
// are *RegisterError wrapping the errno; Flags holds what the kernel
// wrote back (libibumad loses it).
func (p *Port) Register2(a Agent) (int, error) {
	if a.Class >= 0x30 && a.Class <= 0x4f && (a.OUI == 0 || a.OUI >= 1<<24) {
		return -1, &RegisterError{Op: "REGISTER_AGENT2", Path: p.path, Class: a.Class,
			Err: fmt.Errorf("vendor class needs an OUI in 1..0xffffff, have 0x%x: %w", a.OUI, syscall.EINVAL)}
	}
	r := RegReq2{QPN: uint32(QPNFor(a.Class)), Class: a.Class, Version: a.Version, Flags: a.Flags,
		Methods: a.Methods, OUI: a.OUI, RMPPVersion: a.RMPPVersion}
	b := r.Marshal()
	err := p.dev.Ioctl(Req().RegisterAgent2, b[:])
	if err == nil {
		r.Unmarshal(b[:])
		return int(r.ID), nil
	}
	r.Unmarshal(b[:])
	if a.Flags == 0 && errors.Is(err, syscall.ENOTTY) {
		// A kernel older than REGISTER_AGENT2 (before 3.17). libibumad
		// also retries after EINVAL; ibscript does not, because a
		// current kernel's EINVAL is the real answer (a method
		// conflict, say) and a retry would only hide it.
		return p.registerOld(RegReq{QPN: QPNFor(a.Class), Class: a.Class, Version: a.Version,
			OUI: a.OUI, RMPPVersion: a.RMPPVersion, Methods: a.Methods})
	}
	return -1, &RegisterError{Op: "REGISTER_AGENT2", Path: p.path, Class: a.Class, Flags: r.Flags, Err: err}
}

// Unregister is umad_unregister; the error wraps the kernel's errno
// (EINVAL for an unknown id).
func (p *Port) Unregister(id int) error {
	if id < 0 || int64(id) > 0xffffffff {
		return fmt.Errorf("umad: %s: unregister agent %d: %w", p.path, id, syscall.EINVAL)
	}
	var b [4]byte
	ne.PutUint32(b[:], uint32(id))
	if err := p.dev.Ioctl(Req().UnregisterAgent, b[:]); err != nil {
		return fmt.Errorf("umad: %s: unregister agent %d: %w", p.path, id, err)
	}
	return nil
}

// Send is umad_send: h (Agent, TimeoutMS, Retries and the address) and
// the MAD are written as one record of HeaderSize()+len(mad) bytes. The
// error wraps the write's real errno (section 13 #7): EINVAL for a short
// MAD, a bad agent id, a duplicate outstanding TID; EIO for an
// unregistered agent or a dead device.
func (p *Port) Send(h *Header, mad []byte, buf []byte) error {
	n := p.hdr + len(mad)
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	h.Put(buf, p.hdr)
	copy(buf[p.hdr:], mad)
	w, err := p.dev.Write(buf)
	if err != nil {
		return fmt.Errorf("umad: %s: send agent %d: %w", p.path, h.Agent, err)
	}
	if w != n {
		return fmt.Errorf("umad: %s: send agent %d: short write %d of %d: %w", p.path, h.Agent, w, n, syscall.EIO)
	}
	return nil
}

// NoSpaceError is read's ENOSPC: the record (an RMPP message) needs Need
// bytes of MAD data and stays queued. errors.Is(err, syscall.ENOSPC).
type NoSpaceError struct {
	Path string
	Need int
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("umad: %s: read: message needs %d bytes of MAD buffer (ENOSPC)", e.Path, e.Need)
}

func (e *NoSpaceError) Is(target error) bool { return target == syscall.ENOSPC }

// Read is one read(2) of a record into b (header and MAD): it returns the
// record length. A buffer shorter than HeaderSize()+256 is refused with
// EINVAL before reading (section 13 #3: the kernel would keep the record
// and fail forever); an RMPP message larger than b gives *NoSpaceError
// with the MAD length needed (and nothing else overwrites state: section
// 13 #4). It blocks until a record comes, the read deadline passes
// (os.ErrDeadlineExceeded) or Close (os.ErrClosed).
func (p *Port) Read(b []byte) (int, error) {
	if len(b) < p.hdr+MADSize {
		return 0, fmt.Errorf("umad: %s: read: buffer of %d bytes is less than header + one MAD (%d): %w",
			p.path, len(b), p.hdr+MADSize, syscall.EINVAL)
	}
	n, err := p.dev.Read(b)
	if errors.Is(err, syscall.ENOSPC) {
		need := int(ne.Uint32(b[16:])) - p.hdr
		return 0, &NoSpaceError{Path: p.path, Need: need}
	}
	if err != nil {
		return 0, fmt.Errorf("umad: %s: read: %w", p.path, err)
	}
	return n, nil
}

// Recv reads the next record, growing the Port's buffer on ENOSPC until
// the whole message fits, decodes the header into h and appends the MAD
// (or the 24-byte MAD header of a timed-out send) to dst[:0].
func (p *Port) Recv(h *Header, dst []byte) ([]byte, error) {
	if len(p.rbuf) < p.hdr+MADSize {
		p.rbuf = make([]byte, p.hdr+MADSize)
	}
	for {
		n, err := p.Read(p.rbuf)
		var ns *NoSpaceError
		if errors.As(err, &ns) {
			want := p.hdr + ns.Need
			if want <= len(p.rbuf) {
				return dst, fmt.Errorf("umad: %s: read: ENOSPC for %d bytes with a %d-byte buffer: %w", p.path, want, len(p.rbuf), syscall.EIO)
			}
			p.rbuf = make([]byte, want)
			continue
		}
		if err != nil {
			return dst, err
		}
		if n < p.hdr {
			return dst, fmt.Errorf("umad: %s: read: record of %d bytes is shorter than the header: %w", p.path, n, syscall.EIO)
		}
		h.Decode(p.rbuf, p.hdr)
		return append(dst[:0], p.rbuf[p.hdr:n]...), nil
	}
}

// SetReadDeadline bounds Recv, Read and Poll, as net.Conn's.
func (p *Port) SetReadDeadline(t time.Time) error { return p.dev.SetReadDeadline(t) }

// Poll is umad_poll: it waits up to timeout (negative: forever) for a
// record. It returns nil when one is ready, an error wrapping
// syscall.ETIMEDOUT when none came, and one wrapping syscall.EIO when the
// device reports an error condition (agents dead), unlike umad_poll,
// which returns 0 for any revents (section 13 #6).
func (p *Port) Poll(timeout time.Duration) error {
	var dl time.Time
	if timeout >= 0 {
		dl = time.Now().Add(timeout)
	}
	if err := p.dev.SetReadDeadline(dl); err != nil {
		return fmt.Errorf("umad: %s: poll: %w", p.path, err)
	}
	defer p.dev.SetReadDeadline(time.Time{})
	ev, err := p.dev.Poll()
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return fmt.Errorf("umad: %s: poll: nothing received within %v: %w", p.path, timeout, syscall.ETIMEDOUT)
	case err != nil:
		return fmt.Errorf("umad: %s: poll: %w", p.path, err)
	case ev&PollErr != 0:
		return fmt.Errorf("umad: %s: poll: device error (port removed?): %w", p.path, syscall.EIO)
	}
	return nil
}
