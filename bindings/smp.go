package bindings

import (
	"fmt"
	"strings"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

func smpModule() Module {
	return Module{
		Name:    "smp",
		Summary: "subnet management queries (SMPs), named as smpquery names them",
		Funcs: []Func{
			{"nodeinfo", smpGetter("smp.nodeinfo", smp.AttrNodeInfo, false), "nodeinfo(target) -> table: NodeInfo of the node at target"},
			{"nodedesc", smpNodeDesc, "nodedesc(target) -> string: the node's description"},
			{"portinfo", smpGetter("smp.portinfo", smp.AttrPortInfo, true), "portinfo(target [, port]) -> table: PortInfo of port (default 0: a switch's port 0, a CA's own port)"},
			{"switchinfo", smpGetter("smp.switchinfo", smp.AttrSwitchInfo, false), "switchinfo(target) -> table: SwitchInfo of a switch"},
			{"sminfo", smpGetter("smp.sminfo", smp.AttrSMInfo, false), "sminfo(target) -> table: SMInfo of the SM at target"},
			{"guidinfo", smpGetter("smp.guidinfo", smp.AttrGUIDInfo, true), "guidinfo(target [, block]) -> table: GUIDInfo block (8 GUIDs)"},
			{"pkeys", smpPKeys, "pkeys(target [, port [, block]]) -> array: the 32 P_Keys of a P_KeyTable block"},
			{"pkey_table", smpPKeyTable, "pkey_table(target [, port]) -> array: the port's whole P_Key table as smpquery pkeys reads it: NodeInfo PartitionCap entries (a switch's external port: SwitchInfo PartitionEnforcementCap), every block read; index 1 is P_Key index 0"},
			{"guid_table", smpGUIDTable, "guid_table(target) -> array: the whole GUID table as smpquery GUIDInfo (guids) reads it: PortInfo GUIDCap entries (\"0x%016x\" strings), every GUIDInfo block read; index 1 is GUID index 0"},
			{"lft", smpLFT, "lft(target [, block]) -> array: egress ports for LIDs block*64 .. block*64+63 (index 1 = first LID)"},
			{"sl2vl", smpSL2VL, "sl2vl(target [, in_port [, out_port]]) -> table: SLtoVLMappingTable (sl_to_vl0 .. sl_to_vl15); a switch's ports default to 0"},
			{"vlarb", smpVLArb, "vlarb(target [, port [, block]]) -> table: VLArbitrationTable block (1, 2 low priority; 3, 4 high; default 1): vl0, weight0 .. vl31, weight31"},
			{"portinfo_ext", smpGetter("smp.portinfo_ext", smp.AttrPortInfoExtended, true), "portinfo_ext(target [, port]) -> table: PortInfoExtended (FEC modes) of port"},
			{"mlnxextportinfo", smpGetter("smp.mlnxextportinfo", smp.AttrMlnxExtPortInfo, true), "mlnxextportinfo(target [, port]) -> table: Mellanox ExtendedPortInfo (0xFF90) of port"},
			{"get", smpGet, "get(target, attribute [, modifier]) -> table: any SMP attribute by IBA name (\"PortInfo\", \"SLtoVLMappingTable\"), smpquery alias (\"SL2VLMappingTable\") or ID, with its attribute modifier (default 0)"},
			{"width_name", enumName(smp.WidthName), "width_name(mask) -> string: link width name, \"4X\""},
			{"speed_name", smpSpeedName, "speed_name(speed [, ext_speed]) -> string: link speed name, \"QDR\", \"HDR\""},
			{"state_name", enumName(smp.PortStateName), "state_name(state) -> string: a PortState name, \"Active\""},
			{"phys_state_name", enumName(smp.PhysStateName), "phys_state_name(state) -> string: \"LinkUp\""},
			{"sm_state_name", enumName(smp.SMStateName), "sm_state_name(state) -> string: \"Master\""},
		},
	}
}

// checkTarget reads a target argument ("lid:5", "dr:0,1", "guid:0x...",
// or a LID as a number) as luaTarget reads it.
func checkTarget(L *lua.LState, fn string, n int) engine.Target {
	v := L.Get(n)
	switch v.(type) {
	case lua.LString, lua.LNumber:
	default:
		L.ArgError(n, fmt.Sprintf("target expected (\"lid:N\", \"dr:0,1,...\" or \"guid:0x...\"), got %s", v.Type()))
	}
	t, s, err := luaTarget(v)
	if err != nil {
		// "target "foo": LID "foo" is not a number...: bad target" says
		// the argument twice; the argument's number and role say it once.
		why := strings.TrimPrefix(ErrorText(err), fmt.Sprintf("target %q: ", s))
		if strings.Contains(why, fmt.Sprintf("%q", s)) {
			raise(L, fn, "bad argument #%d (target): %s", n, why)
		}
		raise(L, fn, "bad argument #%d (target %q): %s", n, s, why)
	}
	return t
}

// luaTarget reads a Lua target value, the one way every function takes
// one: a number is a LID, an integer 1..0xbfff; a string is the target
// text diag.ParseAddress reads as diag.AddrTarget ("lid:5", "5",
// "dr:0,1", "guid:0x...", "gid:fd00::2"). s is the value as text, as
// errors quote it.
func luaTarget(v lua.LValue) (t engine.Target, s string, err error) {
	switch v := v.(type) {
	case lua.LNumber:
		if v != lua.LNumber(int64(v)) {
			s = v.String()
			return t, s, fmt.Errorf("target %q: LID %v is not an integer: %w", s, v, engine.ErrBadTarget)
		}
		s = fmt.Sprintf("lid:%d", int64(v))
	case lua.LString:
		s = string(v)
	default:
		return t, "", fmt.Errorf("want a LID or a target string, got %s", v.Type())
	}
	a, err := diag.ParseAddress(diag.AddrTarget, s)
	return a.Target, s, err
}

// optUint reads an optional non-negative integer argument.
func optUint(L *lua.LState, n int, def, limit uint64) uint64 {
	v := L.Get(n)
	if v == lua.LNil {
		return def
	}
	num, ok := v.(lua.LNumber)
	if !ok {
		L.TypeError(n, lua.LTNumber)
	}
	f := float64(num)
	if f < 0 || f != float64(uint64(f)) || uint64(f) > limit {
		L.ArgError(n, fmt.Sprintf("integer 0..%d expected, got %v", limit, num))
	}
	return uint64(f)
}

func checkUint(L *lua.LState, n int, limit uint64) uint64 {
	if L.Get(n) == lua.LNil {
		L.ArgError(n, "integer expected, got no value")
	}
	return optUint(L, n, 0, limit)
}

// smpGetter makes a Get of one attribute whose optional second argument is
// the attribute modifier (a port or block number).
func smpGetter(name string, attr uint16, withMod bool) func(*Env, *lua.LState) int {
	return func(e *Env, L *lua.LState) int {
		t := checkTarget(L, name, 1)
		var mod uint32
		if withMod {
			mod = uint32(optUint(L, 2, 0, 0xff))
		}
		data, err := e.sess.SMP(L.Context(), t, mad.MethodGet, attr, mod, nil)
		if err != nil {
			raise(L, name, "%v", err)
		}
		L.Push(e.layoutTable(smp.LayoutByID(attr), data))
		return 1
	}
}

func smpNodeDesc(e *Env, L *lua.LState) int {
	t := checkTarget(L, "smp.nodedesc", 1)
	data, err := e.sess.SMP(L.Context(), t, mad.MethodGet, smp.AttrNodeDescription, 0, nil)
	if err != nil {
		raise(L, "smp.nodedesc", "%v", err)
	}
	var nd smp.NodeDescription
	if err := nd.UnmarshalBinary(data); err != nil {
		raise(L, "smp.nodedesc", "%v", err)
	}
	L.Push(lua.LString(nd.String()))
	return 1
}

func smpPKeys(e *Env, L *lua.LState) int {
	t := checkTarget(L, "smp.pkeys", 1)
	port := optUint(L, 2, 0, 0xff)
	block := optUint(L, 3, 0, 0x7ff)
	data, err := e.sess.SMP(L.Context(), t, mad.MethodGet, smp.AttrPKeyTable, uint32(port<<16|block), nil)
	if err != nil {
		raise(L, "smp.pkeys", "%v", err)
	}
	var pt smp.PKeyTable
	if err := pt.UnmarshalBinary(data); err != nil {
		raise(L, "smp.pkeys", "%v", err)
	}
	arr := L.CreateTable(len(pt.PKeys), 0)
	for _, k := range pt.PKeys {
		arr.Append(lua.LNumber(k))
	}
	L.Push(arr)
	return 1
}

func smpPKeyTable(e *Env, L *lua.LState) int {
	t := checkTarget(L, "smp.pkey_table", 1)
	keys, err := e.sess.PKeys(L.Context(), t, uint8(optUint(L, 2, 0, 0xff)))
	if err != nil {
		raise(L, "smp.pkey_table", "%v", err)
	}
	arr := L.CreateTable(len(keys), 0)
	for _, k := range keys {
		arr.Append(lua.LNumber(k))
	}
	L.Push(arr)
	return 1
}

func smpGUIDTable(e *Env, L *lua.LState) int {
	t := checkTarget(L, "smp.guid_table", 1)
	guids, err := e.sess.GUIDs(L.Context(), t)
	if err != nil {
		raise(L, "smp.guid_table", "%v", err)
	}
	arr := L.CreateTable(len(guids), 0)
	for _, g := range guids {
		arr.Append(Hex64(g))
	}
	L.Push(arr)
	return 1
}

func smpLFT(e *Env, L *lua.LState) int {
	t := checkTarget(L, "smp.lft", 1)
	block := optUint(L, 2, 0, 0xbff)
	data, err := e.sess.SMP(L.Context(), t, mad.MethodGet, smp.AttrLinearForwardingTable, uint32(block), nil)
	if err != nil {
		raise(L, "smp.lft", "%v", err)
	}
	var lft smp.LinearForwardingTable
	if err := lft.UnmarshalBinary(data); err != nil {
		raise(L, "smp.lft", "%v", err)
	}
	arr := L.CreateTable(len(lft.Ports), 0)
	for _, p := range lft.Ports {
		arr.Append(lua.LNumber(p))
	}
	L.Push(arr)
	return 1
}

// smpGet queries any SMP attribute by name or ID.
func smpGet(e *Env, L *lua.LState) int {
	t := checkTarget(L, "smp.get", 1)
	var l *mad.Layout
	switch v := L.Get(2).(type) {
	case lua.LString:
		l = smp.LayoutByName(string(v))
		if l == nil {
			raise(L, "smp.get", "unknown attribute %q", string(v))
		}
	case lua.LNumber:
		l = smp.LayoutByID(uint16(v))
		if l == nil {
			raise(L, "smp.get", "unknown attribute ID 0x%04x", uint16(v))
		}
	default:
		L.ArgError(2, "attribute name or ID expected, got "+v.Type().String())
	}
	mod := uint32(optUint(L, 3, 0, 0xffffffff))
	data, err := e.sess.SMP(L.Context(), t, mad.MethodGet, l.ID, mod, nil)
	if err != nil {
		raise(L, "smp.get", "%v", err)
	}
	L.Push(e.layoutTable(l, data))
	return 1
}

func smpSL2VL(e *Env, L *lua.LState) int {
	t := checkTarget(L, "smp.sl2vl", 1)
	in := optUint(L, 2, 0, 0xff)
	out := optUint(L, 3, 0, 0xff)
	data, err := e.sess.SMP(L.Context(), t, mad.MethodGet, smp.AttrSLtoVLMappingTable, uint32(in<<8|out), nil)
	if err != nil {
		raise(L, "smp.sl2vl", "%v", err)
	}
	L.Push(e.layoutTable(smp.SLtoVLMappingTableLayout(), data))
	return 1
}

func smpVLArb(e *Env, L *lua.LState) int {
	t := checkTarget(L, "smp.vlarb", 1)
	port := optUint(L, 2, 0, 0xffff)
	block := optUint(L, 3, 1, 4)
	if block == 0 {
		L.ArgError(3, "block 1..4 expected, got 0")
	}
	data, err := e.sess.SMP(L.Context(), t, mad.MethodGet, smp.AttrVLArbitrationTable, uint32(block<<16|port), nil)
	if err != nil {
		raise(L, "smp.vlarb", "%v", err)
	}
	L.Push(e.layoutTable(smp.VLArbitrationTableLayout(), data))
	return 1
}

func enumName(fn func(uint8) string) func(*Env, *lua.LState) int {
	return func(_ *Env, L *lua.LState) int {
		L.Push(lua.LString(fn(uint8(checkUint(L, 1, 0xff)))))
		return 1
	}
}

func smpSpeedName(_ *Env, L *lua.LState) int {
	speed := uint8(checkUint(L, 1, 0xff))
	ext := uint8(optUint(L, 2, 0, 0xff))
	L.Push(lua.LString(smp.LinkSpeedText(speed, ext)))
	return 1
}
