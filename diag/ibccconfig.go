package diag

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// ibccconfig: Sets of the Congestion Control attributes (class 0x21), as
// infiniband-diags' ibccconfig builds and sends them: each operation's
// arguments read as its parseint/parse256/parsecct read them (all of them
// before anything is sent), the payload laid out by the cc layouts, which
// are libibmad's fields, and one Set; SwitchPortCongestionSetting first
// reads the switch's NodeInfo and the block of its port (block port/32),
// changes that port's element and Sets block port/48, as ibccconfig 44
// does. It prints nothing when the agent answers with status 0. Sets go
// through the engine's Set gate (--allow-set on real HCAs).

// ccConfigOp is one ibccconfig operation: its names, its arguments'
// synopsis and its "... config failed" phrase.
type ccConfigOp struct {
	name, alias, args, fail string
	attr                    uint16
}

var ccConfigOps = []ccConfigOp{
	{"CongestionKeyInfo", "CK", "<cckey> <cckeyprotectbit> <cckeyleaseperiod> <cckeyviolations>", "congestion key info config failed", cc.AttrCongestionKeyInfo},
	{"SwitchCongestionSetting", "SS", "<controlmap> <victimmask> <creditmask> <threshold> <packetsize> <csthreshold> <csreturndelay> <markingrate>", "switch congestion setting config failed", cc.AttrSwitchCongestionSetting},
	{"SwitchPortCongestionSetting", "SP", "<valid> <control_type> <threshold> <packet_size> <cong_parm_marking_rate>", "switch port congestion setting config failed", cc.AttrSwitchPortCongestionSetting},
	{"CACongestionSetting", "CS", "<port_control> <control_map> <ccti_timer> <ccti_increase> <trigger_threshold> <ccti_min>", "ca congestion setting config failed", cc.AttrCACongestionSetting},
	{"CongestionControlTable", "CT", "<cctilimit> <index> <cctentry> <cctentry> ...", "congestion control table config failed", cc.AttrCongestionControlTable},
}

// CCConfigOptions are ibccconfig's: the operation (a name or alias, case
// insensitive), the target, the operation's arguments and the CC_Key.
type CCConfigOptions struct {
	Op     string        `pos:"0" lua:"op"`
	Target engine.Target `pos:"1" lua:"target"`
	// Args are the operation's arguments as typed ("0x1F", "0:1").
	Args  []string `pos:"*" lua:"args"`
	CCKey *uint64  `flag:"c,cckey" arg:"<key>" help:"CC key (better: $IBSCRIPT_CCKEY or ibscript's --cckey); never printed" lua:"-" strict:"true"`
}

// ibCCConfigTool is ibccconfig.
var ibCCConfigTool = NewTool(Tool{
	Name:       "ibccconfig",
	Lua:        "ccconfig",
	Summary:    "Set a node's Congestion Control attributes (class 0x21); prints nothing",
	Args:       ccConfigArgs(),
	Exclude:    "D,K",
	MinArgs:    2,
	Want:       "an operation and a destination are needed",
	Unresolved: "can't resolve destination",
	Example:    []string{"CACongestionSetting", "19", "0", "0x3", "150", "1", "0", "0"},
	LuaDoc: `ccconfig({op = "CACongestionSetting", target = "lid:3" | 3, args = {"0", "0x3", "150", "1", "0", "0"}}) -> {op, target, portid, attribute, modifier, data}: ` +
		`one ibccconfig op (SwitchCongestionSetting, SwitchPortCongestionSetting (its first argument the port), CACongestionSetting, CongestionControlTable, or SS SP CS CT; CongestionKeyInfo, which holds the CC_Key, is refused, as cc.set refuses it), ` +
		`the arguments read as ibccconfig reads them; data is the Set's 192 bytes in hex`,
	LuaExample: `local r = diag.ccconfig{op = "CS", target = 19, args = {"0", "0x3", "150", "1", "0", "0"}}
print(r.attribute, r.modifier)`,
}, CCConfigOptions{}, CCConfigRun, BuilderText(func(*strings.Builder, *CCConfig) {}))

// ccConfigArgs is ibccconfig's usage synopsis with its ops.
func ccConfigArgs() string {
	var b strings.Builder
	b.WriteString("[-c key] <op> <lid|guid>\n\nWARNING -- You should understand what you are doing before using this tool.  Misuse of this tool could result in a broken fabric.\n\nSupported ops (and aliases, case insensitive):")
	for _, o := range ccConfigOps {
		fmt.Fprintf(&b, "\n  %s (%s) <lid|guid>", o.name, o.alias)
		if o.attr == cc.AttrSwitchPortCongestionSetting {
			b.WriteString(" <portnum>")
		}
		b.WriteString(" " + o.args)
	}
	return b.String()
}

// CCConfig is the Set ibccconfig sent.
type CCConfig struct {
	Op       string `json:"op"`
	Target   string `json:"target"`
	PortID   string `json:"portid"`
	Attr     string `json:"attribute"`
	Modifier uint32 `json:"modifier"`
	// Data is the Set's attribute data (192 bytes), hex.
	Data string `json:"data"`
}

// CCConfigRun runs ibccconfig's operation o.Op on o.Target. An error is
// a *ToolError with ibccconfig's message.
func CCConfigRun(ctx context.Context, env *Env, o CCConfigOptions) (*CCConfig, error) {
	if env == nil || env.Session == nil {
		return nil, fmt.Errorf("diag: ibccconfig: no session")
	}
	i := slices.IndexFunc(ccConfigOps, func(c ccConfigOp) bool {
		return strings.EqualFold(c.name, o.Op) || strings.EqualFold(c.alias, o.Op)
	})
	if i < 0 {
		return nil, &ToolError{Msg: fmt.Sprintf("operation '%s' not supported", o.Op)}
	}
	op := ccConfigOps[i]
	if env.Script && op.attr == cc.AttrCongestionKeyInfo {
		return nil, fmt.Errorf("diag: ccconfig: CongestionKeyInfo holds the CC_Key, which scripts never handle (set it with ibscript ibccconfig)")
	}
	s := env.Session
	t, err := resolveGUID(ctx, s, o.Target)
	if err != nil {
		return nil, err
	}
	fail := func(msg string, err error) (*CCConfig, error) {
		return nil, &ToolError{Msg: "operation " + o.Op + ": " + msg, Err: err}
	}
	var opts []engine.CallOption
	if o.CCKey != nil { // -c given, 0 too (ibccquery's cckey), over the session's key
		opts = append(opts, engine.CCKey(*o.CCKey))
	}
	payload := make([]byte, 192)
	var mod uint32
	if op.attr == cc.AttrSwitchPortCongestionSetting {
		msg, err := ccPortPayload(ctx, s, t, o.Args, payload, &mod, opts)
		if msg != "" {
			return fail(msg, err)
		}
	} else if msg := ccPayload(op.attr, o.Args, payload, &mod); msg != "" {
		return fail(msg, nil)
	}
	if _, err := s.CC(ctx, t, mad.MethodSet, op.attr, mod, payload, opts...); err != nil {
		return fail(op.fail, err)
	}
	return &CCConfig{Op: op.name, Target: o.Target.String(), PortID: PortID(t), Attr: op.name, Modifier: mod, Data: hex.EncodeToString(payload)}, nil
}

// ccPut stores v in the field name of layout l, in b.
func ccPut(l *mad.Layout, name string, b []byte, v uint64) {
	for _, f := range l.Fields {
		if f.Name == name {
			f.Put(b, v)
			return
		}
	}
	panic("diag: ibccconfig: no field " + name + " in " + l.Name)
}

// ccPayload reads the arguments of the operations but
// SwitchPortCongestionSetting into payload and the Set's modifier, as
// ibccconfig does; a message is ibccconfig's refusal.
func ccPayload(attr uint16, args []string, payload []byte, mod *uint32) string {
	var r ccArgs
	switch attr {
	case cc.AttrCongestionKeyInfo:
		if len(args) != 4 {
			return "invalid number of parameters for CongestionKeyInfo"
		}
		key, protect, lease, viol := r.u64(args[0]), r.u32(args[1]), r.u32(args[2]), r.u32(args[3])
		switch {
		case r.err != "":
			return r.err
		case protect != 0 && protect != 1:
			return "invalid cc_keyprotectbit value"
		case lease > 0xffff:
			return "invalid cc_keyleaseperiod value"
		case viol > 0xffff:
			return "invalid cc_keyviolations value"
		}
		l := cc.CongestionKeyInfoLayout()
		ccPut(l, "CC_Key", payload, key)
		ccPut(l, "CC_KeyProtectBit", payload, uint64(protect))
		ccPut(l, "CC_KeyLeasePeriod", payload, uint64(lease))
		ccPut(l, "CC_KeyViolations", payload, uint64(viol))
	case cc.AttrSwitchCongestionSetting:
		if len(args) != 8 {
			return "invalid number of parameters for SwitchCongestionSetting"
		}
		cmap := r.u32(args[0])
		victim, credit := r.mask256(args[1]), r.mask256(args[2])
		thr, psize, csthr := r.u32(args[3]), r.u32(args[4]), r.u32(args[5])
		shift, mult := r.cct(args[6])
		rate := r.u32(args[7])
		if r.err != "" {
			return r.err
		}
		l := cc.SwitchCongestionSettingLayout()
		ccPut(l, "Control_Map", payload, uint64(cmap))
		copy(payload[4:36], victim[:])
		copy(payload[36:68], credit[:])
		ccPut(l, "Threshold", payload, uint64(thr))
		ccPut(l, "Packet_Size", payload, uint64(psize))
		ccPut(l, "CS_Threshold", payload, uint64(csthr))
		ccPut(l, "CS_ReturnDelay", payload, uint64(mult|shift<<14))
		ccPut(l, "Marking_Rate", payload, uint64(rate))
	case cc.AttrCACongestionSetting:
		if len(args) != 6 {
			return "invalid number of parameters for CACongestionSetting"
		}
		var v [6]uint32
		for i := range v {
			v[i] = r.u32(args[i])
		}
		if r.err != "" {
			return r.err
		}
		l := cc.CACongestionSettingLayout()
		ccPut(l, "Port_Control", payload, uint64(v[0]))
		ccPut(l, "Control_Map", payload, uint64(v[1]))
		for sl := range 16 {
			if v[1]&(1<<sl) == 0 {
				continue
			}
			n := strconv.Itoa(sl)
			ccPut(l, "CCTI_Timer"+n, payload, uint64(v[2]))
			ccPut(l, "CCTI_Increase"+n, payload, uint64(v[3]))
			ccPut(l, "Trigger_Threshold"+n, payload, uint64(v[4]))
			ccPut(l, "CCTI_Min"+n, payload, uint64(v[5]))
		}
	case cc.AttrCongestionControlTable:
		return ccTablePayload(args, payload, mod)
	}
	return ""
}

// ccTablePayload reads CongestionControlTable's arguments: CCTI_Limit,
// the block (the Set's modifier) and up to 64 shift:multiplier entries.
func ccTablePayload(args []string, payload []byte, mod *uint32) string {
	if len(args) < 2 || len(args) > 66 {
		return "invalid number of parameters for CongestionControlTable"
	}
	var r ccArgs
	limit, index := r.u32(args[0]), r.u32(args[1])
	if r.err != "" {
		return r.err
	}
	if limit != 0 && limit+1 != index*64+uint32(len(args)-2) {
		return "invalid number of cct entries input given ccti_limit and index"
	}
	l := cc.CongestionControlTableLayout()
	entries := args[2:]
	shifts, mults := make([]uint32, len(entries)), make([]uint32, len(entries))
	for i, e := range entries {
		if shifts[i], mults[i] = r.cct(e); r.err != "" {
			return r.err
		}
	}
	ccPut(l, "CCTI_Limit", payload, uint64(limit))
	for i := range entries {
		n := strconv.Itoa(i)
		ccPut(l, "CCT_Shift"+n, payload, uint64(shifts[i]))
		ccPut(l, "CCT_Multiplier"+n, payload, uint64(mults[i]))
	}
	*mod = index
	return ""
}

// ccPortPayload is SwitchPortCongestionSetting's: the port and five
// values read, then the switch's NodeInfo (its type and port count), the
// block of the port (port/32) read and its element changed; the Set
// goes to block port/48, as ibccconfig 44 sends it.
func ccPortPayload(ctx context.Context, s *engine.Session, t engine.Target, args []string, payload []byte, mod *uint32, opts []engine.CallOption) (string, error) {
	if len(args) != 6 {
		return "invalid number of parameters for SwitchPortCongestion", nil
	}
	var r ccArgs
	var v [6]uint32
	for i := range v {
		v[i] = r.u32(args[i])
	}
	if r.err != "" {
		return r.err, nil
	}
	port := v[0]
	ni, err := s.NodeInfo(ctx, t)
	if err != nil {
		return "node info config failed", err
	}
	if ni.NodeType != smp.NodeTypeSwitch {
		return "destination not a switch", nil
	}
	if port > uint32(ni.NumPorts) {
		return "invalid port number specified", nil
	}
	d, err := s.CC(ctx, t, mad.MethodGet, cc.AttrSwitchPortCongestionSetting, port/32, nil, opts...)
	if err != nil {
		return "switch port congestion setting query failed", err
	}
	copy(payload, d)
	l := cc.SwitchPortCongestionSettingLayout()
	n := strconv.Itoa(int(port % 32))
	ccPut(l, "Valid"+n, payload, uint64(v[1]))
	ccPut(l, "Control_Type"+n, payload, uint64(v[2]))
	ccPut(l, "Threshold"+n, payload, uint64(v[3]))
	ccPut(l, "Packet_Size"+n, payload, uint64(v[4]))
	ccPut(l, "Cong_Parm_Marking_Rate"+n, payload, uint64(v[5]))
	*mod = port / 48
	return "", nil
}

// ccArgs reads ibccconfig's arguments, keeping the first error message.
type ccArgs struct{ err string }

// num is parseint/parselonglongint: strtoul(s, &end), the whole
// text a number ("" is 0: strtoul leaves end at its end), "value out of
// range" past 64 bits (ERANGE), a '-' negating as strtoul does.
func (r *ccArgs) num(s string) uint64 {
	if r.err != "" {
		return 0
	}
	v, rest, erange := cStrtoul(s)
	switch {
	case erange:
		r.err = "value out of range"
	case rest != "":
		r.err = "invalid integer input"
	}
	return v
}

// cStrtoul is glibc's strtoul(s, &end): blanks, a sign, then 0x hex,
// 0 octal or decimal digits; rest is what is left at end (all of s when
// no digit was read), erange when the magnitude passes 64 bits.
func cStrtoul(s string) (v uint64, rest string, erange bool) {
	i := 0
	for i < len(s) && strings.IndexByte(" \t\n\v\f\r", s[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	base := uint64(10)
	switch {
	case i+2 < len(s) && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X') && topo.HexDigit(s[i+2]) >= 0:
		base, i = 16, i+2
	case i < len(s) && s[i] == '0':
		base = 8
	}
	start := i
	for ; i < len(s); i++ {
		d := topo.HexDigit(s[i])
		if d < 0 || uint64(d) >= base {
			break
		}
		if v > (^uint64(0)-uint64(d))/base {
			erange = true
		}
		v = v*base + uint64(d)
	}
	if i == start {
		return 0, s, false
	}
	if erange {
		return ^uint64(0), s[i:], true
	}
	if neg {
		v = -v
	}
	return v, s[i:], false
}

func (r *ccArgs) u64(s string) uint64 { return r.num(s) }

// u32 is parseint's value: the unsigned long cut to 32 bits.
func (r *ccArgs) u32(s string) uint32 { return uint32(r.num(s)) }

// cct is parsecct: "shift:multiplier", each parseint'd.
func (r *ccArgs) cct(s string) (shift, mult uint32) {
	if r.err != "" {
		return 0, 0
	}
	a, b, ok := strings.Cut(s, ":")
	if !ok {
		r.err = "ccts are formatted shift:multiplier"
		return 0, 0
	}
	return r.u32(a), r.u32(b)
}

// mask256 is parse256: hex digits (after an optional 0x) as a 256-bit
// big-endian number.
func (r *ccArgs) mask256(s string) (m [32]byte) {
	if r.err != "" {
		return m
	}
	if strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X") {
		s = s[2:]
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdefABCDEF", rune(s[i])) {
			r.err = "invalid hex digit read"
			return m
		}
	}
	if len(s) > 64 {
		r.err = "hex code too long"
		return m
	}
	if len(s)%2 == 1 {
		s = "0" + s
	}
	b, _ := hex.DecodeString(s)
	copy(m[32-len(b):], b)
	return m
}
