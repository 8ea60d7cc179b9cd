package topo

import (
	"fmt"
	"sort"

	"github.com/ibscript/ibscript/mad/smp"
)

// Severity ranks a topology difference.
type Severity int

// Severities, least to most serious.
const (
	Info Severity = iota
	Minor
	Major
	Critical
)

func (s Severity) String() string {
	switch s {
	case Info:
		return "info"
	case Minor:
		return "minor"
	case Major:
		return "major"
	case Critical:
		return "critical"
	}
	return fmt.Sprintf("Severity(%d)", int(s))
}

// Kinds of Change.
const (
	MissingNode  = "missing-node"  // in the reference, not found (critical)
	ExtraNode    = "extra-node"    // found, not in the reference (minor)
	NodeReplaced = "node-replaced" // another GUID in the same place (major)
	MissingCable = "missing-cable" // a reference link whose port is now uncabled (critical)
	MovedCable   = "moved-cable"   // a port cabled elsewhere than in the reference (major)
	ExtraCable   = "extra-cable"   // a link on a port the reference has uncabled (minor)
	Degraded     = "degraded-link" // active width or speed below the reference's (major)
	FieldChanged = "field-changed" // device id, vendor id, revision, ports, system GUID (minor), description (info)
)

// Change is one difference between a reference fabric and the current one.
type Change struct {
	Severity Severity
	Kind     string
	// Node is the node concerned: in the current fabric when it is there,
	// else in the reference. Port is 0 when the change is about the node.
	Node    *Node
	Port    int
	Message string
}

func (c Change) String() string {
	return fmt.Sprintf("[%s] %s: %s", c.Severity, c.Kind, c.Message)
}

// Diff compares cur against the reference ref and returns the differences,
// most severe first. Nodes are matched by node GUID, or by description
// where the reference has no GUIDs (an ibsim file); an unmatched reference
// node whose place (its neighbours and the ports that reach them) is taken
// by an unmatched current node of the same type is reported as replaced,
// not missing. Links of a missing node are not reported again.
func Diff(ref, cur *Fabric) []Change {
	d := &differ{match: map[*Node]*Node{}, back: map[*Node]*Node{}}
	d.matchNodes(ref, cur)
	d.matchReplacements(ref)
	for _, r := range ref.Nodes {
		if d.match[r] == nil {
			d.add(Critical, MissingNode, r, 0, "%s %q (GUID 0x%016x) is missing", r.Type, r.Desc, r.GUID)
		}
	}
	for _, c := range cur.Nodes {
		if d.back[c] == nil {
			d.add(Minor, ExtraNode, c, 0, "%s %q (GUID 0x%016x) is not in the reference", c.Type, c.Desc, c.GUID)
		}
	}
	for _, r := range ref.Nodes {
		if c := d.match[r]; c != nil {
			d.fields(r, c)
		}
	}
	// Cables, from the reference's side, then the current side's extras.
	for _, l := range ref.Links() {
		d.cable(l)
	}
	for _, l := range cur.Links() {
		ra, rb := d.back[l.A.Node], d.back[l.B.Node]
		if ra == nil || rb == nil {
			continue // an extra node says it
		}
		pa, pb := nodePort(ra, l.A.Num), nodePort(rb, l.B.Num)
		if (pa == nil || pa.Remote == nil) && (pb == nil || pb.Remote == nil) {
			d.add(Minor, ExtraCable, l.A.Node, l.A.Num, "%q port %d <-> %q port %d is not in the reference", l.A.Node.Desc, l.A.Num, l.B.Node.Desc, l.B.Num)
		}
	}
	sort.SliceStable(d.out, func(i, j int) bool {
		if d.out[i].Severity != d.out[j].Severity {
			return d.out[i].Severity > d.out[j].Severity
		}
		return d.out[i].Kind < d.out[j].Kind
	})
	return d.out
}

// differ is one Diff: the nodes matched so far both ways and the changes.
type differ struct {
	match map[*Node]*Node // ref -> cur
	back  map[*Node]*Node // cur -> ref
	out   []Change
}

func (d *differ) add(s Severity, kind string, n *Node, port int, format string, args ...any) {
	d.out = append(d.out, Change{Severity: s, Kind: kind, Node: n, Port: port, Message: fmt.Sprintf(format, args...)})
}

// matchNodes matches reference nodes to current ones of the same type by
// GUID, or by description where the GUID is 0 and one current node has it.
func (d *differ) matchNodes(ref, cur *Fabric) {
	byGUID := map[uint64]*Node{}
	byDesc := map[string][]*Node{}
	for _, n := range cur.Nodes {
		byGUID[n.GUID] = n
		byDesc[n.Desc] = append(byDesc[n.Desc], n)
	}
	for _, r := range ref.Nodes {
		var c *Node
		if r.GUID != 0 {
			c = byGUID[r.GUID]
		} else if ns := byDesc[r.Desc]; len(ns) == 1 {
			c = ns[0]
		}
		if c != nil && d.back[c] == nil && c.Type == r.Type {
			d.match[r], d.back[c] = c, r
		}
	}
}

// matchReplacements matches each unmatched reference node whose
// neighbours, through the same port numbers, now reach an unmatched
// current node of its type: the most such neighbours, then the lowest
// GUID, wins.
func (d *differ) matchReplacements(ref *Fabric) {
	for _, r := range ref.Nodes {
		if d.match[r] != nil {
			continue
		}
		votes := map[*Node]int{}
		for _, p := range r.Ports {
			if p == nil || p.Remote == nil {
				continue
			}
			nb := d.match[p.Remote.Node]
			if nb == nil || p.Remote.Num >= len(nb.Ports) || nb.Ports[p.Remote.Num] == nil {
				continue
			}
			if rp := nb.Ports[p.Remote.Num].Remote; rp != nil && rp.Num == p.Num && d.back[rp.Node] == nil && rp.Node.Type == r.Type {
				votes[rp.Node]++
			}
		}
		var best *Node
		for c, v := range votes {
			if best == nil || v > votes[best] || (v == votes[best] && c.GUID < best.GUID) {
				best = c
			}
		}
		if best != nil {
			d.match[r], d.back[best] = best, r
			d.add(Major, NodeReplaced, best, 0, "%s %q: GUID 0x%016x replaced by 0x%016x in the same place", r.Type, r.Desc, r.GUID, best.GUID)
		}
	}
}

// fields reports the NodeInfo fields and description of matched node c
// that differ from the reference's r.
func (d *differ) fields(r, c *Node) {
	field := func(name string, was, now uint64, s Severity, format string) {
		if was != now && was != 0 {
			d.add(s, FieldChanged, c, 0, "%q %s "+format+" -> "+format, c.Desc, name, was, now)
		}
	}
	field("device id", uint64(r.DeviceID), uint64(c.DeviceID), Minor, "0x%04x")
	field("vendor id", uint64(r.VendorID), uint64(c.VendorID), Minor, "0x%06x")
	field("revision", uint64(r.Revision), uint64(c.Revision), Minor, "0x%x")
	field("ports", uint64(r.NumPorts), uint64(c.NumPorts), Minor, "%d")
	if r.GUID != 0 && r.GUID == c.GUID {
		field("system GUID", r.SysGUID, c.SysGUID, Minor, "0x%016x")
	}
	if r.Desc != c.Desc && r.Desc != "" {
		d.add(Info, FieldChanged, c, 0, "%q description was %q", c.Desc, r.Desc)
	}
}

// cable reports what became of reference link l between matched nodes:
// gone with its port, uncabled, moved, or running below its width or
// speed.
func (d *differ) cable(l Link) {
	ca, cb := d.match[l.A.Node], d.match[l.B.Node]
	if ca == nil || cb == nil {
		return // the missing node says it
	}
	pa, pb := nodePort(ca, l.A.Num), nodePort(cb, l.B.Num)
	refName := fmt.Sprintf("%q port %d <-> %q port %d", ca.Desc, l.A.Num, cb.Desc, l.B.Num)
	switch {
	case pa == nil || pb == nil:
		d.add(Critical, MissingCable, ca, l.A.Num, "%s: the port no longer exists", refName)
	case pa.Remote == pb:
		if why := degraded(l.A, pa); why != "" {
			d.add(Major, Degraded, ca, l.A.Num, "%s: %s", refName, why)
		}
	case pa.Remote == nil && pb.Remote == nil:
		d.add(Critical, MissingCable, ca, l.A.Num, "%s: not cabled", refName)
	default:
		for _, e := range []struct {
			p   *Port
			ref *Port
		}{{pa, l.A}, {pb, l.B}} {
			now := "not cabled"
			if e.p.Remote != nil {
				now = fmt.Sprintf("now to %q port %d", e.p.Remote.Node.Desc, e.p.Remote.Num)
			}
			d.add(Major, MovedCable, e.p.Node, e.p.Num, "%q port %d: was cabled to %q port %d, %s", e.p.Node.Desc, e.p.Num,
				e.ref.Remote.Node.Desc, e.ref.Remote.Num, now)
		}
	}
}

// nodePort is n's port num, or nil.
func nodePort(n *Node, num int) *Port {
	if n == nil || num < 0 || num >= len(n.Ports) {
		return nil
	}
	return n.Ports[num]
}

// widthRank orders PortInfo width masks: 1x < 2x < 4x < 8x < 12x.
var widthRank = map[uint8]int{1: 1, 16: 2, 2: 3, 4: 4, 8: 5}

// degraded says how cur runs below ref (width or speed), or "".
func degraded(ref, cur *Port) string {
	var s string
	if ref.WidthActive != 0 && widthRank[cur.WidthActive] < widthRank[ref.WidthActive] {
		s = fmt.Sprintf("width %s, was %s", smp.WidthName(cur.WidthActive), smp.WidthName(ref.WidthActive))
	}
	rs := speedRank(ref.SpeedActive, ref.SpeedExtActive)
	if rs != 0 && speedRank(cur.SpeedActive, cur.SpeedExtActive) < rs {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf("speed %s, was %s", smp.LinkSpeedText(cur.SpeedActive, cur.SpeedExtActive), smp.LinkSpeedText(ref.SpeedActive, ref.SpeedExtActive))
	}
	return s
}

func speedRank(speed, ext uint8) int {
	if ext != 0 {
		return 8 + int(ext)
	}
	return int(speed)
}
