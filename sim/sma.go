package sim

import (
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// action is what to do with a MAD an agent of the fabric looked at.
type action uint8

const (
	actRespond action = iota // send the response built in place
	actDeliver               // hand it to the port's transports (kernel rules if none)
	actDrop
)

const (
	stUnsupported = mad.StatusMethodAttrUnsup // 0x000C
	stInvalid     = mad.StatusInvalidField    // 0x001C
	maxLFTBlock   = 767                       // LIDs up to 0xBFFF
)

// sma is the subnet management agent of node n, answering an SMP that
// came in on port in (a switch's port 0 when LID-routed to it). It builds
// the answer in place in b's SMP data and returns its status, or says the
// SMP is for the port's agents (methods other than Get and Set,
// attributes it does not model, SMInfo away from the SM's port).
func (f *Fabric) sma(n *node, in *port, b []byte) (uint16, action) {
	method := mad.MethodOf(b)
	if method != mad.MethodGet && method != mad.MethodSet {
		return 0, actDeliver
	}
	set := method == mad.MethodSet
	d := fSMPData.bytes(b)
	mod := fAttrMod.u32(b)
	if f.inj != nil && !set && fAttrID.u16(b) == smp.AttrPortInfo && f.mutedPortInfo(n, in, mod) {
		return 0, actDrop
	}
	var st uint16
	switch fAttrID.u16(b) {
	case smp.AttrNodeDescription:
		copy(d, n.nd[:])
		if set {
			st = stUnsupported
		}
	case smp.AttrNodeInfo:
		copy(d, n.ni[:])
		niPortGUID.Put(d, n.endport(in).guid)
		niLocalPortNum.Put(d, uint64(in.num))
		if set {
			st = stUnsupported
		}
	case smp.AttrSwitchInfo:
		if n.sw == nil {
			return stUnsupported, actRespond
		}
		if set {
			st = f.setSwitchInfo(n, d)
		}
		copy(d, n.sw.si[:])
	case smp.AttrGUIDInfo:
		// Like ibsim: block 0 holds the port GUID, the rest is empty.
		clear(d)
		if mod == 0 {
			smp.GUIDInfoLayout().Fields[0].Put(d, n.endport(in).guid)
		}
		if set {
			st = stUnsupported
		}
	case smp.AttrPortInfo:
		st = f.portInfo(n, in, mod, set, d)
	case smp.AttrPKeyTable:
		st = pkeyTable(n, in, mod, set, d)
	case smp.AttrLinearForwardingTable:
		st = lftBlock(n, mod, set, d)
	case smp.AttrSLtoVLMappingTable:
		st = f.sl2vl(n, in, mod, set, d)
	case smp.AttrVLArbitrationTable:
		st = f.vlarb(n, in, mod, set, d)
	case smp.AttrMlnxExtPortInfo:
		st = f.mlnxExtPortInfo(n, in, mod, set, d)
	case smp.AttrMulticastForwardingTable:
		st = f.mftBlock(n, mod, set, d)
	case smp.AttrSMInfo:
		if f.extraSMInfo(n.endport(in), d) {
			break
		}
		if !f.hasSM || !f.isSMPort(n.endport(in)) {
			return 0, actDeliver
		}
		si := smp.SMInfo{GUID: n.endport(in).guid, ActCount: f.actCount, SMState: smp.SMStateMaster}
		if f.mKey != 0 && fSMPMKey.u64(b) == f.mKey {
			si.SMKey = f.saKey // "zero unless authenticated": by the M_Key
		}
		f.actCount++
		clear(d)
		_, _ = si.AppendBinary(d[:0])
	default:
		return f.smaExtended(n, in, fAttrID.u16(b), mod, set, d)
	}
	return st, actRespond
}

// portInfo answers PortInfo. The modifier is the port; 0 on a CA means the
// port the SMP came in on. LocalPortNum is always that port.
func (f *Fabric) portInfo(n *node, in *port, mod uint32, set bool, d []byte) uint16 {
	num := int(mod & 0x7fffffff)
	if num > n.numPorts {
		return stInvalid
	}
	if num == 0 && n.typ != typeSwitch {
		num = in.num
	}
	p := n.ports[num]
	var st uint16
	if set {
		st = f.setPortInfo(n, in, p, d)
	}
	copy(d, p.pi[:])
	piLocalPortNum.Put(d, uint64(in.num))
	piMKey.Put(d, f.mKey)
	return st
}

func absDiff(a, b uint8) uint8 {
	if a > b {
		return a - b
	}
	return b - a
}

// setPortInfo applies a PortInfo Set to p, all or nothing. Like ibsim it
// takes LID, MasterSMLID, LMC, HOQLife, GidPrefix, OperationalVLs (0 means
// no change), the link's enabled widths and speeds, PortState (Down
// retrains the link to Init at once; Armed and Active step up one state
// within one of the peer's) and PortPhysicalState (Polling retrains,
// Disabled takes the link down); M_Key and the timers are ignored.
func (f *Fabric) setPortInfo(n *node, in *port, p *port, d []byte) uint16 {
	if n.typ != typeSwitch && p != in {
		return stInvalid // a CA sets only the port the SMP came in on
	}
	var req smp.PortInfo
	if req.UnmarshalBinary(d) != nil {
		return stInvalid
	}
	cur := p.info()
	r := p.remote
	switch st := req.PortState; st {
	case smp.PortStateNoChange, smp.PortStateDown, smp.PortStateInit:
	case smp.PortStateArmed, smp.PortStateActive:
		if r == nil || p.phys != smp.PhysStateLinkUp ||
			absDiff(r.state, st) > 1 || absDiff(cur.PortState, st) != 1 {
			return stInvalid
		}
	default:
		return stInvalid
	}
	switch req.PortPhysicalState {
	case smp.PhysStateNoChange, smp.PhysStatePolling, smp.PhysStateDisabled:
	default:
		return stInvalid
	}
	if req.OperationalVLs > cur.VLCap {
		return stInvalid
	}
	if w := req.LinkWidthEnabled; w != 0 && w != 0xff && (w&^widthSupported != 0) {
		return stInvalid
	}
	if s := req.LinkSpeedEnabled; s != 0 && s != 0xf && (s&^speedSupported != 0) {
		return stInvalid
	}
	if e := req.LinkSpeedExtEnabled; e != 0 && e != 30 && e != 31 && e > 0xf {
		return stInvalid
	}

	cur.LID, cur.MasterSMLID, cur.LMC = req.LID, req.MasterSMLID, req.LMC
	cur.HOQLife, cur.GIDPrefix = req.HOQLife, req.GIDPrefix
	if req.OperationalVLs != 0 {
		cur.OperationalVLs = req.OperationalVLs
	}
	relink := false
	switch w := req.LinkWidthEnabled; w {
	case 0:
	case 0xff:
		cur.LinkWidthEnabled, relink = widthSupported, true
	default:
		cur.LinkWidthEnabled, relink = w, true
	}
	switch s := req.LinkSpeedEnabled; s {
	case 0:
	case 0xf:
		cur.LinkSpeedEnabled, relink = speedSupported, true
	default:
		cur.LinkSpeedEnabled, relink = s, true
	}
	switch e := req.LinkSpeedExtEnabled; e {
	case 0:
	case 30:
		p.extEn, relink = p.extEn&extXDR, true
	case 31:
		p.extEn, relink = extSpeedSupported|p.extEn&extXDR, true
	default:
		p.extEn, relink = e|p.extEn&extXDR, true
	}
	switch req.PortState {
	case smp.PortStateDown:
		if r != nil && p.phys == smp.PhysStateLinkUp {
			cur.PortState = smp.PortStateInit
			r.update(func(pi *smp.PortInfo) { pi.PortState = smp.PortStateInit })
			portChanged(r.node)
		}
	case smp.PortStateArmed, smp.PortStateActive:
		cur.PortState = req.PortState
	}
	switch req.PortPhysicalState {
	case smp.PhysStatePolling: // retrain: the link comes back up at once
		if r != nil && r.phys != smp.PhysStateDisabled {
			cur.PortState, cur.PortPhysicalState = smp.PortStateInit, smp.PhysStateLinkUp
			r.update(func(pi *smp.PortInfo) {
				pi.PortState, pi.PortPhysicalState = smp.PortStateInit, smp.PhysStateLinkUp
			})
			portChanged(r.node)
		}
	case smp.PhysStateDisabled:
		cur.PortState, cur.PortPhysicalState = smp.PortStateDown, smp.PhysStateDisabled
		if r != nil && r.phys != smp.PhysStateDisabled {
			r.update(func(pi *smp.PortInfo) {
				pi.PortState, pi.PortPhysicalState = smp.PortStateDown, smp.PhysStatePolling
			})
			portChanged(r.node)
		}
	}
	p.setInfo(&cur)
	if relink {
		p.relink()
	}
	return 0
}

// portChanged sets SwitchInfo.PortStateChange of a switch.
func portChanged(n *node) {
	if n.sw == nil {
		return
	}
	si := n.sw.info()
	si.PortStateChange = true
	n.sw.setInfo(&si)
}

// relink recomputes the active width and speeds of p's cable after its
// enabled masks changed: the highest ones both ends enable (unchanged if
// they have none in common), as ibsim shows them.
func (p *port) relink() {
	r := p.remote
	if r == nil {
		return
	}
	pi, ri := p.info(), r.info()
	a := linkMasks{pi.LinkWidthEnabled, pi.LinkSpeedEnabled, p.extEn}
	b := linkMasks{ri.LinkWidthEnabled, ri.LinkSpeedEnabled, r.extEn}
	act, ok := active(a, b)
	if !ok {
		return
	}
	for _, x := range [...]*port{p, r} {
		x.update(func(pi *smp.PortInfo) {
			pi.LinkWidthActive, pi.LinkSpeedActive = act.width, act.speed
			setExtSpeeds(pi, x.extEn, act.ext, x.node.typ != typeSwitch)
		})
	}
}

// setSwitchInfo applies a SwitchInfo Set: LinearFDBTop, the default ports,
// LifeTimeValue, MulticastFDBTop, and PortStateChange (writing 1 clears
// it). The capacities are read-only.
func (f *Fabric) setSwitchInfo(n *node, d []byte) uint16 {
	var req smp.SwitchInfo
	if req.UnmarshalBinary(d) != nil || req.LinearFDBTop > maxUnicastLID {
		return stInvalid
	}
	cur := n.sw.info()
	cur.LinearFDBTop = req.LinearFDBTop
	cur.DefaultPort = req.DefaultPort
	cur.DefaultMulticastPrimaryPort = req.DefaultMulticastPrimaryPort
	cur.DefaultMulticastNotPrimaryPort = req.DefaultMulticastNotPrimaryPort
	cur.LifeTimeValue = req.LifeTimeValue
	cur.MulticastFDBTop = req.MulticastFDBTop
	if req.PortStateChange {
		cur.PortStateChange = false
	}
	n.sw.setInfo(&cur)
	return 0
}

// pkeyTable answers P_KeyTable: modifier bits 15..0 are the block of 32
// entries; on a switch bits 31..16 are the port, on a CA the port is the
// one the SMP came in on.
func pkeyTable(n *node, in *port, mod uint32, set bool, d []byte) uint16 {
	block := int(mod & 0xffff)
	p := in
	if n.typ == typeSwitch {
		num := int(mod >> 16)
		if num > n.numPorts {
			return stInvalid
		}
		p = n.ports[num]
	}
	size := p.pkeyCap()
	if block*32 >= size {
		return stInvalid
	}
	fields := smp.PKeyTableLayout().Fields
	base := block * 32
	if set {
		if p.pkeys == nil {
			p.pkeys = make([]uint16, size)
			p.pkeys[0] = smp.DefaultPKey
		}
		for i, fl := range fields {
			if base+i < size {
				p.pkeys[base+i] = uint16(fl.Get(d))
			}
		}
	}
	clear(d)
	for i, fl := range fields {
		if base+i < size {
			fl.Put(d, uint64(p.pkey(base+i)))
		}
	}
	return 0
}

// lftBlock answers LinearForwardingTable: the modifier is the block of 64
// LIDs. Entries the switch holds no route for read 0xFF.
func lftBlock(n *node, mod uint32, set bool, d []byte) uint16 {
	s := n.sw
	if s == nil {
		return stUnsupported
	}
	if mod > maxLFTBlock {
		return stInvalid
	}
	fields := smp.LinearForwardingTableLayout().Fields
	base := int(mod) * smp.LIDsPerLFTBlock
	s.table() // filled before a Set's entries are written or a Get reads
	if set {
		if base >= linearFDBCap {
			return stInvalid
		}
		for len(s.lft) < base+len(fields) {
			s.lft = append(s.lft, smp.DropPort)
		}
		for i, fl := range fields {
			s.lft[base+i] = uint8(fl.Get(d))
		}
	}
	for i, fl := range fields {
		v := smp.DropPort
		if base+i < len(s.lft) {
			v = s.lft[base+i]
		}
		fl.Put(d, uint64(v))
	}
	return 0
}
