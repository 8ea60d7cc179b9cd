package engine

import (
	"fmt"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// StatusError is a response whose MAD status is not success. For a
// directed-route SMP Status is the 15-bit status without the D bit.
type StatusError struct {
	Class   uint8
	Method  uint8 // the request's method
	AttrID  uint16
	AttrMod uint32
	Status  uint16
	Target  Target
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s %s %s: %s", e.Target, mad.MethodName(e.Method), attrName(e.Class, e.AttrID, e.AttrMod),
		mad.StatusText(e.Status))
}

// TimeoutError is a request that got no response after Tries attempts.
// errors.Is(err, fabric.ErrTimeout) is true.
type TimeoutError struct {
	TID    uint64 // as transmitted, with the transport's upper 32 bits
	Tries  int
	Class  uint8
	AttrID uint16
	Target Target
	// Bounced: the fabric handed the last try back at once as
	// undeliverable (ibsim's echo when nobody at the destination takes
	// the MAD: fabric.Packet.Bounced); false, the try's timeout passed.
	// Where the fabric times nothing out itself (Session.SilentTimeouts),
	// only a bounced request is one a libibumad caller there sees
	// complete: any other never comes back to it.
	Bounced bool
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s %s: timeout after %d tries (TID 0x%016x)", e.Target, attrName(e.Class, e.AttrID, 0), e.Tries, e.TID)
}

// Is matches fabric.ErrTimeout.
func (e *TimeoutError) Is(target error) bool { return target == fabric.ErrTimeout }

// TargetError is the failure of one target of a bulk operation, such as
// one directed route of a discovery sweep.
type TargetError struct {
	Path string // the target, e.g. "dr:0,1,3"
	Err  error
	// Where says what the target is when the sweep knows: the node it
	// asked (at "leaf005" (S-...)), or the port a directed route leaves
	// from and what the reference topology or the last discovery had
	// cabled there (behind "spine01" (S-...) port 5, where the last
	// discovery had "leaf005" (S-...) port 1).
	Where string
}

func (e TargetError) Error() string { return e.Path + ": " + e.Detail() }

// Detail is the error without the path: the failure, and Where.
func (e TargetError) Detail() string {
	if e.Where == "" {
		return e.Err.Error()
	}
	return e.Err.Error() + "; " + e.Where
}

func (e TargetError) Unwrap() error { return e.Err }

// attrName names an attribute for messages, e.g. "PortInfo port 3".
func attrName(class uint8, id uint16, mod uint32) string {
	var name string
	switch class {
	case mad.ClassSubnLID, mad.ClassSubnDR:
		switch id {
		case smp.AttrNodeDescription:
			name = "NodeDescription"
		case smp.AttrNodeInfo:
			name = "NodeInfo"
		case smp.AttrSwitchInfo:
			name = "SwitchInfo"
		case smp.AttrGUIDInfo:
			name = fmt.Sprintf("GUIDInfo block %d", mod)
		case smp.AttrPortInfo:
			name = fmt.Sprintf("PortInfo port %d", mod)
		case smp.AttrPKeyTable:
			name = fmt.Sprintf("P_KeyTable block %d", mod&0xffff)
			if mod>>16 != 0 {
				name += fmt.Sprintf(" port %d", mod>>16)
			}
		case smp.AttrLinearForwardingTable:
			name = fmt.Sprintf("LinearForwardingTable block %d", mod)
		case smp.AttrSMInfo:
			name = "SMInfo"
		}
	case mad.ClassPerf:
		switch id {
		case perf.AttrPortCounters:
			name = "PortCounters"
		case perf.AttrPortCountersExtended:
			name = "PortCountersExtended"
		case perf.AttrClassPortInfo:
			name = "ClassPortInfo"
		}
	case mad.ClassCC:
		if l := cc.LayoutByID(id); l != nil {
			name = l.Name
			switch id {
			case cc.AttrSwitchPortCongestionSetting, cc.AttrCongestionControlTable:
				name += fmt.Sprintf(" block %d", mod)
			}
		}
	}
	if name == "" {
		name = fmt.Sprintf("%s attribute 0x%04x", mad.ClassName(class), id)
		if mod != 0 {
			name += fmt.Sprintf(" mod 0x%x", mod)
		}
	}
	return name
}
