package topo

import (
	"fmt"
	"strconv"
	"strings"
)

// MaxPlanes is the most planes a planarized CA may have (its port count),
// and the highest plane number a topology may give a port.
const MaxPlanes = 8

// planarizedLine is a "# planarized" line, applied once every node is
// known and cabled.
type planarizedLine struct {
	at     pos
	node   string
	planes []uint8 // by port, from port 1
}

// planarizedDirective reads `# planarized "NODE" PLANE...`: NODE is a
// planarized CA, its port p on the p-th plane listed (ibscript's; a
// comment to ibsim and ibnetdiscover's parsers).
func (p *parser) planarizedDirective(lr *lineReader, line string) error {
	rest := strings.TrimSpace(strings.TrimPrefix(line, "# planarized "))
	bad := func(why string) error {
		return lr.errorf("planarized %q: %s (want: # planarized \"node\" 1 2 3 4: the plane of each port, from port 1)", rest, why)
	}
	node, tail, why := directiveNode(rest)
	if why == "" && node == "" {
		why = "empty node id"
	}
	if why != "" {
		return bad(why)
	}
	// The planes without a slice or a map a line (1,920 lines on a
	// planarized 2,000-node tree).
	var planes [MaxPlanes + 1]string
	np := 0
	for f := range strings.FieldsSeq(tail) {
		if np == len(planes) {
			np++
			break
		}
		planes[np] = f
		np++
	}
	if p.prefix != "" && !strings.Contains(node, "#") {
		node = p.prefix + "#" + node
	}
	if np == 0 {
		return bad("no plane")
	}
	if np > MaxPlanes {
		return bad(fmt.Sprintf("%d planes, more than %d", len(strings.Fields(tail)), MaxPlanes))
	}
	l := planarizedLine{at: lr.pos(), node: node, planes: make([]uint8, 0, np)}
	var seen [MaxPlanes + 1]int // by plane, its port
	for i, s := range planes[:np] {
		v, err := strconv.ParseUint(s, 10, 8)
		if err != nil || v < 1 || v > MaxPlanes {
			return bad(fmt.Sprintf("plane %q of port %d is not a number from 1 to %d", s, i+1, MaxPlanes))
		}
		if j := seen[v]; j != 0 {
			return bad(fmt.Sprintf("ports %d and %d are both on plane %d (one plane per port)", j, i+1, v))
		}
		seen[v] = i + 1
		l.planes = append(l.planes, uint8(v))
	}
	p.planarized = append(p.planarized, l)
	return nil
}

// applyPlanes marks the CAs the "# planarized" lines name, gives their
// ports one port GUID (port 1's: libibumad pairs a planarized port's SMI
// and GSI devices by it) and their planes, then gives every switch the
// plane of the planarized CA ports its island reaches (Port.Plane), and
// every other port cabled to a plane switch that plane. An island of
// switches reached from two planes is an error: planes do not meet.
func (p *parser) applyPlanes() error {
	if len(p.planarized) == 0 {
		return nil
	}
	at := make(map[*Node]pos, len(p.planarized))
	for _, l := range p.planarized {
		errorf := func(format string, args ...any) error {
			return &ParseError{File: l.at.file, Line: l.at.line, Msg: fmt.Sprintf(format, args...)}
		}
		n := p.ids[l.node].node
		switch {
		case n == nil:
			return errorf("planarized: no node %q", l.node)
		case n.Type != CA:
			return errorf("planarized: %q is a %s; only a CA is planarized (a switch takes its plane from the CAs it reaches)", l.node, n.Type)
		case n.NumPorts < 2:
			return errorf("planarized: %q has %d port; a planarized CA has one port per plane, at least 2", l.node, n.NumPorts)
		case len(l.planes) != n.NumPorts:
			return errorf("planarized: %q has %d ports and the line gives %d planes (one per port, from port 1)", l.node, n.NumPorts, len(l.planes))
		}
		if first, dup := at[n]; dup {
			return errorf("planarized: %q already planarized at line %d", l.node, first.line)
		}
		at[n] = l.at
		n.Planarized = true
		for i, pl := range l.planes {
			pt := n.Ports[i+1]
			pt.Plane = pl
			pt.GUID = n.Ports[1].GUID
		}
	}
	return p.f.derivePlanes(func(n *Node, format string, args ...any) error {
		l := at[n]
		return &ParseError{File: l.file, Line: l.line, Msg: fmt.Sprintf(format, args...)}
	})
}

// derivePlanes gives every switch island the plane of the planarized CA
// ports cabled to it, and every port of the island and cabled to it that
// plane; errorf reports, for the planarized CA that meets another plane,
// the conflict.
func (f *Fabric) derivePlanes(errorf func(n *Node, format string, args ...any) error) error {
	island := make(map[*Node]int)
	var members [][]*Node
	for _, s := range f.Nodes {
		if s.Type != Switch || island[s] != 0 {
			continue
		}
		id := len(members) + 1
		island[s] = id
		queue := []*Node{s}
		for k := 0; k < len(queue); k++ {
			for _, pt := range queue[k].Ports[1:] {
				if pt == nil || pt.Remote == nil || pt.Remote.Node.Type != Switch || island[pt.Remote.Node] != 0 {
					continue
				}
				island[pt.Remote.Node] = id
				queue = append(queue, pt.Remote.Node)
			}
		}
		members = append(members, queue)
	}
	plane := make([]uint8, len(members)+1)
	from := make([]*Port, len(members)+1) // the CA port that gave the island its plane
	for _, n := range f.Nodes {
		if !n.Planarized {
			continue
		}
		for _, pt := range n.Ports[1:] {
			if pt == nil || pt.Remote == nil || pt.Remote.Node.Type != Switch {
				continue
			}
			i := island[pt.Remote.Node]
			switch plane[i] {
			case 0:
				plane[i], from[i] = pt.Plane, pt
			case pt.Plane:
			default:
				return errorf(n, "planarized: %q port %d (plane %d) reaches switch %q, which %q port %d reaches on plane %d: planes do not meet",
					n.ID, pt.Num, pt.Plane, pt.Remote.Node.ID, from[i].Node.ID, from[i].Num, plane[i])
			}
		}
	}
	for i, sws := range members {
		pl := plane[i+1]
		if pl == 0 {
			continue
		}
		for _, s := range sws {
			for _, pt := range s.Ports {
				if pt == nil {
					continue
				}
				pt.Plane = pl
				if r := pt.Remote; r != nil && r.Node.Type != Switch && !r.Node.Planarized {
					r.Plane = pl
				}
			}
		}
	}
	return nil
}

// Planes returns the number of planes of f: the highest plane number of
// its ports, 0 when no CA is planarized.
func (f *Fabric) Planes() int {
	m := 0
	for _, n := range f.Nodes {
		if !n.Planarized {
			continue
		}
		for _, pt := range n.Ports[1:] {
			if pt != nil {
				m = max(m, int(pt.Plane))
			}
		}
	}
	return m
}

// PlanarizedLine is the "# planarized" line that marks n, named id, as a
// planarized CA in a topology file: the plane of each port from port 1.
// It is "" when n is not planarized.
func PlanarizedLine(n *Node, id string) string {
	if !n.Planarized {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# planarized %q", id)
	for _, pt := range n.Ports[1:] {
		pl := 0
		if pt != nil {
			pl = int(pt.Plane)
		}
		fmt.Fprintf(&b, " %d", pl)
	}
	return b.String()
}
