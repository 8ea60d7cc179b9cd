package ibndcache

import (
	"fmt"

	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// Fabric rebuilds the fabric the file holds, as ibnd_load_fabric does:
// the nodes in discovery order (the file holds libibnetdisc's node list,
// the newest found first), each node's ports from its port keys, the
// links from the port records. name names the file in errors.
//
// An incomplete cache loads as current rdma-core's libibnetdisc loads it
// (rdma-core #1767, commit de83d1c20; infiniband-diags 44's refuses it,
// "Cache invalid"): a port key with no port record, or beyond the node's
// NumPorts, is left out, and so is a link to a port the file does not
// hold (the port is then unlinked), as a cache written by libibnetdisc
// before that change holds them where a port's PortInfo timed out.
// Port records no node claims are left out, as libibnetdisc leaves them.
//
// Unlike libibnetdisc it refuses what it cannot trust: two node records
// with one GUID, two port records with one key, a node type other than
// CA, switch or router, a port key of port 0 of a CA or router, a port
// record claimed by two nodes or naming another node than the one
// claiming it, and a link whose far end does not link back. The Origin is
// the from node's port its NodeInfo.LocalPortNum names (else its
// lowest-numbered port in the file).
func (f *File) Fabric(name string) (*topo.Fabric, error) {
	l := &loader{f: f, name: name, ports: make([]*topo.Port, len(f.Ports)), owner: make([]int, len(f.Ports))}
	from, err := l.index()
	if err != nil {
		return nil, err
	}
	fab := &topo.Fabric{Nodes: make([]*topo.Node, len(f.Nodes))}
	for i := range f.Nodes {
		n, err := l.node(i)
		if err != nil {
			return nil, err
		}
		// The file holds the newest found first.
		fab.Nodes[len(f.Nodes)-1-i] = n
	}
	if err := l.link(); err != nil {
		return nil, err
	}
	// As discovery: extended speeds only where the node advertises them,
	// XDR where CapabilityMask2 does (ibnd_get_agg_linkspeedext).
	fab.AggExtSpeeds()
	// The from node's NodeInfo names the port discovery left from.
	fn := fab.Nodes[len(f.Nodes)-1-from]
	var fni smp.NodeInfo
	_ = fni.UnmarshalBinary(f.Nodes[from].Info[:]) // decoded above
	if lp := int(fni.LocalPortNum); lp < len(fn.Ports) && fn.Ports[lp] != nil {
		fab.Origin = fn.Ports[lp]
	}
	for _, p := range fn.Ports {
		if fab.Origin == nil && p != nil {
			fab.Origin = p
		}
	}
	return fab, nil
}

// loader holds what Fabric has read of a File: the records by GUID and by
// port key, and each port record's port and claiming node once claimed.
type loader struct {
	f       *File
	name    string // the file, in errors
	nodeIdx map[uint64]int
	portIdx map[PortKey]int
	ports   []*topo.Port // port record -> its port, once claimed
	owner   []int        // port record -> the node record claiming it
}

func (l *loader) nodeAt(i int, format string, args ...any) error {
	return fmt.Errorf("%s: offset %d: %w: node record %d (GUID 0x%016x): %s",
		l.name, l.f.NodeOffset(i), ErrFormat, i, l.f.Nodes[i].GUID, fmt.Sprintf(format, args...))
}

func (l *loader) portAt(i int, format string, args ...any) error {
	return fmt.Errorf("%s: offset %d: %w: port record %d (GUID 0x%016x port %d): %s",
		l.name, l.f.PortOffset(i), ErrFormat, i, l.f.Ports[i].GUID, l.f.Ports[i].Num, fmt.Sprintf(format, args...))
}

// index maps node GUIDs and port keys to their records, refusing either
// twice, and returns the from node's record.
func (l *loader) index() (from int, err error) {
	f := l.f
	l.nodeIdx = make(map[uint64]int, len(f.Nodes))
	for i, n := range f.Nodes {
		if j, ok := l.nodeIdx[n.GUID]; ok {
			return 0, l.nodeAt(i, "the GUID of node record %d again", j)
		}
		l.nodeIdx[n.GUID] = i
	}
	from, ok := l.nodeIdx[f.FromNode]
	if !ok {
		return 0, fmt.Errorf("%s: offset 16: %w: the from node 0x%016x has no node record", l.name, ErrFormat, f.FromNode)
	}
	l.portIdx = make(map[PortKey]int, len(f.Ports))
	for i, p := range f.Ports {
		k := PortKey{p.GUID, p.Num}
		if j, ok := l.portIdx[k]; ok {
			return 0, l.portAt(i, "the key of port record %d again", j)
		}
		l.portIdx[k] = i
	}
	return from, nil
}

// node builds node record i with the ports its keys claim.
func (l *loader) node(i int) (*topo.Node, error) {
	r := &l.f.Nodes[i]
	t := topo.NodeType(r.Type)
	if t != topo.CA && t != topo.Switch && t != topo.Router {
		return nil, l.nodeAt(i, "node type %d", r.Type)
	}
	var ni smp.NodeInfo
	var nd smp.NodeDescription
	if err := ni.UnmarshalBinary(r.Info[:]); err != nil {
		return nil, l.nodeAt(i, "NodeInfo: %v", err)
	}
	if err := nd.UnmarshalBinary(r.Desc[:]); err != nil {
		return nil, l.nodeAt(i, "NodeDescription: %v", err)
	}
	n := &topo.Node{
		ID: topo.NodeIDFor(t, r.GUID), Desc: nd.NodeString, Type: t, NumPorts: int(r.NumPorts),
		GUID: r.GUID, SysGUID: ni.SystemImageGUID, VendorID: ni.VendorID, DeviceID: ni.DeviceID,
		Revision: ni.Revision, Ports: make([]*topo.Port, int(r.NumPorts)+1), EnhancedPort0: r.SMAEnhSP0 != 0,
	}
	for _, k := range r.Ports {
		if k.Num == 0 && t != topo.Switch {
			return nil, l.nodeAt(i, "port key 0x%016x port 0: a %s has no port 0", k.GUID, t)
		}
		j, ok := l.portIdx[k]
		if !ok || int(k.Num) > n.NumPorts {
			continue // incomplete: _fill_port skips it (#1767)
		}
		if l.ports[j] != nil {
			return nil, l.nodeAt(i, "port key 0x%016x port %d: the port record at offset %d is claimed by node record %d too", k.GUID, k.Num, l.f.PortOffset(j), l.owner[j])
		}
		pr := &l.f.Ports[j]
		if pr.NodeGUID != r.GUID {
			return nil, l.portAt(j, "names node 0x%016x, claimed by node 0x%016x", pr.NodeGUID, r.GUID)
		}
		if n.Ports[k.Num] != nil {
			return nil, l.nodeAt(i, "port %d keyed twice", k.Num)
		}
		var pi smp.PortInfo
		if err := pi.UnmarshalBinary(pr.Info[:]); err != nil {
			return nil, l.portAt(j, "PortInfo: %v", err)
		}
		p := &topo.Port{
			Node: n, Num: int(k.Num), GUID: pr.GUID,
			WidthEnabled: pi.LinkWidthEnabled, WidthActive: pi.LinkWidthActive,
			SpeedEnabled: pi.LinkSpeedEnabled, SpeedActive: pi.LinkSpeedActive,
			SpeedExtEnabled: pi.LinkSpeedExtEnabled | pi.LinkSpeedExtEnabled2<<5,
			SpeedExtActive:  pi.LinkSpeedExtActive | pi.LinkSpeedExtActive2<<5,
			CapMask:         pi.CapabilityMask, CapMask2: pi.CapabilityMask2, WidthSupported: pi.LinkWidthSupported,
			SpeedSupported: pi.LinkSpeedSupported, SpeedExtSupported: pi.LinkSpeedExtSupported | pi.LinkSpeedExtSupported2<<5,
			HOQLife: pi.HOQLife, VLStallCount: pi.VLStallCount, VLCap: pi.VLCap,
			State: pi.PortState, PhysState: pi.PortPhysicalState,
		}
		// Discovery gives a switch's LID to its port 0 alone.
		if t != topo.Switch || k.Num == 0 {
			p.LID, p.LMC = pr.BaseLID, pr.LMC
		}
		n.Ports[k.Num] = p
		l.ports[j], l.owner[j] = p, i
	}
	return n, nil
}

// link connects the claimed ports as their records say, leaving out a
// link to a port the file does not hold, refusing one that does not link
// back.
func (l *loader) link() error {
	for j, p := range l.ports {
		pr := &l.f.Ports[j]
		if p == nil || !pr.HasRemote {
			continue
		}
		// A link to a port the file does not hold is left out, as
		// _rebuild_ports leaves it since #1767.
		if rj, ok := l.portIdx[pr.Remote]; ok {
			p.Remote = l.ports[rj]
		}
	}
	for j, p := range l.ports {
		if p != nil && p.Remote != nil && p.Remote.Remote != p {
			return l.portAt(j, "links to 0x%016x port %d, which does not link back", p.Remote.GUID, p.Remote.Num)
		}
	}
	return nil
}

// hashGUID is libibnetdisc's HASHGUID modulo its table size HTSZ (137):
// the cache lists ports bucket by bucket.
func hashGUID(guid uint64) int {
	return int((uint32(guid)*101 ^ uint32(guid>>32)*103) % 137)
}

// LoadedPortOrder is the order, as indexes into f.Ports, in which
// libibnetdisc writes the port records again after loading f
// (ibnd_load_fabric, then ibnd_cache_fabric, as ibcacheedit does): the
// load walks the nodes from the file's last to its first and each
// node's port keys in order, putting each port it finds (by GUID and
// number, the file's last record of a key, within the node's port
// count, once) at the head of its GUID's hash bucket; the write goes
// bucket by bucket. A port no node names is not written. The order is
// the file's own where each bucket's ports were found in file order, as
// discovery writes them; a CA whose ports were found apart, or a node
// of GUID 0, may share a bucket out of that order.
func (f *File) LoadedPortOrder() []int {
	byKey := make(map[PortKey]int, len(f.Ports))
	for i, p := range f.Ports {
		byKey[PortKey{GUID: p.GUID, Num: p.Num}] = i
	}
	buckets := make([][]int, 137)
	stored := make([]bool, len(f.Ports))
	for i := len(f.Nodes) - 1; i >= 0; i-- {
		n := &f.Nodes[i]
		for _, k := range n.Ports {
			j, ok := byKey[k]
			if !ok || stored[j] || f.Ports[j].Num > n.NumPorts {
				continue
			}
			stored[j] = true
			h := hashGUID(f.Ports[j].GUID)
			buckets[h] = append([]int{j}, buckets[h]...)
		}
	}
	var out []int
	for _, b := range buckets {
		out = append(out, b...)
	}
	return out
}

// FromFabric makes the cache file of a discovered fabric, records in the
// order libibnetdisc writes them for the same discovery: nodes the newest
// found first, ports by libibnetdisc's port GUID hash bucket, the newest
// found first within a bucket.
//
// The model keeps the fields the tools print, not the attributes' bytes,
// so the NodeInfo, SwitchInfo and PortInfo blocks are rebuilt from them:
// NodeInfo's versions are 1 and its PartitionCap 0, SwitchInfo holds only
// EnhancedPort0, and PortInfo holds the LID and LMC (port 0's alone on a
// switch), CapabilityMask, LocalPortNum (the port the node was reached
// through), the link
// widths and speeds (enabled, supported, active), the port and physical
// states, HOQLife, VLStallCount and VLCap; its other fields are 0. Extended
// speeds active are 0 where the node does not advertise them (discovery
// clears them so). Every tool reading the cache reads only those fields.
// The description is written as the node gave it (ibnetdiscover's own
// cache holds it cleaned, a side effect of printing it first). A port
// whose PortInfo discovery could not read is left out (cacheable).
//
// MaxHops is the longest route of a breadth-first walk from the Origin
// through switches; libibnetdisc's own figure depends on its query order
// (diag.IBNDMaxHops replays it), which a caller that knows it sets.
func FromFabric(f *topo.Fabric) (*File, error) {
	if len(f.Nodes) == 0 {
		return nil, fmt.Errorf("ibndcache: the fabric has no nodes")
	}
	origin := f.Nodes[0]
	if f.Origin != nil {
		origin = f.Origin.Node
	}
	arrival, hops := reach(f, origin)
	out := &File{FromNode: origin.GUID, MaxHops: uint32(hops), Nodes: make([]Node, 0, len(f.Nodes))}
	buckets := make([][]Port, 137)
	for i := len(f.Nodes) - 1; i >= 0; i-- {
		n := f.Nodes[i]
		r := Node{GUID: n.GUID, Type: uint8(n.Type), NumPorts: uint8(n.NumPorts)}
		var smaLMC uint8
		if n.Type == topo.Switch && len(n.Ports) > 0 && n.Ports[0] != nil {
			r.SMALID, r.SMALMC = n.Ports[0].LID, n.Ports[0].LMC
			smaLMC = r.SMALMC
		}
		if n.EnhancedPort0 {
			r.SMAEnhSP0 = 1
		}
		if n.Type == topo.Switch {
			si := smp.SwitchInfo{EnhancedPort0: n.EnhancedPort0}
			if err := marshalInto(&r.SwitchInfo, &si); err != nil {
				return nil, fmt.Errorf("ibndcache: %s: SwitchInfo: %w", n, err)
			}
		}
		lp := arrival[n]
		ni := smp.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: uint8(n.Type), NumPorts: uint8(n.NumPorts),
			SystemImageGUID: n.SysGUID, NodeGUID: n.GUID, DeviceID: n.DeviceID, Revision: n.Revision,
			LocalPortNum: uint8(lp), VendorID: n.VendorID}
		if lp < len(n.Ports) && n.Ports[lp] != nil {
			ni.PortGUID = n.Ports[lp].GUID
		}
		if err := marshalInto(&r.Info, &ni); err != nil {
			return nil, fmt.Errorf("ibndcache: %s: NodeInfo: %w", n, err)
		}
		if len(n.Desc) > 64 {
			return nil, fmt.Errorf("ibndcache: %s: the description is %d bytes, NodeDescription holds 64", n, len(n.Desc))
		}
		copy(r.Desc[:], n.Desc)
		for num, p := range n.Ports {
			if !cacheable(p) || num > n.NumPorts {
				continue
			}
			r.Ports = append(r.Ports, PortKey{p.GUID, uint8(num)})
			pr, err := portRecord(n, p, num, r.SMALID, smaLMC, lp)
			if err != nil {
				return nil, err
			}
			h := hashGUID(p.GUID)
			buckets[h] = append(buckets[h], pr)
		}
		out.Nodes = append(out.Nodes, r)
	}
	// Nodes were walked newest first, so each bucket already holds the
	// newest node's ports first; within a node libibnetdisc adds port 0
	// first, so its highest port heads the bucket.
	for _, b := range buckets {
		for s := 0; s < len(b); {
			e := s + 1
			for e < len(b) && b[e].NodeGUID == b[s].NodeGUID {
				e++
			}
			for i, j := s, e-1; i < j; i, j = i+1, j-1 {
				b[i], b[j] = b[j], b[i]
			}
			s = e
		}
		out.Ports = append(out.Ports, b...)
	}
	return out, nil
}

// portRecord is the cache's record of port num of n (p), its PortInfo as
// discovery read it from local port lp; a switch's ports carry its port
// 0's LID and LMC (smaLID, smaLMC) in the record, none in PortInfo.
func portRecord(n *topo.Node, p *topo.Port, num int, smaLID uint16, smaLMC uint8, lp int) (Port, error) {
	pr := Port{GUID: p.GUID, Num: uint8(num), BaseLID: p.LID, LMC: p.LMC, NodeGUID: n.GUID}
	if n.Type == topo.Switch {
		pr.BaseLID, pr.LMC = smaLID, smaLMC
	}
	pi := smp.PortInfo{LID: pr.BaseLID, LMC: pr.LMC, CapabilityMask: p.CapMask,
		LinkWidthEnabled: p.WidthEnabled, LinkWidthSupported: p.WidthSupported, LinkWidthActive: p.WidthActive,
		LinkSpeedEnabled: p.SpeedEnabled, LinkSpeedSupported: p.SpeedSupported, LinkSpeedActive: p.SpeedActive,
		LinkSpeedExtEnabled: p.SpeedExtEnabled & 0x1f, LinkSpeedExtSupported: p.SpeedExtSupported & 0xf, LinkSpeedExtActive: p.SpeedExtActive & 0xf,
		CapabilityMask2: p.CapMask2, LinkSpeedExtEnabled2: p.SpeedExtEnabled >> 5,
		LinkSpeedExtSupported2: p.SpeedExtSupported >> 5, LinkSpeedExtActive2: p.SpeedExtActive >> 5,
		PortState: p.State, PortPhysicalState: p.PhysState, HOQLife: p.HOQLife, VLStallCount: p.VLStallCount, VLCap: p.VLCap}
	pi.LocalPortNum = uint8(lp)
	if n.Type == topo.Switch && num > 0 {
		pi.LID, pi.LMC = 0, 0 // a switch's LID is its port 0's
	}
	if err := marshalInto(&pr.Info, &pi); err != nil {
		return Port{}, fmt.Errorf("ibndcache: %s port %d: PortInfo: %w", n, num, err)
	}
	if cacheable(p.Remote) {
		pr.HasRemote, pr.Remote = true, PortKey{p.Remote.GUID, uint8(p.Remote.Num)}
	}
	return pr, nil
}

// cacheable reports whether the cache holds port p: a port whose PortInfo
// discovery read (a PortInfo never has PortState 0; discovery leaves it 0
// where the query timed out). libibnetdisc keeps such a port as a shell,
// out of its port table, and since rdma-core #1767 (commit de83d1c20)
// writes neither a record of it nor a reference to it, its node's port
// key and its peer's link (infiniband-diags 44's wrote them, and no
// loader then took the file: "Cache invalid: cannot find port").
func cacheable(p *topo.Port) bool { return p != nil && p.State != 0 }

type appender interface {
	AppendBinary([]byte) ([]byte, error)
}

func marshalInto(dst *[64]byte, a appender) error {
	b, err := a.AppendBinary(nil)
	if err != nil {
		return err
	}
	copy(dst[:], b)
	return nil
}

// reach walks the fabric as libibnetdisc does (breadth first from the
// origin, through switches only) and returns the port each node was
// first reached through (the origin: its own port) and the longest
// directed route libibnetdisc extends to, its maxhops_discovered.
func reach(f *topo.Fabric, origin *topo.Node) (map[*topo.Node]int, int) {
	arrival := map[*topo.Node]int{origin: 0}
	if f.Origin != nil {
		arrival[origin] = f.Origin.Num
	}
	depth := map[*topo.Node]int{origin: 0}
	order := []*topo.Node{origin}
	hops := 0
	for i := 0; i < len(order); i++ {
		n := order[i]
		if n.Type != topo.Switch && n != origin {
			continue
		}
		for _, p := range n.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			if n.Type != topo.Switch && p.Num != arrival[n] {
				continue
			}
			// A switch probes every linked port but the one it was
			// reached through; the origin probes its own port.
			if n.Type == topo.Switch && n != origin && p.Num == arrival[n] {
				continue
			}
			hops = max(hops, depth[n]+1)
			r := p.Remote.Node
			if _, seen := depth[r]; seen {
				continue
			}
			depth[r] = depth[n] + 1
			arrival[r] = p.Remote.Num
			order = append(order, r)
		}
	}
	return arrival, hops
}
