package rdmacm

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// defaultPKey is the P_Key of the addresses the CM builds: the default
// partition, full membership.
const defaultPKey = 0xffff

// resolveTimeout is the device's timeout for a resolution under ctx.
func resolveTimeout(ctx context.Context) time.Duration {
	if dl, ok := ctx.Deadline(); ok {
		return max(time.Until(dl), time.Millisecond)
	}
	return DefaultResolveTimeout
}

// local turns a local address into AF_IB: a LID names one of the fabric's
// ports, a GID goes as it is, neither is the wildcard.
func (c *CM) local(ctx context.Context, op string, ps PortSpace, a Addr) (fabric.CMAddr, error) {
	if a.IP.IsValid() {
		return ipAddr(op, a)
	}
	out := fabric.CMAddr{GID: a.GID, PKey: defaultPKey}
	if a.Port != 0 {
		out.ServiceID = uint64(ps)<<16 | uint64(a.Port)
	}
	if a.LID == 0 {
		return out, nil
	}
	ports, err := c.fab.Ports(ctx)
	if err != nil {
		return out, fmt.Errorf("rdmacm: %s: %w", op, err)
	}
	for _, pa := range ports {
		if pa.LID == a.LID {
			out.GID = mad.NewGID(pa.GIDPrefix, pa.PortGUID)
			return out, nil
		}
	}
	return out, errno(op, syscall.EADDRNOTAVAIL, "no local port has address %v", a)
}

// remote turns a destination into AF_IB: a GID as it is, a LID of a local
// port by its GID, another LID by the DGID of a PathRecord from the SA
// (from slid, or the SA session's port).
func (c *CM) remote(ctx context.Context, op string, ps PortSpace, slid uint16, a Addr) (fabric.CMAddr, error) {
	if a.IP.IsValid() {
		return ipAddr(op, a)
	}
	out := fabric.CMAddr{GID: a.GID, PKey: defaultPKey, ServiceID: uint64(ps)<<16 | uint64(a.Port)}
	if a.GID != (mad.GID{}) {
		return out, nil
	}
	if a.LID == 0 {
		return out, errno(op, syscall.EINVAL, "destination %v has neither LID nor GID", a)
	}
	if l, err := c.local(ctx, op, ps, Addr{LID: a.LID}); err == nil {
		out.GID = l.GID
		return out, nil
	}
	if slid == 0 {
		slid = c.sa.Port().LID
	}
	pr, err := c.sa.PathRecord(ctx, slid, a.LID)
	if err != nil {
		return out, fmt.Errorf("rdmacm: %s: GID of lid %d: %w (%w)", op, a.LID, syscall.EHOSTUNREACH, err)
	}
	out.GID = pr.DGID
	return out, nil
}

// ipAddr is an IP address for the device: AF_INET or AF_INET6 with its
// port; a LID or GID beside it is an error.
func ipAddr(op string, a Addr) (fabric.CMAddr, error) {
	if a.LID != 0 || a.GID != (mad.GID{}) {
		return fabric.CMAddr{}, errno(op, syscall.EINVAL, "address %v names an IP address and a LID or GID", a)
	}
	if a.IP.Zone() != "" {
		return fabric.CMAddr{}, errno(op, syscall.EINVAL, "address %v: scoped IPv6 addresses are not supported", a)
	}
	return fabric.CMAddr{IP: a.IP.Unmap(), Port: a.Port}, nil
}

// addrsLocked asks the device for id's addresses (librdmacm's
// ucma_query_addr) and records them, with the LIDs of local ports.
func (c *CM) addrsLocked(ctx context.Context, id *ID) {
	info, err := id.ch.kch.QueryAddr(id.handle)
	if err != nil {
		c.log.Debug("rdmacm: query_addr", "id", id.handle, "err", err)
		return
	}
	ports, _ := c.fab.Ports(ctx)
	conv := func(a fabric.CMAddr, old Addr) Addr {
		if a.IsIP() {
			return Addr{IP: a.IP, Port: a.Port}
		}
		out := Addr{GID: a.GID, Port: uint16(a.ServiceID)}
		for _, pa := range ports {
			if mad.NewGID(pa.GIDPrefix, pa.PortGUID) == out.GID {
				out.LID = pa.LID
			}
		}
		if out.LID == 0 && old.GID == out.GID {
			out.LID = old.LID // a remote LID the caller named
		}
		return out
	}
	if info.HasSrc {
		id.src = conv(info.Src, id.src)
	}
	if info.HasDst {
		id.dst = conv(info.Dst, id.dst)
	}
}

// BindAddr is rdma_bind_addr: it binds id to a local port by LID or GID
// (zero: the wildcard) and an RDMA CM port number (0: an ephemeral one).
func (c *CM) BindAddr(ctx context.Context, id *ID, a Addr) error {
	const op = "bind_addr"
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	return c.bindLocked(ctx, op, id, a)
}

func (c *CM) bindLocked(ctx context.Context, op string, id *ID, a Addr) error {
	if id.state != stIdle {
		return errno(op, syscall.EINVAL, "id %d is %v, not idle", id.handle, id.state)
	}
	ka, err := c.local(ctx, op, id.ps, a)
	if err != nil {
		return err
	}
	if err := id.ch.kch.Bind(id.handle, ka); err != nil {
		return devErr(op, id, err, "not idle")
	}
	id.state = stAddrBound
	c.addrsLocked(ctx, id)
	return nil
}

// ResolveAddr is rdma_resolve_addr: it binds id (to src when not nil) and
// resolves dst (a LID or a GID), then reports ADDR_RESOLVED or ADDR_ERROR.
func (c *CM) ResolveAddr(ctx context.Context, id *ID, src *Addr, dst Addr) error {
	const op = "resolve_addr"
	var slid uint16
	if src != nil {
		slid = src.LID
	}
	kdst, err := c.remote(ctx, op, id.ps, slid, dst)
	if err != nil {
		return err
	}
	c.mu.Lock()
	if err := c.checkLocked(op, id); err != nil {
		c.mu.Unlock()
		return err
	}
	if id.state != stIdle && id.state != stAddrBound {
		c.mu.Unlock()
		return errno(op, syscall.EINVAL, "id %d is %v", id.handle, id.state)
	}
	var ksrc *fabric.CMAddr
	if src != nil && id.state == stIdle {
		a, err := c.local(ctx, op, id.ps, *src)
		if err != nil {
			c.mu.Unlock()
			return err
		}
		ksrc = &a
	}
	if err := id.ch.kch.ResolveAddr(id.handle, ksrc, kdst, resolveTimeout(ctx)); err != nil {
		c.mu.Unlock()
		return devErr(op, id, err, "")
	}
	id.dst = Addr{LID: dst.LID, GID: kdst.GID, IP: kdst.IP, Port: dst.Port}
	c.mu.Unlock()
	return c.complete(ctx, op, id)
}

// call runs one device command on id under c.mu; EINVAL says need.
func (c *CM) call(op string, id *ID, need string, cmd func(fabric.CMChannel) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	if err := cmd(id.ch.kch); err != nil {
		return devErr(op, id, err, need)
	}
	return nil
}

// ResolveRoute is rdma_resolve_route: the device asks the SA for a
// PathRecord, then ROUTE_RESOLVED or ROUTE_ERROR follows.
func (c *CM) ResolveRoute(ctx context.Context, id *ID) error {
	const op = "resolve_route"
	err := c.call(op, id, "not addr resolved", func(k fabric.CMChannel) error {
		return k.ResolveRoute(id.handle, resolveTimeout(ctx))
	})
	if err != nil {
		return err
	}
	return c.complete(ctx, op, id)
}

// Listen is rdma_listen (backlog <= 0: the device's maximum); an unbound
// id is bound to the wildcard address and an ephemeral port first.
func (c *CM) Listen(ctx context.Context, id *ID, backlog int) error {
	const op = "listen"
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.checkLocked(op, id); err != nil {
		return err
	}
	if id.state == stIdle {
		if err := c.bindLocked(ctx, op, id, Addr{}); err != nil {
			return err
		}
	}
	if err := id.ch.kch.Listen(id.handle, backlog); err != nil {
		return devErr(op, id, err, "not bound")
	}
	id.state = stListen
	return nil
}

// qpnLocked returns want, or a fresh 24-bit QP number standing for the
// id's QP (ids have no verbs QP here).
func (c *CM) qpnLocked(want uint32) uint32 {
	if want != 0 {
		return want & 0xffffff
	}
	c.nextQPN++
	return c.nextQPN & 0xffffff
}

func (c *CM) param(p ConnParam) *fabric.CMConnParam {
	return &fabric.CMConnParam{PrivateData: p.PrivateData, QPNum: c.qpnLocked(p.QPNum), QKey: p.QKey,
		SRQ: p.SRQ, ResponderResources: p.ResponderResources, InitiatorDepth: p.InitiatorDepth,
		FlowControl: p.FlowControl, RetryCount: p.RetryCount, RNRRetryCount: p.RNRRetryCount,
		ResponseTimeout: p.ResponseTimeout, MaxCMRetries: p.MaxRetries}
}

// Connect is rdma_connect: REQ (SIDR_REQ for UD ids) to the resolved peer;
// ESTABLISHED (the CONNECT_RESPONSE answered with the RTU as it is
// fetched), REJECTED or UNREACHABLE follow. Private data is at most
// MaxConnectPrivateData bytes (MaxUDPrivateData for UD), or with IP
// addresses MaxConnectPrivateDataIP (MaxUDPrivateDataIP).
func (c *CM) Connect(ctx context.Context, id *ID, p ConnParam) error {
	const op = "connect"
	max, maxUD := MaxConnectPrivateData, MaxUDPrivateData
	if id.isIP() {
		max, maxUD = MaxConnectPrivateDataIP, MaxUDPrivateDataIP // RDMA CM's IP header goes first
	}
	if err := checkPD(op, len(p.PrivateData), id, max, maxUD); err != nil {
		return err
	}
	err := c.call(op, id, "not route resolved", func(k fabric.CMChannel) error {
		kp := c.param(p)
		if err := k.Connect(id.handle, kp); err != nil {
			return err
		}
		id.qpn = kp.QPNum
		id.state = stReqSent
		if id.ud {
			id.state = stSIDRReqSent
		}
		return nil
	})
	if err != nil {
		return err
	}
	return c.complete(ctx, op, id)
}

// Accept is rdma_accept on a passive id (after CONNECT_REQUEST): REP (or
// SIDR_REP for UD, which reports nothing on the passive side), then
// ESTABLISHED when the RTU comes; a synchronous id waits for it.
func (c *CM) Accept(ctx context.Context, id *ID, p ConnParam) error {
	const op = "accept"
	if err := checkPD(op, len(p.PrivateData), id, MaxAcceptPrivateData, MaxUDAcceptData); err != nil {
		return err
	}
	err := c.call(op, id, "not a connect request", func(k fabric.CMChannel) error {
		uid := id.uid
		if uid == 0 {
			c.nextUID++
			uid = c.nextUID
		}
		kp := c.param(p)
		if err := k.Accept(id.handle, uid, kp); err != nil {
			return err
		}
		if id.uid == 0 {
			id.uid = uid
			c.byUID[uid] = id
		}
		id.qpn = kp.QPNum
		id.state = stRepSent
		if id.ud {
			id.state = stEstablished
		}
		return nil
	})
	if err != nil || id.ud {
		return err // no event on the passive side of UD
	}
	return c.complete(ctx, op, id)
}

// Reject is rdma_reject: REJ (reason 28, consumer defined) with private
// data, or SIDR_REP status 2 for UD.
func (c *CM) Reject(ctx context.Context, id *ID, pd []byte) error {
	if err := checkPD("reject", len(pd), id, MaxRejectPrivateData, MaxUDAcceptData); err != nil {
		return err
	}
	return c.call("reject", id, "not a connect request", func(k fabric.CMChannel) error {
		if err := k.Reject(id.handle, pd); err != nil {
			return err
		}
		id.state = stTimewait
		return nil
	})
}

// Disconnect is rdma_disconnect: DREQ (DREP when the peer's DREQ came
// first); DISCONNECTED follows the DREP, or the DREQ timeout with status
// -ETIMEDOUT. A synchronous id waits for it.
func (c *CM) Disconnect(ctx context.Context, id *ID) error {
	const op = "disconnect"
	answered := false
	err := c.call(op, id, "not connected", func(k fabric.CMChannel) error {
		if err := k.Disconnect(id.handle); err != nil {
			return err
		}
		if id.state == stDreqRcvd {
			id.state, answered = stTimewait, true // the DREP
		} else {
			id.state = stDreqSent
		}
		return nil
	})
	if err != nil || answered {
		return err
	}
	return c.complete(ctx, op, id)
}

// isIP reports whether id has IP addresses (AF_INET, AF_INET6).
func (id *ID) isIP() bool {
	id.cm.mu.Lock()
	defer id.cm.mu.Unlock()
	return id.src.IP.IsValid() || id.dst.IP.IsValid()
}

// checkPD refuses private data longer than the message carries (max for
// RC ids, maxUD for UD ones), as the kernel does.
func checkPD(op string, n int, id *ID, max, maxUD int) error {
	if id != nil && id.ud {
		max = maxUD
	}
	if n > max {
		return errno(op, syscall.EINVAL, "%d bytes of private data > %d", n, max)
	}
	return nil
}
