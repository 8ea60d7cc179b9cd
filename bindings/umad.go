package bindings

import (
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"syscall"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
)

// The umad module is libibumad at the level of its man pages: the same
// names and argument order, MADs as binary strings of 256 bytes. Errors
// raise with the errno name in the message ("umad.recv: ENOSPC ...");
// umad.recv returns nil when its timeout passes with nothing received.
func umadModule() Module {
	return Module{
		Name:    "umad",
		Summary: "libibumad's calls (umad_get_port, umad_open_port, umad_register, umad_send, umad_recv, umad_poll)",
		Funcs: []Func{
			{"get_cas_names", umadGetCANames, "get_cas_names() -> array: the names of the CAs with ports to open (umad_get_cas_names), alphabetical"},
			{"get_smi_gsi_pairs", umadGetPairs, "get_smi_gsi_pairs() -> array of {smi_name, smi_preferred_port, gsi_name, gsi_preferred_port}: the local ports as SMI/GSI pairs (umad_get_smi_gsi_pairs): the CAs of a planarized HCA (ports sharing one port GUID) as one pair, SMPs going through smi_name and every other class through gsi_name (the side whose CapabilityMask has IsSMDisabled); a normal CA is its own SMI and GSI; RoCE ports and zero port GUIDs are left out; a name is \"\" where no CA plays that part; preferred ports are 0 (as the C function leaves them)"},
			{"get_smi_gsi_pair_by_ca_name", umadGetPair, "get_smi_gsi_pair_by_ca_name([ca [, portnum [, enforce_smi]]]) -> {smi_name, smi_preferred_port, gsi_name, gsi_preferred_port}: the pair of a CA (its SMI or its GSI name; nil or \"\" for any) and port (0 for any) with the ports to use (umad_get_smi_gsi_pair_by_ca_name): a port named with its CA is taken in any state, one picked otherwise must be above Down; enforce_smi skips pairs without an SMI; no match raises ENODEV"},
			{"get_port", umadGetPort, "get_port([ca [, portnum]]) -> table: the port's attributes as umad_port_t (base_lid, sm_lid, state, port_guid, ..., pkeys: the P_Key table by index from 1, pkeys_size, link_layer, gids: the GID table keyed by GID index from 0, as IPv6 text; on a planarized HCA's GSI side smi_name and smi_portnum name its SMI side); an unknown CA or port raises ENODEV"},
			{"release_port", umadReleasePort, "release_port(port_table) -> nil: releases what get_port returned (nothing to free in Lua)"},
			{"open_port", umadOpenPort, "open_port([ca [, portnum]]) -> umad.port: opens a port; \"\" and 0 pick the default port; either side of a planarized HCA opens both (as libibmad's mad_rpc_open_port2): agents of classes 0x01 and 0x81 are registered on the SMI side, the others on the GSI side; an unknown CA or port raises ENODEV, any call on a closed port EINVAL"},
			{"close_port", umadClosePort, "close_port(port) -> nil: closes a port (also port:close())"},
			{"register_agent", umadRegister, "register_agent(port, mgmt_class, mgmt_version [, rmpp_version [, methods]]) -> agent id: registers an agent for a management class (umad_register); the port then receives the responses to what the agent sends, and unsolicited requests of the methods listed (an array of method numbers); rmpp_version is umad_register's (0 none, 1 RMPP)"},
			{"unregister_agent", umadUnregister, "unregister_agent(port, agent) -> nil: unregisters an agent of the port (umad_unregister): nothing more is sent or received for it"},
			{"send", umadSend, "send(port, agent, mad, timeout_ms, retries [, addr]) -> nil: mad is a binary string; timeout_ms as recv's (0 unsolicited, negative no timeout); addr {lid=, qpn=, qkey=, sl=, pkey_index=, gid=, gid_index=, hop_limit=, traffic_class=, flow_label=} (qpn defaults from the class; a gid such as \"fd00::2\" sends with a GRH, as umad_set_grh: gid_index defaults to the local GID of the destination's kind, hop_limit to 64; a RoCE port needs one on every MAD, ibsim refuses one)"},
			{"recv", umadRecv, "recv(port, timeout_ms [, length]) -> mad, agent, status, addr | nil on timeout: addr {lid, qpn, qkey, sl, pkey_index, grh} and with a GRH the sender's gid, gid_index (the local GID it was sent to), hop_limit, traffic_class, flow_label; timeout_ms 0 does not wait, negative waits until a MAD comes (one above 2^31-1, a C int, math.huge too, waits 2^31-1 ms; one below -2^31, -math.huge too, as -1; a fraction is cut toward 0; NaN raises); status 110 (ETIMEDOUT) marks a request that got no response (the request, or on the kernel backend its 24-byte header); length (default 1 MiB) below 256 raises EINVAL, a longer message than length raises ENOSPC naming the length needed, and the message stays queued"},
			{"poll", umadPoll, "poll(port, timeout_ms) -> boolean: true when a MAD is ready (the next recv gets it), false when the timeout passed; timeout_ms 0 does not wait, negative waits until a MAD comes (one above 2^31-1, a C int, math.huge too, waits 2^31-1 ms; one below -2^31, -math.huge too, as -1; a fraction is cut toward 0; NaN raises)"},
			{"size", umadSize, "size() -> 64: the umad header size (ibscript always uses the P_Key-index header)"},
		},
	}
}

const umadPortType = "umad.port"

// umadPort is the userdata behind umad.port.
type umadPort struct {
	p      *engine.UMADPort
	env    *Env
	closed bool
}

func (u *umadPort) Close() error {
	if u.closed {
		return nil
	}
	u.closed = true
	u.env.Release(u)
	return u.p.Close()
}

func registerTypes(L *lua.LState) {
	mt := L.NewTypeMetatable(umadPortType)
	mt.RawSetString("__index", namedMethods(L, umadPortType, map[string]lua.LGFunction{
		"close": func(L *lua.LState) int {
			u := checkPort(L, 1, "close")
			if err := u.Close(); err != nil {
				raise(L, "umad.port:close", "%v", err)
			}
			return 0
		},
		"info": func(L *lua.LState) int {
			u := checkPort(L, 1, "info")
			L.Push(portAttrTable(L, u.p.Port()))
			return 1
		},
	}))
	mt.RawSetString("__tostring", L.NewFunction(func(L *lua.LState) int {
		u := checkPort(L, 1, "tostring")
		a := u.p.Port()
		state := "open"
		if u.closed {
			state = "closed"
		}
		L.Push(lua.LString(fmt.Sprintf("umad.port(%s port %d, lid %d, %s)", a.CAName, a.PortNum, a.LID, state)))
		return 1
	}))
}

// checkPort reads a umad.port argument; a closed port is an error.
func checkPort(L *lua.LState, n int, fn string) *umadPort {
	ud, ok := L.Get(n).(*lua.LUserData)
	var u *umadPort
	if ok {
		u, ok = ud.Value.(*umadPort)
	}
	if !ok {
		L.ArgError(n, fmt.Sprintf("%s expected, got %s", umadPortType, L.Get(n).Type()))
	}
	if u.closed && fn != "close" && fn != "tostring" {
		raise(L, "umad."+fn, "EINVAL: invalid port handle (the port is closed)")
	}
	return u
}

func optCA(L *lua.LState) (string, int) {
	ca := L.OptString(1, "")
	port := int(optUint(L, 2, 0, 254))
	return ca, port
}

func (e *Env) needFabric(L *lua.LState, fn string) fabric.Fabric {
	if e.fab == nil {
		raise(L, fn, "no fabric to open ports on")
	}
	return e.fab
}

func umadGetCANames(e *Env, L *lua.LState) int {
	ports, err := e.needFabric(L, "umad.get_cas_names").Ports(L.Context())
	if err != nil {
		raiseErrno(L, "umad.get_cas_names", err)
	}
	var names []string
	for _, p := range ports {
		if !slices.Contains(names, p.CAName) {
			names = append(names, p.CAName)
		}
	}
	slices.Sort(names)
	t := L.CreateTable(len(names), 0)
	for _, n := range names {
		t.Append(lua.LString(n))
	}
	L.Push(t)
	return 1
}

func pairTable(L *lua.LState, p fabric.PortPair) *lua.LTable {
	fields := map[string]lua.LValue{
		"smi_name": lua.LString(p.SMIName), "smi_preferred_port": lua.LNumber(p.SMIPort),
		"gsi_name": lua.LString(p.GSIName), "gsi_preferred_port": lua.LNumber(p.GSIPort),
	}
	t := L.CreateTable(0, len(fields))
	for k, v := range fields {
		t.RawSetString(k, v)
	}
	return t
}

func umadGetPairs(e *Env, L *lua.LState) int {
	pairs, err := fabric.PairsOf(L.Context(), e.needFabric(L, "umad.get_smi_gsi_pairs"))
	if err != nil {
		raiseErrno(L, "umad.get_smi_gsi_pairs", err)
	}
	t := L.CreateTable(len(pairs), 0)
	for _, p := range pairs {
		t.Append(pairTable(L, p))
	}
	L.Push(t)
	return 1
}

func umadGetPair(e *Env, L *lua.LState) int {
	ca, port := optCA(L)
	enforce := L.OptBool(3, false)
	p, err := fabric.PairOf(L.Context(), e.needFabric(L, "umad.get_smi_gsi_pair_by_ca_name"), ca, port, enforce)
	if err != nil {
		raiseErrno(L, "umad.get_smi_gsi_pair_by_ca_name", err)
	}
	L.Push(pairTable(L, p))
	return 1
}

func umadGetPort(e *Env, L *lua.LState) int {
	ca, port := optCA(L)
	if ca == "" && port == 0 {
		L.Push(portAttrTable(L, e.sess.Port()))
		return 1
	}
	p, err := engine.OpenUMADPort(L.Context(), e.needFabric(L, "umad.get_port"), ca, port)
	if err != nil {
		raiseErrno(L, "umad.get_port", fmt.Errorf("%q port %d: %w", ca, port, err))
	}
	defer p.Close()
	L.Push(portAttrTable(L, ownSide(L, e.fab, ca, p.Port())))
	return 1
}

// ownSide is the attributes of the port named, as umad_get_port fills
// them: where ca names the SMI side of a planarized port, whose Transport
// reports the GSI side, the SMI side's own from the Fabric's Ports.
func ownSide(L *lua.LState, f fabric.Fabric, ca string, a fabric.PortAttr) fabric.PortAttr {
	if ca == "" || a.SMIName != ca {
		return a
	}
	ports, err := f.Ports(L.Context())
	if err != nil {
		raiseErrno(L, "umad.get_port", err)
	}
	for _, q := range ports {
		if q.CAName == a.SMIName && q.PortNum == a.SMIPort {
			return q
		}
	}
	return a
}

func umadReleasePort(_ *Env, L *lua.LState) int {
	L.CheckTable(1)
	return 0
}

func umadOpenPort(e *Env, L *lua.LState) int {
	ca, port := optCA(L)
	p, err := engine.OpenUMADPort(L.Context(), e.needFabric(L, "umad.open_port"), ca, port)
	if err != nil {
		raiseErrno(L, "umad.open_port", fmt.Errorf("%q port %d: %w", ca, port, err))
	}
	p.AllowSet, p.Audit = e.sess.AllowsSet(), e.sess.AuditRaw
	u := &umadPort{p: p, env: e}
	e.Own(u)
	ud := L.NewUserData()
	ud.Value = u
	L.SetMetatable(ud, L.GetTypeMetatable(umadPortType))
	L.Push(ud)
	return 1
}

func umadClosePort(_ *Env, L *lua.LState) int {
	if err := checkPort(L, 1, "close").Close(); err != nil {
		raise(L, "umad.close_port", "%v", err)
	}
	return 0
}

func umadRegister(_ *Env, L *lua.LState) int {
	u := checkPort(L, 1, "register_agent")
	class := uint8(checkUint(L, 2, 0xff))
	version := uint8(checkUint(L, 3, 0xff))
	rmpp := uint8(optUint(L, 4, 0, 0xff))
	var a fabric.Agent
	a.Class, a.Version, a.RMPPVersion = class, version, rmpp
	if t := L.OptTable(5, nil); t != nil {
		t.ForEach(func(_, v lua.LValue) {
			m, ok := v.(lua.LNumber)
			if !ok || m < 0 || m > 127 || float64(m) != float64(int(m)) {
				L.ArgError(5, "array of method numbers 0..127 expected, got "+v.String())
			}
			a = a.WithMethods(uint8(m))
		})
	}
	id, err := u.p.RegisterAgent(L.Context(), a)
	if err != nil {
		raiseErrno(L, "umad.register_agent", err)
	}
	L.Push(lua.LNumber(id))
	return 1
}

func umadUnregister(_ *Env, L *lua.LState) int {
	u := checkPort(L, 1, "unregister_agent")
	if err := u.p.Unregister(L.Context(), int(checkUint(L, 2, 255))); err != nil {
		raiseErrno(L, "umad.unregister_agent", err)
	}
	return 0
}

func umadSend(_ *Env, L *lua.LState) int {
	u := checkPort(L, 1, "send")
	agent := int(checkUint(L, 2, 255))
	data := []byte(L.CheckString(3))
	timeout := checkTimeoutMS(L, 4)
	retries := int(optUint(L, 5, 0, 100))
	var addr fabric.Addr
	// Defaults as a libibumad caller would fill them: QP0 for SMPs, QP1
	// with the well-known Q_Key for GMPs, the permissive LID for DR SMPs.
	switch {
	case len(data) < 2:
	case data[1] == mad.ClassSubnDR:
		addr.LID = fabric.PermissiveLID
	case data[1] == mad.ClassSubnLID:
	default:
		addr.QPN, addr.QKey = 1, 0x80010000
	}
	if t := L.OptTable(6, nil); t != nil {
		checkOptions(L, "umad.send", t, map[string]bool{"lid": true, "qpn": true, "qkey": true, "sl": true, "pkey_index": true,
			"gid": true, "gid_index": true, "hop_limit": true, "traffic_class": true, "flow_label": true})
		num := func(k string, limit float64, dst func(float64)) {
			switch v := t.RawGetString(k).(type) {
			case lua.LNumber:
				if float64(v) < 0 || float64(v) > limit {
					raise(L, "umad.send", "addr.%s %v out of range 0..%v", k, v, limit)
				}
				dst(float64(v))
			case *lua.LNilType:
			default:
				raise(L, "umad.send", "addr.%s: number expected, got %s", k, v.Type())
			}
		}
		num("lid", 0xffff, func(v float64) { addr.LID = uint16(v) })
		num("qpn", 0xffffff, func(v float64) { addr.QPN = uint32(v) })
		num("qkey", 0xffffffff, func(v float64) { addr.QKey = uint32(v) })
		num("sl", 15, func(v float64) { addr.SL = uint8(v) })
		num("pkey_index", 0xffff, func(v float64) { addr.PKeyIndex = uint16(v) })
		switch v := t.RawGetString("gid").(type) {
		case lua.LString:
			g, err := ParseGID(string(v))
			if err != nil {
				raise(L, "umad.send", "addr.gid: %v", err)
			}
			// umad_set_grh: a GID turns the GRH on. The source GID index
			// defaults to the local GID matching the destination's kind
			// (fabric.PortAttr.SourceGIDIndex: 0 on InfiniBand), the hop
			// limit to 64, IPv6's default, which the kernel's RoCE routes
			// give.
			addr.GRH, addr.GID, addr.HopLimit = true, g, 64
			addr.GIDIndex = uint8(u.p.Port().SourceGIDIndex(g))
		case *lua.LNilType:
			for _, k := range []string{"gid_index", "hop_limit", "traffic_class", "flow_label"} {
				if t.RawGetString(k) != lua.LNil {
					raise(L, "umad.send", "addr.%s without addr.gid: the GRH needs a destination GID", k)
				}
			}
		default:
			raise(L, "umad.send", "addr.gid: string expected (\"fd00::2\", \"fe80::2:c903:a0:1\"), got %s", v.Type())
		}
		num("gid_index", 0xff, func(v float64) { addr.GIDIndex = uint8(v) })
		num("hop_limit", 0xff, func(v float64) { addr.HopLimit = uint8(v) })
		num("traffic_class", 0xff, func(v float64) { addr.TClass = uint8(v) })
		num("flow_label", 0xfffff, func(v float64) { addr.FlowLabel = uint32(v) })
	}
	if err := u.p.Send(L.Context(), agent, data, addr, timeout, retries); err != nil {
		raiseErrno(L, "umad.send", err)
	}
	return 0
}

func umadRecv(_ *Env, L *lua.LState) int {
	u := checkPort(L, 1, "recv")
	timeout := checkTimeoutMS(L, 2)
	length := int(optUint(L, 3, 1<<20, 1<<30))
	pkt, err := u.p.Recv(L.Context(), length, timeout)
	if errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, syscall.EAGAIN) {
		L.Push(lua.LNil)
		return 1
	}
	if err != nil {
		raiseErrno(L, "umad.recv", err)
	}
	mad.MaskKeys(pkt.Data) // no key reaches a script (docs/security.md)
	L.Push(lua.LString(pkt.Data))
	L.Push(lua.LNumber(pkt.Agent))
	L.Push(lua.LNumber(pkt.Status))
	L.Push(madAddrTable(L, pkt.Addr))
	return 4
}

// madAddrTable is a received MAD's address as umad.recv returns it: the
// sender's LID, QP, Q_Key, SL and P_Key index, and grh; with a GRH the
// sender's gid, the gid_index of the local GID it was sent to, hop_limit,
// traffic_class and flow_label.
func madAddrTable(L *lua.LState, a fabric.Addr) *lua.LTable {
	at := L.CreateTable(0, 12)
	at.RawSetString("lid", lua.LNumber(a.LID))
	at.RawSetString("qpn", lua.LNumber(a.QPN))
	at.RawSetString("qkey", lua.LNumber(a.QKey))
	at.RawSetString("sl", lua.LNumber(a.SL))
	at.RawSetString("pkey_index", lua.LNumber(a.PKeyIndex))
	at.RawSetString("grh", lua.LBool(a.GRH))
	if a.GRH {
		at.RawSetString("gid", lua.LString(FormatGID(a.GID)))
		at.RawSetString("gid_index", lua.LNumber(a.GIDIndex))
		at.RawSetString("hop_limit", lua.LNumber(a.HopLimit))
		at.RawSetString("traffic_class", lua.LNumber(a.TClass))
		at.RawSetString("flow_label", lua.LNumber(a.FlowLabel))
	}
	return at
}

// ParseGID reads a GID as IPv6 text ("fd00::2", "fe80::2:c903:a0:1",
// "::ffff:10.0.0.2"); an IPv4 address stands for its IPv4-mapped GID, as
// RoCE v2 builds one from it.
func ParseGID(s string) ([16]byte, error) {
	a, err := netip.ParseAddr(s)
	if err != nil || a.Zone() != "" {
		return [16]byte{}, fmt.Errorf("%q is not a GID (IPv6 text such as \"fd00::2\" or \"fe80::2:c903:a0:1\")", s)
	}
	return a.As16(), nil
}

// FormatGID writes a GID as IPv6 text, as ParseGID reads it.
func FormatGID(g [16]byte) string { return netip.AddrFrom16(g).String() }

// checkTimeoutMS reads argument n, a timeout_ms, as libibumad's C int
// takes it, without leaving the conversion of a float64 past an int to
// Go (implementation-defined: math.huge became a negative int, waiting
// forever, on amd64): a fraction is cut toward zero, a value above
// 2^31-1 (math.huge, 1e18) is 2^31-1, the longest wait, and one below
// -2^31 (-math.huge) is -2^31, a negative one that waits until a MAD
// comes. NaN is no timeout: it raises, naming the argument.
func checkTimeoutMS(L *lua.LState, n int) int {
	num, ok := L.Get(n).(lua.LNumber) // not CheckNumber: it takes "1" too
	if !ok {
		L.TypeError(n, lua.LTNumber)
	}
	f := float64(num)
	if math.IsNaN(f) {
		L.ArgError(n, "a number of milliseconds expected, got NaN")
	}
	return int(max(math.MinInt32, min(math.Trunc(f), math.MaxInt32)))
}

func umadPoll(_ *Env, L *lua.LState) int {
	u := checkPort(L, 1, "poll")
	err := u.p.Poll(L.Context(), checkTimeoutMS(L, 2))
	if errors.Is(err, syscall.ETIMEDOUT) || errors.Is(err, syscall.EAGAIN) {
		L.Push(lua.LFalse)
		return 1
	}
	if err != nil {
		raiseErrno(L, "umad.poll", err)
	}
	L.Push(lua.LTrue)
	return 1
}

func umadSize(_ *Env, L *lua.LState) int {
	L.Push(lua.LNumber(64))
	return 1
}

// raiseErrno raises "fn: ERRNO: message" so scripts can match the errno.
func raiseErrno(L *lua.LState, fn string, err error) {
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EINVAL, syscall.ENOMEM, syscall.ETIMEDOUT, syscall.EAGAIN, syscall.EIO, syscall.ENODEV} {
		if errors.Is(err, e) {
			raise(L, fn, "%s: %v", errnoName(e), err)
		}
	}
	raise(L, fn, "%v", err)
}

func errnoName(e syscall.Errno) string {
	switch e {
	case syscall.ENOSPC:
		return "ENOSPC"
	case syscall.EINVAL:
		return "EINVAL"
	case syscall.ENOMEM:
		return "ENOMEM"
	case syscall.ETIMEDOUT:
		return "ETIMEDOUT"
	case syscall.EAGAIN:
		return "EAGAIN"
	case syscall.EIO:
		return "EIO"
	case syscall.ENODEV:
		return "ENODEV"
	}
	return e.Error()
}
