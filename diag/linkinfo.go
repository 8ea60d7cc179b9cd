package diag

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// iblinkinfo: every port of every node with its link and what is at the
// other end, as iblinkinfo prints it.

// LinkinfoOptions are iblinkinfo's options.
type LinkinfoOptions struct {
	// PortGUID (-S/-G) prints only the node holding this port GUID; 0
	// means every node.
	PortGUID uint64
	// Unresolved is -S/-G's text when it reads as GUID 0 (strtoull of
	// text that is no number, as the C tools read it): no port has it,
	// and the tool finds nothing, as their full scan does.
	Unresolved string
	// Path (-D) prints only the node at this directed route from the
	// local port (smpquery -D convention, Path[0] == 0); nil: every node.
	Path []uint8
	// Hops (-n) is libibnetdisc's max_hops: it probes in its own order
	// (replayIBND) and, once one route has gone past Hops hops, extends
	// none; what it holds then is printed. The replay runs over a whole
	// discovery: one limited to Hops+1 hops missed links within them (the
	// engine counts a node's hops by the route its first answer came by,
	// not always the shortest). 0: no limit.
	Hops int
	// All (-a) prints every node the partial scan of -S/-G/-D holds, not
	// only the one holding the port.
	All bool
	// DownOnly (-d) prints only ports whose state is Down.
	DownOnly bool
	// Line (-l) prints each port on one line with its node's name.
	Line bool
	// Additional (-p) adds HOQLife and VLStallCount to each linked port.
	Additional bool
	// Only (--switches-only, --cas-only) prints only nodes of this type;
	// 0 prints every type.
	Only topo.NodeType
	// FilterDown (--filterdownports) is a fabric (from a cache): a port
	// Down now is not printed where FilterDown has that node's port Down
	// too (its node's header still is, as iblinkinfo prints it).
	FilterDown *topo.Fabric
	// Diff (--diff) is a fabric (from a cache) to print the differences
	// from instead of the links, as iblinkinfo --diff prints them,
	// checking DiffCheck (--diffcheck; LinkDiffDefault without it).
	Diff      *topo.Fabric
	DiffCheck LinkDiffCheck

	// PortText is -S/-G as typed, for the warnings that name it ("" is
	// PortGUID in hex).
	PortText string

	filter map[uint64]*topo.Node // FilterDown's nodes by GUID
	// dr is, with current rdma-core's behaviour, the directed route
	// build_dr_path_to_lid found to -S/-G's port: the partial scan
	// starts there, as from -D's route (startRoute).
	dr []uint8
}

// startRoute is the directed route the partial scan starts from: -D's,
// or -S/-G's built one; nil for a LID-routed start.
func (o *LinkinfoOptions) startRoute() []uint8 {
	if o.Path != nil {
		return o.Path
	}
	return o.dr
}

// LinkDiffCheck is iblinkinfo --diffcheck's set of checks.
type LinkDiffCheck uint8

// The checks, by their --diffcheck keys.
const (
	LinkDiffPort     LinkDiffCheck = 1 << iota // "port": port connections
	LinkDiffState                              // "state": port states
	LinkDiffLID                                // "lid": LIDs
	LinkDiffNodeDesc                           // "nodedesc": node descriptions
)

// LinkDiffDefault is what iblinkinfo --diff checks without --diffcheck.
const LinkDiffDefault = LinkDiffPort | LinkDiffState

// ParseLinkDiffCheck reads iblinkinfo's --diffcheck keys: port, state,
// lid, nodedesc, comma-separated, any case (empty keys skipped). An
// unknown key is an error naming it.
func ParseLinkDiffCheck(s string) (LinkDiffCheck, error) {
	return topo.ParseCheckKeys(s, []string{"port", "state", "lid", "nodedesc"},
		[]LinkDiffCheck{LinkDiffPort, LinkDiffState, LinkDiffLID, LinkDiffNodeDesc})
}

// Linkinfo is iblinkinfo's data: docs/diag/linkinfo.schema.json.
type Linkinfo struct {
	Nodes []LinkNode `json:"nodes"`
	// NotFound says which -S/-G/-D port was not found in the fabric
	// (iblinkinfo's "Failed to find port"); nothing is printed then.
	NotFound string `json:"not_found,omitempty"`

	// routeErr: -D's route did not answer (iblinkinfo cannot start its
	// scan: nothing printed, status 1).
	routeErr         error
	line, additional bool
	// diff is --diff's text, printed instead of the nodes.
	diff []byte
	// warnings are current rdma-core's ibwarn lines (ToolWarnings).
	warnings []string
}

// LinkNode is one node with its printed ports.
type LinkNode struct {
	Type string `json:"type"`
	GUID GUID   `json:"guid"`
	// PortGUID is port 0's GUID for a switch (iblinkinfo's header).
	PortGUID GUID   `json:"port_guid"`
	Name     string `json:"name"` // the node-name-map's name, else the description
	// LID is a switch's LID (port 0's), 0 for other nodes.
	LID   uint16     `json:"lid"`
	Ports []LinkPort `json:"ports"`
}

// LinkPort is one port and its link.
type LinkPort struct {
	Port int    `json:"port"`
	GUID GUID   `json:"guid"`
	LID  uint16 `json:"lid"` // the port's LID (a switch's for its ports)
	// Width, Speed: the active link ("4X", "10.0 Gbps", "14.0625 Gbps"),
	// empty when the port is Down (its PortInfo is not valid then).
	Width     string `json:"width,omitempty"`
	Speed     string `json:"speed,omitempty"`
	State     string `json:"state"`      // "Active", "Down", ...
	PhysState string `json:"phys_state"` // "LinkUp", "Polling", ...
	// HOQLife and VLStallCount are given with -p on linked ports.
	HOQLife      *uint8      `json:"hoq_life,omitempty"`
	VLStallCount *uint8      `json:"vl_stall_count,omitempty"`
	Remote       *LinkRemote `json:"remote,omitempty"`
}

// LinkRemote is the port at the other end of a link.
type LinkRemote struct {
	GUID     GUID   `json:"guid"` // port GUID
	NodeGUID GUID   `json:"node_guid"`
	LID      uint16 `json:"lid"`
	Port     int    `json:"port"`
	Name     string `json:"name"`
	// CouldBeWidth and CouldBeSpeed say what the link could run at when
	// both ends support more than it does ("Could be 4X"), else "".
	CouldBeWidth string `json:"could_be_width"`
	CouldBeSpeed string `json:"could_be_speed"`
}

// capExtSpeeds is PortInfo.CapabilityMask's IsExtendedSpeedsSupported.
const capExtSpeeds = 1 << 14

// LinkinfoOf discovers the fabric and gathers what iblinkinfo prints. A
// discovery that missed routes returns what it found and a
// DiscoveryErrors.
func LinkinfoOf(ctx context.Context, e *Env, o LinkinfoOptions) (*Linkinfo, error) {
	fullScan := e.guidUnresolvedBySA(ctx, o.PortGUID, o.Path, o.Unresolved)
	partialScan := (o.PortGUID != 0 || o.Path != nil) && !fullScan
	warnings := e.drStart(ctx, &o, partialScan)
	if fullScan {
		// iblinkinfo's IBWARN ends in a newline of its own.
		warnings = append(warnings, unresolvedWarnings(o.PortGUID, o.PortText, "\n")...)
	}
	d, err := e.Discover(ctx)
	if err != nil {
		return nil, err
	}
	li := &Linkinfo{Nodes: []LinkNode{}, line: o.Line, additional: o.Additional, warnings: warnings}
	if o.FilterDown != nil {
		o.filter = make(map[uint64]*topo.Node, len(o.FilterDown.Nodes))
		for _, n := range o.FilterDown.Nodes {
			o.filter[n.GUID] = n
		}
	}
	fab := d.Fabric
	switch {
	case e.Loaded != nil:
		// A cache holds what it holds: -n and -a select nothing more.
	case o.All && partialScan:
		// Every node libibnetdisc's partial scan holds (-n hops from the
		// start, 1 when not given).
		fab = allOfPartialScan(d.Fabric, o)
	case o.Hops > 0 && !partialScan && (o.All || o.Unresolved == ""):
		// What libibnetdisc holds when its hop limit stops it.
		fab = replayIBND(fab, ibndStart{}, o.Hops).Fabric
	}
	nodes := fab.Nodes
	if o.Unresolved != "" && !o.All {
		li.NotFound = o.Unresolved
		return li, partial(d)
	}
	if (partialScan || fullScan) && !o.All {
		var n *topo.Node
		if fullScan {
			// The C tools' fallback where the SA does not resolve the
			// GUID: a full scan (-n hops deep), then the node that holds
			// the port, as that scan found it.
			n = nodeOfPort(fab, o.PortGUID)
			if n == nil || (o.Only != 0 && n.Type != o.Only) {
				li.NotFound = fmt.Sprintf("0x%x", o.PortGUID)
				return li, partial(d)
			}
		} else {
			var port int
			var entry *topo.Port
			var what string
			var rerr error
			n, port, entry, what, rerr = findPortNode(ctx, e, d, o)
			if rerr != nil {
				li.NotFound, li.routeErr = what, rerr
				return li, partial(d)
			}
			if n == nil || (o.Only != 0 && n.Type != o.Only) {
				li.NotFound = what
				return li, partial(d)
			}
			if e.Loaded == nil {
				// A partial scan from the port's node (a loaded fabric
				// is whole: iblinkinfo --load-cache -S prints the node
				// as the cache holds it).
				n = scannedFrom(n, port, d.Fabric, o.startRoute(), entry, max(o.Hops, 1))
			}
		}
		if o.Diff != nil {
			li.diff = linkDiff(o.Diff, fab, []*topo.Node{n}, e.NodeNames, o)
			return li, partial(d)
		}
		if ln, ok := linkNode(n, e.NodeNames, o); ok {
			li.Nodes = append(li.Nodes, ln)
		}
		return li, partial(d)
	} else {
		// libibnetdisc lists the nodes it found newest first.
		nodes = make([]*topo.Node, 0, len(fab.Nodes))
		for i := len(fab.Nodes) - 1; i >= 0; i-- {
			if n := fab.Nodes[i]; o.Only == 0 || n.Type == o.Only {
				nodes = append(nodes, n)
			}
		}
	}
	if o.Diff != nil {
		li.diff = linkDiff(o.Diff, fab, nil, e.NodeNames, o)
		return li, partial(d)
	}
	li.Nodes = make([]LinkNode, 0, len(nodes))
	for _, n := range nodes {
		if ln, ok := linkNode(n, e.NodeNames, o); ok {
			li.Nodes = append(li.Nodes, ln)
		}
	}
	return li, partial(d)
}

// allOfPartialScan is what libibnetdisc holds after iblinkinfo -a's
// partial scan from -D's route or -S/-G's port (reached by its LID, as
// infiniband-diags 44 resolves it), -n hops deep (1 when not given). A
// port GUID the fabric lacks is a full scan, as iblinkinfo falls back to
// one when the SA cannot resolve it.
func allOfPartialScan(f *topo.Fabric, o LinkinfoOptions) *topo.Fabric {
	maxHops := o.Hops
	if maxHops == 0 {
		maxHops = 1
	}
	if r := o.startRoute(); r != nil {
		return replayIBND(f, ibndStart{Path: r[1:]}, maxHops).Fabric
	}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.GUID == o.PortGUID {
				return replayIBND(f, ibndStart{LID: p}, maxHops).Fabric
			}
		}
	}
	return replayIBND(f, ibndStart{}, o.Hops).Fabric
}

// guidUnresolvedBySA reports whether the C tools' -S/-G would fail to
// resolve guid through the SA (LIDOfGUID: no SM known, no SA answer, a
// GUID the SA has no PathRecord for): iblinkinfo and ibqueryerrors then
// say "Failed to resolve ...; attempting full scan" and scan the whole
// fabric. False for -D, for a GUID that reads as 0 (Unresolved) and on a
// loaded fabric.
func (e *Env) guidUnresolvedBySA(ctx context.Context, guid uint64, path []uint8, unresolved string) bool {
	if guid == 0 || path != nil || unresolved != "" || e == nil || e.Loaded != nil || e.Session == nil {
		return false
	}
	_, err := lidOfGUID(ctx, e.Session, guid)
	return err != nil
}

// unresolvedWarnings are the lines iblinkinfo and ibqueryerrors print
// on stderr when the SA cannot resolve -S/-G's GUID
// (guidUnresolvedBySA): libibmad's ib_path_query_via's, then the tool's
// own naming the GUID as typed (text; the GUID in hex when "") before
// its full scan, end after it.
func unresolvedWarnings(guid uint64, text, end string) []string {
	if text == "" {
		text = fmt.Sprintf("0x%x", guid)
	}
	return []string{PathQueryFailed, "main: Failed to resolve " + text + "; attempting full scan" + end}
}

// PathQueryFailed is libibmad's warning (IBWARN, less its "[pid]") when
// the SA resolves no GUID the C tools were given (-G, -S).
const PathQueryFailed = "ib_path_query_via: sa call path_query failed"

// nodeOfPort is f's node that holds a port of GUID guid, nil when none
// does (ibnd_find_port_guid).
func nodeOfPort(f *topo.Fabric, guid uint64) *topo.Node {
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p != nil && p.GUID == guid {
				return n
			}
		}
	}
	return nil
}

// partial is d's errors as a DiscoveryErrors, nil when it has none.
func partial(d *engine.Discovery) error {
	if len(d.Errors) > 0 {
		return DiscoveryErrors(d.Errors)
	}
	return nil
}

// findPortNode finds the node of -S/-G's port GUID or -D's route and the
// port the route enters it by; what names the port as iblinkinfo's
// "Failed to find port" does. routeErr is -D's NodeInfo failing (the C
// tools cannot start their scan there). entry is, for a route of two
// hops or more to a CA or router, the port of the route's last node but
// one that the route entered it by, as that node's NodeInfo answers it
// (LocalPortNum): what libibnetdisc links the CA's port to (scannedFrom).
// It is asked of the fabric, not walked in the discovered topology: a
// route may go where discovery's links do not say (an egress port 0,
// which a fabric answers as it does), and the C tools print what the
// fabric answered.
func findPortNode(ctx context.Context, e *Env, d *engine.Discovery, o LinkinfoOptions) (n *topo.Node, port int, entry *topo.Port, what string, routeErr error) {
	guid := o.PortGUID
	what = fmt.Sprintf("0x%x", o.PortGUID)
	route := o.startRoute()
	viaCA := false // the route ends at a CA or router
	if o.Path != nil {
		what = pathString(o.Path)
		ni, err := engine.Get[smp.NodeInfo](ctx, e.Session, engine.Target{Kind: engine.ByDR, Path: o.Path}, 0)
		if err != nil {
			return nil, 0, nil, what, err
		}
		guid, viaCA = ni.PortGUID, ni.NodeType != smp.NodeTypeSwitch
	}
	for _, n := range d.Fabric.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.GUID != guid {
				continue
			}
			if o.Path == nil {
				viaCA = n.Type != topo.Switch
			}
			if len(route) > 2 && viaCA {
				prev := engine.Target{Kind: engine.ByDR, Path: route[:len(route)-1]}
				if pi, err := engine.Get[smp.NodeInfo](ctx, e.Session, prev, 0); err == nil {
					entry = nodePort(d.Fabric, pi.NodeGUID, int(pi.LocalPortNum))
				}
			}
			return n, p.Num, entry, what, nil
		}
	}
	return nil, 0, nil, what, nil
}

// drStart is current rdma-core's iblinkinfo -S/-G (rdma-core #1755): the
// port, which the SA resolved to a LID, is reached by the directed route
// build_dr_path_to_lid builds to that LID (o.dr), and the partial scan
// starts there. When it finds none, its warnings, and the scan starts
// from the LID as 44's does (o.dr nil).
func (e *Env) drStart(ctx context.Context, o *LinkinfoOptions, partialScan bool) (warnings []string) {
	if !partialScan || o.Path != nil || o.Unresolved != "" || !e.current() || e.Loaded != nil {
		return nil
	}
	guid, text := o.PortGUID, o.PortText
	lid, err := lidOfGUID(ctx, e.Session, guid)
	if err != nil {
		return nil // guidUnresolvedBySA said it resolves; a second try failing is a full scan's matter
	}
	if o.dr, err = e.Session.DRPathToLID(ctx, nil, lid); err == nil {
		return nil
	}
	if text == "" {
		text = fmt.Sprintf("0x%x", guid)
	}
	msg := err.Error()
	if de := (*engine.DRPathError)(nil); errors.As(err, &de) {
		msg = de.Msg
	}
	return []string{"build_dr_path_to_lid: " + msg, fmt.Sprintf("main: DR path to lid %d (%s) failed; using resolved portid", lid, text)}
}

// ToolWarnings are current rdma-core's ibwarn lines ("function: text")
// the command line prints on stderr before the output.
func (li *Linkinfo) ToolWarnings() []string { return li.warnings }

// nodePort is port num of f's node of GUID guid, nil when f has none.
func nodePort(f *topo.Fabric, guid uint64, num int) *topo.Port {
	for _, n := range f.Nodes {
		if n.GUID == guid {
			if num < len(n.Ports) {
				return n.Ports[num]
			}
			return nil
		}
	}
	return nil
}

// RouteFailed is -D's route not answering: iblinkinfo prints nothing on
// stdout and exits 1 (ibqueryerrors exits 0).
func (li *Linkinfo) RouteFailed() error { return li.routeErr }

// pathString writes a directed route as -D takes it: "0,1,3".
func pathString(path []uint8) string {
	b := make([]byte, 0, 3*len(path))
	for i, p := range path {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, uint64(p), 10)
	}
	return string(b)
}

// linkNode gathers n's printed ports; ok is false when none is (-d).
func linkNode(n *topo.Node, names map[uint64]string, o LinkinfoOptions) (LinkNode, bool) {
	ln := linkHead(n, names)
	ln.Ports = make([]LinkPort, 0, n.NumPorts)
	p0 := switchPort0(n)
	// The node's remotes and -p values in one block each, not one
	// allocation a port (a 2,000-node fabric has ~6,000 ports).
	var s linkSlab
	headed := false
	for i := 1; i <= n.NumPorts && i < len(n.Ports); i++ {
		p := n.Ports[i]
		if p == nil || (o.DownOnly && p.State != smp.PortStateDown) {
			continue
		}
		// iblinkinfo prints the node's header before it filters the
		// port out.
		headed = true
		if o.filteredDown(p) {
			continue
		}
		if s.remotes == nil {
			s.remotes, s.extra = make([]LinkRemote, 0, n.NumPorts), make([]uint8, 0, 2*n.NumPorts)
		}
		ln.Ports = append(ln.Ports, linkPort(p, p0, names, o, &s))
	}
	return ln, headed
}

// linkHead is a node without its ports: what its header line says.
func linkHead(n *topo.Node, names map[uint64]string) LinkNode {
	ln := LinkNode{Type: nodeType(n.Type), GUID: GUID(n.GUID), Name: topo.MappedName(n, names), Ports: []LinkPort{}}
	if p0 := switchPort0(n); p0 != nil {
		ln.PortGUID, ln.LID = GUID(p0.GUID), p0.LID
	}
	return ln
}

// switchPort0 is a switch's port 0, nil for other nodes or when unknown.
func switchPort0(n *topo.Node) *topo.Port {
	if n.Type == topo.Switch && len(n.Ports) > 0 {
		return n.Ports[0]
	}
	return nil
}

// filteredDown is --filterdownports' check (filterdownport_check): p is
// Down and the filter fabric's node of that GUID has that port Down.
func (o *LinkinfoOptions) filteredDown(p *topo.Port) bool {
	if o.filter == nil || p.State != smp.PortStateDown {
		return false
	}
	fn := o.filter[p.Node.GUID]
	if fn == nil || p.Num > fn.NumPorts || p.Num >= len(fn.Ports) || fn.Ports[p.Num] == nil {
		return false
	}
	return fn.Ports[p.Num].State == smp.PortStateDown
}

// linkSlab holds a node's LinkRemotes and -p values, with room for all
// its ports.
type linkSlab struct {
	remotes []LinkRemote
	extra   []uint8
}

// capMask is the capability mask that applies to p: port 0's on a
// switch, the port's own elsewhere (0 when unknown).
func capMask(p *topo.Port) uint32 {
	if p.Node.Type == topo.Switch {
		if len(p.Node.Ports) > 0 && p.Node.Ports[0] != nil {
			return p.Node.Ports[0].CapMask
		}
		return 0
	}
	return p.CapMask
}

// endLID is the LID iblinkinfo prints for a port: its own, else (a
// switch's external ports) the switch's.
func endLID(p *topo.Port) uint16 {
	if p.LID != 0 {
		return p.LID
	}
	if p.Node.Type == topo.Switch && len(p.Node.Ports) > 0 && p.Node.Ports[0] != nil {
		return p.Node.Ports[0].LID
	}
	return 0
}

func linkPort(p, p0 *topo.Port, names map[uint64]string, o LinkinfoOptions, s *linkSlab) LinkPort {
	lp := LinkPort{Port: p.Num, GUID: GUID(p.GUID), LID: p.LID,
		State: smp.PortStateName(p.State), PhysState: smp.PhysStateName(p.PhysState)}
	if p0 != nil {
		lp.LID = p0.LID
	}
	if p.State != smp.PortStateDown {
		lp.Width = smp.WidthName(p.WidthActive)
		ext := uint8(0)
		if capMask(p)&capExtSpeeds != 0 {
			ext = p.SpeedExtActive
		}
		switch {
		case ext != 0:
			lp.Speed = smp.ExtSpeedName(ext)
		case p.MlnxSpeedActive&smp.MlnxSpeedFDR10 != 0:
			lp.Speed = "10.0 Gbps (FDR10)"
		default:
			lp.Speed = smp.SpeedName(p.SpeedActive)
		}
		if o.Additional {
			s.extra = append(s.extra, p.HOQLife, p.VLStallCount)
			lp.HOQLife, lp.VLStallCount = &s.extra[len(s.extra)-2], &s.extra[len(s.extra)-1]
		}
	}
	if r := p.Remote; r != nil {
		s.remotes = append(s.remotes, LinkRemote{GUID: GUID(r.GUID), NodeGUID: GUID(r.Node.GUID), LID: endLID(r), Port: r.Num,
			Name: topo.MappedName(r.Node, names)})
		lp.Remote = &s.remotes[len(s.remotes)-1]
		lp.Remote.CouldBeWidth, lp.Remote.CouldBeSpeed = couldBe(p, r)
	}
	return lp
}

// couldBe is get_max_msg: the widest width and fastest speed both ends
// support, when the link runs below them; FDR10 where both ends'
// MlnxExtPortInfo supports it and the link runs without.
func couldBe(p, r *topo.Port) (width, speed string) {
	if w := maxWidth(p.WidthSupported & r.WidthSupported); w&p.WidthActive == 0 {
		width = "Could be " + smp.WidthName(w)
	}
	if capMask(p)&capExtSpeeds != 0 && capMask(r)&capExtSpeeds != 0 && p.SpeedExtSupported != 0 && r.SpeedExtSupported != 0 {
		if s := maxBit(p.SpeedExtSupported & r.SpeedExtSupported); s&p.SpeedExtActive == 0 {
			speed = "Could be " + smp.ExtSpeedName(s)
		}
		return width, speed
	}
	if p.MlnxSpeedSupported&r.MlnxSpeedSupported&smp.MlnxSpeedFDR10 != 0 {
		switch {
		case p.MlnxSpeedActive&smp.MlnxSpeedFDR10 != 0:
		case p.SpeedActive == 4:
			speed = "Could be FDR10 (Found link at QDR but expected speed is FDR10)"
		default:
			speed = "Could be FDR10"
		}
		return width, speed
	}
	if s := maxBit(p.SpeedSupported & r.SpeedSupported); s&p.SpeedActive == 0 {
		speed = "Could be " + smp.SpeedName(s)
	}
	return width, speed
}

// maxWidth is the widest width of a LinkWidthSupported mask, ranked as
// infiniband-diags ranks them (12x, 8x, 4x, 2x, 1x); 1x for none.
func maxWidth(m uint8) uint8 {
	for _, w := range []uint8{8, 4, 2, 16} {
		if m&w != 0 {
			return w
		}
	}
	return 1
}

// maxBit is the highest bit set in m, 1 when none is.
func maxBit(m uint8) uint8 {
	r := uint8(1)
	for m >>= 1; m != 0; m >>= 1 {
		r <<= 1
	}
	return r
}

// WriteLinkinfo prints li as iblinkinfo does; the "Failed to find port"
// line goes to stderr. Lines are appended by hand (the printf formats
// they follow are noted), a large fabric's output being mostly this.
func WriteLinkinfo(stdout, stderr io.Writer, li *Linkinfo) error {
	if li.routeErr != nil {
		fmt.Fprintf(stderr, "Failed to get the node at -D %s: %v\n", li.NotFound, li.routeErr)
		return nil
	}
	if li.NotFound != "" {
		fmt.Fprintf(stderr, "Failed to find port: %s\n", li.NotFound)
		return nil
	}
	if li.diff != nil {
		_, err := stdout.Write(li.diff)
		return err
	}
	w := bufio.NewWriterSize(stdout, 64<<10)
	var b []byte
	for i := range li.Nodes {
		n := &li.Nodes[i]
		b = b[:0]
		if !li.line {
			b = appendLinkHeader(b, n, "")
		}
		for j := range n.Ports {
			b = appendLinkPort(b, n, &n.Ports[j], "", li.line, li.additional)
		}
		w.Write(b)
	}
	return w.Flush()
}

// appendLinkHeader appends a node's header line after prefix: "%s%s:
// 0x%016x %s:\n" for a switch, "%s%s: %s:\n" else.
func appendLinkHeader(b []byte, n *LinkNode, prefix string) []byte {
	b = append(append(append(b, prefix...), n.Type...), ": "...)
	if n.Type == "Switch" {
		b = append(appendHex16(b, uint64(n.PortGUID)), ' ')
	}
	return append(append(b, n.Name...), ":\n"...)
}

// remoteStrMax is the most of a port's remote text iblinkinfo prints:
// what fits its 256-byte remote_str.
const remoteStrMax = 255

func appendLinkPort(b []byte, n *LinkNode, p *LinkPort, prefix string, line, additional bool) []byte {
	b = append(b, prefix...)
	if line {
		// "0x%016x \"%30s\" "
		b = append(appendHex16(b, uint64(p.GUID)), " \""...)
		b = append(appendPadded(b, n.Name, 30), "\" "...)
	} else {
		b = append(b, "      "...)
	}
	if n.Type != "Switch" && !line {
		b = append(appendHex16(b, uint64(p.GUID)), ' ') // "0x%016x "
	}
	// "%6d %4d[%2s] ==%s==>  %s" with "" in the brackets
	b = appendPaddedInt(b, int64(p.LID), 6)
	b = append(b, ' ')
	b = appendPaddedInt(b, int64(p.Port), 4)
	b = append(b, "[  ] ==("...)
	down := p.State == "Down"
	if !down {
		// "(%3s %18s %6s/%8s)", then " (HOQ:%d VL_Stall:%d)" with -p
		b = append(appendPadded(b, p.Width, 3), ' ')
		b = append(appendPadded(b, p.Speed, 18), ' ')
		b = append(appendPadded(b, p.State, 6), '/')
		b = append(appendPadded(b, p.PhysState, 8), ')')
		if additional && p.HOQLife != nil {
			b = append(b, " (HOQ:"...)
			b = strconv.AppendInt(b, int64(*p.HOQLife), 10)
			b = append(b, " VL_Stall:"...)
			b = strconv.AppendInt(b, int64(*p.VLStallCount), 10)
			b = append(b, ')')
		}
	} else {
		// "(              %6s/%8s)"
		b = append(b, "              "...)
		b = append(appendPadded(b, p.State, 6), '/')
		b = append(appendPadded(b, p.PhysState, 8), ')')
	}
	b = append(b, "==>  "...)
	switch r := p.Remote; {
	case r != nil:
		// "%s%6d %4d[%2s] \"%s\" (%s %s)\n", the remote port GUID first
		// ("0x%016x ") in line mode, into iblinkinfo's remote_str[256]:
		// with a long mapped name the text is cut at 255 bytes, its
		// newline with it, as snprintf cuts it.
		start := len(b)
		if line {
			b = append(appendHex16(b, uint64(r.GUID)), ' ')
		}
		b = appendPaddedInt(b, int64(r.LID), 6)
		b = append(b, ' ')
		b = appendPaddedInt(b, int64(r.Port), 4)
		b = append(b, "[  ] \""...)
		b = append(b, r.Name...)
		b = append(b, "\" ("...)
		b = append(b, r.CouldBeWidth...)
		b = append(b, ' ')
		b = append(b, r.CouldBeSpeed...)
		b = append(b, ")\n"...)
		if len(b)-start > remoteStrMax {
			b = b[:start+remoteStrMax]
		}
	case down:
		b = append(b, "           [  ] \"\" ( )\n"...)
	default:
		b = append(b, "    \"Port not available\"\n"...)
	}
	return b
}

// appendHex16 appends v as printf's "0x%016x".
func appendHex16(b []byte, v uint64) []byte {
	const digits = "0123456789abcdef"
	b = append(b, '0', 'x')
	for shift := 60; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xf])
	}
	return b
}

// appendPadded appends s right-aligned in width columns, as printf's
// "%*s" (longer strings whole).
func appendPadded(b []byte, s string, width int) []byte {
	for i := len(s); i < width; i++ {
		b = append(b, ' ')
	}
	return append(b, s...)
}

// appendPaddedInt appends v as printf's "%*d".
func appendPaddedInt(b []byte, v int64, width int) []byte {
	var d [20]byte
	return appendPadded(b, string(strconv.AppendInt(d[:0], v, 10)), width)
}
