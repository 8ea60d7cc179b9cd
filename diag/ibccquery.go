package diag

import (
	"context"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/smp"
)

// ibccquery: the Congestion Control attributes (class 0x21) of a node, as
// infiniband-diags' ibccquery reads and prints them. Its field names are
// libibmad's, which the cc schema keeps, so the fields come from the cc
// layouts: an attribute's own rows, and for its tables the rows of entry 0
// placed relative to the entry, which ibccquery dumps from the entry's
// address as libibmad's dump functions do.

// ccOp is one ibccquery operation.
type ccOp struct {
	name, alias, fail string
	attr              uint16
}

var ccOps = []ccOp{
	{"ClassPortInfo", "CP", "class port info query failed", cc.AttrClassPortInfo},
	{"CongestionInfo", "CI", "congestion info query failed", cc.AttrCongestionInfo},
	{"CongestionKeyInfo", "CK", "congestion key info query failed", cc.AttrCongestionKeyInfo},
	{"CongestionLog", "CL", "congestion log query failed", cc.AttrCongestionLog},
	{"SwitchCongestionSetting", "SS", "switch congestion setting query failed", cc.AttrSwitchCongestionSetting},
	{"SwitchPortCongestionSetting", "SP", "switch port congestion setting query failed", cc.AttrSwitchPortCongestionSetting},
	{"CACongestionSetting", "CS", "ca congestion setting query failed", cc.AttrCACongestionSetting},
	{"CongestionControlTable", "CT", "congestion control table query failed", cc.AttrCongestionControlTable},
	{"Timestamp", "TI", "timestamp query failed", cc.AttrTimestamp},
}

// CCOps lists ibccquery's operations with their aliases, in its order.
func CCOps() [][2]string {
	out := make([][2]string, len(ccOps))
	for i, o := range ccOps {
		out[i] = [2]string{o.name, o.alias}
	}
	return out
}

// ccPortsBlock is how many SwitchPortCongestionSetting elements ibccquery
// reads from one block (192 data bytes of 4); IBA's block holds 32, so
// for ports 32 to 47 of a block it prints bytes past the attribute.
const ccPortsBlock = 48

// CCQueryOptions are ibccquery's: the operation (a name or alias, case
// insensitive), the target, SwitchPortCongestionSetting's port (0: every
// port) and the CC_Key (ibccquery -c; the session's when 0).
type CCQueryOptions struct {
	Op     string        `pos:"0" lua:"op"`
	Target engine.Target `pos:"1" lua:"target"`
	Port   int           `pos:"2" lua:"port" max:"255"`
	CCKey  *uint64       `flag:"c,cckey" arg:"<key>" help:"CC key (better: $IBSCRIPT_CCKEY or ibscript's --cckey); never printed" lua:"-" strict:"true"`
}

// ibCCQueryTool is ibccquery.
var ibCCQueryTool = NewTool(Tool{
	Name:    "ibccquery",
	Lua:     "ccquery",
	Summary: "query a node's Congestion Control attributes (class 0x21)",
	Args:    ccQueryArgs(),
	// Congestion Control is LID-routed: no directed routes.
	Exclude:    "D",
	MinArgs:    2,
	Want:       "an operation and a destination are needed",
	Unresolved: "can't resolve destination",
	Example:    []string{"CongestionInfo", "1"},
	LuaDoc: `ccquery({op = "CongestionInfo", target = "lid:1" | 1, port = nil}) -> {op, target, portid, blocks = {{entry, index, fields = {{name, value, text}, ...}}, ...}}: ` +
		`one ibccquery op (ClassPortInfo, CongestionInfo, CongestionKeyInfo, CongestionLog, SwitchCongestionSetting, SwitchPortCongestionSetting with an optional port, ` +
		`CACongestionSetting, CongestionControlTable, Timestamp, or their aliases CP CI CK CL SS SP CS CT TI), blocks and fields as ibccquery prints them; the CC_Key reads "<not displayed>"`,
	LuaExample: `local q = diag.ccquery{op = "CI", target = 1}
for _, f in ipairs(q.blocks[1].fields) do print(f.name, f.text) end`,
}, CCQueryOptions{}, CCQueryRun, BuilderText(WriteCCQuery))

// ccQueryArgs is ibccquery's usage synopsis with its ops.
func ccQueryArgs() string {
	var b strings.Builder
	b.WriteString("[-c key] <op> <lid|guid> [<portnum>]\n\nSupported ops (and aliases, case insensitive):")
	for _, o := range CCOps() {
		fmt.Fprintf(&b, "\n  %s (%s) <lid|guid>", o[0], o[1])
		if o[0] == "SwitchPortCongestionSetting" {
			b.WriteString(" [<portnum>]")
		}
	}
	return b.String()
}

// CCQuery is what ibccquery prints: blocks of fields, each dumped by one
// libibmad dump call.
type CCQuery struct {
	Op     string    `json:"op"`
	Target string    `json:"target"`
	PortID string    `json:"portid"`
	Blocks []CCBlock `json:"blocks"`
}

// CCBlock is the fields one libibmad dump call prints: the attribute's,
// or an entry of its table, which ibccquery heads with an index line
// (Entry "Port", "SL" or "Entry" and its Index).
type CCBlock struct {
	Entry  string  `json:"entry,omitempty"`
	Index  int     `json:"index"`
	Fields []Field `json:"fields"`
	blank  bool    // ibccquery prints an empty line after it
}

// ccField is a row ibccquery prints: libibmad's name, where it sits
// (relative to the dumped address) and how it is shown.
type ccField struct {
	name string
	f    mad.Field // the layout's row, its Bit relative to the dumped address
	dump mad.Dump  // DumpHex or DumpUint
}

func (f ccField) field(d []byte) Field {
	if f.f.Width > 64 {
		end := min(len(d), f.f.End()/8)
		return Field{Name: f.name, Text: hex.EncodeToString(d[min(end, f.f.Bit/8):end])}
	}
	ib := ibField{name: f.name, f: f.f, dump: f.dump}
	v := ib.get(d)
	out := Field{Name: f.name, Value: v, Text: ib.text(d)}
	if mad.IsKeyField(f.name) {
		out.Value, out.Text = 0, "<not displayed>" // the CC_Key: never shown
	}
	return out
}

func ccFields(fs []ccField, d []byte) []Field {
	out := make([]Field, len(fs))
	for i, f := range fs {
		out[i] = f.field(d)
	}
	return out
}

// ccRows returns l's rows from bit from to bit to (exclusive) as
// ibccquery fields placed relative to bit base (0, or from for a table's
// entry dumped from its own address); the rows of a table's entry 0 lose
// their entry number.
func ccRows(l *mad.Layout, from, to, base int) []ccField {
	var out []ccField
	for _, f := range l.Fields {
		if f.Bit < from || f.Bit >= to {
			continue
		}
		name := f.Name
		if base, ok := strings.CutSuffix(name, "0"); ok {
			if _, table := l.Field(base + "1"); table {
				name = base
			}
		}
		f.Bit -= base
		d := mad.DumpUint
		if f.Kind == mad.Hex {
			d = mad.DumpHex
		}
		out = append(out, ccField{name, f, d})
	}
	return out
}

// ccCPI is libibmad's ClassPortInfo dump (mad_dump_classportinfo): the
// rows of mad.ClassPortInfo with the names and dumpers the schema gives
// them (mad.DumpRows); the GIDs, dumped as bytes, keep the IBA's names.
var ccCPI = func() []ccField {
	dumped := map[mad.Field]mad.DumpRow{}
	for _, r := range mad.DumpRows(mad.ClassPortInfoLayout()) {
		dumped[r.Field] = r
	}
	var out []ccField
	for _, f := range mad.ClassPortInfoLayout().Fields {
		c := ccField{f.Name, f, mad.DumpUint}
		if r, ok := dumped[f]; ok {
			c.name, c.dump = r.IB, r.Dump
		}
		out = append(out, c)
	}
	return out
}()

// CCQueryRun runs ibccquery's operation o.Op on o.Target. An error is a
// *ToolError with ibccquery's message; the blocks read before it are
// returned with it.
func CCQueryRun(ctx context.Context, env *Env, o CCQueryOptions) (*CCQuery, error) {
	if env == nil || env.Session == nil {
		return nil, fmt.Errorf("diag: ibccquery: no session")
	}
	i := slices.IndexFunc(ccOps, func(c ccOp) bool { return strings.EqualFold(c.name, o.Op) || strings.EqualFold(c.alias, o.Op) })
	if i < 0 {
		return nil, &ToolError{Msg: fmt.Sprintf("operation '%s' not supported", o.Op)}
	}
	op := ccOps[i]
	s := env.Session
	var opts []engine.CallOption
	if o.CCKey != nil { // -c given, 0 too (ibccquery's cckey), over the session's key
		opts = append(opts, engine.CCKey(*o.CCKey))
	}
	t, err := resolveGUID(ctx, s, o.Target)
	if err != nil {
		return nil, err
	}
	q := &CCQuery{Op: op.name, Target: o.Target.String(), PortID: PortID(t)}
	o.Target = t
	fail := func(err error) (*CCQuery, error) {
		te := &ToolError{Msg: "operation " + o.Op + ": " + op.fail, Err: err}
		if len(q.Blocks) == 0 && op.attr != cc.AttrSwitchPortCongestionSetting {
			return nil, te // ibccquery printed nothing yet
		}
		return q, te
	}
	get := func(mod uint32) ([]byte, error) {
		return s.CC(ctx, o.Target, mad.MethodGet, op.attr, mod, nil, opts...)
	}
	add := func(entry string, index int, blank bool, fs []ccField, d []byte) {
		q.Blocks = append(q.Blocks, CCBlock{Entry: entry, Index: index, Fields: ccFields(fs, d), blank: blank})
	}
	whole := func(l *mad.Layout) []ccField { return ccRows(l, 0, 8*l.Size, 0) }
	switch op.attr {
	case cc.AttrSwitchPortCongestionSetting:
		ni, err := s.NodeInfo(ctx, o.Target)
		if err != nil {
			return nil, &ToolError{Msg: "operation " + o.Op + ": node info query failed", Err: err}
		}
		if ni.NodeType != smp.NodeTypeSwitch {
			return nil, &ToolError{Msg: "operation " + o.Op + ": destination not a switch"}
		}
		el := ccRows(cc.SwitchPortCongestionSettingLayout(), 0, 32, 0)
		if o.Port > 0 {
			if o.Port > int(ni.NumPorts) {
				return q, &ToolError{Msg: "operation " + o.Op + ": invalid port number specified"}
			}
			d, err := get(uint32(o.Port / ccPortsBlock))
			if err != nil {
				return fail(err)
			}
			add("", 0, false, el, d[o.Port%ccPortsBlock*4:])
			return q, nil
		}
		printed := 0
		for blk := 0; blk <= int(ni.NumPorts)/ccPortsBlock; blk++ {
			d, err := get(uint32(blk))
			if err != nil {
				return fail(err)
			}
			for j := 0; j < ccPortsBlock && printed <= int(ni.NumPorts); j++ {
				add("Port", blk*ccPortsBlock+j, true, el, d[j*4:])
				printed++
			}
		}
		return q, nil
	}
	d, err := get(0)
	if err != nil {
		return fail(err)
	}
	switch op.attr {
	case cc.AttrClassPortInfo:
		add("", 0, false, ccCPI, d)
	case cc.AttrCongestionLog:
		l, err := cc.LogLayout(d)
		if err != nil {
			return nil, &ToolError{Msg: "operation " + o.Op + ": unrecognized log type"}
		}
		first, size, n := 40, 12, 15 // the switch log's entries
		if l == cc.CongestionLogCALayout() {
			first, size, n = 12, 16, 13
		}
		add("", 0, false, ccRows(l, 0, 16, 0), d)
		add("", 0, true, ccRows(l, 16, 8*first, 0), d)
		entry := ccRows(l, 8*first, 8*(first+size), 8*first)
		for i := range n {
			e := d[first+i*size : first+(i+1)*size]
			if slices.ContainsFunc(e, func(b byte) bool { return b != 0 }) {
				add("", 0, true, entry, e)
			}
		}
	case cc.AttrCACongestionSetting:
		l := cc.CACongestionSettingLayout()
		add("", 0, true, ccRows(l, 0, 32, 0), d)
		for i := range 16 {
			add("SL", i, true, ccRows(l, 32, 96, 32), d[4+i*8:])
		}
	case cc.AttrCongestionControlTable:
		l := cc.CongestionControlTableLayout()
		add("", 0, true, ccRows(l, 0, 32, 0), d)
		limit := int(decode[cc.CongestionControlTable](d).CCTILimit)
		printed := 0
		for blk := 0; limit > 0 && blk <= limit/64; blk++ {
			if blk > 0 {
				if d, err = get(uint32(blk)); err != nil {
					return fail(err)
				}
			}
			for j := 0; j < 64 && printed <= limit; j++ {
				add("Entry", blk*64+j, true, ccRows(l, 32, 48, 32), d[4+j*2:])
				printed++
			}
		}
	default:
		add("", 0, false, whole(cc.LayoutByID(op.attr)), d)
	}
	return q, nil
}

// WriteCCQuery prints q as ibccquery does.
func WriteCCQuery(b *strings.Builder, q *CCQuery) {
	fmt.Fprintf(b, "# %s: %s\n", q.Op, q.PortID)
	for _, blk := range q.Blocks {
		if blk.Entry != "" {
			dotLine(b, blk.Entry, fmt.Sprint(blk.Index))
		}
		for _, f := range blk.Fields {
			dotLine(b, f.Name, f.Text)
		}
		if blk.blank {
			b.WriteByte('\n')
		}
	}
}
