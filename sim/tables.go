package sim

// The per-port tables ibsim keeps beside PortInfo, with ibsim's values
// (ibsim/sim_net.c), which OpenSM leaves as they are with QoS off: the
// SLtoVL map of every input/output port pair sends SL i on VL i and SL 15
// on VL 7; the VL arbitration tables weigh VL0 high and VL1-14 low; the
// Mellanox ExtendedPortInfo is zero (no FDR10). Sets are kept per port,
// allocated on the first one, so a fabric that is only read costs nothing.
var (
	defaultSL2VL      = [8]byte{0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xe7}
	defaultVLArbHigh  = vlarbDefaults([15]uint8{4})
	defaultVLArbLow   = vlarbDefaults([15]uint8{0, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4})
	vlarbEntryBytes   = 2
	vlarbEntriesBlock = 32
)

// vlarbDefaults lays out ibsim's 64-entry table: entry i is VL i with the
// weight given, for VLs 0-14; the rest is zero.
func vlarbDefaults(w [15]uint8) [64 * 2]byte {
	var t [64 * 2]byte
	for vl := range w {
		t[2*vl], t[2*vl+1] = byte(vl), w[vl]
	}
	return t
}

// portTables are the tables of one port once a Set changed them.
type portTables struct {
	sl2vl     map[int][8]byte // by output port (a CA's: 0)
	vlarbHigh *[64 * 2]byte
	vlarbLow  *[64 * 2]byte
	mlnxExtPI *[64]byte
	fecEn     *[4]uint16 // PortInfoExtended's FEC Enabled masks (portext.go)
	led       bool       // LedInfo.LedMask (portext.go)
}

func (f *Fabric) tables(p *port) *portTables {
	if f.portTabs == nil {
		f.portTabs = make(map[*port]*portTables)
	}
	t := f.portTabs[p]
	if t == nil {
		t = &portTables{}
		f.portTabs[p] = t
	}
	return t
}

// sl2vl answers SLtoVLMappingTable as ibsim does: on a switch the modifier
// is input port << 8 | output port, both of which must exist (port 0
// included); on a CA it is ignored and the table is the arrival port's.
// Only the 8 bytes of the table are written; the rest of the data stays
// as the request had it.
func (f *Fabric) sl2vl(n *node, in *port, mod uint32, set bool, d []byte) uint16 {
	p, out := in, 0
	if n.typ == typeSwitch {
		ip, op := int(mod>>8&0xff), int(mod&0xff)
		if ip > n.numPorts || op > n.numPorts {
			return stInvalid
		}
		p, out = n.ports[ip], op
	}
	if set {
		t := f.tables(p)
		if t.sl2vl == nil {
			t.sl2vl = make(map[int][8]byte)
		}
		t.sl2vl[out] = [8]byte(d[:8])
	}
	tab := defaultSL2VL
	if t := f.portTabs[p]; t != nil {
		if v, ok := t.sl2vl[out]; ok {
			tab = v
		}
	}
	copy(d, tab[:])
	return 0
}

// vlarb answers VLArbitrationTable as ibsim does: modifier bits 31..16
// select the block (1 and 2 the low-priority table, 3 and 4 the high), on
// a switch bits 15..0 the port; a block the port's VLArbitrationLowCap or
// HighCap does not reach is an invalid field. Entries past the cap read
// zero; a Set stores only the entries within it.
func (f *Fabric) vlarb(n *node, in *port, mod uint32, set bool, d []byte) uint16 {
	p := in
	if n.typ == typeSwitch {
		num := int(mod & 0xffff)
		if num > n.numPorts {
			return stInvalid
		}
		p = n.ports[num]
	}
	blk := int(mod>>16) - 1
	if blk < 0 || blk > 3 {
		return stInvalid
	}
	high := blk/2 == 1
	pi := p.info()
	size := int(pi.VLArbitrationLowCap)
	if high {
		size = int(pi.VLArbitrationHighCap)
	}
	if size == 0 || blk%2 > size/vlarbEntriesBlock {
		return stInvalid
	}
	if size > vlarbEntriesBlock && blk%2 == 1 {
		size %= vlarbEntriesBlock
	}
	off := blk % 2 * vlarbEntriesBlock * vlarbEntryBytes
	n2 := size * vlarbEntryBytes
	cur := &defaultVLArbLow
	if high {
		cur = &defaultVLArbHigh
	}
	if t := f.portTabs[p]; t != nil {
		if high && t.vlarbHigh != nil {
			cur = t.vlarbHigh
		} else if !high && t.vlarbLow != nil {
			cur = t.vlarbLow
		}
	}
	if set {
		t := f.tables(p)
		slot := &t.vlarbLow
		if high {
			slot = &t.vlarbHigh
		}
		if *slot == nil {
			c := *cur
			*slot = &c
		}
		copy((*slot)[off:off+n2], d[:n2])
		cur = *slot
	}
	clear(d)
	copy(d, cur[off:off+n2])
	return 0
}

// mlnxExtPortInfo answers Mellanox's ExtendedPortInfo (0xFF90) as ibsim
// does: the modifier is the port (0 on a CA: the arrival port); the
// attribute is the 64 bytes a Set last wrote, zero before (no FDR10).
func (f *Fabric) mlnxExtPortInfo(n *node, in *port, mod uint32, set bool, d []byte) uint16 {
	num := int(mod)
	if mod > uint32(n.numPorts) {
		return stInvalid
	}
	if num == 0 && n.typ != typeSwitch {
		num = in.num
	}
	p := n.ports[num]
	if set {
		t := f.tables(p)
		if t.mlnxExtPI == nil {
			t.mlnxExtPI = new([64]byte)
		}
		copy(t.mlnxExtPI[:], d)
	}
	clear(d)
	if t := f.portTabs[p]; t != nil && t.mlnxExtPI != nil {
		copy(d, t.mlnxExtPI[:])
	}
	return 0
}

// mftBlock answers MulticastForwardingTable as ibsim does: switches only;
// the modifier's bits 31..28 are the position (16 ports a mask) and 8..0
// the block (32 MLIDs); a block past ibsim's 1024 MLIDs or a position past
// the switch's ports reads zero, and a Set of it is ignored. The table is
// empty until a Set: OpenSM programs no multicast route on ibsim (its
// IPoIB broadcast group has no members; ibroute -M lists no MLID).
func (f *Fabric) mftBlock(n *node, mod uint32, set bool, d []byte) uint16 {
	if n.sw == nil {
		return stUnsupported
	}
	pos, blk := int(mod>>28), int(mod&0x1ff)
	if blk > mftLastBlock || pos >= (n.numPorts+16)/16 {
		clear(d)
		return 0
	}
	key := blk<<4 | pos
	if set {
		if f.mfts == nil {
			f.mfts = make(map[*node]map[int][64]byte)
		}
		if f.mfts[n] == nil {
			f.mfts[n] = make(map[int][64]byte)
		}
		f.mfts[n][key] = [64]byte(d[:64])
	}
	v := f.mfts[n][key]
	copy(d, v[:])
	return 0
}

// mftLastBlock is ibsim's last block of 32 MLIDs (1024 MLIDs).
const mftLastBlock = 1024/32 - 1
