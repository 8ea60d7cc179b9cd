package diag

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

// TracertOptions are ibtracert's options.
type TracertOptions struct {
	NoInfo bool // -n: the simple format
	Force  bool // -f: go on when the ends cannot be read; a port matches by LID too
	// Multicast (-m) traces MLID's multicast tree from the source to the
	// destination instead of the unicast route.
	Multicast bool
	// MLID is an int as ibtracert's (strtoul's value in an int): one
	// below 0xc000 is refused as the C tool refuses it, one past 0xffff
	// is past every switch's multicast table.
	MLID int
	// Verbose is -v: the hops of the walk from the local port to the
	// source are printed too (Trace.Approach), as ibtracert -v prints them.
	Verbose bool
	// Timeout is -t, the per-try timeout of every SMP (0: the session's).
	Timeout time.Duration
}

// Trace is the route ibtracert found (or the part of it it printed before
// it failed): the JSON form of ibtracert.
type Trace struct {
	SrcLID    uint16 `json:"src_lid"`
	DstLID    uint16 `json:"dst_lid"`
	Multicast bool   `json:"multicast,omitempty"`
	MLID      int    `json:"mlid,omitempty"`
	Brief     bool   `json:"brief"`
	// From is the source port, Hops each link the route crosses (the
	// egress port, then the port it arrives at), To the destination;
	// To is nil when the route failed.
	// Approach are the hops from the local port to the source, kept
	// with -v.
	Approach []TraceHop `json:"approach,omitempty"`
	From     *TraceEnd  `json:"from,omitempty"`
	Hops     []TraceHop `json:"hops"`
	To       *TraceEnd  `json:"to,omitempty"`
	// Circles are the switches a multicast trace reached twice, which
	// ibtracert prints ("ERR: circle discovered at ...") as it finds them,
	// before the route.
	Circles []TraceEnd `json:"circles,omitempty"`
	// Warnings are ibtracert's ibwarn lines ("function: text"), in order.
	Warnings []string `json:"warnings,omitempty"`
	// Error is why no route was found ("" when one was).
	Error string `json:"error,omitempty"`
}

// TraceEnd is the source or destination of a trace.
type TraceEnd struct {
	Type    string `json:"type"` // "ca", "switch", "router"
	GUID    GUID   `json:"guid"` // the node GUID
	PortNum int    `json:"port"` // 0 for a switch
	LID     uint16 `json:"lid"`
	LIDEnd  uint16 `json:"lid_end"` // the last LID of the port's LMC range
	Name    string `json:"name"`
}

// TraceHop is one link of a trace.
type TraceHop struct {
	OutPort int    `json:"out_port"` // the port the route leaves by
	Type    string `json:"type"`     // the node it reaches
	GUID    GUID   `json:"guid"`     // unicast: the port GUID reached; multicast: the node GUID
	PortNum int    `json:"port"`     // the port it arrives at
	LID     uint16 `json:"lid"`
	LIDEnd  uint16 `json:"lid_end"`
	Name    string `json:"name"`
}

// ErrNoRoute is ibtracert's "Failed to get route information".
var ErrNoRoute = errors.New("Failed to get route information")

var tracertTypes = [...]string{"???", "ca", "switch", "router", "iwarp rnic"}

func traceType(t uint8) string {
	if int(t) < len(tracertTypes) {
		return tracertTypes[t]
	}
	return "???"
}

// tport is a node and the port an SMP reached it by, as ibtracert's
// get_node reads them.
type tport struct {
	nodeGUID, portGUID uint64
	typ                uint8
	nports             int
	portnum            int
	lid                uint16
	lmc                uint8
	state              uint8
	desc               string
}

// tswitch is ibtracert's Switch: the last SwitchInfo it read.
type tswitch struct {
	linearCap, top int
	enhsp0         bool
}

type tracer struct {
	s     *engine.Session
	names map[uint64]string
	o     *TracertOptions
	co    []engine.CallOption
	trace *Trace
}

func (tr *tracer) warn(fn, format string, args ...any) {
	tr.trace.Warnings = append(tr.trace.Warnings, fn+": "+fmt.Sprintf(format, args...))
}

// failed returns err, a query's failure, after libibmad's warning when
// the query got no answer (MadRPCWarning), as ibtracert's mad_rpc prints
// it before the tool says what it was doing; ibtracert's directed routes
// carry DR SLID and DLID 0, as its "can't reach port at" says.
func (tr *tracer) failed(err error) error {
	var te *engine.TimeoutError
	if MadRPCWarning(err, false) != "" && errors.As(err, &te) {
		dport := PortID(te.Target)
		if te.Target.Kind == engine.ByDR {
			dport = DRAddress(te.Target.Path, 0, 0)
		}
		tr.warn("mad_rpc", "_do_madrpc failed; dport (%s)", dport)
	}
	return err
}

// getNode reads NodeInfo, NodeDescription and PortInfo (of the port the
// SMP arrives by) at t.
func (tr *tracer) getNode(ctx context.Context, t engine.Target, p *tport) error {
	ni, err := tr.s.NodeInfo(ctx, t, tr.co...)
	if err != nil {
		return tr.failed(err)
	}
	nd, err := tr.s.SMP(ctx, t, mad.MethodGet, smp.AttrNodeDescription, 0, nil, tr.co...)
	if err != nil {
		return tr.failed(err)
	}
	pi, err := tr.s.PortInfo(ctx, t, 0, tr.co...)
	if err != nil {
		return tr.failed(err)
	}
	desc := []byte(cString(nd))
	for i, c := range desc {
		if c < 0x20 || c > 0x7e {
			desc[i] = ' '
		}
	}
	*p = tport{nodeGUID: ni.NodeGUID, portGUID: ni.PortGUID, typ: ni.NodeType, nports: int(ni.NumPorts),
		portnum: int(ni.LocalPortNum), lid: pi.LID, lmc: pi.LMC, state: pi.PortState, desc: string(desc)}
	return nil
}

// switchLookup is ibtracert's switch_lookup: the switch's LFT entry for
// lid, or -1.
func (tr *tracer) switchLookup(ctx context.Context, t engine.Target, lid uint16, sw *tswitch) int {
	si, err := tr.s.SwitchInfo(ctx, t, tr.co...)
	if err != nil {
		_ = tr.failed(err)
		return -1
	}
	sw.linearCap, sw.top, sw.enhsp0 = int(si.LinearFDBCap), int(si.LinearFDBTop), si.EnhancedPort0
	if int(lid) >= sw.linearCap && int(lid) > sw.top {
		return -1
	}
	blk, err := tr.s.LFTBlock(ctx, t, uint32(lid)/64, tr.co...)
	if err != nil {
		_ = tr.failed(err)
		return -1
	}
	return int(blk.Ports[lid%64])
}

func inactive(p *tport, sw *tswitch) bool {
	return p.state != 4 && (p.typ != smp.NodeTypeSwitch || sw.enhsp0)
}

func (tr *tracer) sameport(a, b *tport) bool {
	return a.portGUID == b.portGUID || (tr.o.Force && a.lid == b.lid)
}

// drpath is a directed route being walked: p[0] is 0, p[1..cnt] the
// egress ports; entries past cnt are kept (ibtracert reads one back).
type drpath struct {
	p   [64]uint8
	cnt int
}

func (d *drpath) target() engine.Target {
	return engine.Target{Kind: engine.ByDR, Path: append([]uint8(nil), d.p[:d.cnt+1]...)}
}

func (d *drpath) extend(port int) bool {
	if d.cnt+2 >= len(d.p) {
		return false
	}
	d.cnt++
	d.p[d.cnt] = uint8(port)
	return true
}

func (d *drpath) String() string { return DRAddress(d.p[:d.cnt+1], 0, 0) }

func (tr *tracer) end(p *tport) *TraceEnd {
	num := p.portnum
	if p.typ == smp.NodeTypeSwitch {
		num = 0
	}
	return &TraceEnd{Type: traceType(p.typ), GUID: GUID(p.nodeGUID), PortNum: num, LID: p.lid,
		LIDEnd: p.lid + 1<<p.lmc - 1, Name: remapName(tr.names, p.nodeGUID, p.desc)}
}

// hop records the hop to cur out of outport: in the trace when record,
// else in its approach when verbose (ibtracert -v prints the route from
// the local port to the source too).
func (tr *tracer) hop(cur *tport, outport int, record bool) {
	if !record && !tr.o.Verbose {
		return
	}
	hops := &tr.trace.Hops
	if !record {
		hops = &tr.trace.Approach
	}
	*hops = append(*hops, TraceHop{OutPort: outport, Type: traceType(cur.typ), GUID: GUID(cur.portGUID),
		PortNum: cur.portnum, LID: cur.lid, LIDEnd: cur.lid + 1<<cur.lmc - 1,
		Name: remapName(tr.names, cur.nodeGUID, cur.desc)})
}

// findRoute is ibtracert's find_route: it walks from the port at from
// towards the LID to, by directed routes, reading each switch's LFT
// entry for it; from ends as the route to the last port reached. With
// record the route is kept in the trace.
func (tr *tracer) findRoute(ctx context.Context, from *drpath, to uint16, record bool) error {
	const maxHopsTrace = 63
	var fromP, toP, next tport
	if tr.getNode(ctx, from.target(), &fromP) != nil || tr.getNode(ctx, engine.LID(to), &toP) != nil {
		tr.warn("find_route", "can't reach to/from ports")
		if !tr.o.Force {
			return ErrNoRoute
		}
		toP.lid = to
		tr.warn("find_route", "Force: look for lid %d", to)
	}
	// node is ibtracert's pointer: the source first, then the node the
	// last hop reached, which each get_node overwrites (atNext).
	cur, atNext := &fromP, false
	portnum := cur.portnum
	outport, nextOut := 255, 255
	var sw tswitch
	if record {
		tr.trace.From = tr.end(cur)
	}
	desc := func() string {
		if atNext {
			return next.desc
		}
		return cur.desc
	}
	badtbl := func() error {
		tr.warn("find_route", "Bad forwarding table entry found at: node \"%s\" lid entry %d is %d (top %d)", desc(), to, outport, sw.top)
		return ErrNoRoute
	}
	if cur.typ == smp.NodeTypeSwitch {
		nextOut = tr.switchLookup(ctx, from.target(), to, &sw)
		if nextOut < 0 || nextOut > cur.nports {
			outport = nextOut
			return badtbl()
		}
	}
	maxhops := maxHopsTrace
walk:
	for {
		cond := maxhops != 0
		maxhops--
		if !cond {
			break
		}
		if inactive(cur, &sw) {
			tr.warn("find_route", "Bad port state found: node \"%s\" port %d state %d", desc(), portnum, cur.state)
			return ErrNoRoute
		}
		if tr.sameport(cur, &toP) {
			break walk
		}
		switch cur.typ {
		case smp.NodeTypeSwitch:
			outport = nextOut
			if !from.extend(outport) {
				tr.warn("find_route", "Direct path too long!")
				return ErrNoRoute
			}
			if tr.getNode(ctx, from.target(), &next) != nil {
				tr.warn("find_route", "can't reach port at %s", from)
				return ErrNoRoute
			}
			if outport == 0 {
				if !tr.sameport(&next, &toP) {
					return badtbl()
				}
				break walk // the switch's own port
			}
		case smp.NodeTypeCA, smp.NodeTypeRouter:
			caSrc := false
			outport = portnum
			if !tr.sameport(cur, &fromP) {
				tr.warn("find_route", "can't continue: reached CA or router port %x, lid %d", cur.portGUID, cur.lid)
				return ErrNoRoute
			}
			if from.cnt > 0 {
				from.cnt--
			} else {
				caSrc = true
				if portnum != 0 && !from.extend(portnum) {
					tr.warn("find_route", "Direct path too long!")
					return ErrNoRoute
				}
			}
			if tr.getNode(ctx, from.target(), &next) != nil {
				tr.warn("find_route", "can't reach port at %s", from)
				return ErrNoRoute
			}
			if !caSrc {
				next.portnum = int(from.p[from.cnt+1])
			}
		}
		if next.typ == smp.NodeTypeSwitch {
			nextOut = tr.switchLookup(ctx, from.target(), to, &sw)
			if nextOut < 0 || nextOut > next.nports {
				outport = nextOut
				return badtbl()
			}
		}
		if inactive(&next, &sw) {
			tr.warn("find_route", "Bad out port state found: node \"%s\" outport %d state %d", desc(), outport, next.state)
			return ErrNoRoute
		}
		cur, atNext = &next, true
		portnum = cur.portnum
		tr.hop(cur, outport, record)
	}
	if maxhops <= 0 {
		tr.warn("find_route", "no route found after %d hops", maxHopsTrace)
		return ErrNoRoute
	}
	if record {
		tr.trace.To = tr.end(cur)
	}
	return nil
}

// Tracert is ibtracert between two LIDs: it first walks from the local
// port to src by directed routes (through the switches' LFTs, as
// ibtracert does), then from src to dst, reading at each switch the
// LFT entry for dst. The trace holds what ibtracert prints, also when it
// fails part way (then the error is ErrNoRoute and Trace.Warnings say
// why, as ibtracert's ibwarn lines do). With o.Multicast it walks the
// MLID's tree from src until dst instead (findMCPath).
func Tracert(ctx context.Context, e *Env, src, dst uint16, o *TracertOptions) (*Trace, error) {
	if o == nil {
		o = &TracertOptions{}
	}
	if e == nil || e.Session == nil {
		return nil, errors.New("diag: ibtracert: no session (the tool needs a fabric)")
	}
	tr := &tracer{s: e.Session, names: e.NodeNames, o: o, trace: &Trace{SrcLID: src, DstLID: dst, Brief: o.NoInfo, Hops: []TraceHop{}}}
	if o.Timeout > 0 {
		tr.co = []engine.CallOption{engine.Timeout(o.Timeout)}
	}
	if src == 0 || dst == 0 {
		return tr.trace, errors.New("bad src/dest lid")
	}
	fail := func(fn, msg string) (*Trace, error) {
		tr.warn(fn, "%s", msg)
		tr.trace.Error = ErrNoRoute.Error()
		return tr.trace, ErrNoRoute
	}
	var from drpath
	if tr.findRoute(ctx, &from, src, false) != nil {
		return fail("get_route", "can't find a route to the src port")
	}
	if o.Multicast {
		tr.trace.Multicast, tr.trace.MLID = true, o.MLID
		if o.MLID < 0xc000 {
			tr.warn("get_route", "invalid MLID; must be 0xc000 or larger")
		}
		var target tport
		if tr.getNode(ctx, engine.LID(dst), &target) != nil {
			tr.warn("find_target_portguid", "can't find to port\n")
			target.portGUID = ^uint64(0) // ibtracert's -1: no port matches
		}
		if target.portGUID == 0 {
			return fail("get_route", fmt.Sprintf("can't reach target lid %d", dst))
		}
		if !tr.findMCPath(ctx, &from, o.MLID, target.portGUID) {
			return fail("get_route", "can't find a multicast route from src to dest")
		}
		return tr.trace, nil
	}
	if tr.findRoute(ctx, &from, dst, true) != nil {
		return fail("get_route", "can't find a route from src to dest")
	}
	return tr.trace, nil
}

// WriteTracert prints a trace as ibtracert prints it on stdout (a failed
// trace prints what ibtracert printed before it failed).
func WriteTracert(w io.Writer, t *Trace) error {
	bw := bufio.NewWriter(w)
	// -v's walk to the source comes first, unicast or multicast: ibtracert
	// prints it as get_route's first find_route walks, before find_mcpath
	// reports a circle.
	for _, h := range t.Approach {
		fmt.Fprintf(bw, "[%d] -> %s port {%s}[%d] lid %d-%d \"%s\"\n", h.OutPort, h.Type, h.GUID, h.PortNum, h.LID, h.LIDEnd, h.Name)
	}
	for _, c := range t.Circles {
		fmt.Fprintf(bw, "ERR: circle discovered at %s {%s} portnum %d lid %d-%d \"%s\"\n", c.Type, c.GUID, c.PortNum, c.LID, c.LIDEnd, c.Name)
	}
	if t.Multicast {
		writeMCPath(bw, t)
		return bw.Flush()
	}
	if f := t.From; f != nil {
		if t.Brief {
			fmt.Fprintf(bw, "From {%s}[%d]\n", f.GUID, f.PortNum)
		} else {
			fmt.Fprintf(bw, "From %s {%s} portnum %d lid %d-%d \"%s\"\n", f.Type, f.GUID, f.PortNum, f.LID, f.LIDEnd, f.Name)
		}
	}
	for _, h := range t.Hops {
		if t.Brief {
			fmt.Fprintf(bw, "[%d] -> {%s}[%d]\n", h.OutPort, h.GUID, h.PortNum)
		} else {
			fmt.Fprintf(bw, "[%d] -> %s port {%s}[%d] lid %d-%d \"%s\"\n", h.OutPort, h.Type, h.GUID, h.PortNum, h.LID, h.LIDEnd, h.Name)
		}
	}
	if to := t.To; to != nil {
		if t.Brief {
			fmt.Fprintf(bw, "To {%s}[%d]\n", to.GUID, to.PortNum)
		} else {
			fmt.Fprintf(bw, "To %s {%s} portnum %d lid %d-%d \"%s\"\n", to.Type, to.GUID, to.PortNum, to.LID, to.LIDEnd, to.Name)
		}
	}
	return bw.Flush()
}

// LIDOfGUID is the LID of the port whose port GUID is guid, as the C
// tools' -G resolves it: the DLID of the SA's PathRecord from the port's
// GID to itself, one query, and nothing else. A switch's GUID (its port
// 0's) gives its port 0's LID. What has no PathRecord is not resolved, as
// the C tools resolve nothing else: a CA's node GUID (no port's), a GUID
// nobody has, any GUID where no SA answers (ibsim: a tool on the SM's own
// port, or OpenSM on a switch).
func LIDOfGUID(ctx context.Context, e *Env, guid uint64) (uint16, error) {
	if e == nil || e.Session == nil {
		return 0, fmt.Errorf("diag: no session (resolving GUID 0x%016x needs the SA)", guid)
	}
	return lidOfGUID(ctx, e.Session, guid)
}

// pathToGUIDTemplate is ib_path_query_via's PathRecord: from the GID of
// the port GUID guid (under prefix) to itself.
func pathToGUIDTemplate(prefix, guid uint64) (uint64, []byte) {
	gid := mad.NewGID(prefix, guid)
	t := sa.NewPathRecordTemplate().SetDGID(gid).SetSGID(gid)
	return t.ComponentMask(), t.Bytes()
}

// lidOfGUID is LIDOfGUID on s.
func lidOfGUID(ctx context.Context, s *engine.Session, guid uint64) (uint16, error) {
	mask, tmpl := pathToGUIDTemplate(s.Port().GIDPrefix, guid)
	// A Get, as libibmad's ib_path_query_via: the SA answers one record
	// (OpenSM: the base LIDs' path) where a GetTable would list every
	// pair of LIDs of an LMC > 0 port, more than one MAD holds.
	rec, err := s.SAGet(ctx, sa.PathRecord(), mask, tmpl)
	if err != nil {
		return 0, fmt.Errorf("SA PathRecord to port GUID 0x%016x: %w", guid, err)
	}
	var pr sa.PathRec
	if pr.UnmarshalBinary(rec) == nil && pr.DLID != 0 {
		return pr.DLID, nil
	}
	return 0, fmt.Errorf("the SA has no PathRecord to port GUID 0x%016x (no port has it, or no LID)", guid)
}
