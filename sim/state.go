package sim

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

const (
	typeCA     = smp.NodeTypeCA
	typeSwitch = smp.NodeTypeSwitch
	typeRouter = smp.NodeTypeRouter

	maxUnicastLID = 0xbfff
	maxLIDHops    = 64 // a LID-routed packet crossing more links is looping
)

// Attribute values ibsim 0.10 gives every node (sim_net.c's templates),
// written as field values.
const (
	revision         = 0xa1
	caPartitionCap   = 64 // NodeInfo.PartitionCap of CAs and routers
	swPartitionCap   = 8  // NodeInfo.PartitionCap of switches (port 0's P_Key table)
	swPartitionEnfCp = 64 // SwitchInfo.PartitionEnforcementCap (external ports' tables)
	linearFDBCap     = 30720
	mcastFDBCap      = 1024
	mkeyLeasePeriod  = 4089

	widthSupported    = 1 | 2 | 4 | 8 | 16 // 1x 4x 8x 12x 2x
	speedSupported    = 1 | 2 | 4          // SDR DDR QDR
	extSpeedSupported = 1 | 2 | 4          // FDR EDR HDR
	defaultWidth      = 2                  // 4x
	defaultSpeed      = 1                  // SDR

	// extXDR is XDR in an aggregated extended speed mask (a topology's
	// extspeed, linkMasks.ext): libibnetdisc's ibnd_get_agg_linkspeedext
	// puts LinkSpeedExtActive2/Supported2/Enabled2 (XDR their bit 0)
	// above LinkSpeedExt's four bits, shifted by 5.
	extXDR = 1 << 5
	// cap2ExtSpeeds2 is PortInfo.CapabilityMask2's
	// IsExtendedSpeeds2Supported (rdma-core's
	// IB_PORT_CAP2_IS_EXT_SPEEDS_2_SUPPORTED): the ...2 fields are valid.
	cap2ExtSpeeds2 = 1 << 11

	// PortInfo.CapabilityMask2 of CA ports and switch port 0:
	// IsLinkWidth2xSupported and IsLinkSpeedHDRSupported.
	capMask2 = 1<<4 | 1<<5

	capCA = smp.CapIsTrapSupported | smp.CapIsSLMappingSupported |
		smp.CapIsExtendedSpeedsSupported | smp.CapIsCapabilityMask2Supported |
		smp.CapIsVendorClassSupported | smp.CapIsCapabilityMaskNoticeSupported
	capCADown      = capCA &^ smp.CapIsCapabilityMaskNoticeSupported
	capSwitchPort0 = smp.CapIsTrapSupported | smp.CapIsSLMappingSupported |
		smp.CapIsExtendedSpeedsSupported | smp.CapIsCapabilityMask2Supported

	gidPrefix = 0xfe80000000000000

	// What OpenSM sets and ibsim keeps: SwitchInfo.LifeTimeValue and the
	// HOQLife of linked ports (its head_of_queue_lifetime between
	// switches, leaf_head_of_queue_lifetime on switch ports facing a CA or
	// router and on router ports; osm_link_mgr.c, defaults 0x12 and 0x10).
	osmLifeTime    = 18
	osmHOQLife     = 18
	osmLeafHOQLife = 16
)

// node is one simulated CA, switch or router.
type node struct {
	id, desc string
	typ      uint8
	numPorts int
	guid     uint64
	ports    []*port  // by number; ports[0] is nil on CAs and routers
	ni       [64]byte // NodeInfo; PortGUID and LocalPortNum are patched per query
	nd       [64]byte // NodeDescription
	sw       *swState // switches only
	swIdx    int32    // index among the routed switches while routing; -1 otherwise
	idx      int32    // index in Fabric.nodes
	// planarized marks a planarized CA (planes.go): its ports are its
	// planes and share one set of attachments.
	planarized bool
}

// swState is the switch part of a node.
type swState struct {
	si  [64]byte // SwitchInfo
	top uint16   // LinearFDBTop, as in si
	lft []byte   // egress port by LID; LIDs at or past len(lft) are dropped; read and written through table
	// pending, when not nil, is the routing that fills lft on its first
	// use (routeSwitches).
	pending *islandRoute
}

// table returns s's forwarding table, made and filled first if its
// routing is pending. f.mu is held.
func (s *swState) table() []byte {
	if r := s.pending; r != nil {
		r.run()
	}
	return s.lft
}

// port is one port of a node. pi is its PortInfo as an SMA returns it
// (LocalPortNum patched per query); lid, lmc, state and phys mirror it for
// the forwarding paths.
type port struct {
	node   *node
	num    int
	guid   uint64
	remote *port // the cable's other end, nil when uncabled
	pi     [64]byte
	lid    uint16
	lmc    uint8
	state  uint8
	phys   uint8
	extEn  uint8    // LinkSpeedExtEnabled; PortInfo shows it only while an extended speed is active
	pkeys  []uint16 // P_Key table; nil means the default (0xFFFF at index 0)
	pc     counters
	att    *attachments // transports open on this port; nil when none
	ipoib  []netip.Addr // the port's IPoIB addresses (SetIPoIB)
	plane  uint8        // the port's plane (topo.Port.Plane), 0 for none
	idx    int32        // the port's index among the fabric's (Fabric.nports), for slices by port
	// accrued is how far into the background load (Traffic) pc holds
	// what the load moved.
	accrued time.Duration
}

// endport returns the port that holds n's LID for a MAD that came in on
// in: a switch's port 0, else in.
func (n *node) endport(in *port) *port {
	if n.typ == typeSwitch {
		return n.ports[0]
	}
	return in
}

// owns reports whether lid is one of p's LIDs.
func (p *port) owns(lid uint16) bool {
	return p.lid != 0 && lid >= p.lid && uint32(lid) < uint32(p.lid)+1<<p.lmc
}

// up reports whether a MAD can cross the cable at p: both ends are
// LinkUp, and for a non-SMP both are Active.
func (p *port) up(isSMP bool) bool {
	r := p.remote
	if r == nil || p.phys != smp.PhysStateLinkUp || r.phys != smp.PhysStateLinkUp {
		return false
	}
	return isSMP || (p.state == smp.PortStateActive && r.state == smp.PortStateActive)
}

// info decodes p's PortInfo.
func (p *port) info() smp.PortInfo {
	var pi smp.PortInfo
	_ = pi.UnmarshalBinary(p.pi[:])
	return pi
}

// setInfo stores pi as p's PortInfo.
func (p *port) setInfo(pi *smp.PortInfo) {
	_, _ = pi.AppendBinary(p.pi[:0])
	p.lid, p.lmc, p.state, p.phys = pi.LID, pi.LMC, pi.PortState, pi.PortPhysicalState
}

// get reads one PortInfo field of p.
func (p *port) get(fl mad.Field) uint64 { return fl.Get(p.pi[:]) }

// put writes one PortInfo field of p, keeping the mirrored fields.
func (p *port) put(fl mad.Field, v uint64) {
	fl.Put(p.pi[:], v)
	p.sync()
}

// sync reloads the fields mirrored from p.pi.
func (p *port) sync() {
	p.lid, p.lmc = uint16(piLID.Get(p.pi[:])), uint8(piLMC.Get(p.pi[:]))
	p.state, p.phys = uint8(piPortState.Get(p.pi[:])), uint8(piPortPhysicalState.Get(p.pi[:]))
}

func (p *port) update(fn func(pi *smp.PortInfo)) {
	pi := p.info()
	fn(&pi)
	p.setInfo(&pi)
}

func (p *port) String() string { return fmt.Sprintf("%q port %d", p.node.id, p.num) }

// link parameters as PortInfo masks.
type linkMasks struct{ width, speed, ext uint8 }

func bestWidth(m uint8) uint8 {
	for _, w := range [...]uint8{8, 4, 2, 16, 1} { // 12x 8x 4x 2x 1x
		if m&w != 0 {
			return w
		}
	}
	return 0
}

func bestBit(m uint8) uint8 {
	for b := uint8(0x80); b != 0; b >>= 1 {
		if m&b != 0 {
			return b
		}
	}
	return 0
}

// defaultPortInfo is the PortInfo ibsim 0.10 gives a port before any SM
// configures it: its templates for switch port 0, switch ports and CA ports
// (cabled or not), with the link's enabled and active widths and speeds.
func defaultPortInfo(n *node, num int, cabled bool, en, act linkMasks) smp.PortInfo {
	pi := smp.PortInfo{
		LocalPortNum:         uint8(num),
		LinkWidthEnabled:     en.width,
		LinkWidthSupported:   widthSupported,
		LinkWidthActive:      act.width,
		LinkSpeedSupported:   speedSupported,
		LinkSpeedEnabled:     en.speed,
		LinkSpeedActive:      act.speed,
		LinkDownDefaultState: smp.PhysStatePolling,
		NeighborMTU:          4, // 2048
		MTUCap:               4,
		VLCap:                4, // VL0-7
		OperationalVLs:       4,
		VLArbitrationHighCap: 8,
		VLArbitrationLowCap:  8,
		VLStallCount:         7,
		PortState:            smp.PortStateDown,
		PortPhysicalState:    smp.PhysStatePolling,
	}
	if cabled {
		pi.PortState, pi.PortPhysicalState = smp.PortStateInit, smp.PhysStateLinkUp
	}
	setExtSpeeds(&pi, en.ext, act.ext, n.typ != typeSwitch || num == 0)
	switch {
	case n.typ == typeSwitch && num == 0:
		pi.LocalPortNum = 0
		pi.CapabilityMask = capSwitchPort0
		pi.CapabilityMask2 |= capMask2
		pi.MKeyLeasePeriod = mkeyLeasePeriod
		pi.NeighborMTU, pi.MTUCap = 1, 3 // 256, 1024
		pi.VLStallCount = 0
		pi.GUIDCap = 1
		pi.SubnetTimeOut = 31
		pi.RespTimeValue = 8
		pi.PortState, pi.PortPhysicalState = smp.PortStateActive, smp.PhysStateLinkUp
	case n.typ == typeSwitch:
		pi.LocalPortNum = 0
		if !cabled {
			pi.LocalPhyErrors = 4
		}
	default:
		pi.CapabilityMask = capCADown
		if cabled {
			pi.CapabilityMask = capCA
		}
		pi.CapabilityMask2 |= capMask2
		pi.MKeyLeasePeriod = mkeyLeasePeriod
		pi.GUIDCap = 32
		pi.SubnetTimeOut = 31
	}
	return pi
}

// setExtSpeeds sets pi's extended speed fields from a port's enabled and
// its link's active aggregated masks (extXDR above LinkSpeedExt's bits):
// LinkSpeedExt* as ibsim shows them, only while an extended speed is
// active; and on a port that can run XDR, IsExtendedSpeeds2Supported
// (hasCap2: a CA port or switch port 0, whose CapabilityMask2 speaks for
// the node) with LinkSpeedExtSupported2/Enabled2 (XDR) and LinkSpeedExtActive2
// while the link runs XDR (LinkSpeedExtActive then 0).
func setExtSpeeds(pi *smp.PortInfo, en, act uint8, hasCap2 bool) {
	pi.LinkSpeedExtEnabled, pi.LinkSpeedExtSupported, pi.LinkSpeedExtActive = 0, 0, 0
	pi.LinkSpeedExtEnabled2, pi.LinkSpeedExtSupported2, pi.LinkSpeedExtActive2 = 0, 0, 0
	if act != 0 {
		pi.LinkSpeedExtEnabled = en &^ extXDR
		pi.LinkSpeedExtSupported = extSpeedSupported | en&0xf
		pi.LinkSpeedExtActive = act &^ extXDR
	}
	if en&extXDR != 0 {
		if hasCap2 {
			pi.CapabilityMask2 |= cap2ExtSpeeds2
		}
		pi.LinkSpeedExtSupported2, pi.LinkSpeedExtEnabled2 = 1, 1
		if act&extXDR != 0 {
			pi.LinkSpeedExtActive2 = 1
		}
	}
}

// aggExtActive is p's active extended speed as an aggregated mask: XDR
// (extXDR) while LinkSpeedExtActive2 says so, else LinkSpeedExtActive.
func (p *port) aggExtActive() uint8 {
	if p.get(piSpeedExtActive2)&1 != 0 {
		return extXDR
	}
	return uint8(p.get(piSpeedExtActive))
}

// enabled returns a topo port's enabled link masks, with ibsim's defaults
// (4x, SDR) for masks a hand-built model leaves zero.
func enabled(tp *topo.Port) linkMasks {
	m := linkMasks{width: tp.WidthEnabled, speed: tp.SpeedEnabled, ext: tp.SpeedExtEnabled}
	if m.width == 0 {
		m.width = defaultWidth
	}
	if m.speed == 0 {
		m.speed = defaultSpeed
	}
	return m
}

// active returns the active link masks of a cable whose ends enable a and
// b: the highest common width and speed, and the highest common extended
// speed (none if there is no common one). ok is false when a and b have no
// common width or speed.
func active(a, b linkMasks) (act linkMasks, ok bool) {
	act = linkMasks{
		width: bestWidth(a.width & b.width),
		speed: bestBit(a.speed & b.speed),
		ext:   bestBit(a.ext & b.ext),
	}
	return act, act.width != 0 && act.speed != 0
}

// pkeyCap returns the size of p's P_Key table: the node's PartitionCap for
// CA ports and switch port 0, SwitchInfo.PartitionEnforcementCap for switch
// external ports.
func (p *port) pkeyCap() int {
	switch {
	case p.node.typ != typeSwitch:
		return caPartitionCap
	case p.num == 0:
		return swPartitionCap
	}
	return swPartitionEnfCp
}

// pkey returns entry i of p's P_Key table.
func (p *port) pkey(i int) uint16 {
	if p.pkeys == nil {
		if i == 0 {
			return smp.DefaultPKey
		}
		return 0
	}
	return p.pkeys[i]
}
