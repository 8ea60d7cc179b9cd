package diag

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// RouteOptions are the options ibroute and dump_fts (dump_lfts,
// dump_mfts) share.
type RouteOptions struct {
	Multicast bool // -M: the multicast forwarding table
	All       bool // -a: every entry, invalid ones included
	NoDests   bool // -n: no destination resolution (brief format)
	// StartLID and EndLID are the positional range; 0 means the table's
	// start or end (ibroute's and dump_fts's rules clip them).
	StartLID, EndLID uint32
	// Verbose is -v: a multicast dump also says the switch's MFT
	// capacity and top.
	Verbose bool
	// Timeout is -t, the per-try timeout of every SMP (0: the session's).
	Timeout time.Duration
}

// ForwardingTable is one switch's dump, as ibroute prints it; the JSON
// form of ibroute and of each switch of dump_fts.
type ForwardingTable struct {
	// Switch is the address as the C tools print it ("Lid 1", "DR path
	// slid 0; dlid 0; 0,1,3").
	Switch    string `json:"switch"`
	GUID      GUID   `json:"guid"`
	Name      string `json:"name"` // node-name-map name, else the node description
	NumPorts  int    `json:"num_ports"`
	Multicast bool   `json:"multicast"`
	All       bool   `json:"all"`
	Brief     bool   `json:"brief"`
	Start     uint32 `json:"start"`
	End       uint32 `json:"end"`
	// LIDs are the unicast entries printed (valid ones, or all with -a).
	LIDs []LFTEntry `json:"lids,omitempty"`
	// MLIDs are the multicast entries printed (non-empty ones, or all
	// with -a).
	MLIDs []MFTEntry `json:"mlids,omitempty"`
	// Errors are the blocks that could not be read, as the C tools
	// report them on stderr. ibroute stops at the first (Stopped);
	// dump_fts goes on with the previous block's contents, as it does.
	Errors  []BlockError `json:"errors,omitempty"`
	Stopped bool         `json:"stopped,omitempty"`
	// Warnings are the C tool's IBWARN lines (an illegal range clipped).
	Warnings []string `json:"warnings,omitempty"`
	// LID is the switch's LID (its SMA LID), 0 when unknown.
	LID uint16 `json:"lid,omitempty"`
	// MFTCap and MFTTop are the switch's MulticastFDBCap and Top (a
	// multicast dump); Verbose prints them as -v does.
	MFTCap  uint16 `json:"mft_cap,omitempty"`
	MFTTop  uint16 `json:"mft_top,omitempty"`
	Verbose bool   `json:"-"`
}

// LFTEntry is one unicast forwarding table entry.
type LFTEntry struct {
	LID   uint16 `json:"lid"`
	Port  uint8  `json:"port"`
	Valid bool   `json:"valid"` // the port exists on the switch
	// Info is the destination column as printed ("" with -n).
	Info string `json:"info,omitempty"`
	// Dest is the port holding the LID, when it was resolved.
	Dest *RouteDest `json:"dest,omitempty"`
}

// RouteDest is the port a LID leads to.
type RouteDest struct {
	Type     string `json:"type"` // "Channel Adapter", "Switch", "Router"
	PortGUID GUID   `json:"port_guid"`
	Name     string `json:"name"`
}

// MFTEntry is one multicast forwarding table entry.
type MFTEntry struct {
	MLID  uint16   `json:"mlid"`
	Ports []int    `json:"ports"` // the ports of the mask, in order
	Masks []uint16 `json:"masks"` // the 16-port masks, port 0 first
}

// BlockError is a forwarding table block the switch did not return.
type BlockError struct {
	AttrMod uint32 `json:"attr_mod"`
	Status  uint16 `json:"status"`
	Error   string `json:"error"`
}

// Switch addresses for the header line, as libibmad's portid2str.

// LIDAddress is portid2str of a LID-routed address.
func LIDAddress(lid uint16) string { return fmt.Sprintf("Lid %d", lid) }

// DRAddress is portid2str of a directed route (path[0] is 0, the local
// port) with the DR SLID and DLID the tool used: 0xffff for both when
// the route came from the command line (str2drpath), 0 when from
// libibnetdisc's discovery.
func DRAddress(path []uint8, drslid, drdlid uint16) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "DR path slid %d; dlid %d; ", drslid, drdlid)
	if len(path) == 0 {
		path = []uint8{0}
	}
	for i, p := range path {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "%d", p)
	}
	return sb.String()
}

// ErrNotSwitch is ibroute's "not a switch".
var ErrNotSwitch = errors.New("not a switch")

// remapName is remap_node_name for a node known by GUID and
// description (topo.MappedName).
func remapName(names map[uint64]string, guid uint64, desc string) string {
	return topo.MappedName(&topo.Node{GUID: guid, Desc: desc}, names)
}

// nodeTypeName is mad_dump_val of IB_NODE_TYPE_F.
func nodeTypeName(t uint8) string {
	switch t {
	case 1:
		return "Channel Adapter"
	case 2:
		return "Switch"
	case 3:
		return "Router"
	case 4:
		return "iWARP RNIC"
	}
	return fmt.Sprintf("?(%d)", t)
}

func callOpts(o *RouteOptions) []engine.CallOption {
	if o.Timeout > 0 {
		return []engine.CallOption{engine.Timeout(o.Timeout)}
	}
	return nil
}

// IBRoute dumps the forwarding table of the switch at t as ibroute does:
// NodeInfo, NodeDescription and SwitchInfo of the switch, its LFT (or
// MFT with Multicast) blocks over the range, and for each unicast entry
// the NodeDescription, PortInfo and NodeInfo of the LID's port (unless
// NoDests). addr is the switch's address as the header prints it
// (LIDAddress, DRAddress). A block that cannot be read ends the table
// (Stopped), as in ibroute; a target that is not a switch, or does not
// answer, is an error with ibroute's text.
func IBRoute(ctx context.Context, e *Env, t engine.Target, addr string, o *RouteOptions) (*ForwardingTable, error) {
	if o == nil {
		o = &RouteOptions{}
	}
	if e == nil || e.Session == nil {
		return nil, errors.New("diag: ibroute: no session (the tool needs a fabric)")
	}
	s := e.Session
	co := callOpts(o)
	niData, err := s.SMP(ctx, t, mad.MethodGet, smp.AttrNodeInfo, 0, nil, co...)
	if err != nil {
		return nil, &ToolError{Msg: "node info failed: valid addr?", Err: err}
	}
	var ni smp.NodeInfo
	if err := ni.UnmarshalBinary(niData); err != nil {
		return nil, &ToolError{Msg: "node info failed: valid addr?", Err: err}
	}
	ndData, err := s.SMP(ctx, t, mad.MethodGet, smp.AttrNodeDescription, 0, nil, co...)
	if err != nil {
		return nil, &ToolError{Msg: "node desc failed", Err: err}
	}
	if ni.NodeType != smp.NodeTypeSwitch {
		return nil, ErrNotSwitch
	}
	siData, err := s.SMP(ctx, t, mad.MethodGet, smp.AttrSwitchInfo, 0, nil, co...)
	if err != nil {
		return nil, fmt.Errorf("switch info failed: is a switch node?: %w", err)
	}
	var si smp.SwitchInfo
	if err := si.UnmarshalBinary(siData); err != nil {
		return nil, fmt.Errorf("switch info failed: is a switch node?: %w", err)
	}
	sw := &routeSwitch{
		target: t, addr: addr, guid: ni.NodeGUID, desc: cString(ndData),
		nports: int(ni.NumPorts), si: si,
	}
	r := &router{s: s, o: o, co: co, names: e.NodeNames, stop: true, unknown: "unknown node and type"}
	if o.Multicast {
		return r.multicast(ctx, sw), nil
	}
	ft := r.unicast(ctx, sw, r.resolveByLID)
	return ft, nil
}

// cString is a NodeDescription's text up to its first NUL.
func cString(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	if i := strings.IndexByte(string(b), 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// routeSwitch is what a table dump needs to know of its switch.
type routeSwitch struct {
	target engine.Target
	addr   string
	guid   uint64
	desc   string
	nports int
	lid    uint16
	si     smp.SwitchInfo

	warnings []string
}

// router dumps tables with one tool's rules: ibroute stops at a failed
// block (stop), dump_fts goes on with the previous block's contents.
type router struct {
	s     *engine.Session
	o     *RouteOptions
	co    []engine.CallOption
	names map[uint64]string
	stop  bool
	// unknown is the text of a LID whose port is unknown: ibroute asks
	// the LID, dump_fts looks in its discovery.
	unknown string
}

// blocks reads the blocks of one attribute concurrently, each mods[i] its
// modifier, and returns the data and errors in order.
func (r *router) blocks(ctx context.Context, t engine.Target, attr uint16, mods []uint32) []engine.SweepResult {
	reqs := make([]engine.SweepReq, len(mods))
	for i, m := range mods {
		reqs[i] = engine.SweepReq{Target: t, Method: mad.MethodGet, AttrID: attr, AttrMod: m}
	}
	// One pass over the blocks, as ibroute asks them (engine.Passes(1)).
	return r.s.Sweep(ctx, reqs, nil, append(r.co[:len(r.co):len(r.co)], engine.Passes(1))...)
}

func blockError(mod uint32, err error) BlockError {
	be := BlockError{AttrMod: mod, Error: err.Error()}
	var se *engine.StatusError
	if errors.As(err, &se) {
		be.Status = se.Status
	}
	return be
}

// resolved is a LID's port as dump_lid reads it.
type resolved struct {
	ok       bool
	nodeGUID uint64
	portGUID uint64
	typ      uint8
	baseLID  uint16
	lmc      uint8
	desc     string
}

// resolveByLID asks each LID's port for its NodeDescription, PortInfo and
// NodeInfo (ibroute's 100 ms timeout each), all LIDs concurrently.
func (r *router) resolveByLID(ctx context.Context, lids []uint16) []resolved {
	attrs := []uint16{smp.AttrNodeDescription, smp.AttrPortInfo, smp.AttrNodeInfo}
	reqs := make([]engine.SweepReq, 0, 3*len(lids))
	for _, l := range lids {
		for _, a := range attrs {
			reqs = append(reqs, engine.SweepReq{Target: engine.LID(l), Method: mad.MethodGet, AttrID: a})
		}
	}
	co := []engine.CallOption{engine.Timeout(100 * time.Millisecond), engine.Passes(1)}
	res := r.s.Sweep(ctx, reqs, nil, co...)
	out := make([]resolved, len(lids))
	for i := range lids {
		nd, pi, ni := res[3*i], res[3*i+1], res[3*i+2]
		if nd.Err != nil || pi.Err != nil || ni.Err != nil {
			continue
		}
		var p smp.PortInfo
		var n smp.NodeInfo
		if p.UnmarshalBinary(pi.Data) != nil || n.UnmarshalBinary(ni.Data) != nil {
			continue
		}
		out[i] = resolved{ok: true, nodeGUID: n.NodeGUID, portGUID: n.PortGUID, typ: n.NodeType,
			baseLID: p.LID, lmc: p.LMC, desc: cString(nd.Data)}
	}
	return out
}

// resolveInFabric finds each LID's port in a discovered fabric, as
// dump_fts does with ibnd_find_port_lid.
func resolveInFabric(f *topo.Fabric) func(context.Context, []uint16) []resolved {
	byLID := map[uint16]*topo.Port{}
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 || p.LID > 0xbfff {
				continue
			}
			for k := range uint16(1) << p.LMC {
				if _, dup := byLID[p.LID+k]; !dup {
					byLID[p.LID+k] = p
				}
			}
		}
	}
	return func(_ context.Context, lids []uint16) []resolved {
		out := make([]resolved, len(lids))
		for i, l := range lids {
			p := byLID[l]
			if p == nil {
				continue
			}
			out[i] = resolved{ok: true, nodeGUID: p.Node.GUID, portGUID: p.GUID, typ: uint8(p.Node.Type),
				baseLID: p.LID, lmc: p.LMC, desc: p.Node.Desc}
		}
		return out
	}
}

// unicast dumps sw's LFT over the options' range.
func (r *router) unicast(ctx context.Context, sw *routeSwitch, resolve func(context.Context, []uint16) []resolved) *ForwardingTable {
	o := r.o
	start, end := int(o.StartLID), int(o.EndLID)
	top := int(sw.si.LinearFDBTop)
	if end == 0 || end > top {
		end = top
	}
	if end > 0xbfff {
		sw.warn(fmt.Sprintf("illegal lft top %d, truncate to %d", end, 0xbfff))
		end = 0xbfff
	}
	ft := sw.table(o, r.names, false, uint32(start), uint32(end))
	startBlock, endBlock := start/64, (end+63)/64
	var mods []uint32
	for b := startBlock; b < endBlock; b++ {
		mods = append(mods, uint32(b))
	}
	res := r.blocks(ctx, sw.target, smp.AttrLinearForwardingTable, mods)
	// The entries to print, with the LIDs to resolve.
	type row struct {
		lid   int
		port  uint8
		valid bool
	}
	var rows []row
	var lft [64]byte
	for k, b := range mods {
		if err := res[k].Err; err != nil {
			ft.Errors = append(ft.Errors, blockError(b, err))
			if r.stop {
				ft.Stopped = true
				break
			}
		} else {
			lft = decode[smp.LinearForwardingTable](res[k].Data).Ports
		}
		i, e := int(b)*64, int(b)*64+64
		i, e = max(i, start), min(e, end+1)
		for ; i < e; i++ {
			port := lft[i%64]
			valid := int(port) <= sw.nports
			if !valid && !o.All {
				continue
			}
			rows = append(rows, row{i, port, valid})
		}
	}
	var res2 []resolved
	if !o.NoDests {
		var lids []uint16
		for _, rw := range rows {
			if rw.valid {
				lids = append(lids, uint16(rw.lid))
			}
		}
		got := resolve(ctx, lids)
		res2 = make([]resolved, 0, len(rows))
		k := 0
		for _, rw := range rows {
			if rw.valid {
				res2 = append(res2, got[k])
				k++
			} else {
				res2 = append(res2, resolved{})
			}
		}
	}
	// dump_lid's state: the LMC range of the last port resolved.
	var lastLID, baseLID int
	var portGUID uint64
	for k, rw := range rows {
		e := LFTEntry{LID: uint16(rw.lid), Port: rw.port, Valid: rw.valid}
		if !o.NoDests {
			switch {
			case rw.lid <= lastLID:
				switch {
				case !rw.valid:
					e.Info = fmt.Sprintf(": (path #%d - illegal port)", rw.lid-baseLID)
				case portGUID == 0:
					e.Info = fmt.Sprintf(": (path #%d out of %d)", rw.lid-baseLID+1, lastLID-baseLID+1)
				default:
					e.Info = fmt.Sprintf(": (path #%d out of %d: portguid 0x%016x)", rw.lid-baseLID+1, lastLID-baseLID+1, portGUID)
				}
			case !rw.valid:
				e.Info = ": (illegal port)"
			default:
				d := res2[k]
				portGUID = 0
				if !d.ok {
					e.Info = ": (" + r.unknown + ")"
					break
				}
				portGUID = d.portGUID
				if d.lmc > 0 {
					baseLID = int(d.baseLID)
					lastLID = int(d.baseLID) + 1<<d.lmc - 1
				}
				e.Dest = &RouteDest{Type: nodeTypeName(d.typ), PortGUID: GUID(d.portGUID), Name: remapName(r.names, d.nodeGUID, d.desc)}
				e.Info = fmt.Sprintf(": (%s portguid %s: '%s')", e.Dest.Type, e.Dest.PortGUID, e.Dest.Name)
				if len(e.Info) > lftInfoMax {
					// ibroute's and dump_fts' str[200]: a long mapped
					// name is cut there, as snprintf cuts it.
					e.Info = e.Info[:lftInfoMax]
				}
			}
		}
		ft.LIDs = append(ft.LIDs, e)
	}
	return ft
}

// lftInfoMax is the most of an LFT entry's destination text ibroute and
// dump_fts print: what fits their 200-byte buffer.
const lftInfoMax = 199

func (sw *routeSwitch) warn(s string) { sw.warnings = append(sw.warnings, s) }

func (sw *routeSwitch) table(o *RouteOptions, names map[uint64]string, mc bool, start, end uint32) *ForwardingTable {
	return &ForwardingTable{
		Switch: sw.addr, GUID: GUID(sw.guid), Name: remapName(names, sw.guid, sw.desc),
		NumPorts: sw.nports, Multicast: mc, All: o.All, Brief: o.NoDests, Start: start, End: end,
		Warnings: sw.warnings, LID: sw.lid,
	}
}

// multicast dumps sw's MFT over the options' range.
func (r *router) multicast(ctx context.Context, sw *routeSwitch) *ForwardingTable {
	o := r.o
	const minMLID, maxMLID = 0xc000, 0xffff
	start, end := o.StartLID, o.EndLID
	capacity, top := uint32(sw.si.MulticastFDBCap), uint32(sw.si.MulticastFDBTop)
	if end == 0 || end > minMLID+capacity-1 {
		end = minMLID + capacity - 1
	}
	if !o.All && top != 0 && top < end {
		if top < minMLID-1 {
			sw.warn(fmt.Sprintf("illegal top mlid %x", top))
		} else {
			end = top
		}
	}
	if start == 0 {
		start = minMLID
	} else if start < minMLID {
		sw.warn(fmt.Sprintf("illegal start mlid %x, set to %x", start, minMLID))
		start = minMLID
	}
	if end > maxMLID {
		sw.warn(fmt.Sprintf("illegal end mlid %x, truncate to %x", end, maxMLID))
		end = maxMLID
	}
	ft := sw.table(o, r.names, true, start, end)
	ft.MFTCap, ft.MFTTop, ft.Verbose = sw.si.MulticastFDBCap, sw.si.MulticastFDBTop, o.Verbose
	chunks := (sw.nports + 1 + 15) / 16
	startBlock, lastBlock := start/32, end/32
	var mods []uint32
	for b := startBlock; b <= lastBlock; b++ {
		for j := range chunks {
			mods = append(mods, (b-minMLID/32)|uint32(j)<<28)
		}
	}
	res := r.blocks(ctx, sw.target, smp.AttrMulticastForwardingTable, mods)
	var mft [16][32]uint16
	k := 0
	for b := startBlock; b <= lastBlock; b++ {
		for j := range chunks {
			if err := res[k].Err; err != nil {
				ft.Errors = append(ft.Errors, blockError(mods[k], err))
				if r.stop {
					ft.Stopped = true
					return ft
				}
			} else {
				mft[j] = decode[smp.MulticastForwardingTable](res[k].Data).PortMask
			}
			k++
		}
		i, e := b*32, b*32+32
		i, e = max(i, start), min(e, end+1)
		for ; i < e; i++ {
			me := MFTEntry{MLID: uint16(i), Ports: []int{}}
			nonzero := false
			for c := range chunks {
				m := mft[c][i%32]
				me.Masks = append(me.Masks, m)
				nonzero = nonzero || m != 0
			}
			if !nonzero && !o.All {
				continue
			}
			for p := 0; p <= sw.nports; p++ {
				if me.Masks[p/16]&(1<<(p%16)) != 0 {
					me.Ports = append(me.Ports, p)
				}
			}
			ft.MLIDs = append(ft.MLIDs, me)
		}
	}
	return ft
}

// WriteIBRoute prints ft as ibroute (and dump_fts, per switch) prints it.
func WriteIBRoute(w io.Writer, ft *ForwardingTable) error {
	bw := bufio.NewWriter(w)
	valid := "valid "
	if ft.All {
		valid = ""
	}
	if !ft.Multicast {
		fmt.Fprintf(bw, "Unicast lids [0x%x-0x%x] of switch %s guid %s (%s):\n", ft.Start, ft.End, ft.Switch, ft.GUID, ft.Name)
		bw.WriteString("  Lid  Out   Destination\n")
		bw.WriteString("       Port     Info \n")
		for _, e := range ft.LIDs {
			fmt.Fprintf(bw, "0x%04x %03d %s\n", e.LID, e.Port, e.Info)
		}
		if !ft.Stopped {
			fmt.Fprintf(bw, "%d %slids dumped \n", len(ft.LIDs), valid)
		}
		return bw.Flush()
	}
	fmt.Fprintf(bw, "Multicast mlids [0x%x-0x%x] of switch %s guid %s (%s):\n", ft.Start, ft.End, ft.Switch, ft.GUID, ft.Name)
	if ft.Brief {
		bw.WriteString(" MLid       Port Mask\n")
	} else {
		if ft.NumPorts > 9 {
			bw.WriteString("            ")
			for i := 0; i <= ft.NumPorts; i++ {
				if i%10 != 0 {
					bw.WriteString("  ")
				} else {
					fmt.Fprintf(bw, "%c ", '0'+byte(i/10))
				}
			}
			bw.WriteString("\n")
		}
		bw.WriteString("     Ports: ")
		for i := 0; i <= ft.NumPorts; i++ {
			fmt.Fprintf(bw, "%d ", i%10)
		}
		bw.WriteString("\n MLid\n")
	}
	if ft.Verbose {
		fmt.Fprintf(bw, "Switch multicast mlid capability is %d top is 0x%x\n", ft.MFTCap, ft.MFTTop)
	}
	for _, e := range ft.MLIDs {
		fmt.Fprintf(bw, "0x%04x      ", e.MLID)
		if ft.Brief {
			for _, m := range e.Masks {
				fmt.Fprintf(bw, "%04x", m)
			}
		} else {
			for p := 0; p <= ft.NumPorts; p++ {
				if e.Masks[p/16]&(1<<(p%16)) != 0 {
					bw.WriteString("x ")
				} else {
					bw.WriteString("  ")
				}
			}
		}
		bw.WriteString("\n")
	}
	if !ft.Stopped {
		fmt.Fprintf(bw, "%d %smlids dumped \n", len(ft.MLIDs), valid)
	}
	return bw.Flush()
}

// WriteRouteErrors prints a table's block errors as the C tool prints
// them on stderr: tool is "ibroute" or "dump_fts".
func WriteRouteErrors(w io.Writer, tool string, ft *ForwardingTable) {
	for _, e := range ft.Errors {
		if tool == "ibroute" {
			fmt.Fprintf(w, "SubnGet() failed; MAD status 0x%x AM 0x%x\n", e.Status, e.AttrMod)
			continue
		}
		what := "LFT"
		if ft.Multicast {
			what = "MFT"
		}
		fmt.Fprintf(w, "SubnGet(%s) failed on switch '%s' %s Node GUID 0x%x SMA LID %d; MAD status 0x%x AM 0x%x\n",
			what, ft.Name, ft.Switch, uint64(ft.GUID), ft.LID, e.Status, e.AttrMod)
	}
}

// WriteIBExit prints an infiniband-diags tool's fatal error as its
// IBEXIT does, on stdout (w) before it exits with status 255: prog is
// the program name as invoked (argv[0]).
func WriteIBExit(w io.Writer, prog, msg string) error {
	_, err := fmt.Fprintf(w, "%s: iberror: failed: %s\n", prog, msg)
	return err
}
