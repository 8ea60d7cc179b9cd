package record

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/ibscript/ibscript/fabric"
)

// Fabric records every port opened through it into the recording of the
// Recorder it was made from, as transports 1, 2, ... (see the package
// doc), so the ports a script opens itself and the RDMA CM's are in the
// recording with the session's.
type Fabric struct {
	fab fabric.Fabric
	s   *sink

	mu     sync.Mutex // guards the fields below
	open   []*Recorder
	closed bool
}

// Fabric returns a Fabric on f that records into r's recording. The
// recording stays open until the Fabric is closed too.
func (r *Recorder) Fabric(f fabric.Fabric) *Fabric {
	r.s.hold()
	return &Fabric{fab: f, s: r.s}
}

// Ports lists the wrapped Fabric's ports.
func (f *Fabric) Ports(ctx context.Context) ([]fabric.PortAttr, error) { return f.fab.Ports(ctx) }

// Open opens a port of the wrapped Fabric and records its traffic.
func (f *Fabric) Open(ctx context.Context, ca string, port int) (fabric.Transport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, fmt.Errorf("record: open %q port %d: fabric closed", ca, port)
	}
	tr, err := f.fab.Open(ctx, ca, port)
	if err != nil {
		return nil, err
	}
	f.s.mu.Lock()
	n := f.s.nextTr
	f.s.nextTr++
	f.s.refs++
	f.s.mu.Unlock()
	r := &Recorder{tr: tr, s: f.s, n: n, fab: f}
	a := tr.Port()
	e := Event{Op: OpOpen, Port: &a}
	e.RMPP, e.Intact, e.NoTimeouts = tr.Caps().RMPP, isIntact(tr.Caps()), tr.Caps().NoTimeouts
	r.log(e)
	f.open = append(f.open, r)
	return r, nil
}

func (f *Fabric) forget(r *Recorder) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, o := range f.open {
		if o == r {
			f.open = append(f.open[:i], f.open[i+1:]...)
			return
		}
	}
}

// OpenCM is the wrapped Fabric's platform RDMA CM when it has one (the
// kernel's: its MADs never pass through ibscript, so they are not
// recorded); otherwise an error wrapping errors.ErrUnsupported, and the
// user-space IB CM (rdmacm/ibcm) runs on ports opened through f, which
// are recorded.
func (f *Fabric) OpenCM() (fabric.CMDevice, error) {
	if p, ok := f.fab.(fabric.CMProvider); ok {
		return p.OpenCM()
	}
	return nil, fmt.Errorf("record: %w", errors.ErrUnsupported)
}

// String describes the wrapped Fabric when it describes itself.
func (f *Fabric) String() string {
	if s, ok := f.fab.(fmt.Stringer); ok {
		return s.String()
	}
	return "recorded fabric"
}

// Close closes the ports opened through f (each one's close is recorded),
// then the wrapped Fabric, and lets go of the recording.
func (f *Fabric) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	open := f.open
	f.open = nil
	f.mu.Unlock()
	var errs []error
	for _, r := range open {
		errs = append(errs, r.Close())
	}
	errs = append(errs, f.fab.Close(), f.s.release())
	return errors.Join(errs...)
}
