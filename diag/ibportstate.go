package diag

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// IBPortStateOptions are ibportstate's: the target, the port and the
// operations after them ("query" when none; "enable", "disable", "reset",
// "on", "off", "down", "arm", "active", and the settings "speed N",
// "espeed N", "fdr10 N", "width N", "vls N", "mtu N", "lid N",
// "smlid N", "lmc N", "mkey N", "mkeylease N", "mkeyprot N"). Every
// operation but query is a PortInfo Set (MlnxExtPortInfo for fdr10):
// the engine refuses it on a production fabric without AllowSet, and
// audits it.
type IBPortStateOptions struct {
	Target engine.Target `pos:"0" lua:"target"`
	Port   int           `pos:"1" lua:"port" max:"255"`
	Ops    []string      `pos:"*" lua:"ops"`
	// ShowKeys is -K: the M_Key printed as the SMA returned it, where
	// ibportstate otherwise prints "<not displayed>" (the text only: a Lua
	// result's fields never carry the key).
	ShowKeys bool `flag:"K,show_keys" help:"display security keys in output" lua:"show_keys"`
}

// ibPortStateTool is ibportstate.
var ibPortStateTool = NewTool(Tool{
	Name:    "ibportstate",
	Lua:     "portstate",
	Summary: "a port's state, width and speed (and its peer's); enable, disable, reset, speed, width... are Sets",
	Args: "<dest dr_path|lid|guid> <portnum> [<op>]\n\nSupported ops: enable, disable, on, off, reset, speed, espeed, fdr10,\n" +
		"\twidth, query, down, arm, active, vls, mtu, lid, smlid, lmc,\n\tmkey, mkeylease, mkeyprot\n" +
		"Every op but query is a Set: on the kernel backend it needs --allow-set, and is audited.",
	MinArgs: 2,
	Want:    "want <dest> and <portnum>",
	Example: []string{"1", "1"},
	LuaDoc: `portstate({target = LID | "dr:0", port = 1, ops = {"query"} | {"speed", "1"} | "disable"}) -> {blocks = {{heading, portid, port, attribute, fields}, ...}, notes, warnings}: ` +
		`ibportstate; ops other than query are PortInfo Sets`,
	LuaExample: `local ps = diag.portstate{target = 1, port = 1}
for _, f in ipairs(ps.blocks[1].fields) do print(f.name, f.text) end`,
}, IBPortStateOptions{}, IBPortStateRun, BuilderText(WriteIBPortState))

// ToolWarnings are the warnings the command line prints on stderr.
func (r *IBPortState) ToolWarnings() []string { return r.Warnings }

// PortStateBlock is one PortInfo as ibportstate shows it.
type PortStateBlock struct {
	Heading string  `json:"heading,omitempty"` // "CA/RT PortInfo:", "After PortInfo set:", ...
	PortID  string  `json:"portid"`
	Port    int     `json:"port"`
	Fields  []Field `json:"fields"`
	Attr    string  `json:"attribute"` // PortInfo or MlnxExtPortInfo

	raw  []byte
	fs   []ibField
	mkey bool // the M_Key line (not displayed) goes before MkeyLeasePeriod
}

// IBPortState is what ibportstate printed: PortInfo blocks and the lines
// between them.
type IBPortState struct {
	Blocks []PortStateBlock `json:"blocks"`
	// Notes are ibportstate's own lines ("Disable may be irreversible",
	// "Port is already in enable state").
	Notes []string `json:"notes,omitempty"`
	// Warnings are its stderr warnings (peer ports at a lower width or
	// speed than both enable).
	Warnings []string `json:"warnings,omitempty"`

	text     strings.Builder
	showKeys bool // -K
	current  bool // --diags-version current
}

var portStateOps = map[string]bool{"query": true, "enable": true, "reset": true, "disable": true, "down": true,
	"arm": true, "active": true, "on": true, "off": true}

var portStateSettings = []string{"speed", "espeed", "fdr10", "width", "vls", "mtu", "lid", "smlid", "lmc", "mkey", "mkeylease", "mkeyprot"}

// portStateFields are the PortInfo fields show_port_info prints, before
// the extended speeds and M_Key ones.
var (
	psStates   = []ibField{portInfoField("LinkState"), portInfoField("PhysLinkState")}
	psAddrs    = []ibField{portInfoField("Lid"), portInfoField("SMLid"), portInfoField("LMC")}
	psLink     = []ibField{portInfoField("LinkWidthSupported"), portInfoField("LinkWidthEnabled"), portInfoField("LinkWidthActive"), portInfoField("LinkSpeedSupported"), portInfoField("LinkSpeedEnabled"), portInfoField("LinkSpeedActive")}
	psExtSpeed = []ibField{portInfoField("LinkSpeedExtSupported"), portInfoField("LinkSpeedExtEnabled"), portInfoField("LinkSpeedExtActive")}
	psMKey     = []ibField{portInfoField("MkeyLeasePeriod"), portInfoField("ProtectBits")}
	// psExtSpeed2 are the XDR rows current rdma-core's show_port_info
	// prints after the extended speeds where get_port_info's espeed_cap
	// has IsExtendedSpeeds2Supported (psXDR), in its order.
	psExtSpeed2 = []ibField{portInfoXDRFields[1], portInfoXDRFields[2], portInfoXDRFields[0]}
)

// psCaps is get_port_info's espeed_cap: psExt where the node has extended
// speeds, psXDR where its CapabilityMask2 has IsExtendedSpeeds2Supported
// (current rdma-core; infiniband-diags 44 knows only the first).
type psCaps uint8

const (
	psExt psCaps = 1 << iota
	psXDR
)

func portInfoField(name string) ibField { return ibNamed(portInfoFields, name) }

// IBPortStateRun runs ibportstate.
func IBPortStateRun(ctx context.Context, env *Env, o IBPortStateOptions) (*IBPortState, error) {
	if env == nil || env.Session == nil {
		return nil, fmt.Errorf("diag: ibportstate: no session")
	}
	s := env.Session
	r := &IBPortState{showKeys: o.ShowKeys, current: env.current()}
	op := ""
	set := map[string]uint64{}
	for i := 0; i < len(o.Ops); i++ {
		a := o.Ops[i]
		if portStateOps[a] {
			if op != "" {
				return r, &ToolError{Msg: a + " only one of: query, enable, disable, reset, down, arm, active, can be specified"}
			}
			op = a
			continue
		}
		known := false
		for _, n := range portStateSettings {
			known = known || n == a
		}
		if !known {
			return r, &ToolError{Msg: "invalid operation: " + a}
		}
		if i++; i >= len(o.Ops) {
			return r, &ToolError{Msg: a + " requires an additional parameter"}
		}
		v := ParseMask(o.Ops[i])
		if err := checkPortSetting(a, v, o.Ops[i]); err != nil {
			return r, err
		}
		set[a] = v
	}
	if op == "" {
		op = "query"
	}
	t, err := resolveGUID(ctx, s, o.Target)
	if err != nil {
		return r, err
	}
	ni, err := s.SMP(ctx, t, mad.MethodGet, smp.AttrNodeInfo, 0, nil)
	if err != nil {
		return r, &ToolError{Msg: "smp query nodeinfo failed", Err: err}
	}
	isSwitch := decode[smp.NodeInfo](ni).NodeType == smp.NodeTypeSwitch
	_, mk := set["mkey"]
	_, ml := set["mkeylease"]
	_, mp := set["mkeyprot"]
	if (mk || ml || mp) && isSwitch && o.Port != 0 {
		return r, &ToolError{Msg: "Can't set M_Key fields on switch port != 0"}
	}
	changing := op != "query" || len(set) > 0
	kind := "CA/RT"
	if isSwitch {
		kind = "Switch"
	}
	heading := kind + " PortInfo:"
	if changing {
		heading = "Initial " + heading
	}
	pid := PortID(t)
	r.text.WriteString(heading + "\n")
	pi, caps, err := portStateInfo(ctx, s, t, o.Port, isSwitch)
	if err != nil {
		return r, err
	}
	r.show("", pid, o.Port, pi, caps, isSwitch)
	r.Blocks[len(r.Blocks)-1].Heading = heading
	mlnx := mlnxExtPortInfoSupported(ni)
	var mepi []byte
	if mlnx {
		if mepi, err = s.SMP(ctx, t, mad.MethodGet, smp.AttrMlnxExtPortInfo, uint32(o.Port), nil); err != nil {
			return r, &ToolError{Msg: "smp query ext portinfo failed", Err: err}
		}
		r.showMlnx(pid, o.Port, mepi)
	}
	if changing {
		return r, r.setPortState(ctx, s, t, o.Port, op, set, pi, mepi, caps, isSwitch)
	}
	if !isSwitch || o.Port == 0 || decode[smp.PortInfo](pi).PortState != smp.PortStateActive {
		return r, nil
	}
	return r, r.checkPeer(ctx, s, t, o.Port, pi, caps)
}

func checkPortSetting(name string, v uint64, arg string) error {
	bad := ""
	switch name {
	case "speed":
		if v > 15 {
			bad = fmt.Sprintf("invalid speed value %d", v)
		}
	case "espeed":
		if v > 31 {
			bad = fmt.Sprintf("invalid extended speed value %d", v)
		}
	case "fdr10":
		if v > 1 {
			bad = fmt.Sprintf("invalid fdr10 speed value %d", v)
		}
	case "width":
		if v > 31 && v != 255 {
			bad = fmt.Sprintf("invalid width value %d", v)
		}
	case "vls":
		if v == 0 || v > 5 {
			bad = fmt.Sprintf("invalid vls value %d", v)
		}
	case "mtu":
		if v == 0 || v > 5 {
			bad = fmt.Sprintf("invalid mtu value %d", v)
		}
	case "lid", "smlid":
		if v == 0 || v >= 0xc000 {
			bad = fmt.Sprintf("invalid %s value 0x%x", name, v)
		}
	case "lmc":
		if v > 7 {
			bad = fmt.Sprintf("invalid lmc value %d", v)
		}
	case "mkey":
		if _, err := strconv.ParseUint(arg, 0, 64); err != nil {
			bad = "Bad new M_Key\n" // ibportstate would prompt; ibscript reads no key from a terminal
		}
	case "mkeylease":
		if v > 0xffff {
			bad = fmt.Sprintf("invalid mkey lease time %d", v)
		}
	case "mkeyprot":
		if v > 3 {
			bad = fmt.Sprintf("invalid mkey protection bit setting %d", v)
		}
	}
	if bad != "" {
		return &ToolError{Msg: bad}
	}
	return nil
}

// portStateInfo is get_port_info: the port's PortInfo, and whether the
// node has extended speeds and XDR (port 0's capability masks on a switch).
func portStateInfo(ctx context.Context, s *engine.Session, t engine.Target, port int, isSwitch bool) ([]byte, psCaps, error) {
	var p0 []byte
	if isSwitch {
		var err error
		if p0, err = s.SMP(ctx, t, mad.MethodGet, smp.AttrPortInfo, 0, nil); err != nil {
			return nil, 0, &ToolError{Msg: "smp query port 0 portinfo failed", Err: err}
		}
	}
	pi, err := s.SMP(ctx, t, mad.MethodGet, smp.AttrPortInfo, uint32(port), nil)
	if err != nil {
		return nil, 0, &ToolError{Msg: "smp query portinfo failed", Err: err}
	}
	if p0 == nil {
		p0 = pi
	}
	var caps psCaps
	c := decode[smp.PortInfo](p0)
	if c.CapabilityMask&smp.CapIsExtendedSpeedsSupported != 0 {
		caps |= psExt
	}
	if c.CapabilityMask&smp.CapIsCapabilityMask2Supported != 0 && c.CapabilityMask2&smp.Cap2IsExtendedSpeeds2Supported != 0 {
		caps |= psXDR
	}
	return pi, caps, nil
}

// mlnxExtPortInfoSupported is smp.MlnxExtPortInfoSupported of a NodeInfo.
func mlnxExtPortInfoSupported(ni []byte) bool {
	n := decode[smp.NodeInfo](ni)
	return smp.MlnxExtPortInfoSupported(n.VendorID, n.DeviceID)
}

func (r *IBPortState) show(heading, pid string, port int, pi []byte, caps psCaps, isSwitch bool) {
	fs := concat(psStates, psAddrs, psLink)
	if caps&psExt != 0 {
		fs = concat(fs, psExtSpeed)
	}
	if caps&psXDR != 0 {
		fs = concat(fs, psExtSpeed2)
	}
	n := len(fs)
	b := PortStateBlock{Heading: heading, PortID: pid, Port: port, Attr: "PortInfo", raw: pi, fs: fs}
	if !isSwitch || port == 0 {
		b.mkey = true
		b.fs = concat(b.fs, psMKey)
	}
	b.Fields = fieldsOf(pi, b.fs)
	r.Blocks = append(r.Blocks, b)
	t := &r.text
	if heading != "" {
		t.WriteString(heading)
		t.WriteByte('\n')
	}
	fmt.Fprintf(t, "# Port info: %s port %d\n", pid, port)
	dumpFields(t, pi, b.fs[:n])
	if b.mkey {
		dotLine(t, "Mkey", mkeyText(pi, r.showKeys))
		dumpFields(t, pi, b.fs[n:])
	}
}

func (r *IBPortState) showMlnx(pid string, port int, d []byte) {
	r.Blocks = append(r.Blocks, PortStateBlock{PortID: pid, Port: port, Attr: "MlnxExtPortInfo", Fields: fieldsOf(d, mlnxExtPortInfoFields), raw: d, fs: mlnxExtPortInfoFields})
	fmt.Fprintf(&r.text, "# MLNX ext Port info: %s port %d\n", pid, port)
	dumpFields(&r.text, d, mlnxExtPortInfoFields)
}

func (r *IBPortState) note(s string) {
	r.Notes = append(r.Notes, s)
	r.text.WriteString(s)
	r.text.WriteByte('\n')
}

// setPortState builds and sends the PortInfo Set as ibportstate does.
func (r *IBPortState) setPortState(ctx context.Context, s *engine.Session, t engine.Target, port int, op string, set map[string]uint64, pi, mepi []byte, caps psCaps, isSwitch bool) error {
	d := append([]byte(nil), pi...)
	put := func(name string, v uint64) {
		portInfoField(name).f.Put(d, v)
	}
	info := decode[smp.PortInfo](pi)
	phys := info.PortPhysicalState
	if _, ok := set["lid"]; !ok {
		if v := info.LID; v == 0 || v == 0xffff {
			put("Lid", 0x1234)
		}
	}
	if _, ok := set["smlid"]; !ok {
		if v := info.MasterSMLID; v == 0 || v == 0xffff {
			put("SMLid", 0x1234)
		}
	}
	put("LinkState", 0)
	put("PhysLinkState", 0)
	switch op {
	case "on":
		if phys != 3 {
			r.note("Port is already in enable state")
			return nil
		}
		put("PhysLinkState", 2)
	case "enable", "reset":
		put("PhysLinkState", 2)
	case "off", "disable":
		r.note("Disable may be irreversible")
		put("PhysLinkState", 3)
	case "down":
		put("LinkState", 1)
	case "arm":
		put("LinkState", 3)
	case "active":
		put("LinkState", 4)
	}
	put("LinkSpeedEnabled", set["speed"])
	put("LinkSpeedExtEnabled", set["espeed"])
	if r.current {
		// Current rdma-core writes espeed's XDR bit to
		// LinkSpeedExtEnabled2 (espeed >> 5, always 0: espeed stays below
		// 32) where 44 sends the field back as it read it.
		ibNamed(portInfoXDRFields, "LinkSpeedExtEnabled2").f.Put(d, set["espeed"]>>5)
	}
	put("LinkWidthEnabled", set["width"])
	for name, field := range map[string]string{"vls": "OperVLs", "mtu": "NeighborMTU", "lid": "Lid", "smlid": "SMLid", "lmc": "LMC", "mkeylease": "MkeyLeasePeriod", "mkeyprot": "ProtectBits"} {
		if v, ok := set[name]; ok {
			put(field, v)
		}
	}
	pid := PortID(t)
	if v, ok := set["fdr10"]; ok {
		m := make([]byte, mad.SMPDataLen)
		copy(m, mepi)
		ibNamed(mlnxExtPortInfoFields, "StateChangeEnable").f.Put(m, 1)
		ibNamed(mlnxExtPortInfoFields, "LinkSpeedEnabled").f.Put(m, v)
		resp, err := s.SMP(ctx, t, mad.MethodSet, smp.AttrMlnxExtPortInfo, uint32(port), m)
		if err != nil {
			return &ToolError{Msg: "smp set MLNX ext portinfo failed", Err: err}
		}
		r.text.WriteString("\nAfter MLNXExtendedPortInfo set:\n")
		r.showMlnx(pid, port, resp)
	}
	if v, ok := set["mkey"]; ok {
		mkey, _ := smp.PortInfoLayout().Field("M_Key")
		mkey.Put(d, v)
	}
	mod := uint32(port)
	if caps&psExt != 0 {
		mod |= 1 << 31
	}
	resp, err := s.SMP(ctx, t, mad.MethodSet, smp.AttrPortInfo, mod, d)
	if err != nil {
		return &ToolError{Msg: "smp set portinfo failed", Err: err}
	}
	r.text.WriteString("\n")
	r.show("After PortInfo set:", pid, port, resp, caps, isSwitch)
	return nil
}

// checkPeer is ibportstate's query of an active switch port: the peer
// port's PortInfo one hop out of it, and warnings when the link runs
// below what both ends enable.
func (r *IBPortState) checkPeer(ctx context.Context, s *engine.Session, t engine.Target, port int, pi []byte, caps psCaps) error {
	var peer engine.Target
	var pid string
	switch t.Kind {
	case engine.ByDR:
		if len(t.Path) >= 64 {
			return &ToolError{Msg: "Too many hops"}
		}
		peer = engine.Target{Kind: engine.ByDR, Path: append(append([]uint8(nil), t.Path...), uint8(port))}
		pid = PortID(peer)
	default:
		// ibportstate asks LID-routed to the switch, then directed one
		// hop out (DrSLID the local port's LID): the engine speaks pure
		// directed routes, so the switch's route is followed through the
		// LFTs first.
		lt, err := s.LIDOf(ctx, t)
		if err != nil {
			return &ToolError{Msg: "could not resolve self", Err: err}
		}
		path, err := drPathTo(ctx, s, lt.LID)
		if err != nil {
			return &ToolError{Msg: "smp query nodeinfo failed", Err: err}
		}
		peer = engine.Target{Kind: engine.ByDR, Path: append(path, uint8(port))}
		pid = fmt.Sprintf("Lid %d DR path slid %d; dlid 65535; 0,%d", lt.LID, s.Port().LID, port)
	}
	ni, err := s.SMP(ctx, peer, mad.MethodGet, smp.AttrNodeInfo, 0, nil)
	if err != nil {
		return &ToolError{Msg: "smp query nodeinfo failed", Err: err}
	}
	node := decode[smp.NodeInfo](ni)
	peerSwitch := node.NodeType == smp.NodeTypeSwitch
	peerPort := int(node.LocalPortNum)
	r.text.WriteString("Peer PortInfo:\n")
	ppi, pcaps, err := portStateInfo(ctx, s, peer, peerPort, peerSwitch)
	if err != nil {
		return err
	}
	var pm []byte
	if mlnxExtPortInfoSupported(ni) {
		if pm, err = s.SMP(ctx, peer, mad.MethodGet, smp.AttrMlnxExtPortInfo, uint32(peerPort), nil); err != nil {
			return &ToolError{Msg: "smp query ext portinfo failed", Err: err}
		}
	}
	r.show("", pid, peerPort, ppi, pcaps, peerSwitch)
	r.Blocks[len(r.Blocks)-1].Heading = "Peer PortInfo:"
	if pm != nil {
		r.showMlnx(pid, peerPort, pm)
	}
	pick := func(en, sup, all uint8) uint8 {
		if en == all {
			return sup
		}
		return en
	}
	info, peerInfo := decode[smp.PortInfo](pi), decode[smp.PortInfo](ppi)
	r.warnBelow("width", pick(info.LinkWidthEnabled, info.LinkWidthSupported, 255),
		pick(peerInfo.LinkWidthEnabled, peerInfo.LinkWidthSupported, 255), info.LinkWidthActive, psWidths)
	r.warnBelow("speed", pick(info.LinkSpeedEnabled, info.LinkSpeedSupported, 15),
		pick(peerInfo.LinkSpeedEnabled, peerInfo.LinkSpeedSupported, 15), info.LinkSpeedActive, psSpeeds)
	switch {
	case caps == 0 || pcaps == 0:
	case (caps|pcaps)&psXDR != 0:
		// Current rdma-core reads the speeds aggregated, each port's own
		// capability masks counting (ibnd_get_agg_linkspeedext*(data,
		// data)); 44, which predates XDR, reads the fields as they are.
		lsea, lsee, lses := smp.AggExtSpeeds(&info, &info)
		_, plsee, plses := smp.AggExtSpeeds(&peerInfo, &peerInfo)
		r.warnBelow("extended speed", linkSpeedExt(lsee, lses), linkSpeedExt(plsee, plses), lsea, psExtSpeeds)
	default:
		r.warnBelow("extended speed", linkSpeedExt(info.LinkSpeedExtEnabled, info.LinkSpeedExtSupported),
			linkSpeedExt(peerInfo.LinkSpeedExtEnabled, peerInfo.LinkSpeedExtSupported), info.LinkSpeedExtActive, psExtSpeeds)
	}
	return nil
}

// linkSpeedExt is ibportstate's get_link_speed_ext: the enabled extended
// speeds, the supported ones where all are enabled (31), the enabled ones
// where XDR (32, aggregated) is among them.
func linkSpeedExt(enabled, supported uint8) uint8 {
	if enabled&smp.ExtSpeedXDR == 0 && enabled == 31 {
		return supported
	}
	return enabled
}

// psRank is one width or speed of ibportstate's validate_width,
// validate_speed and validate_extended_speed, best first.
type psRank struct {
	bit  uint8
	name string
}

var (
	psWidths    = []psRank{{8, "8 (12x)"}, {4, "4 (8x)"}, {2, "2 (4x)"}, {16, "16 (2x)"}, {1, "1 (1x)"}}
	psSpeeds    = []psRank{{4, "4 (10.0 Gbps)"}, {2, "2 (5.0 Gbps)"}, {1, "1 (2.5 Gbps)"}}
	psExtSpeeds = []psRank{{32, "32 (212.5 Gbps)"}, {8, "8 (106.25 Gbps)"}, {4, "4 (53.125 Gbps)"}, {2, "2 (25.78125 Gbps)"}, {1, "1 (14.0625 Gbps)"}}
)

// warnBelow is validate_width, validate_speed and
// validate_extended_speed: a warning when the link runs (active) below
// the best of ranks both ends enable (mine, peer's).
func (r *IBPortState) warnBelow(what string, mine, peer, active uint8, ranks []psRank) {
	for _, x := range ranks {
		if mine&peer&x.bit != 0 {
			if active != x.bit {
				r.Warnings = append(r.Warnings, fmt.Sprintf("Peer ports operating at active %s %d rather than %s", what, active, x.name))
			}
			return
		}
	}
}

// drPathTo follows the LID route from the local port to lid through the
// switches' LFTs and returns it as a directed route ("0" and one egress
// port per hop).
func drPathTo(ctx context.Context, s *engine.Session, lid uint16) ([]uint8, error) {
	path := []uint8{0}
	for hop := 0; hop < 64; hop++ {
		t := engine.Target{Kind: engine.ByDR, Path: path}
		ni, err := s.NodeInfo(ctx, t)
		if err != nil {
			return nil, err
		}
		port := ni.LocalPortNum
		if ni.NodeType == smp.NodeTypeSwitch {
			port = 0
		}
		pi, err := s.PortInfo(ctx, t, port)
		if err != nil {
			return nil, err
		}
		if lid >= pi.LID && uint32(lid) < uint32(pi.LID)+1<<pi.LMC {
			return path, nil
		}
		if ni.NodeType != smp.NodeTypeSwitch {
			if hop > 0 {
				return nil, fmt.Errorf("LID %d: the route ends at a CA (hop %d)", lid, hop)
			}
			path = append(path, ni.LocalPortNum)
			continue
		}
		blk, err := s.LFTBlock(ctx, t, uint32(lid/64))
		if err != nil {
			return nil, err
		}
		out := blk.Ports[lid%64]
		if out == 0 || out == 0xff {
			return nil, fmt.Errorf("LID %d: no route at hop %d", lid, hop)
		}
		path = append(path, out)
	}
	return nil, fmt.Errorf("LID %d: route longer than 64 hops", lid)
}

// WriteIBPortState prints r as ibportstate does.
func WriteIBPortState(b *strings.Builder, r *IBPortState) {
	b.WriteString(r.text.String())
}
