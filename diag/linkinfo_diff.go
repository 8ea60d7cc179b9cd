package diag

import (
	"strconv"

	"github.com/ibscript/ibscript/topo"
)

// linkDiff is iblinkinfo --diff's text: orig is the cache given to
// --diff, cur the fabric discovered or loaded. It goes through orig's
// nodes (of o.Only's type, libibnetdisc's order: the newest found first)
// against cur ("< " orig's lines, "> " cur's), then through cur's against
// orig for the nodes orig lacks; a node missing from the other fabric
// prints whole (as iblinkinfo prints it) after its prefix, a node in both
// only the ports a check finds different, from either side. With -S/-G
// (only, the node of that port in cur), iblinkinfo diffs that node with
// itself and then with orig's: it prints only when orig lacks it.
//
// Where the LID or description of a node in both differs (--diffcheck
// lid, nodedesc) it prints both nodes' headers ("< " and "> "), which
// iblinkinfo 44 means to print but crashes on (it passes print_node_header
// a NULL flag pointer) unless in line mode.
func linkDiff(orig, cur *topo.Fabric, only []*topo.Node, names map[uint64]string, o LinkinfoOptions) []byte {
	ld := &linkDiffer{names: names, o: o, out: []byte{}}
	origIdx, curIdx := orig.NodesByGUID(), cur.NodesByGUID()
	if only != nil {
		for _, n := range only {
			ld.node(n, curIdx[n.GUID], o.DiffCheck, "< ", "> ")
		}
	} else {
		ld.pass(orig, curIdx, o.DiffCheck, "< ", "> ")
	}
	// The other way: only what orig lacks (the checks of nodes in both
	// were made).
	rest := o.DiffCheck &^ (LinkDiffPort | LinkDiffState | LinkDiffLID | LinkDiffNodeDesc)
	if only != nil {
		for _, n := range only {
			ld.node(n, origIdx[n.GUID], rest, "> ", "< ")
		}
	} else {
		ld.pass(cur, origIdx, rest, "> ", "< ")
	}
	return ld.out
}

type linkDiffer struct {
	names map[uint64]string
	o     LinkinfoOptions
	out   []byte
}

func (ld *linkDiffer) pass(f1 *topo.Fabric, f2 map[uint64]*topo.Node, check LinkDiffCheck, p1, p2 string) {
	for i := len(f1.Nodes) - 1; i >= 0; i-- {
		if n := f1.Nodes[i]; ld.o.Only == 0 || n.Type == ld.o.Only {
			ld.node(n, f2[n.GUID], check, p1, p2)
		}
	}
}

// printNode is iblinkinfo's print_node after prefix.
func (ld *linkDiffer) printNode(n *topo.Node, prefix string) {
	ln, ok := linkNode(n, ld.names, ld.o)
	if !ok {
		return
	}
	if !ld.o.Line {
		ld.out = appendLinkHeader(ld.out, &ln, prefix)
	}
	for j := range ln.Ports {
		ld.out = appendLinkPort(ld.out, &ln, &ln.Ports[j], prefix, ld.o.Line, ld.o.Additional)
	}
}

// header is print_node_header without a prefix, once per node.
func (ld *linkDiffer) header(n *topo.Node, headed *bool) {
	if !*headed && !ld.o.Line {
		ln := linkHead(n, ld.names)
		ld.out = appendLinkHeader(ld.out, &ln, "")
	}
	*headed = true
}

// port is print_port after prefix (--filterdownports applies).
func (ld *linkDiffer) port(p *topo.Port, prefix string) {
	if ld.o.filteredDown(p) {
		return
	}
	ln := linkHead(p.Node, ld.names)
	lp := linkPort(p, switchPort0(p.Node), ld.names, ld.o, &linkSlab{})
	ld.out = appendLinkPort(ld.out, &ln, &lp, prefix, ld.o.Line, ld.o.Additional)
}

// smaLID is libibnetdisc's node->smalid: a switch's port 0 LID, else 0.
func smaLID(n *topo.Node) uint16 {
	if p0 := switchPort0(n); p0 != nil {
		return p0.LID
	}
	return 0
}

// remoteLID is the remote port's base_lid as libibnetdisc holds it: a
// switch's LID on every one of its ports.
func remoteLID(p *topo.Port) uint16 {
	if p.Node.Type == topo.Switch {
		return smaLID(p.Node)
	}
	return p.LID
}

func (ld *linkDiffer) node(n1, n2 *topo.Node, check LinkDiffCheck, p1, p2 string) {
	if n2 == nil {
		ld.printNode(n1, p1)
		return
	}
	if check&(LinkDiffPort|LinkDiffState|LinkDiffLID|LinkDiffNodeDesc) == 0 {
		return
	}
	headed := false
	if n1.Type == topo.Switch && check&LinkDiffLID != 0 && smaLID(n1) != smaLID(n2) ||
		check&LinkDiffNodeDesc != 0 && n1.Desc != n2.Desc {
		if !ld.o.Line {
			h1, h2 := linkHead(n1, ld.names), linkHead(n2, ld.names)
			ld.out = appendLinkHeader(ld.out, &h1, p1)
			ld.out = appendLinkHeader(ld.out, &h2, p2)
		}
		headed = true
	}
	if n1.NumPorts != n2.NumPorts {
		ld.header(n1, &headed)
		ld.out = append(ld.out, p1...)
		ld.out = strconv.AppendInt(append(ld.out, "numports = "...), int64(n1.NumPorts), 10)
		ld.out = append(append(ld.out, '\n'), p2...)
		ld.out = strconv.AppendInt(append(ld.out, "numports = "...), int64(n2.NumPorts), 10)
		ld.out = append(ld.out, '\n')
		return
	}
	for i := 1; i <= n1.NumPorts; i++ {
		a, b := portOf(n1, i), portOf(n2, i)
		if a == nil && b == nil {
			continue
		}
		both := a != nil && b != nil
		linked := both && a.Remote != nil && b.Remote != nil
		out := false
		if check&LinkDiffPort != 0 && (!both || (a.Remote == nil) != (b.Remote == nil) || linked && a.Remote.GUID != b.Remote.GUID) {
			out = true
		}
		if check&LinkDiffState != 0 && both && a.State != b.State {
			out = true
		}
		if check&LinkDiffPort != 0 && check&LinkDiffLID != 0 && linked && remoteLID(a.Remote) != remoteLID(b.Remote) {
			out = true
		}
		if check&LinkDiffPort != 0 && check&LinkDiffNodeDesc != 0 && linked && a.Remote.Node.Desc != b.Remote.Node.Desc {
			out = true
		}
		if out && a != nil {
			ld.header(n1, &headed)
			ld.port(a, p1)
		}
		if out && b != nil {
			ld.header(n1, &headed)
			ld.port(b, p2)
		}
	}
}

// portOf is n's port i, nil when n has none there.
func portOf(n *topo.Node, i int) *topo.Port {
	if i < len(n.Ports) {
		return n.Ports[i]
	}
	return nil
}
