package perf

import "github.com/ibscript/ibscript/mad"

// PortCountersExtended rows: mad-formats.md section 9,
// "PortCountersExtended (0x001D), 72 bytes (184 with additional counters)"
// (IBA vol. 1 table "PortCountersExtended"). The counters from byte 72 on
// are present when the PMA's ClassPortInfo has Cap2AdditionalPortCounters;
// otherwise those bytes are reserved and read as zero.
var (
	pcePortSelect                   = mad.Field{Name: "PortSelect", Bit: 8, Width: 8}
	pceCounterSelect                = mad.Field{Name: "CounterSelect", Bit: 16, Width: 16, Kind: mad.Hex}
	pceCounterSelect2               = mad.Field{Name: "CounterSelect2", Bit: 32, Width: 32, Kind: mad.Hex}
	pcePortXmitData                 = mad.Field{Name: "PortXmitData", Bit: 64, Width: 64}
	pcePortRcvData                  = mad.Field{Name: "PortRcvData", Bit: 128, Width: 64}
	pcePortXmitPkts                 = mad.Field{Name: "PortXmitPkts", Bit: 192, Width: 64}
	pcePortRcvPkts                  = mad.Field{Name: "PortRcvPkts", Bit: 256, Width: 64}
	pcePortUnicastXmitPkts          = mad.Field{Name: "PortUnicastXmitPkts", Bit: 320, Width: 64}
	pcePortUnicastRcvPkts           = mad.Field{Name: "PortUnicastRcvPkts", Bit: 384, Width: 64}
	pcePortMulticastXmitPkts        = mad.Field{Name: "PortMulticastXmitPkts", Bit: 448, Width: 64}
	pcePortMulticastRcvPkts         = mad.Field{Name: "PortMulticastRcvPkts", Bit: 512, Width: 64}
	pceSymbolErrorCounter           = mad.Field{Name: "SymbolErrorCounter", Bit: 576, Width: 64}
	pceLinkErrorRecoveryCounter     = mad.Field{Name: "LinkErrorRecoveryCounter", Bit: 640, Width: 64}
	pceLinkDownedCounter            = mad.Field{Name: "LinkDownedCounter", Bit: 704, Width: 64}
	pcePortRcvErrors                = mad.Field{Name: "PortRcvErrors", Bit: 768, Width: 64}
	pcePortRcvRemotePhysicalErrors  = mad.Field{Name: "PortRcvRemotePhysicalErrors", Bit: 832, Width: 64}
	pcePortRcvSwitchRelayErrors     = mad.Field{Name: "PortRcvSwitchRelayErrors", Bit: 896, Width: 64}
	pcePortXmitDiscards             = mad.Field{Name: "PortXmitDiscards", Bit: 960, Width: 64}
	pcePortXmitConstraintErrors     = mad.Field{Name: "PortXmitConstraintErrors", Bit: 1024, Width: 64}
	pcePortRcvConstraintErrors      = mad.Field{Name: "PortRcvConstraintErrors", Bit: 1088, Width: 64}
	pceLocalLinkIntegrityErrors     = mad.Field{Name: "LocalLinkIntegrityErrors", Bit: 1152, Width: 64}
	pceExcessiveBufferOverrunErrors = mad.Field{Name: "ExcessiveBufferOverrunErrors", Bit: 1216, Width: 64}
	pceVL15Dropped                  = mad.Field{Name: "VL15Dropped", Bit: 1280, Width: 64}
	pcePortXmitWait                 = mad.Field{Name: "PortXmitWait", Bit: 1344, Width: 64}
	pceQP1Dropped                   = mad.Field{Name: "QP1Dropped", Bit: 1408, Width: 64}
)

// PortCountersExtendedLayout is the PortCountersExtended attribute (0x001D)
// with the additional counters: 184 bytes, within the 192-byte PMA data.
var PortCountersExtendedLayout = mad.Layout{
	Name: "PortCountersExtended",
	ID:   AttrPortCountersExtended,
	Size: 184,
	Fields: []mad.Field{
		pcePortSelect, pceCounterSelect, pceCounterSelect2, pcePortXmitData,
		pcePortRcvData, pcePortXmitPkts, pcePortRcvPkts,
		pcePortUnicastXmitPkts, pcePortUnicastRcvPkts,
		pcePortMulticastXmitPkts, pcePortMulticastRcvPkts,
		pceSymbolErrorCounter, pceLinkErrorRecoveryCounter,
		pceLinkDownedCounter, pcePortRcvErrors,
		pcePortRcvRemotePhysicalErrors, pcePortRcvSwitchRelayErrors,
		pcePortXmitDiscards, pcePortXmitConstraintErrors,
		pcePortRcvConstraintErrors, pceLocalLinkIntegrityErrors,
		pceExcessiveBufferOverrunErrors, pceVL15Dropped, pcePortXmitWait,
		pceQP1Dropped,
	},
}

// PortCountersExtended is the PortCountersExtended attribute: the 64-bit
// counters of one port. The fields from SymbolErrorCounter on are the
// additional counters (see Cap2AdditionalPortCounters).
type PortCountersExtended struct {
	PortSelect                   uint8
	CounterSelect                uint16
	CounterSelect2               uint32
	PortXmitData                 uint64
	PortRcvData                  uint64
	PortXmitPkts                 uint64
	PortRcvPkts                  uint64
	PortUnicastXmitPkts          uint64
	PortUnicastRcvPkts           uint64
	PortMulticastXmitPkts        uint64
	PortMulticastRcvPkts         uint64
	SymbolErrorCounter           uint64
	LinkErrorRecoveryCounter     uint64
	LinkDownedCounter            uint64
	PortRcvErrors                uint64
	PortRcvRemotePhysicalErrors  uint64
	PortRcvSwitchRelayErrors     uint64
	PortXmitDiscards             uint64
	PortXmitConstraintErrors     uint64
	PortRcvConstraintErrors      uint64
	LocalLinkIntegrityErrors     uint64
	ExcessiveBufferOverrunErrors uint64
	VL15Dropped                  uint64
	PortXmitWait                 uint64
	QP1Dropped                   uint64
}

// UnmarshalBinary decodes p from the first 184 bytes of b without
// allocating. It returns an error wrapping mad.ErrTruncated when b is
// shorter.
func (p *PortCountersExtended) UnmarshalBinary(b []byte) error {
	if err := PortCountersExtendedLayout.Check(b); err != nil {
		return err
	}
	p.PortSelect = uint8(pcePortSelect.Get(b))
	p.CounterSelect = uint16(pceCounterSelect.Get(b))
	p.CounterSelect2 = uint32(pceCounterSelect2.Get(b))
	p.PortXmitData = pcePortXmitData.Get(b)
	p.PortRcvData = pcePortRcvData.Get(b)
	p.PortXmitPkts = pcePortXmitPkts.Get(b)
	p.PortRcvPkts = pcePortRcvPkts.Get(b)
	p.PortUnicastXmitPkts = pcePortUnicastXmitPkts.Get(b)
	p.PortUnicastRcvPkts = pcePortUnicastRcvPkts.Get(b)
	p.PortMulticastXmitPkts = pcePortMulticastXmitPkts.Get(b)
	p.PortMulticastRcvPkts = pcePortMulticastRcvPkts.Get(b)
	p.SymbolErrorCounter = pceSymbolErrorCounter.Get(b)
	p.LinkErrorRecoveryCounter = pceLinkErrorRecoveryCounter.Get(b)
	p.LinkDownedCounter = pceLinkDownedCounter.Get(b)
	p.PortRcvErrors = pcePortRcvErrors.Get(b)
	p.PortRcvRemotePhysicalErrors = pcePortRcvRemotePhysicalErrors.Get(b)
	p.PortRcvSwitchRelayErrors = pcePortRcvSwitchRelayErrors.Get(b)
	p.PortXmitDiscards = pcePortXmitDiscards.Get(b)
	p.PortXmitConstraintErrors = pcePortXmitConstraintErrors.Get(b)
	p.PortRcvConstraintErrors = pcePortRcvConstraintErrors.Get(b)
	p.LocalLinkIntegrityErrors = pceLocalLinkIntegrityErrors.Get(b)
	p.ExcessiveBufferOverrunErrors = pceExcessiveBufferOverrunErrors.Get(b)
	p.VL15Dropped = pceVL15Dropped.Get(b)
	p.PortXmitWait = pcePortXmitWait.Get(b)
	p.QP1Dropped = pceQP1Dropped.Get(b)
	return nil
}

// AppendBinary appends the 184-byte attribute to b, reserved bits zero.
func (p *PortCountersExtended) AppendBinary(b []byte) ([]byte, error) {
	all, d := PortCountersExtendedLayout.Append(b)
	w := mad.Writer{Layout: &PortCountersExtendedLayout, B: d}
	w.Uint(pcePortSelect, uint64(p.PortSelect))
	w.Uint(pceCounterSelect, uint64(p.CounterSelect))
	w.Uint(pceCounterSelect2, uint64(p.CounterSelect2))
	w.Uint(pcePortXmitData, p.PortXmitData)
	w.Uint(pcePortRcvData, p.PortRcvData)
	w.Uint(pcePortXmitPkts, p.PortXmitPkts)
	w.Uint(pcePortRcvPkts, p.PortRcvPkts)
	w.Uint(pcePortUnicastXmitPkts, p.PortUnicastXmitPkts)
	w.Uint(pcePortUnicastRcvPkts, p.PortUnicastRcvPkts)
	w.Uint(pcePortMulticastXmitPkts, p.PortMulticastXmitPkts)
	w.Uint(pcePortMulticastRcvPkts, p.PortMulticastRcvPkts)
	w.Uint(pceSymbolErrorCounter, p.SymbolErrorCounter)
	w.Uint(pceLinkErrorRecoveryCounter, p.LinkErrorRecoveryCounter)
	w.Uint(pceLinkDownedCounter, p.LinkDownedCounter)
	w.Uint(pcePortRcvErrors, p.PortRcvErrors)
	w.Uint(pcePortRcvRemotePhysicalErrors, p.PortRcvRemotePhysicalErrors)
	w.Uint(pcePortRcvSwitchRelayErrors, p.PortRcvSwitchRelayErrors)
	w.Uint(pcePortXmitDiscards, p.PortXmitDiscards)
	w.Uint(pcePortXmitConstraintErrors, p.PortXmitConstraintErrors)
	w.Uint(pcePortRcvConstraintErrors, p.PortRcvConstraintErrors)
	w.Uint(pceLocalLinkIntegrityErrors, p.LocalLinkIntegrityErrors)
	w.Uint(pceExcessiveBufferOverrunErrors, p.ExcessiveBufferOverrunErrors)
	w.Uint(pceVL15Dropped, p.VL15Dropped)
	w.Uint(pcePortXmitWait, p.PortXmitWait)
	w.Uint(pceQP1Dropped, p.QP1Dropped)
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 184-byte attribute.
func (p *PortCountersExtended) MarshalBinary() ([]byte, error) { return p.AppendBinary(nil) }
