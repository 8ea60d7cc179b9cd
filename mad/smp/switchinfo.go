package smp

import "github.com/ibscript/ibscript/mad"

// SwitchInfo rows: mad-formats.md section 7, "SwitchInfo (0x0012), 20
// bytes" (IBA vol. 1 table "SwitchInfo").
var (
	siLinearFDBCap                      = mad.Field{Name: "LinearFDBCap", Bit: 0, Width: 16}
	siRandomFDBCap                      = mad.Field{Name: "RandomFDBCap", Bit: 16, Width: 16}
	siMulticastFDBCap                   = mad.Field{Name: "MulticastFDBCap", Bit: 32, Width: 16}
	siLinearFDBTop                      = mad.Field{Name: "LinearFDBTop", Bit: 48, Width: 16}
	siDefaultPort                       = mad.Field{Name: "DefaultPort", Bit: 64, Width: 8}
	siDefaultMulticastPrimaryPort       = mad.Field{Name: "DefaultMulticastPrimaryPort", Bit: 72, Width: 8}
	siDefaultMulticastNotPrimaryPort    = mad.Field{Name: "DefaultMulticastNotPrimaryPort", Bit: 80, Width: 8}
	siLifeTimeValue                     = mad.Field{Name: "LifeTimeValue", Bit: 88, Width: 5}
	siPortStateChange                   = mad.Field{Name: "PortStateChange", Bit: 93, Width: 1}
	siOptimizedSLtoVLMappingProgramming = mad.Field{Name: "OptimizedSLtoVLMappingProgramming", Bit: 94, Width: 2}
	siLIDsPerPort                       = mad.Field{Name: "LIDsPerPort", Bit: 96, Width: 16}
	siPartitionEnforcementCap           = mad.Field{Name: "PartitionEnforcementCap", Bit: 112, Width: 16}
	siInboundEnforcementCap             = mad.Field{Name: "InboundEnforcementCap", Bit: 128, Width: 1}
	siOutboundEnforcementCap            = mad.Field{Name: "OutboundEnforcementCap", Bit: 129, Width: 1}
	siFilterRawInboundCap               = mad.Field{Name: "FilterRawInboundCap", Bit: 130, Width: 1}
	siFilterRawOutboundCap              = mad.Field{Name: "FilterRawOutboundCap", Bit: 131, Width: 1}
	siEnhancedPort0                     = mad.Field{Name: "EnhancedPort0", Bit: 132, Width: 1}
	siMulticastFDBTop                   = mad.Field{Name: "MulticastFDBTop", Bit: 144, Width: 16, Kind: mad.Hex}
)

// SwitchInfoLayout is the SwitchInfo attribute (0x0012, 20 bytes).
var SwitchInfoLayout = mad.Layout{
	Name: "SwitchInfo",
	ID:   AttrSwitchInfo,
	Size: 20,
	Fields: []mad.Field{
		siLinearFDBCap, siRandomFDBCap, siMulticastFDBCap, siLinearFDBTop,
		siDefaultPort, siDefaultMulticastPrimaryPort,
		siDefaultMulticastNotPrimaryPort, siLifeTimeValue, siPortStateChange,
		siOptimizedSLtoVLMappingProgramming, siLIDsPerPort,
		siPartitionEnforcementCap, siInboundEnforcementCap,
		siOutboundEnforcementCap, siFilterRawInboundCap,
		siFilterRawOutboundCap, siEnhancedPort0, siMulticastFDBTop,
	},
}

// SwitchInfo is the SwitchInfo attribute of a switch: forwarding table
// capacities and switch-wide settings.
type SwitchInfo struct {
	LinearFDBCap                      uint16
	RandomFDBCap                      uint16
	MulticastFDBCap                   uint16
	LinearFDBTop                      uint16
	DefaultPort                       uint8
	DefaultMulticastPrimaryPort       uint8
	DefaultMulticastNotPrimaryPort    uint8
	LifeTimeValue                     uint8
	PortStateChange                   bool // write 1 to clear
	OptimizedSLtoVLMappingProgramming uint8
	LIDsPerPort                       uint16
	PartitionEnforcementCap           uint16
	InboundEnforcementCap             bool
	OutboundEnforcementCap            bool
	FilterRawInboundCap               bool
	FilterRawOutboundCap              bool
	EnhancedPort0                     bool
	MulticastFDBTop                   uint16
}

// UnmarshalBinary decodes s from the first 20 bytes of b without
// allocating. It returns an error wrapping mad.ErrTruncated when b is
// shorter.
func (s *SwitchInfo) UnmarshalBinary(b []byte) error {
	if err := SwitchInfoLayout.Check(b); err != nil {
		return err
	}
	s.LinearFDBCap = uint16(siLinearFDBCap.Get(b))
	s.RandomFDBCap = uint16(siRandomFDBCap.Get(b))
	s.MulticastFDBCap = uint16(siMulticastFDBCap.Get(b))
	s.LinearFDBTop = uint16(siLinearFDBTop.Get(b))
	s.DefaultPort = uint8(siDefaultPort.Get(b))
	s.DefaultMulticastPrimaryPort = uint8(siDefaultMulticastPrimaryPort.Get(b))
	s.DefaultMulticastNotPrimaryPort = uint8(siDefaultMulticastNotPrimaryPort.Get(b))
	s.LifeTimeValue = uint8(siLifeTimeValue.Get(b))
	s.PortStateChange = siPortStateChange.Get(b) != 0
	s.OptimizedSLtoVLMappingProgramming = uint8(siOptimizedSLtoVLMappingProgramming.Get(b))
	s.LIDsPerPort = uint16(siLIDsPerPort.Get(b))
	s.PartitionEnforcementCap = uint16(siPartitionEnforcementCap.Get(b))
	s.InboundEnforcementCap = siInboundEnforcementCap.Get(b) != 0
	s.OutboundEnforcementCap = siOutboundEnforcementCap.Get(b) != 0
	s.FilterRawInboundCap = siFilterRawInboundCap.Get(b) != 0
	s.FilterRawOutboundCap = siFilterRawOutboundCap.Get(b) != 0
	s.EnhancedPort0 = siEnhancedPort0.Get(b) != 0
	s.MulticastFDBTop = uint16(siMulticastFDBTop.Get(b))
	return nil
}

// AppendBinary appends the 20-byte attribute to b, reserved bits zero. It
// returns an error wrapping mad.ErrRange, and b unchanged, when a value does
// not fit its field.
func (s *SwitchInfo) AppendBinary(b []byte) ([]byte, error) {
	all, d := SwitchInfoLayout.Append(b)
	w := mad.Writer{Layout: &SwitchInfoLayout, B: d}
	w.Uint(siLinearFDBCap, uint64(s.LinearFDBCap))
	w.Uint(siRandomFDBCap, uint64(s.RandomFDBCap))
	w.Uint(siMulticastFDBCap, uint64(s.MulticastFDBCap))
	w.Uint(siLinearFDBTop, uint64(s.LinearFDBTop))
	w.Uint(siDefaultPort, uint64(s.DefaultPort))
	w.Uint(siDefaultMulticastPrimaryPort, uint64(s.DefaultMulticastPrimaryPort))
	w.Uint(siDefaultMulticastNotPrimaryPort, uint64(s.DefaultMulticastNotPrimaryPort))
	w.Uint(siLifeTimeValue, uint64(s.LifeTimeValue))
	w.Bool(siPortStateChange, s.PortStateChange)
	w.Uint(siOptimizedSLtoVLMappingProgramming, uint64(s.OptimizedSLtoVLMappingProgramming))
	w.Uint(siLIDsPerPort, uint64(s.LIDsPerPort))
	w.Uint(siPartitionEnforcementCap, uint64(s.PartitionEnforcementCap))
	w.Bool(siInboundEnforcementCap, s.InboundEnforcementCap)
	w.Bool(siOutboundEnforcementCap, s.OutboundEnforcementCap)
	w.Bool(siFilterRawInboundCap, s.FilterRawInboundCap)
	w.Bool(siFilterRawOutboundCap, s.FilterRawOutboundCap)
	w.Bool(siEnhancedPort0, s.EnhancedPort0)
	w.Uint(siMulticastFDBTop, uint64(s.MulticastFDBTop))
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 20-byte attribute.
func (s *SwitchInfo) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }
