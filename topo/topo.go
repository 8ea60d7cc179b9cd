// Package topo is ibscript's model of a fabric's topology: nodes, their
// ports and the links between them, as a topology file describes it or as
// discovery finds it. The same model is read from ibsim / ibnetdiscover
// topology files (Parse), built by discovery, written back in
// ibnetdiscover's format (WriteIBNetDiscover) and used to build the
// embedded simulator.
//
// # Concurrency
//
// A Fabric is a plain value: safe for concurrent reads, owned by one
// goroutine while it is built or changed.
package topo

import (
	"fmt"
	"net/netip"

	"github.com/ibscript/ibscript/mad/smp"
)

// NodeType is NodeInfo.NodeType.
type NodeType uint8

// Node types.
const (
	CA     NodeType = 1
	Switch NodeType = 2
	Router NodeType = 3
)

func (t NodeType) String() string {
	switch t {
	case CA:
		return "CA"
	case Switch:
		return "Switch"
	case Router:
		return "Router"
	}
	return fmt.Sprintf("NodeType(%d)", uint8(t))
}

// Fabric is a set of nodes and the links between their ports.
type Fabric struct {
	Nodes []*Node // in file or discovery order
	// Origin is the local port discovery started from; nil for a fabric
	// read from a file.
	Origin *Port
}

// Node is one CA, switch or router.
type Node struct {
	ID       string // topology-file node id ("Hca1", "S-0002c90300001234")
	Desc     string // NodeDescription
	Type     NodeType
	NumPorts int // physical ports; a switch also has management port 0
	GUID     uint64
	SysGUID  uint64
	VendorID uint32
	DeviceID uint16
	Revision uint32
	// Ports is indexed by port number; Ports[0] is a switch's management
	// port and nil on CAs and routers. A port that exists but is not
	// cabled has Remote == nil.
	Ports []*Port
	// EnhancedPort0 is SwitchInfo.EnhancedPort0 (switches only).
	EnhancedPort0 bool
	// Planarized marks a planarized CA: one aggregated port whose
	// physical ports are its planes, one plane per port (Port.Plane),
	// all with one port GUID (a topology file's "# planarized" line;
	// docs/planes.md).
	Planarized bool
}

// Port is one port of a node.
type Port struct {
	Node *Node
	Num  int
	GUID uint64
	LID  uint16 // base LID; for a switch, only port 0 has one
	LMC  uint8
	// Link parameters, as PortInfo masks (mad-formats.md section 7):
	// WidthEnabled/WidthActive use 1=1x 2=4x 4=8x 8=12x 16=2x,
	// SpeedEnabled/SpeedActive 1=SDR 2=DDR 4=QDR, and
	// SpeedExtEnabled/SpeedExtActive 1=FDR 2=EDR 4=HDR 8=NDR, and 32=XDR
	// as libibnetdisc aggregates PortInfo's LinkSpeedExt*2 fields above
	// them (ibnd_get_agg_linkspeedext; a topology file's extspeed= or e=
	// takes it, ibnetdiscover's text says "XDR"). Active values
	// are 0 where unknown (files) or the port is down. Discovery leaves
	// SpeedExtActive 0 unless the node advertises extended speeds
	// (PortInfo.CapabilityMask bit 14, read from port 0 on switches), as
	// ibnetdiscover does.
	WidthEnabled    uint8
	WidthActive     uint8
	SpeedEnabled    uint8
	SpeedActive     uint8
	SpeedExtEnabled uint8
	SpeedExtActive  uint8
	CapMask         uint32 // PortInfo.CapabilityMask, 0 when unknown
	CapMask2        uint16 // PortInfo.CapabilityMask2, 0 when unknown
	// Supported link widths and speeds (PortInfo.LinkWidthSupported,
	// LinkSpeedSupported, LinkSpeedExtSupported with
	// LinkSpeedExtSupported2 as XDR 32; masks as above), 0 where
	// unknown: what iblinkinfo's "Could be" compares with the active ones.
	WidthSupported, SpeedSupported, SpeedExtSupported uint8
	// PortInfo.HOQLife and VLStallCount (iblinkinfo -p), 0 where unknown.
	HOQLife, VLStallCount uint8
	// VLCap is PortInfo.VLCap (ibnetdiscover -f), 0 where unknown.
	VLCap uint8
	// IPoIB are the IP addresses of the port's IPoIB interface, from a
	// topology file's "# ipoib" lines (ibscript's; comments to ibsim).
	IPoIB []netip.Addr
	// MlnxSpeedSupported and MlnxSpeedActive are Mellanox's
	// MlnxExtPortInfo LinkSpeedSupported and LinkSpeedActive (bit 0:
	// FDR10), read by discovery where libibnetdisc reads them (a device
	// ID that has the attribute, a port up at QDR without an extended
	// speed); 0 elsewhere.
	MlnxSpeedSupported, MlnxSpeedActive uint8
	// Plane is the plane the port is on (1..MaxPlanes): a planarized CA's
	// port's from its "# planarized" line, a switch's that of the
	// planarized CA ports its island reaches, another port's that of the
	// plane switch it is cabled to; 0 for a port on no plane.
	Plane     uint8
	State     uint8 // PortInfo.PortState, 0 when unknown
	PhysState uint8 // PortInfo.PortPhysicalState, 0 when unknown
	Remote    *Port // the port at the other end of the cable
}

// Node returns the node with the given GUID, or nil.
func (f *Fabric) Node(guid uint64) *Node {
	for _, n := range f.Nodes {
		if n.GUID == guid {
			return n
		}
	}
	return nil
}

// NodesByGUID indexes the nodes by GUID (Node's lookup without the walk).
func (f *Fabric) NodesByGUID() map[uint64]*Node {
	m := make(map[uint64]*Node, len(f.Nodes))
	for _, n := range f.Nodes {
		m[n.GUID] = n
	}
	return m
}

// NodeByID returns the node with the given topology id, or nil.
func (f *Fabric) NodeByID(id string) *Node {
	for _, n := range f.Nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// Link is one cable, named by its two ends.
type Link struct{ A, B *Port }

// Links returns every link once, in node order, from the end that comes
// first.
func (f *Fabric) Links() []Link {
	idx := make(map[*Node]int, len(f.Nodes))
	for i, n := range f.Nodes {
		idx[n] = i
	}
	var ls []Link
	for i, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			j := idx[p.Remote.Node]
			if i < j || (i == j && p.Num < p.Remote.Num) {
				ls = append(ls, Link{p, p.Remote})
			}
		}
	}
	return ls
}

// EndPort returns the port that holds the node's LID and answers for it:
// port 0 of a switch, else the given port.
func (n *Node) EndPort(port int) *Port {
	if n.Type == Switch {
		return n.Ports[0]
	}
	if port < 1 || port >= len(n.Ports) {
		return nil
	}
	return n.Ports[port]
}

// NodeIDFor returns the node id ibnetdiscover gives a node: "S-", "H-" or
// "R-" followed by the node GUID as 16 hex digits.
func NodeIDFor(t NodeType, guid uint64) string {
	const hex = "0123456789abcdef"
	var b [18]byte
	b[0], b[1] = 'H', '-'
	switch t {
	case Switch:
		b[0] = 'S'
	case Router:
		b[0] = 'R'
	}
	for i := 17; i >= 2; i-- {
		b[i] = hex[guid&0xf]
		guid >>= 4
	}
	return string(b[:])
}

func (n *Node) String() string {
	return fmt.Sprintf("%s %q guid 0x%016x", n.Type, n.Desc, n.GUID)
}

func (p *Port) String() string {
	return fmt.Sprintf("%q port %d", p.Node.Desc, p.Num)
}

// AggExtSpeeds turns p's extended speed masks as discovery reads them
// (LinkSpeedExt* with the LinkSpeedExt*2 fields shifted by 5 above them)
// into libibnetdisc's aggregated ones (ibnd_get_agg_linkspeedext,
// ibnd_get_agg_linkspeedexten, ibnd_get_agg_linkspeedextsup), capPort
// being the port whose capability masks count (port 0 on a switch): without
// CapabilityMask's IsExtendedSpeedsSupported no extended speed is active;
// the ...2 bits count only where CapabilityMask has
// IsCapabilityMask2Supported and CapabilityMask2 IsExtendedSpeeds2Supported;
// an active ...2 speed replaces LinkSpeedExtActive (XDR is 32). The
// enabled and supported LinkSpeedExt bits are kept as read, as before XDR
// (iblinkinfo's "Could be" checks the capability itself).
func (p *Port) AggExtSpeeds(capPort *Port) {
	has2 := capPort.CapMask&smp.CapIsExtendedSpeedsSupported != 0 &&
		capPort.CapMask&smp.CapIsCapabilityMask2Supported != 0 &&
		capPort.CapMask2&smp.Cap2IsExtendedSpeeds2Supported != 0
	if !has2 {
		p.SpeedExtEnabled &= 0xf
		p.SpeedExtSupported &= 0xf
		p.SpeedExtActive &= 0xf
	}
	switch {
	case capPort.CapMask&smp.CapIsExtendedSpeedsSupported == 0:
		p.SpeedExtActive = 0
	case p.SpeedExtActive>>5 != 0:
		p.SpeedExtActive &^= 0xf
	}
}

// AggExtSpeeds aggregates the extended speeds of every port of f as
// discovery reads them (Port.AggExtSpeeds), each with its node's
// capability masks: port 0's on a switch where it is known, else its own.
func (f *Fabric) AggExtSpeeds() {
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			capPort := p
			if n.Type == Switch && n.Ports[0] != nil {
				capPort = n.Ports[0]
			}
			p.AggExtSpeeds(capPort)
		}
	}
}

// FDR10Active reports whether the port's link runs at Mellanox's FDR10:
// MlnxExtPortInfo has it active and no extended speed is (PortInfo then
// says QDR), as libibnetdisc and ibnetdiscover read it ("4xFDR10").
func (p *Port) FDR10Active() bool {
	return p.SpeedExtActive == 0 && p.MlnxSpeedActive&smp.MlnxSpeedFDR10 != 0
}
