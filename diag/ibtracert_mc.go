package diag

import (
	"bufio"
	"context"
	"fmt"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// The multicast part of ibtracert (-m): a breadth-first walk of the
// MLID's tree from the source, through each switch's MulticastForwarding
// Table, until the destination port is reached (find_mcpath).

// mcNode is ibtracert's Node in the multicast walk.
type mcNode struct {
	tport
	ports  []*mcPort // most recent first, as link_port prepends
	path   drpath
	dist   int
	upport int
	upnode *mcNode
}

// mcPort is ibtracert's Port: a port read, and the port it was reached
// from.
type mcPort struct {
	tport
	physState uint8
	remote    *mcPort
}

// getPort is get_port: PortInfo of port num at path.
func (tr *tracer) getPort(ctx context.Context, num int, path *drpath) (*mcPort, error) {
	pi, err := tr.s.PortInfo(ctx, path.target(), uint8(num), tr.co...)
	if err != nil {
		return nil, tr.failed(err)
	}
	return &mcPort{tport: tport{portnum: num, lid: pi.LID, lmc: pi.LMC, state: pi.PortState}, physState: pi.PortPhysicalState}, nil
}

// mcLookup is switch_mclookup: the ports of the switch's MFT entry for
// mlid, as a map by port number.
func (tr *tracer) mcLookup(ctx context.Context, n *mcNode, path *drpath, mlid int) ([]bool, error) {
	m := make([]bool, 256)
	t := path.target()
	si, err := tr.s.SwitchInfo(ctx, t, tr.co...)
	if err != nil {
		return m, tr.failed(err)
	}
	off := mlid - 0xc000
	if off >= int(si.MulticastFDBCap) || off < 0 {
		return m, fmt.Errorf("MLID 0x%x past the switch's MulticastFDBCap %d", mlid, si.MulticastFDBCap)
	}
	block := uint32(off / 32)
	for set := 0; set < (n.nports+15)/16; set++ {
		data, err := tr.s.SMP(ctx, t, mad.MethodGet, smp.AttrMulticastForwardingTable, block|uint32(set)<<28, nil, tr.co...)
		if err != nil {
			return m, tr.failed(err)
		}
		mask := decode[smp.MulticastForwardingTable](data).PortMask[off%32]
		for i := range 16 {
			if mask&(1<<i) != 0 {
				m[i+set*16] = true
			}
		}
	}
	return m, nil
}

// findMCPath is find_mcpath from the port at from; it records the path
// to the target port in the trace and reports whether it found one.
func (tr *tracer) findMCPath(ctx context.Context, from *drpath, mlid int, target uint64) bool {
	const maxHops = 63
	known := map[uint64]bool{}
	var byDist [maxHops + 1][]*mcNode // each level most recent first, as ibtracert prepends
	newNode := func(n *mcNode, p *mcPort, path *drpath, dist int) int {
		if p.portGUID == target {
			n.dist = -1
			n.ports = append([]*mcPort{p}, n.ports...)
			return 1
		}
		if known[n.nodeGUID] {
			return -1
		}
		known[n.nodeGUID] = true
		n.ports = append([]*mcPort{p}, n.ports...)
		n.dist, n.path = dist, *path
		byDist[dist] = append([]*mcNode{n}, byDist[dist]...)
		return 0
	}
	getNode := func(path *drpath) (*mcNode, *mcPort, error) {
		var t tport
		if err := tr.getNode(ctx, path.target(), &t); err != nil {
			return nil, nil, err
		}
		return &mcNode{tport: t}, &mcPort{tport: t}, nil
	}
	node, port, err := getNode(from)
	if err != nil {
		tr.warn("find_mcpath", "can't reach node %s", from)
		return false
	}
	if newNode(node, port, from, 0) > 0 {
		if node.typ != smp.NodeTypeSwitch {
			tr.warn("find_mcpath", "ibtracert from CA to CA is unsupported")
			return false
		}
		if m, err := tr.mcLookup(ctx, node, from, mlid); err != nil || !m[0] {
			return false
		}
		tr.recordMCPath(node)
		return true
	}
	leafport := 0
	for dist := 0; dist < maxHops; dist++ {
		for _, node := range byDist[dist] {
			path := &node.path
			var m []bool
			if node.typ != smp.NodeTypeSwitch {
				if dist != 0 {
					continue
				}
				leafport = int(path.p[path.cnt])
				m = make([]bool, 256)
				m[port.portnum] = true
				node.upport = 0
			} else {
				if dist == 1 && leafport != 0 {
					node.upport = leafport
				}
				if m, err = tr.mcLookup(ctx, node, path, mlid); err != nil {
					tr.warn("find_mcpath", "skipping bad Switch 0x%x", node.nodeGUID)
					continue
				}
			}
			for i := 1; i <= node.nports; i++ {
				if !m[i] || i == node.upport {
					continue
				}
				if dist == 0 && leafport != 0 {
					if from.cnt > 0 {
						path.cnt--
					}
				} else {
					p, err := tr.getPort(ctx, i, path)
					if err != nil {
						tr.warn("find_mcpath", "can't reach node %s port %d", path, i)
						return false
					}
					port = p
					if port.physState != 5 { // LinkUp
						continue
					}
					if !path.extend(i) {
						return false
					}
				}
				rn, rp, err := getNode(path)
				if err != nil {
					tr.warn("find_mcpath", "NodeInfo on %s port %d failed, skipping port", path, i)
					path.cnt--
					continue
				}
				rn.upnode, rn.upport, rp.remote = node, rp.portnum, port
				switch newNode(rn, rp, path, dist+1) {
				case 1:
					tr.recordMCPath(rn)
					return true
				case -1:
					if rn.typ == smp.NodeTypeSwitch {
						tr.trace.Circles = append(tr.trace.Circles, *tr.end(&rp.tport))
					}
				}
				path.cnt--
			}
		}
	}
	return false
}

// recordMCPath keeps the tree's path from the source to n (dump_mcpath's
// walk up the upnode links).
func (tr *tracer) recordMCPath(n *mcNode) {
	var chain []*mcNode
	for x := n; x != nil; x = x.upnode {
		chain = append([]*mcNode{x}, chain...)
	}
	for _, x := range chain {
		p := x.ports[0]
		name := remapName(tr.names, x.nodeGUID, x.desc)
		switch {
		case x.dist == 0:
			tr.trace.From = &TraceEnd{Type: traceType(x.typ), GUID: GUID(x.nodeGUID), PortNum: p.portnum, LID: p.lid, LIDEnd: p.lid + 1<<p.lmc - 1, Name: name}
			continue
		default:
			out := 0
			if p.remote != nil {
				out = p.remote.portnum
			}
			tr.trace.Hops = append(tr.trace.Hops, TraceHop{OutPort: out, Type: traceType(x.typ), GUID: GUID(x.nodeGUID),
				PortNum: x.upport, LID: p.lid, LIDEnd: p.lid + 1<<p.lmc - 1, Name: name})
		}
		if x.dist < 0 {
			tr.trace.To = &TraceEnd{Type: traceType(x.typ), GUID: GUID(x.nodeGUID), PortNum: p.portnum, LID: p.lid, LIDEnd: p.lid + 1<<p.lmc - 1, Name: name}
		}
	}
}

// writeMCPath prints a multicast trace as dump_mcpath does.
func writeMCPath(w *bufio.Writer, t *Trace) {
	if f := t.From; f != nil {
		fmt.Fprintf(w, "From %s 0x%x port %d lid %d-%d \"%s\"\n", f.Type, uint64(f.GUID), f.PortNum, f.LID, f.LIDEnd, f.Name)
	}
	for _, h := range t.Hops {
		if t.Brief {
			fmt.Fprintf(w, "[%d] -> %s {%s}[%d]\n", h.OutPort, h.Type, h.GUID, h.PortNum)
		} else {
			fmt.Fprintf(w, "[%d] -> %s 0x%x[%d] lid %d \"%s\"\n", h.OutPort, h.Type, uint64(h.GUID), h.PortNum, h.LID, h.Name)
		}
	}
	if to := t.To; to != nil {
		fmt.Fprintf(w, "To %s 0x%x port %d lid %d-%d \"%s\"\n", to.Type, uint64(to.GUID), to.PortNum, to.LID, to.LIDEnd, to.Name)
	}
}
