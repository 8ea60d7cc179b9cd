// Package umadtest is an in-memory model of the kernel's umad behaviour
// at the file-descriptor level (drivers/infiniband/core/user_mad.c and the
// MAD layer under it, as umad-abi.md sections 6-10 describe them). An FD
// implements umad.Dev, so native/umad and fabric/kernel run against it
// exactly as against /dev/infiniband/umadN.
//
// # What is modelled
//
//   - 32 agent slots per fd, lowest free id; a kernel-global 24-bit
//     hi_tid per agent; registration checks (qpn, class ranges, class
//     version, vendor OUI, rmpp_version and RMPP classes, USER_RMPP on a
//     send-only agent, unknown REGISTER_AGENT2 flags with the supported
//     mask written back) and method ownership exclusive across every fd
//     of a port and the kernel's own ib_cm agent, which owns CM Send
//     (EINVAL; Options.NoIBCM leaves it out);
//   - ENABLE_PKEY only before the first registration; a first
//     REGISTER_AGENT2 also switches the fd to the 64-byte header, a first
//     REGISTER_AGENT freezes the 56-byte one;
//   - write validation in the kernel's order: count < hdr+36 EINVAL, id
//     >= 32 EINVAL, empty slot EIO, non-RMPP MAD over 256 bytes EINVAL,
//     TID rewrite of requests (bits 63..32 = hi_tid), duplicate
//     outstanding (TID, class) EINVAL;
//   - per-attempt timeouts and retries on an injectable clock, timeouts
//     with the sign bit set never fire, timeout 0 expects nothing and a
//     late response is dropped; responses are matched by hi_tid, TID and
//     class;
//   - timeout records: the header as written with status 110, followed
//     by the 24-byte MAD header with the rewritten TID, as the kernel
//     queues them (read returns hdr+24);
//   - a FIFO receive queue (200000 received MADs at most), EINVAL on a
//     read buffer smaller than the head record (which stays queued),
//     ENOSPC with the needed length for a longer message;
//   - poll masks (POLLOUT always, POLLIN when queued, only POLLERR when
//     the agents are dead), and dead agents after Port.Remove (read and
//     write EIO, registration EPIPE);
//   - Get and Set requests no agent owns are answered with a GetResp of
//     status 0x000C.
//
// Not modelled: RMPP segmentation (an RMPP message is delivered as one
// record, which is enough for the ENOSPC path), directed-route hop
// processing, SMA/PMA first refusal, P_Key checks, address handles.
//
// # Concurrency
//
// A Kernel and its FDs are safe for concurrent use; one mutex guards the
// whole model. Blocking reads wait on channels, so they are durable
// inside a testing/synctest bubble.
package umadtest

import (
	"encoding/binary"
	"io/fs"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/native/umad"
)

// QueueLimit is the number of received MADs one fd queues.
const QueueLimit = 200000

// Options configure a Kernel. A nil *Options means defaults.
type Options struct {
	// AfterFunc schedules the kernel's response timeouts; nil means
	// time.AfterFunc. It returns a function stopping the timer.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// NoPKey makes ENABLE_PKEY and REGISTER_AGENT2 fail with ENOTTY, as
	// kernels before 2.6.33 do.
	NoPKey bool
	// NoIBCM models a kernel without ib_cm loaded. By default ib_cm is
	// there (rdma_cm needs it), and, as on the real kernel, its agent
	// owns the CM class's Send (class 0x07, version 2, method 0x03) on
	// every port: a user agent asking for it gets EINVAL (dmesg "Method 3
	// already in use"), which the Soft-RoCE stage found (TestRoCE).
	NoIBCM bool
}

// Kernel is a set of local ports connected by one network.
type Kernel struct {
	afterFunc func(time.Duration, func()) func() bool
	noPKey    bool
	noIBCM    bool

	mu      sync.Mutex // guards everything below and all Port and FD state
	ports   []*Port
	nextHi  uint32
	devices int
}

// New returns an empty Kernel.
func New(o *Options) *Kernel {
	k := &Kernel{nextHi: 0}
	k.afterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	if o != nil {
		if o.AfterFunc != nil {
			k.afterFunc = o.AfterFunc
		}
		k.noPKey = o.NoPKey
		k.noIBCM = o.NoIBCM
	}
	return k
}

// Port is one local port; its fds share method ownership.
type Port struct {
	k    *Kernel
	lid  uint16
	fds  []*FD
	dead bool
	isSM bool
	roce bool       // link layer Ethernet: no QP0, a GRH on every MAD, routed by GID
	gids [][16]byte // the GID table by index
	// uplink, when set (SetUplink), takes every MAD written on the port
	// instead of the kernel's network.
	uplink func(dst uint16, src Addr, m []byte)
}

// SetUplink cables the port to a network outside the kernel: every MAD
// written on it (and each retry) goes to up, with the destination LID
// (0xffff for a directed-route SMP) and the source address, instead of
// to the kernel's other ports; what the outside answers comes back
// through Inject. up runs under the kernel's lock: it must hand m on
// (it is its own copy) without calling into the kernel. A test cables a
// port to a simulated fabric this way, whose SMAs then answer the
// host's SMPs as a real port's link would.
func (p *Port) SetUplink(up func(dst uint16, src Addr, m []byte)) {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	p.uplink = up
}

// send puts m, written on p, on the network: p's uplink, else the
// kernel's ports. k.mu is held.
func (p *Port) send(dst uint16, src Addr, m []byte) {
	if p.uplink != nil {
		p.uplink(dst, src, append([]byte(nil), m...))
		return
	}
	p.k.route(dst, src, m)
}

// SetGIDs gives the port its GID table (by index) and says whether it is a
// RoCE port (link layer Ethernet): there the kernel has no QP0
// (registering for class 0x01 or 0x81 fails EPROTONOSUPPORT), a MAD
// without a GRH fails write() with EINVAL, and MADs go to the port
// holding the GRH's destination GID. On an InfiniBand port a MAD with a
// GRH is routed by LID and dropped when the destination port lacks the
// GID.
func (p *Port) SetGIDs(roce bool, gids ...[16]byte) {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	p.roce, p.gids = roce, append([][16]byte(nil), gids...)
}

func (p *Port) gidIndex(g [16]byte) (int, bool) {
	for i, x := range p.gids {
		if x == g && x != ([16]byte{}) {
			return i, true
		}
	}
	return 0, false
}

// ipv4Mapped reports whether g is an IPv4-mapped GID (::ffff:a.b.c.d).
func ipv4Mapped(g [16]byte) bool {
	return g[10] == 0xff && g[11] == 0xff && [10]byte(g[:10]) == [10]byte{}
}

// AddPort adds a port with the given LID; MADs sent to that LID reach it.
func (k *Kernel) AddPort(lid uint16) *Port {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := &Port{k: k, lid: lid}
	k.ports = append(k.ports, p)
	return p
}

// LID is the port's LID.
func (p *Port) LID() uint16 { return p.lid }

// Remove unplugs the port: every fd's agents are dead.
func (p *Port) Remove() {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	p.dead = true
	for _, f := range p.fds {
		for _, s := range f.sends {
			s.stop()
		}
		f.sends = nil
		f.wake()
	}
}

// Open opens a new fd on the port, as open("/dev/infiniband/umadN").
func (p *Port) Open(path string) (*FD, error) {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	if p.dead {
		return nil, &fs.PathError{Op: "open", Path: path, Err: syscall.ENXIO}
	}
	f := &FD{port: p, path: path, hdr: umad.HeaderSizeOld, notify: make(chan struct{}),
		dlChanged: make(chan struct{}), closedCh: make(chan struct{})}
	p.fds = append(p.fds, f)
	return f, nil
}

type agent struct {
	id      int
	hiTID   uint32
	qpn     uint8
	class   uint8
	version uint8
	oui     uint32
	methods [2]uint64
	rmpp    uint8
	flags   uint32
}

type record struct {
	hdr     umad.Header
	data    []byte
	timeout bool
}

type send struct {
	fd      *FD
	agent   *agent
	tid     uint64
	class   uint8
	dst     uint16
	hdr     umad.Header
	mad     []byte
	timeout time.Duration
	forever bool
	retries uint32
	stop    func() bool
}

// FD is one open file of a Port; it implements umad.Dev.
type FD struct {
	port *Port
	path string

	hdr        int // header size of this fd
	registered bool
	agents     [umad.MaxAgents]*agent
	queue      []record
	received   int // received MADs in queue (limit applies to these)
	sends      []*send
	closed     bool
	deadline   time.Time
	notify     chan struct{} // closed and replaced when the queue or dead state changes
	dlChanged  chan struct{} // closed and replaced by SetReadDeadline
	closedCh   chan struct{}
	// Writes counts successful writes (for tests).
	Writes int
}

var _ umad.Dev = (*FD)(nil)

func (f *FD) wake() {
	close(f.notify)
	f.notify = make(chan struct{})
}

func (f *FD) errno(op string, e syscall.Errno) error {
	return &fs.PathError{Op: op, Path: f.path, Err: e}
}

// HeaderSize is the fd's current header mode.
func (f *FD) HeaderSize() int {
	f.port.k.mu.Lock()
	defer f.port.k.mu.Unlock()
	return f.hdr
}

// lockOpen takes the kernel's lock for an op on f and returns the
// kernel, locked; on an fd closed already it is op's os.ErrClosed, the
// lock not held.
func (f *FD) lockOpen(op string) (*Kernel, error) {
	k := f.port.k
	k.mu.Lock()
	if f.closed {
		k.mu.Unlock()
		return nil, &fs.PathError{Op: op, Path: f.path, Err: os.ErrClosed}
	}
	return k, nil
}

// Ioctl implements umad.Dev.
func (f *FD) Ioctl(req uint32, arg []byte) error {
	k, err := f.lockOpen("ioctl")
	if err != nil {
		return err
	}
	defer k.mu.Unlock()
	switch req {
	case umad.Req().EnablePKey:
		if k.noPKey {
			return f.errno("ioctl", syscall.ENOTTY)
		}
		if f.registered {
			return f.errno("ioctl", syscall.EINVAL)
		}
		f.hdr = umad.HeaderSize
		return nil
	case umad.Req().RegisterAgent:
		if len(arg) < umad.RegReqSize {
			return f.errno("ioctl", syscall.EFAULT)
		}
		var r umad.RegReq
		r.Unmarshal(arg)
		a := &agent{qpn: r.QPN, class: r.Class, version: r.Version, oui: r.OUI, methods: r.Methods, rmpp: r.RMPPVersion}
		id, err := f.register(a, uint32(r.QPN), nil, nil)
		if err != nil {
			return err
		}
		f.registered = true
		binary.NativeEndian.PutUint32(arg, uint32(id))
		return nil
	case umad.Req().RegisterAgent2:
		if k.noPKey {
			return f.errno("ioctl", syscall.ENOTTY)
		}
		if len(arg) < umad.RegReq2Size {
			return f.errno("ioctl", syscall.EFAULT)
		}
		var r umad.RegReq2
		r.Unmarshal(arg)
		a := &agent{class: r.Class, version: r.Version, oui: r.OUI, methods: r.Methods, rmpp: r.RMPPVersion, flags: r.Flags}
		// ib_umad_reg_agent2 checks the flags before looking for a slot,
		// and the OUI after.
		flags := func() error {
			if r.Flags&^umad.FlagUserRMPP != 0 {
				binary.NativeEndian.PutUint32(arg[12:], umad.FlagUserRMPP)
				return f.errno("ioctl", syscall.EINVAL)
			}
			return nil
		}
		oui := func() error {
			if r.Class != 0 && r.OUI&0xff000000 != 0 {
				return f.errno("ioctl", syscall.EINVAL)
			}
			if r.Class == 0 && r.Flags&umad.FlagUserRMPP != 0 {
				return f.errno("ioctl", syscall.EINVAL)
			}
			return nil
		}
		id, err := f.register(a, r.QPN, flags, oui)
		if err != nil {
			return err
		}
		if !f.registered {
			f.hdr = umad.HeaderSize
		}
		f.registered = true
		binary.NativeEndian.PutUint32(arg, uint32(id))
		return nil
	case umad.Req().UnregisterAgent:
		if len(arg) < 4 {
			return f.errno("ioctl", syscall.EFAULT)
		}
		id := binary.NativeEndian.Uint32(arg)
		if id >= umad.MaxAgents || f.agents[id] == nil {
			return f.errno("ioctl", syscall.EINVAL)
		}
		f.unregister(int(id))
		return nil
	}
	return f.errno("ioctl", syscall.ENOTTY)
}

func rmppClass(c uint8) bool {
	return c == 0x03 || c == 0x06 || c == 0x10 || c == 0x12 || (c >= 0x30 && c <= 0x4f)
}

// classHeaderLen is ib_get_mad_data_offset: the class header a write
// must at least carry.
func classHeaderLen(c uint8) int {
	switch {
	case c == 0x03:
		return 56
	case c == 0x06 || c == 0x10 || c == 0x12:
		return 64
	case vendor2(c):
		return 40
	}
	return 24
}

func vendor2(c uint8) bool { return c >= 0x30 && c <= 0x4f }

// register checks a registration as ib_umad_reg_agent(2) and
// ib_register_mad_agent do, in their order: device gone (EPIPE), qpn,
// beforeSlot, a free slot (ENOMEM), afterSlot, then the MAD layer's
// class, RMPP, QP and method checks.
func (f *FD) register(a *agent, qpn uint32, beforeSlot, afterSlot func() error) (int, error) {
	k := f.port.k
	if f.port.dead {
		return 0, f.errno("ioctl", syscall.EPIPE)
	}
	if qpn > 1 {
		return 0, f.errno("ioctl", syscall.EINVAL)
	}
	if qpn == 0 && f.port.roce {
		return 0, f.errno("ioctl", syscall.EPROTONOSUPPORT) // no QP0 on RoCE
	}
	a.qpn = uint8(qpn)
	if beforeSlot != nil {
		if err := beforeSlot(); err != nil {
			return 0, err
		}
	}
	id := -1
	for i, s := range f.agents {
		if s == nil {
			id = i
			break
		}
	}
	if id < 0 {
		return 0, f.errno("ioctl", syscall.ENOMEM)
	}
	if afterSlot != nil {
		if err := afterSlot(); err != nil {
			return 0, err
		}
	}
	if a.rmpp > 1 {
		return 0, f.errno("ioctl", syscall.EINVAL)
	}
	if a.class != 0 {
		switch {
		case a.version >= 0x83,
			a.class >= 0x50 && a.class != 0x81,
			vendor2(a.class) && a.oui == 0,
			a.rmpp != 0 && !rmppClass(a.class),
			(a.class == 0x01 || a.class == 0x81) != (a.qpn == 0):
			return 0, f.errno("ioctl", syscall.EINVAL)
		}
		if !k.noIBCM && a.class == 0x07 && a.version == 2 && a.methods[0]&(1<<0x03) != 0 {
			return 0, f.errno("ioctl", syscall.EINVAL) // ib_cm's agent owns CM Send
		}
		for _, g := range f.port.fds {
			for _, o := range g.agents {
				if o != nil && o.class == a.class && o.version == a.version &&
					(!vendor2(a.class) || o.oui == a.oui) &&
					(o.methods[0]&a.methods[0] != 0 || o.methods[1]&a.methods[1] != 0) {
					return 0, f.errno("ioctl", syscall.EINVAL)
				}
			}
		}
	} else {
		a.methods = [2]uint64{}
	}
	k.nextHi = (k.nextHi + 1) & 0xffffff
	if k.nextHi == 0 {
		k.nextHi = 1
	}
	a.hiTID = k.nextHi
	a.id = id
	f.agents[id] = a
	return id, nil
}

func (f *FD) unregister(id int) {
	a := f.agents[id]
	keep := f.sends[:0]
	for _, s := range f.sends {
		if s.agent == a {
			s.stop()
			continue
		}
		keep = append(keep, s)
	}
	clear(f.sends[len(keep):])
	f.sends = keep
	f.agents[id] = nil
}

func isResponse(m []byte) bool { return m[3]&0x80 != 0 || m[3] == 0x07 }

// Write implements umad.Dev: one record of header + MAD.
func (f *FD) Write(b []byte) (int, error) {
	k, err := f.lockOpen("write")
	if err != nil {
		return 0, err
	}
	defer k.mu.Unlock()
	if len(b) < f.hdr+umad.MinMADWrite {
		return 0, f.errno("write", syscall.EINVAL)
	}
	var h umad.Header
	h.Decode(b, f.hdr)
	if h.Agent >= umad.MaxAgents {
		return 0, f.errno("write", syscall.EINVAL)
	}
	a := f.agents[h.Agent]
	if a == nil || f.port.dead {
		return 0, f.errno("write", syscall.EIO)
	}
	// The address handle (ib_create_ah): RoCE needs a GRH, and a GRH
	// needs a source GID at gid_index.
	if f.port.roce && !h.GRHPresent {
		return 0, f.errno("write", syscall.EINVAL)
	}
	if h.GRHPresent && (int(h.GIDIndex) >= len(f.port.gids) || f.port.gids[h.GIDIndex] == [16]byte{}) {
		return 0, f.errno("write", syscall.EINVAL)
	}
	m := append([]byte(nil), b[f.hdr:]...)
	if len(m) < classHeaderLen(m[1]) {
		return 0, f.errno("write", syscall.EINVAL)
	}
	rmppActive := rmppClass(m[1]) && a.rmpp != 0 && a.flags&umad.FlagUserRMPP == 0 && m[26]&0x01 != 0
	if !rmppActive && len(m) > umad.MADSize {
		return 0, f.errno("write", syscall.EINVAL)
	}
	if len(m) < umad.MADSize {
		m = append(m, make([]byte, umad.MADSize-len(m))...)
	}
	if rmppClass(m[1]) && a.rmpp != 0 && a.flags&umad.FlagUserRMPP == 0 && !rmppActive {
		clear(m[24:36]) // the kernel does not copy the user's RMPP header
	}
	resp := isResponse(m)
	tid := binary.BigEndian.Uint64(m[8:])
	if !resp {
		tid = uint64(a.hiTID)<<32 | tid&0xffffffff
		binary.BigEndian.PutUint64(m[8:], tid)
	}
	expect := !resp && h.TimeoutMS != 0
	if expect {
		for _, s := range f.sends {
			if s.tid == tid && s.class == m[1] {
				return 0, f.errno("write", syscall.EINVAL)
			}
		}
	}
	f.Writes++
	src := f.port.srcAddr(uint32(a.qpn), &h)
	if expect {
		s := &send{fd: f, agent: a, tid: tid, class: m[1], dst: h.LID, hdr: h, mad: m,
			timeout: time.Duration(h.TimeoutMS) * time.Millisecond, forever: int32(h.TimeoutMS) < 0,
			retries: h.Retries, stop: func() bool { return false }}
		f.sends = append(f.sends, s)
		k.arm(s)
	}
	f.port.send(h.LID, src, m)
	return len(b), nil
}

// srcAddr is where a MAD written with header h comes from: the port's
// LID, the agent's QP, and with a GRH the source GID at h.GIDIndex and
// the destination GID the network routes by.
func (p *Port) srcAddr(qpn uint32, h *umad.Header) Addr {
	a := Addr{LID: p.lid, QPN: qpn, SL: h.SL, PKeyIndex: h.PKeyIndex}
	if h.GRHPresent {
		a.GRH, a.SGID, a.DGID = true, p.gids[h.GIDIndex], h.GID
		a.TClass, a.FlowLabel = h.TrafficClass, h.FlowLabel&0xfffff
	}
	return a
}

func (k *Kernel) arm(s *send) {
	if s.forever {
		return
	}
	s.stop = k.afterFunc(s.timeout, func() { k.expire(s) })
}

func (k *Kernel) expire(s *send) {
	k.mu.Lock()
	defer k.mu.Unlock()
	f := s.fd
	i := -1
	for j, o := range f.sends {
		if o == s {
			i = j
		}
	}
	if i < 0 {
		return
	}
	if s.retries > 0 {
		s.retries--
		k.arm(s)
		f.port.send(s.dst, f.port.srcAddr(uint32(s.agent.qpn), &s.hdr), s.mad)
		return
	}
	f.sends = append(f.sends[:i], f.sends[i+1:]...)
	h := s.hdr
	h.Status = umad.StatusTimedOut
	f.queue = append(f.queue, record{hdr: h, data: append([]byte(nil), s.mad[:24]...), timeout: true})
	f.wake()
}

// Addr is where a MAD came from, and with a GRH the GIDs it carried.
type Addr struct {
	LID       uint16
	QPN       uint32
	SL        uint8
	PKeyIndex uint16
	GRH       bool
	SGID      [16]byte // the sender's GID
	DGID      [16]byte // the GID it was sent to
	TClass    uint8
	FlowLabel uint32
}

// route delivers m to the port with LID dst (nowhere if none); with a GRH
// to the RoCE port holding the destination GID, or on InfiniBand to the
// LID's port when it holds that GID (the HCA drops it otherwise).
func (k *Kernel) route(dst uint16, src Addr, m []byte) {
	for _, p := range k.ports {
		if p.dead {
			continue
		}
		_, hasGID := p.gidIndex(src.DGID)
		switch {
		case p.roce:
			if src.GRH && hasGID {
				p.deliver(src, m)
				return
			}
		case p.lid == dst:
			if !src.GRH || hasGID {
				p.deliver(src, m)
			}
			return
		}
	}
}

func (p *Port) deliver(src Addr, m []byte) {
	m = append([]byte(nil), m...)
	if isResponse(m) {
		if p.roce && src.GRH && ipv4Mapped(src.SGID) {
			// Linux 6.1 with rdma_rxe: an answer sent from an IPv4-mapped
			// GID arrives but the MAD layer matches it to no request, which
			// times out (specs/soft-roce-vm.md); over IPv6 GIDs it matches.
			return
		}
		tid := binary.BigEndian.Uint64(m[8:])
		hi := uint32(tid >> 32)
		for _, f := range p.fds {
			for _, a := range f.agents {
				if a == nil || a.hiTID != hi {
					continue
				}
				for i, s := range f.sends {
					if s.agent == a && s.tid == tid && s.class == m[1] {
						s.stop()
						f.sends = append(f.sends[:i], f.sends[i+1:]...)
						f.queueMAD(a, src, m)
						return
					}
				}
				return // no matching request: dropped
			}
		}
		return
	}
	method := m[3]
	for _, f := range p.fds {
		for _, a := range f.agents {
			if a != nil && a.class != 0 && a.class == m[1] && a.version == m[2] &&
				a.methods[method/64]&(1<<(method%64)) != 0 &&
				(!vendor2(a.class) || a.oui == uint32(m[37])<<16|uint32(m[38])<<8|uint32(m[39])) {
				f.queueMAD(a, src, m)
				return
			}
		}
	}
	if (method == 0x01 || method == 0x02) && src.QPN == 1 {
		r := append([]byte(nil), m...)
		r[3] = 0x81
		binary.BigEndian.PutUint16(r[4:], 0x000c)
		back := Addr{LID: p.lid, QPN: 1}
		if src.GRH {
			back.GRH, back.SGID, back.DGID, back.TClass, back.FlowLabel = true, src.DGID, src.SGID, src.TClass, src.FlowLabel
		}
		p.k.route(src.LID, back, r)
	}
}

func (f *FD) queueMAD(a *agent, src Addr, m []byte) {
	if f.received >= QueueLimit {
		return
	}
	f.received++
	h := umad.Header{Agent: uint32(a.id), Length: uint32(f.hdr + len(m)), QPN: src.QPN, LID: src.LID, SL: src.SL, PKeyIndex: src.PKeyIndex}
	if src.QPN == 1 {
		h.QKey = 0x80010000
	}
	if src.GRH {
		// ib_umad's recv_handler: the reply's address handle from the
		// work completion (ib_init_ah_attr_from_wc): the sender's GID, the
		// index of the local GID it was sent to, the GRH's traffic class
		// and flow label; the hop limit 255 on InfiniBand, the route's (64)
		// on RoCE.
		idx, _ := f.port.gidIndex(src.DGID)
		h.GRHPresent, h.GID, h.GIDIndex = true, src.SGID, uint8(idx)
		h.TrafficClass, h.FlowLabel, h.HopLimit = src.TClass, src.FlowLabel, 0xff
		if f.port.roce {
			h.HopLimit, h.LID = 64, 0 // RoCE has no LIDs: the work completion's slid is 0
		}
	}
	f.queue = append(f.queue, record{hdr: h, data: m})
	f.wake()
}

// Inject delivers m to this port as if sent from src: a request goes to
// the agent owning its method, a response to the agent whose request it
// answers (by hi_tid, TID and class).
func (p *Port) Inject(src Addr, m []byte) {
	p.k.mu.Lock()
	defer p.k.mu.Unlock()
	if len(m) < umad.MADSize {
		m = append(append([]byte(nil), m...), make([]byte, umad.MADSize-len(m))...)
	}
	p.deliver(src, m)
}

// Read implements umad.Dev with the semantics of a blocking read through
// the runtime poller: it waits for a record, the deadline or Close.
func (f *FD) Read(b []byte) (int, error) {
	k := f.port.k
	for {
		k.mu.Lock()
		n, err, wait := f.readLocked(b)
		if !wait {
			k.mu.Unlock()
			return n, err
		}
		notify, dlc, closed, dl := f.notify, f.dlChanged, f.closedCh, f.deadline
		k.mu.Unlock()
		if err := waitFor(notify, dlc, closed, dl); err != nil {
			if err == os.ErrDeadlineExceeded {
				return 0, &fs.PathError{Op: "read", Path: f.path, Err: err}
			}
			continue
		}
	}
}

// waitFor blocks until one of the channels is closed or the deadline
// passes (os.ErrDeadlineExceeded).
func waitFor(notify, dlc, closed <-chan struct{}, dl time.Time) error {
	var timer <-chan time.Time
	if !dl.IsZero() {
		d := time.Until(dl)
		if d <= 0 {
			return os.ErrDeadlineExceeded
		}
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-notify:
	case <-dlc:
	case <-closed:
	case <-timer:
		return os.ErrDeadlineExceeded
	}
	return nil
}

func (f *FD) readLocked(b []byte) (n int, err error, wait bool) {
	switch {
	case f.closed:
		return 0, &fs.PathError{Op: "read", Path: f.path, Err: os.ErrClosed}, false
	case len(b) < f.hdr:
		return 0, f.errno("read", syscall.EINVAL), false
	case f.port.dead:
		return 0, f.errno("read", syscall.EIO), false
	case len(f.queue) == 0:
		if !f.deadline.IsZero() && !time.Now().Before(f.deadline) {
			return 0, &fs.PathError{Op: "read", Path: f.path, Err: os.ErrDeadlineExceeded}, false
		}
		return 0, nil, true
	}
	r := f.queue[0]
	size := len(r.data)
	switch {
	case r.timeout && len(b) < f.hdr+size:
		return 0, f.errno("read", syscall.EINVAL), false
	case !r.timeout && size <= umad.MADSize && len(b) < f.hdr+size:
		return 0, f.errno("read", syscall.EINVAL), false
	case !r.timeout && size > umad.MADSize && len(b) < f.hdr+umad.MADSize:
		return 0, f.errno("read", syscall.EINVAL), false
	case !r.timeout && len(b) < f.hdr+size:
		h := r.hdr
		h.Length = uint32(f.hdr + size)
		h.Put(b, f.hdr)
		copy(b[f.hdr:], r.data[:umad.MADSize])
		return 0, f.errno("read", syscall.ENOSPC), false
	}
	r.hdr.Put(b, f.hdr)
	copy(b[f.hdr:], r.data)
	f.queue[0] = record{}
	f.queue = f.queue[1:]
	if !r.timeout {
		f.received--
	}
	return f.hdr + size, nil, false
}

// Poll implements umad.Dev: POLLERR alone when the agents are dead,
// POLLIN|POLLOUT when a record is queued; otherwise it waits.
func (f *FD) Poll() (int, error) {
	k := f.port.k
	for {
		k.mu.Lock()
		switch {
		case f.closed:
			k.mu.Unlock()
			return 0, &fs.PathError{Op: "poll", Path: f.path, Err: os.ErrClosed}
		case f.port.dead:
			k.mu.Unlock()
			return umad.PollErr, nil
		case len(f.queue) > 0:
			k.mu.Unlock()
			return umad.PollIn | umad.PollOut, nil
		}
		notify, dlc, closed, dl := f.notify, f.dlChanged, f.closedCh, f.deadline
		k.mu.Unlock()
		if err := waitFor(notify, dlc, closed, dl); err != nil {
			return 0, &fs.PathError{Op: "poll", Path: f.path, Err: err}
		}
	}
}

// SetReadDeadline implements umad.Dev.
func (f *FD) SetReadDeadline(t time.Time) error {
	k, err := f.lockOpen("setdeadline")
	if err != nil {
		return err
	}
	defer k.mu.Unlock()
	f.deadline = t
	close(f.dlChanged)
	f.dlChanged = make(chan struct{})
	return nil
}

// Close implements umad.Dev: agents are unregistered, outstanding sends
// cancelled silently and queued records dropped.
func (f *FD) Close() error {
	k, err := f.lockOpen("close")
	if err != nil {
		return err
	}
	defer k.mu.Unlock()
	f.closed = true
	close(f.closedCh)
	for i := range f.agents {
		if f.agents[i] != nil {
			f.unregister(i)
		}
	}
	f.queue = nil
	for i, g := range f.port.fds {
		if g == f {
			f.port.fds = append(f.port.fds[:i], f.port.fds[i+1:]...)
			break
		}
	}
	return nil
}

// Queued returns the number of records waiting to be read.
func (f *FD) Queued() int {
	f.port.k.mu.Lock()
	defer f.port.k.mu.Unlock()
	return len(f.queue)
}
