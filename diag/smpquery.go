package diag

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// ToolError is a failure the C tool reports with IBEXIT ("TOOL: iberror:
// failed: MSG" on stderr, exit status 255): the message is the C tool's.
// Err, when set, is the engine's error underneath (for --debug and -v).
type ToolError struct {
	Msg string
	Err error
}

func (e *ToolError) Error() string {
	if e.Err != nil {
		return e.Msg + " (" + e.Err.Error() + ")"
	}
	return e.Msg
}

func (e *ToolError) Unwrap() error { return e.Err }

// strerror is what the C tools' strerror says of a transaction that
// failed with err: umad's ETIMEDOUT ("Connection timed out") for one
// nobody answered, else err's text.
func strerror(err error) string {
	if te := (*engine.TimeoutError)(nil); errors.As(err, &te) {
		return "Connection timed out"
	}
	return err.Error()
}

// SMPQueryOptions are smpquery's: the operation, its target and its
// arguments (a port number for the ops that take one).
type SMPQueryOptions struct {
	// Op is the operation as typed: its name or alias, any case
	// ("portinfo", "PI", "NodeDesc").
	Op     string        `pos:"0" lua:"op"`
	Target engine.Target `pos:"1" lua:"target"`
	// Port is the op's [<portnum>] argument (0 when not given).
	Port int `pos:"2" lua:"port" max:"255"`
	// Combined is -c: the destination is a combined route, two
	// arguments on the command line ("6 0,12": LID-routed to LID 6, then
	// directed out of its port 12), the op's port the one after; in Lua
	// the target says it ("lid:6+dr:0,12") and this key is not needed.
	Combined bool `flag:"c,combined" help:"use Combined route address argument" lua:"combined"`
	// Extended is -x: PortInfo asked with attribute modifier bit 31 set
	// (extended speeds).
	Extended bool `flag:"x,extended" help:"use extended speeds" lua:"extended"`
	// ShowKeys is -K: PortInfo's M_Key printed as the SMA returned it,
	// where smpquery otherwise prints "<not displayed>" (the text only: a Lua
	// result's fields never carry the key).
	ShowKeys bool `flag:"K,show_keys" help:"display security keys in output" lua:"show_keys"`
	// NodeNames is --node-name-map (NodeDesc prints the mapped name);
	// nil: the Env's.
	NodeNames map[uint64]string
}

// smpQueryTool is smpquery.
var smpQueryTool = NewTool(Tool{
	Name:     "smpquery",
	Lua:      "smpquery",
	Summary:  "query one SMA attribute of a node or port (nodeinfo, portinfo, switchinfo, pkeys, sl2vl, vlarb, guids, ...)",
	Args:     "<op> <dest dr_path|lid|guid> [op params]\n\nSupported ops (and aliases, case insensitive):\n" + strings.TrimRight(SMPQueryUsage(), "\n"),
	MinArgs:  2,
	Want:     "want <op> and <dest>",
	Example:  []string{"nodeinfo", "1"},
	Combined: "combined",
	Check: func(opts any) error {
		o := opts.(*SMPQueryOptions)
		if SMPQueryOp(o.Op) == "" {
			return &ToolError{Msg: "operation '" + o.Op + "' not supported"}
		}
		return nil
	},
	LuaDoc: `smpquery({op = "portinfo", target = "lid:1" | 1 | "dr:0,1" | "lid:1+dr:0,5", port = 1, extended = false}) -> {op, target, portid, port, fields = {{name, value, text}, ...} | node_desc | pkeys, pkey_cap | sl2vl | vlarb | guids, guid_cap}: ` +
		`one smpquery op (NodeInfo, NodeDesc, PortInfo, PortInfoExtended, SwitchInfo, PKeyTable, SL2VLTable, VLArbitration, GUIDInfo, MlnxExtPortInfo, or their aliases), fields named as smpquery prints them`,
	LuaExample: `local pi = diag.smpquery{op = "portinfo", target = 1, port = 1}
for _, f in ipairs(pi.fields) do if f.name == "LinkState" then print(f.text) end end`,
}, SMPQueryOptions{}, SMPQueryRun, BuilderText(WriteSMPQuery))

// smpOps are smpquery's operations: name, alias, and whether they take a
// port number.
var smpOps = []struct {
	Name, Alias string
	Port        bool
}{
	{"NodeInfo", "NI", false}, {"NodeDesc", "ND", false}, {"PortInfo", "PI", true},
	{"PortInfoExtended", "PIE", true}, {"SwitchInfo", "SI", false}, {"PKeyTable", "PKeys", true},
	{"SL2VLTable", "SL2VL", true}, {"VLArbitration", "VLArb", true}, {"GUIDInfo", "GI", false},
	{"MlnxExtPortInfo", "MEPI", true},
}

// SMPQueryOp returns smpquery's name for op (matched case-insensitively
// on name or alias), "" when smpquery has no such op.
func SMPQueryOp(op string) string {
	for _, o := range smpOps {
		if strings.EqualFold(op, o.Name) || strings.EqualFold(op, o.Alias) {
			return o.Name
		}
	}
	return ""
}

// SMPQueryUsage is the ops list of smpquery's usage text.
func SMPQueryUsage() string {
	var b strings.Builder
	for _, o := range smpOps {
		fmt.Fprintf(&b, "  %s (%s) <addr>", o.Name, o.Alias)
		if o.Port {
			b.WriteString(" [<portnum>]")
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// SMPQuery is what one smpquery op read. Which members are set depends on
// Op.
type SMPQuery struct {
	Op     string `json:"op"`
	Target string `json:"target"` // engine target, "lid:3", "dr:0,1"
	PortID string `json:"portid"` // libibmad's "Lid 3" / "DR path ..."
	Port   int    `json:"port"`
	// Fields are the attribute's fields (NodeInfo, PortInfo, SwitchInfo,
	// PortInfoExtended, MlnxExtPortInfo) as libibmad names and shows them.
	Fields []Field `json:"fields,omitempty"`
	// NodeDesc is the node description (NodeDesc), node-name-map applied.
	NodeDesc *string `json:"node_desc,omitempty"`
	// PKeys and PKeyCap are PKeyTable's entries and capacity.
	PKeys   []uint16 `json:"pkeys,omitempty"`
	PKeyCap *int     `json:"pkey_cap,omitempty"`
	// SL2VL are the SL2VLTable rows: a CA's one, a switch's one per input
	// port to output port Port.
	SL2VL []SL2VLRow `json:"sl2vl,omitempty"`
	// VLArb is VLArbitration's port: its capacities and tables.
	VLArb *VLArb `json:"vlarb,omitempty"`
	// GUIDs and GUIDCap are GUIDInfo's entries and capacity.
	GUIDs   []GUID `json:"guids,omitempty"`
	GUIDCap *int   `json:"guid_cap,omitempty"`

	// Raw is the attribute's data (the fields' source), for the text.
	raw []byte
	// showKeys is -K: the text shows PortInfo's M_Key.
	showKeys bool
	// current is --diags-version current: PortInfo's three LinkSpeedExt*2
	// rows on every port, as current rdma-core's dump_portinfo prints them.
	current bool
}

// SL2VLRow is one SLtoVLMappingTable: the VL of each SL 0..15.
type SL2VLRow struct {
	In  int       `json:"in"`
	Out int       `json:"out"`
	VL  [16]uint8 `json:"vl"`
}

// VLArb is one port's VL arbitration: LowCap and HighCap entries of the
// low and high priority tables (nil Low and High with NoTables: a
// switch's base port 0 has none).
type VLArb struct {
	NoTables bool        `json:"no_tables,omitempty"`
	LowCap   int         `json:"low_cap"`
	HighCap  int         `json:"high_cap"`
	Low      []VLArbElem `json:"low,omitempty"`
	High     []VLArbElem `json:"high,omitempty"`
}

// VLArbElem is one VL arbitration table entry.
type VLArbElem struct {
	VL     uint8 `json:"vl"`
	Weight uint8 `json:"weight"`
}

// smpGet reads attr with mod from t; failures are the C tool's message.
func smpGet(ctx context.Context, s *engine.Session, t engine.Target, attr uint16, mod uint32, msg string) ([]byte, error) {
	d, err := s.SMP(ctx, t, mad.MethodGet, attr, mod, nil)
	if err != nil {
		// A timeout, an unreachable target and a bad MAD status all fail
		// smp_query_via.
		return nil, &ToolError{Msg: msg, Err: err}
	}
	return d, nil
}

// SMPQueryRun runs one smpquery op as smpquery does (the same SMPs, in
// the same order).
func SMPQueryRun(ctx context.Context, env *Env, o SMPQueryOptions) (*SMPQuery, error) {
	if env == nil || env.Session == nil {
		return nil, fmt.Errorf("diag: smpquery: no session")
	}
	s := env.Session
	op := SMPQueryOp(o.Op)
	if op == "" {
		return nil, &ToolError{Msg: fmt.Sprintf("operation '%s' not supported", o.Op)}
	}
	t, err := resolveGUID(ctx, s, o.Target)
	if err != nil {
		return nil, err
	}
	q := &SMPQuery{Op: op, Target: o.Target.String(), PortID: PortID(t), Port: o.Port, showKeys: o.ShowKeys, current: env.current()}
	if t.Kind == engine.ByDR && t.LID != 0 {
		q.PortID = CombinedPortID(t, s.Port().LID)
	}
	fail := func(err error) (*SMPQuery, error) {
		var te *ToolError
		if errors.As(err, &te) {
			te.Msg = "operation " + o.Op + ": " + te.Msg
		}
		return nil, err
	}
	switch op {
	case "NodeInfo":
		d, err := smpGet(ctx, s, t, smp.AttrNodeInfo, 0, "node info query failed")
		if err != nil {
			return fail(err)
		}
		q.raw, q.Fields = d, fieldsOf(d, nodeInfoFields)
	case "NodeDesc":
		ni, err := smpGet(ctx, s, t, smp.AttrNodeInfo, 0, "node info query failed")
		if err != nil {
			return fail(err)
		}
		nd, err := smpGet(ctx, s, t, smp.AttrNodeDescription, 0, "node desc query failed")
		if err != nil {
			return fail(err)
		}
		guid := decode[smp.NodeInfo](ni).NodeGUID
		names := o.NodeNames
		if names == nil {
			names = env.NodeNames
		}
		name := remapName(names, guid, cleanDesc(nd))
		q.NodeDesc = &name
	case "PortInfo":
		mod := uint32(o.Port)
		if o.Extended {
			mod |= 1 << 31
		}
		d, err := smpGet(ctx, s, t, smp.AttrPortInfo, mod, "port info query failed")
		if err != nil {
			return fail(err)
		}
		q.raw, q.Fields = d, fieldsOf(d, portInfoRows(d, q.current))
	case "SwitchInfo":
		d, err := smpGet(ctx, s, t, smp.AttrSwitchInfo, 0, "switch info query failed")
		if err != nil {
			return fail(err)
		}
		q.raw, q.Fields = d, fieldsOf(d, switchInfoFields)
	case "PKeyTable":
		if err := pkeyTable(ctx, s, t, o.Port, q); err != nil {
			return fail(err)
		}
	case "SL2VLTable":
		if err := sl2vlTable(ctx, s, t, o.Port, q); err != nil {
			return fail(err)
		}
	case "VLArbitration":
		if err := vlarbTable(ctx, s, t, o.Port, q); err != nil {
			return fail(err)
		}
	case "GUIDInfo":
		if err := guidInfo(ctx, s, t, q); err != nil {
			return fail(err)
		}
	case "PortInfoExtended":
		if err := portInfoExtSupported(ctx, s, t, o.Port); err != nil {
			var te *ToolError
			if errors.As(err, &te) && te.Msg != "port info extended not supported" {
				return nil, err // the check's own IBEXIT, without the op
			}
			return fail(err)
		}
		d, err := smpGet(ctx, s, t, smp.AttrPortInfoExtended, uint32(o.Port), "port info extended query failed")
		if err != nil {
			return fail(err)
		}
		q.raw, q.Fields = d, fieldsOf(d, portInfoExtFields)
	case "MlnxExtPortInfo":
		d, err := smpGet(ctx, s, t, smp.AttrMlnxExtPortInfo, uint32(o.Port), "Mellanox ext port info query failed")
		if err != nil {
			return fail(err)
		}
		q.raw, q.Fields = d, fieldsOf(d, mlnxExtPortInfoFields)
	}
	return q, nil
}

// portInfoExtSupported is is_port_info_extended_supported: PortInfo
// (port 0 on a switch) must have CapabilityMask2 and its
// IsPortInfoExtendedSupported bit.
func portInfoExtSupported(ctx context.Context, s *engine.Session, t engine.Target, port int) error {
	ni, err := smpGet(ctx, s, t, smp.AttrNodeInfo, 0, "node info query failed")
	if err != nil {
		return err
	}
	if decode[smp.NodeInfo](ni).NodeType == smp.NodeTypeSwitch {
		port = 0
	}
	pi, err := smpGet(ctx, s, t, smp.AttrPortInfo, uint32(port), "port info query failed")
	if err != nil {
		return err
	}
	if info := decode[smp.PortInfo](pi); info.CapabilityMask&smp.CapIsCapabilityMask2Supported == 0 ||
		info.CapabilityMask2&smp.Cap2IsPortInfoExtendedSupported == 0 {
		return &ToolError{Msg: "port info extended not supported"}
	}
	return nil
}

// cleanDesc is clean_nodedesc: the NUL-terminated text, every
// non-printable byte a space.
func cleanDesc(nd []byte) string {
	b := make([]byte, 0, len(nd))
	for _, c := range nd {
		if c == 0 {
			break
		}
		if c < 0x20 || c > 0x7e {
			c = ' '
		}
		b = append(b, c)
	}
	return string(b)
}

func pkeyTable(ctx context.Context, s *engine.Session, t engine.Target, port int, q *SMPQuery) error {
	ni, err := smpGet(ctx, s, t, smp.AttrNodeInfo, 0, "node info query failed")
	if err != nil {
		return err
	}
	node := decode[smp.NodeInfo](ni)
	if port > int(node.NumPorts) {
		return &ToolError{Msg: "invalid port number"}
	}
	var n int
	if node.NodeType == smp.NodeTypeSwitch && port != 0 {
		si, err := smpGet(ctx, s, t, smp.AttrSwitchInfo, 0, "switch info failed")
		if err != nil {
			return err
		}
		n = int(decode[smp.SwitchInfo](si).PartitionEnforcementCap)
	} else {
		n = int(node.PartitionCap)
	}
	blocks := (n + 31) / 32
	for i := 0; i < blocks; i++ {
		d, err := smpGet(ctx, s, t, smp.AttrPKeyTable, uint32(i)|uint32(port)<<16, "pkey table query failed")
		if err != nil {
			return err
		}
		k := 32
		if i+1 == blocks {
			k = ((n + 7 - i*32) / 8) * 8
		}
		tbl := decode[smp.PKeyTable](d)
		q.PKeys = append(q.PKeys, tbl.PKeys[:k]...)
	}
	q.PKeyCap = &n
	return nil
}

func sl2vlTable(ctx context.Context, s *engine.Session, t engine.Target, port int, q *SMPQuery) error {
	ni, err := smpGet(ctx, s, t, smp.AttrNodeInfo, 0, "node info query failed")
	if err != nil {
		return err
	}
	node := decode[smp.NodeInfo](ni)
	nports := int(node.NumPorts)
	if port > nports {
		return &ToolError{Msg: "invalid port number"}
	}
	entry := func(in, out int) error {
		d, err := smpGet(ctx, s, t, smp.AttrSLtoVLMappingTable, uint32(in<<8|out), "slvl query failed")
		if err != nil {
			return err
		}
		r := SL2VLRow{In: in, Out: out, VL: decode[smp.SLtoVLMappingTable](d).VL}
		q.SL2VL = append(q.SL2VL, r)
		return nil
	}
	if node.NodeType != smp.NodeTypeSwitch {
		return entry(0, 0)
	}
	for i := 0; i <= nports; i++ {
		if err := entry(i, port); err != nil {
			return err
		}
	}
	return nil
}

func vlarbTable(ctx context.Context, s *engine.Session, t engine.Target, port int, q *SMPQuery) error {
	va := &VLArb{}
	q.VLArb = va
	if port == 0 {
		ni, err := smpGet(ctx, s, t, smp.AttrNodeInfo, 0, "node info query failed")
		if err != nil {
			return err
		}
		if decode[smp.NodeInfo](ni).NodeType == smp.NodeTypeSwitch {
			si, err := smpGet(ctx, s, t, smp.AttrSwitchInfo, 0, "switch info query failed")
			if err != nil {
				return err
			}
			if !decode[smp.SwitchInfo](si).EnhancedPort0 {
				va.NoTables = true
				return nil
			}
		}
	}
	pi, err := smpGet(ctx, s, t, smp.AttrPortInfo, uint32(port), "port info query failed")
	if err != nil {
		return err
	}
	info := decode[smp.PortInfo](pi)
	va.LowCap, va.HighCap = int(info.VLArbitrationLowCap), int(info.VLArbitrationHighCap)
	table := func(offset, cap int) ([]VLArbElem, error) {
		var out []VLArbElem
		for blk := 0; cap > 0; blk++ {
			d, err := smpGet(ctx, s, t, smp.AttrVLArbitrationTable, uint32(offset+blk)<<16|uint32(port), "vl arb query failed")
			if err != nil {
				return out, err
			}
			n := min(cap, 32)
			tbl := decode[smp.VLArbitrationTable](d)
			for i := 0; i < n; i++ {
				out = append(out, VLArbElem{VL: tbl.VL[i], Weight: tbl.Weight[i]})
			}
			cap -= n
		}
		return out, nil
	}
	if va.LowCap > 0 {
		if va.Low, err = table(1, va.LowCap); err != nil {
			return err
		}
	}
	if va.HighCap > 0 {
		if va.High, err = table(3, va.HighCap); err != nil {
			return err
		}
	}
	return nil
}

func guidInfo(ctx context.Context, s *engine.Session, t engine.Target, q *SMPQuery) error {
	pi, err := smpGet(ctx, s, t, smp.AttrPortInfo, 0, "port info failed")
	if err != nil {
		return err
	}
	n := int(decode[smp.PortInfo](pi).GUIDCap)
	blocks := (n + 7) / 8
	for i := 0; i < blocks; i++ {
		d, err := smpGet(ctx, s, t, smp.AttrGUIDInfo, uint32(i), "guid info query failed")
		if err != nil {
			return err
		}
		k := 8
		if i+1 == blocks {
			k = ((n + 1 - i*8) / 2) * 2
		}
		g := decode[smp.GUIDInfo](d)
		for j := 0; j < k; j++ {
			q.GUIDs = append(q.GUIDs, GUID(g.GUIDs[j]))
		}
	}
	q.GUIDCap = &n
	return nil
}

// WriteSMPQuery prints q as smpquery does.
func WriteSMPQuery(b *strings.Builder, q *SMPQuery) {
	switch q.Op {
	case "NodeInfo":
		fmt.Fprintf(b, "# Node info: %s\n", q.PortID)
		dumpFields(b, q.raw, nodeInfoFields)
	case "NodeDesc":
		name := *q.NodeDesc
		dots := "."
		if l := len(name); l < 32 {
			dots = strings.Repeat(".", 32-l)
		}
		fmt.Fprintf(b, "Node Description:%s%s\n", dots, name)
	case "PortInfo":
		fmt.Fprintf(b, "# Port info: %s port %d\n", q.PortID, q.Port)
		dotLine(b, "Mkey", mkeyText(q.raw, q.showKeys))
		dumpFields(b, q.raw, portInfoRows(q.raw, q.current))
	case "PortInfoExtended":
		fmt.Fprintf(b, "# Port info Extended: %s port %d\n", q.PortID, q.Port)
		dumpFields(b, q.raw, portInfoExt44Fields)
	case "MlnxExtPortInfo":
		fmt.Fprintf(b, "# MLNX ext Port info: %s port %d\n", q.PortID, q.Port)
		dumpFields(b, q.raw, mlnxExtPortInfoFields)
	case "SwitchInfo":
		fmt.Fprintf(b, "# Switch info: %s\n", q.PortID)
		dumpFields(b, q.raw, switchInfoFields)
	case "PKeyTable":
		for i := 0; i < len(q.PKeys); i += 8 {
			fmt.Fprintf(b, "%4d:", i)
			for j := i; j < i+8; j++ {
				v := uint16(0)
				if j < len(q.PKeys) {
					v = q.PKeys[j]
				}
				fmt.Fprintf(b, " 0x%04x", v)
			}
			b.WriteByte('\n')
		}
		fmt.Fprintf(b, "%d pkeys capacity for this port\n", *q.PKeyCap)
	case "SL2VLTable":
		fmt.Fprintf(b, "# SL2VL table: %s\n", q.PortID)
		b.WriteString("#                 SL: |")
		for i := 0; i < 16; i++ {
			fmt.Fprintf(b, "%2d|", i)
		}
		b.WriteByte('\n')
		for _, r := range q.SL2VL {
			fmt.Fprintf(b, "ports: in %2d, out %2d: |", r.In, r.Out)
			for _, vl := range r.VL {
				fmt.Fprintf(b, "%2d|", vl)
			}
			b.WriteByte('\n')
		}
	case "VLArbitration":
		va := q.VLArb
		if va.NoTables {
			fmt.Fprintf(b, "# No VLArbitration tables (BSP0): %s port %d\n", q.PortID, 0)
			return
		}
		fmt.Fprintf(b, "# VLArbitration tables: %s port %d LowCap %d HighCap %d\n", q.PortID, q.Port, va.LowCap, va.HighCap)
		for _, tb := range []struct {
			name string
			es   []VLArbElem
		}{{"Low", va.Low}, {"High", va.High}} {
			if len(tb.es) == 0 {
				continue
			}
			fmt.Fprintf(b, "# %s priority VL Arbitration Table:", tb.name)
			for i := 0; i < len(tb.es); i += 32 {
				chunk := tb.es[i:min(i+32, len(tb.es))]
				b.WriteString("\nVL    : |")
				for _, e := range chunk {
					fmt.Fprintf(b, "0x%-2X|", e.VL)
				}
				b.WriteString("\nWEIGHT: |")
				for _, e := range chunk {
					fmt.Fprintf(b, "0x%-2X|", e.Weight)
				}
				b.WriteByte('\n')
			}
		}
	case "GUIDInfo":
		for i := 0; i+1 < len(q.GUIDs); i += 2 {
			fmt.Fprintf(b, "%4d: 0x%016x 0x%016x\n", i, uint64(q.GUIDs[i]), uint64(q.GUIDs[i+1]))
		}
		fmt.Fprintf(b, "%d guids capacity for this port\n", *q.GUIDCap)
	}
}

// ParsePortArg reads a port argument as strtol(s, NULL, 0) does: leading
// digits in decimal, 0x hex or 0 octal; nothing readable is 0.
func ParsePortArg(s string) int {
	s = strings.TrimSpace(s)
	neg := false
	if strings.HasPrefix(s, "-") {
		neg, s = true, s[1:]
	} else {
		s = strings.TrimPrefix(s, "+")
	}
	base, s := cBase(s)
	v, _ := strconv.ParseInt(s[:cDigits(s, base)], base, 64)
	if neg {
		v = -v
	}
	return int(v)
}

// cBase splits off the base prefix strtol(s, NULL, 0) reads: 0x or 0X
// hexadecimal, a leading 0 octal, else decimal.
func cBase(s string) (int, string) {
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		return 16, s[2:]
	case strings.HasPrefix(s, "0") && len(s) > 1:
		return 8, s[1:]
	}
	return 10, s
}

// cDigits is the length of the run of digits in base at the start of s:
// what strtol reads of it.
func cDigits(s string, base int) int {
	for end := range len(s) {
		c := s[end]
		d := 99
		switch {
		case c >= '0' && c <= '9':
			d = int(c - '0')
		case c >= 'a' && c <= 'f':
			d = int(c-'a') + 10
		case c >= 'A' && c <= 'F':
			d = int(c-'A') + 10
		}
		if d >= base {
			return end
		}
	}
	return len(s)
}

// WriteIBError prints err as the C tools' IBEXIT does, on stdout (where
// they print it): "PROG: iberror: failed: MSG". prog is the name the tool
// was invoked as (argv[0]).
func WriteIBError(b *strings.Builder, prog string, err error) {
	var te *ToolError
	if errors.As(err, &te) {
		fmt.Fprintf(b, "%s: iberror: failed: %s\n", prog, te.Msg)
	}
}
