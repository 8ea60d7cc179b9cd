package smp

import (
	"encoding/binary"

	"github.com/ibscript/ibscript/mad"
)

// Generic trap numbers (Notice.TrapNumber with IsGeneric set): IBA vol. 1
// table 131 (14.2.5.1), OpenSM's ib_types.h for the names.
const (
	TrapGIDInService    uint16 = 64  // an endport became reachable (SM)
	TrapGIDOutOfService uint16 = 65  // an endport ceased to be reachable (SM)
	TrapMGIDCreated     uint16 = 66  // a multicast group was created (SM)
	TrapMGIDDestroyed   uint16 = 67  // a multicast group was deleted (SM)
	TrapLinkStateChange uint16 = 128 // a switch port's link state changed
	TrapLinkIntegrity   uint16 = 129 // LocalLinkIntegrityErrors over threshold
	TrapBufferOverrun   uint16 = 130 // ExcessiveBufferOverrunErrors over threshold
	TrapWatchdog        uint16 = 131 // flow control update watchdog expired
	TrapLocalChanges    uint16 = 144 // CapabilityMask or other local attributes changed
	TrapSystemImageGUID uint16 = 145 // SystemImageGUID changed
	TrapBadMKey         uint16 = 256 // bad M_Key
	TrapBadPKey         uint16 = 257 // bad P_Key
	TrapBadQKey         uint16 = 258 // bad Q_Key
	TrapBadSwitchPKey   uint16 = 259 // bad P_Key at a switch external port
	// TrapAll, in InformInfo.TrapNumber, subscribes to every trap.
	TrapAll uint16 = 0xFFFF
)

// Notice.ProducerType of generic notices.
const (
	ProducerCA       uint32 = 1
	ProducerSwitch   uint32 = 2
	ProducerRouter   uint32 = 3
	ProducerClassMgr uint32 = 4 // the SM's own traps (64 to 67)
)

// Offsets in DataDetails (OpenSM's ib_mad_notice_attr_t data_details).
const (
	detailsGID       = 6 // traps 64-67: 6 reserved bytes, then the GID
	detailsSwitchLID = 0 // trap 128
	detailsLID       = 2 // traps 129-131, 144, 145, 256: 2 reserved bytes, then the LID
	detailsPort      = 4 // traps 129-131: the port after the LID
	detailsCapMask   = 6 // trap 144: after the LID, a reserved byte and LocalChanges
)

// TrapName names a generic trap number as OpenSM's ib_get_trap_str does
// (without its "(...)" details), or returns "" for a number it does not
// know.
func TrapName(num uint16) string {
	switch num {
	case TrapGIDInService:
		return "GID in service"
	case TrapGIDOutOfService:
		return "GID out of service"
	case TrapMGIDCreated:
		return "New mcast group created"
	case TrapMGIDDestroyed:
		return "Mcast group deleted"
	case TrapLinkStateChange:
		return "Link state change"
	case TrapLinkIntegrity:
		return "Local Link integrity threshold reached"
	case TrapBufferOverrun:
		return "Excessive Buffer Overrun Threshold reached"
	case TrapWatchdog:
		return "Flow Control Update watchdog timer expired"
	case TrapLocalChanges:
		return "CapabilityMask, NodeDescription, Link [Width|Speed] Enabled, SM priority changed"
	case TrapSystemImageGUID:
		return "System Image GUID changed"
	case TrapBadMKey:
		return "Bad M_Key"
	case TrapBadPKey:
		return "Bad P_Key"
	case TrapBadQKey:
		return "Bad Q_Key"
	case TrapBadSwitchPKey:
		return "Bad P_Key (switch external port)"
	}
	return ""
}

// DetailsGID returns the GID a generic notice's DataDetails carry: the
// endport that came into or went out of service (traps 64 and 65), the
// multicast group created or deleted (66, 67). ok is false for other
// notices.
func (n *Notice) DetailsGID() (gid mad.GID, ok bool) {
	if !n.IsGeneric || n.TrapNumber < TrapGIDInService || n.TrapNumber > TrapMGIDDestroyed {
		return gid, false
	}
	copy(gid[:], n.DataDetails[detailsGID:detailsGID+16])
	return gid, true
}

// DetailsLID returns the LID a generic notice's DataDetails carry: the
// switch whose port changed state (trap 128), the port that crossed a
// threshold or whose attributes changed (129-131, 144, 145), the port a
// bad M_Key reached (256). ok is false for other notices.
func (n *Notice) DetailsLID() (lid uint16, ok bool) {
	if !n.IsGeneric {
		return 0, false
	}
	switch n.TrapNumber {
	case TrapLinkStateChange:
		return binary.BigEndian.Uint16(n.DataDetails[detailsSwitchLID:]), true
	case TrapLinkIntegrity, TrapBufferOverrun, TrapWatchdog, TrapLocalChanges, TrapSystemImageGUID, TrapBadMKey:
		return binary.BigEndian.Uint16(n.DataDetails[detailsLID:]), true
	}
	return 0, false
}

// DetailsPort returns the port number of traps 129 to 131 (the port whose
// counter crossed its threshold). ok is false for other notices.
func (n *Notice) DetailsPort() (port uint8, ok bool) {
	if !n.IsGeneric || n.TrapNumber < TrapLinkIntegrity || n.TrapNumber > TrapWatchdog {
		return 0, false
	}
	return n.DataDetails[detailsPort], true
}

// SetDetailsGID writes gid where traps 64 to 67 carry it.
func (n *Notice) SetDetailsGID(gid mad.GID) {
	copy(n.DataDetails[detailsGID:detailsGID+16], gid[:])
}

// SetDetailsSwitchLID writes the switch LID of trap 128.
func (n *Notice) SetDetailsSwitchLID(lid uint16) {
	binary.BigEndian.PutUint16(n.DataDetails[detailsSwitchLID:], lid)
}

// DetailsCapabilityMask returns the new PortInfo.CapabilityMask trap 144
// carries. ok is false for other notices.
func (n *Notice) DetailsCapabilityMask() (mask uint32, ok bool) {
	if !n.IsGeneric || n.TrapNumber != TrapLocalChanges {
		return 0, false
	}
	return binary.BigEndian.Uint32(n.DataDetails[detailsCapMask:]), true
}

// SetDetailsLID writes the LID of traps 129-131, 144, 145 and 256.
func (n *Notice) SetDetailsLID(lid uint16) {
	binary.BigEndian.PutUint16(n.DataDetails[detailsLID:], lid)
}

// SetDetailsCapabilityMask writes the new CapabilityMask of trap 144.
func (n *Notice) SetDetailsCapabilityMask(mask uint32) {
	binary.BigEndian.PutUint32(n.DataDetails[detailsCapMask:], mask)
}
