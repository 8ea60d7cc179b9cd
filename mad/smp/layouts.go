package smp

import "github.com/ibscript/ibscript/mad"

// SMP attribute IDs (mad-formats.md section 6, "SMP attribute IDs").
const (
	AttrNotice                   uint16 = 0x0002
	AttrNodeDescription          uint16 = 0x0010
	AttrNodeInfo                 uint16 = 0x0011
	AttrSwitchInfo               uint16 = 0x0012
	AttrGUIDInfo                 uint16 = 0x0014
	AttrPortInfo                 uint16 = 0x0015
	AttrPKeyTable                uint16 = 0x0016
	AttrSLtoVLMappingTable       uint16 = 0x0017
	AttrVLArbitrationTable       uint16 = 0x0018
	AttrLinearForwardingTable    uint16 = 0x0019
	AttrRandomForwardingTable    uint16 = 0x001A
	AttrMulticastForwardingTable uint16 = 0x001B
	AttrLinkSpeedWidthPairsTable uint16 = 0x001C
	AttrSMInfo                   uint16 = 0x0020
	AttrVendorDiag               uint16 = 0x0030
	AttrLedInfo                  uint16 = 0x0031
	AttrPortInfoExtended         uint16 = 0x0033
)

// Layouts returns the layouts of the SMP attributes this package decodes,
// in attribute ID order. The slice is new on every call; the layouts it
// points to are shared and must not be modified.
func Layouts() []*mad.Layout {
	return []*mad.Layout{
		&NoticeLayout,
		&NodeDescriptionLayout,
		&NodeInfoLayout,
		&SwitchInfoLayout,
		&GUIDInfoLayout,
		&PortInfoLayout,
		&PKeyTableLayout,
		&LinearForwardingTableLayout,
		&SMInfoLayout,
	}
}

// LayoutByID returns the layout of the SMP attribute id, or nil when this
// package does not decode it. The layout is shared and must not be
// modified.
func LayoutByID(id uint16) *mad.Layout {
	switch id {
	case AttrNotice:
		return &NoticeLayout
	case AttrNodeDescription:
		return &NodeDescriptionLayout
	case AttrNodeInfo:
		return &NodeInfoLayout
	case AttrSwitchInfo:
		return &SwitchInfoLayout
	case AttrGUIDInfo:
		return &GUIDInfoLayout
	case AttrPortInfo:
		return &PortInfoLayout
	case AttrPKeyTable:
		return &PKeyTableLayout
	case AttrLinearForwardingTable:
		return &LinearForwardingTableLayout
	case AttrSMInfo:
		return &SMInfoLayout
	}
	return nil
}
