package smp

import "github.com/ibscript/ibscript/mad"

// SM states (SMInfo.SMState).
const (
	SMStateNotActive   uint8 = 0
	SMStateDiscovering uint8 = 1
	SMStateStandby     uint8 = 2
	SMStateMaster      uint8 = 3
)

// SMInfo rows: mad-formats.md section 7, "SMInfo (0x0020), 21 bytes" (IBA
// vol. 1 table "SMInfo").
var (
	smGUID     = mad.Field{Name: "GUID", Bit: 0, Width: 64, Kind: mad.Hex}
	smSMKey    = mad.Field{Name: "SM_Key", Bit: 64, Width: 64, Kind: mad.Hex}
	smActCount = mad.Field{Name: "ActCount", Bit: 128, Width: 32}
	smPriority = mad.Field{Name: "Priority", Bit: 160, Width: 4}
	smSMState  = mad.Field{Name: "SMState", Bit: 164, Width: 4}
)

// SMInfoLayout is the SMInfo attribute (0x0020, 21 bytes).
var SMInfoLayout = mad.Layout{
	Name:   "SMInfo",
	ID:     AttrSMInfo,
	Size:   21,
	Fields: []mad.Field{smGUID, smSMKey, smActCount, smPriority, smSMState},
}

// SMInfo is the SMInfo attribute of a subnet manager.
type SMInfo struct {
	GUID     uint64
	SMKey    uint64 // zero unless the requester is authenticated
	ActCount uint32
	Priority uint8
	SMState  uint8 // SMState* values
}

// UnmarshalBinary decodes s from the first 21 bytes of b without
// allocating. It returns an error wrapping mad.ErrTruncated when b is
// shorter.
func (s *SMInfo) UnmarshalBinary(b []byte) error {
	if err := SMInfoLayout.Check(b); err != nil {
		return err
	}
	s.GUID = smGUID.Get(b)
	s.SMKey = smSMKey.Get(b)
	s.ActCount = uint32(smActCount.Get(b))
	s.Priority = uint8(smPriority.Get(b))
	s.SMState = uint8(smSMState.Get(b))
	return nil
}

// AppendBinary appends the 21-byte attribute to b. It returns an error
// wrapping mad.ErrRange, and b unchanged, when Priority or SMState does not
// fit in 4 bits.
func (s *SMInfo) AppendBinary(b []byte) ([]byte, error) {
	all, d := SMInfoLayout.Append(b)
	w := mad.Writer{Layout: &SMInfoLayout, B: d}
	w.Uint(smGUID, s.GUID)
	w.Uint(smSMKey, s.SMKey)
	w.Uint(smActCount, uint64(s.ActCount))
	w.Uint(smPriority, uint64(s.Priority))
	w.Uint(smSMState, uint64(s.SMState))
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 21-byte attribute.
func (s *SMInfo) MarshalBinary() ([]byte, error) { return s.AppendBinary(nil) }
