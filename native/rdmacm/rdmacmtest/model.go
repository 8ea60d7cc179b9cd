// Package rdmacmtest models the kernel's rdma_cm device at the fd level
// (rdmacm-abi.md sections 2, 4, 6 and 8), for tests of native/rdmacm
// without hardware: a global id table, one event FIFO per fd, the
// events_reported counters, DESTROY_ID's purge, MIGRATE_ID's move, and the
// errno of every rule. The model also plays the kernel's CM between the
// ids of one Kernel over AF_IB and IP addresses (cm.go): BIND, RESOLVE_ADDR,
// RESOLVE_ROUTE, LISTEN, CONNECT, ACCEPT, REJECT, DISCONNECT, QUERY
// (addresses) and the teardown of DESTROY_ID and close. Events can also be
// injected with Kernel.Inject and Kernel.Request, as the kernel's CM would
// generate them.
//
// A Kernel and its fds are safe for concurrent use.
package rdmacmtest

import (
	"context"
	"net"
	"sync"
	"syscall"

	"github.com/ibscript/ibscript/native/rdmacm"
)

// Kernel is the model's global state.
type Kernel struct {
	mu     sync.Mutex
	nextID uint32
	nextFd int
	ids    map[uint32]*kid
	fds    map[int]*FD
	gids   [][16]byte // the ports' GIDs (AddGID)
	ips    []hostIP   // the netdevs' IP addresses (AddIP), in order
	// nextPort numbers ephemeral ports.
	nextPort int
	// waiters counts the goroutines blocked in an fd's Wait.
	waiters int
}

type kid struct {
	owner    *FD
	uid      uint64
	ps       uint16
	reported uint32
	backlog  int
	parent   uint32 // the listener of an id made by a request
	qpType   uint8
	st       state
	src, dst ibAddr
	peer     uint32 // the other end of the connection (0: none)
	// afonly: an AF_INET id (IPv4 only), as cma_bind_addr sets it.
	afonly bool
}

// FD is one open rdma_cm fd; it implements rdmacm.Dev.
type FD struct {
	k      *Kernel
	fd     int
	q      []queued
	wake   chan struct{}
	closed bool
}

// New returns an empty kernel.
func New() *Kernel {
	return &Kernel{ids: map[uint32]*kid{}, fds: map[int]*FD{}, nextFd: 3}
}

// Open opens a new fd, as open("/dev/infiniband/rdma_cm").
func (k *Kernel) Open() *FD {
	k.mu.Lock()
	defer k.mu.Unlock()
	f := &FD{k: k, fd: k.nextFd, wake: make(chan struct{})}
	k.nextFd++
	k.fds[f.fd] = f
	return f
}

// Inject queues event ev (type, status, param) for id on the fd that owns
// it now, as the kernel's CM does; false when the id does not exist.
func (k *Kernel) Inject(id uint32, ev rdmacm.Event) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	i, ok := k.ids[id]
	if !ok {
		return false
	}
	ev.ID, ev.UID = id, i.uid
	i.owner.push(ev)
	return true
}

// EventConnectRequest is RDMA_CM_EVENT_CONNECT_REQUEST.
const EventConnectRequest = 4

// Request is an incoming connection request on listener: the kernel makes
// a new id owned by the listener's fd (uid 0 until ACCEPT) and queues
// CONNECT_REQUEST carrying the listener's uid and the new id, taking one
// backlog credit. With no credit left (or no such listener) it refuses:
// 0, false.
func (k *Kernel) Request(listener uint32, ev rdmacm.Event) (uint32, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	l, ok := k.ids[listener]
	if !ok || l.st != sListen || l.backlog <= 0 {
		return 0, false
	}
	l.backlog--
	k.nextID++
	k.ids[k.nextID] = &kid{owner: l.owner, ps: l.ps, qpType: l.qpType, parent: listener, st: sReqRcvd}
	ev.UID, ev.ID, ev.Event = l.uid, k.nextID, EventConnectRequest
	l.owner.pushq(queued{ev: ev, ctx: listener, child: k.nextID})
	return k.nextID, true
}

// Owner returns the fd number that owns id, or -1.
func (k *Kernel) Owner(id uint32) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	if i, ok := k.ids[id]; ok {
		return i.owner.fd
	}
	return -1
}

// queued is an event in an fd's queue: ctx is the id it belongs to (for a
// CONNECT_REQUEST the listener, which counts it), child the new id of a
// request.
type queued struct {
	ev    rdmacm.Event
	ctx   uint32
	child uint32
}

func (f *FD) push(ev rdmacm.Event) { f.pushq(queued{ev: ev, ctx: ev.ID}) }

func (f *FD) pushq(q queued) {
	f.q = append(f.q, q)
	close(f.wake)
	f.wake = make(chan struct{})
}

// Fd returns the descriptor number.
func (f *FD) Fd() int { return f.fd }

// Close destroys every id the fd owns.
func (f *FD) Close() error {
	k := f.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if f.closed {
		return nil
	}
	f.closed = true
	close(f.wake)
	for h, i := range k.ids {
		if i.owner == f {
			k.teardownLocked(i)
			delete(k.ids, h)
		}
	}
	delete(k.fds, f.fd)
	return nil
}

// Wait blocks until an event is queued, ctx ends or the fd closes.
func (f *FD) Wait(ctx context.Context) error {
	for {
		f.k.mu.Lock()
		n, closed, wake := len(f.q), f.closed, f.wake
		f.k.mu.Unlock()
		switch {
		case closed:
			return net.ErrClosed
		case n > 0:
			return nil
		}
		f.k.mu.Lock()
		f.k.waiters++
		f.k.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
		}
		f.k.mu.Lock()
		f.k.waiters--
		f.k.mu.Unlock()
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}

// Waiters returns the number of goroutines blocked waiting for an event
// on any fd of k, so tests can tell that a call has blocked.
func (k *Kernel) Waiters() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.waiters
}

// Exec runs one command by the kernel's rules (ucma.c ucma_write and the
// handlers), writing the response into resp.
func (f *FD) Exec(c rdmacm.Command, resp []byte) error {
	k := f.k
	k.mu.Lock()
	defer k.mu.Unlock()
	if f.closed {
		return syscall.EBADF
	}
	if len(c.B) < rdmacm.HeaderSize || rdmacm.HeaderSize+c.In() > len(c.B) {
		return syscall.EINVAL
	}
	cmd, out, body := c.Cmd(), c.Out(), c.Body()
	if n, ok := cmdSizes[cmd]; ok && len(body) < n {
		// The kernel copies sizeof(cmd) from the write buffer; the model
		// refuses a write too short to hold it rather than read past it.
		return syscall.EINVAL
	}
	switch cmd {
	case rdmacm.CmdCreateID:
		return k.createID(f, out, body, resp)
	case rdmacm.CmdDestroyID:
		return k.destroyID(f, out, body, resp)
	case rdmacm.CmdGetEvent:
		return k.getEvent(f, out, resp)
	case rdmacm.CmdMigrateID:
		return k.migrateID(f, body, resp)
	case rdmacm.CmdListen:
		return k.listen(f, body)
	case rdmacm.CmdBind:
		return k.bind(f, body)
	case rdmacm.CmdResolveAddr:
		return k.resolveAddr(f, body)
	case rdmacm.CmdResolveRoute:
		return k.resolveRoute(f, body)
	case rdmacm.CmdConnect:
		return k.connect(f, body)
	case rdmacm.CmdAccept:
		return k.accept(f, body)
	case rdmacm.CmdReject:
		return k.reject(f, body)
	case rdmacm.CmdDisconnect:
		return k.disconnect(f, body)
	case rdmacm.CmdQuery:
		return k.query(f, out, body, resp)
	case rdmacm.CmdGetOption:
		return syscall.ENOSYS
	default:
		if cmd > rdmacm.CmdWriteCMEvent {
			return syscall.EINVAL
		}
		return syscall.ENOSYS // defined, not modelled
	}
}

// createID is RDMA_USER_CM_CMD_CREATE_ID: a new id of the port space and
// QP type asked (UD for UDP and IPoIB, RC for TCP, as ucma_get_qp_type), its
// number in resp.
func (k *Kernel) createID(f *FD, out int, body, resp []byte) error {
	ne := nativeEndian
	if out < rdmacm.RespIDSize {
		return syscall.ENOSPC
	}
	ps := ne.Uint16(body[16:])
	switch ps {
	case rdmacm.PSIPoIB, rdmacm.PSTCP, rdmacm.PSUDP, rdmacm.PSIB:
	default:
		return syscall.EINVAL
	}
	qp := body[18]
	if ps == rdmacm.PSUDP || ps == rdmacm.PSIPoIB {
		qp = rdmacm.QPTypeUD // ucma_get_qp_type
	} else if ps == rdmacm.PSTCP {
		qp = rdmacm.QPTypeRC
	}
	k.nextID++
	k.ids[k.nextID] = &kid{owner: f, uid: ne.Uint64(body[0:]), ps: ps, qpType: qp}
	ne.PutUint32(resp, k.nextID)
	return nil
}

// destroyID is RDMA_USER_CM_CMD_DESTROY_ID: the id is torn down with its
// unread events (and the new ids of unread requests, rejecting their
// peers); resp gets the number of events reported.
func (k *Kernel) destroyID(f *FD, out int, body, resp []byte) error {
	ne := nativeEndian
	if out < rdmacm.RespIDSize {
		return syscall.ENOSPC
	}
	i, err := k.lookup(f, ne.Uint32(body[8:]))
	if err != nil {
		return err
	}
	id := ne.Uint32(body[8:])
	k.teardownLocked(i)
	delete(k.ids, id)
	var keep []queued
	for _, q := range f.q {
		switch {
		case q.ctx == id && q.child != 0:
			// An unread request's new id goes too, rejecting its peer.
			if c, ok := k.ids[q.child]; ok {
				k.teardownLocked(c)
			}
			delete(k.ids, q.child)
		case q.ctx == id:
		default:
			keep = append(keep, q)
		}
	}
	f.q = keep
	ne.PutUint32(resp, i.reported)
	return nil
}

// getEvent is RDMA_USER_CM_CMD_GET_EVENT: the fd's oldest event, EAGAIN
// when none (the model's fds are non-blocking).
func (k *Kernel) getEvent(f *FD, out int, resp []byte) error {
	if out < rdmacm.EventRespMinSize {
		return syscall.ENOSPC
	}
	if len(f.q) == 0 {
		return syscall.EAGAIN // the model's fds are non-blocking
	}
	q := f.q[0]
	f.q = f.q[1:]
	if i, ok := k.ids[q.ctx]; ok {
		i.reported++
		if q.child != 0 {
			i.backlog++ // the credit comes back
		}
	}
	full := make([]byte, rdmacm.EventRespSize)
	rdmacm.PutEvent(full, &q.ev)
	copy(resp, full[:min(out, rdmacm.EventRespSize)])
	return nil
}

// migrateID is RDMA_USER_CM_CMD_MIGRATE_ID: the id and its unread events
// (with their requests' new ids) move from the fd named to f.
func (k *Kernel) migrateID(f *FD, body, resp []byte) error {
	ne := nativeEndian
	from, ok := k.fds[int(ne.Uint32(body[12:]))]
	if !ok {
		return syscall.ENOENT
	}
	id := ne.Uint32(body[8:])
	i, err := k.lookup(from, id)
	if err != nil {
		return err
	}
	var keep, moved []queued
	for _, q := range from.q {
		if q.ctx == id {
			moved = append(moved, q)
			if c, ok := k.ids[q.child]; ok {
				c.owner = f // a request's new id moves with it
			}
		} else {
			keep = append(keep, q)
		}
	}
	from.q = keep
	i.owner = f
	for _, q := range moved {
		f.pushq(q)
	}
	if len(resp) >= rdmacm.RespIDSize {
		ne.PutUint32(resp, i.reported) // no out check: always 4 bytes
	}
	return nil
}

// listen is RDMA_USER_CM_CMD_LISTEN: an idle id is bound to the wildcard
// first; the backlog is capped at 1024 as the kernel does.
func (k *Kernel) listen(f *FD, body []byte) error {
	ne := nativeEndian
	i, err := k.lookup(f, ne.Uint32(body[0:]))
	if err != nil {
		return err
	}
	b := int(int32(ne.Uint32(body[4:])))
	if b <= 0 || b > 1024 {
		b = 1024
	}
	if i.st == sIdle {
		// rdma_listen binds an idle id to the wildcard address first
		// (the kernel's is AF_INET; the model's is AF_IB).
		if err := k.bindLocked(ne.Uint32(body[0:]), i, rdmacm.SockaddrIB([16]byte{}, 0xffff, 0)); err != nil {
			return err
		}
	}
	if i.st != sBound && i.st != sListen {
		return syscall.EINVAL
	}
	i.st, i.backlog = sListen, b
	return nil
}

// bind is RDMA_USER_CM_CMD_BIND.
func (k *Kernel) bind(f *FD, body []byte) error {
	ne := nativeEndian
	id := ne.Uint32(body[0:])
	i, err := k.lookup(f, id)
	if err != nil {
		return err
	}
	n := int(ne.Uint16(body[4:]))
	if n > rdmacm.SockaddrStoreSize {
		return syscall.EINVAL
	}
	return k.bindLocked(id, i, body[8:8+n])
}

// lookup applies the ownership rule: unknown ENOENT, another fd's EINVAL.
func (k *Kernel) lookup(f *FD, id uint32) (*kid, error) {
	i, ok := k.ids[id]
	if !ok {
		return nil, syscall.ENOENT
	}
	if i.owner != f {
		return nil, syscall.EINVAL
	}
	return i, nil
}

// cmdSizes are the struct sizes of the commands the model decodes.
var cmdSizes = map[uint32]int{
	rdmacm.CmdCreateID: rdmacm.CreateIDSize, rdmacm.CmdDestroyID: rdmacm.DestroyIDSize,
	rdmacm.CmdGetEvent: rdmacm.GetEventSize, rdmacm.CmdMigrateID: rdmacm.MigrateIDSize,
	rdmacm.CmdListen: rdmacm.ListenSize, rdmacm.CmdBind: rdmacm.BindSize,
	rdmacm.CmdResolveAddr: rdmacm.ResolveAddrSize, rdmacm.CmdResolveRoute: rdmacm.ResolveRouteSize,
	rdmacm.CmdConnect: rdmacm.ConnParamSize + 8, rdmacm.CmdAccept: rdmacm.ConnParamSize + 16,
	rdmacm.CmdReject: rdmacm.RejectSize, rdmacm.CmdDisconnect: rdmacm.DisconnectSize,
	rdmacm.CmdQuery: rdmacm.QuerySize,
}
