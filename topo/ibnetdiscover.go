package topo

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ibscript/ibscript/mad/smp"
)

// WriteOptions tune WriteIBNetDiscover.
type WriteOptions struct {
	// Time is printed in the "generated on" header line; zero means now.
	Time time.Time
	// NameMap maps node GUIDs to names shown instead of the node
	// description, as ibnetdiscover's --node-name-map does.
	NameMap map[uint64]string
	// Grouping is ibnetdiscover -g: the chassis group_nodes forms from
	// shared system image GUIDs (ChassisGroups) in their sections, then
	// the other nodes under a "Non-Chassis Nodes" title; each switchguid
	// line ends in a tab and "# ". Voltaire switches, Mellanox IS4 boards
	// and Xsigo nodes, which chassis.c treats by rules of their own, are
	// not modelled: callers refuse them.
	Grouping bool
	// Full is ibnetdiscover -f: each link line ends in " s=%d w=%d v=%d",
	// the port's LinkSpeedActive, LinkWidthActive and VLCap as PortInfo
	// gives them (a switch port's speed 0 when the switch's port 0 is
	// unknown, as ibnetdiscover prints it).
	Full bool
	// Scan is ibnetdiscover -m: the two lines after the "Topology file"
	// header, libibnetdisc's longest route and its SMP count.
	Scan *ScanReport
}

// ScanReport is what ibnetdiscover -m reports of libibnetdisc's scan.
type ScanReport struct {
	MaxHops int // maxhops_discovered
	MADs    int // total_mads_used
}

// WriteIBNetDiscover writes f in ibnetdiscover's default topology format,
// byte for byte as infiniband-diags 44 prints it: switches, then CAs, then
// routers, each group in reverse discovery order (libibnetdisc prepends
// every node it finds to its type's list), with ibnetdiscover's node ids
// ("S-", "H-", "R-" and the 16-digit GUID) so the two outputs diff cleanly.
// Only the "generated on" date differs between runs.
func WriteIBNetDiscover(w io.Writer, f *Fabric, opts *WriteOptions) error {
	if opts == nil {
		opts = &WriteOptions{}
	}
	t := opts.Time
	if t.IsZero() {
		t = time.Now()
	}
	bw := bufio.NewWriter(w)
	// ctime(3) format, which ends in a newline.
	fmt.Fprintf(bw, "#\n# Topology file: generated on %s\n#\n", t.Format("Mon Jan _2 15:04:05 2006"))
	if r := opts.Scan; r != nil {
		fmt.Fprintf(bw, "# Reported max hops discovered: %d\n# Total MADs used: %d\n", r.MaxHops, r.MADs)
	}
	if o := f.Origin; o != nil {
		fmt.Fprintf(bw, "# Initiated from node %016x port %016x\n", o.Node.GUID, o.GUID)
	}
	// Planarized CAs (ibscript's; comments to ibnetdiscover's and ibsim's
	// parsers), by the ids written below, so the text loads back with its
	// planes.
	for _, n := range f.Nodes {
		if l := PlanarizedLine(n, NodeIDFor(n.Type, n.GUID)); l != "" {
			bw.WriteString(l)
			bw.WriteByte('\n')
		}
	}
	wr := &ibndWriter{w: bw, names: opts.NameMap, grouping: opts.Grouping, full: opts.Full}
	if opts.Grouping {
		var groups []Chassis
		groups, wr.chassis = ChassisGroups(f)
		for _, ch := range groups {
			fmt.Fprintf(bw, "\nChassis %d (guid 0x%x)\n", ch.Num, ch.GUID)
			// Spine and line boards are Voltaire's and Mellanox IS4's
			// (not written here: callers refuse them).
			bw.WriteString("\n# Spine Nodes\n# Line Nodes\n# Chassis Switches")
			for _, n := range ch.Nodes {
				if n.Type == Switch {
					wr.node(n)
				}
			}
			bw.WriteString("\n# Chassis CAs")
			for _, n := range ch.Nodes {
				if n.Type == CA {
					wr.node(n)
				}
			}
		}
		bw.WriteString("\nNon-Chassis Nodes\n")
	}
	for _, typ := range []NodeType{Switch, CA, Router} {
		for i := len(f.Nodes) - 1; i >= 0; i-- {
			// With -g a chassis's nodes were written in its section;
			// its routers are written nowhere, as by ibnetdiscover.
			if n := f.Nodes[i]; n.Type == typ && wr.chassis[n] == 0 {
				wr.node(n)
			}
		}
	}
	return bw.Flush()
}

type ibndWriter struct {
	w     *bufio.Writer
	names map[uint64]string
	buf   []byte // a node's link lines
	// grouping, full: WriteOptions.Grouping, Full.
	grouping, full bool
	// chassis is each chassis node's chassis number (-g).
	chassis map[*Node]int
}

// Chassis is a chassis libibnetdisc's group_nodes forms from nodes that
// share a chassis GUID: their system image GUID (Topspin's and
// SilverStorm's without its slot byte), for nodes of other vendors than
// Voltaire. (Voltaire's chassis, Mellanox IS4 boards and Xsigo's rules
// are not modelled: callers refuse fabrics that have them.)
type Chassis struct {
	Num   int    // chassisnum, from 1
	GUID  uint64 // the chassis GUID
	Nodes []*Node
}

// Vendor IDs of chassis.c's rules.
const (
	vendorVoltaire    = 0x08f1
	vendorTopspin     = 0x05ad
	vendorSilverStorm = 0x066a
)

// ChassisGroups returns the chassis group_nodes forms in f (nodes in
// discovery order: f.Nodes's is libibnetdisc's), numbered as
// libibnetdisc numbers them (newest node first), and each chassis node's
// number.
func ChassisGroups(f *Fabric) ([]Chassis, map[*Node]int) {
	key := func(n *Node) uint64 {
		if n.VendorID == vendorTopspin || n.VendorID == vendorSilverStorm {
			return n.SysGUID & 0xffffffff00ffffff
		}
		return n.SysGUID
	}
	count := map[uint64]int{}
	for _, n := range f.Nodes {
		if n.VendorID != vendorVoltaire && n.SysGUID != 0 {
			count[key(n)]++
		}
	}
	var groups []Chassis
	idx := map[uint64]int{}
	num := map[*Node]int{}
	// libibnetdisc walks its node list, newest first, numbering chassis
	// as it meets them and prepending each node to its chassis's list.
	for i := len(f.Nodes) - 1; i >= 0; i-- {
		n := f.Nodes[i]
		if n.VendorID == vendorVoltaire || n.SysGUID == 0 || count[key(n)] < 2 {
			continue
		}
		k := key(n)
		j, ok := idx[k]
		if !ok {
			j = len(groups)
			idx[k] = j
			groups = append(groups, Chassis{Num: j + 1, GUID: k})
		}
		groups[j].Nodes = append([]*Node{n}, groups[j].Nodes...)
		num[n] = groups[j].Num
	}
	return groups, num
}

// name is remap_node_name: the mapped name, else the cleaned description.
func (wr *ibndWriter) name(n *Node) string { return MappedName(n, wr.names) }

// MappedName is the name infiniband-diags prints for n given a
// node-name-map (remap_node_name): the mapped name, else the description
// as clean_nodedesc cleans it.
func MappedName(n *Node, names map[uint64]string) string {
	if s, ok := names[n.GUID]; ok {
		return cleanMapName(s)
	}
	return cleanDesc(n.Desc)
}

// cleanMapName is a node-name-map's name as ibscript prints it. The C
// tools print the map's bytes as they are (remap_node_name cleans only
// descriptions from the wire), so a name in UTF-8 ("höst") or with a tab
// prints the same here; but a control byte (an escape sequence, DEL, a
// C1 control) or a byte that is not UTF-8 becomes a space, so that a map
// cannot write to a terminal or a report what none from the wire can
// (docs/diag.md).
func cleanMapName(s string) string {
	ok := func(r rune, size int) bool {
		switch {
		case r == utf8.RuneError && size <= 1:
			return false
		case r == '\t':
			return true
		case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
			return false
		}
		return true
	}
	clean := true
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if !ok(r, size) {
			clean = false
			break
		}
		i += size
	}
	if clean {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if ok(r, size) {
			b = append(b, s[i:i+size]...)
		} else {
			for range size {
				b = append(b, ' ')
			}
		}
		i += size
	}
	return string(b)
}

// HeaderName is the name ibnetdiscover prints in n's own node line: a
// switch's MappedName; a CA's or router's cleaned description, which
// ibnetdiscover does not map.
func HeaderName(n *Node, names map[uint64]string) string {
	if n.Type == Switch {
		return MappedName(n, names)
	}
	return cleanDesc(n.Desc)
}

// cleanDesc is clean_nodedesc (infiniband-diags' node-name-map code): the
// description ends at its first NUL and after 63 bytes (it writes a NUL at
// index 63 of the 64-byte field), and every byte that is not printable in
// the C locale (0x20-0x7e) becomes a space, one byte at a time, so a
// two-byte UTF-8 character becomes two spaces, as ibnetdiscover prints it.
func cleanDesc(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		s = s[:i]
	}
	if len(s) > 63 {
		s = s[:63]
	}
	return cleanName(s)
}

// cleanName is cleanDesc's byte rule without its length: every byte that
// is not printable in the C locale (0x20-0x7e) becomes a space. Names
// from a node-name-map go through it where they are used (Rename, the
// ibnetdiscover writer), so a NUL, an escape sequence or invalid UTF-8 in
// a map reaches no terminal or report, as none from the wire does.
func cleanName(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = ' '
		}
	}
	return string(b)
}

func (wr *ibndWriter) node(n *Node) {
	wr.header(n, "", "")
	// The link lines are most of the output: formatted by hand into a
	// scratch buffer (as fmt would: %d, %x, and ids quoted, which are
	// "S-"/"H-"/"R-" and hex digits, so quoting adds only the quotes).
	b := wr.buf[:0]
	for p := 1; p <= n.NumPorts && p < len(n.Ports); p++ {
		b = wr.link(b, n.Ports[p], "")
	}
	wr.w.Write(b)
	wr.buf = b
}

// header prints a node's id lines (vendid, devid, sysimgguid and the
// switchguid, caguid or rtguid line), each after idPre, and its detail
// line after detailPre: ibnetdiscover's out_switch and out_ca.
func (wr *ibndWriter) header(n *Node, idPre, detailPre string) {
	w := wr.w
	fmt.Fprintf(w, "\n%svendid=0x%x\n%sdevid=0x%x\n", idPre, n.VendorID, idPre, n.DeviceID)
	if n.SysGUID != 0 {
		fmt.Fprintf(w, "%ssysimgguid=0x%x", idPre, n.SysGUID)
	}
	if c := wr.chassis[n]; c != 0 {
		fmt.Fprintf(w, "\t\t# Chassis %d", c)
	}
	if n.SysGUID != 0 || wr.chassis[n] != 0 {
		w.WriteByte('\n')
	}
	switch n.Type {
	case Switch:
		fmt.Fprintf(w, "%sswitchguid=0x%x(%x)", idPre, n.GUID, n.port(0).GUID)
		if wr.grouping {
			w.WriteString("\t# ")
		}
		w.WriteByte('\n')
	default:
		idKind := "ca"
		if n.Type == Router {
			idKind = "rt"
		}
		fmt.Fprintf(w, "%s%sguid=0x%x\n", idPre, idKind, n.GUID)
	}
	wr.detail(n, detailPre)
	w.WriteByte('\n')
}

// detail prints a node's own line, after pre, without its newline:
// ibnetdiscover's out_switch_detail and out_ca_detail.
func (wr *ibndWriter) detail(n *Node, pre string) {
	id := NodeIDFor(n.Type, n.GUID)
	if n.Type == Switch {
		p0 := n.port(0)
		mode := "base"
		if n.EnhancedPort0 {
			mode = "enhanced"
		}
		fmt.Fprintf(wr.w, "%sSwitch\t%d %q\t\t# \"%s\" %s port 0 lid %d lmc %d",
			pre, n.NumPorts, id, HeaderName(n, wr.names), mode, p0.LID, p0.LMC)
		return
	}
	kind := "Ca"
	if n.Type == Router {
		kind = "Rt"
	}
	fmt.Fprintf(wr.w, "%s%s\t%d %q\t\t# \"%s\"", pre, kind, n.NumPorts, id, HeaderName(n, wr.names))
}

// link appends port's link line, after pre, to b: ibnetdiscover's
// out_switch_port and out_ca_port. A port without a link prints nothing.
func (wr *ibndWriter) link(b []byte, port *Port, pre string) []byte {
	if port == nil || port.Remote == nil {
		return b
	}
	n, p := port.Node, port.Num
	r := port.Remote
	rid := NodeIDFor(r.Node.Type, r.Node.GUID)
	rlid := r.LID
	if r.Node.Type == Switch {
		rlid = r.Node.port(0).LID
	}
	b = append(b, pre...)
	b = append(b, '[')
	b = strconv.AppendInt(b, int64(p), 10)
	b = append(b, ']')
	if n.Type != Switch {
		b = append(b, '(')
		b = strconv.AppendUint(b, port.GUID, 16)
		b = append(b, ") "...)
	}
	b = append(b, "\t\""...)
	b = append(b, rid...)
	b = append(b, "\"["...)
	b = strconv.AppendInt(b, int64(r.Num), 10)
	b = append(b, ']')
	if r.Node.Type != Switch {
		if n.Type != Switch {
			b = append(b, ' ')
		}
		b = append(b, '(')
		b = strconv.AppendUint(b, r.GUID, 16)
		b = append(b, ") "...)
	}
	b = append(b, "\t\t# "...)
	if n.Type != Switch {
		b = append(b, "lid "...)
		b = strconv.AppendUint(b, uint64(port.LID), 10)
		b = append(b, " lmc "...)
		b = strconv.AppendUint(b, uint64(port.LMC), 10)
		b = append(b, ' ')
	}
	b = append(b, '"')
	b = append(b, wr.name(r.Node)...)
	b = append(b, "\" lid "...)
	b = strconv.AppendUint(b, uint64(rlid), 10)
	b = append(b, ' ')
	b = append(b, linkText(port)...)
	if wr.full {
		speed := port.SpeedActive
		if n.Type == Switch && (len(n.Ports) == 0 || n.Ports[0] == nil) {
			speed = 0
		}
		b = append(b, " s="...)
		b = strconv.AppendUint(b, uint64(speed), 10)
		b = append(b, " w="...)
		b = strconv.AppendUint(b, uint64(port.WidthActive), 10)
		b = append(b, " v="...)
		b = strconv.AppendUint(b, uint64(port.VLCap), 10)
	}
	return append(b, '\n')
}

// port returns port i, or an empty port so that a partly discovered node
// still prints.
func (n *Node) port(i int) *Port {
	if i < len(n.Ports) && n.Ports[i] != nil {
		return n.Ports[i]
	}
	return &Port{Node: n, Num: i}
}

// linkText is ibnetdiscover's "4xQDR" text for a port's active link
// ("4xFDR10" where MlnxExtPortInfo has FDR10 active and no extended
// speed is).
func linkText(p *Port) string {
	if p.FDR10Active() {
		return smp.WidthShortName(p.WidthActive) + "FDR10"
	}
	return smp.LinkText(p.WidthActive, p.SpeedActive, p.SpeedExtActive)
}
