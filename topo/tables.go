package topo

// PortMask is a set of ports, bit p for port p (0-255).
type PortMask [4]uint64

// Has reports whether port p is in the mask.
func (m *PortMask) Has(p int) bool { return p >= 0 && p < 256 && m[p>>6]>>(p&63)&1 != 0 }

// Set adds port p.
func (m *PortMask) Set(p int) {
	if p >= 0 && p < 256 {
		m[p>>6] |= 1 << (p & 63)
	}
}

// MulticastTables are the multicast forwarding tables of the switches:
// Groups[i] maps an MLID to the ports Switches[i] forwards it to.
type MulticastTables struct {
	Switches []*Node
	Groups   []map[uint16]PortMask
}

// SL2VLKey names one SLtoVLMappingTable: on a switch the input and output
// ports, on a CA or router In 0 and Out the port.
type SL2VLKey struct {
	Node    *Node
	In, Out uint8
}

// SL2VLTables are SLtoVLMappingTables: the VL of each SL 0-15.
type SL2VLTables struct {
	Tables map[SL2VLKey][16]uint8
}
