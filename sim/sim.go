package sim

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// Options configure a simulated fabric. A nil *Options means defaults.
type Options struct {
	// Bare starts the fabric as ibsim does without a subnet manager:
	// cabled ports INIT/LinkUp, no LIDs (LIDs preset by the topology file
	// are ignored too), empty forwarding tables, no SMInfo answered. A
	// script then plays the SM.
	Bare bool
	// SMNode is the node id or description of the node the subnet manager
	// runs on; "" means the first node of the topology file, as ibsim's
	// example files say and OpenSM under the ibsim rig does. It is also
	// the default port of Open.
	SMNode string
	// SMPort is the SM node's port; 0 means port 0 of a switch, and on a
	// CA port 1 (or its first cabled port when port 1 is not cabled).
	SMPort int
	// SAKey is the SM_Key of the SM's SA (OpenSM's sa_key); 0 means
	// DefaultSAKey. Requests carrying another non-zero key are dropped.
	SAKey uint64
	// MKey is the M_Key the SM gave every port (PortInfo.M_Key, protect
	// bits 0: every Get reads it, as IBA 14.2.4.1 allows at that level);
	// an SMP carrying it is authenticated, and the SM's SMInfo then
	// carries the SA's SM_Key (mad-formats.md: "zero unless
	// authenticated"). 0, the default, is no M_Key.
	MKey uint64
	// CCKey is every Congestion Control agent's CC_Key at start (a Set of
	// CongestionKeyInfo changes it); 0, the default, is none.
	CCKey uint64
	// IbsimStrict answers only what ibsim 0.10 answers, for tests that
	// compare the simulator with ibsim: the SMA refuses LedInfo and
	// PortInfoExtended (the port's MAD layer answers 0x000C), PortInfo
	// announces neither (no IsLEDInfoSupported, no
	// IsPortInfoExtendedSupported), and the PMA refuses
	// PortSamplesControl/Result, PortExtendedSpeedsCounters, the
	// per-SL data and congestion counters, with ibsim's ClassPortInfo
	// (no IsRSFECCountersSupported). Off, the default, the simulator
	// answers them as a current HCA or switch does (see the package doc).
	IbsimStrict bool
	// AdditionalPortCounters gives every PMA the additional
	// PortCountersExtended counters (ClassPortInfo.CapabilityMask2
	// IsAdditionalPortCountersExtendedSupported, as current HCAs and
	// switches have): 64-bit copies of the PortCounters error counters,
	// PortXmitWait and QP1Dropped, counting as they do but never
	// saturating (a Set does not clear them). Off by default, as ibsim
	// and the tools' expected outputs have them.
	AdditionalPortCounters bool
	// Logger receives notes (bring-up summary, ignored topology lines,
	// preset LIDs that could not be kept) and, at debug level, the
	// malformed MADs the transports' muxes drop; nil discards them.
	Logger *slog.Logger
}

// Fabric is a simulated fabric. It implements fabric.Fabric. A Fabric is
// safe for concurrent use; see the package doc for its lock.
type Fabric struct {
	log    *slog.Logger
	nodes  []*node // node.idx is the index here
	nports int     // ports in all (port.idx is below it)
	byID   map[string]*node
	byDesc map[string]*node
	smPort *port  // the SM's port (or, bare, the default port of Open)
	smLID  uint16 // the SM's LID; 0 when bare
	hasSM  bool   // an SM answers SMInfo at smPort
	// smOf is, by port.idx, the SM port of each port's plane when the SM
	// runs on a planarized CA (planes.go planeSMs); nil otherwise.
	smOf   []*port
	saKey  uint64 // the SA's SM_Key (Options.SAKey)
	mKey   uint64 // every port's M_Key (Options.MKey)
	ccKey  uint64 // every CC agent's CC_Key at start (Options.CCKey)
	strict bool   // Options.IbsimStrict
	// additional is Options.AdditionalPortCounters: every port's
	// counters keep pcx.
	additional bool

	mu        sync.Mutex // guards the state of every node and port, and the fields below
	closed    bool
	open      []*wire                    // attached transports
	actCount  uint32                     // SMInfo.ActCount
	sa        saServer                   // the SM's subnet administrator (sa.go)
	extraSMs  map[*port]smp.SMInfo       // SMs beside the fabric's own (faults.go AddSM)
	inj       *injector                  // injected faults (inject.go); nil: none, the fast path
	corrupts  atomic.Bool                // inj corrupts answers: fabric.Caps.Intact is false
	late      map[*lateMAD]bool          // MADs Faults.Delay holds back (inject.go)
	linkSaved map[*port][2]uint8         // state and phys of ports SetLink took down
	traffic   *trafficState              // the background load (traffic.go); nil: none
	portTabs  map[*port]*portTables      // SLtoVL, VL arbitration and vendor tables a Set changed (tables.go)
	mfts      map[*node]map[int][64]byte // multicast forwarding blocks a Set wrote, by block<<4|position
	ccAgents  map[*port]*ccState         // CC agent state a Set changed, by endport (cc.go)
	ccEpoch   time.Time                  // the CC agents' Timestamp 0 (cc.go)
	samplers  map[*port]*sampler         // the PMAs' sampling engines, by agent port (pmaext.go)
	planted   plantedCounters            // counters of the PMA groups beyond ibsim's SetCounter set (pmaext.go)

	trace      func(hop) // tests: called for each step of a directed-route SMP
	rrSwitches int       // tests: switches routed by the round-robin fast path
}

var _ fabric.Fabric = (*Fabric)(nil)

//go:embed default.net
var defaultNet []byte

// DefaultTopology is the name of the bundled default fabric: a two-level
// fat tree (2 spines, 4 leaves, 4 hosts per leaf, 4X QDR), its first node
// the HCA "node001" where the SM runs.
const DefaultTopology = "default.net"

// Default returns the simulator on the bundled default fabric; see
// DefaultTopology.
func Default(opts *Options) (*Fabric, error) {
	t, err := (&topo.Parser{Logger: logger(opts)}).Parse(DefaultTopology, bytes.NewReader(defaultNet))
	if err != nil {
		return nil, fmt.Errorf("sim: default topology: %w", err)
	}
	return New(t, opts)
}

// DefaultTopologyText returns the bundled default topology file.
func DefaultTopologyText() []byte { return bytes.Clone(defaultNet) }

// Load reads a topology file (ibsim "net" format or ibnetdiscover output;
// see topo.Parse) and returns the simulator on it.
func Load(path string, opts *Options) (*Fabric, error) {
	return LoadContext(context.Background(), path, opts)
}

// LoadContext is Load, its parse ended when ctx is done (Ctrl-C,
// SIGTERM, --time-limit).
func LoadContext(ctx context.Context, path string, opts *Options) (*Fabric, error) {
	t, err := (&topo.Parser{Logger: logger(opts), Context: ctx}).ParseFile(path)
	if err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	return New(t, opts)
}

func logger(opts *Options) *slog.Logger {
	if opts != nil && opts.Logger != nil {
		return opts.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// New returns the simulator on the fabric t, which it does not keep or
// modify.
func New(t *topo.Fabric, opts *Options) (*Fabric, error) {
	if layoutErr != nil {
		return nil, layoutErr
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	f := &Fabric{log: logger(&o), saKey: o.SAKey, mKey: o.MKey, ccKey: o.CCKey, strict: o.IbsimStrict}
	if f.saKey == 0 {
		f.saKey = DefaultSAKey
	}
	if err := f.build(t, o.Bare); err != nil {
		return nil, err
	}
	if err := f.pickSM(o.SMNode, o.SMPort); err != nil {
		return nil, err
	}
	if !o.Bare {
		f.configure()
	}
	if o.AdditionalPortCounters {
		f.additional = true
		for _, n := range f.nodes {
			for _, p := range n.ports {
				if p != nil {
					p.pc.pcx = new([numPC]uint64)
				}
			}
		}
	}
	f.log.Info("sim: fabric up", "nodes", len(f.nodes), "bare", o.Bare,
		"sm", f.smPort.String(), "sm_lid", f.smLID)
	return f, nil
}

// build makes the nodes and ports of t and brings the cables up, as ibsim
// does at start: cabled ports INIT/LinkUp, others Down/Polling.
func (f *Fabric) build(t *topo.Fabric, bare bool) error {
	if t == nil || len(t.Nodes) == 0 {
		return fmt.Errorf("sim: empty topology")
	}
	f.byID = make(map[string]*node, len(t.Nodes))
	f.byDesc = make(map[string]*node, len(t.Nodes))
	of := make(map[*topo.Node]*node, len(t.Nodes))
	nports := 0
	for i, tn := range t.Nodes {
		if tn == nil {
			return fmt.Errorf("sim: topology node %d is nil", i)
		}
		if tn.ID == "" {
			return fmt.Errorf("sim: topology node %d has no id", i)
		}
		if _, dup := f.byID[tn.ID]; dup {
			return fmt.Errorf("sim: duplicate node id %q", tn.ID)
		}
		if tn.Type < topo.CA || tn.Type > topo.Router {
			return fmt.Errorf("sim: node %q: bad type %v", tn.ID, tn.Type)
		}
		if tn.NumPorts < 1 || tn.NumPorts > 255 || len(tn.Ports) != tn.NumPorts+1 {
			return fmt.Errorf("sim: node %q: %d ports with %d port slots", tn.ID, tn.NumPorts, len(tn.Ports))
		}
		n := &node{id: tn.ID, desc: tn.Desc, typ: uint8(tn.Type), numPorts: tn.NumPorts, guid: tn.GUID,
			planarized: tn.Planarized && tn.Type == topo.CA}
		if n.desc == "" {
			n.desc = n.id
		}
		if len(n.desc) > ibsimDescLen {
			n.desc = n.desc[:ibsimDescLen]
		}
		n.idx = int32(i)
		f.byID[n.id] = n
		if _, dup := f.byDesc[n.desc]; !dup {
			f.byDesc[n.desc] = n
		}
		of[tn] = n
		f.nodes = append(f.nodes, n)
		nports += tn.NumPorts + 1
	}
	slab := make([]port, 0, nports)
	ptrs := make([]*port, nports) // every node's ports, one slice (not one a node)
	for i, tn := range t.Nodes {
		n := f.nodes[i]
		n.ports, ptrs = ptrs[:n.numPorts+1:n.numPorts+1], ptrs[n.numPorts+1:]
		first := 1
		if n.typ == typeSwitch {
			first = 0
			n.sw = &swState{}
		}
		for num := first; num <= n.numPorts; num++ {
			tp := tn.Ports[num]
			if tp == nil || tp.Num != num || tp.Node != tn {
				return fmt.Errorf("sim: node %q: port %d missing or inconsistent", n.id, num)
			}
			slab = append(slab, port{node: n, num: num, guid: tp.GUID, ipoib: slices.Clone(tp.IPoIB), plane: tp.Plane, idx: int32(len(slab))})
			n.ports[num] = &slab[len(slab)-1]
		}
	}
	f.nports = len(slab)
	// Cables, and each port's ibsim start-up PortInfo.
	tmpl := piTemplates{f: f, m: make(map[piKey]*piTemplate)}
	for i, tn := range t.Nodes {
		n := f.nodes[i]
		anyCabled := false
		for num, p := range n.ports {
			if p == nil {
				continue
			}
			tp := tn.Ports[num]
			en := enabled(tp)
			act := linkMasks{width: defaultWidth, speed: defaultSpeed}
			if r := tp.Remote; r != nil {
				// Each cable is checked and joined at its first end;
				// its other end finds p.remote set (the checks there
				// cover this end's too).
				if p.remote == nil {
					rn := of[r.Node]
					if rn == nil || r.Remote != tp || r.Num < 1 || r.Num > rn.numPorts || r.Node.Ports[r.Num] != r {
						return fmt.Errorf("sim: %s: inconsistent cable to %q port %d", p, r.Node.ID, r.Num)
					}
					if r == tp || num == 0 {
						return fmt.Errorf("sim: %s: cannot be cabled to %q port %d", p, r.Node.ID, r.Num)
					}
					p.remote = rn.ports[r.Num]
					p.remote.remote = p
				}
				var ok bool
				if act, ok = active(en, enabled(r)); !ok {
					return fmt.Errorf("sim: cable %s - %q port %d: no common link width or speed", p, r.Node.ID, r.Num)
				}
				anyCabled = true
			}
			p.extEn = en.ext
			tm := tmpl.of(piKey{typ: n.typ, port0: num == 0, cabled: p.remote != nil, en: en, act: act})
			p.pi = tm.pi
			p.lid, p.lmc, p.state, p.phys = tm.lid, tm.lmc, tm.state, tm.phys
			if n.typ != typeSwitch {
				piLocalPortNum.Put(p.pi[:], uint64(num))
			}
			if !bare && (num == 0 || n.typ != typeSwitch) {
				piLID.Put(p.pi[:], uint64(tp.LID)) // kept only if consistent; see configure
				piLMC.Put(p.pi[:], uint64(tp.LMC))
				p.lid, p.lmc = uint16(piLID.Get(p.pi[:])), uint8(piLMC.Get(p.pi[:])) // as the fields keep them
			}
		}
		f.initNode(n, tn, anyCabled)
	}
	return nil
}

// piKey is what a port's start-up PortInfo depends on but its number and
// LID (build).
type piKey struct {
	typ           uint8
	port0, cabled bool
	en, act       linkMasks
}

// piTemplate is an encoded start-up PortInfo and the fields port.sync
// reads from it.
type piTemplate struct {
	pi               [64]byte
	lid              uint16
	lmc, state, phys uint8
}

// piTemplates are the start-up PortInfos of build: ports alike share one,
// LocalPortNum and LID apart.
type piTemplates struct {
	f       *Fabric
	m       map[piKey]*piTemplate
	last    *piTemplate // of lastKey: most ports are like the one before
	lastKey piKey
}

// of returns the template of the ports of key, made on first use.
func (ts *piTemplates) of(key piKey) *piTemplate {
	if ts.last != nil && ts.lastKey == key {
		return ts.last
	}
	t := ts.m[key]
	if t == nil {
		num := 1
		if key.port0 {
			num = 0
		}
		pi := defaultPortInfo(&node{typ: key.typ}, num, key.cabled, key.en, key.act)
		t = new(piTemplate)
		_, _ = pi.AppendBinary(t.pi[:0])
		ts.f.announceExtras(t.pi[:], key.typ, num)
		p := port{pi: t.pi}
		p.sync()
		t.lid, t.lmc, t.state, t.phys = p.lid, p.lmc, p.state, p.phys
		ts.m[key] = t
	}
	ts.last, ts.lastKey = t, key
	return t
}

// ibsimDescLen is how much of a node's description (or, without one, its
// id) ibsim keeps: new_node copies it into a 64-byte field with strncpy
// of 63, so the SMA answers at most 63 bytes (a UTF-8 sequence cut where
// they end). The simulator answers the same of the same file.
const ibsimDescLen = 63

// initNode sets a node's NodeInfo, NodeDescription and SwitchInfo as ibsim
// does.
func (f *Fabric) initNode(n *node, tn *topo.Node, cabled bool) {
	ni := smp.NodeInfo{
		BaseVersion:     1,
		ClassVersion:    smp.Version,
		NodeType:        n.typ,
		NumPorts:        uint8(n.numPorts),
		SystemImageGUID: tn.SysGUID,
		NodeGUID:        n.guid,
		PortGUID:        n.guid,
		PartitionCap:    caPartitionCap,
		DeviceID:        tn.DeviceID,
		Revision:        tn.Revision,
		VendorID:        tn.VendorID & 0xffffff,
	}
	if ni.SystemImageGUID == 0 {
		ni.SystemImageGUID = n.guid
	}
	if ni.Revision == 0 {
		ni.Revision = revision
	}
	if n.typ == typeSwitch {
		ni.PartitionCap = swPartitionCap
	} else {
		ni.LocalPortNum = 1
	}
	_, _ = ni.AppendBinary(n.ni[:0])
	d := ndNodeString.Slice(n.nd[:])
	copy(d, n.desc)
	if n.sw != nil {
		si := smp.SwitchInfo{
			LinearFDBCap:            linearFDBCap,
			MulticastFDBCap:         mcastFDBCap,
			PartitionEnforcementCap: swPartitionEnfCp,
			FilterRawInboundCap:     true,
			FilterRawOutboundCap:    true,
			EnhancedPort0:           tn.EnhancedPort0,
			PortStateChange:         cabled, // ibsim: set when a port links up
		}
		n.sw.setInfo(&si)
	}
}

func (s *swState) info() smp.SwitchInfo {
	var si smp.SwitchInfo
	_ = si.UnmarshalBinary(s.si[:])
	return si
}

func (s *swState) setInfo(si *smp.SwitchInfo) {
	_, _ = si.AppendBinary(s.si[:0])
	s.top = si.LinearFDBTop
}

// pickSM chooses the SM's port.
func (f *Fabric) pickSM(id string, num int) error {
	var n *node
	if id == "" {
		// ibsim's convention, which its example files state and the
		// reference rig follows: the first node of the file hosts the SM.
		n = f.nodes[0]
	} else if n = f.lookup(id); n == nil {
		return fmt.Errorf("sim: SM node %q: no such node", id)
	}
	switch {
	case n.typ == typeSwitch:
		if num != 0 {
			return fmt.Errorf("sim: SM on %q port %d: a switch's SM runs on port 0", n.id, num)
		}
	case num == 0:
		num = 1
		if n.ports[1].remote == nil {
			for _, p := range n.ports[1:] {
				if p.remote != nil {
					num = p.num
					break
				}
			}
		}
	case num > n.numPorts:
		return fmt.Errorf("sim: SM on %q port %d: out of range (%d ports)", n.id, num, n.numPorts)
	}
	f.smPort = n.ports[num]
	return nil
}

func (f *Fabric) lookup(id string) *node {
	if n := f.byID[id]; n != nil {
		return n
	}
	return f.byDesc[id]
}

// portLocked finds a node by id or description and one of its ports:
// any port when any is set, else one a transport can attach to (a CA
// port, or port 0 of a switch). f.mu is held.
func (f *Fabric) portLocked(op, id string, num int, any bool) (*port, error) {
	n := f.lookup(id)
	if n == nil {
		return nil, fabric.NoDevice("sim: %s %q: no such node", op, id)
	}
	switch {
	case n.typ == typeSwitch && !any && num != 0:
		return nil, fmt.Errorf("sim: %s %q port %d: a switch is attached at its port 0", op, n.id, num)
	case num < 0 || num > n.numPorts || n.ports[num] == nil:
		return nil, fabric.NoDevice("sim: %s %q port %d: out of range (%d ports)", op, n.id, num, n.numPorts)
	}
	return n.ports[num], nil
}

func errClosed(op string) error { return fmt.Errorf("sim: %s: %w", op, net.ErrClosed) }

// Attach opens a transport on a node's port, as umad_open_port does: a CA
// port (1..NumPorts) or port 0 of a switch. node is a node id or
// description. Several transports may be open on one port; each is an
// independent umad file with its own agents. The transport's PortAttr
// describes the port as it is now.
//
// On a planarized CA the port is a plane's SMI device, which sends SMPs
// only (planes.go; AttachGSI opens the GSI device, Open the pair).
func (f *Fabric) Attach(node string, port int) (fabric.Transport, error) {
	return f.attach(node, port, wireSMI)
}

// attach is Attach; planar is the kind of wire a planarized CA's port
// gets.
func (f *Fabric) attach(node string, port int, planar wireKind) (fabric.Transport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errClosed("attach")
	}
	p, err := f.portLocked("attach", node, port, false)
	if err != nil {
		return nil, err
	}
	k := wirePort
	if p.node.planarized {
		k = planar
	}
	return f.attachKind(p, k), nil
}

var _ fabric.IPoIB = (*Fabric)(nil)

// IPoIBAddrs lists the IPoIB addresses of the fabric's CA ports, as the
// topology file's "# ipoib" lines and SetIPoIB gave them.
func (f *Fabric) IPoIBAddrs() []fabric.IPoIBAddr {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fabric.IPoIBAddr
	for _, n := range f.nodes {
		for _, p := range n.ports {
			for _, ip := range p.ipoibOf() {
				out = append(out, fabric.IPoIBAddr{IP: ip, CAName: n.id, PortNum: p.num})
			}
		}
	}
	return out
}

func (p *port) ipoibOf() []netip.Addr {
	if p == nil {
		return nil
	}
	return p.ipoib
}

// SetIPoIB gives a CA or router port the IP addresses of its IPoIB
// interface (replacing those it had; none removes them), as configuring
// ib0 on a host does: the user-space RDMA CM then resolves them to that
// port. An address another port holds, or one that is not a unicast IPv4
// or IPv6 address, is refused.
func (f *Fabric) SetIPoIB(node string, num int, ips ...netip.Addr) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n, ok := f.byID[node]
	if !ok || n.typ == typeSwitch || num < 1 || num >= len(n.ports) || n.ports[num] == nil {
		return fmt.Errorf("sim: ipoib: no CA or router port %q[%d]", node, num)
	}
	p := n.ports[num]
	for _, ip := range ips {
		if !ip.IsValid() || ip.IsUnspecified() || ip.IsMulticast() || ip.Zone() != "" || ip.Is4In6() {
			return fmt.Errorf("sim: ipoib %q[%d]: %v is not a unicast IPv4 or IPv6 address", node, num, ip)
		}
		for _, m := range f.nodes {
			for _, q := range m.ports {
				if q != nil && q != p && slices.Contains(q.ipoib, ip) {
					return fmt.Errorf("sim: ipoib %q[%d]: %v is already %q[%d]'s", node, num, ip, m.id, q.num)
				}
			}
		}
	}
	p.ipoib = slices.Clone(ips)
	return nil
}

// lockOpen locks f.mu for a call that reads the local ports: an error,
// with f.mu not held, when ctx is done or f closed.
func (f *Fabric) lockOpen(ctx context.Context, op string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return errClosed(op)
	}
	return nil
}

// Ports lists the CA ports in topology order, as umad_get_ca/port would.
func (f *Fabric) Ports(ctx context.Context) ([]fabric.PortAttr, error) {
	if err := f.lockOpen(ctx, "ports"); err != nil {
		return nil, err
	}
	defer f.mu.Unlock()
	// (A planarized CA's GSI device follows its plane ports: planes.go.)
	var out []fabric.PortAttr
	for _, n := range f.nodes {
		if n.typ != typeCA {
			continue
		}
		for _, p := range n.ports[1:] {
			out = append(out, f.portAttr(p))
		}
		if n.planarized {
			out = append(out, f.gsiAttr(n, nil))
		}
	}
	return out, nil
}

// Open opens a port by node (id or description) and port number. An empty
// ca and port 0 give the SM node's port; the rest is libibumad's
// resolve_ca_port: an empty ca with a port gives the first CA with that
// port Active, else the first with that port not Disabled; a ca with port
// 0 gives its first Active port, else its first LinkUp one, else its first
// not Disabled (ENODEV when every port is Disabled); a switch is port 0,
// and ENODEV named with another port; a negative port is invalid.
// A planarized CA's port opens as libibmad's mad_rpc_open_port2 pairs
// devices: SMPs go out on that plane port (its SMI device), every other
// class on the CA's GSI device (planes.go).
func (f *Fabric) Open(ctx context.Context, ca string, port int) (fabric.Transport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if port < 0 {
		return nil, fmt.Errorf("sim: open %q port %d: a port number is 0 or more: %w", ca, port, fabric.ErrInvalid)
	}
	f.mu.Lock()
	if n := f.gsiNode(ca); n != nil {
		defer f.mu.Unlock()
		if f.closed {
			return nil, errClosed("open")
		}
		if port > 1 {
			return nil, fabric.NoDevice("sim: open %q port %d: a GSI device has port 1 only", ca, port)
		}
		return f.attachKind(n.smiPort(), wirePair), nil
	}
	id, num, err := f.resolveOpen(ca, port)
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return f.attach(id, num, wirePair)
}

func (f *Fabric) resolveOpen(ca string, num int) (string, int, error) {
	if ca == "" && num == 0 {
		return f.smPort.node.id, f.smPort.num, nil
	}
	if ca == "" {
		var first *node
		for _, n := range f.nodes {
			if n.typ != typeCA || num > n.numPorts || n.ports[num].phys == smp.PhysStateDisabled {
				continue
			}
			if n.ports[num].state == smp.PortStateActive {
				return n.id, num, nil
			}
			if first == nil {
				first = n
			}
		}
		if first == nil {
			return "", 0, fabric.NoDevice("sim: open port %d: no CA has that port, or it is Disabled on every CA", num)
		}
		return first.id, num, nil
	}
	n := f.lookup(ca)
	if n == nil {
		return "", 0, fabric.NoDevice("sim: open %q: no such node", ca)
	}
	if n.typ == typeSwitch {
		// A switch has its port 0 alone in sysfs: libibumad resolves the
		// switch to it, and a port number given with the name fails there
		// (-EIO, -EINVAL), ENODEV as on the kernel and ibsim backends.
		if num != 0 {
			return "", 0, fabric.NoDevice("sim: open %q port %d: a switch is opened at its port 0", ca, num)
		}
		return n.id, 0, nil
	}
	if num != 0 {
		return n.id, num, nil
	}
	for _, ok := range []func(p *port) bool{
		func(p *port) bool { return p.state == smp.PortStateActive },
		func(p *port) bool { return p.phys == smp.PhysStateLinkUp },
		func(p *port) bool { return p.phys != smp.PhysStateDisabled },
	} {
		for _, p := range n.ports[1:] {
			if ok(p) {
				return n.id, p.num, nil
			}
		}
	}
	return "", 0, fabric.NoDevice("sim: open %q: every port is Disabled", ca)
}

// Close closes every transport attached to the fabric; later calls
// return nil.
func (f *Fabric) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return nil
	}
	f.closed = true
	f.saClose()
	f.stopLate()
	ws := append([]*wire(nil), f.open...)
	f.mu.Unlock()
	for _, w := range ws {
		if w.m != nil {
			w.m.Close()
		} else {
			w.Close()
		}
	}
	return nil
}

// portAttr describes p as umad_get_port would. f.mu is held.
func (f *Fabric) portAttr(p *port) fabric.PortAttr {
	pi := p.info()
	n := p.node
	var ni smp.NodeInfo
	_ = ni.UnmarshalBinary(n.ni[:])
	return fabric.PortAttr{
		CAName:    n.id,
		PortNum:   p.num,
		NodeType:  int(n.typ),
		NodeGUID:  n.guid,
		PortGUID:  p.guid,
		GIDPrefix: pi.GIDPrefix,
		LID:       pi.LID,
		LMC:       pi.LMC,
		SMLID:     pi.MasterSMLID,
		SMSL:      pi.MasterSMSL,
		State:     int(pi.PortState),
		PhysState: int(pi.PortPhysicalState),
		Rate:      smp.SysfsRate(pi.LinkWidthActive, pi.LinkSpeedActive, pi.LinkSpeedExtActive|pi.LinkSpeedExtActive2&1<<5),
		CapMask:   pi.CapabilityMask,
		PKeys:     p.pkeyTable(),
		// As the ibsim backend gives them (umad2sim's sysfs), with the
		// node's ports.
		CAType: "simulator", FWVer: "1", HWVer: strconv.FormatUint(uint64(ni.Revision), 16),
		SysGUID: ni.SystemImageGUID, CANumPorts: n.numPorts,
	}
}

// pkeyTable is p's whole P_Key table, as sysfs lists pkeys/0..cap-1.
func (p *port) pkeyTable() []uint16 {
	t := make([]uint16, p.pkeyCap())
	for i := range t {
		t[i] = p.pkey(i)
	}
	return t
}

// Topology returns a snapshot of the fabric as a topo.Fabric: nodes,
// cables, and each port's current LID, state and link widths and speeds.
func (f *Fabric) Topology() *topo.Fabric {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &topo.Fabric{}
	of := make(map[*port]*topo.Port)
	for _, n := range f.nodes {
		var ni smp.NodeInfo
		_ = ni.UnmarshalBinary(n.ni[:])
		tn := &topo.Node{
			ID: n.id, Desc: n.desc, Type: topo.NodeType(n.typ), NumPorts: n.numPorts,
			GUID: n.guid, SysGUID: ni.SystemImageGUID, VendorID: ni.VendorID,
			DeviceID: ni.DeviceID, Revision: ni.Revision,
			Ports: make([]*topo.Port, n.numPorts+1),
		}
		if n.sw != nil {
			tn.EnhancedPort0 = n.sw.info().EnhancedPort0
		}
		tn.Planarized = n.planarized
		for num, p := range n.ports {
			if p == nil {
				continue
			}
			pi := p.info()
			tp := &topo.Port{
				Node: tn, Num: num, GUID: p.guid, LID: pi.LID, LMC: pi.LMC,
				WidthEnabled: pi.LinkWidthEnabled, SpeedEnabled: pi.LinkSpeedEnabled,
				SpeedExtEnabled: pi.LinkSpeedExtEnabled | pi.LinkSpeedExtEnabled2&1<<5,
				State:           pi.PortState, PhysState: pi.PortPhysicalState,
				IPoIB: slices.Clone(p.ipoib), Plane: p.plane,
			}
			if p.remote != nil && p.phys == smp.PhysStateLinkUp {
				tp.WidthActive, tp.SpeedActive, tp.SpeedExtActive =
					pi.LinkWidthActive, pi.LinkSpeedActive, pi.LinkSpeedExtActive|pi.LinkSpeedExtActive2&1<<5
			}
			tn.Ports[num] = tp
			of[p] = tp
		}
		t.Nodes = append(t.Nodes, tn)
	}
	for p, tp := range of {
		if p.remote != nil {
			tp.Remote = of[p.remote]
		}
	}
	return t
}

// SM returns the node id and port of the subnet manager's port and its
// LID (0 when the fabric is bare: then the port is Open's default). When
// the SM runs on a planarized CA each plane has an SM of its own (its
// plane port, docs/planes.md) and SM is the one of Options.SMPort's
// plane: SMs lists them all.
func (f *Fabric) SM() (node string, port int, lid uint16) {
	return f.smPort.node.id, f.smPort.num, f.smLID
}

// SubnetManager is one subnet manager of the fabric: the node id and
// port it runs on, its LID (the MasterSMLID of its subnet's ports), and
// the plane it manages (0 on a fabric without planes).
type SubnetManager struct {
	Node  string
	Port  int
	LID   uint16
	Plane uint8
}

// SMs returns every subnet manager of the fabric: when the SM runs on a
// planarized CA, one per plane, the CA's plane ports in port order (each
// the SM of its port's plane: docs/planes.md); else the one SM, as SM
// gives it. A bare fabric has none (nil).
func (f *Fabric) SMs() []SubnetManager {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.hasSM {
		return nil
	}
	if f.smOf == nil {
		return []SubnetManager{{Node: f.smPort.node.id, Port: f.smPort.num, LID: f.smLID, Plane: f.smPort.plane}}
	}
	var sms []SubnetManager
	for _, p := range f.smPort.node.ports[1:] {
		if p != nil && f.isSMPort(p) {
			sms = append(sms, SubnetManager{Node: p.node.id, Port: p.num, LID: p.lid, Plane: p.plane})
		}
	}
	return sms
}

// String names the fabric for logs.
func (f *Fabric) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "sim fabric (%d nodes", len(f.nodes))
	if f.hasSM {
		fmt.Fprintf(&sb, ", SM %s lid %d", f.smPort, f.smLID)
	}
	sb.WriteString(")")
	return sb.String()
}
