package rdmacmtest

import (
	"bytes"
	"net/netip"
	"syscall"

	"github.com/ibscript/ibscript/native/rdmacm"
)

// The model's CM: the kernel's rdma_cm and ib_cm between the ids of one
// Kernel, for AF_IB addresses (struct sockaddr_ib: GID, P_Key, service
// ID) and IP addresses (sockaddr_in, sockaddr_in6) of the netdevs AddIP
// gave the ports. Every port whose GID was given to AddGID is a port of a
// host that runs the kernel's CM, so a REQ always finds a CM to answer it;
// the model keeps no timers (no retries, no UNREACHABLE after timeouts, no
// TIMEWAIT_EXIT) and resolves at once: a route exists to every GID of the
// Kernel and to no other, an IP address no netdev has is ADDR_ERROR
// -ETIMEDOUT at once (the kernel's comes when the neighbour lookup times
// out). With IP addresses the model keeps the kernel's rules for RDMA CM's
// IP header without writing it: the REQ's private data is 56 bytes at most
// (SIDR_REQ 180) and a CONNECT_REQUEST reports 56 (180), a listener takes
// a request naming its address (any for a wildcard AF_INET6, IPv4 only
// for a wildcard AF_INET one) and its new id has the request's addresses,
// a request no listener takes is REJECTED 28, and binds follow
// cma_check_port.

// Event types of rdma_cma.h the model generates.
const (
	EventAddrResolved    = 0
	EventAddrError       = 1
	EventRouteResolved   = 2
	EventRouteError      = 3
	EventConnectResponse = 5
	EventUnreachable     = 7
	EventRejected        = 8
	EventEstablished     = 9
	EventDisconnected    = 10
)

// Private data sizes of the IB CM messages (rdmacm-abi.md section 10.1).
// With AF_IB the kernel puts no RDMA CM header in front of the user's
// data (cma_user_data_offset is 0), so events report the whole fields.
const (
	REQPrivateData     = 92
	REPPrivateData     = 196
	REJPrivateData     = 148
	SIDRReqPrivateData = 216
	SIDRRepPrivateData = 136
	// IPHeaderSize is RDMA CM's IP header, in front of the REQ's and
	// SIDR_REQ's private data with IP addresses (cma_user_data_offset).
	IPHeaderSize = 36
)

// IB CM reject reasons and SIDR_REP statuses the model sends.
const (
	RejTimeout          = 4
	RejInvalidServiceID = 8
	RejConsumerDefined  = 28
	RejVendorOption     = 35
	SIDRUnsupported     = 1
	SIDRReject          = 2
)

// UDPQKey is the Q_Key RDMA CM gives ids of the UDP and IPoIB port spaces.
const UDPQKey = 0x01234567

type state int

const (
	sIdle state = iota
	sBound
	sAddrResolved
	sRouteResolved
	sListen
	sReqSent
	sReqRcvd
	sRepSent
	sRepRcvd
	sEstablished
	sDreqSent
	sDreqRcvd
	sDone // rejected, timewait: the kernel lets such an id do nothing more but be destroyed
)

// ibAddr is a struct sockaddr_ib's address part, or with ip valid a
// sockaddr_in or sockaddr_in6 (the port in sid's low 16 bits; gid is the
// GID of the address's port, zero for the wildcard).
type ibAddr struct {
	gid  [16]byte
	pkey uint16
	sid  uint64
	ip   netip.Addr
}

func (a ibAddr) sockaddr() []byte {
	if a.ip.IsValid() {
		return rdmacm.SockaddrIP(a.ip, uint16(a.sid))
	}
	return rdmacm.SockaddrIB(a.gid, a.pkey, a.sid)
}

// hostIP is an IP address of a port's netdev (IPoIB, or a RoCE NIC).
type hostIP struct {
	ip  netip.Addr
	gid [16]byte
}

// AddIP gives the port with GID gid the IP address ip (of its IPoIB or
// RoCE netdev): ids bind to it, resolve_addr resolves it to that port and
// picks it as a source of its family.
func (k *Kernel) AddIP(ip netip.Addr, gid [16]byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ips = append(k.ips, hostIP{ip.Unmap(), gid})
}

func (k *Kernel) gidOfIP(ip netip.Addr) ([16]byte, bool) {
	for _, h := range k.ips {
		if h.ip == ip {
			return h.gid, true
		}
	}
	return [16]byte{}, false
}

// srcIPFor picks a local address of dst's family: the first of gid's port
// (when gid is not zero), else the first of the family.
func (k *Kernel) srcIPFor(gid [16]byte, v4 bool) (hostIP, bool) {
	for _, h := range k.ips {
		if h.ip.Is4() == v4 && (gid == [16]byte{} || h.gid == gid) {
			return h, true
		}
	}
	return hostIP{}, false
}

// ipConflict is cma_check_port's verdict on ids i and o bound to one port
// number of a port space with IP addresses a and b: 0, EADDRNOTAVAIL (a
// wildcard) or EADDRINUSE (the same address).
func ipConflict(iAfonly, oAfonly bool, a, b netip.Addr) syscall.Errno {
	if iAfonly && oAfonly && a.Is4() != b.Is4() {
		return 0
	}
	if a.IsUnspecified() || b.IsUnspecified() {
		return syscall.EADDRNOTAVAIL
	}
	if a == b {
		return syscall.EADDRINUSE
	}
	return 0
}

// isIP reports whether the id has IP addresses.
func (i *kid) isIP() bool { return i.src.ip.IsValid() }

func (a ibAddr) anyGID() bool { return a.gid == [16]byte{} }

// AddGID makes gid the GID of a port of the model's host(s): ids bind to
// it, resolve_addr picks it as a source, and routes exist to it.
func (k *Kernel) AddGID(gid [16]byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.gids = append(k.gids, gid)
}

func (k *Kernel) hasGID(gid [16]byte) bool {
	for _, g := range k.gids {
		if g == gid {
			return true
		}
	}
	return false
}

// srcFor picks the source GID for a destination as cma_resolve_ib_dev
// does: a port in the destination's subnet (same GID prefix), else the
// first port.
func (k *Kernel) srcFor(dst [16]byte) ([16]byte, bool) {
	for _, g := range k.gids {
		if bytes.Equal(g[:8], dst[:8]) {
			return g, true
		}
	}
	if len(k.gids) > 0 {
		return k.gids[0], true
	}
	return [16]byte{}, false
}

func isUD(i *kid) bool { return i.qpType == rdmacm.QPTypeUD }

// cmEvent queues an event of the CM for id on the fd that owns it; as
// ucma_event_handler does, events of a new id whose uid user space has not
// set yet (no ACCEPT) are dropped.
func (k *Kernel) cmEvent(id uint32, typ uint32, status int32, fill func(raw []byte)) {
	i, ok := k.ids[id]
	if !ok || i.uid == 0 && i.parent != 0 {
		return
	}
	ev := rdmacm.Event{ID: id, UID: i.uid, Event: typ, Status: status}
	if fill != nil {
		fill(ev.Raw[:])
	}
	i.owner.push(ev)
}

func padded(pd []byte, n int) []byte {
	b := make([]byte, n)
	copy(b, pd)
	return b
}

// bindLocked applies rdma_bind_addr to an address.
func (k *Kernel) bindLocked(id uint32, i *kid, a []byte) error {
	if ip, port, ok := rdmacm.ParseSockaddrIP(a); ok {
		return k.bindIPLocked(id, i, ip, port)
	}
	gid, pkey, sid, ok := rdmacm.ParseSockaddrIB(a)
	if !ok {
		return syscall.EAFNOSUPPORT
	}
	if i.st != sIdle {
		return syscall.EINVAL
	}
	if gid != [16]byte{} && !k.hasGID(gid) {
		return syscall.ENODEV // no device has that GID (cma_acquire_dev)
	}
	port := uint16(sid)
	if sid != 0 && sid>>16 != uint64(i.ps) {
		return syscall.EPROTONOSUPPORT // cma_select_ib_ps: the service ID is of another port space
	}
	for h, o := range k.ids {
		if h != id && o.parent == 0 && o.st != sIdle && o.ps == i.ps && uint16(o.src.sid) == port && port != 0 &&
			(o.src.anyGID() || gid == [16]byte{} || o.src.gid == gid) {
			return syscall.EADDRINUSE
		}
	}
	if port == 0 {
		port = k.ephemeralLocked(i.ps)
	}
	if pkey == 0 {
		pkey = 0xffff
	}
	i.src = ibAddr{gid: gid, pkey: pkey, sid: uint64(i.ps)<<16 | uint64(port)}
	i.st = sBound
	return nil
}

// bindIPLocked binds to an IP address: the netdev's (EADDRNOTAVAIL when
// none has it, as rdma_translate_ip) or the wildcard, with
// cma_check_port's conflicts among the ids of the port number.
func (k *Kernel) bindIPLocked(id uint32, i *kid, ip netip.Addr, port uint16) error {
	if i.st != sIdle {
		return syscall.EINVAL
	}
	var gid [16]byte
	if !ip.IsUnspecified() {
		g, ok := k.gidOfIP(ip)
		if !ok {
			return syscall.EADDRNOTAVAIL
		}
		gid = g
	}
	afonly := ip.Is4()
	if port != 0 {
		for h, o := range k.ids {
			if h == id || o.parent != 0 || o.st == sIdle || o.ps != i.ps || uint16(o.src.sid) != port {
				continue
			}
			if !o.isIP() {
				if o.src.anyGID() || ip.IsUnspecified() {
					return syscall.EADDRNOTAVAIL
				}
				continue
			}
			if e := ipConflict(afonly, o.afonly, ip, o.src.ip); e != 0 {
				return e
			}
		}
	} else {
		port = k.ephemeralLocked(i.ps)
	}
	i.src = ibAddr{gid: gid, pkey: 0xffff, sid: uint64(i.ps)<<16 | uint64(port), ip: ip}
	i.afonly = afonly
	i.st = sBound
	return nil
}

func (k *Kernel) ephemeralLocked(ps uint16) uint16 {
	for {
		k.nextPort++
		p := uint16(32768 + k.nextPort%28232)
		used := false
		for _, o := range k.ids {
			if o.ps == ps && uint16(o.src.sid) == p && o.st != sIdle {
				used = true
			}
		}
		if !used {
			return p
		}
	}
}

func (k *Kernel) resolveAddr(f *FD, body []byte) error {
	ne := nativeEndian
	id := ne.Uint32(body[0:])
	i, err := k.lookup(f, id)
	if err != nil {
		return err
	}
	ss, ds := int(ne.Uint16(body[8:])), int(ne.Uint16(body[10:]))
	if ds > rdmacm.SockaddrStoreSize || ss > rdmacm.SockaddrStoreSize {
		return syscall.EINVAL
	}
	if dip, dport, ok := rdmacm.ParseSockaddrIP(body[144 : 144+ds]); ok {
		return k.resolveIP(id, i, body[16:16+ss], dip, dport)
	}
	dgid, dpkey, dsid, ok := rdmacm.ParseSockaddrIB(body[144 : 144+ds])
	if !ok {
		return syscall.EAFNOSUPPORT
	}
	if i.st == sIdle {
		src := body[16 : 16+ss]
		if ss == 0 {
			src = rdmacm.SockaddrIB([16]byte{}, dpkey, 0)
		}
		if err := k.bindLocked(id, i, src); err != nil {
			return err
		}
	}
	if i.st != sBound {
		return syscall.EINVAL
	}
	if i.src.anyGID() {
		g, ok := k.srcFor(dgid)
		if !ok {
			return syscall.ENODEV
		}
		i.src.gid = g
	}
	if dpkey == 0 {
		dpkey = 0xffff
	}
	i.dst = ibAddr{gid: dgid, pkey: dpkey, sid: dsid}
	i.st = sAddrResolved
	k.cmEvent(id, EventAddrResolved, 0, nil)
	return nil
}

// resolveIP is RESOLVE_ADDR to an IP address: bound first (to src, or the
// wildcard of dst's family), a source address of the family picked, then
// ADDR_RESOLVED, or ADDR_ERROR -ETIMEDOUT when no netdev has dst.
func (k *Kernel) resolveIP(id uint32, i *kid, src []byte, dst netip.Addr, dport uint16) error {
	dst = dst.Unmap()
	if i.st == sIdle {
		if len(src) == 0 {
			src = rdmacm.SockaddrIP(netip.IPv6Unspecified(), 0)
			if dst.Is4() {
				src = rdmacm.SockaddrIP(netip.IPv4Unspecified(), 0)
			}
		}
		if rdmacm.SockaddrFamily(src) == rdmacm.AF_IB {
			return syscall.EINVAL
		}
		if err := k.bindLocked(id, i, src); err != nil {
			return err
		}
	}
	if i.st != sBound || !i.isIP() || !i.src.ip.IsUnspecified() && i.src.ip.Is4() != dst.Is4() {
		return syscall.EINVAL
	}
	dgid, ok := k.gidOfIP(dst)
	if !ok {
		k.cmEvent(id, EventAddrError, -int32(syscall.ETIMEDOUT), nil)
		return nil
	}
	if i.src.ip.IsUnspecified() {
		h, ok := k.srcIPFor([16]byte{}, dst.Is4())
		if !ok {
			k.cmEvent(id, EventAddrError, -int32(syscall.ENETUNREACH), nil)
			return nil
		}
		i.src.ip, i.src.gid = h.ip, h.gid
	}
	i.dst = ibAddr{gid: dgid, pkey: 0xffff, sid: uint64(i.ps)<<16 | uint64(dport), ip: dst}
	i.st = sAddrResolved
	k.cmEvent(id, EventAddrResolved, 0, nil)
	return nil
}

func (k *Kernel) resolveRoute(f *FD, body []byte) error {
	id := nativeEndian.Uint32(body[0:])
	i, err := k.lookup(f, id)
	if err != nil {
		return err
	}
	if i.st != sAddrResolved {
		return syscall.EINVAL
	}
	if !k.hasGID(i.dst.gid) {
		// The SA answers the PathRecord query with an error status, which
		// ib_sa passes on as -EINVAL.
		k.cmEvent(id, EventRouteError, -int32(syscall.EINVAL), nil)
		return nil
	}
	i.st = sRouteResolved
	k.cmEvent(id, EventRouteResolved, 0, nil)
	return nil
}

// listenerFor finds the id listening on the service ID at gid (or on
// the wildcard GID) that takes a request to a: with IP addresses, as
// cma_match_private_data (a wildcard AF_INET6 listener takes any, an
// AF_INET one IPv4 only, a bound one its own address); AF_IB listeners
// take every request. any says whether some listener had the service ID.
func (k *Kernel) listenerFor(a ibAddr, ud bool) (uint32, *kid, bool) {
	any := false
	for h, l := range k.ids {
		if l.st != sListen || l.src.sid != a.sid || isUD(l) != ud || !(l.src.anyGID() || l.src.gid == a.gid) {
			continue
		}
		any = true
		switch {
		case !l.isIP():
		case !a.ip.IsValid():
			continue // no IP header in the request
		case l.src.ip.IsUnspecified() && !l.afonly:
		case l.src.ip.Is4() != a.ip.Is4():
			continue
		case !l.src.ip.IsUnspecified() && l.src.ip != a.ip:
			continue
		}
		return h, l, true
	}
	return 0, nil, any
}

func (k *Kernel) connect(f *FD, body []byte) error {
	id := nativeEndian.Uint32(body[272:])
	i, err := k.lookup(f, id)
	if err != nil {
		return err
	}
	p := rdmacm.ParseConnParam(body[:rdmacm.ConnParamSize])
	max, hdr := REQPrivateData, 0
	if isUD(i) {
		max = SIDRReqPrivateData
	}
	if i.isIP() {
		hdr = IPHeaderSize // RDMA CM's IP header goes first
	}
	if i.st != sRouteResolved || p.Valid == 0 || len(p.PrivateData) > max-hdr {
		return syscall.EINVAL
	}
	i.st = sReqSent
	lh, l, any := k.listenerFor(i.dst, isUD(i))
	if l == nil && any && !isUD(i) {
		// cma finds no id for the request: ib_cm rejects it as its
		// handler failed, REJ 28 (consumer defined), empty private data.
		i.st = sDone
		k.cmEvent(id, EventRejected, RejConsumerDefined, func(raw []byte) {
			rdmacm.PutConnParam(raw, &rdmacm.ConnParam{PrivateData: make([]byte, REJPrivateData)})
		})
		return nil
	}
	if l == nil {
		i.st = sDone
		if isUD(i) {
			// The peer's CM answers SIDR_REP status 1 (service ID not
			// supported): UNREACHABLE with that status; 2 (rejected) when
			// a listener had the service ID but cma found no id for it.
			st := int32(SIDRUnsupported)
			if any {
				st = SIDRReject
			}
			k.cmEvent(id, EventUnreachable, st, nil)
		} else {
			// The peer's CM answers REJ reason 8 (invalid service ID):
			// REJECTED with status 8 and the REJ's (empty) private data.
			// UNREACHABLE would come only from a port whose host runs no
			// CM at all, after the REQ's retries; the model has none.
			k.cmEvent(id, EventRejected, RejInvalidServiceID, func(raw []byte) {
				rdmacm.PutConnParam(raw, &rdmacm.ConnParam{PrivateData: make([]byte, REJPrivateData)})
			})
		}
		return nil
	}
	if l.backlog <= 0 {
		// The kernel refuses the request without a REJ (ENOMEM in
		// ucma_connect_event_handler) so that the peer's retries may find
		// room; the model has no retries, so the REQ stays unanswered.
		return nil
	}
	l.backlog--
	k.nextID++
	child := k.nextID
	c := &kid{owner: l.owner, ps: l.ps, qpType: l.qpType, parent: lh, st: sReqRcvd, peer: id,
		src: ibAddr{gid: i.dst.gid, pkey: i.dst.pkey, sid: l.src.sid}, dst: i.src}
	if l.isIP() {
		// cma_save_ip_info: the header's destination with the listener's
		// port, the peer the header's source and port.
		c.src.ip, c.afonly = i.dst.ip, l.afonly
	} else if i.isIP() {
		// An AF_IB listener gets the header as the first 36 bytes of
		// private data, and the peer as an AF_IB address.
		c.dst.ip = netip.Addr{}
	}
	k.ids[child] = c
	i.peer = child
	ev := rdmacm.Event{UID: l.uid, ID: child, Event: EventConnectRequest}
	pd := p.PrivateData
	if i.isIP() && !l.isIP() {
		pd = append(make([]byte, IPHeaderSize), pd...) // the header, as the model writes none
	}
	off := 0
	if l.isIP() {
		off = IPHeaderSize
	}
	if isUD(i) {
		rdmacm.PutUDParam(ev.Raw[:], &rdmacm.UDParam{PrivateData: padded(pd, SIDRReqPrivateData-off)})
	} else {
		// The REQ carries the initiator's resources, which the passive
		// side sees crossed over.
		rdmacm.PutConnParam(ev.Raw[:], &rdmacm.ConnParam{PrivateData: padded(pd, REQPrivateData-off),
			QPNum: p.QPNum, ResponderResources: p.InitiatorDepth, InitiatorDepth: p.ResponderResources,
			FlowControl: p.FlowControl, RetryCount: p.RetryCount, RNRRetryCount: p.RNRRetryCount, SRQ: p.SRQ})
	}
	l.owner.pushq(queued{ev: ev, ctx: lh, child: child})
	return nil
}

func (k *Kernel) accept(f *FD, body []byte) error {
	id := nativeEndian.Uint32(body[280:])
	i, err := k.lookup(f, id)
	if err != nil {
		return err
	}
	uid := nativeEndian.Uint64(body[0:])
	p := rdmacm.ParseConnParam(body[8 : 8+rdmacm.ConnParamSize])
	peer := k.ids[i.peer]
	switch {
	case p.Valid == 0 && i.st == sRepRcvd:
		// The active side after CONNECT_RESPONSE (librdmacm's
		// ucma_process_conn_resp): the kernel sends the RTU; the passive
		// side reports ESTABLISHED.
		i.uid, i.st = uid, sEstablished
		if peer != nil && peer.st == sRepSent {
			peer.st = sEstablished
			k.cmEvent(i.peer, EventEstablished, 0, nil)
		}
	case p.Valid != 0 && i.st == sReqRcvd && isUD(i):
		if len(p.PrivateData) > SIDRRepPrivateData {
			return syscall.EINVAL
		}
		i.uid, i.st = uid, sEstablished
		qkey := p.QKey
		if i.ps == rdmacm.PSUDP || i.ps == rdmacm.PSIPoIB {
			qkey = UDPQKey
		}
		if peer != nil && peer.st == sReqSent {
			peer.st = sEstablished
			k.cmEvent(i.peer, EventEstablished, 0, func(raw []byte) {
				rdmacm.PutUDParam(raw, &rdmacm.UDParam{QPNum: p.QPNum, QKey: qkey,
					PrivateData: padded(p.PrivateData, SIDRRepPrivateData)})
			})
		}
	case p.Valid != 0 && i.st == sReqRcvd:
		if len(p.PrivateData) > REPPrivateData {
			return syscall.EINVAL
		}
		i.uid, i.st = uid, sRepSent
		if peer != nil && peer.st == sReqSent {
			peer.st = sRepRcvd
			k.cmEvent(i.peer, EventConnectResponse, 0, func(raw []byte) {
				rdmacm.PutConnParam(raw, &rdmacm.ConnParam{PrivateData: padded(p.PrivateData, REPPrivateData),
					QPNum: p.QPNum, ResponderResources: p.InitiatorDepth, InitiatorDepth: p.ResponderResources,
					FlowControl: p.FlowControl, RNRRetryCount: p.RNRRetryCount, SRQ: p.SRQ})
			})
		}
	default:
		return syscall.EINVAL
	}
	return nil
}

// rejectTo delivers a REJ (or a rejecting SIDR_REP) from i to its peer.
func (k *Kernel) rejectTo(i *kid, reason int32, pd []byte) {
	peer, ok := k.ids[i.peer]
	if !ok {
		return
	}
	peer.peer = 0
	if isUD(i) {
		if peer.st == sReqSent {
			peer.st = sDone
			k.cmEvent(i.peer, EventUnreachable, SIDRReject, nil)
		}
		return
	}
	switch peer.st {
	case sReqSent, sRepSent, sRepRcvd, sReqRcvd:
		peer.st = sDone
		k.cmEvent(i.peer, EventRejected, reason, func(raw []byte) {
			rdmacm.PutConnParam(raw, &rdmacm.ConnParam{PrivateData: padded(pd, REJPrivateData)})
		})
	}
}

func (k *Kernel) reject(f *FD, body []byte) error {
	id := nativeEndian.Uint32(body[0:])
	i, err := k.lookup(f, id)
	if err != nil {
		return err
	}
	n, reason := int(body[4]), body[5]
	if n > rdmacm.MaxPrivateData {
		return syscall.EINVAL
	}
	pd := body[8 : 8+n]
	switch reason {
	case 0:
		reason = RejConsumerDefined
	case RejConsumerDefined, RejVendorOption:
	default:
		return syscall.EINVAL
	}
	if i.st != sReqRcvd && i.st != sRepRcvd && i.st != sRepSent || len(pd) > REJPrivateData {
		return syscall.EINVAL
	}
	k.rejectTo(i, int32(reason), pd)
	i.st, i.peer = sDone, 0
	return nil
}

// disconnectLocked is rdma_disconnect's DREQ, or the DREP after the
// peer's DREQ; false when i is in neither state.
func (k *Kernel) disconnectLocked(i *kid) bool {
	peer := k.ids[i.peer]
	switch i.st {
	case sEstablished:
		if isUD(i) {
			return false
		}
		i.st = sDreqSent
		if peer != nil && peer.st == sEstablished {
			peer.st = sDreqRcvd
			k.cmEvent(i.peer, EventDisconnected, 0, nil)
		}
	case sDreqRcvd:
		i.st = sDone
		if peer != nil && peer.st == sDreqSent {
			peer.st = sDone
			k.cmEvent(i.peer, EventDisconnected, 0, nil)
		}
	default:
		return false
	}
	return true
}

func (k *Kernel) disconnect(f *FD, body []byte) error {
	i, err := k.lookup(f, nativeEndian.Uint32(body[0:]))
	if err != nil {
		return err
	}
	if !k.disconnectLocked(i) {
		return syscall.EINVAL
	}
	return nil
}

// teardownLocked is what destroying an id does to its connection
// (cm_destroy_id): DREQ when established, DREP after the peer's DREQ, REJ
// (consumer defined) from a passive id not yet established or an active
// one that has the REP, REJ (timeout) from an active id still waiting.
func (k *Kernel) teardownLocked(i *kid) {
	switch i.st {
	case sEstablished, sDreqRcvd:
		k.disconnectLocked(i)
	case sReqRcvd, sRepSent, sRepRcvd:
		k.rejectTo(i, RejConsumerDefined, nil)
	case sReqSent:
		k.rejectTo(i, RejTimeout, nil)
	}
	if p, ok := k.ids[i.peer]; ok && p.peer != 0 {
		p.peer = 0
	}
	i.st = sDone
}

func (k *Kernel) query(f *FD, out int, body []byte, resp []byte) error {
	ne := nativeEndian
	i, err := k.lookup(f, ne.Uint32(body[8:]))
	if err != nil {
		return err
	}
	if ne.Uint32(body[12:]) != rdmacm.QueryAddr {
		return syscall.ENOSYS // QUERY_PATH, QUERY_GID, QUERY_IB_SERVICE: not modelled
	}
	if out < rdmacm.QueryAddrRespMinSize || len(resp) < rdmacm.QueryAddrRespMinSize {
		return syscall.ENOSPC
	}
	a := rdmacm.AddrInfo{PKey: i.src.pkey}
	if i.st != sIdle {
		a.Src = i.src.sockaddr()
		a.PortNum = 1
	}
	if i.dst.gid != [16]byte{} || i.dst.ip.IsValid() {
		a.Dst = i.dst.sockaddr()
	}
	full := make([]byte, rdmacm.QueryAddrRespSize)
	rdmacm.PutAddrInfo(full, &a)
	copy(resp, full[:min(out, len(full))])
	return nil
}
