// Package pair makes one fabric.Transport of a planarized port's two
// sides, as libibmad's mad_rpc_open_port2 does with an ibmad_ports_pair:
// agents of the SMP classes (0x01 LID-routed, 0x81 directed route) are
// registered on the SMI side's Transport, every other class (and
// send-only class 0) on the GSI side's, so SMPs leave through the SMI
// device and PerfMgt, SA, CC and vendor MADs through the GSI device.
// Agent ids are the pair's own (0..fabric.MaxAgents-1, one table for both
// sides); Recv returns what either side receives.
//
// # Concurrency
//
// A Transport is safe for concurrent use as fabric.Transport says. It
// runs one goroutine per side, reading that side's Recv, from New until
// Close.
//
// # Ownership
//
// The Transport owns both sides and closes them on Close.
package pair

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/ibscript/ibscript/fabric"
)

// side indexes Transport.sides.
const (
	smi = 0
	gsi = 1
)

// slot is one agent of the pair: the side it lives on and its id there.
type slot struct {
	used bool
	side int
	id   fabric.AgentID
}

// item is one completion read from a side, or that side's Recv error.
type item struct {
	p   fabric.Packet
	err error
}

// Transport is a planarized port's SMI and GSI sides as one Transport.
type Transport struct {
	sides [2]fabric.Transport
	attr  fabric.PortAttr
	caps  fabric.Caps

	ch      chan item // from the pumps to Recv
	done    chan struct{}
	gone    chan struct{} // closed when a side was closed under the pair
	goneErr error         // that side's Recv error; set before gone closes
	goneMu  sync.Once
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	handler atomic.Pointer[func(*fabric.Packet)]
	closeMu sync.Once
	rmu     sync.Mutex // serializes Recv

	mu     sync.Mutex // guards the fields below; held across a side's Register
	agents [fabric.MaxAgents]slot
	back   [2][fabric.MaxAgents]fabric.AgentID // side id -> pair id + 1
	closed bool
}

var _ fabric.Transport = (*Transport)(nil)

// New makes one Transport of a planarized port's SMI side and GSI side
// (both open; New owns them). attr is what Port reports: the GSI side's
// attributes with SMIName and SMIPort naming the SMI side. Caps are the
// GSI side's (RMPP, Production, MaxWindow, Intact, NoRequests, Failed),
// with Retransmits summed over both sides when either counts them, and,
// where the GSI side has a SetHandler, one of the pair's own (handing
// over both sides' completions, from the two readers).
func New(smiSide, gsiSide fabric.Transport, attr fabric.PortAttr) *Transport {
	ctx, cancel := context.WithCancel(context.Background())
	t := &Transport{sides: [2]fabric.Transport{smiSide, gsiSide}, attr: attr,
		ch: make(chan item), done: make(chan struct{}), gone: make(chan struct{}), cancel: cancel}
	t.caps = t.makeCaps()
	for s := range t.sides {
		t.wg.Go(func() { t.pump(ctx, s) })
	}
	return t
}

func (t *Transport) makeCaps() fabric.Caps {
	c := t.sides[gsi].Caps()
	sc := t.sides[smi].Caps()
	c.RMPP = c.RMPP && sc.RMPP
	if c.Retransmits != nil || sc.Retransmits != nil {
		a, b := c.Retransmits, sc.Retransmits
		c.Retransmits = func() uint64 {
			var n uint64
			for _, f := range []func() uint64{a, b} {
				if f != nil {
					n += f()
				}
			}
			return n
		}
	}
	if c.SetHandler != nil {
		// Offered only where the GSI side offers one: a consumer that
		// reads a kernel port through Recv keeps doing so (the engine
		// queues what a handler gets in 256-byte buffers, and the
		// kernel hands over whole RMPP messages).
		c.SetHandler = func(h func(*fabric.Packet)) {
			if h == nil {
				t.handler.Store(nil)
				return
			}
			t.handler.Store(&h)
		}
	}
	c.SetLost = nil // a side's bounces are the side's own business
	return c
}

// pump reads side s until ctx ends or the side is closed, translating
// agent ids; completions of agents no longer registered are dropped.
func (t *Transport) pump(ctx context.Context, s int) {
	var p fabric.Packet
	for {
		p.Data = p.Data[:0]
		err := t.sides[s].Recv(ctx, &p)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			t.mu.Lock()
			id, ok := fabric.AgentID(-1), p.Agent >= 0 && p.Agent < fabric.MaxAgents
			if ok {
				id = t.back[s][p.Agent] - 1
			}
			t.mu.Unlock()
			if id < 0 {
				continue
			}
			p.Agent = id
			if h := t.handler.Load(); h != nil {
				(*h)(&p)
				continue
			}
		}
		if errors.Is(err, net.ErrClosed) || errors.Is(err, fabric.ErrPeerGone) {
			// The side was closed under the pair (its Fabric closed, its
			// peer gone): every Recv from now on says so, and this reader
			// ends whether or not anyone is reading.
			t.goneMu.Do(func() {
				t.goneErr = err
				close(t.gone)
			})
			return
		}
		it := item{p: p, err: err}
		if err == nil {
			it.p.Data = append([]byte(nil), p.Data...)
		}
		select {
		case t.ch <- it:
		case <-ctx.Done():
			return
		}
	}
}

// Port implements fabric.Transport.
func (t *Transport) Port() fabric.PortAttr { return t.attr }

// Caps implements fabric.Transport.
func (t *Transport) Caps() fabric.Caps { return t.caps }

func (t *Transport) errClosed(op string) error {
	return fmt.Errorf("pair: %s %s/%d: %w", op, t.attr.CAName, t.attr.PortNum, fabric.ErrPortClosed)
}

// Register implements fabric.Transport: the SMP classes on the SMI side,
// the others on the GSI side.
func (t *Transport) Register(ctx context.Context, a fabric.Agent) (fabric.AgentID, error) {
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return -1, t.errClosed("register")
	}
	free := -1
	for i, s := range t.agents {
		if !s.used {
			free = i
			break
		}
	}
	if free < 0 {
		return -1, fmt.Errorf("pair: register %v: %w", a, fabric.ErrTooManyAgents)
	}
	s := gsi
	if fabric.SMIClass(a.Class) {
		s = smi
	}
	id, err := t.sides[s].Register(ctx, a)
	if err != nil {
		return -1, err
	}
	t.agents[free] = slot{used: true, side: s, id: id}
	t.back[s][id] = fabric.AgentID(free) + 1
	return fabric.AgentID(free), nil
}

// lookup returns the slot of agent id; t.mu must be held.
func (t *Transport) lookup(op string, id fabric.AgentID) (slot, error) {
	if t.closed {
		return slot{}, t.errClosed(op)
	}
	if id < 0 || id >= fabric.MaxAgents || !t.agents[id].used {
		return slot{}, fmt.Errorf("pair: %s agent %d: %w", op, id, fabric.ErrNoAgent)
	}
	return t.agents[id], nil
}

// Unregister implements fabric.Transport.
func (t *Transport) Unregister(ctx context.Context, id fabric.AgentID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s, err := t.lookup("unregister", id)
	if err != nil {
		return err
	}
	if err := t.sides[s.side].Unregister(ctx, s.id); err != nil {
		return err
	}
	t.agents[id] = slot{}
	t.back[s.side][s.id] = 0
	return nil
}

// Send implements fabric.Transport: p goes out on its agent's side.
func (t *Transport) Send(ctx context.Context, p *fabric.Packet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	s, err := t.lookup("send from", p.Agent)
	t.mu.Unlock()
	if err != nil {
		return err
	}
	q := *p
	q.Agent = s.id
	return t.sides[s.side].Send(ctx, &q)
}

// Recv implements fabric.Transport: the next completion of either side.
func (t *Transport) Recv(ctx context.Context, p *fabric.Packet) error {
	t.rmu.Lock()
	defer t.rmu.Unlock()
	select {
	case <-t.done:
		return t.errClosed("recv")
	default:
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case it := <-t.ch:
		if it.err != nil {
			return it.err
		}
		data := append(p.Data[:0], it.p.Data...)
		*p = it.p
		p.Data = data
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.done:
		return t.errClosed("recv")
	case <-t.gone:
		return t.goneErr
	}
}

// Close implements fabric.Transport: it closes both sides and waits for
// their readers. Idempotent.
func (t *Transport) Close() error {
	var err error
	t.closeMu.Do(func() {
		t.mu.Lock()
		t.closed = true
		t.mu.Unlock()
		close(t.done)
		t.cancel()
		err = errors.Join(t.sides[smi].Close(), t.sides[gsi].Close())
		t.wg.Wait()
	})
	return err
}
