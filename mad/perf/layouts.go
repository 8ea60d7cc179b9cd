package perf

import "github.com/ibscript/ibscript/mad"

// Layouts returns the layouts of the PerfMgt attributes this package
// decodes, in attribute ID order (ClassPortInfo is mad.ClassPortInfoLayout).
// The slice is new on every call; the layouts it points to are shared and
// must not be modified.
func Layouts() []*mad.Layout {
	return []*mad.Layout{
		&mad.ClassPortInfoLayout,
		&PortCountersLayout,
		&PortCountersExtendedLayout,
	}
}

// LayoutByID returns the layout of the PerfMgt attribute id, or nil when
// this package does not decode it. The layout is shared and must not be
// modified.
func LayoutByID(id uint16) *mad.Layout {
	switch id {
	case AttrClassPortInfo:
		return &mad.ClassPortInfoLayout
	case AttrPortCounters:
		return &PortCountersLayout
	case AttrPortCountersExtended:
		return &PortCountersExtendedLayout
	}
	return nil
}
