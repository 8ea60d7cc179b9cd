package diag

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// PerfQueryOptions are perfquery's options and arguments.
type PerfQueryOptions struct {
	// Target is the <lid|guid> argument; nil reads the local port (and
	// then Port is the local port's number, as perfquery's resolve_self
	// makes it, -a or not).
	Target *engine.Target
	// Ports is the [port(s)] argument: one port, a list (1,4,8) or a
	// range (1-10), as ParsePerfPorts reads it; nil when not given.
	Ports []int
	// Mask is the [reset_mask] argument (nil when not given): the
	// CounterSelect mask of -r and -R.
	Mask *uint64

	Extended  bool // -x
	AllPorts  bool // -a
	Loop      bool // -l
	Reset     bool // -r
	ResetOnly bool // -R
	// Group is one of perfquery's per-attribute options by long name
	// ("xmtsl" for -X, "rcvsl" -S, "xmtdisc" -D, "rcverr" -E,
	// "extended_speeds" -T, "smplctl" -c, "oprcvcounters", ...), "" for
	// the port counters. Groups lists every one given; the first in
	// perfquery's order runs.
	Groups []string
}

// PerfQuery is what perfquery read: one block per dump, in order.
type PerfQuery struct {
	LID    uint16 `json:"lid"`
	PortID string `json:"portid"`
	// CapMask and CapMask2 are the PMA ClassPortInfo's (CapMask2 shifted
	// down 5 bits, as perfquery prints it).
	CapMask  uint16      `json:"cap_mask"`
	CapMask2 uint32      `json:"cap_mask2"`
	Blocks   []PerfBlock `json:"blocks"`
	// Reset lists the ports whose counters were reset (-r, -R).
	Reset []int `json:"reset,omitempty"`
	// Warnings are what perfquery says on stderr (emulating
	// AllPortSelect, no extended counters).
	Warnings []string `json:"warnings,omitempty"`
}

// PerfBlock is one dump: a title line and the attribute's fields.
type PerfBlock struct {
	Title  string  `json:"title"`
	Attr   string  `json:"attribute"`
	Port   int     `json:"port"`
	Fields []Field `json:"fields"`

	raw []byte
	fs  []ibField
}

// ParsePerfPorts reads perfquery's port(s) argument: "3", "1,4,8" or
// "1-10" (each number as strtoul(s, NULL, 0) reads it). perfquery keeps
// them in an array of MaxPerfPorts, which a longer list or range
// overruns (undefined behaviour in C); ibscript refuses one, naming it.
func ParsePerfPorts(s string) ([]int, error) {
	switch {
	case strings.Contains(s, ","):
		var out []int
		for _, p := range strings.Split(s, ",") {
			if p != "" {
				out = append(out, ParsePortArg(p))
			}
		}
		if len(out) > MaxPerfPorts {
			return nil, &ToolError{Msg: fmt.Sprintf("port list %q: %d ports, more than perfquery's %d", s, len(out), MaxPerfPorts)}
		}
		return out, nil
	case strings.Contains(s, "-"):
		lo, hi, _ := strings.Cut(s, "-")
		a, b := ParsePortArg(lo), ParsePortArg(hi)
		if a >= b {
			return nil, &ToolError{Msg: "max port must be greater than min port in range"}
		}
		if d := uint64(b) - uint64(a); d >= MaxPerfPorts { // b-a, exact in uint64 as a < b
			return nil, &ToolError{Msg: fmt.Sprintf("port range %q: more than perfquery's %d ports", s, MaxPerfPorts)}
		}
		var out []int
		for p := a; p <= b; p++ {
			out = append(out, p)
		}
		return out, nil
	}
	return []int{ParsePortArg(s)}, nil
}

// MaxPerfPorts is how many ports perfquery's port list holds (its
// MAX_PORTS).
const MaxPerfPorts = 255

// ParseMask reads the reset_mask argument as strtoull(s, NULL, 0).
func ParseMask(s string) uint64 {
	base, s := cBase(strings.TrimSpace(s))
	end := cDigits(s, base)
	v, err := strconv.ParseUint(s[:end], base, 64)
	if err != nil && end > 0 {
		return ^uint64(0) // strtoull saturates
	}
	return v
}

const allPorts = 0xff

// pmaDataLen is the PerfMgt attribute data's size.
const pmaDataLen = 192

// PMA ClassPortInfo CapabilityMask bits perfquery reads.
const (
	pmCapAllPortSelect = 1 << 8
	pmCapExtWidth      = 1 << 9
	pmCapExtWidthNoIET = 1 << 10
	pmCapXmitWait      = 1 << 12
	pmCapRSFEC         = 1 << 14
	pmCapQP1Dropped    = 1 << 15
	pmCap2AddlCounters = 1 << 1
)

// PerfQueryRun runs perfquery: the same MADs in the same order, the
// same dumps. A failure after some dumps returns them with the error.
func PerfQueryRun(ctx context.Context, env *Env, o PerfQueryOptions) (*PerfQuery, error) {
	if env == nil || env.Session == nil {
		return nil, fmt.Errorf("diag: perfquery: no session")
	}
	r := &perfRun{ctx: ctx, s: env.Session, o: o, mask: 0xffff, extMask: ^uint64(0), q: &PerfQuery{}}
	if o.AllPorts {
		r.port = allPorts
	}
	if len(o.Ports) > 0 {
		r.port = o.Ports[0]
	}
	if o.Mask != nil {
		r.extMask, r.mask = *o.Mask, uint64(uint32(*o.Mask))
	}
	if err := r.target(); err != nil {
		return nil, err
	}
	q := r.q
	cpi, err := r.s.Perf(ctx, r.t, mad.MethodGet, perf.AttrClassPortInfo, uint8(r.port), nil)
	if err != nil {
		return nil, &ToolError{Msg: "classportinfo query", Err: err}
	}
	info := decode[mad.ClassPortInfo](cpi)
	r.capMask, r.capMask2 = info.CapabilityMask, info.CapabilityMask2
	q.CapMask, q.CapMask2 = r.capMask, r.capMask2

	allLoop := false
	if r.capMask&pmCapAllPortSelect == 0 {
		if !o.AllPorts && r.port == allPorts {
			return q, &ToolError{Msg: "AllPortSelect not supported"}
		}
		allLoop = o.AllPorts && r.port == allPorts
	}
	group := ""
	for _, g := range perfGroupOrder {
		for _, og := range o.Groups {
			if og == g && group == "" {
				group = g
			}
		}
	}
	if group != "" {
		return q, r.group(group)
	}
	loopPorts, aggregate, err := r.loopPorts(allLoop)
	if err != nil {
		return q, err
	}
	if !o.ResetOnly {
		if err := r.counters(loopPorts, aggregate); err != nil || !o.Reset {
			return q, err
		}
	}
	return q, r.reset(loopPorts)
}

// perfRun is one perfquery run: its options, target and the PMA's
// capabilities, and what it has printed (q).
type perfRun struct {
	ctx           context.Context
	s             *engine.Session
	o             PerfQueryOptions
	t             engine.Target
	port          int
	mask, extMask uint64
	capMask       uint16
	capMask2      uint32
	q             *PerfQuery
}

// target resolves the destination (the local port without one) to a LID,
// as perfquery does before any query.
func (r *perfRun) target() error {
	if r.o.Target != nil {
		r.t = *r.o.Target
	} else {
		pa := r.s.Port()
		r.t, r.port = engine.LID(pa.LID), pa.PortNum
	}
	if r.t.Kind == engine.ByLID {
		r.q.LID = r.t.LID
	} else {
		lt, err := r.s.LIDOf(r.ctx, r.t)
		if err != nil {
			return &ToolError{Msg: "can't resolve destination port " + targetArg(r.t), Err: err}
		}
		r.t, r.q.LID = lt, lt.LID
	}
	r.q.PortID = PortID(r.t)
	return nil
}

func (r *perfRun) get(attr uint16, p int) ([]byte, error) {
	return r.s.Perf(r.ctx, r.t, mad.MethodGet, attr, uint8(p), nil)
}

// set sends data (or fails with err, encode's) as a Set of attr to port
// p.
func (r *perfRun) set(attr uint16, p int, data []byte, err error) error {
	if err == nil {
		_, err = r.s.Perf(r.ctx, r.t, mad.MethodSet, attr, uint8(p), data)
	}
	return err
}

// resetData is a PortCounters (ext: PortCountersExtended) resetting the
// counters of mask m (0: all) of port p; the group attributes take
// PortCounters' PortSelect, CounterSelect and CounterSelect2 too.
func resetData(p int, m uint64, ext bool) ([]byte, error) {
	if m == 0 {
		m = 0xffffffff
	}
	if ext {
		return encode(perf.PortCountersExtended{PortSelect: uint8(p), CounterSelect: uint16(m), CounterSelect2: uint32(m >> 16 & 0xffff)}, pmaDataLen)
	}
	return encode(perf.PortCounters{PortSelect: uint8(p), CounterSelect: uint16(m), CounterSelect2: uint8(m >> 16)}, pmaDataLen)
}

// group runs one of perfquery's per-attribute options on r.port.
func (r *perfRun) group(group string) error {
	q, port, o := r.q, r.port, r.o
	switch group {
	case "smplctl":
		d, err := r.get(perf.AttrPortSamplesControl, port)
		if err != nil {
			return &ToolError{Msg: "sampctlquery", Err: err}
		}
		q.add(fmt.Sprintf("# PortSamplesControl: %s port %d", q.PortID, port), "PortSamplesControl", port, d, portSamplesControlFields)
		return nil
	case "extended_speeds":
		if !o.ResetOnly {
			name, fs := "PortExtendedSpeedsCounters", extSpeedsFields
			rs, err := rsfecActive(r.ctx, r.s, r.t, port, r.capMask)
			if err != nil {
				return err
			}
			if rs {
				name, fs = "PortExtendedSpeedsCounters with RS-FEC Active", extSpeedsRSFECFields
			}
			d, err := r.get(perf.AttrPortExtendedSpeedsCounters, port)
			if err != nil {
				return &ToolError{Msg: "cannot query " + name, Err: err}
			}
			q.add(fmt.Sprintf("# %s counters: %s port %d", name, q.PortID, port), name, port, d, fs)
		}
		if o.ResetOnly || o.Reset {
			m := r.extMask
			if m == 0 {
				m = ^uint64(0)
			}
			d, err := encode(perf.PortExtendedSpeedsCounters{PortSelect: uint8(port), CounterSelect: m}, pmaDataLen)
			if err := r.set(perf.AttrPortExtendedSpeedsCounters, port, d, err); err != nil {
				return &ToolError{Msg: "cannot reset PortExtendedSpeedsCounters", Err: err}
			}
			q.Reset = append(q.Reset, port)
		}
		return nil
	}
	g := perfGroups[group]
	if !o.ResetOnly {
		d, err := r.get(g.Attr, port)
		if err != nil {
			return &ToolError{Msg: "cannot query " + g.Name, Err: err}
		}
		q.add(fmt.Sprintf("# %s counters: %s port %d", g.Name, q.PortID, port), g.Name, port, d, g.Fields)
	}
	if o.ResetOnly || o.Reset {
		d, err := resetData(port, r.mask&0xffffffff, false)
		if err := r.set(g.Attr, port, d, err); err != nil {
			return &ToolError{Msg: "cannot reset " + g.Name, Err: err}
		}
		q.Reset = append(q.Reset, port)
	}
	return nil
}

// loopPorts returns the ports perfquery reads and resets, and whether it
// sums them into one (AllPortSelect emulated, or -a with a port list).
func (r *perfRun) loopPorts(allLoop bool) ([]int, bool, error) {
	o, port := r.o, r.port
	loop := allLoop || (o.Loop && (o.AllPorts || port == allPorts))
	start, nports := 1, 0
	if loop {
		ni, err := r.s.SMP(r.ctx, r.t, mad.MethodGet, smp.AttrNodeInfo, 0, nil)
		if err != nil {
			return nil, false, &ToolError{Msg: "smp query nodeinfo failed", Err: err}
		}
		node := decode[smp.NodeInfo](ni)
		if nports = int(node.NumPorts); nports == 0 {
			return nil, false, &ToolError{Msg: "smp query nodeinfo: num ports invalid"}
		}
		if node.NodeType == smp.NodeTypeSwitch {
			si, err := r.s.SMP(r.ctx, r.t, mad.MethodGet, smp.AttrSwitchInfo, 0, nil)
			if err != nil {
				return nil, false, &ToolError{Msg: "smp query nodeinfo failed", Err: err}
			}
			if decode[smp.SwitchInfo](si).EnhancedPort0 {
				start = 0
			}
		}
		if allLoop && !o.Loop {
			r.q.Warnings = append(r.q.Warnings, "Emulating AllPortSelect by iterating through all ports")
		}
	}
	switch {
	case loop:
		var ps []int
		for p := start; p <= nports; p++ {
			ps = append(ps, p)
		}
		return ps, allLoop && !o.Loop, nil
	case len(o.Ports) > 1:
		return o.Ports, o.AllPorts && !o.Loop, nil
	}
	return []int{port}, false, nil
}

// counters reads PortCounters (-x: PortCountersExtended) of each port,
// printing each or, aggregating, their sum.
func (r *perfRun) counters(loopPorts []int, aggregate bool) error {
	o, q, capMask := r.o, r.q, r.capMask
	if o.Extended && capMask&(pmCapExtWidth|pmCapExtWidthNoIET) == 0 {
		q.Warnings = append(q.Warnings, fmt.Sprintf("PerfMgt ClassPortInfo CapMask 0x%02X; No extended counter support indicated", capMask))
	}
	var fs []ibField
	attr, name := perf.AttrPortCounters, "PortCounters"
	if o.Extended {
		attr, name = perf.AttrPortCountersExtended, "PortCountersExtended"
		fs = pcExtFields
		if capMask&pmCapExtWidth != 0 {
			fs = concat(fs, pcExtWidthFields)
		}
		if r.capMask2&pmCap2AddlCounters != 0 {
			fs = concat(fs, pcExtErrFields)
		}
	} else {
		fs = pcFields
	}
	var sum []uint64
	var last []byte
	for _, p := range loopPorts {
		d, err := r.get(attr, p)
		if err != nil {
			msg := "perfquery"
			if o.Extended {
				msg = "perfextquery"
			}
			return &ToolError{Msg: msg, Err: err}
		}
		if !o.Extended && capMask&pmCapXmitWait == 0 {
			ibNamed(pcFields, "PortXmitWait").f.Put(d, 0)
		}
		if !aggregate {
			q.add(q.countersTitle(o.Extended, p), name, p, d, fs)
			continue
		}
		if sum == nil {
			sum = make([]uint64, len(fs))
		}
		addCounters(sum, fs, d)
		last = d
	}
	if aggregate && last != nil {
		for i, f := range fs {
			v := sum[i]
			if f.name == "PortSelect" {
				v = allPorts
			}
			f.f.Put(last, v)
		}
		q.add(q.countersTitle(o.Extended, allPorts), name, allPorts, last, fs)
	}
	return nil
}

// addCounters adds the counters of fs in d to sum, saturating at each
// one's width; the other rows (PortSelect, CounterSelect, CounterSelect2)
// take d's value.
func addCounters(sum []uint64, fs []ibField, d []byte) {
	for i, f := range fs {
		if !portCounterRows[f.f] {
			sum[i] = f.get(d)
			continue
		}
		max := f.f.Max()
		v := f.get(d)
		if sum[i]+v < sum[i] || sum[i]+v > max {
			sum[i] = max
		} else {
			sum[i] += v
		}
	}
}

// reset clears the counters of each port, as perfquery -r and -R do.
func (r *perfRun) reset(loopPorts []int) error {
	o, capMask, mask := r.o, r.capMask, r.mask
	if o.Mask == nil && !o.Extended {
		if capMask&pmCapXmitWait != 0 {
			mask |= 1 << 16
		}
		if capMask&pmCapQP1Dropped != 0 {
			mask |= 1 << 17
		}
	}
	if o.Extended {
		mask |= 0xfff0000
		if capMask&pmCapXmitWait != 0 {
			mask |= 1 << 28
		}
		if capMask&pmCapQP1Dropped != 0 {
			mask |= 1 << 29
		}
	}
	attr, msg := perf.AttrPortCounters, "perf reset"
	if o.Extended {
		attr, msg = perf.AttrPortCountersExtended, "perf ext reset"
	}
	for _, p := range loopPorts {
		d, err := resetData(p, mask&0xffffffff, o.Extended)
		if err := r.set(attr, p, d, err); err != nil {
			return &ToolError{Msg: msg, Err: err}
		}
		r.q.Reset = append(r.q.Reset, p)
	}
	return nil
}

func (q *PerfQuery) countersTitle(ext bool, port int) string {
	if ext {
		return fmt.Sprintf("# Port extended counters: %s port %d (CapMask: 0x%02X CapMask2: 0x%07X)", q.PortID, port, q.CapMask, q.CapMask2)
	}
	return fmt.Sprintf("# Port counters: %s port %d (CapMask: 0x%02X)", q.PortID, port, q.CapMask)
}

func (q *PerfQuery) add(title, attr string, port int, d []byte, fs []ibField) {
	q.Blocks = append(q.Blocks, PerfBlock{Title: title, Attr: attr, Port: port, Fields: fieldsOf(d, fs), raw: d, fs: fs})
}

// rsfecActive is perfquery's is_rsfec_mode_active: the PMA says it has
// RS-FEC counters and PortInfoExtended says RS-FEC is the active FEC
// mode.
func rsfecActive(ctx context.Context, s *engine.Session, t engine.Target, port int, capMask uint16) (bool, error) {
	if capMask&pmCapRSFEC == 0 {
		return false, nil
	}
	if err := portInfoExtSupported(ctx, s, t, port); err != nil {
		var te *ToolError
		if errors.As(err, &te) && te.Msg == "port info extended not supported" {
			return false, nil // perfquery warns and goes on
		}
		return false, err
	}
	d, err := s.SMP(ctx, t, mad.MethodGet, smp.AttrPortInfoExtended, uint32(port), nil)
	if err != nil {
		return false, &ToolError{Msg: "smp query portinfo extended failed", Err: err}
	}
	ext := decode[smp.PortInfoExtended](d)
	return ext.CapabilityMask&1 != 0 && (ext.FECModeActive == 2 || ext.FECModeActive == 4), nil
}

// resolveGUID returns a GUID target as the LID of its port, as the C
// tools' ib_resolve_portid_str does before any query (so their headers
// say "Lid N"): LIDOfGUID, a port GUID only; other targets are returned
// as they are.
func resolveGUID(ctx context.Context, s *engine.Session, t engine.Target) (engine.Target, error) {
	if t.Kind != engine.ByGUID {
		return t, nil
	}
	lid, err := lidOfGUID(ctx, s, t.GUID)
	if err != nil {
		return t, &ToolError{Msg: "can't resolve destination port " + targetArg(t), Err: err}
	}
	return engine.LID(lid), nil
}

// targetArg is how the C tools name a target they could not resolve.
func targetArg(t engine.Target) string {
	switch t.Kind {
	case engine.ByGUID:
		return fmt.Sprintf("0x%016x", t.GUID)
	case engine.ByLID:
		return strconv.Itoa(int(t.LID))
	}
	return t.String()
}

// WritePerfQuery prints q as perfquery does.
func WritePerfQuery(b *strings.Builder, q *PerfQuery) {
	for _, bl := range q.Blocks {
		b.WriteString(bl.Title)
		b.WriteByte('\n')
		dumpFields(b, bl.raw, bl.fs)
	}
}
