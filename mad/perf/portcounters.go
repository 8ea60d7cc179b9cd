package perf

import "github.com/ibscript/ibscript/mad"

// PortCounters rows: mad-formats.md section 9, "PortCounters (0x0012), 44
// bytes" (IBA vol. 1 table "PortCounters").
var (
	pcPortSelect                   = mad.Field{Name: "PortSelect", Bit: 8, Width: 8}
	pcCounterSelect                = mad.Field{Name: "CounterSelect", Bit: 16, Width: 16, Kind: mad.Hex}
	pcSymbolErrorCounter           = mad.Field{Name: "SymbolErrorCounter", Bit: 32, Width: 16}
	pcLinkErrorRecoveryCounter     = mad.Field{Name: "LinkErrorRecoveryCounter", Bit: 48, Width: 8}
	pcLinkDownedCounter            = mad.Field{Name: "LinkDownedCounter", Bit: 56, Width: 8}
	pcPortRcvErrors                = mad.Field{Name: "PortRcvErrors", Bit: 64, Width: 16}
	pcPortRcvRemotePhysicalErrors  = mad.Field{Name: "PortRcvRemotePhysicalErrors", Bit: 80, Width: 16}
	pcPortRcvSwitchRelayErrors     = mad.Field{Name: "PortRcvSwitchRelayErrors", Bit: 96, Width: 16}
	pcPortXmitDiscards             = mad.Field{Name: "PortXmitDiscards", Bit: 112, Width: 16}
	pcPortXmitConstraintErrors     = mad.Field{Name: "PortXmitConstraintErrors", Bit: 128, Width: 8}
	pcPortRcvConstraintErrors      = mad.Field{Name: "PortRcvConstraintErrors", Bit: 136, Width: 8}
	pcCounterSelect2               = mad.Field{Name: "CounterSelect2", Bit: 144, Width: 8, Kind: mad.Hex}
	pcLocalLinkIntegrityErrors     = mad.Field{Name: "LocalLinkIntegrityErrors", Bit: 152, Width: 4}
	pcExcessiveBufferOverrunErrors = mad.Field{Name: "ExcessiveBufferOverrunErrors", Bit: 156, Width: 4}
	pcQP1Dropped                   = mad.Field{Name: "QP1Dropped", Bit: 160, Width: 16}
	pcVL15Dropped                  = mad.Field{Name: "VL15Dropped", Bit: 176, Width: 16}
	pcPortXmitData                 = mad.Field{Name: "PortXmitData", Bit: 192, Width: 32}
	pcPortRcvData                  = mad.Field{Name: "PortRcvData", Bit: 224, Width: 32}
	pcPortXmitPkts                 = mad.Field{Name: "PortXmitPkts", Bit: 256, Width: 32}
	pcPortRcvPkts                  = mad.Field{Name: "PortRcvPkts", Bit: 288, Width: 32}
	pcPortXmitWait                 = mad.Field{Name: "PortXmitWait", Bit: 320, Width: 32}
)

// PortCountersLayout is the PortCounters attribute (0x0012, 44 bytes).
var PortCountersLayout = mad.Layout{
	Name: "PortCounters",
	ID:   AttrPortCounters,
	Size: 44,
	Fields: []mad.Field{
		pcPortSelect, pcCounterSelect, pcSymbolErrorCounter,
		pcLinkErrorRecoveryCounter, pcLinkDownedCounter, pcPortRcvErrors,
		pcPortRcvRemotePhysicalErrors, pcPortRcvSwitchRelayErrors,
		pcPortXmitDiscards, pcPortXmitConstraintErrors,
		pcPortRcvConstraintErrors, pcCounterSelect2,
		pcLocalLinkIntegrityErrors, pcExcessiveBufferOverrunErrors,
		pcQP1Dropped, pcVL15Dropped, pcPortXmitData, pcPortRcvData,
		pcPortXmitPkts, pcPortRcvPkts, pcPortXmitWait,
	},
}

// PortCounters is the PortCounters attribute: the 32-bit and narrower
// counters of one port. Error counters saturate at their maximum; the data
// counters count 4-byte words. In a Set, CounterSelect bit i clears counter
// i in table order (0 SymbolErrorCounter ... 15 PortRcvPkts).
type PortCounters struct {
	PortSelect                   uint8
	CounterSelect                uint16
	SymbolErrorCounter           uint16
	LinkErrorRecoveryCounter     uint8
	LinkDownedCounter            uint8
	PortRcvErrors                uint16
	PortRcvRemotePhysicalErrors  uint16
	PortRcvSwitchRelayErrors     uint16
	PortXmitDiscards             uint16
	PortXmitConstraintErrors     uint8
	PortRcvConstraintErrors      uint8
	CounterSelect2               uint8
	LocalLinkIntegrityErrors     uint8 // 4 bits
	ExcessiveBufferOverrunErrors uint8 // 4 bits
	QP1Dropped                   uint16
	VL15Dropped                  uint16
	PortXmitData                 uint32
	PortRcvData                  uint32
	PortXmitPkts                 uint32
	PortRcvPkts                  uint32
	PortXmitWait                 uint32
}

// UnmarshalBinary decodes p from the first 44 bytes of b without
// allocating. It returns an error wrapping mad.ErrTruncated when b is
// shorter.
func (p *PortCounters) UnmarshalBinary(b []byte) error {
	if err := PortCountersLayout.Check(b); err != nil {
		return err
	}
	p.PortSelect = uint8(pcPortSelect.Get(b))
	p.CounterSelect = uint16(pcCounterSelect.Get(b))
	p.SymbolErrorCounter = uint16(pcSymbolErrorCounter.Get(b))
	p.LinkErrorRecoveryCounter = uint8(pcLinkErrorRecoveryCounter.Get(b))
	p.LinkDownedCounter = uint8(pcLinkDownedCounter.Get(b))
	p.PortRcvErrors = uint16(pcPortRcvErrors.Get(b))
	p.PortRcvRemotePhysicalErrors = uint16(pcPortRcvRemotePhysicalErrors.Get(b))
	p.PortRcvSwitchRelayErrors = uint16(pcPortRcvSwitchRelayErrors.Get(b))
	p.PortXmitDiscards = uint16(pcPortXmitDiscards.Get(b))
	p.PortXmitConstraintErrors = uint8(pcPortXmitConstraintErrors.Get(b))
	p.PortRcvConstraintErrors = uint8(pcPortRcvConstraintErrors.Get(b))
	p.CounterSelect2 = uint8(pcCounterSelect2.Get(b))
	p.LocalLinkIntegrityErrors = uint8(pcLocalLinkIntegrityErrors.Get(b))
	p.ExcessiveBufferOverrunErrors = uint8(pcExcessiveBufferOverrunErrors.Get(b))
	p.QP1Dropped = uint16(pcQP1Dropped.Get(b))
	p.VL15Dropped = uint16(pcVL15Dropped.Get(b))
	p.PortXmitData = uint32(pcPortXmitData.Get(b))
	p.PortRcvData = uint32(pcPortRcvData.Get(b))
	p.PortXmitPkts = uint32(pcPortXmitPkts.Get(b))
	p.PortRcvPkts = uint32(pcPortRcvPkts.Get(b))
	p.PortXmitWait = uint32(pcPortXmitWait.Get(b))
	return nil
}

// AppendBinary appends the 44-byte attribute to b, reserved bits zero. It
// returns an error wrapping mad.ErrRange, and b unchanged, when
// LocalLinkIntegrityErrors or ExcessiveBufferOverrunErrors exceeds 15.
func (p *PortCounters) AppendBinary(b []byte) ([]byte, error) {
	all, d := PortCountersLayout.Append(b)
	w := mad.Writer{Layout: &PortCountersLayout, B: d}
	w.Uint(pcPortSelect, uint64(p.PortSelect))
	w.Uint(pcCounterSelect, uint64(p.CounterSelect))
	w.Uint(pcSymbolErrorCounter, uint64(p.SymbolErrorCounter))
	w.Uint(pcLinkErrorRecoveryCounter, uint64(p.LinkErrorRecoveryCounter))
	w.Uint(pcLinkDownedCounter, uint64(p.LinkDownedCounter))
	w.Uint(pcPortRcvErrors, uint64(p.PortRcvErrors))
	w.Uint(pcPortRcvRemotePhysicalErrors, uint64(p.PortRcvRemotePhysicalErrors))
	w.Uint(pcPortRcvSwitchRelayErrors, uint64(p.PortRcvSwitchRelayErrors))
	w.Uint(pcPortXmitDiscards, uint64(p.PortXmitDiscards))
	w.Uint(pcPortXmitConstraintErrors, uint64(p.PortXmitConstraintErrors))
	w.Uint(pcPortRcvConstraintErrors, uint64(p.PortRcvConstraintErrors))
	w.Uint(pcCounterSelect2, uint64(p.CounterSelect2))
	w.Uint(pcLocalLinkIntegrityErrors, uint64(p.LocalLinkIntegrityErrors))
	w.Uint(pcExcessiveBufferOverrunErrors, uint64(p.ExcessiveBufferOverrunErrors))
	w.Uint(pcQP1Dropped, uint64(p.QP1Dropped))
	w.Uint(pcVL15Dropped, uint64(p.VL15Dropped))
	w.Uint(pcPortXmitData, uint64(p.PortXmitData))
	w.Uint(pcPortRcvData, uint64(p.PortRcvData))
	w.Uint(pcPortXmitPkts, uint64(p.PortXmitPkts))
	w.Uint(pcPortRcvPkts, uint64(p.PortRcvPkts))
	w.Uint(pcPortXmitWait, uint64(p.PortXmitWait))
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 44-byte attribute.
func (p *PortCounters) MarshalBinary() ([]byte, error) { return p.AppendBinary(nil) }
