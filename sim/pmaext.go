package sim

import (
	"math"
	"strings"
	"time"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// The PerfMgt attributes a current HCA or switch answers beyond ibsim's
// (Options.IbsimStrict turns them off): the per-port counter groups
// below, and the sampling engine (PortSamplesControl/Result).

// pmaGroupKinds says which nodes carry a counter group: the
// congestion-control counters of IBA Annex A10 split between switch
// ports (marking, time in congestion) and CA ports (FECN/BECN received);
// the others are on every node.
var pmaGroupKinds = map[uint16]struct{ sw, ca bool }{
	perf.AttrPortExtendedSpeedsCounters: {true, true},
	perf.AttrPortXmitDataSL:             {true, true},
	perf.AttrPortRcvDataSL:              {true, true},
	perf.AttrSwPortVLCongestion:         {true, false},
	perf.AttrPortXmitConCtrl:            {true, false},
	perf.AttrPortVLXmitTimeCong:         {true, false},
	perf.AttrPortRcvConCtrl:             {false, true},
	perf.AttrPortSLRcvFECN:              {false, true},
	perf.AttrPortSLRcvBECN:              {false, true},
}

// pmaExtended answers the attributes above at node n, received on port
// in; ok is false for an attribute it does not handle (or any, under
// Options.IbsimStrict).
func (f *Fabric) pmaExtended(n *node, in *port, b []byte) (st uint16, ok bool) {
	if f.strict {
		return 0, false
	}
	attr := mad.AttrIDOf(b)
	switch attr {
	case perf.AttrPortSamplesControl, perf.AttrPortSamplesResult:
		return f.samples(n, in, b), true
	}
	kinds, ok := pmaGroupKinds[attr]
	if !ok {
		return 0, false
	}
	if sw := n.typ == typeSwitch; (sw && !kinds.sw) || (!sw && !kinds.ca) {
		return stUnsupported, true
	}
	return f.pmaGroup(n, in, mad.MethodOf(b) == mad.MethodSet, attr, perf.Data(b)), true
}

// pmaGroup answers one counter group for the ports PortSelect selects
// (summed, saturating at each field's width, for a switch's 0xFF), with
// PortSelect and CounterSelect echoed. PortXmitDataSL and PortRcvDataSL
// are the ports' per-SL data counters; the extended speeds counters (no
// symbol errors on a simulated lane; the RS-FEC layout on a port running
// RS-FEC) and the congestion counters (nothing congests) are zero but
// for what SetCounter planted. A Set clears the counters CounterSelect
// selects: bit i the group's i-th counter (its SL or VL for the arrays).
func (f *Fabric) pmaGroup(n *node, in *port, set bool, attr uint16, d []byte) uint16 {
	l := perf.LayoutByID(attr)
	selField := l.Fields[1] // CounterSelect
	ps, sel := uint8(pcPortSelect.Get(d)), selField.Get(d)
	var sum []uint64
	ok := f.pmaPorts(n, in, ps, func(p *port) {
		if sum == nil {
			if attr == perf.AttrPortExtendedSpeedsCounters && !f.strict {
				if m := f.fecActive(p); m == fecRS || m == fecRS544 {
					l = perf.PortExtendedSpeedsCountersRSFECLayout()
				}
			}
			sum = make([]uint64, len(l.Fields)-2)
		}
		for i, fl := range l.Fields[2:] {
			c := f.groupCounter(p, attr, i, fl.Name, set && i < 64 && sel&(1<<i) != 0)
			sum[i] = min(sum[i]+min(c, fl.Max()), fl.Max())
		}
	})
	if !ok {
		return stInvalid
	}
	clear(d[:max(l.Size, perf.PortExtendedSpeedsCountersRSFECLayout().Size)])
	pcPortSelect.Put(d, uint64(ps))
	selField.Put(d, sel)
	for i, fl := range l.Fields[2:] {
		fl.Put(d, sum[i])
	}
	return 0
}

// plantedCounters are the counters of the groups above SetCounter set
// (but the per-SL data counters), by port and field name.
type plantedCounters map[*port]map[string]uint64

// groupCounter reads counter i (field name) of group attr at p, and
// clears it first when clr is set.
func (f *Fabric) groupCounter(p *port, attr uint16, i int, name string, clr bool) uint64 {
	var sl *[numSL]uint32
	switch {
	case attr == perf.AttrPortXmitDataSL && p.pc.sl != nil:
		sl = &p.pc.sl.xmit
	case attr == perf.AttrPortRcvDataSL && p.pc.sl != nil:
		sl = &p.pc.sl.rcv
	case attr == perf.AttrPortXmitDataSL || attr == perf.AttrPortRcvDataSL:
		return 0 // nothing counted yet
	}
	if sl != nil {
		if clr {
			sl[i] = 0
		}
		return uint64(sl[i])
	}
	if clr {
		delete(f.planted[p], name)
	}
	return f.planted[p][name]
}

// groupField finds a counter of the groups above by its IBA name or Lua
// key: its group and index there (in the group's first layout that has
// it) and its canonical name.
func groupField(name string) (attr uint16, i int, canon string, ok bool) {
	for _, l := range append(perf.Layouts(), perf.PortExtendedSpeedsCountersRSFECLayout()) {
		if _, group := pmaGroupKinds[l.ID]; !group {
			continue
		}
		for i, fl := range l.Fields[2:] {
			if strings.EqualFold(fl.Name, name) || (name != "" && fl.Key() == name) {
				return l.ID, i, fl.Name, true
			}
		}
	}
	return 0, 0, "", false
}

// setGroupCounter is SetCounter for a counter of the groups above: the
// per-SL data counters set in place, the others planted.
func (f *Fabric) setGroupCounter(p *port, name string, v uint64) bool {
	attr, i, canon, ok := groupField(name)
	if !ok {
		return false
	}
	switch attr {
	case perf.AttrPortXmitDataSL:
		p.pc.perSL().xmit[i] = uint32(min(v, math.MaxUint32))
	case perf.AttrPortRcvDataSL:
		p.pc.perSL().rcv[i] = uint32(min(v, math.MaxUint32))
	default:
		if f.planted == nil {
			f.planted = make(plantedCounters)
		}
		if f.planted[p] == nil {
			f.planted[p] = make(map[string]uint64)
		}
		f.planted[p][canon] = v
	}
	return true
}

// Sampling. Each PMA (a CA port's, a switch's) has one engine sampling
// one port. A Set of PortSamplesControl, while no sample is in progress,
// starts one on the port PortSelect names: SampleStart ticks later it
// takes the selected counters, SampleInterval ticks after that it takes
// them again, and PortSamplesResult then holds the differences (32 bits,
// saturating). The counter selects are IBA's mandatory five (1
// PortXmitData, 2 PortRcvData, 3 PortXmitPkts, 4 PortRcvPkts, 5
// PortXmitWait; 0 counts nothing); every one of the 15 counters can take
// any (CounterMask 1), 32 bits wide (CounterWidth 4). The tick is one
// symbol time of the port's link (Tick 0, the unit of its PortXmitWait:
// 0.8 ns at QDR); time is the background load's clock (SetTraffic), or
// the wall clock without one. The MADs crossing the port are counted as
// they cross, the background load exactly up to the window's ends.

const (
	sampleDone    = 0
	sampleStarted = 1
	sampleRunning = 2

	sampleCounters = 15
	sampleSelMax   = 5
	sampleWidth32  = 4 // CounterWidth: 32-bit counters
)

// sampler is one PMA's sampling engine.
type sampler struct {
	port       *port // the port sampled
	phase      uint8
	tag        uint16
	start, end time.Time
	startTk    uint32 // SampleStart
	intervalTk uint32 // SampleInterval
	sel        [sampleCounters]uint16
	base       [sampleCounters]uint64
	result     [sampleCounters]uint32
}

// clock is the time the sampling engines follow.
func (f *Fabric) clock() time.Time {
	if f.traffic != nil {
		return f.traffic.Now()
	}
	return time.Now()
}

// ticks is the time n symbol times of p's link take (SDR's when it has
// none).
func ticks(p *port, n uint32) time.Duration {
	rate := smp.LaneDataRate(uint8(p.get(piSpeedActive)), p.aggExtActive())
	if linkRate(p) == 0 || rate <= 0 {
		rate = smp.LaneDataRate(1, 0)
	}
	return time.Duration(math.Round(float64(n) * 8 / rate * 1e9))
}

// sampleValue is the counter select sel of p now.
func sampleValue(p *port, sel uint16) uint64 {
	switch sel {
	case 1:
		return p.pc.pce[pceXmitData]
	case 2:
		return p.pc.pce[pceRcvData]
	case 3:
		return p.pc.pce[pceXmitPkts]
	case 4:
		return p.pc.pce[pceRcvPkts]
	case 5:
		return uint64(p.pc.pc[pcXmitWait])
	}
	return 0
}

// advance moves s to where it is at now: the start taken, the end taken.
func (f *Fabric) advance(s *sampler, now time.Time) {
	if s.phase == sampleStarted && !now.Before(s.start) {
		f.accrueTo(s.port, s.start)
		for i, sel := range s.sel {
			s.base[i] = sampleValue(s.port, sel)
		}
		s.phase = sampleRunning
	}
	if s.phase == sampleRunning && !now.Before(s.end) {
		f.accrueTo(s.port, s.end)
		for i, sel := range s.sel {
			v := sampleValue(s.port, sel)
			s.result[i] = uint32(min(v-min(v, s.base[i]), math.MaxUint32))
		}
		s.phase = sampleDone
	}
}

// samplesAt brings the engines sampling p up to now, before a MAD
// crosses p.
func (f *Fabric) samplesAt(p *port) {
	var now time.Time
	for _, s := range f.samplers {
		if s.port == p && s.phase != sampleDone {
			if now.IsZero() {
				now = f.clock()
			}
			f.advance(s, now)
		}
	}
}

// samples answers PortSamplesControl and PortSamplesResult at node n's
// PMA (the agent of port in).
func (f *Fabric) samples(n *node, in *port, b []byte) uint16 {
	if mad.AttrModOf(b) != 0 {
		return stInvalid
	}
	agent := n.endport(in)
	s := f.samplers[agent]
	if s != nil {
		f.advance(s, f.clock())
	}
	d := perf.Data(b)
	set := mad.MethodOf(b) == mad.MethodSet
	if mad.AttrIDOf(b) == perf.AttrPortSamplesResult {
		r := perf.PortSamplesResult{}
		if s != nil {
			r.Tag, r.SampleStatus, r.Counter = s.tag, s.phase, s.result
		}
		clear(d[:perf.PortSamplesResultLayout().Size])
		_, _ = r.AppendBinary(d[:0])
		return readOnly(set)
	}
	var req perf.PortSamplesControl
	if req.UnmarshalBinary(d) != nil {
		return stInvalid
	}
	var sp *port
	if !f.pmaPorts(n, in, req.PortSelect, func(p *port) { sp = p }) || req.PortSelect == allPortSelect {
		return stInvalid
	}
	if set && (s == nil || s.phase == sampleDone) {
		for _, sel := range req.CounterSelect {
			if sel > sampleSelMax {
				return stInvalid
			}
		}
		if f.samplers == nil {
			f.samplers = make(map[*port]*sampler)
		}
		now := f.clock()
		s = &sampler{port: sp, phase: sampleStarted, tag: req.Tag, sel: req.CounterSelect,
			startTk: req.SampleStart, intervalTk: req.SampleInterval}
		s.start = now.Add(ticks(sp, req.SampleStart))
		s.end = s.start.Add(ticks(sp, req.SampleInterval))
		f.samplers[agent] = s
		f.advance(s, now)
	}
	c := perf.PortSamplesControl{PortSelect: req.PortSelect, CounterWidth: sampleWidth32,
		CounterMask0: 1, CounterMasks1to9: 0o111111111, CounterMasks10to14: 0o11111}
	if s != nil {
		c.PortSelect = uint8(s.port.num)
		c.SampleStatus, c.SampleStart, c.SampleInterval = s.phase, s.startTk, s.intervalTk
		c.Tag, c.CounterSelect = s.tag, s.sel
	}
	clear(d[:perf.PortSamplesControlLayout().Size])
	_, _ = c.AppendBinary(d[:0])
	return 0
}
