package sim

import (
	"fmt"
	"math"
	"strings"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
)

// The PortCounters counters a port keeps, in CounterSelect bit order (bit i
// clears counter i); PortXmitWait, cleared by any CounterSelect2 bit as
// ibsim does, and QP1Dropped follow.
var pcNames = [...]string{
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
	"PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
	"PortXmitDiscards", "PortXmitConstraintErrors", "PortRcvConstraintErrors",
	"LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
	"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
	"PortXmitWait", "QP1Dropped",
}

// The PortCountersExtended counters a port keeps, in CounterSelect bit
// order. Like ibsim, the PMA does not offer the additional 64-bit error
// counters (ClassPortInfo.CapabilityMask2 is 0); they read as zero.
var pceNames = [...]string{
	"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts",
	"PortUnicastXmitPkts", "PortUnicastRcvPkts",
	"PortMulticastXmitPkts", "PortMulticastRcvPkts",
}

const (
	numPC  = len(pcNames)
	numPCE = len(pceNames)

	pcSymbolError          = 0
	pcRcvSwitchRelayErrors = 5
	pcXmitDiscards         = 6
	pcXmitData             = 12
	pcRcvData              = 13
	pcXmitPkts             = 14
	pcRcvPkts              = 15
	pcXmitWait             = 16
	pcQP1Dropped           = 17

	pceXmitData          = 0
	pceRcvData           = 1
	pceXmitPkts          = 2
	pceRcvPkts           = 3
	pceUnicastXmitPkts   = 4
	pceUnicastRcvPkts    = 5
	pceMulticastXmitPkts = 6
	pceMulticastRcvPkts  = 7

	// madWords is what one MAD adds to the data counters, in 4-byte
	// words: ibsim counts 72 (the 256-byte MAD and its headers).
	madWords = 72
)

// pcMax[i] is the value counter i saturates at: the width of its field
// (set with pcFields).
var pcMax [numPC]uint32

// numSL is the number of service levels: PortXmitDataSL and PortRcvDataSL
// count per SL.
const numSL = 16

// counters are one port's performance counters: PortCounters,
// PortCountersExtended, and the data words sent and received per SL
// (PortXmitDataSL, PortRcvDataSL), which grow with PortXmitData and
// PortRcvData: a MAD on its SL, the background load on SL 0. The per-SL
// counters are allocated when the port first counts data, so an idle
// fabric does not carry them.
type counters struct {
	pc  [numPC]uint32
	pce [numPCE]uint64
	sl  *slCounters
	// pcx are the PortCounters counters at 64 bits, never saturating:
	// the additional PortCountersExtended counters
	// (Options.AdditionalPortCounters; nil without).
	pcx *[numPC]uint64
}

// slCounters are a port's data words sent and received per SL.
type slCounters struct{ xmit, rcv [numSL]uint32 }

// perSL returns c's per-SL counters, allocated on first use.
func (c *counters) perSL() *slCounters {
	if c.sl == nil {
		c.sl = new(slCounters)
	}
	return c.sl
}

// addSL adds d to the per-SL counter c, saturating at 32 bits.
func addSL(c *uint32, d uint64) {
	*c = uint32(min(uint64(*c)+d, math.MaxUint32))
}

func (c *counters) add(i int, d uint32) {
	if c.pcx != nil {
		c.pcx[i] += uint64(d)
	}
	v := c.pc[i] + d
	if v < c.pc[i] || v > pcMax[i] {
		v = pcMax[i]
	}
	c.pc[i] = v
}

func (c *counters) addExt(i int, d uint64) {
	if v := c.pce[i] + d; v >= c.pce[i] {
		c.pce[i] = v
	} else {
		c.pce[i] = ^uint64(0)
	}
}

// sent and received count one MAD on SL sl leaving or entering the port.
func (c *counters) sent(sl uint8) {
	c.add(pcXmitPkts, 1)
	c.add(pcXmitData, madWords)
	c.addExt(pceXmitPkts, 1)
	c.addExt(pceXmitData, madWords)
	addSL(&c.perSL().xmit[sl%numSL], madWords)
}

func (c *counters) received(sl uint8) {
	c.add(pcRcvPkts, 1)
	c.add(pcRcvData, madWords)
	c.addExt(pceRcvPkts, 1)
	c.addExt(pceRcvData, madWords)
	addSL(&c.perSL().rcv[sl%numSL], madWords)
}

// clear clears the PortCounters selected by CounterSelect (and
// CounterSelect2).
func (c *counters) clear(sel uint16, sel2 uint8) {
	for i := 0; i < 16; i++ {
		if sel&(1<<i) != 0 {
			c.pc[i] = 0
		}
	}
	if sel2 != 0 {
		c.pc[pcXmitWait] = 0
	}
}

func (c *counters) clearExt(sel uint16) {
	for i := range c.pce {
		if sel&(1<<i) != 0 {
			c.pce[i] = 0
		}
	}
}

// sum adds o's PortCounters into c (PortSelect 0xFF), saturating.
func (c *counters) sum(o *counters) {
	x := c.pcx
	c.pcx = nil // o's 64-bit counters are added below, not its saturated ones
	for i := range c.pc {
		c.add(i, o.pc[i])
	}
	c.pcx = x
	if o.pcx != nil {
		if c.pcx == nil {
			c.pcx = new([numPC]uint64)
		}
		for i := range c.pcx {
			c.pcx[i] += o.pcx[i]
		}
	}
	for i := range c.pce {
		c.addExt(i, o.pce[i])
	}
	if o.sl != nil {
		for i := range numSL {
			addSL(&c.perSL().xmit[i], uint64(o.sl.xmit[i]))
			addSL(&c.perSL().rcv[i], uint64(o.sl.rcv[i]))
		}
	}
}

// putPC writes the PortCounters values into the attribute data d.
func (c *counters) putPC(d []byte) {
	for i, f := range pcFields {
		f.Put(d, uint64(c.pc[i]))
	}
}

func (c *counters) putPCE(d []byte) {
	for i, f := range pceFields {
		f.Put(d, c.pce[i])
	}
	if c.pcx != nil {
		for i, f := range pcxFields {
			if f.Width != 0 {
				f.Put(d, c.pcx[i])
			}
		}
	}
}

// CounterNames lists the counter names SetCounter and Counter accept: the
// PortCounters field names, then the PortCountersExtended-only ones,
// then those of the groups the PMA answers beyond ibsim (see SetCounter).
func CounterNames() []string {
	names := append([]string(nil), pcNames[:]...)
	for _, n := range pceNames {
		if counterIndex(pcNames[:], n) < 0 {
			names = append(names, n)
		}
	}
	seen := map[string]bool{}
	for _, l := range append(perf.Layouts(), perf.PortExtendedSpeedsCountersRSFECLayout()) {
		if _, group := pmaGroupKinds[l.ID]; !group {
			continue
		}
		for _, fl := range l.Fields[2:] {
			if !seen[fl.Name] {
				seen[fl.Name] = true
				names = append(names, fl.Name)
			}
		}
	}
	return names
}

// counterKeys maps the counters' IBA names to their Lua keys, as the PMA
// layouts spell them.
var counterKeys = func() map[string]string {
	m := map[string]string{}
	for _, l := range perf.Layouts() {
		for _, f := range l.Fields {
			m[f.Name] = f.Key()
		}
	}
	return m
}()

func counterIndex(names []string, name string) int {
	for i, n := range names {
		if strings.EqualFold(n, name) || (name != "" && counterKeys[n] == name) {
			return i
		}
	}
	return -1
}

// SetCounter sets one performance counter of a port, so tests can plant
// errors or traffic. name is a PortCounters or PortCountersExtended field
// name as in mad/perf ("SymbolErrorCounter", "PortXmitData", or its
// snake_case form); a counter in both attributes (the data and packet
// counters) is set in both. It may also name a counter of
// PortXmitDataSL/PortRcvDataSL ("PortXmitDataSL3"),
// PortExtendedSpeedsCounters (either layout: "SyncHeaderErrorCounter",
// "PortFECCorrectableBlockCounter") or the congestion groups
// ("PortXmitTimeCong", "PortSLRcvFECN2"), which the PMA answers beyond
// ibsim (not under Options.IbsimStrict). Values saturate at the
// counter's width. node is a node id or description; port 0 is a
// switch's management port.
func (f *Fabric) SetCounter(node string, port int, name string, v uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.portLocked("set counter", node, port, true)
	if err != nil {
		return err
	}
	f.accrueLocked(p)
	i, j := counterIndex(pcNames[:], name), counterIndex(pceNames[:], name)
	if i < 0 && j < 0 {
		if f.setGroupCounter(p, name, v) {
			return nil
		}
		return fmt.Errorf("sim: set counter %q of %q port %d: unknown counter", name, p.node.id, port)
	}
	if i >= 0 {
		p.pc.pc[i] = uint32(min(v, uint64(pcMax[i])))
		if p.pc.pcx != nil {
			p.pc.pcx[i] = v
		}
	}
	if j >= 0 {
		p.pc.pce[j] = v
	}
	return nil
}

// Counter returns one performance counter of a port; see SetCounter. A
// counter in both attributes reads from PortCounters.
func (f *Fabric) Counter(node string, port int, name string) (uint64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.portLocked("counter", node, port, true)
	if err != nil {
		return 0, err
	}
	f.accrueLocked(p)
	if i := counterIndex(pcNames[:], name); i >= 0 {
		return uint64(p.pc.pc[i]), nil
	}
	if j := counterIndex(pceNames[:], name); j >= 0 {
		return p.pc.pce[j], nil
	}
	if attr, i, canon, ok := groupField(name); ok {
		return f.groupCounter(p, attr, i, canon, false), nil
	}
	return 0, fmt.Errorf("sim: counter %q of %q port %d: unknown counter", name, p.node.id, port)
}

// PMA ClassPortInfo values of ibsim: PortCountersExtended and PortXmitWait
// on every node, AllPortSelect on switches; RespTimeValue 18. Beyond
// ibsim (not under Options.IbsimStrict), IsRSFECCountersSupported: the
// PortExtendedSpeedsCounters of a port running RS-FEC have their RS-FEC
// layout.
const (
	pmaCapCA      = perf.CapExtendedWidth | perf.CapPortXmitWait
	pmaCapSwitch  = pmaCapCA | perf.CapAllPortSelect
	pmaRespTime   = 18
	pmaClassVer   = 1
	pmaBaseVer    = 1
	allPortSelect = perf.AllPorts
)

// pma answers a PerfMgt MAD at node n, received on port in (a CA port or
// switch port 0). The attribute data is b's PerfMgt data.
func (f *Fabric) pma(n *node, in *port, b []byte) (uint16, action) {
	method := mad.MethodOf(b)
	if method != mad.MethodGet && method != mad.MethodSet {
		return 0, actDeliver
	}
	d := perf.Data(b)
	switch mad.AttrIDOf(b) {
	case perf.AttrClassPortInfo:
		return f.pmaClassPortInfo(n, method, d), actRespond
	case perf.AttrPortCounters:
		ps := uint8(pcPortSelect.Get(d))
		sel, sel2 := uint16(pcCounterSelect.Get(d)), uint8(pcCounterSelect2.Get(d))
		var c counters
		ok := f.pmaPorts(n, in, ps, func(p *port) {
			if method == mad.MethodSet {
				p.pc.clear(sel, sel2)
			}
			c.sum(&p.pc)
		})
		if !ok {
			return mad.StatusInvalidField, actRespond
		}
		clear(d)
		pcPortSelect.Put(d, uint64(ps))
		pcCounterSelect.Put(d, uint64(sel))
		pcCounterSelect2.Put(d, uint64(sel2))
		c.putPC(d)
		return 0, actRespond
	case perf.AttrPortCountersExtended:
		ps := uint8(pcePortSelect.Get(d))
		sel, sel2 := uint16(pceCounterSelect.Get(d)), pceCounterSelect2.Get(d)
		var c counters
		ok := f.pmaPorts(n, in, ps, func(p *port) {
			if method == mad.MethodSet {
				p.pc.clearExt(sel)
			}
			c.sum(&p.pc)
		})
		if !ok {
			return mad.StatusInvalidField, actRespond
		}
		clear(d)
		pcePortSelect.Put(d, uint64(ps))
		pceCounterSelect.Put(d, uint64(sel))
		pceCounterSelect2.Put(d, sel2)
		c.putPCE(d)
		return 0, actRespond
	case perf.AttrPortRcvErrorDetails, perf.AttrPortXmitDiscardDetails, perf.AttrPortOpRcvCounters,
		perf.AttrPortFlowCtlCounters, perf.AttrPortVLOpPackets, perf.AttrPortVLOpData,
		perf.AttrPortVLXmitFlowCtlUpdateErrors, perf.AttrPortVLXmitWaitCounters:
		// ibsim answers these groups from counters nothing in it moves
		// (only its console sets them): zero, PortSelect checked as for
		// PortCounters, PortSelect and CounterSelect echoed.
		if !f.pmaPorts(n, in, uint8(pcPortSelect.Get(d)), func(*port) {}) {
			return mad.StatusInvalidField, actRespond
		}
		for _, fl := range perf.LayoutByID(mad.AttrIDOf(b)).Fields {
			if fl.Name != "PortSelect" && fl.Name != "CounterSelect" && fl.Name != "OpCode" {
				fl.Put(d, 0)
			}
		}
		return 0, actRespond
	}
	if st, ok := f.pmaExtended(n, in, b); ok {
		return st, actRespond
	}
	return 0, actDeliver
}

// pmaClassPortInfo answers the PMA's ClassPortInfo (Get only).
func (f *Fabric) pmaClassPortInfo(n *node, method uint8, d []byte) uint16 {
	cpi := mad.ClassPortInfo{BaseVersion: pmaBaseVer, ClassVersion: pmaClassVer,
		CapabilityMask: pmaCapCA, RespTimeValue: pmaRespTime}
	if n.typ == typeSwitch {
		cpi.CapabilityMask = pmaCapSwitch
	}
	if !f.strict {
		cpi.CapabilityMask |= perf.CapRSFECCounters
	}
	if f.additional {
		cpi.CapabilityMask2 |= perf.Cap2AdditionalPortCounters
	}
	clear(d)
	if _, err := cpi.AppendBinary(d[:0]); err != nil {
		return mad.StatusInvalidField
	}
	if method != mad.MethodGet {
		return mad.StatusMethodAttrUnsup
	}
	return 0
}

// pmaPorts calls fn for the ports PortSelect ps selects, as ibsim does: on
// a CA only the port the MAD came in on; on a switch any port or 0xFF for
// all of them. A planarized CA's PMA, on its GSI device, answers for any
// plane port and for 0xFF, the aggregated port: the planes' sum
// (planes.go). It reports false for a bad PortSelect.
//
// PortSelect 0 on a CA (perfquery LID with no port) is refused by ibsim,
// but an HCA's PMA answers it for the port the MAD came in on (mlx5's
// process_pma_cmd reads the counters of the port it arrived on), so the
// simulator does too unless Options.IbsimStrict.
func (f *Fabric) pmaPorts(n *node, in *port, ps uint8, fn func(*port)) bool {
	if n.typ != typeSwitch && !n.planarized {
		if ps == 0 && !f.strict {
			ps = uint8(in.num)
		}
		if int(ps) != in.num {
			return false
		}
		f.accrueLocked(in)
		fn(in)
		return true
	}
	if ps == allPortSelect {
		for _, p := range n.ports {
			if p != nil {
				f.accrueLocked(p)
				fn(p)
			}
		}
		return true
	}
	if int(ps) > n.numPorts || n.ports[ps] == nil {
		return false
	}
	f.accrueLocked(n.ports[ps])
	fn(n.ports[ps])
	return true
}
