package diag

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// ibnetdiscover: the fabric in its topology format (topo's writer, the
// one `ibscript discover` prints), its node lists (-l, -H, -S, -R) and its
// ports report (-p).

// NetDiscoverOptions are ibnetdiscover's output options.
type NetDiscoverOptions struct {
	// List (-l, -H, -S, -R) lists the nodes of these types, in this
	// order, one line each; nil prints the topology.
	List []topo.NodeType
	// Ports (-p) prints the ports report instead.
	Ports bool
	// Grouping (-g) prints the topology grouped by chassis; only a
	// fabric where libibnetdisc forms no chassis is supported
	// (ChassisNode).
	Grouping bool
	// Full (-f) ends each link line of the topology in the port's
	// " s=%d w=%d v=%d" (speed, width, VLCap).
	Full bool
	// MaxHops (-m) reports libibnetdisc's longest route and its SMP count
	// for this fabric (NetDiscover.Scan).
	MaxHops bool
	// Diff (--diff), when set, is the fabric of a cache the text compares
	// this one with (topo.WriteIBNetDiscoverDiff), checking DiffCheck
	// (--diffcheck; ibnetdiscover checks topo.DiffDefault without it). -p
	// and the lists take precedence, as in ibnetdiscover.
	Diff      *topo.Fabric
	DiffCheck topo.DiffCheck
	// Show (-s) prints libibnetdisc's progress lines (one per NodeInfo
	// answer, in its order) on stdout before the rest.
	Show bool
}

// Vendor IDs libibnetdisc's chassis.c knows.
const (
	vendorVoltaire   = 0x08f1
	vendorMellanox   = 0x02c9
	vendorXsigo      = 0x1397
	devIDMellanoxIS4 = 0xbd36
)

// ChassisNode returns a node libibnetdisc's group_nodes treats by a rule
// ibscript's -g does not write yet, and why; nil when -g prints the
// fabric as ibnetdiscover does (topo.ChassisGroups: chassis of nodes
// sharing a system image GUID, the rest under "Non-Chassis Nodes"). The
// rules not written: a Voltaire switch's (chassis records from its
// device ID, spines, external port maps); a Mellanox IS4 switch's (device
// 0xbd36: line and spine boards from its description); Xsigo's (chassis
// GUIDs of their own, "slot" and "(scp)" marks).
func (nd *NetDiscover) ChassisNode() (*NDNode, string) {
	for i := range nd.Nodes {
		n := &nd.Nodes[i]
		switch {
		case n.VendorID == vendorVoltaire && n.Type == "Switch":
			return n, fmt.Sprintf("a Voltaire switch (vendor 0x%x)", n.VendorID)
		case n.VendorID == vendorMellanox && n.DeviceID == devIDMellanoxIS4 && n.Type == "Switch":
			return n, fmt.Sprintf("a Mellanox IS4 switch (device 0x%x)", n.DeviceID)
		case n.VendorID == vendorXsigo || xsigoGUID(uint64(n.SysGUID)) || xsigoGUID(uint64(n.GUID)):
			return n, "a Xsigo node"
		}
	}
	return nil, ""
}

// xsigoGUID is ibnd_is_xsigo_guid.
func xsigoGUID(g uint64) bool { return g&0xffffff0000000000 == 0x0013970000000000 }

// NetDiscover is ibnetdiscover's data: docs/diag/ibnetdiscover.schema.json.
type NetDiscover struct {
	Nodes []NDNode `json:"nodes"`
	// Scan (-m) is what libibnetdisc's scan of this fabric takes: its
	// longest directed route and the SMPs it sends, worked out by
	// replaying its query order over the discovered fabric (ibscript's
	// own sweep sends a different set).
	Scan *NDScan `json:"scan,omitempty"`
	// Progress (-s) is libibnetdisc's progress lines, in its order: each
	// route it probed, "new" or "known", and the node at its end as it
	// knew the node then.
	Progress []string `json:"progress,omitempty"`

	fabric *topo.Fabric
	names  map[uint64]string
	o      NetDiscoverOptions
}

// NDScan is ibnetdiscover -m's report.
type NDScan struct {
	MaxHops int `json:"max_hops_discovered"`
	MADs    int `json:"mads_used"`
	// Unmodelled counts the SMPs of libibnetdisc's scan that the replay
	// could not work out, each asking a port discovery did not read (a
	// discovery that missed part of the fabric): MaxHops and MADs are
	// then those of the part found. ibnetdiscover reports no such
	// count; ibscript says it on stderr.
	Unmodelled int `json:"unmodelled_smps,omitempty"`
}

// NDNode is one node: what ibnetdiscover's node lines and lists say.
type NDNode struct {
	Type     string   `json:"type"`
	GUID     GUID     `json:"guid"`
	SysGUID  GUID     `json:"system_guid"`
	VendorID uint32   `json:"vendor_id"`
	DeviceID uint16   `json:"device_id"`
	Ports    int      `json:"ports"`
	Name     string   `json:"name"` // the node-name-map's name, else the description
	LID      uint16   `json:"lid"`  // a switch's (port 0's); 0 for other nodes
	Links    []NDPort `json:"links"`
}

// NDPort is one port discovery holds, with its link.
type NDPort struct {
	Port   int       `json:"port"`
	GUID   GUID      `json:"guid"`
	LID    uint16    `json:"lid"`
	Width  string    `json:"width"` // "4x", as the ports report prints it
	Speed  string    `json:"speed"` // "QDR", "FDR", ...
	Remote *NDRemote `json:"remote,omitempty"`
}

// NDRemote is the port at the other end of a link.
type NDRemote struct {
	Type     string `json:"type"`
	NodeGUID GUID   `json:"node_guid"`
	GUID     GUID   `json:"guid"`
	Port     int    `json:"port"`
	LID      uint16 `json:"lid"`
	Name     string `json:"name"`
}

// NetDiscoverOf discovers the fabric. A discovery that missed routes
// returns what it found and a DiscoveryErrors.
func NetDiscoverOf(ctx context.Context, e *Env, o NetDiscoverOptions) (*NetDiscover, error) {
	d, err := e.Discover(ctx)
	if err != nil {
		return nil, err
	}
	nd := NetDiscoverFrom(d.Fabric, e.NodeNames, o)
	nd.replay(d.Fabric, o)
	return nd, partial(d)
}

// replay fills -m's Scan and -s's Progress from a replay of libibnetdisc's
// scan over f.
func (nd *NetDiscover) replay(f *topo.Fabric, o NetDiscoverOptions) {
	if !o.MaxHops && !o.Show {
		return
	}
	r := replayIBND(f, ibndStart{}, 0)
	if o.MaxHops {
		nd.Scan = &NDScan{MaxHops: r.MaxHops, MADs: r.SMPs, Unmodelled: r.Unknown}
	}
	if o.Show {
		nd.Progress = progressLines(r.Events)
	}
}

// progressLines are libibnetdisc's show_progress lines (dump_endnode):
// the route, "new" or "known", the node's type and GUID, the port the
// route entered it by (0 on a switch), that port's LID range as far as
// it was read then (0-0 before its PortInfo) and the description as far
// as it was read (empty before its NodeDescription), as it prints it.
func progressLines(evs []ibndEvent) []string {
	lines := make([]string, 0, len(evs))
	for _, ev := range evs {
		prompt, port := "known", ev.Port
		if ev.New {
			prompt = "new"
		}
		if ev.Node.Type == topo.Switch {
			port = 0
		}
		lines = append(lines, fmt.Sprintf("%s -> %s %s {%016x} portnum %d lid %d-%d \"%s\"",
			DRAddress(append([]uint8{0}, ev.Path...), 0, 0), prompt, nodeTypeName(uint8(ev.Node.Type)), ev.Node.GUID,
			port, ev.LID, int(ev.LID)+(1<<ev.LMC)-1, ev.Desc))
	}
	return lines
}

// NetDiscoverFrom is ibnetdiscover's data of a fabric discovered or
// loaded before (ibnetdiscover --load-cache), names the node-name-map.
func NetDiscoverFrom(f *topo.Fabric, names map[uint64]string, o NetDiscoverOptions) *NetDiscover {
	nd := &NetDiscover{Nodes: []NDNode{}, fabric: f, names: names, o: o}
	// libibnetdisc's order: the newest found first.
	for i := len(f.Nodes) - 1; i >= 0; i-- {
		nd.Nodes = append(nd.Nodes, ndNode(f.Nodes[i], names))
	}
	return nd
}

// IBNDMaxHops is libibnetdisc's maxhops_discovered for a fabric
// discovered from its Origin: ibnetdiscover -m's figure, which its cache
// file's header records.
func IBNDMaxHops(f *topo.Fabric) int { return replayIBND(f, ibndStart{}, 0).MaxHops }

// Fabric is the fabric nd describes (to cache it: ibnetdiscover --cache).
func (nd *NetDiscover) Fabric() *topo.Fabric { return nd.fabric }

// ndLID is the LID ibnetdiscover prints for a port: a switch's, else the
// port's own.
func ndLID(p *topo.Port) uint16 {
	if p.Node.Type == topo.Switch {
		if p.Node.Ports[0] != nil {
			return p.Node.Ports[0].LID
		}
		return 0
	}
	return p.LID
}

func ndNode(n *topo.Node, names map[uint64]string) NDNode {
	nn := NDNode{Type: nodeType(n.Type), GUID: GUID(n.GUID), SysGUID: GUID(n.SysGUID), VendorID: n.VendorID,
		DeviceID: n.DeviceID, Ports: n.NumPorts, Name: topo.MappedName(n, names), Links: []NDPort{}}
	if n.Type == topo.Switch && n.Ports[0] != nil {
		nn.LID = n.Ports[0].LID
	}
	// The ports report goes from the last port down.
	for i := min(n.NumPorts, len(n.Ports)-1); i > 0; i-- {
		p := n.Ports[i]
		if p == nil {
			continue
		}
		np := NDPort{Port: i, GUID: GUID(p.GUID), LID: ndLID(p), Width: smp.WidthShortName(p.WidthActive), Speed: speedCompat(p)}
		if r := p.Remote; r != nil {
			np.Remote = &NDRemote{Type: nodeType(r.Node.Type), NodeGUID: GUID(r.Node.GUID), GUID: GUID(r.GUID), Port: r.Num,
				LID: ndLID(r), Name: topo.MappedName(r.Node, names)}
		}
		nn.Links = append(nn.Links, np)
	}
	return nn
}

// speedCompat is the ports report's speed: the extended speed where the
// node advertises it (its port 0's capability on a switch), else FDR10
// where MlnxExtPortInfo has it active, else SDR, DDR, QDR.
func speedCompat(p *topo.Port) string {
	ext := uint8(0)
	if capMask(p)&capExtSpeeds != 0 {
		ext = p.SpeedExtActive
	}
	name := smp.ExtSpeedShortName(ext)
	if ext == 0 {
		name = smp.SpeedShortName(p.SpeedActive)
		if p.MlnxSpeedActive&smp.MlnxSpeedFDR10 != 0 {
			name = "FDR10"
		}
	}
	if strings.HasPrefix(name, "undefined") {
		return "???"
	}
	return name
}

// ndTypeCompat is the ports report's node type.
func ndTypeCompat(t string) string {
	switch t {
	case "Switch":
		return "SW"
	case "CA":
		return "CA"
	case "Router":
		return "RT"
	}
	return "??"
}

// WriteNetDiscover prints nd as ibnetdiscover does: the topology (or the
// node lists) on out, the ports report on stdout (ibnetdiscover writes it
// there even with an output file).
func WriteNetDiscover(out, stdout io.Writer, nd *NetDiscover) error {
	if len(nd.Progress) > 0 {
		// Printed as libibnetdisc discovers, before any output.
		if _, err := io.WriteString(stdout, strings.Join(nd.Progress, "\n")+"\n"); err != nil {
			return err
		}
	}
	switch {
	case nd.o.Ports:
		w := bufio.NewWriter(stdout)
		for _, n := range nd.Nodes {
			for _, p := range n.Links {
				fmt.Fprintf(w, "%2s %5d %2d 0x%016x %s %s", ndTypeCompat(n.Type), p.LID, p.Port, uint64(p.GUID), p.Width, p.Speed)
				if r := p.Remote; r != nil {
					fmt.Fprintf(w, " - %2s %5d %2d 0x%016x ( '%s' - '%s' )\n", ndTypeCompat(r.Type), r.LID, r.Port, uint64(r.GUID), n.Name, r.Name)
				} else {
					fmt.Fprintf(w, "%36s'%s'\n", "", n.Name)
				}
			}
		}
		return w.Flush()
	case nd.o.List != nil:
		w := bufio.NewWriter(out)
		for _, t := range nd.o.List {
			kind := map[topo.NodeType]string{topo.CA: "Ca", topo.Switch: "Switch", topo.Router: "Router"}[t]
			for _, n := range nd.Nodes {
				if n.Type == nodeType(t) {
					fmt.Fprintf(w, "%s\t : 0x%016x ports %d devid 0x%x vendid 0x%x \"%s\"\n", kind, uint64(n.GUID), n.Ports, n.DeviceID, n.VendorID, n.Name)
				}
			}
		}
		return w.Flush()
	}
	wo := &topo.WriteOptions{NameMap: nd.names, Grouping: nd.o.Grouping, Full: nd.o.Full}
	if nd.o.Diff != nil {
		return topo.WriteIBNetDiscoverDiff(out, nd.o.Diff, nd.fabric, nd.o.DiffCheck, wo)
	}
	if nd.Scan != nil {
		wo.Scan = &topo.ScanReport{MaxHops: nd.Scan.MaxHops, MADs: nd.Scan.MADs}
	}
	return topo.WriteIBNetDiscover(out, nd.fabric, wo)
}
