package bindings

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"syscall"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/rdmacm"
)

// The rdmacm module is librdmacm at the level of its man pages: the same
// names and argument order, events as tables whose event field is
// librdmacm's name ("RDMA_CM_EVENT_ESTABLISHED"). Addresses are tables
// as librdmacm takes a struct sockaddr: {ip = "10.0.0.1"} or
// {ip = "fd00::1"} (AF_INET, AF_INET6), or IB addresses {lid = N} or
// {gid = "fe80:...:..."} (AF_IB), with port the RDMA CM port number. Errors raise with the errno name in the message
// ("rdmacm.migrate_id: ETIMEDOUT: ..."); get_cm_event returns nil when its
// timeout passes with nothing received. A script can run both sides of a
// connection: ids bind to whichever CA port their address names.
func rdmacmModule() Module {
	return Module{
		Name:    "rdmacm",
		Summary: "librdmacm's calls (event channels, ids, resolve, connect/accept, events with ack, rdma_migrate_id) over the kernel's rdma_cm (umad backend) or a user-space one speaking the IB CM (sim, ibsim); addresses are IP ({ip = \"10.0.0.1\", port = 7471}, {ip = \"fd00::1\", ...}: RDMA CM's IP header then takes 36 bytes of the REQ, so connect takes 56 bytes of private data and a CONNECT_REQUEST carries 56, 180 for UD) or AF_IB ({lid = N} or {gid = ...}: 92 bytes, 216 for UD)",
		Funcs: []Func{
			{"create_event_channel", rdmacmCreateChannel, "create_event_channel() -> rdmacm.channel: a channel the ids created on it report their events to (rdma_create_event_channel); ch:close() destroys it"},
			{"destroy_event_channel", rdmacmDestroyChannel, "destroy_event_channel(channel) -> nil: EBUSY while ids use it (also channel:close())"},
			{"create_id", rdmacmCreateID, "create_id(channel | nil [, ps]) -> rdmacm.id: ps \"RDMA_PS_TCP\" (default), \"RDMA_PS_UDP\", \"RDMA_PS_IB\" or \"RDMA_PS_IPOIB\"; a nil channel makes a synchronous id"},
			{"destroy_id", rdmacmDestroyID, "destroy_id(id [, timeout_ms]) -> nil: tears the connection down, drops the id's unread events, waits (default 30 s, ETIMEDOUT after) for the acks of its fetched events"},
			{"bind_addr", rdmacmBindAddr, "bind_addr(id, addr) -> nil: addr {ip = \"10.0.0.1\" | \"fd00::1\" | \"0.0.0.0\" | \"::\", port = N} (an IP address of a local IPoIB or RoCE netdev; the simulator's CAs have theirs from the topology or sim.ipoib) or {lid = N | gid = \"...\", port = N}; lid and gid absent: the default port; port 0: an ephemeral one; an address no local netdev has raises EADDRNOTAVAIL"},
			{"resolve_addr", rdmacmResolveAddr, "resolve_addr(id, src_addr | nil, dst_addr [, timeout_ms]) -> nil: RDMA_CM_EVENT_ADDR_RESOLVED follows (RDMA_CM_EVENT_ADDR_ERROR, status -110, when no host answers for an IP address); then id:local_addr() and id:peer_addr() are the addresses the CM reports"},
			{"resolve_route", rdmacmResolveRoute, "resolve_route(id [, timeout_ms]) -> nil: a PathRecord from the SA; RDMA_CM_EVENT_ROUTE_RESOLVED follows"},
			{"listen", rdmacmListen, "listen(id [, backlog]) -> nil: starts listening for connection requests on the id's bound address (rdma_listen); each request is a CONNECT_REQUEST event carrying a new id; backlog 0 means the default"},
			{"connect", rdmacmConnect, "connect(id [, param]) -> nil: param {private_data, responder_resources, initiator_depth, flow_control, retry_count, rnr_retry_count, srq, qp_num, cm_response_timeout, max_cm_retries} (private_data up to 92 bytes, 216 for UD; with IP addresses 56 and 180; cm_response_timeout and max_cm_retries only on the user-space CM)"},
			{"accept", rdmacmAccept, "accept(id [, param]) -> nil: on the id of a CONNECT_REQUEST; param as connect (private_data up to 196 bytes, 136 for UD); a synchronous id returns once ESTABLISHED, which needs the peer's RTU, sent when the peer fetches its response"},
			{"reject", rdmacmReject, "reject(id [, private_data]) -> nil: REJ with reason 28 (consumer defined)"},
			{"disconnect", rdmacmDisconnect, "disconnect(id) -> nil: DREQ, or DREP after the peer's DREQ"},
			{"get_request", rdmacmGetRequest, "get_request(listen_id [, timeout_ms]) -> rdmacm.id: the next connection request of a synchronous listener (its new id is synchronous too)"},
			{"get_cm_event", rdmacmGetEvent, "get_cm_event(channel [, timeout_ms]) -> event | nil on timeout: {event, status, id, listen_id, private_data, responder_resources, initiator_depth, qp_num, qkey, src_addr, dst_addr (the event's id's addresses), ...}"},
			{"ack_cm_event", rdmacmAckEvent, "ack_cm_event(event) -> nil: EINVAL when acked twice"},
			{"migrate_id", rdmacmMigrateID, "migrate_id(id, channel | nil [, timeout_ms]) -> nil: moves the id and its unread events; waits (default 30 s, ETIMEDOUT after) while its fetched events are unacked; nil: synchronous mode"},
			{"poll", rdmacmPoll, "poll(channel, timeout_ms [, count]) -> boolean: true when count (default 1) events are ready to fetch"},
			{"event_str", rdmacmEventStr, "event_str(n) -> string: librdmacm's name of event type n, as rdma_event_str"},
		},
	}
}

const (
	rdmacmChannelType = "rdmacm.channel"
	rdmacmIDType      = "rdmacm.id"
	rdmacmStateKey    = "ibscript.rdmacm"
)

// rdmacmState is the module's state in one LState: the CM (made on first
// use, closed when the script's last channel or id closes), the userdata
// of every id, and the events not yet acked. While the CM is open the state
// is one resource of the Env, so Env.Close destroys whatever the script
// forgot.
type rdmacmState struct {
	env    *Env
	cm     *rdmacm.CM
	open   int
	ids    map[*rdmacm.ID]*lua.LUserData
	events map[*lua.LTable]*rdmacm.Event
}

type rdmacmChannel struct {
	st     *rdmacmState
	ch     *rdmacm.EventChannel
	closed bool
}

type rdmacmID struct {
	st     *rdmacmState
	id     *rdmacm.ID
	closed bool
}

func (e *Env) rdmacm(L *lua.LState, fn string) *rdmacmState {
	reg := L.G.Registry
	if ud, ok := reg.RawGetString(rdmacmStateKey).(*lua.LUserData); ok {
		st := ud.Value.(*rdmacmState)
		if st.cm == nil {
			st.start(L, fn)
		}
		return st
	}
	registerRdmacmTypes(L)
	st := &rdmacmState{env: e, ids: map[*rdmacm.ID]*lua.LUserData{}, events: map[*lua.LTable]*rdmacm.Event{}}
	ud := L.NewUserData()
	ud.Value = st
	reg.RawSetString(rdmacmStateKey, ud)
	st.start(L, fn)
	return st
}

func (st *rdmacmState) start(L *lua.LState, fn string) {
	fab := st.env.needFabric(L, fn)
	c, err := rdmacm.New(fab, st.env.sess, nil)
	if err != nil {
		raise(L, fn, "%v", err)
	}
	st.cm = c
	st.env.Own(st)
}

// Close closes the CM: every id and channel the script left (Env.Close).
func (st *rdmacmState) Close() error {
	if st.cm == nil {
		return nil
	}
	err := st.cm.Close()
	st.cm, st.open = nil, 0
	for _, ud := range st.ids {
		ud.Value.(*rdmacmID).closed = true
	}
	clear(st.ids)
	clear(st.events)
	return err
}

// release counts a closed channel or id; the CM closes with the last.
func (st *rdmacmState) release() error {
	st.open--
	if st.open > 0 || st.cm == nil {
		return nil
	}
	st.env.Release(st)
	return st.Close()
}

func (c *rdmacmChannel) Close() error {
	if c.closed {
		return nil
	}
	if err := c.ch.Close(); err != nil {
		return err
	}
	c.closed = true
	return c.st.release()
}

// Close destroys the id without waiting for acks (id:close()).
func (i *rdmacmID) Close() error { return i.destroy(context.Background(), 0) }

func (i *rdmacmID) destroy(ctx context.Context, wait time.Duration) error {
	if i.closed {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	err := i.st.cm.DestroyID(ctx, i.id)
	if err != nil && !errors.Is(err, syscall.ETIMEDOUT) {
		return err
	}
	i.closed = true
	delete(i.st.ids, i.id)
	if rerr := i.st.release(); rerr != nil {
		return rerr
	}
	if wait == 0 {
		return nil
	}
	return err
}

func registerRdmacmTypes(L *lua.LState) {
	mt := L.NewTypeMetatable(rdmacmChannelType)
	mt.RawSetString("__index", namedMethods(L, rdmacmChannelType, map[string]lua.LGFunction{
		"close": func(L *lua.LState) int {
			if err := checkChannel(L, 1, "close").Close(); err != nil {
				raiseCMErr(L, "rdmacm.channel:close", err)
			}
			return 0
		},
		"pending": func(L *lua.LState) int {
			L.Push(lua.LNumber(checkChannel(L, 1, "pending").ch.Pending()))
			return 1
		},
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		c := checkChannel(L, 1, "tostring")
		state := fmt.Sprintf("%d pending", c.ch.Pending())
		if c.closed {
			state = "closed"
		}
		L.Push(lua.LString("rdmacm.channel(" + state + ")"))
		return 1
	}))
	mt = L.NewTypeMetatable(rdmacmIDType)
	mt.RawSetString("__index", namedMethods(L, rdmacmIDType, map[string]lua.LGFunction{
		"close": func(L *lua.LState) int {
			if err := checkID(L, 1, "close").Close(); err != nil {
				raiseCMErr(L, "rdmacm.id:close", err)
			}
			return 0
		},
		"state": func(L *lua.LState) int {
			L.Push(lua.LString(checkID(L, 1, "state").id.State()))
			return 1
		},
		"unacked": func(L *lua.LState) int {
			L.Push(lua.LNumber(checkID(L, 1, "unacked").id.Unacked()))
			return 1
		},
		"local_addr": func(L *lua.LState) int {
			L.Push(addrTable(L, checkID(L, 1, "local_addr").id.LocalAddr()))
			return 1
		},
		"peer_addr": func(L *lua.LState) int {
			L.Push(addrTable(L, checkID(L, 1, "peer_addr").id.PeerAddr()))
			return 1
		},
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		i := checkID(L, 1, "tostring")
		state := i.id.State()
		if i.closed {
			state = "destroyed"
		}
		L.Push(lua.LString(fmt.Sprintf("rdmacm.id(%d, %s)", i.id.Handle(), state)))
		return 1
	}))
}

// addrTable is an id's address as Lua sees it: {ip, port} for an IP
// address (AF_INET, AF_INET6), {lid, gid, port} for an IB one.
func addrTable(L *lua.LState, a rdmacm.Addr) *lua.LTable {
	t := L.CreateTable(0, 3)
	if a.IP.IsValid() {
		t.RawSetString("ip", lua.LString(a.IP.String()))
		t.RawSetString("port", lua.LNumber(a.Port))
		return t
	}
	t.RawSetString("lid", lua.LNumber(a.LID))
	t.RawSetString("gid", lua.LString(a.GID.String()))
	t.RawSetString("port", lua.LNumber(a.Port))
	return t
}

func checkChannel(L *lua.LState, n int, fn string) *rdmacmChannel {
	ud, ok := L.Get(n).(*lua.LUserData)
	var c *rdmacmChannel
	if ok {
		c, ok = ud.Value.(*rdmacmChannel)
	}
	if !ok {
		L.ArgError(n, fmt.Sprintf("%s expected, got %s", rdmacmChannelType, L.Get(n).Type()))
	}
	if c.closed && fn != "close" && fn != "tostring" {
		raise(L, "rdmacm."+fn, "EINVAL: channel is destroyed") // the CM's errno for a closed channel
	}
	return c
}

// optChannel reads a channel or nil (synchronous mode).
func optChannel(L *lua.LState, n int, fn string) *rdmacm.EventChannel {
	if L.Get(n) == lua.LNil {
		return nil
	}
	return checkChannel(L, n, fn).ch
}

func checkID(L *lua.LState, n int, fn string) *rdmacmID {
	ud, ok := L.Get(n).(*lua.LUserData)
	var i *rdmacmID
	if ok {
		i, ok = ud.Value.(*rdmacmID)
	}
	if !ok {
		L.ArgError(n, fmt.Sprintf("%s expected, got %s", rdmacmIDType, L.Get(n).Type()))
	}
	if i.closed && fn != "close" && fn != "tostring" {
		raise(L, "rdmacm."+fn, "ENOENT: id is destroyed") // the CM's errno for a destroyed id
	}
	return i
}

// raiseCMErr raises "fn: ERRNO: message" so scripts can match the errno.
func raiseCMErr(L *lua.LState, fn string, err error) {
	var en syscall.Errno
	if errors.As(err, &en) {
		raise(L, fn, "%s: %v", rdmacmErrnoName(en), err)
	}
	raise(L, fn, "%v", err)
}

func rdmacmErrnoName(e syscall.Errno) string {
	for _, n := range []struct {
		e    syscall.Errno
		name string
	}{{syscall.EINVAL, "EINVAL"}, {syscall.EBUSY, "EBUSY"}, {syscall.ETIMEDOUT, "ETIMEDOUT"},
		{syscall.ENOENT, "ENOENT"}, {syscall.EADDRINUSE, "EADDRINUSE"}, {syscall.EADDRNOTAVAIL, "EADDRNOTAVAIL"},
		{syscall.ECONNREFUSED, "ECONNREFUSED"}, {syscall.EHOSTUNREACH, "EHOSTUNREACH"}} {
		if n.e == e {
			return n.name
		}
	}
	return e.Error()
}

// timeoutCtx is L.Context() bounded by an optional timeout_ms argument:
// absent means def (0: no bound), negative no bound, 0 no wait.
func timeoutCtx(L *lua.LState, n int, def time.Duration) (context.Context, context.CancelFunc) {
	d := def
	if L.Get(n) != lua.LNil {
		ms := L.CheckNumber(n)
		switch {
		case ms < 0:
			d = 0
		case ms == 0:
			return context.WithTimeout(L.Context(), 0)
		default:
			d = time.Duration(float64(ms) * float64(time.Millisecond))
		}
	}
	if d <= 0 {
		return context.WithCancel(L.Context())
	}
	return context.WithTimeout(L.Context(), d)
}

func (st *rdmacmState) newChannel(L *lua.LState, ch *rdmacm.EventChannel) {
	c := &rdmacmChannel{st: st, ch: ch}
	st.open++
	ud := L.NewUserData()
	ud.Value = c
	L.SetMetatable(ud, L.GetTypeMetatable(rdmacmChannelType))
	L.Push(ud)
}

// idValue returns the userdata of id, making it (and owning it) the first
// time, as for the new id of a CONNECT_REQUEST.
func (st *rdmacmState) idValue(L *lua.LState, id *rdmacm.ID) lua.LValue {
	if id == nil {
		return lua.LNil
	}
	if ud, ok := st.ids[id]; ok {
		return ud
	}
	i := &rdmacmID{st: st, id: id}
	st.open++
	ud := L.NewUserData()
	ud.Value = i
	L.SetMetatable(ud, L.GetTypeMetatable(rdmacmIDType))
	st.ids[id] = ud
	return ud
}

func rdmacmCreateChannel(e *Env, L *lua.LState) int {
	const fn = "rdmacm.create_event_channel"
	st := e.rdmacm(L, fn)
	ch, err := st.cm.CreateEventChannel()
	if err != nil {
		raiseCMErr(L, fn, err)
	}
	st.newChannel(L, ch)
	return 1
}

func rdmacmDestroyChannel(e *Env, L *lua.LState) int {
	if err := checkChannel(L, 1, "destroy_event_channel").Close(); err != nil {
		raiseCMErr(L, "rdmacm.destroy_event_channel", err)
	}
	return 0
}

var portSpaces = map[string]rdmacm.PortSpace{"RDMA_PS_TCP": rdmacm.PSTCP, "RDMA_PS_UDP": rdmacm.PSUDP,
	"RDMA_PS_IB": rdmacm.PSIB, "RDMA_PS_IPOIB": rdmacm.PSIPoIB}

func rdmacmCreateID(e *Env, L *lua.LState) int {
	const fn = "rdmacm.create_id"
	ch := optChannel(L, 1, "create_id")
	ps := rdmacm.PSTCP
	switch v := L.Get(2).(type) {
	case *lua.LNilType:
	case lua.LString:
		p, ok := portSpaces[string(v)]
		if !ok {
			raise(L, fn, "EINVAL: unknown port space %q (RDMA_PS_TCP, RDMA_PS_UDP, RDMA_PS_IB, RDMA_PS_IPOIB)", string(v))
		}
		ps = p
	default:
		ps = rdmacm.PortSpace(checkUint(L, 2, 0xffff))
	}
	st := e.rdmacm(L, fn)
	id, err := st.cm.CreateID(ch, ps, false)
	if err != nil {
		raiseCMErr(L, fn, err)
	}
	L.Push(st.idValue(L, id))
	return 1
}

func rdmacmDestroyID(e *Env, L *lua.LState) int {
	const fn = "rdmacm.destroy_id"
	i := checkID(L, 1, "destroy_id")
	wait := rdmacm.DefaultAckWait
	if L.Get(2) != lua.LNil {
		wait = time.Duration(float64(L.CheckNumber(2)) * float64(time.Millisecond))
		if wait <= 0 {
			wait = time.Nanosecond
		}
	}
	if err := i.destroy(L.Context(), wait); err != nil {
		raiseCMErr(L, fn, err)
	}
	return 0
}

// checkAddr reads an address table {ip =, port =} or {lid =, gid =, port =}.
func checkAddr(L *lua.LState, n int, fn string) rdmacm.Addr {
	t := L.CheckTable(n)
	checkOptions(L, fn, t, map[string]bool{"lid": true, "gid": true, "port": true, "ip": true})
	var a rdmacm.Addr
	switch v := t.RawGetString("ip").(type) {
	case lua.LString:
		ip, err := netip.ParseAddr(string(v))
		if err != nil || ip.Zone() != "" {
			raise(L, fn, "EINVAL: ip %q is not an IPv4 or IPv6 address", string(v))
		}
		if t.RawGetString("lid") != lua.LNil || t.RawGetString("gid") != lua.LNil {
			raise(L, fn, "EINVAL: an address is an ip or a lid/gid, not both")
		}
		a.IP = ip.Unmap()
	case *lua.LNilType:
	default:
		raise(L, fn, "EINVAL: ip: string expected (\"10.0.0.1\", \"fd00::1\"), got %s", v.Type())
	}
	if v, ok := t.RawGetString("lid").(lua.LNumber); ok {
		if v < 0 || v > 0xffff || v != lua.LNumber(int(v)) {
			raise(L, fn, "EINVAL: lid %v out of range", v)
		}
		a.LID = uint16(v)
	}
	if v, ok := t.RawGetString("gid").(lua.LString); ok {
		b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimPrefix(string(v), "0x"), ":", ""))
		if err != nil || len(b) != 16 {
			raise(L, fn, "EINVAL: gid %q is not 16 bytes of hex", string(v))
		}
		a.GID = mad.GID(b)
	}
	if v, ok := t.RawGetString("port").(lua.LNumber); ok {
		if v < 0 || v > 0xffff || v != lua.LNumber(int(v)) {
			raise(L, fn, "EINVAL: port %v out of range", v)
		}
		a.Port = uint16(v)
	}
	return a
}

func rdmacmBindAddr(e *Env, L *lua.LState) int {
	const fn = "rdmacm.bind_addr"
	i := checkID(L, 1, "bind_addr")
	if err := i.st.cm.BindAddr(L.Context(), i.id, checkAddr(L, 2, fn)); err != nil {
		raiseCMErr(L, fn, err)
	}
	return 0
}

func rdmacmResolveAddr(e *Env, L *lua.LState) int {
	const fn = "rdmacm.resolve_addr"
	i := checkID(L, 1, "resolve_addr")
	var src *rdmacm.Addr
	if L.Get(2) != lua.LNil {
		a := checkAddr(L, 2, fn)
		src = &a
	}
	dst := checkAddr(L, 3, fn)
	ctx, cancel := timeoutCtx(L, 4, 0)
	defer cancel()
	if err := i.st.cm.ResolveAddr(ctx, i.id, src, dst); err != nil {
		raiseCMErr(L, fn, err)
	}
	return 0
}

func rdmacmResolveRoute(e *Env, L *lua.LState) int {
	const fn = "rdmacm.resolve_route"
	i := checkID(L, 1, "resolve_route")
	ctx, cancel := timeoutCtx(L, 2, 0)
	defer cancel()
	if err := i.st.cm.ResolveRoute(ctx, i.id); err != nil {
		raiseCMErr(L, fn, err)
	}
	return 0
}

func rdmacmListen(e *Env, L *lua.LState) int {
	const fn = "rdmacm.listen"
	i := checkID(L, 1, "listen")
	backlog := int(optUint(L, 2, 0, 1<<20))
	if err := i.st.cm.Listen(L.Context(), i.id, backlog); err != nil {
		raiseCMErr(L, fn, err)
	}
	return 0
}

// checkParam reads an optional rdma_conn_param table.
func checkParam(L *lua.LState, n int, fn string) rdmacm.ConnParam {
	var p rdmacm.ConnParam
	if L.Get(n) == lua.LNil {
		return p
	}
	t := L.CheckTable(n)
	u8 := map[string]*uint8{"responder_resources": &p.ResponderResources, "initiator_depth": &p.InitiatorDepth,
		"flow_control": &p.FlowControl, "retry_count": &p.RetryCount, "rnr_retry_count": &p.RNRRetryCount,
		"srq": &p.SRQ, "cm_response_timeout": &p.ResponseTimeout, "max_cm_retries": &p.MaxRetries}
	known := map[string]bool{"private_data": true, "qp_num": true}
	for k := range u8 {
		known[k] = true
	}
	checkOptions(L, fn, t, known)
	for k, dst := range u8 {
		if v := t.RawGetString(k); v != lua.LNil {
			num, ok := v.(lua.LNumber)
			if !ok || num < 0 || num > 255 || num != lua.LNumber(int(num)) {
				raise(L, fn, "EINVAL: %s: integer 0..255 expected, got %s", k, v.String())
			}
			*dst = uint8(num)
		}
	}
	if v := t.RawGetString("qp_num"); v != lua.LNil {
		num, ok := v.(lua.LNumber)
		if !ok || num < 0 || num > 0xffffff {
			raise(L, fn, "EINVAL: qp_num: 24-bit integer expected, got %s", v.String())
		}
		p.QPNum = uint32(num)
	}
	if v := t.RawGetString("private_data"); v != lua.LNil {
		s, ok := v.(lua.LString)
		if !ok {
			raise(L, fn, "EINVAL: private_data: string expected, got %s", v.Type())
		}
		p.PrivateData = []byte(s)
	}
	return p
}

func rdmacmConnect(e *Env, L *lua.LState) int {
	const fn = "rdmacm.connect"
	i := checkID(L, 1, "connect")
	if err := i.st.cm.Connect(L.Context(), i.id, checkParam(L, 2, fn)); err != nil {
		raiseCMErr(L, fn, err)
	}
	return 0
}

func rdmacmAccept(e *Env, L *lua.LState) int {
	const fn = "rdmacm.accept"
	i := checkID(L, 1, "accept")
	if err := i.st.cm.Accept(L.Context(), i.id, checkParam(L, 2, fn)); err != nil {
		raiseCMErr(L, fn, err)
	}
	return 0
}

func rdmacmReject(e *Env, L *lua.LState) int {
	const fn = "rdmacm.reject"
	i := checkID(L, 1, "reject")
	pd := []byte(L.OptString(2, ""))
	if err := i.st.cm.Reject(L.Context(), i.id, pd); err != nil {
		raiseCMErr(L, fn, err)
	}
	return 0
}

func rdmacmDisconnect(e *Env, L *lua.LState) int {
	const fn = "rdmacm.disconnect"
	i := checkID(L, 1, "disconnect")
	if err := i.st.cm.Disconnect(L.Context(), i.id); err != nil {
		raiseCMErr(L, fn, err)
	}
	return 0
}

func rdmacmGetEvent(e *Env, L *lua.LState) int {
	const fn = "rdmacm.get_cm_event"
	c := checkChannel(L, 1, "get_cm_event")
	ctx, cancel := timeoutCtx(L, 2, 0)
	defer cancel()
	ev, err := c.ch.GetEvent(ctx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && L.Context().Err() == nil {
			L.Push(lua.LNil)
			return 1
		}
		raiseCMErr(L, fn, err)
	}
	st := c.st
	t := L.CreateTable(0, 12)
	t.RawSetString("event", lua.LString(ev.Type.String()))
	t.RawSetString("status", lua.LNumber(ev.Status))
	t.RawSetString("id", st.idValue(L, ev.ID))
	if ev.ListenID != nil {
		t.RawSetString("listen_id", st.idValue(L, ev.ListenID))
	}
	p := ev.Param
	if p.PrivateData != nil {
		t.RawSetString("private_data", lua.LString(p.PrivateData))
	}
	for k, v := range map[string]uint8{"responder_resources": p.ResponderResources, "initiator_depth": p.InitiatorDepth,
		"flow_control": p.FlowControl, "retry_count": p.RetryCount, "rnr_retry_count": p.RNRRetryCount, "srq": p.SRQ} {
		t.RawSetString(k, lua.LNumber(v))
	}
	t.RawSetString("qp_num", lua.LNumber(p.QPNum))
	t.RawSetString("qkey", lua.LNumber(p.QKey))
	// The event's id's addresses as the CM reports them (librdmacm's
	// event->id->route.addr): a CONNECT_REQUEST's new id's are the
	// request's.
	t.RawSetString("src_addr", addrTable(L, ev.ID.LocalAddr()))
	t.RawSetString("dst_addr", addrTable(L, ev.ID.PeerAddr()))
	st.events[t] = ev
	L.Push(t)
	return 1
}

func rdmacmAckEvent(e *Env, L *lua.LState) int {
	const fn = "rdmacm.ack_cm_event"
	t := L.CheckTable(1)
	st := e.rdmacm(L, fn)
	ev, ok := st.events[t]
	if !ok {
		raise(L, fn, "EINVAL: not an event of get_cm_event, or acked already")
	}
	if err := st.cm.AckEvent(ev); err != nil {
		raiseCMErr(L, fn, err)
	}
	delete(st.events, t)
	return 0
}

func rdmacmMigrateID(e *Env, L *lua.LState) int {
	const fn = "rdmacm.migrate_id"
	i := checkID(L, 1, "migrate_id")
	ch := optChannel(L, 2, "migrate_id")
	ctx, cancel := timeoutCtx(L, 3, rdmacm.DefaultAckWait)
	defer cancel()
	if err := i.st.cm.MigrateID(ctx, i.id, ch); err != nil {
		raiseCMErr(L, fn, err)
	}
	return 0
}

func rdmacmPoll(e *Env, L *lua.LState) int {
	c := checkChannel(L, 1, "poll")
	ctx, cancel := timeoutCtx(L, 2, time.Nanosecond)
	defer cancel()
	n := int(optUint(L, 3, 1, 1<<20))
	err := c.ch.WaitPending(ctx, n)
	if err != nil && L.Context().Err() != nil {
		raiseCMErr(L, "rdmacm.poll", err)
	}
	L.Push(lua.LBool(err == nil))
	return 1
}

func rdmacmEventStr(_ *Env, L *lua.LState) int {
	L.Push(lua.LString(rdmacm.EventType(checkUint(L, 1, 255)).String()))
	return 1
}

func rdmacmGetRequest(e *Env, L *lua.LState) int {
	const fn = "rdmacm.get_request"
	i := checkID(L, 1, "get_request")
	ctx, cancel := timeoutCtx(L, 2, 0)
	defer cancel()
	id, err := i.st.cm.GetRequest(ctx, i.id)
	if err != nil {
		raiseCMErr(L, fn, err)
	}
	L.Push(i.st.idValue(L, id))
	return 1
}
