package diag

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// ibqueryerrors: the error counters of every port of the fabric against
// thresholds, as ibqueryerrors reads and prints them. The ports are
// ibqueryerrors': ports 1 to NumPorts of every node discovery holds (all
// of a switch's, unused ones too, port 0 as well when it is an enhanced
// port 0; a CA's or router's those discovery reached); a PMA with
// AllPortSelect is asked for the sum of its ports first, and its ports
// one by one only when the sum has errors beyond a threshold.

// errorCounters are the PortCounters error counters ibqueryerrors checks,
// in its order (PortXmitWait is checked after them).
var errorCounters = []string{
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter",
	"PortRcvErrors", "PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors",
	"PortXmitDiscards", "PortXmitConstraintErrors", "PortRcvConstraintErrors",
	"LocalLinkIntegrityErrors", "ExcessiveBufferOverrunErrors", "VL15Dropped",
}

// QueryErrorsOptions are ibqueryerrors' options.
type QueryErrorsOptions struct {
	// Suppress are counters (IBA names) not checked (-s; -c adds
	// PortRcvSwitchRelayErrors), in the order given.
	Suppress []string
	// Thresholds (--threshold-file); nil: every threshold 0.
	Thresholds Thresholds
	// ThresholdsMissing: the threshold file could not be opened, which
	// ibqueryerrors ignores (its summary then reads "(null)").
	ThresholdsMissing bool
	// Data (--data) adds the data counters to ports with errors.
	Data bool
	// Passes, when above 1, asks a PMA query that could not be read
	// (engine.Unreadable: no answer after every try, answers that could
	// not be verified) again, up to Passes times in all, before it is a
	// warning: a validation plan's reading. 0 or 1: once, as
	// ibqueryerrors asks.
	Passes int
	// SkipNoLID sends no PerfMgt query to a node whose PMA has no LID
	// (the SM did not configure it: OpenSM and the embedded SM give a
	// node or port GUID of 0 none). ibqueryerrors sends it to LID 0 and
	// counts it as a PMA query failure, which ibsim bounces at once but
	// a fabric (the simulator) leaves to time out every try; with
	// SkipNoLID it is still a PMA query failure, counted as ibqueryerrors
	// counts it (the summary stays its), whose warning says "NODE port
	// N: has no LID: the SM did not configure it", in Unreadable: a
	// validation plan's reading, not the tool's.
	SkipNoLID bool
	// Details (--details) adds PortXmitDiscardDetails and
	// PortRcvErrorDetails where those counters exceed their thresholds.
	Details bool
	// CountersOnly (--counters) prints the data counters of every port
	// and checks nothing.
	CountersOnly bool
	// ReportPort (-r) adds each reported port's link.
	ReportPort bool
	// Types are the node types checked (--switch, --ca, --router); empty:
	// all.
	Types []topo.NodeType
	// PortGUID (-G/-S) and Path (-D) check only the node holding that
	// port.
	PortGUID uint64
	Path     []uint8
	// PortText is -G/-S as typed, for the warning that names it when
	// the SA cannot resolve it ("" is PortGUID in hex).
	PortText string
	// Unresolved is -G/-S's text when it reads as GUID 0
	// (LinkinfoOptions.Unresolved): no node is checked.
	Unresolved string
	// ClearErrors (-k) and ClearCounts (-K) reset the error and data
	// counters after reading them (Sets: refused on the kernel backend
	// without --allow-set).
	ClearErrors, ClearCounts bool
	// PathRecords asks the SA's PathRecords for the SLs first, as
	// ibqueryerrors does unless --skip-sl or -G/-S: where the SA does not
	// answer, QueryErrorsOf returns a *PathRecordsError and reads
	// nothing, as ibqueryerrors ends there.
	PathRecords bool
}

// QueryErrors is ibqueryerrors' data: docs/diag/queryerrors.schema.json.
type QueryErrors struct {
	Nodes []QENode `json:"nodes"` // the nodes with something printed
	// NotFound names the -G/-D port that is not in the fabric.
	NotFound string `json:"not_found,omitempty"`
	// routeErr: -D's route did not answer; ibqueryerrors then prints
	// nothing, not even its summary, and exits 0.
	routeErr error
	Summary  Summary `json:"summary"`
	// Warnings are ibqueryerrors' IBWARN lines (a PMA query that failed),
	// for stderr.
	Warnings []string `json:"warnings"`
	// Unreadable are the Warnings whose query got no answer after every
	// try or could not be verified (engine.Unreadable), not an answer
	// refusing it: what could not be read, which says nothing of the
	// fabric.
	Unreadable []string `json:"-"`
	// PortsNotRead are the ports of Summary.PortsChecked whose
	// PortCounters (or PortCountersExtended) query failed, as
	// ibqueryerrors counts them checked: a plan's count of ports read
	// leaves them out (a switch's every port when its AllPortSelect sum
	// failed).
	PortsNotRead int `json:"-"`

	countersOnly bool
}

// Summary is ibqueryerrors' summary.
type Summary struct {
	NodesChecked     int      `json:"nodes_checked"`
	BadNodes         int      `json:"bad_nodes"`
	PortsChecked     int      `json:"ports_checked"`
	BadPorts         int      `json:"bad_ports"`
	PMAQueryFailures int      `json:"pma_query_failures"`
	Thresholds       string   `json:"thresholds"` // "Thresholds: [Name = value]..." ("(null)" without a file)
	Suppressed       []string `json:"suppressed"`
}

// QENode is a node with errors (or, with --counters, its data counters).
type QENode struct {
	Type     string   `json:"type"`
	GUID     GUID     `json:"guid"`
	PortGUID GUID     `json:"port_guid"` // a switch's port 0 GUID
	Name     string   `json:"name"`
	Ports    []QEPort `json:"ports"`
}

// QEPort is one port line: the counters beyond their thresholds (or the
// data counters), in ibqueryerrors' order.
type QEPort struct {
	// Port is the port number, 255 for the sum of all ports ("ALL").
	Port     int         `json:"port"`
	GUID     GUID        `json:"guid"`
	Counters []QECounter `json:"counters"`
	// Link is the port's link (-r), as iblinkinfo gives it.
	Link *LinkPort `json:"link,omitempty"`
}

// QECounter is one counter printed.
type QECounter struct {
	Name  string `json:"name"`
	Value uint64 `json:"value"`
	// Human is ibqueryerrors' "(1.000K)" rendering where it prints one.
	Human string `json:"human,omitempty"`
	// Detail marks a PortXmitDiscardDetails / PortRcvErrorDetails field.
	Detail bool `json:"detail,omitempty"`
}

// QueryErrorsOf discovers the fabric and reads its error counters as
// ibqueryerrors does. A discovery that missed routes returns what it
// found and a DiscoveryErrors.
func QueryErrorsOf(ctx context.Context, e *Env, o QueryErrorsOptions) (*QueryErrors, error) {
	if o.PathRecords && o.PortGUID == 0 {
		if e == nil || e.Session == nil {
			return nil, fmt.Errorf("diag: no session (ibqueryerrors' PathRecords need the SA)")
		}
		if err := e.pathRecordSLs(ctx, o.Path); err != nil {
			return nil, err
		}
	}
	d, err := e.Discover(ctx)
	if err != nil {
		return nil, err
	}
	q := &QueryErrors{Nodes: []QENode{}, Warnings: []string{}, countersOnly: o.CountersOnly}
	q.Summary.Suppressed = append([]string{}, o.Suppress...)
	q.Summary.Thresholds = o.Thresholds.Text()
	if o.ThresholdsMissing {
		q.Summary.Thresholds = "(null)"
	}
	var nodes []*topo.Node
	if o.Unresolved != "" {
		q.NotFound = o.Unresolved
	} else if e.guidUnresolvedBySA(ctx, o.PortGUID, o.Path, o.Unresolved) {
		// The fallback full scan, then the node of the port as it found
		// it (see LinkinfoOf).
		q.Warnings = append(q.Warnings, unresolvedWarnings(o.PortGUID, o.PortText, "")...)
		if n := nodeOfPort(d.Fabric, o.PortGUID); n != nil {
			nodes = []*topo.Node{n}
		} else {
			q.NotFound = fmt.Sprintf("0x%x", o.PortGUID)
		}
	} else if o.PortGUID != 0 || o.Path != nil {
		n, port, entry, what, rerr := findPortNode(ctx, e, d, LinkinfoOptions{PortGUID: o.PortGUID, Path: o.Path})
		if rerr != nil {
			q.NotFound, q.routeErr = what, rerr
			return q, partial(d)
		}
		if n == nil {
			q.NotFound = what
		} else {
			if e.Loaded == nil {
				n = scannedFrom(n, port, d.Fabric, o.Path, entry, 1)
			}
			nodes = []*topo.Node{n}
		}
	} else {
		for i := len(d.Fabric.Nodes) - 1; i >= 0; i-- {
			nodes = append(nodes, d.Fabric.Nodes[i])
		}
	}
	var todo []*topo.Node
	for _, n := range nodes {
		if len(o.Types) == 0 || slices.Contains(o.Types, n.Type) {
			todo = append(todo, n)
		}
	}
	// Every node's PMA is read by its own goroutine (at most
	// queryWorkers at once; the engine's per-node window paces each
	// destination), each into its own result; the results are merged in
	// ibqueryerrors' node order.
	runs := make([]qeRun, len(todo))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(queryWorkers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				r := &runs[i]
				*r = qeRun{e: e, o: o, q: &QueryErrors{}, names: e.NodeNames}
				r.err = r.node(ctx, todo[i])
			}
		}()
	}
	for i := range todo {
		next <- i
	}
	close(next)
	wg.Wait()
	for i := range runs {
		r := &runs[i]
		if r.err != nil {
			return nil, r.err
		}
		q.Nodes = append(q.Nodes, r.q.Nodes...)
		q.Warnings = append(q.Warnings, r.q.Warnings...)
		q.Unreadable = append(q.Unreadable, r.q.Unreadable...)
		q.PortsNotRead += r.q.PortsNotRead
		s, rs := &q.Summary, &r.q.Summary
		s.NodesChecked += rs.NodesChecked
		s.BadNodes += rs.BadNodes
		s.PortsChecked += rs.PortsChecked
		s.BadPorts += rs.BadPorts
		s.PMAQueryFailures += rs.PMAQueryFailures
	}
	return q, partial(d)
}

// queryWorkers bounds the nodes whose PMAs are read at once.
const queryWorkers = 256

type qeRun struct {
	err   error  // what ended the node's reads (the run's context)
	name  string // the node's name, as node prints it
	sw    bool   // the node is a switch: its PMA is at port 0's LID
	e     *Env
	o     QueryErrorsOptions
	q     *QueryErrors
	names map[uint64]string
}

// noLIDError is a query SkipNoLID did not send: its port's PMA has no
// LID.
type noLIDError struct{ port uint8 }

func (noLIDError) Error() string { return "has no LID: the SM did not configure it" }

// pmaTarget is the LID a node's PMA is asked at for port p: a switch's
// LID, a CA's port's own.
func pmaLID(n *topo.Node, p int) uint16 {
	if n.Type == topo.Switch {
		if n.Ports[0] != nil {
			return n.Ports[0].LID
		}
		return 0
	}
	if p < len(n.Ports) && n.Ports[p] != nil {
		return n.Ports[p].LID
	}
	return 0
}

// scannedFrom is n as the C tools' partial scan from its port port holds
// it (-S/-G/-D of iblinkinfo and ibqueryerrors): libibnetdisc scans from
// that node, so of a CA or router it knows only that port; a switch's
// neighbours are one hop away, all found. What the CA's port is cabled to:
//   - -D 0 (the local node by the empty route): its true peer;
//   - -S/-G: nothing ("Port not available"): the node is addressed by the
//     LID the SA gave, and a route cannot go on through a CA;
//   - -D to a CA one hop away (a switch's neighbour from the switch, a
//     CA cabled to the local CA): nothing, as -S/-G: libibnetdisc looks
//     for the peer one hop further, through the CA, which forwards no
//     directed route;
//   - -D to a CA further away: libibnetdisc walks the route first and
//     links the CA's port to the node of the route's last hop but one, at
//     the port the route entered that node by (not the port the CA is
//     cabled to): iblinkinfo -D 0,1,5 prints port 2 of the switch the
//     route entered at 2, and so does ibscript. entry is that port, as
//     the fabric answered it (findPortNode).
//
// path is -D's route, nil for -S/-G; hops the scan's max_hops. A CA's or router's other ports are
// there when the scan reached them (partialScanNode).
func scannedFrom(n *topo.Node, port int, f *topo.Fabric, path []uint8, entry *topo.Port, hops int) *topo.Node {
	if n.Type == topo.Switch {
		return n
	}
	if m := partialScanNode(f, n, port, path, hops); m != nil {
		return m
	}
	c := *n
	c.Ports = make([]*topo.Port, len(n.Ports))
	if port < len(n.Ports) && n.Ports[port] != nil {
		p := *n.Ports[port]
		p.Node = &c
		switch {
		case len(path) == 1 && f.Origin != nil && f.Origin.Node == n:
		case len(path) > 2:
			p.Remote = entry
		default:
			p.Remote = nil
		}
		c.Ports[port] = &p
	}
	return &c
}

// partialScanNode is n as the replay of libibnetdisc's partial scan
// (from -D's route, or from the port port of n by its LID for -S/-G),
// hops deep, holds it: the node the C tools print. A CA's or router's
// other ports are there when the scan met them from the switches it
// reached (a CA with several ports on one switch: iblinkinfo -D to it
// prints them all). nil when the replay did not reach n.
func partialScanNode(f *topo.Fabric, n *topo.Node, port int, path []uint8, hops int) *topo.Node {
	start := ibndStart{LID: n.Ports[port]}
	if path != nil {
		start = ibndStart{Path: path[1:]}
	}
	if start.LID == nil && path == nil {
		return nil
	}
	for _, m := range replayIBND(f, start, hops).Fabric.Nodes {
		if m.GUID == n.GUID {
			return m
		}
	}
	return nil
}

// node is ibqueryerrors' print_node.
func (r *qeRun) node(ctx context.Context, n *topo.Node) error {
	start := 1
	if n.Type == topo.Switch && n.EnhancedPort0 {
		start = 0
	}
	name := topo.MappedName(n, r.names)
	r.name, r.sw = name, n.Type == topo.Switch
	qn := QENode{Type: nodeType(n.Type), GUID: GUID(n.GUID), Name: name, Ports: []QEPort{}}
	if n.Type == topo.Switch && n.Ports[0] != nil {
		qn.PortGUID = GUID(n.Ports[0].GUID)
	}
	// The PMA's ClassPortInfo, asked where ibqueryerrors asks it: a
	// switch's port 0, a CA's first port.
	cp := 0
	if n.Type != topo.Switch {
		for p := 1; p <= n.NumPorts && p < len(n.Ports); p++ {
			if n.Ports[p] != nil {
				cp = p
				break
			}
		}
	}
	var cpi mad.ClassPortInfo
	cpiOK := false
	data, cpiErr := r.get(ctx, engine.LID(pmaLID(n, cp)), perf.AttrClassPortInfo, uint8(cp), nil)
	if cpiErr == nil {
		cpiErr = cpi.UnmarshalBinary(data)
	}
	if cpiErr == nil {
		cpiOK = true
	} else {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		r.warnQuery(cpiErr, "classportinfo query failed on %s, Lid %d port %d", name, pmaLID(n, cp), cp)
		r.q.Summary.PMAQueryFailures++
	}
	allPorts := cpiOK && cpi.CapabilityMask&perf.CapAllPortSelect != 0
	bad := false
	addPort := func(p QEPort, counts bool) {
		qn.Ports = append(qn.Ports, p)
		if !bad && !r.o.CountersOnly {
			r.q.Summary.BadNodes++
		}
		bad = true
		if counts {
			r.q.Summary.BadPorts++
		}
	}
	// portDone adds port p's line when it has one (with its link for
	// -r), and clears its counters where AllPortSelect does not.
	portDone := func(qp QEPort, ok bool, p int, counts bool) {
		if ok {
			if r.o.ReportPort {
				qp.Link = r.link(n, p)
			}
			addPort(qp, counts)
		}
		r.q.Summary.PortsChecked++
		if !allPorts {
			r.clear(ctx, n, p, &cpi)
		}
	}
	if r.o.CountersOnly {
		for p := start; p <= n.NumPorts && p < len(n.Ports); p++ {
			if n.Ports[p] == nil {
				continue
			}
			qp, ok, err := r.dataCounters(ctx, n, p, cpi.CapabilityMask, name)
			if err != nil {
				return err
			}
			portDone(qp, ok, p, false)
		}
	} else {
		skipPorts := false
		if allPorts {
			qp, ok, err := r.errors(ctx, n, int(perf.AllPorts), &cpi, name)
			if err != nil {
				return err
			}
			if ok {
				if n.Type == topo.Switch {
					addPort(qp, false)
				} else if !bad {
					// ibqueryerrors prints the CA's header (a bad node)
					// but no line for the sum.
					r.q.Summary.BadNodes++
					bad = true
				}
			} else {
				r.q.Summary.PortsChecked += n.NumPorts
				skipPorts = true
			}
		}
		for p := start; !skipPorts && p <= n.NumPorts && p < len(n.Ports); p++ {
			if n.Ports[p] == nil {
				continue
			}
			qp, ok, err := r.errors(ctx, n, p, &cpi, name)
			if err != nil {
				return err
			}
			portDone(qp, ok, p, true)
		}
	}
	r.q.Summary.NodesChecked++
	if allPorts {
		r.clear(ctx, n, int(perf.AllPorts), &cpi)
	}
	if bad || len(qn.Ports) > 0 {
		r.q.Nodes = append(r.q.Nodes, qn)
	}
	return nil
}

func (r *qeRun) warn(format string, args ...any) {
	r.q.Warnings = append(r.q.Warnings, fmt.Sprintf(format, args...))
}

// get is a PerfMgt Get of attr of port at t, asked again while it could
// not be read, up to QueryErrorsOptions.Passes times in all.
func (r *qeRun) get(ctx context.Context, t engine.Target, attr uint16, port uint8, data []byte) ([]byte, error) {
	if r.o.SkipNoLID && t.Kind == engine.ByLID && t.LID == 0 {
		return nil, noLIDError{port: port}
	}
	for pass := 1; ; pass++ {
		d, err := r.e.Session.Perf(ctx, t, mad.MethodGet, attr, port, data)
		if err == nil || !engine.Unreadable(err) || pass >= r.o.Passes || ctx.Err() != nil {
			return d, err
		}
	}
}

// warnQuery is warn for a query that failed with err: also in
// Unreadable when err is engine.Unreadable.
func (r *qeRun) warnQuery(err error, format string, args ...any) {
	var nl noLIDError
	if errors.As(err, &nl) {
		// One warning per port, however many of its queries were not
		// sent (a router's ClassPortInfo and PortCounters of port 1).
		port := nl.port
		if r.sw {
			port = 0 // a switch's ports are read at its port 0's LID
		}
		w := fmt.Sprintf("%s port %d: %v", r.name, port, nl)
		if !slices.Contains(r.q.Warnings, w) {
			r.q.Warnings = append(r.q.Warnings, w)
			r.q.Unreadable = append(r.q.Unreadable, w)
		}
		return
	}
	r.warn(format, args...)
	if engine.Unreadable(err) {
		r.q.Unreadable = append(r.q.Unreadable, r.q.Warnings[len(r.q.Warnings)-1])
	}
}

func (r *qeRun) link(n *topo.Node, p int) *LinkPort {
	var p0 *topo.Port
	if n.Type == topo.Switch {
		p0 = n.Ports[0]
	}
	lp := linkPort(n.Ports[p], p0, r.names, LinkinfoOptions{}, &linkSlab{})
	return &lp
}

// portGUID is the GUID ibqueryerrors prints for port p (a switch's port
// 0's for ALL).
func portGUID(n *topo.Node, p int) uint64 {
	if p == int(perf.AllPorts) || p >= len(n.Ports) || n.Ports[p] == nil {
		if n.Type == topo.Switch && n.Ports[0] != nil {
			return n.Ports[0].GUID
		}
		return 0
	}
	return n.Ports[p].GUID
}

func (r *qeRun) suppressed(name string) bool { return slices.Contains(r.o.Suppress, name) }

// errors is print_errors and print_results: ok when a counter of port p
// exceeds its threshold.
func (r *qeRun) errors(ctx context.Context, n *topo.Node, p int, cpi *mad.ClassPortInfo, name string) (QEPort, bool, error) {
	qp := QEPort{Port: p, GUID: GUID(portGUID(n, p)), Counters: []QECounter{}}
	lid := pmaLID(n, p)
	pc, err := r.get(ctx, engine.LID(lid), perf.AttrPortCounters, uint8(p), nil)
	if err != nil {
		if ctx.Err() != nil {
			return qp, false, context.Cause(ctx)
		}
		r.warnQuery(err, "IB_GSI_PORT_COUNTERS query failed on %s, Lid %d port %d", name, lid, p)
		r.q.Summary.PMAQueryFailures++
		r.notRead(n, p)
		return qp, false, nil
	}
	pcl := perf.LayoutByID(perf.AttrPortCounters)
	var pce []byte
	pcel := perf.LayoutByID(perf.AttrPortCountersExtended)
	if cpi.CapabilityMask&(perf.CapExtendedWidth|perf.CapExtendedWidthNoIETF) != 0 {
		if pce, err = r.get(ctx, engine.LID(lid), perf.AttrPortCountersExtended, uint8(p), nil); err != nil {
			if ctx.Err() != nil {
				return qp, false, context.Cause(ctx)
			}
			r.warnQuery(err, "IB_GSI_PORT_COUNTERS_EXT query failed on %s, Lid %d port %d", name, lid, p)
			r.q.Summary.PMAQueryFailures++
			r.notRead(n, p)
			return qp, false, nil
		}
	}
	ext := cpi.CapabilityMask2&perf.Cap2AdditionalPortCounters != 0
	value := func(c string) uint64 {
		if c == "PortXmitWait" && cpi.CapabilityMask&perf.CapPortXmitWait == 0 {
			return 0
		}
		if ext {
			f, _ := pcel.Field(c)
			return f.Get(pce)
		}
		f, _ := pcl.Field(c)
		return f.Get(pc)
	}
	check := func(c string) bool {
		v := value(c)
		if v <= r.o.Thresholds.Of(c) {
			return false
		}
		qc := QECounter{Name: c, Value: v}
		if ext {
			qc.Human = human(v, false)
		}
		qp.Counters = append(qp.Counters, qc)
		return true
	}
	for _, c := range errorCounters {
		if r.suppressed(c) || !check(c) || !r.o.Details {
			continue
		}
		// ibqueryerrors dumps each details attribute with the other's
		// field range: what it prints is reproduced, fields and all.
		switch c {
		case "PortXmitDiscards":
			r.details(ctx, &qp, lid, p, name, "PortXmitDiscardDetails", perf.AttrPortXmitDiscardDetails, perf.AttrPortRcvErrorDetails)
		case "PortRcvErrors":
			r.details(ctx, &qp, lid, p, name, "PortRcvErrorDetails", perf.AttrPortRcvErrorDetails, perf.AttrPortXmitDiscardDetails)
		}
	}
	if !r.suppressed("PortXmitWait") {
		check("PortXmitWait")
	}
	if len(qp.Counters) == 0 {
		return qp, false, nil
	}
	if r.o.Data {
		data, l := pc, pcl
		names := []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"}
		if pce != nil {
			data, l = pce, pcel
			if cpi.CapabilityMask&perf.CapExtendedWidth != 0 {
				names = append(names, "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts")
			}
		}
		for _, c := range names {
			f, _ := l.Field(c)
			if v := f.Get(data); v != 0 {
				qp.Counters = append(qp.Counters, QECounter{Name: c, Value: v, Human: human(v, isData(c))})
			}
		}
	}
	return qp, true, nil
}

// notRead counts port p of n (every port of n for the AllPortSelect
// sum, which node then counts checked) in PortsNotRead.
func (r *qeRun) notRead(n *topo.Node, p int) {
	if p == int(perf.AllPorts) {
		r.q.PortsNotRead += n.NumPorts
		return
	}
	r.q.PortsNotRead++
}

func isData(c string) bool { return c == "PortXmitData" || c == "PortRcvData" }

// details is query_and_dump: attr read, its non-zero fields printed
// through the layout of fields (ibqueryerrors' ranges).
func (r *qeRun) details(ctx context.Context, qp *QEPort, lid uint16, p int, name, attrName string, attr, fields uint16) {
	data, err := r.get(ctx, engine.LID(lid), attr, uint8(p), nil)
	if err != nil {
		r.warnQuery(err, "%s query failed on %s, Lid %d port %d", attrName, name, lid, p)
		r.q.Summary.PMAQueryFailures++
		return
	}
	l := perf.LayoutByID(fields)
	for _, f := range l.Fields {
		if f.Name == "PortSelect" || f.Name == "CounterSelect" {
			continue
		}
		if v := f.Get(data) & 0xffffffff; v != 0 {
			qp.Counters = append(qp.Counters, QECounter{Name: f.Name, Value: v, Detail: true})
		}
	}
}

// dataCounters is print_data_cnts: every data counter of port p.
func (r *qeRun) dataCounters(ctx context.Context, n *topo.Node, p int, capMask uint16, name string) (QEPort, bool, error) {
	qp := QEPort{Port: p, GUID: GUID(n.GUID), Counters: []QECounter{}}
	lid := pmaLID(n, p)
	attr, attrName := perf.AttrPortCounters, "IB_GSI_PORT_COUNTERS"
	names := []string{"PortXmitData", "PortRcvData", "PortXmitPkts", "PortRcvPkts"}
	if capMask&(perf.CapExtendedWidth|perf.CapExtendedWidthNoIETF) != 0 {
		attr, attrName = perf.AttrPortCountersExtended, "IB_GSI_PORT_COUNTERS_EXT"
		if capMask&perf.CapExtendedWidth != 0 {
			names = append(names, "PortUnicastXmitPkts", "PortUnicastRcvPkts", "PortMulticastXmitPkts", "PortMulticastRcvPkts")
		}
	}
	data, err := r.get(ctx, engine.LID(lid), attr, uint8(p), nil)
	if err != nil {
		if ctx.Err() != nil {
			return qp, false, context.Cause(ctx)
		}
		r.warnQuery(err, "%s query failed on %s, Lid %d port %d", attrName, name, lid, p)
		r.q.Summary.PMAQueryFailures++
		return qp, false, nil
	}
	l := perf.LayoutByID(attr)
	for _, c := range names {
		f, _ := l.Field(c)
		v := f.Get(data)
		qp.Counters = append(qp.Counters, QECounter{Name: c, Value: v, Human: human(v, isData(c))})
	}
	return qp, true, nil
}

// clear is clear_port (-k, -K): PortCounters' (and PortCountersExtended's)
// counters reset with the selects ibqueryerrors sets.
func (r *qeRun) clear(ctx context.Context, n *topo.Node, p int, cpi *mad.ClassPortInfo) {
	if !r.o.ClearErrors && !r.o.ClearCounts {
		return
	}
	lid := pmaLID(n, p)
	var mask uint32
	if r.o.ClearErrors {
		mask |= 0xfff
		if cpi.CapabilityMask&perf.CapPortXmitWait != 0 {
			mask |= 0x10000
		}
	}
	if r.o.ClearCounts {
		mask |= 0xf000
	}
	name := topo.MappedName(n, r.names)
	reset := func(attr uint16, mask uint32) error {
		l := perf.LayoutByID(attr)
		data := make([]byte, l.Size)
		for _, s := range []struct {
			field string
			v     uint64
		}{{"PortSelect", uint64(p)}, {"CounterSelect", uint64(mask & 0xffff)}, {"CounterSelect2", uint64(mask >> 16)}} {
			if f, ok := l.Field(s.field); ok {
				f.Put(data, s.v&(1<<f.Width-1))
			}
		}
		_, err := r.e.Session.Perf(ctx, engine.LID(lid), mad.MethodSet, attr, uint8(p), data)
		return err
	}
	if mask != 0 {
		if err := reset(perf.AttrPortCounters, mask); err != nil {
			r.warn("Failed to reset errors %s port %d: %v", name, p, err)
		}
	}
	if r.o.ClearErrors && r.o.Details {
		_ = reset(perf.AttrPortXmitDiscardDetails, 0xf)
		_ = reset(perf.AttrPortRcvErrorDetails, 0x3f)
	}
	if cpi.CapabilityMask&(perf.CapExtendedWidth|perf.CapExtendedWidthNoIETF) != 0 {
		mask = 0
		if r.o.ClearCounts {
			mask = 0x0f
			if cpi.CapabilityMask&perf.CapExtendedWidth != 0 {
				mask = 0xff
			}
		}
		if r.o.ClearErrors && cpi.CapabilityMask2&perf.Cap2AdditionalPortCounters != 0 {
			mask |= 0xfff0000
			if cpi.CapabilityMask&perf.CapPortXmitWait != 0 {
				mask |= 1 << 28
			}
		}
		if mask != 0 {
			if err := reset(perf.AttrPortCountersExtended, mask); err != nil {
				r.warn("Failed to reset extended data counters %s, Lid %d port %d: %v", name, lid, p, err)
			}
		}
	}
}

// human is conv_cnt_human_readable's "(%5.3f%s)" text: the value in
// powers of 1024 (data counters count 4-byte words: bytes, in B, KB, ...),
// computed in single precision as ibqueryerrors computes it.
func human(v uint64, data bool) string {
	tmp := v / 1024
	ui := 0
	div := uint64(1)
	for tmp != 0 {
		ui++
		tmp /= 1024
		div *= 1024
	}
	val := float32(v)
	if data {
		val *= 4
		if val/float32(div) > 1024 {
			ui++
			div *= 1024
		}
	}
	val /= float32(div)
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	if data {
		units = []string{"B", "KB", "MB", "GB", "TB", "PB", "EB"}
	}
	unit := ""
	if ui < len(units) {
		unit = units[ui]
	}
	return fmt.Sprintf("%5.3f%s", val, unit)
}

// WriteQueryErrors prints q as ibqueryerrors does: the nodes, then the
// summary, on w; the warnings and "Failed to find node" on stderr.
func WriteQueryErrors(w, stderr io.Writer, q *QueryErrors) error {
	for _, s := range q.Warnings {
		fmt.Fprintf(stderr, "ibwarn: %s\n", s)
	}
	if q.routeErr != nil {
		fmt.Fprintf(stderr, "Failed to query the node at -D %s: %v\n", q.NotFound, q.routeErr)
		return nil
	}
	if q.NotFound != "" {
		fmt.Fprintf(stderr, "Failed to find node: %s\n", q.NotFound)
	}
	bw := bufio.NewWriter(w)
	for i := range q.Nodes {
		n := &q.Nodes[i]
		switch {
		case q.countersOnly:
			fmt.Fprintf(bw, "Data Counters for 0x%x \"%s\"\n", uint64(n.GUID), n.Name)
		case n.Type == "Switch":
			fmt.Fprintf(bw, "Errors for 0x%x \"%s\"\n", uint64(n.PortGUID), n.Name)
		default:
			fmt.Fprintf(bw, "Errors for \"%s\"\n", n.Name)
		}
		for j := range n.Ports {
			p := &n.Ports[j]
			if p.Port == int(perf.AllPorts) {
				fmt.Fprintf(bw, "   GUID 0x%x port ALL:", uint64(p.GUID))
			} else {
				fmt.Fprintf(bw, "   GUID 0x%x port %d:", uint64(p.GUID), p.Port)
			}
			for _, c := range p.Counters {
				if c.Human != "" || q.countersOnly {
					fmt.Fprintf(bw, " [%s == %d (%s)]", c.Name, c.Value, c.Human)
				} else {
					fmt.Fprintf(bw, " [%s == %d]", c.Name, c.Value)
				}
			}
			bw.WriteString("\n")
			if p.Link != nil {
				writePortConfig(bw, n, p.Link)
			}
		}
	}
	s := &q.Summary
	fmt.Fprintf(bw, "\n## Summary: %d nodes checked, %d bad nodes found\n", s.NodesChecked, s.BadNodes)
	fmt.Fprintf(bw, "##          %d ports checked, %d ports have errors beyond threshold\n", s.PortsChecked, s.BadPorts)
	fmt.Fprintf(bw, "## %s\n", s.Thresholds)
	if s.PMAQueryFailures > 0 {
		fmt.Fprintf(bw, "##          %d PMA query failures\n", s.PMAQueryFailures)
	}
	bw.WriteString("## Suppressed:")
	for _, n := range s.Suppressed {
		bw.WriteString(" " + n)
	}
	bw.WriteString("\n")
	return bw.Flush()
}

// writePortConfig is print_port_config (-r): iblinkinfo's port line with
// "Link info:" in front.
func writePortConfig(w *bufio.Writer, n *QENode, p *LinkPort) {
	var link string
	if p.State != smp.PortStateName(smp.PortStateDown) {
		link = fmt.Sprintf("(%3s %18s %6s/%8s)", p.Width, p.Speed, p.State, p.PhysState)
	} else {
		link = fmt.Sprintf("(              %6s/%8s)", p.State, p.PhysState)
	}
	remote := "           [  ] \"\" ( )\n"
	if r := p.Remote; r != nil {
		remote = fmt.Sprintf("0x%016x %6d %4d[%2s] \"%s\" (%s %s)\n", uint64(r.GUID), r.LID, r.Port, "", r.Name, r.CouldBeWidth, r.CouldBeSpeed)
	}
	fmt.Fprintf(w, "       Link info: %6d%4d[%2s] ==%s==>  %s", p.LID, p.Port, "", link, remote)
}
