package engine

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// DRPathMaxHops is how many hops DRPathToLID walks at most
// (infiniband-diags' IBDIAG_MAX_HOPS).
const DRPathMaxHops = 63

// DRPathError is why DRPathToLID found no directed route: Msg is the
// warning current rdma-core's build_dr_path_to_lid prints for the same
// walk (infiniband-diags/ibdiag_dr.c, rdma-core #1755), Err the SMP's
// error where one failed.
type DRPathError struct {
	LID uint16
	Msg string
	Err error
}

func (e *DRPathError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("engine: directed route to lid %d: %s: %v", e.LID, e.Msg, e.Err)
	}
	return fmt.Sprintf("engine: directed route to lid %d: %s", e.LID, e.Msg)
}

func (e *DRPathError) Unwrap() error { return e.Err }

// DRPathToLID builds a directed route to the port of LID lid by walking
// the switches' linear forwarding tables from from (a directed route; nil
// or empty is the local port), with live SMPs, as current rdma-core's
// build_dr_path_to_lid does: LID-routed SMPs are not guaranteed to reach
// a node in an XDR fabric, a directed route is. It returns the route
// (from's hops first; element 0 is from's, 0 for the local port).
//
// Its rules are rdma-core's: at most DRPathMaxHops hops, a route of at
// most 62 hops; at each switch SwitchInfo and the LFT block of lid, where
// an LFT that is not there (LinearFDBCap 0), is larger than its cap, ends
// below lid, or names a port past the switch's is a "Bad forwarding table
// entry"; a port in state Down on the way (a switch's port 0 excepted)
// ends the walk; a CA or router port is the end when its LID range (LMC)
// holds lid, and is only passed through when it is the start (the walk
// goes back to the switch the start hangs off). Failures are
// *DRPathError with rdma-core's text.
func (s *Session) DRPathToLID(ctx context.Context, from []uint8, lid uint16, opts ...CallOption) ([]uint8, error) {
	w := &drWalk{s: s, lid: lid, opts: opts}
	if len(from) > len(w.p)-1 {
		return nil, &DRPathError{LID: lid, Msg: "Direct path too long!"}
	}
	copy(w.p[:], from)
	w.cnt = max(len(from)-1, 0)
	if err := w.run(ctx); err != nil {
		return nil, err
	}
	return append([]uint8(nil), w.p[:w.cnt+1]...), nil
}

// drPort is what build_dr_path_to_lid's dr_get_node reads at a route:
// the node (NodeInfo, NodeDescription) and the port the SMP reached it by
// (PortInfo of port 0).
type drPort struct {
	typ      uint8
	nports   int
	portGUID uint64
	portnum  int
	lid      uint16
	lmc      uint8
	state    uint8
	desc     string
}

// active is dr_port_inactive's negation: a switch's port 0 is always
// active, any other port unless Down.
func (p *drPort) active() bool {
	return p.typ == smp.NodeTypeSwitch && p.portnum == 0 || p.state != smp.PortStateDown
}

// same is dr_sameport: by port GUID when both have one, else by LID when
// both have one.
func (p *drPort) same(q *drPort) bool {
	switch {
	case p.portGUID != 0 && q.portGUID != 0:
		return p.portGUID == q.portGUID
	case p.lid != 0 && q.lid != 0:
		return p.lid == q.lid
	}
	return false
}

// drWalk is one build_dr_path_to_lid: the route so far (p[0..cnt]; the
// entries past cnt are kept, as the C array's are, and read back), the
// last switch's LFT top.
type drWalk struct {
	s    *Session
	lid  uint16
	opts []CallOption
	p    [64]uint8
	cnt  int
	top  int
}

func (w *drWalk) target() Target {
	return Target{Kind: ByDR, Path: append([]uint8(nil), w.p[:w.cnt+1]...)}
}

// route is portid2str of the route: the C's portid starts zeroed, so its
// slid and dlid print as 0.
func (w *drWalk) route() string {
	var b strings.Builder
	b.WriteString("DR path slid 0; dlid 0; ")
	for i := 0; i <= w.cnt; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(int(w.p[i])))
	}
	return b.String()
}

func (w *drWalk) fail(format string, args ...any) error {
	return &DRPathError{LID: w.lid, Msg: fmt.Sprintf(format, args...)}
}

// extend is dr_extend_dpath: port appended, unless the route would
// pass 62 hops (the C's 64-byte path with room for its end).
func (w *drWalk) extend(port int) bool {
	room := w.cnt+2 < len(w.p)
	if room {
		w.cnt++
		w.p[w.cnt] = uint8(port)
	}
	return room
}

// get is dr_get_node at the route: NodeInfo, NodeDescription (up to its
// NUL, unprintable bytes as spaces) and PortInfo of port 0, the first
// failure ending it.
func (w *drWalk) get(ctx context.Context, p *drPort) error {
	t := w.target()
	var nd []byte
	var pi smp.PortInfo
	ni, err := w.s.NodeInfo(ctx, t, w.opts...)
	if err == nil {
		nd, err = w.s.SMP(ctx, t, mad.MethodGet, smp.AttrNodeDescription, 0, nil, w.opts...)
	}
	if err == nil {
		pi, err = w.s.PortInfo(ctx, t, 0, w.opts...)
	}
	if err != nil {
		return err
	}
	if i := bytes.IndexByte(nd, 0); i >= 0 {
		nd = nd[:i]
	}
	desc := make([]byte, min(len(nd), 64))
	for i := range desc {
		desc[i] = max(min(nd[i], 0x7e), 0x20) // isprint or ' '
		if desc[i] != nd[i] {
			desc[i] = ' '
		}
	}
	*p = drPort{typ: ni.NodeType, nports: int(ni.NumPorts), portGUID: ni.PortGUID, portnum: int(ni.LocalPortNum),
		lid: pi.LID, lmc: pi.LMC, state: pi.PortState, desc: string(desc)}
	return nil
}

// lookup is dr_switch_lookup: the LFT entry for lid of the switch at the
// route, -1 where there is none.
func (w *drWalk) lookup(ctx context.Context) int {
	t := w.target()
	si, err := w.s.SwitchInfo(ctx, t, w.opts...)
	if err != nil {
		return -1
	}
	capacity, top := int(si.LinearFDBCap), int(si.LinearFDBTop)
	w.top = top
	if capacity == 0 || capacity < top || int(w.lid) > top {
		return -1
	}
	blk, err := w.s.LFTBlock(ctx, t, uint32(w.lid)/64, w.opts...)
	if err != nil {
		return -1
	}
	return int(blk.Ports[w.lid%64])
}

// run walks as build_dr_path_to_lid does. cur is its node/port pointer:
// the start, then next, which every dr_get_node overwrites, so that its
// messages name what the C's name.
func (w *drWalk) run(ctx context.Context) error {
	if w.lid == 0 {
		return w.fail("invalid destination LID 0")
	}
	var start, next drPort
	if err := w.get(ctx, &start); err != nil {
		return &DRPathError{LID: w.lid, Msg: "can't reach from port", Err: err}
	}
	to := drPort{lid: w.lid}
	cur := &start
	portnum, outport, swOut := cur.portnum, 255, 255
	badTable := func(at *drPort) error {
		return w.fail("Bad forwarding table entry found at: node \"%s\" lid entry %d is %d (top %d)", at.desc, w.lid, outport, w.top)
	}
	if cur.typ == smp.NodeTypeSwitch {
		if swOut = w.lookup(ctx); swOut < 0 || swOut > cur.nports {
			outport = swOut
			return badTable(cur)
		}
	}
	hops := DRPathMaxHops
walk:
	for ; hops > 0; hops-- {
		if !cur.active() {
			return w.fail("Bad port state found: node \"%s\" port %d state %d", cur.desc, portnum, cur.state)
		}
		if cur.same(&to) {
			break walk
		}
		switch cur.typ {
		case smp.NodeTypeSwitch:
			outport = swOut
			if !w.extend(outport) {
				return w.fail("Direct path too long!")
			}
			if err := w.get(ctx, &next); err != nil {
				return &DRPathError{LID: w.lid, Msg: "can't reach port at " + w.route(), Err: err}
			}
			if outport == 0 {
				if !next.same(&to) {
					return badTable(cur)
				}
				break walk // the switch's own port
			}
		case smp.NodeTypeCA, smp.NodeTypeRouter:
			outport = portnum
			if w.lid&^(1<<cur.lmc-1) == cur.lid {
				break walk
			}
			if !cur.same(&start) {
				return w.fail("can't continue: reached CA or router port 0x%x, lid %d", cur.portGUID, cur.lid)
			}
			if err := w.leaveCA(ctx, portnum, &next); err != nil {
				return err
			}
		}
		if next.typ == smp.NodeTypeSwitch {
			if swOut = w.lookup(ctx); swOut < 0 || swOut > next.nports {
				outport = swOut
				return badTable(cur)
			}
		}
		if !next.active() {
			return w.fail("Bad out port state found: node \"%s\" outport %d state %d", cur.desc, outport, next.state)
		}
		cur, portnum = &next, next.portnum
	}
	return w.found(hops - 1)
}

// leaveCA is the walk's step from its start when that is a CA or
// router (port portnum): one hop back, to (with luck) a switch, whose
// node it reads into next.
func (w *drWalk) leaveCA(ctx context.Context, portnum int, next *drPort) error {
	fromCA := w.cnt == 0
	if !fromCA {
		w.cnt--
	} else if portnum != 0 && !w.extend(portnum) {
		return w.fail("Direct path too long!")
	}
	if err := w.get(ctx, next); err != nil {
		return &DRPathError{LID: w.lid, Msg: "can't reach port at " + w.route(), Err: err}
	}
	if !fromCA {
		next.portnum = int(w.p[w.cnt+1]) // the port as seen from the CA's side
	}
	return nil
}

// found is the walk's end: the C's maxhops, counted down once more by the
// while that ended, must still be above 0.
func (w *drWalk) found(left int) error {
	if left <= 0 {
		return w.fail("no route found after %d hops", DRPathMaxHops)
	}
	return nil
}
