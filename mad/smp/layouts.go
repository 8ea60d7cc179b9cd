package smp

// SMP attribute IDs without a codec yet (mad-formats.md section 6, "SMP
// attribute IDs"); the others are generated with their layouts
// (attrs_gen.go, from mad/internal/madgen's schema).
const (
	AttrRandomForwardingTable    uint16 = 0x001A
	AttrLinkSpeedWidthPairsTable uint16 = 0x001C
	AttrVendorDiag               uint16 = 0x0030
)

// Node types (NodeInfo.NodeType).
const (
	NodeTypeCA     uint8 = 1
	NodeTypeSwitch uint8 = 2
	NodeTypeRouter uint8 = 3
)

// Notice types (Notice.Type).
const (
	NoticeFatal       uint8 = 0
	NoticeUrgent      uint8 = 1
	NoticeSecurity    uint8 = 2
	NoticeSubnetMgmt  uint8 = 3
	NoticeInformation uint8 = 4
	NoticeEmpty       uint8 = 0x7F
)

// NoticeSMPSize is the part of a Notice that an SMP carries: the 64-byte
// SMP data area holds every field but IssuerGID (the SM learns the issuer
// from the packet). SA Reports carry all 80 bytes.
const NoticeSMPSize = 64

// Cap2IsPortInfoExtendedSupported is the PortInfo.CapabilityMask2 bit of a
// port that answers PortInfoExtended (libibmad's
// IB_PORT_CAP2_IS_PORT_INFO_EXT_SUPPORTED).
const Cap2IsPortInfoExtendedSupported uint16 = 1 << 1

// Cap2IsExtendedSpeeds2Supported is the PortInfo.CapabilityMask2 bit of a
// port whose LinkSpeedExtSupported2, LinkSpeedExtEnabled2 and
// LinkSpeedExtActive2 (XDR) are valid (libibmad's
// IB_PORT_CAP2_IS_EXT_SPEEDS_2_SUPPORTED, which libibnetdisc's
// ibnd_get_agg_linkspeedext_field checks).
const Cap2IsExtendedSpeeds2Supported uint16 = 1 << 11

// ExtSpeedXDR is XDR in an aggregated extended speed mask: libibnetdisc's
// ibnd_get_agg_linkspeedext* put the LinkSpeedExt*2 fields (XDR their bit
// 0) above LinkSpeedExt's four bits, shifted by 5.
const ExtSpeedXDR uint8 = 1 << 5

// AggExtSpeeds returns info's extended speeds aggregated as libibnetdisc's
// ibnd_get_agg_linkspeedext, ibnd_get_agg_linkspeedexten and
// ibnd_get_agg_linkspeedextsup do, capInfo being the PortInfo whose
// capability masks count (port 0's on a switch; ibportstate passes the
// port's own): nothing without IsExtendedSpeedsSupported; LinkSpeedExt*
// (an enabled 30 read as 0) with the LinkSpeedExt*2 fields shifted by 5
// above them where CapabilityMask has IsCapabilityMask2Supported and
// CapabilityMask2 IsExtendedSpeeds2Supported; an active ...2 speed
// replaces LinkSpeedExtActive.
func AggExtSpeeds(capInfo, info *PortInfo) (active, enabled, supported uint8) {
	if capInfo.CapabilityMask&CapIsExtendedSpeedsSupported == 0 {
		return 0, 0, 0
	}
	active, enabled, supported = info.LinkSpeedExtActive, info.LinkSpeedExtEnabled, info.LinkSpeedExtSupported
	if enabled == 30 {
		enabled = 0
	}
	if capInfo.CapabilityMask&CapIsCapabilityMask2Supported != 0 && capInfo.CapabilityMask2&Cap2IsExtendedSpeeds2Supported != 0 {
		if a2 := info.LinkSpeedExtActive2 << 5; a2 != 0 {
			active = a2
		}
		enabled |= info.LinkSpeedExtEnabled2 << 5
		supported |= info.LinkSpeedExtSupported2 << 5
	}
	return active, enabled, supported
}

// PIECapFECModeSupported is the PortInfoExtended.CapabilityMask bit saying
// its FEC mode fields are valid.
const PIECapFECModeSupported uint32 = 1 << 0

// FEC modes (PortInfoExtended.FECModeActive; libibmad's
// IB_PORT_EXT_*_FEC_MODE_ACTIVE).
const (
	FECModeNone         uint16 = 0
	FECModeFireCode     uint16 = 1
	FECModeRS           uint16 = 2
	FECModeLowLatencyRS uint16 = 3
	FECModeRS2          uint16 = 4
)

// SM states (SMInfo.SMState).
const (
	SMStateNotActive   uint8 = 0
	SMStateDiscovering uint8 = 1
	SMStateStandby     uint8 = 2
	SMStateMaster      uint8 = 3
)

// DropPort is the LinearForwardingTable entry of a LID the switch drops.
const DropPort uint8 = 0xFF

// LIDsPerLFTBlock is the number of LIDs one LinearForwardingTable block
// covers; the attribute modifier is the block number, LID / 64.
const LIDsPerLFTBlock = 64

// Default partition keys.
const (
	DefaultPKey        uint16 = 0xFFFF // full member of the default partition
	DefaultPKeyLimited uint16 = 0x7FFF // limited member
)

// PKeyFull reports whether the P_Key k denotes full membership (its top
// bit).
func PKeyFull(k uint16) bool { return k&0x8000 != 0 }

// PKeyBase returns the 15-bit partition number of k, without the
// membership bit.
func PKeyBase(k uint16) uint16 { return k & 0x7FFF }

// String returns the description.
func (n *NodeDescription) String() string { return n.NodeString }

// LinkText is ibnetdiscover's text for the port's active link, e.g. "4xSDR";
// see the package-level LinkText.
func (p *PortInfo) LinkText() string {
	return LinkText(p.LinkWidthActive, p.LinkSpeedActive, p.LinkSpeedExtActive)
}
