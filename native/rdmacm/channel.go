package rdmacm

import (
	"context"
	"fmt"
	"syscall"
)

// Dev is an open rdma_cm fd at the level of the ABI: the device node
// (dev_linux.go) or an in-memory model of the kernel (rdmacmtest).
type Dev interface {
	// Exec writes one command. When c.RespOff >= 0, the address of resp
	// goes into the command there and the kernel copies its response into
	// resp (c.Out() bytes at most). It returns the errno of write(2).
	Exec(c Command, resp []byte) error
	// Wait blocks until an event is queued (POLLIN) or ctx ends.
	Wait(ctx context.Context) error
	// Fd is the descriptor number MIGRATE_ID names.
	Fd() int
	Close() error
}

// Channel is an rdma_event_channel: one rdma_cm fd and its commands.
type Channel struct {
	dev Dev
}

// NewChannel wraps an open Dev; the Channel owns it.
func NewChannel(d Dev) *Channel { return &Channel{dev: d} }

// Fd returns the channel's descriptor.
func (ch *Channel) Fd() int { return ch.dev.Fd() }

// Close closes the fd; the kernel destroys the ids it owns.
func (ch *Channel) Close() error { return ch.dev.Close() }

func (ch *Channel) exec(op string, c Command, resp []byte) error {
	if err := ch.dev.Exec(c, resp); err != nil {
		return fmt.Errorf("rdmacm: %s: %w", op, err)
	}
	return nil
}

// CreateID is CREATE_ID: a new id of port space ps whose events carry uid.
func (ch *Channel) CreateID(uid uint64, ps uint16, qpType uint8) (uint32, error) {
	resp := make([]byte, RespIDSize)
	if err := ch.exec("create_id", CreateIDCmd(uid, ps, qpType), resp); err != nil {
		return 0, err
	}
	return ne.Uint32(resp), nil
}

// DestroyID is DESTROY_ID; it returns the id's events_reported.
func (ch *Channel) DestroyID(id uint32) (uint32, error) {
	resp := make([]byte, RespIDSize)
	if err := ch.exec(fmt.Sprintf("destroy_id %d", id), DestroyIDCmd(id), resp); err != nil {
		return 0, err
	}
	return ne.Uint32(resp), nil
}

// MigrateID is MIGRATE_ID written to ch (the destination) for an id owned
// by from; it returns the id's events_reported.
func (ch *Channel) MigrateID(id uint32, from *Channel) (uint32, error) {
	resp := make([]byte, RespIDSize)
	if err := ch.exec(fmt.Sprintf("migrate_id %d from fd %d", id, from.Fd()), MigrateIDCmd(id, from.Fd()), resp); err != nil {
		return 0, err
	}
	return ne.Uint32(resp), nil
}

// Listen is LISTEN.
func (ch *Channel) Listen(id uint32, backlog int) error {
	return ch.exec(fmt.Sprintf("listen %d", id), ListenCmd(id, backlog), nil)
}

// Bind is BIND with a sockaddr (SockaddrIB).
func (ch *Channel) Bind(id uint32, addr []byte) error {
	return ch.exec(fmt.Sprintf("bind %d", id), BindCmd(id, addr), nil)
}

// ResolveAddr is RESOLVE_ADDR.
func (ch *Channel) ResolveAddr(id uint32, src, dst []byte, timeoutMS int) error {
	return ch.exec(fmt.Sprintf("resolve_addr %d", id), ResolveAddrCmd(id, src, dst, timeoutMS), nil)
}

// ResolveRoute is RESOLVE_ROUTE.
func (ch *Channel) ResolveRoute(id uint32, timeoutMS int) error {
	return ch.exec(fmt.Sprintf("resolve_route %d", id), ResolveRouteCmd(id, timeoutMS), nil)
}

// Connect is CONNECT.
func (ch *Channel) Connect(id uint32, p *ConnParam) error {
	return ch.exec(fmt.Sprintf("connect %d", id), ConnectCmd(id, p), nil)
}

// Accept is ACCEPT.
func (ch *Channel) Accept(id uint32, uid uint64, p *ConnParam) error {
	return ch.exec(fmt.Sprintf("accept %d", id), AcceptCmd(id, uid, p), nil)
}

// Reject is REJECT.
func (ch *Channel) Reject(id uint32, pd []byte) error {
	return ch.exec(fmt.Sprintf("reject %d", id), RejectCmd(id, pd), nil)
}

// Disconnect is DISCONNECT.
func (ch *Channel) Disconnect(id uint32) error {
	return ch.exec(fmt.Sprintf("disconnect %d", id), DisconnectCmd(id), nil)
}

// GetEvent is GET_EVENT: it waits (poll) until an event is queued or ctx
// ends, then fetches it. Another reader may take the event first; then it
// waits again.
func (ch *Channel) GetEvent(ctx context.Context) (Event, error) {
	resp := make([]byte, EventRespSize)
	for {
		if err := ch.dev.Wait(ctx); err != nil {
			return Event{}, fmt.Errorf("rdmacm: get_event: %w", err)
		}
		err := ch.dev.Exec(GetEventCmd(), resp)
		if err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return Event{}, fmt.Errorf("rdmacm: get_event: %w", err)
		}
		return ParseEvent(resp)
	}
}

// QueryAddr is QUERY with RDMA_USER_CM_QUERY_ADDR: the id's source and
// destination addresses, its device's node GUID, port and P_Key.
func (ch *Channel) QueryAddr(id uint32) (AddrInfo, error) {
	resp := make([]byte, QueryAddrRespSize)
	if err := ch.exec(fmt.Sprintf("query_addr %d", id), QueryAddrCmd(id), resp); err != nil {
		return AddrInfo{}, err
	}
	return ParseAddrInfo(resp)
}

// Wait blocks until an event is queued on the channel (poll(2)'s POLLIN)
// or ctx ends; it fetches nothing.
func (ch *Channel) Wait(ctx context.Context) error {
	if err := ch.dev.Wait(ctx); err != nil {
		return fmt.Errorf("rdmacm: poll fd %d: %w", ch.Fd(), err)
	}
	return nil
}
