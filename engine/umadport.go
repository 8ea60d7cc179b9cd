package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/rmppdriver"
	"github.com/ibscript/ibscript/mad"
)

// UMADPort is a port opened as umad_open_port opens one, with the seed
// man pages' calls: umad_register, umad_send, umad_recv and umad_poll.
// Errors wrap the errno the C library returns (syscall.ETIMEDOUT,
// EAGAIN, ENOSPC, EINVAL, and ENODEV from OpenUMADPort for an unknown CA
// or port; a closed port's calls EINVAL), so callers test them with
// errors.Is; EIO when the fabric's peer is gone (ibsim exited), and
// the deviations umad-abi.md section 13 decides are applied: recv checks
// the length before reading, reports ETIMEDOUT, and updates the needed
// length only on ENOSPC.
//
// A UMADPort is safe for concurrent use; like an umad fd, two goroutines
// receiving at once each get different MADs.
type UMADPort struct {
	tr fabric.Transport
	// AllowSet lets MADs with method Set out when the port is on a
	// production fabric (see Production); set it before sending.
	AllowSet bool
	// Audit, when set, is called with every MAD of method Set before it
	// is sent (Session.AuditRaw); when it fails, the Set is not sent.
	Audit func(data []byte, addr fabric.Addr) error

	production bool // the transport is on a production fabric
	closed     atomic.Bool

	mu   sync.Mutex
	held *fabric.Packet // received by Poll or a too-small Recv, not yet returned
}

// NoSpaceError is umad_recv's ENOSPC: the message needs Need bytes of
// MAD buffer and stays queued.
type NoSpaceError struct{ Need int }

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("buffer too small: the message needs %d bytes (ENOSPC)", e.Need)
}

// Is makes errors.Is(err, syscall.ENOSPC) true.
func (e *NoSpaceError) Is(target error) bool { return target == syscall.ENOSPC }

// OpenUMADPort opens a port of f as umad_open_port(ca, port) does: an
// empty ca and port 0 pick the default port. A negative port is EINVAL on
// every backend, as native/umad's Resolve refuses it (libibumad would read
// ports/-1 for a named CA, -EIO, and take any port for a NULL one).
func OpenUMADPort(ctx context.Context, f fabric.Fabric, ca string, port int) (*UMADPort, error) {
	if port < 0 {
		return nil, fmt.Errorf("open %q port %d: a port number is 0 or more: %w", ca, port, syscall.EINVAL)
	}
	tr, err := f.Open(ctx, ca, port)
	if err != nil {
		return nil, err
	}
	return NewUMADPort(tr), nil
}

// NewUMADPort wraps an open Transport; the UMADPort owns it from then on.
func NewUMADPort(tr fabric.Transport) *UMADPort {
	return &UMADPort{tr: rmppdriver.New(tr, nil), production: tr.Caps().Production}
}

// Port describes the local port, as umad_get_port.
func (p *UMADPort) Port() fabric.PortAttr { return p.tr.Port() }

// Register registers an agent as umad_register(fd, class, version, rmpp,
// mask) and returns its id. The OUI form is RegisterAgent.
func (p *UMADPort) Register(ctx context.Context, class, version, rmppVersion uint8, methods [2]uint64) (int, error) {
	return p.RegisterAgent(ctx, fabric.Agent{Class: class, Version: version, RMPPVersion: rmppVersion, Methods: methods})
}

// RegisterAgent registers an agent as umad_register2.
func (p *UMADPort) RegisterAgent(ctx context.Context, a fabric.Agent) (int, error) {
	if err := p.check("register"); err != nil {
		return -1, err
	}
	if a.RMPPVersion > 1 {
		return -1, fmt.Errorf("register class 0x%02x: rmpp_version %d: %w", a.Class, a.RMPPVersion, syscall.EINVAL)
	}
	if a.Class >= mad.ClassVendorLo && a.Class <= mad.ClassVendorHi && (a.OUI == 0 || a.OUI >= 1<<24) {
		return -1, fmt.Errorf("register class 0x%02x: vendor class needs an OUI below 2^24: %w", a.Class, syscall.EINVAL)
	}
	id, err := p.tr.Register(ctx, a)
	if err != nil {
		return -1, fmt.Errorf("register class 0x%02x: %w", a.Class, errnoOf(err))
	}
	return int(id), nil
}

// Unregister removes an agent, as umad_unregister.
func (p *UMADPort) Unregister(ctx context.Context, agent int) error {
	if err := p.check("unregister"); err != nil {
		return err
	}
	if err := p.tr.Unregister(ctx, fabric.AgentID(agent)); err != nil {
		return fmt.Errorf("unregister agent %d: %w", agent, errnoOf(err))
	}
	return nil
}

// Send sends a MAD from agent as umad_send: timeoutMS > 0 expects a
// response within that time per try, with retries more tries; 0 expects
// none; negative waits forever. A request that gets no response comes
// back through Recv with Status ETIMEDOUT.
func (p *UMADPort) Send(ctx context.Context, agent int, data []byte, addr fabric.Addr, timeoutMS, retries int) error {
	if err := p.check("send"); err != nil {
		return err
	}
	if len(data) < 36 {
		return fmt.Errorf("send: MAD of %d bytes is shorter than 36: %w", len(data), syscall.EINVAL)
	}
	if retries < 0 {
		return fmt.Errorf("send: retries %d: %w", retries, syscall.EINVAL)
	}
	if mad.MethodOf(data) == mad.MethodSet {
		if !p.AllowSet && p.production {
			return fmt.Errorf("send: %w", ErrSetRefused)
		}
		if p.Audit != nil {
			if err := p.Audit(data, addr); err != nil {
				return fmt.Errorf("send: %w", err)
			}
		}
	}
	pkt := fabric.Packet{Agent: fabric.AgentID(agent), Retries: retries, Addr: addr, Data: data}
	switch {
	case timeoutMS > 0:
		pkt.Timeout = msDuration(timeoutMS)
	case timeoutMS < 0:
		pkt.Timeout = -1
	}
	if err := p.tr.Send(ctx, &pkt); err != nil {
		return fmt.Errorf("send: %w", errnoOf(err))
	}
	return nil
}

// Poll waits up to timeoutMS (negative: forever) for a MAD to be ready,
// as umad_poll: nil when one is, an error wrapping syscall.ETIMEDOUT when
// none came, also for timeoutMS 0 (umad_poll is poll(2), which returns 0
// at once: -ETIMEDOUT, never EAGAIN).
func (p *UMADPort) Poll(ctx context.Context, timeoutMS int) error {
	if err := p.check("poll"); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.held != nil {
		return nil
	}
	pkt, err := p.recvLocked(ctx, timeoutMS)
	switch {
	case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.ETIMEDOUT):
		return fmt.Errorf("poll: no MAD within %d ms: %w", timeoutMS, syscall.ETIMEDOUT)
	case err != nil:
		return fmt.Errorf("poll: %w", errors.Unwrap(err))
	}
	p.held = pkt
	return nil
}

// Recv returns the next MAD as umad_recv does: maxLen is the caller's MAD
// buffer size and must be at least 256; a longer message fails with a
// *NoSpaceError naming the needed length and stays queued. timeoutMS 0
// does not wait (syscall.EAGAIN when nothing is there), negative waits
// forever, positive waits that long (syscall.ETIMEDOUT). The returned
// Packet is the caller's; a timed-out send has Status fabric.StatusTimeout.
func (p *UMADPort) Recv(ctx context.Context, maxLen, timeoutMS int) (*fabric.Packet, error) {
	if err := p.check("recv"); err != nil {
		return nil, err
	}
	if maxLen < mad.Size {
		return nil, fmt.Errorf("recv: length %d is less than one MAD (256): %w", maxLen, syscall.EINVAL)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pkt := p.held
	if pkt == nil {
		var err error
		if pkt, err = p.recvLocked(ctx, timeoutMS); err != nil {
			return nil, err
		}
	}
	if len(pkt.Data) > maxLen {
		p.held = pkt
		return nil, fmt.Errorf("recv: %w", &NoSpaceError{Need: len(pkt.Data)})
	}
	p.held = nil
	return pkt, nil
}

func (p *UMADPort) recvLocked(caller context.Context, timeoutMS int) (*fabric.Packet, error) {
	ctx, cancel := caller, context.CancelFunc(nil)
	switch {
	case timeoutMS == 0:
		ctx, cancel = context.WithTimeout(ctx, 0)
	case timeoutMS > 0:
		ctx, cancel = context.WithTimeout(ctx, msDuration(timeoutMS))
	default:
		ctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	pkt := &fabric.Packet{Data: make([]byte, 0, mad.Size)}
	err := p.tr.Recv(ctx, pkt)
	switch {
	case err == nil:
		return pkt, nil
	case caller.Err() != nil: // the caller's context ended, not timeout_ms
		return nil, fmt.Errorf("recv: %w", caller.Err())
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil && timeoutMS == 0:
		return nil, fmt.Errorf("recv: nothing ready: %w", syscall.EAGAIN)
	case errors.Is(err, context.DeadlineExceeded):
		return nil, fmt.Errorf("recv: no MAD within %d ms: %w", timeoutMS, syscall.ETIMEDOUT)
	}
	return nil, fmt.Errorf("recv: %w", errnoOf(err))
}

// maxTimeoutMS is the longest timeout libibumad's calls can be given:
// timeout_ms is a C int.
const maxTimeoutMS = math.MaxInt32

// msDuration is a positive timeout in milliseconds as a Duration, a longer
// one than a C int holds taken as maxTimeoutMS (24.8 days): a script's
// timeout of 1e18 ms waits, where multiplying it out overflowed into a
// negative Duration that timed out at once.
func msDuration(ms int) time.Duration {
	return time.Duration(min(ms, maxTimeoutMS)) * time.Millisecond
}

// Close closes the port, as umad_close_port. Every later call fails with
// an error wrapping syscall.EINVAL (fabric.ErrPortClosed), as libibumad's
// calls on a closed port handle return -EINVAL.
func (p *UMADPort) Close() error {
	p.closed.Store(true)
	return p.tr.Close()
}

// check is the "invalid port handle" test of every call.
func (p *UMADPort) check(op string) error {
	if p.closed.Load() {
		return fmt.Errorf("%s: %w", op, fabric.ErrPortClosed)
	}
	return nil
}

// errnoOf maps the transport's sentinel errors to the errno libibumad's
// callers see, keeping the original in the chain.
func errnoOf(err error) error {
	switch {
	case errors.Is(err, fabric.ErrInvalid), errors.Is(err, fabric.ErrMethodInUse), errors.Is(err, fabric.ErrNoAgent):
		return &errnoError{err, syscall.EINVAL}
	case errors.Is(err, fabric.ErrTooManyAgents):
		return &errnoError{err, syscall.ENOMEM}
	case errors.Is(err, fabric.ErrPeerGone):
		// The seed pages' "-EIO send (receive, poll) operation failed".
		return &errnoError{err, syscall.EIO}
	}
	return err
}

// errnoError is an error that also matches the errno a C caller sees.
type errnoError struct {
	err   error
	errno syscall.Errno
}

func (e *errnoError) Error() string   { return e.err.Error() }
func (e *errnoError) Unwrap() []error { return []error{e.err, e.errno} }
