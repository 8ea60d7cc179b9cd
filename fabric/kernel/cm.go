package kernel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/native/rdmacm"
)

var _ fabric.CMProvider = (*Fabric)(nil)

// OpenCM implements fabric.CMProvider over native/rdmacm: the kernel's
// rdma_cm device (Options.CMPath, /dev/infiniband/rdma_cm by default), or
// Options.OpenCM's. Without the device node the error wraps
// errors.ErrUnsupported (and fs.ErrNotExist); other errors of stat, such
// as fs.ErrPermission, are returned as they are.
func (f *Fabric) OpenCM() (fabric.CMDevice, error) {
	if f.trs.isClosed() {
		return nil, fmt.Errorf("kernel: open rdma_cm: %w", net.ErrClosed)
	}
	open := f.openCM
	if open == nil {
		path := f.cmPath
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("kernel: no RDMA CM device (%w): %w", errors.ErrUnsupported, err)
		} else if err != nil {
			return nil, fmt.Errorf("kernel: rdma_cm: %w", err)
		}
		return &cmDevice{open: func() (*rdmacm.Channel, error) { return rdmacm.Open(path) }}, nil
	}
	return &cmDevice{open: func() (*rdmacm.Channel, error) {
		d, err := open()
		if err != nil {
			return nil, err
		}
		return rdmacm.NewChannel(d), nil
	}}, nil
}

// cmDevice is the rdma_cm device as a fabric.CMDevice.
type cmDevice struct {
	open  func() (*rdmacm.Channel, error)
	chans openSet[*cmChannel] // the channels open on the device
}

// OpenChannel opens one rdma_cm fd.
func (d *cmDevice) OpenChannel() (fabric.CMChannel, error) {
	if d.chans.isClosed() {
		return nil, fmt.Errorf("kernel: rdma_cm: create_event_channel: %w", net.ErrClosed)
	}
	ch, err := d.open()
	if err != nil {
		return nil, fmt.Errorf("kernel: rdma_cm: create_event_channel: %w", err)
	}
	c := &cmChannel{dev: d, ch: ch}
	if !d.chans.add(c) {
		c.close()
		return nil, fmt.Errorf("kernel: rdma_cm: create_event_channel: %w", net.ErrClosed)
	}
	return c, nil
}

// Close closes every channel of the device.
func (d *cmDevice) Close() error {
	return d.chans.closeAll((*cmChannel).close)
}

// cmChannel is one rdma_cm fd as a fabric.CMChannel.
type cmChannel struct {
	dev  *cmDevice
	ch   *rdmacm.Channel
	once sync.Once
	err  error
}

// sockaddr encodes a as the kernel takes it: sockaddr_in, sockaddr_in6
// or sockaddr_ib.
func sockaddr(a fabric.CMAddr) []byte {
	if a.IsIP() {
		return rdmacm.SockaddrIP(a.IP, a.Port)
	}
	return rdmacm.SockaddrIB(a.GID, a.PKey, a.ServiceID)
}

func fromSockaddr(b []byte) (fabric.CMAddr, bool) {
	if ip, port, ok := rdmacm.ParseSockaddrIP(b); ok {
		return fabric.CMAddr{IP: ip, Port: port}, true
	}
	gid, pkey, sid, ok := rdmacm.ParseSockaddrIB(b)
	return fabric.CMAddr{GID: gid, PKey: pkey, ServiceID: sid}, ok
}

func connParam(p *fabric.CMConnParam) *rdmacm.ConnParam {
	return &rdmacm.ConnParam{QPNum: p.QPNum, QKey: p.QKey, PrivateData: p.PrivateData, SRQ: p.SRQ,
		ResponderResources: p.ResponderResources, InitiatorDepth: p.InitiatorDepth, FlowControl: p.FlowControl,
		RetryCount: p.RetryCount, RNRRetryCount: p.RNRRetryCount, Valid: 1}
}

// timeoutMS is a resolve timeout in whole milliseconds, at least 1.
func cmTimeoutMS(d time.Duration) int {
	ms := (d + time.Millisecond - 1) / time.Millisecond
	return int(min(max(ms, 1), 0x7fffffff))
}

func (c *cmChannel) CreateID(uid uint64, ps uint16, qpType uint8) (uint32, error) {
	return c.ch.CreateID(uid, ps, qpType)
}

func (c *cmChannel) DestroyID(id uint32) (uint32, error) { return c.ch.DestroyID(id) }

func (c *cmChannel) MigrateID(id uint32, from fabric.CMChannel) (uint32, error) {
	f, ok := from.(*cmChannel)
	if !ok || f.dev != c.dev {
		return 0, fmt.Errorf("rdmacm: migrate_id %d: the source is no channel of this device: %w", id, syscall.EINVAL)
	}
	return c.ch.MigrateID(id, f.ch)
}

func (c *cmChannel) Bind(id uint32, a fabric.CMAddr) error { return c.ch.Bind(id, sockaddr(a)) }

func (c *cmChannel) ResolveAddr(id uint32, src *fabric.CMAddr, dst fabric.CMAddr, timeout time.Duration) error {
	var s []byte
	if src != nil {
		s = sockaddr(*src)
	}
	return c.ch.ResolveAddr(id, s, sockaddr(dst), cmTimeoutMS(timeout))
}

func (c *cmChannel) ResolveRoute(id uint32, timeout time.Duration) error {
	return c.ch.ResolveRoute(id, cmTimeoutMS(timeout))
}

func (c *cmChannel) Listen(id uint32, backlog int) error { return c.ch.Listen(id, max(backlog, 0)) }

func (c *cmChannel) Connect(id uint32, p *fabric.CMConnParam) error {
	return c.ch.Connect(id, connParam(p))
}

func (c *cmChannel) Accept(id uint32, uid uint64, p *fabric.CMConnParam) error {
	if p == nil {
		return c.ch.Accept(id, uid, &rdmacm.ConnParam{}) // valid 0: the active side's RTU
	}
	return c.ch.Accept(id, uid, connParam(p))
}

func (c *cmChannel) Reject(id uint32, pd []byte) error { return c.ch.Reject(id, pd) }

func (c *cmChannel) Disconnect(id uint32) error { return c.ch.Disconnect(id) }

func (c *cmChannel) QueryAddr(id uint32) (fabric.CMAddrInfo, error) {
	a, err := c.ch.QueryAddr(id)
	if err != nil {
		return fabric.CMAddrInfo{}, err
	}
	info := fabric.CMAddrInfo{NodeGUID: a.NodeGUID, PortNum: a.PortNum, PKey: a.PKey}
	info.Src, info.HasSrc = fromSockaddr(a.Src)
	info.Dst, info.HasDst = fromSockaddr(a.Dst)
	return info, nil
}

func (c *cmChannel) GetEvent(ctx context.Context) (fabric.CMRawEvent, error) {
	ev, err := c.ch.GetEvent(ctx)
	if err != nil {
		return fabric.CMRawEvent{}, err
	}
	p := ev.Conn
	return fabric.CMRawEvent{UID: ev.UID, ID: ev.ID, Type: int(ev.Event), Status: int(ev.Status),
		Conn: fabric.CMConnParam{PrivateData: p.PrivateData, QPNum: p.QPNum, QKey: p.QKey, SRQ: p.SRQ,
			ResponderResources: p.ResponderResources, InitiatorDepth: p.InitiatorDepth, FlowControl: p.FlowControl,
			RetryCount: p.RetryCount, RNRRetryCount: p.RNRRetryCount},
		UD: fabric.CMUDParam{QPNum: ev.UD.QPNum, QKey: ev.UD.QKey, AHAttr: ev.UD.AHAttr, PrivateData: ev.UD.PrivateData},
	}, nil
}

func (c *cmChannel) Wait(ctx context.Context) error { return c.ch.Wait(ctx) }

// Close closes the fd (the kernel destroys its ids); idempotent.
func (c *cmChannel) Close() error {
	c.dev.chans.remove(c)
	return c.close()
}

func (c *cmChannel) close() error {
	c.once.Do(func() {
		if err := c.ch.Close(); err != nil {
			c.err = fmt.Errorf("kernel: rdma_cm: close fd: %w", err)
		}
	})
	return c.err
}
