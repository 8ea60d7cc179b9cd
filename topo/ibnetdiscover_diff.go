package topo

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// DiffCheck is ibnetdiscover --diffcheck's set of checks.
type DiffCheck uint8

// The checks, by their --diffcheck keys.
const (
	DiffSwitch   DiffCheck = 1 << iota // "sw": compare switches
	DiffCA                             // "ca": compare CAs
	DiffRouter                         // "router": compare routers
	DiffPort                           // "port": port connections
	DiffLID                            // "lid": LIDs
	DiffNodeDesc                       // "nodedesc": node descriptions
)

// DiffDefault is what ibnetdiscover --diff checks without --diffcheck.
const DiffDefault = DiffSwitch | DiffCA | DiffRouter | DiffPort

// ParseDiffCheck reads ibnetdiscover's --diffcheck keys: sw, ca, router,
// port, lid, nodedesc, comma-separated, any case (empty keys skipped,
// as strtok skips them). An unknown key is an error naming it.
func ParseDiffCheck(s string) (DiffCheck, error) {
	return ParseCheckKeys(s, []string{"sw", "ca", "router", "port", "lid", "nodedesc"},
		[]DiffCheck{DiffSwitch, DiffCA, DiffRouter, DiffPort, DiffLID, DiffNodeDesc})
}

// ParseCheckKeys reads a --diffcheck argument as infiniband-diags does
// (strtok on commas, strcasecmp with each key): the union of the flags of
// the keys given (keys[i] -> flags[i]). An unknown key is an error naming
// it and the keys known.
func ParseCheckKeys[T ~uint8](s string, keys []string, flags []T) (T, error) {
	var c T
	for _, k := range strings.Split(s, ",") {
		if k == "" {
			continue
		}
		i := slices.IndexFunc(keys, func(key string) bool { return strings.EqualFold(key, k) })
		if i < 0 {
			return 0, fmt.Errorf("invalid diff check key: %s (want %s)", k, strings.Join(keys, ", "))
		}
		c |= flags[i]
	}
	return c, nil
}

// WriteIBNetDiscoverDiff prints what differs between orig (the cache
// given to --diff) and cur (the fabric discovered or loaded) as
// ibnetdiscover --diff prints it: switches, then CAs, then routers (those
// check names), each type first through orig's nodes ("< " for orig, "> "
// for cur), then through cur's for the nodes orig lacks; a node missing
// from the other fabric is printed whole with its prefix, a node in both
// only where a check finds a difference (its ports', LIDs', description's
// or port count's), each differing port from either side. Only
// opts.NameMap and opts.Full are used. A port line for a port without a
// link is left out (ibnetdiscover dereferences the missing link there).
func WriteIBNetDiscoverDiff(w io.Writer, orig, cur *Fabric, check DiffCheck, opts *WriteOptions) error {
	if opts == nil {
		opts = &WriteOptions{}
	}
	bw := bufio.NewWriter(w)
	d := &ibndDiff{wr: &ibndWriter{w: bw, names: opts.NameMap, full: opts.Full}}
	origIdx, curIdx := guidIndex(orig), guidIndex(cur)
	for _, t := range []struct {
		check DiffCheck
		typ   NodeType
	}{{DiffSwitch, Switch}, {DiffCA, CA}, {DiffRouter, Router}} {
		if check&t.check == 0 {
			continue
		}
		d.pass(orig, curIdx, t.typ, check, "< ", "> ")
		// The other way, only for the nodes orig lacks: the checks of
		// nodes in both were made.
		d.pass(cur, origIdx, t.typ, check&^(DiffPort|DiffLID|DiffNodeDesc), "> ", "< ")
	}
	return bw.Flush()
}

func guidIndex(f *Fabric) map[uint64]*Node {
	m := make(map[uint64]*Node, len(f.Nodes))
	for _, n := range f.Nodes {
		m[n.GUID] = n
	}
	return m
}

type ibndDiff struct {
	wr *ibndWriter
}

// pass goes through f1's nodes of type typ in libibnetdisc's order (the
// newest found first) against f2's.
func (d *ibndDiff) pass(f1 *Fabric, f2 map[uint64]*Node, typ NodeType, check DiffCheck, p1, p2 string) {
	for i := len(f1.Nodes) - 1; i >= 0; i-- {
		if n := f1.Nodes[i]; n.Type == typ {
			d.node(n, f2[n.GUID], check, p1, p2)
		}
	}
}

// smaLID is libibnetdisc's node->smalid: a switch's port 0 LID, else 0.
func smaLID(n *Node) uint16 {
	if n.Type == Switch {
		return n.port(0).LID
	}
	return 0
}

// baseLID is libibnetdisc's port->base_lid: a switch's LID on every port.
func baseLID(p *Port) uint16 {
	if p.Node.Type == Switch {
		return smaLID(p.Node)
	}
	return p.LID
}

func (d *ibndDiff) node(n1, n2 *Node, check DiffCheck, p1, p2 string) {
	wr := d.wr
	if n2 == nil {
		wr.header(n1, p1, p1)
		b := wr.buf[:0]
		for p := 1; p <= n1.NumPorts && p < len(n1.Ports); p++ {
			b = wr.link(b, n1.Ports[p], p1)
		}
		wr.w.Write(b)
		wr.buf = b
		return
	}
	if check&(DiffPort|DiffLID|DiffNodeDesc) == 0 {
		return
	}
	headed := false
	if check&DiffLID != 0 && smaLID(n1) != smaLID(n2) || check&DiffNodeDesc != 0 && n1.Desc != n2.Desc {
		wr.header(n1, "", p1)
		wr.detail(n2, p2)
		wr.w.WriteByte('\n')
		headed = true
	}
	head := func() {
		if !headed {
			wr.header(n1, "", "")
			headed = true
		}
	}
	if n1.NumPorts != n2.NumPorts {
		head()
		fmt.Fprintf(wr.w, "%snumports = %d\n%snumports = %d\n", p1, n1.NumPorts, p2, n2.NumPorts)
		return
	}
	if check&(DiffPort|DiffLID) == 0 {
		return
	}
	for p := 1; p <= n1.NumPorts; p++ {
		a, b := portAt(n1, p), portAt(n2, p)
		out1, out2 := false, false
		if check&DiffPort != 0 {
			switch {
			case a != nil && b == nil, a != nil && b != nil && a.Remote != nil && b.Remote == nil:
				out1 = true
			case a == nil && b != nil, a != nil && b != nil && a.Remote == nil && b.Remote != nil:
				out2 = true
			case a != nil && b != nil && (a.GUID != b.GUID || a.Remote != nil && b.Remote != nil && a.Remote.GUID != b.Remote.GUID):
				out1, out2 = true, true
			}
		}
		both := a != nil && b != nil
		linked := both && a.Remote != nil && b.Remote != nil
		if check&DiffLID != 0 && both && baseLID(a) != baseLID(b) ||
			check&DiffPort != 0 && check&DiffNodeDesc != 0 && linked && a.Remote.Node.Desc != b.Remote.Node.Desc ||
			check&DiffPort != 0 && check&DiffLID != 0 && linked && baseLID(a.Remote) != baseLID(b.Remote) {
			out1, out2 = true, true
		}
		if out1 {
			head()
			wr.w.Write(wr.link(nil, a, p1))
		}
		if out2 {
			head()
			wr.w.Write(wr.link(nil, b, p2))
		}
	}
}

// portAt is n's port p, nil when n has none there.
func portAt(n *Node, p int) *Port {
	if p < len(n.Ports) {
		return n.Ports[p]
	}
	return nil
}
