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
// "1-10" (each number as strtoul(s, NULL, 0) reads it).
func ParsePerfPorts(s string) ([]int, error) {
	switch {
	case strings.Contains(s, ","):
		var out []int
		for _, p := range strings.Split(s, ",") {
			if p != "" {
				out = append(out, ParsePortArg(p))
			}
		}
		return out, nil
	case strings.Contains(s, "-"):
		lo, hi, _ := strings.Cut(s, "-")
		a, b := ParsePortArg(lo), ParsePortArg(hi)
		if a >= b {
			return nil, &ToolError{Msg: "max port must be greater than min port in range"}
		}
		var out []int
		for p := a; p <= b; p++ {
			out = append(out, p)
		}
		return out, nil
	}
	return []int{ParsePortArg(s)}, nil
}

// ParseMask reads the reset_mask argument as strtoull(s, NULL, 0).
func ParseMask(s string) uint64 {
	s = strings.TrimSpace(s)
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case strings.HasPrefix(s, "0") && len(s) > 1:
		base, s = 8, s[1:]
	}
	end := 0
	for end < len(s) {
		if _, err := strconv.ParseUint(s[end:end+1], base, 8); err != nil {
			break
		}
		end++
	}
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
	s := env.Session
	port := 0
	if o.AllPorts {
		port = allPorts
	}
	if len(o.Ports) > 0 {
		port = o.Ports[0]
	}
	ports := o.Ports
	if len(ports) < 2 {
		ports = nil
	}
	mask, extMask := uint64(0xffff), ^uint64(0)
	if o.Mask != nil {
		extMask, mask = *o.Mask, uint64(uint32(*o.Mask))
	}
	var t engine.Target
	if o.Target != nil {
		t = *o.Target
	} else {
		pa := s.Port()
		t, port = engine.LID(pa.LID), pa.PortNum
	}
	q := &PerfQuery{}
	if t.Kind == engine.ByLID {
		q.LID = t.LID
	} else {
		lt, err := s.LIDOf(ctx, t)
		if err != nil {
			return nil, &ToolError{Msg: "can't resolve destination port " + targetArg(t), Err: err}
		}
		t, q.LID = lt, lt.LID
	}
	q.PortID = PortID(t)

	cpi, err := s.Perf(ctx, t, mad.MethodGet, perf.AttrClassPortInfo, uint8(port), nil)
	if err != nil {
		return nil, &ToolError{Msg: "classportinfo query", Err: err}
	}
	info := decode[mad.ClassPortInfo](cpi)
	capMask, capMask2 := info.CapabilityMask, info.CapabilityMask2
	q.CapMask, q.CapMask2 = capMask, capMask2

	allLoop := false
	if capMask&pmCapAllPortSelect == 0 {
		if !o.AllPorts && port == allPorts {
			return q, &ToolError{Msg: "AllPortSelect not supported"}
		}
		allLoop = o.AllPorts && port == allPorts
	}

	get := func(attr uint16, p int) ([]byte, error) {
		return s.Perf(ctx, t, mad.MethodGet, attr, uint8(p), nil)
	}
	// set sends data (or fails with err, encode's) as a Set of attr to
	// port p.
	set := func(attr uint16, p int, data []byte, err error) error {
		if err == nil {
			_, err = s.Perf(ctx, t, mad.MethodSet, attr, uint8(p), data)
		}
		return err
	}
	// resetData is a PortCounters (ext: PortCountersExtended) resetting
	// the counters of mask m (0: all) of port p; the group attributes take
	// PortCounters' PortSelect, CounterSelect and CounterSelect2 too.
	resetData := func(p int, m uint64, ext bool) ([]byte, error) {
		if m == 0 {
			m = 0xffffffff
		}
		if ext {
			return encode(perf.PortCountersExtended{PortSelect: uint8(p), CounterSelect: uint16(m), CounterSelect2: uint32(m >> 16 & 0xffff)}, pmaDataLen)
		}
		return encode(perf.PortCounters{PortSelect: uint8(p), CounterSelect: uint16(m), CounterSelect2: uint8(m >> 16)}, pmaDataLen)
	}

	group := ""
	for _, g := range perfGroupOrder {
		for _, og := range o.Groups {
			if og == g && group == "" {
				group = g
			}
		}
	}
	switch group {
	case "":
	case "smplctl":
		d, err := get(perf.AttrPortSamplesControl, port)
		if err != nil {
			return q, &ToolError{Msg: "sampctlquery", Err: err}
		}
		q.add(fmt.Sprintf("# PortSamplesControl: %s port %d", q.PortID, port), "PortSamplesControl", port, d, portSamplesControlFields)
		return q, nil
	case "extended_speeds":
		if !o.ResetOnly {
			name, fs := "PortExtendedSpeedsCounters", extSpeedsFields
			rs, err := rsfecActive(ctx, s, t, port, capMask)
			if err != nil {
				return q, err
			}
			if rs {
				name, fs = "PortExtendedSpeedsCounters with RS-FEC Active", extSpeedsRSFECFields
			}
			d, err := get(perf.AttrPortExtendedSpeedsCounters, port)
			if err != nil {
				return q, &ToolError{Msg: "cannot query " + name, Err: err}
			}
			q.add(fmt.Sprintf("# %s counters: %s port %d", name, q.PortID, port), name, port, d, fs)
		}
		if o.ResetOnly || o.Reset {
			m := extMask
			if m == 0 {
				m = ^uint64(0)
			}
			d, err := encode(perf.PortExtendedSpeedsCounters{PortSelect: uint8(port), CounterSelect: m}, pmaDataLen)
			if err := set(perf.AttrPortExtendedSpeedsCounters, port, d, err); err != nil {
				return q, &ToolError{Msg: "cannot reset PortExtendedSpeedsCounters", Err: err}
			}
			q.Reset = append(q.Reset, port)
		}
		return q, nil
	default:
		g := perfGroups[group]
		if !o.ResetOnly {
			d, err := get(g.Attr, port)
			if err != nil {
				return q, &ToolError{Msg: "cannot query " + g.Name, Err: err}
			}
			q.add(fmt.Sprintf("# %s counters: %s port %d", g.Name, q.PortID, port), g.Name, port, d, g.Fields)
		}
		if o.ResetOnly || o.Reset {
			d, err := resetData(port, mask&0xffffffff, false)
			if err := set(g.Attr, port, d, err); err != nil {
				return q, &ToolError{Msg: "cannot reset " + g.Name, Err: err}
			}
			q.Reset = append(q.Reset, port)
		}
		return q, nil
	}

	loop := allLoop || (o.Loop && (o.AllPorts || port == allPorts))
	start, nports := 1, 0
	if loop {
		ni, err := s.SMP(ctx, t, mad.MethodGet, smp.AttrNodeInfo, 0, nil)
		if err != nil {
			return q, &ToolError{Msg: "smp query nodeinfo failed", Err: err}
		}
		node := decode[smp.NodeInfo](ni)
		if nports = int(node.NumPorts); nports == 0 {
			return q, &ToolError{Msg: "smp query nodeinfo: num ports invalid"}
		}
		if node.NodeType == smp.NodeTypeSwitch {
			si, err := s.SMP(ctx, t, mad.MethodGet, smp.AttrSwitchInfo, 0, nil)
			if err != nil {
				return q, &ToolError{Msg: "smp query nodeinfo failed", Err: err}
			}
			if decode[smp.SwitchInfo](si).EnhancedPort0 {
				start = 0
			}
		}
		if allLoop && !o.Loop {
			q.Warnings = append(q.Warnings, "Emulating AllPortSelect by iterating through all ports")
		}
	}
	var loopPorts []int
	aggregate := false
	switch {
	case loop:
		for p := start; p <= nports; p++ {
			loopPorts = append(loopPorts, p)
		}
		aggregate = allLoop && !o.Loop
	case len(ports) > 1:
		loopPorts = ports
		aggregate = o.AllPorts && !o.Loop
	default:
		loopPorts = []int{port}
	}

	if !o.ResetOnly {
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
			if capMask2&pmCap2AddlCounters != 0 {
				fs = concat(fs, pcExtErrFields)
			}
		} else {
			fs = pcFields
		}
		var sum []uint64
		var last []byte
		for _, p := range loopPorts {
			d, err := get(attr, p)
			if err != nil {
				msg := "perfquery"
				if o.Extended {
					msg = "perfextquery"
				}
				return q, &ToolError{Msg: msg, Err: err}
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
			for i, f := range fs {
				if !portCounterRows[f.f] { // PortSelect, CounterSelect, CounterSelect2
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
		if !o.Reset {
			return q, nil
		}
	}

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
		if err := set(attr, p, d, err); err != nil {
			return q, &ToolError{Msg: msg, Err: err}
		}
		q.Reset = append(q.Reset, p)
	}
	return q, nil
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
