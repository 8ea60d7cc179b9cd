package diag

import (
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// libibnetdisc's scan, replayed over a discovered fabric.
//
// The engine's sweep is concurrent; libibnetdisc's is a FIFO of SMPs with
// 2 on the wire, each answer's callback queueing the SMPs it leads to.
// Answers come back in send order where the fabric answers in order (as
// ibsim does), so the order libibnetdisc handles its answers in is the
// order it queued the SMPs in. What it holds at the end, what it counts
// (ibnetdiscover -m), where a hop limit (-n) stops it and the order it
// meets nodes in (-s) all follow from that order, so ibnd replays the
// FIFO over the fabric the engine found: every SMP libibnetdisc would
// send, answered from the discovered topology (the NodeInfo of the node
// at the end of the route, the PortInfo discovery read). A route that
// leads nowhere in the topology (an uncabled port, a hop through a CA)
// is an SMP that gets no answer, as on the wire: counted, no callback.
//
// The fabric must hold everything the replay reaches: with a hop limit
// of n, discovery must have gone n+1 hops (one node past the limit is
// answered; its switch's ports are read).

// ibndSMP is one queued SMP.
type ibndSMP struct {
	attr uint16
	path []uint8 // the directed route's hops after the initial 0
	port int     // the PortInfo's port (attribute modifier)
	node *ibndNode
	// from is the node and port a NodeInfo probe went out of (nil for
	// the first NodeInfo).
	from     *ibndNode
	fromPort int
}

// ibndNode is a node as libibnetdisc holds it.
type ibndNode struct {
	src *topo.Node // the discovered node
	n   *topo.Node // the copy the replay fills: its ports as libibnetdisc holds them
	// info: the ports whose PortInfo arrived.
	info map[int]bool
	// described: its NodeDescription arrived.
	described bool
}

// ibndEvent is one NodeInfo answer, in libibnetdisc's order: what
// ibnetdiscover -s prints as it comes.
type ibndEvent struct {
	Path []uint8 // the route's hops after the initial 0
	New  bool
	Node *topo.Node // the replay's copy as it was then
	Port int        // the port the route entered it by
	LID  uint16     // that port's base LID then, 0 before its PortInfo
	LMC  uint8
	Desc string // the node's description then, "" before its NodeDescription
}

// ibndScan is the replay's result.
type ibndScan struct {
	// Fabric holds the nodes libibnetdisc found, in the order it found
	// them, each with the ports it holds and the links it made.
	Fabric *topo.Fabric
	// SMPs is libibnetdisc's total_mads_used: every SMP it sent.
	SMPs int
	// MaxHops is maxhops_discovered: the longest route it probed (plus
	// the starting route's hops).
	MaxHops int
	// Events are the NodeInfo answers in the order they came.
	Events []ibndEvent
	// Unknown counts SMPs the fabric had no answer for although
	// discovery should have read it (a PortInfo of a port discovery did
	// not read): the replay is incomplete when it is not 0.
	Unknown int
}

// ibndStart is where a scan starts: the local port (the zero value), a
// directed route from it (-D), or a port addressed by its LID (-S/-G,
// as infiniband-diags 44 resolves them through the SA).
type ibndStart struct {
	// Path is the route's hops after the initial 0.
	Path []uint8
	// LID is the port a LID-routed start reaches; from it, routes are
	// extended through switches only.
	LID *topo.Port
}

type ibndReplay struct {
	f        *topo.Fabric
	origin   *topo.Port
	lid      bool
	maxHops  int
	initial  int
	epi      bool
	queue    []*ibndSMP
	byGUID   map[uint64]*ibndNode
	fromNode *ibndNode
	fromPort int
	res      *ibndScan
}

// replayIBND replays libibnetdisc's scan of f from start, with
// libibnetdisc's max_hops (0: no limit) and IBND_CONFIG_MLX_EPI set, as
// infiniband-diags sets it by default.
func replayIBND(f *topo.Fabric, start ibndStart, maxHops int) *ibndScan {
	r := &ibndReplay{f: f, origin: f.Origin, maxHops: maxHops, initial: len(start.Path), epi: true,
		byGUID: map[uint64]*ibndNode{}, res: &ibndScan{Fabric: &topo.Fabric{}}}
	if start.LID != nil {
		r.origin, r.lid = start.LID, true
		if start.LID.Node.Type == topo.Switch {
			// A LID-routed SMP reaches a switch's management port.
			r.origin = start.LID.Node.Ports[0]
		}
	}
	r.queue = append(r.queue, &ibndSMP{attr: smp.AttrNodeInfo, path: append([]uint8(nil), start.Path...)})
	for i := 0; i < len(r.queue); i++ {
		r.res.SMPs++
		r.answer(r.queue[i])
	}
	r.res.MaxHops += r.initial
	if r.fromNode != nil {
		r.res.Fabric.Origin = r.fromNode.n.Ports[r.fromPort]
	}
	return r.res
}

// walk follows a directed route through the topology: the node it ends
// at and the port it entered that node by; ok false when the route leads
// nowhere.
func (r *ibndReplay) walk(path []uint8) (n *topo.Node, entry int, ok bool) {
	if r.origin == nil || r.origin.Node == nil {
		return nil, 0, false
	}
	n, entry = r.origin.Node, r.origin.Num
	for i, p := range path {
		if i > 0 && n.Type != topo.Switch {
			return nil, 0, false
		}
		switch {
		case p == 0 && n.Type == topo.Switch:
			// A switch's port 0 is its own SMA: the route stays there
			// and goes on from it (ibsim's next_port).
			entry = 0
			continue
		case p == 0:
			p = 1 // a CA's egress port 0 is its first port (ibsim's next_port)
		}
		if int(p) >= len(n.Ports) || n.Ports[p] == nil || n.Ports[p].Remote == nil {
			return nil, 0, false
		}
		rp := n.Ports[p].Remote
		n, entry = rp.Node, rp.Num
	}
	return n, entry, true
}

func (r *ibndReplay) push(s *ibndSMP) { r.queue = append(r.queue, s) }

func (r *ibndReplay) answer(s *ibndSMP) {
	src, entry, ok := r.walk(s.path)
	if !ok {
		return
	}
	switch s.attr {
	case smp.AttrNodeInfo:
		r.nodeInfo(s, src, entry)
	case smp.AttrNodeDescription:
		s.node.n.Desc = src.Desc
		s.node.described = true
	case smp.AttrSwitchInfo:
		s.node.n.EnhancedPort0 = src.EnhancedPort0
	case smp.AttrPortInfo:
		r.portInfo(s, src, entry)
	case attrMlnxExtPortInfo:
		// Answered or refused, libibnetdisc goes on as after PortInfo.
		r.probe(s, entry)
	}
}

// attrMlnxExtPortInfo is Mellanox's vendor PortInfo, which libibnetdisc
// asks of a QDR port of the devices it knows to have FDR10.
const attrMlnxExtPortInfo = 0xff90

func (r *ibndReplay) nodeInfo(s *ibndSMP, src *topo.Node, entry int) {
	d := r.byGUID[src.GUID]
	isNew := d == nil
	if isNew {
		n := *src
		n.Ports = make([]*topo.Port, len(src.Ports))
		n.Desc = ""
		n.EnhancedPort0 = false
		d = &ibndNode{src: src, n: &n, info: map[int]bool{}}
		r.byGUID[src.GUID] = d
		r.res.Fabric.Nodes = append(r.res.Fabric.Nodes, d.n)
	}
	port := d.port(entry)
	if sp := src.Ports[entry]; sp != nil {
		port.GUID = sp.GUID
	}
	ev := ibndEvent{Path: s.path, New: isNew, Node: d.n, Port: entry, Desc: d.n.Desc}
	if d.info[entry] {
		ev.LID, ev.LMC = port.LID, port.LMC
		if d.n.Type == topo.Switch && d.n.Ports[0] != nil {
			ev.LID, ev.LMC = d.n.Ports[0].LID, d.n.Ports[0].LMC
		}
	}
	r.res.Events = append(r.res.Events, ev)
	if s.from == nil {
		r.fromNode, r.fromPort = d, entry
	} else if rp := s.from.n.Ports[s.fromPort]; rp != nil {
		if port.Remote != nil {
			port.Remote.Remote = nil
		}
		if rp.Remote != nil {
			rp.Remote.Remote = nil
		}
		port.Remote, rp.Remote = rp, port
	}
	if isNew {
		r.push(&ibndSMP{attr: smp.AttrNodeDescription, path: s.path, node: d})
		if d.n.Type == topo.Switch {
			r.push(&ibndSMP{attr: smp.AttrSwitchInfo, path: s.path, node: d})
			r.push(&ibndSMP{attr: smp.AttrPortInfo, path: s.path, node: d, port: 0})
		}
	}
	if d.n.Type != topo.Switch {
		r.push(&ibndSMP{attr: smp.AttrPortInfo, path: s.path, node: d, port: entry})
	}
}

// port returns the node's port i as the replay holds it, a shell
// (number and node) when it holds none yet.
func (d *ibndNode) port(i int) *topo.Port {
	if d.n.Ports[i] == nil {
		d.n.Ports[i] = &topo.Port{Node: d.n, Num: i}
	}
	return d.n.Ports[i]
}

func (r *ibndReplay) portInfo(s *ibndSMP, src *topo.Node, entry int) {
	d := s.node
	sp := (*topo.Port)(nil)
	if s.port < len(src.Ports) {
		sp = src.Ports[s.port]
	}
	if sp == nil {
		r.res.Unknown++
	} else {
		port := d.port(s.port)
		remote := port.Remote
		*port = *sp
		port.Node, port.Remote = d.n, remote
		d.info[s.port] = true
		if r.epi && smp.MlnxExtPortInfoSupported(d.n.VendorID, d.n.DeviceID) && sp.PhysState == smp.PhysStateLinkUp && sp.SpeedActive == 4 && sp.SpeedExtActive == 0 {
			r.push(&ibndSMP{attr: attrMlnxExtPortInfo, path: s.path, node: d, port: s.port})
		} else {
			r.probe(s, entry)
		}
	}
	if s.port == 0 && d.n.Type == topo.Switch {
		for p := 1; p <= d.n.NumPorts; p++ {
			r.push(&ibndSMP{attr: smp.AttrPortInfo, path: s.path, node: d, port: p})
		}
	}
}

// probe is what libibnetdisc does once a port's PortInfo (and its
// MlnxExtPortInfo) arrived: a NodeInfo out of a linked switch port other
// than the one the route came in by, and out of the local port; a hop
// back from a CA at the end of the starting route.
func (r *ibndReplay) probe(s *ibndSMP, entry int) {
	d := s.node
	sp := d.n.Ports[s.port]
	if s.port == 0 || sp == nil || sp.PhysState != smp.PhysStateLinkUp {
		return
	}
	local := entry // PortInfo.LocalPortNum: the port the SMP came in by
	isFrom := d == r.fromNode && s.port == r.fromPort
	if !(d.n.Type == topo.Switch && s.port != local || isFrom) {
		return
	}
	if r.maxHops > 0 && r.res.MaxHops > r.maxHops {
		return
	}
	var path []uint8
	if d.n.Type != topo.Switch && r.lid {
		// No directed route goes on through a CA reached by LID.
		return
	}
	if d.n.Type != topo.Switch && d == r.fromNode && len(s.path) > 1 {
		// retract_dpath: back from a CA to what it is cabled to.
		r.res.MaxHops++
		path = s.path[:len(s.path)-1]
	} else {
		path = make([]uint8, len(s.path)+1)
		copy(path, s.path)
		path[len(s.path)] = uint8(s.port)
		if len(path)-r.initial > r.res.MaxHops {
			r.res.MaxHops++
		}
	}
	r.push(&ibndSMP{attr: smp.AttrNodeInfo, path: path, from: d, fromPort: s.port})
}
