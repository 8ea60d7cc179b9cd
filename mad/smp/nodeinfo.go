package smp

import "github.com/ibscript/ibscript/mad"

// Node types (NodeInfo.NodeType).
const (
	NodeTypeCA     uint8 = 1
	NodeTypeSwitch uint8 = 2
	NodeTypeRouter uint8 = 3
)

// NodeInfo rows: mad-formats.md section 7, "NodeInfo (0x0011), 40 bytes"
// (IBA vol. 1 table "NodeInfo").
var (
	niBaseVersion     = mad.Field{Name: "BaseVersion", Bit: 0, Width: 8}
	niClassVersion    = mad.Field{Name: "ClassVersion", Bit: 8, Width: 8}
	niNodeType        = mad.Field{Name: "NodeType", Bit: 16, Width: 8}
	niNumPorts        = mad.Field{Name: "NumPorts", Bit: 24, Width: 8}
	niSystemImageGUID = mad.Field{Name: "SystemImageGUID", Bit: 32, Width: 64, Kind: mad.Hex}
	niNodeGUID        = mad.Field{Name: "NodeGUID", Bit: 96, Width: 64, Kind: mad.Hex}
	niPortGUID        = mad.Field{Name: "PortGUID", Bit: 160, Width: 64, Kind: mad.Hex}
	niPartitionCap    = mad.Field{Name: "PartitionCap", Bit: 224, Width: 16}
	niDeviceID        = mad.Field{Name: "DeviceID", Bit: 240, Width: 16, Kind: mad.Hex}
	niRevision        = mad.Field{Name: "Revision", Bit: 256, Width: 32, Kind: mad.Hex}
	niLocalPortNum    = mad.Field{Name: "LocalPortNum", Bit: 288, Width: 8}
	niVendorID        = mad.Field{Name: "VendorID", Bit: 296, Width: 24, Kind: mad.Hex}
)

// NodeInfoLayout is the NodeInfo attribute (0x0011, 40 bytes).
var NodeInfoLayout = mad.Layout{
	Name: "NodeInfo",
	ID:   AttrNodeInfo,
	Size: 40,
	Fields: []mad.Field{
		niBaseVersion, niClassVersion, niNodeType, niNumPorts,
		niSystemImageGUID, niNodeGUID, niPortGUID, niPartitionCap,
		niDeviceID, niRevision, niLocalPortNum, niVendorID,
	},
}

// NodeInfo is the NodeInfo attribute: what a node is and which port the
// SMP arrived on.
type NodeInfo struct {
	BaseVersion     uint8
	ClassVersion    uint8
	NodeType        uint8 // NodeTypeCA, NodeTypeSwitch, NodeTypeRouter
	NumPorts        uint8 // physical ports
	SystemImageGUID uint64
	NodeGUID        uint64
	PortGUID        uint64 // the port the SMP arrived on (switch: port 0)
	PartitionCap    uint16 // P_Key table entries
	DeviceID        uint16
	Revision        uint32
	LocalPortNum    uint8  // the port the SMP arrived on
	VendorID        uint32 // IEEE OUI, 24 bits
}

// UnmarshalBinary decodes n from the first 40 bytes of b without
// allocating. It returns an error wrapping mad.ErrTruncated when b is
// shorter.
func (n *NodeInfo) UnmarshalBinary(b []byte) error {
	if err := NodeInfoLayout.Check(b); err != nil {
		return err
	}
	n.BaseVersion = uint8(niBaseVersion.Get(b))
	n.ClassVersion = uint8(niClassVersion.Get(b))
	n.NodeType = uint8(niNodeType.Get(b))
	n.NumPorts = uint8(niNumPorts.Get(b))
	n.SystemImageGUID = niSystemImageGUID.Get(b)
	n.NodeGUID = niNodeGUID.Get(b)
	n.PortGUID = niPortGUID.Get(b)
	n.PartitionCap = uint16(niPartitionCap.Get(b))
	n.DeviceID = uint16(niDeviceID.Get(b))
	n.Revision = uint32(niRevision.Get(b))
	n.LocalPortNum = uint8(niLocalPortNum.Get(b))
	n.VendorID = uint32(niVendorID.Get(b))
	return nil
}

// AppendBinary appends the 40-byte attribute to b. It returns an error
// wrapping mad.ErrRange, and b unchanged, when VendorID does not fit in 24
// bits.
func (n *NodeInfo) AppendBinary(b []byte) ([]byte, error) {
	all, d := NodeInfoLayout.Append(b)
	w := mad.Writer{Layout: &NodeInfoLayout, B: d}
	w.Uint(niBaseVersion, uint64(n.BaseVersion))
	w.Uint(niClassVersion, uint64(n.ClassVersion))
	w.Uint(niNodeType, uint64(n.NodeType))
	w.Uint(niNumPorts, uint64(n.NumPorts))
	w.Uint(niSystemImageGUID, n.SystemImageGUID)
	w.Uint(niNodeGUID, n.NodeGUID)
	w.Uint(niPortGUID, n.PortGUID)
	w.Uint(niPartitionCap, uint64(n.PartitionCap))
	w.Uint(niDeviceID, uint64(n.DeviceID))
	w.Uint(niRevision, uint64(n.Revision))
	w.Uint(niLocalPortNum, uint64(n.LocalPortNum))
	w.Uint(niVendorID, uint64(n.VendorID))
	if w.Err != nil {
		return b, w.Err
	}
	return all, nil
}

// MarshalBinary returns the 40-byte attribute.
func (n *NodeInfo) MarshalBinary() ([]byte, error) { return n.AppendBinary(nil) }
