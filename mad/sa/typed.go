package sa

import (
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// NodeRec is a NodeRecord: the LID of a node's port and its NodeInfo and
// NodeDescription (mad-formats.md section 8).
type NodeRec struct {
	LID             uint16
	NodeInfo        smp.NodeInfo
	NodeDescription [64]byte // NUL padded; Description returns the text
}

// Description returns the node description text.
func (n *NodeRec) Description() string { return string(mad.TrimNUL(n.NodeDescription[:])) }

// UnmarshalBinary decodes a 108-byte NodeRecord without allocating.
func (n *NodeRec) UnmarshalBinary(b []byte) error {
	if err := NodeRecordLayout.Check(b); err != nil {
		return err
	}
	n.LID = uint16(nrLID.Get(b))
	if err := n.NodeInfo.UnmarshalBinary(b[nrNodeInfoBit/8:]); err != nil {
		return err
	}
	copy(n.NodeDescription[:], nrNodeDescription.Slice(b))
	return nil
}

// AppendBinary appends the 108-byte record.
func (n *NodeRec) AppendBinary(b []byte) ([]byte, error) {
	all, d := NodeRecordLayout.Append(b)
	w := mad.Writer{Layout: &NodeRecordLayout, B: d}
	w.Uint(nrLID, uint64(n.LID))
	if _, err := n.NodeInfo.AppendBinary(d[nrNodeInfoBit/8 : nrNodeInfoBit/8]); err != nil {
		return b, err
	}
	w.Bytes(nrNodeDescription, n.NodeDescription[:])
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the record.
func (n *NodeRec) MarshalBinary() ([]byte, error) { return n.AppendBinary(nil) }

// PathRec is a PathRecord (mad-formats.md section 8).
type PathRec struct {
	ServiceID              uint64
	DGID, SGID             mad.GID
	DLID, SLID             uint16
	RawTraffic             bool
	FlowLabel              uint32
	HopLimit               uint8
	TClass                 uint8
	Reversible             bool
	NumbPath               uint8
	PKey                   uint16
	QoSClass               uint16
	SL                     uint8
	MTUSelector, MTU       uint8
	RateSelector, Rate     uint8
	PacketLifeTimeSelector uint8
	PacketLifeTime         uint8
	Preference             uint8
}

// UnmarshalBinary decodes a 64-byte PathRecord without allocating.
func (p *PathRec) UnmarshalBinary(b []byte) error {
	if err := PathRecordLayout.Check(b); err != nil {
		return err
	}
	p.ServiceID = prServiceID.Get(b)
	copy(p.DGID[:], prDGID.Slice(b))
	copy(p.SGID[:], prSGID.Slice(b))
	p.DLID = uint16(prDLID.Get(b))
	p.SLID = uint16(prSLID.Get(b))
	p.RawTraffic = prRawTraffic.Get(b) != 0
	p.FlowLabel = uint32(prFlowLabel.Get(b))
	p.HopLimit = uint8(prHopLimit.Get(b))
	p.TClass = uint8(prTClass.Get(b))
	p.Reversible = prReversible.Get(b) != 0
	p.NumbPath = uint8(prNumbPath.Get(b))
	p.PKey = uint16(prPKey.Get(b))
	p.QoSClass = uint16(prQoSClass.Get(b))
	p.SL = uint8(prSL.Get(b))
	p.MTUSelector = uint8(prMTUSelector.Get(b))
	p.MTU = uint8(prMTU.Get(b))
	p.RateSelector = uint8(prRateSelector.Get(b))
	p.Rate = uint8(prRate.Get(b))
	p.PacketLifeTimeSelector = uint8(prPLTSelector.Get(b))
	p.PacketLifeTime = uint8(prPacketLifeTime.Get(b))
	p.Preference = uint8(prPreference.Get(b))
	return nil
}

// AppendBinary appends the 64-byte record.
func (p *PathRec) AppendBinary(b []byte) ([]byte, error) {
	all, d := PathRecordLayout.Append(b)
	w := mad.Writer{Layout: &PathRecordLayout, B: d}
	w.Uint(prServiceID, p.ServiceID)
	w.Bytes(prDGID, p.DGID[:])
	w.Bytes(prSGID, p.SGID[:])
	w.Uint(prDLID, uint64(p.DLID))
	w.Uint(prSLID, uint64(p.SLID))
	w.Bool(prRawTraffic, p.RawTraffic)
	w.Uint(prFlowLabel, uint64(p.FlowLabel))
	w.Uint(prHopLimit, uint64(p.HopLimit))
	w.Uint(prTClass, uint64(p.TClass))
	w.Bool(prReversible, p.Reversible)
	w.Uint(prNumbPath, uint64(p.NumbPath))
	w.Uint(prPKey, uint64(p.PKey))
	w.Uint(prQoSClass, uint64(p.QoSClass))
	w.Uint(prSL, uint64(p.SL))
	w.Uint(prMTUSelector, uint64(p.MTUSelector))
	w.Uint(prMTU, uint64(p.MTU))
	w.Uint(prRateSelector, uint64(p.RateSelector))
	w.Uint(prRate, uint64(p.Rate))
	w.Uint(prPLTSelector, uint64(p.PacketLifeTimeSelector))
	w.Uint(prPacketLifeTime, uint64(p.PacketLifeTime))
	w.Uint(prPreference, uint64(p.Preference))
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the record.
func (p *PathRec) MarshalBinary() ([]byte, error) { return p.AppendBinary(nil) }
