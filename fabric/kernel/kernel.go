package kernel

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/pair"
	"github.com/ibscript/ibscript/native/rdmacm"
	"github.com/ibscript/ibscript/native/umad"
)

// Options say where the Fabric finds sysfs and how it opens devices. A
// nil *Options means the real system.
type Options struct {
	// FS is the root of sysfs lookups; nil means os.DirFS("/").
	FS fs.FS
	// Open opens a device node; nil means umad.OpenDev.
	Open func(path string) (umad.Dev, error)
	// CMPath is the rdma_cm device OpenCM opens; "" means
	// rdmacm.DevicePath (/dev/infiniband/rdma_cm).
	CMPath string
	// OpenCM opens one rdma_cm fd (tests plug rdmacmtest's model in
	// here); nil means opening CMPath.
	OpenCM func() (rdmacm.Dev, error)
}

// HasPorts reports whether sysfs (read through fsys, rooted at "/") lists
// an umad port: what --fabric auto checks before choosing this backend.
func HasPorts(fsys fs.FS) bool { return umad.HasPorts(fsys) }

// ErrNoDevices is wrapped when the host has no umad ports at all.
var ErrNoDevices = errors.New("no InfiniBand devices: /sys/class/infiniband_mad has no umad ports")

// Fabric is the kernel's umad devices as a fabric.Fabric. It is safe for
// concurrent use.
type Fabric struct {
	fsys fs.FS
	open func(string) (umad.Dev, error)
	// cmPath and openCM are Options.CMPath and Options.OpenCM.
	cmPath string
	openCM func() (rdmacm.Dev, error)

	trs openSet[*Transport] // the Transports open from f
}

var (
	_ fabric.Fabric = (*Fabric)(nil)
	_ fabric.Pairer = (*Fabric)(nil)
)

// New returns the Fabric of the host's (or o's) umad devices.
func New(o *Options) *Fabric {
	f := &Fabric{fsys: os.DirFS("/"), open: umad.OpenDev, cmPath: rdmacm.DevicePath}
	if o != nil {
		if o.CMPath != "" {
			f.cmPath = o.CMPath
		}
		f.openCM = o.OpenCM
		if o.FS != nil {
			f.fsys = o.FS
		}
		if o.Open != nil {
			f.open = o.Open
		}
	}
	return f
}

func attrOf(ca *umad.CA, p *umad.PortInfo) fabric.PortAttr {
	return fabric.PortAttr{
		CAName: ca.Name, PortNum: p.PortNum, NodeType: ca.NodeType, NodeGUID: ca.NodeGUID,
		PortGUID: p.PortGUID, GIDPrefix: p.GIDPrefix, LID: p.BaseLID, LMC: p.LMC,
		SMLID: p.SMLID, SMSL: p.SMSL, State: p.State, PhysState: p.PhysState, Rate: p.Rate, FDR10: p.FDR10,
		CapMask: p.CapMask, PKeys: p.PKeys, LinkLayer: p.LinkLayer, GIDs: p.GIDs,
		CAType: ca.CAType, FWVer: ca.FWVer, HWVer: ca.HWVer, SysGUID: ca.SystemGUID, CANumPorts: ca.NumPorts,
	}
}

// Ports lists the ports of every CA in libibumad's resolution order:
// devices in directory order (node types 1..3), ports by number. A CA
// whose sysfs entries libibumad would refuse is left out.
func (f *Fabric) Ports(ctx context.Context) ([]fabric.PortAttr, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	names, err := umad.CADeviceList(f.fsys)
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	var out []fabric.PortAttr
	for _, n := range names {
		ca, err := umad.GetCA(f.fsys, n)
		if err != nil {
			continue
		}
		for _, p := range ca.Ports {
			if p != nil {
				out = append(out, attrOf(ca, p))
			}
		}
	}
	return out, nil
}

// Open opens a port as umad_open_port(ca, port): an empty ca and port 0
// pick the default port (first active IB port in directory order); one
// of them given acts as a filter; a switch resolves to port 0.
func (f *Fabric) Open(ctx context.Context, ca string, port int) (fabric.Transport, error) {
	if err := f.canOpen(ctx); err != nil {
		return nil, err
	}
	if ca != "" && port != 0 {
		// libibumad takes a named CA and port unchecked and fails later
		// (-EIO, -EINVAL); every backend says ENODEV instead.
		if cad, err := umad.GetCAWithoutGIDTables(f.fsys, ca); err != nil || port >= len(cad.Ports) || port < 0 || cad.Ports[port] == nil {
			return nil, fabric.NoDevice("kernel: no InfiniBand port %s/%d in %s", ca, port, umad.SysInfiniband)
		}
	}
	t, err := f.openOne(ca, port)
	if err != nil {
		return nil, err
	}
	return f.withPlane(t)
}

// canOpen is what Open and OpenPort2 check first: ctx alive, f open, a
// umad port in sysfs.
func (f *Fabric) canOpen(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if f.trs.isClosed() {
		return fmt.Errorf("kernel: open: %w", net.ErrClosed)
	}
	if !umad.HasPorts(f.fsys) {
		return fmt.Errorf("kernel: %w", ErrNoDevices)
	}
	return nil
}

// openOne opens one umad port as umad_open_port(ca, port).
func (f *Fabric) openOne(ca string, port int) (*Transport, error) {
	p, err := umad.OpenPort(ca, port, &umad.Options{FS: f.fsys, Open: f.open})
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	cad, err := umad.GetCA(f.fsys, p.CA())
	if err != nil || cad.Ports[p.Num()] == nil {
		p.Close()
		if err == nil {
			err = fmt.Errorf("port %d vanished from sysfs: %w", p.Num(), syscall.ENODEV)
		}
		return nil, fmt.Errorf("kernel: %s port %d: %w", p.CA(), p.Num(), err)
	}
	t := NewTransport(p, attrOf(cad, cad.Ports[p.Num()]))
	t.fab = f
	if !f.trs.add(t) {
		t.Close()
		return nil, fmt.Errorf("kernel: open: %w", net.ErrClosed)
	}
	return t, nil
}

// withPlane returns t alone for a normal port, and for a side of a
// planarized HCA (umad.PairByCAName of its CA and port gives two CAs) a
// fabric/pair Transport of t and the other side, opened as libibmad's
// mad_rpc_open_port2 opens it (umad_open_port(name, preferred port)):
// SMPs then leave through the SMI side, every other class through the
// GSI side. When the SMI side cannot be opened, t (the GSI side) carries
// the SMPs too, as libibmad does without enforce_smi; when the GSI side
// cannot be opened, Open fails.
func (f *Fabric) withPlane(t *Transport) (fabric.Transport, error) {
	a := t.Port()
	pr, err := umad.PairByCAName(f.fsys, a.CAName, a.PortNum, false)
	if err != nil || !pr.Planarized() {
		return t, nil
	}
	if a.CAName == pr.GSIName {
		s, err := f.openOne(pr.SMIName, pr.SMIPreferredPort)
		if err != nil {
			return t, nil
		}
		return newPair(s, t), nil
	}
	g, err := f.openOne(pr.GSIName, pr.GSIPreferredPort)
	if err != nil {
		t.Close()
		return nil, fmt.Errorf("kernel: %s port %d is the SMI side of a planarized port; its GSI side: %w", a.CAName, a.PortNum, err)
	}
	return newPair(t, g), nil
}

// OpenPort2 opens a port as current libibmad's mad_rpc_open_port2(ca,
// port, ..., enforceSMI) does, which every infiniband-diags tool of
// current rdma-core calls (rdma-core #1541, #1641): it finds the SMI/GSI
// pair of (ca, port) first (umad.PairByCAName: an empty ca and port 0
// take the first pair whose device has a port above Down, in pair order;
// with enforceSMI a pair without an SMI side, a lone IsSMDisabled port,
// never matches), then opens the SMI side's preferred port and the GSI
// side's. When the SMI side cannot be opened, enforceSMI fails, and
// without it the GSI side carries the SMPs too (get_port_for_class). A
// pair whose sides are one device opens one Transport (libibmad opens the
// umad port twice, to the same effect); a planarized pair a fabric/pair
// Transport of both, as Open returns it. No pair wraps fabric.ErrNoDevice.
func (f *Fabric) OpenPort2(ctx context.Context, ca string, port int, enforceSMI bool) (fabric.Transport, error) {
	if err := f.canOpen(ctx); err != nil {
		return nil, err
	}
	pr, err := f.Pair(ctx, ca, port, enforceSMI)
	if err != nil {
		return nil, err
	}
	var smi *Transport
	if pr.SMIName != "" {
		if smi, err = f.openOne(pr.SMIName, pr.SMIPort); err != nil && enforceSMI {
			return nil, fmt.Errorf("%w (the SMI side of %s port %d; enforce_smi sends SMPs through it alone)", err, pr.GSIName, pr.GSIPort)
		}
	}
	if smi != nil && pr.SMIName == pr.GSIName && pr.SMIPort == pr.GSIPort {
		return smi, nil
	}
	gsi, err := f.openOne(pr.GSIName, pr.GSIPort)
	if err != nil {
		if smi != nil {
			smi.Close()
			err = fmt.Errorf("%w (the GSI side of %s port %d)", err, pr.SMIName, pr.SMIPort)
		}
		return nil, err
	}
	if smi == nil {
		return gsi, nil
	}
	return newPair(smi, gsi), nil
}

func portPair(p umad.CAPair) fabric.PortPair {
	return fabric.PortPair{SMIName: p.SMIName, SMIPort: p.SMIPreferredPort, GSIName: p.GSIName, GSIPort: p.GSIPreferredPort}
}

func newPair(smi, gsi *Transport) fabric.Transport {
	a := gsi.Port()
	a.SMIName, a.SMIPort = smi.Port().CAName, smi.Port().PortNum
	return pair.New(smi, gsi, a)
}

// Pairs implements fabric.Pairer: umad_get_smi_gsi_pairs on sysfs
// (umad.SMIGSIPairs with room for MaxUMADPorts pairs).
func (f *Fabric) Pairs(ctx context.Context) ([]fabric.PortPair, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ps, err := umad.SMIGSIPairs(f.fsys, umad.MaxUMADPorts)
	if err != nil {
		return nil, fmt.Errorf("kernel: %w", err)
	}
	out := make([]fabric.PortPair, len(ps))
	for i, p := range ps {
		out[i] = portPair(p)
	}
	return out, nil
}

// Pair implements fabric.Pairer: umad_get_smi_gsi_pair_by_ca_name on
// sysfs (umad.PairByCAName); no match wraps fabric.ErrNoDevice.
func (f *Fabric) Pair(ctx context.Context, ca string, port int, enforceSMI bool) (fabric.PortPair, error) {
	if err := ctx.Err(); err != nil {
		return fabric.PortPair{}, err
	}
	p, err := umad.PairByCAName(f.fsys, ca, port, enforceSMI)
	if errors.Is(err, syscall.ENODEV) {
		return fabric.PortPair{}, fmt.Errorf("kernel: %w (%w)", err, fabric.ErrNoDevice)
	}
	if err != nil {
		return fabric.PortPair{}, fmt.Errorf("kernel: %w", err)
	}
	return portPair(p), nil
}

// Close closes every Transport opened from f.
func (f *Fabric) Close() error {
	return f.trs.closeAll((*Transport).Close)
}

// Transport is an open umad port as a fabric.Transport. Register, Send
// and Unregister are safe for concurrent use; Recv has one caller at a
// time (it is serialized); Close may be called at any time.
type Transport struct {
	p    *umad.Port
	attr fabric.PortAttr
	fab  *Fabric

	rmu sync.Mutex // serializes Recv (the read side of the Port)

	mu     sync.Mutex // guards the fields below
	agents [fabric.MaxAgents]*fabric.Agent
	closed bool
}

var (
	_ fabric.Transport = (*Transport)(nil)
)

// NewTransport makes a Transport of an open Port, which it owns.
func NewTransport(p *umad.Port, attr fabric.PortAttr) *Transport {
	return &Transport{p: p, attr: attr}
}

// Caps reports RMPP (agents of RMPP classes are registered with
// rmpp_version 1 and the kernel segments and reassembles) and Production
// (a real fabric: the engine refuses Sets unless the run allows them).
// The kernel retries out of sight, so retransmissions are not counted.
func (t *Transport) Caps() fabric.Caps {
	// The HCA drops a packet whose CRCs fail: what umad reads is intact.
	return fabric.Caps{RMPP: true, Production: true, Intact: fabric.Always}
}

// Port implements fabric.Transport.
func (t *Transport) Port() fabric.PortAttr { return t.attr }

func rmppClass(c uint8) bool {
	return c == 0x03 || c == 0x06 || c == 0x10 || c == 0x12 || (c >= 0x30 && c <= 0x4f)
}

func (t *Transport) errClosed(op string) error {
	return fmt.Errorf("kernel: %s %s: %w", t.p.Path(), op, fabric.ErrPortClosed)
}

// Register implements fabric.Transport with REGISTER_AGENT2. RMPP classes
// and send-only agents get rmpp_version 1 (kernel RMPP); other classes
// get 0, since the kernel refuses rmpp_version on them.
func (t *Transport) Register(ctx context.Context, a fabric.Agent) (fabric.AgentID, error) {
	if err := ctx.Err(); err != nil {
		return -1, err
	}
	if a.RMPPVersion > 1 {
		return -1, fmt.Errorf("kernel: register %v: rmpp_version %d: %w", a, a.RMPPVersion, fabric.ErrInvalid)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return -1, t.errClosed("register")
	}
	n := 0
	for _, o := range t.agents {
		if o == nil {
			continue
		}
		n++
		if a.Class != 0 && o.Class == a.Class && o.Version == a.Version && o.OUI == a.OUI &&
			(o.Methods[0]&a.Methods[0] != 0 || o.Methods[1]&a.Methods[1] != 0) {
			return -1, fmt.Errorf("kernel: register %v: %w", a, fabric.ErrMethodInUse)
		}
	}
	if n >= fabric.MaxAgents {
		return -1, fmt.Errorf("kernel: register %v: %w", a, fabric.ErrTooManyAgents)
	}
	rmpp := uint8(0)
	if a.Class == 0 || rmppClass(a.Class) {
		rmpp = 1
	}
	id, err := t.p.Register2(umad.Agent{Class: a.Class, Version: a.Version, Methods: a.Methods, OUI: a.OUI, RMPPVersion: rmpp})
	switch {
	case err == nil:
	case errors.Is(err, syscall.ENOMEM):
		return -1, fmt.Errorf("kernel: register %v: %w (%w)", a, fabric.ErrTooManyAgents, err)
	case errors.Is(err, syscall.EINVAL) && a.Class != 0 && a.Methods != [2]uint64{}:
		// Another fd or a kernel agent of the port owns a method: the
		// kernel says only EINVAL, and the other causes of EINVAL were
		// ruled out above or by umad.Port.Register2.
		return -1, fmt.Errorf("kernel: register %v: %w (or invalid: %w)", a, fabric.ErrMethodInUse, err)
	case errors.Is(err, syscall.EINVAL):
		return -1, fmt.Errorf("kernel: register %v: %w (%w)", a, fabric.ErrInvalid, err)
	default:
		return -1, fmt.Errorf("kernel: register %v: %w", a, err)
	}
	if id < 0 || id >= fabric.MaxAgents {
		return -1, fmt.Errorf("kernel: register %v: kernel returned agent id %d: %w", a, id, syscall.EIO)
	}
	cp := a
	t.agents[id] = &cp
	return fabric.AgentID(id), nil
}

// Unregister implements fabric.Transport.
func (t *Transport) Unregister(ctx context.Context, id fabric.AgentID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return t.errClosed("unregister")
	}
	if id < 0 || id >= fabric.MaxAgents || t.agents[id] == nil {
		return fmt.Errorf("kernel: unregister agent %d: %w", id, fabric.ErrNoAgent)
	}
	if err := t.p.Unregister(int(id)); err != nil {
		if errors.Is(err, syscall.EINVAL) {
			return fmt.Errorf("kernel: unregister agent %d: %w (%w)", id, fabric.ErrNoAgent, err)
		}
		return fmt.Errorf("kernel: %w", err)
	}
	t.agents[id] = nil
	return nil
}

// timeoutMS converts a Packet timeout to the header's timeout_ms: rounded
// up to whole milliseconds, negative means forever (0xFFFFFFFF).
func timeoutMS(d time.Duration) uint32 {
	switch {
	case d < 0:
		return 0xffffffff
	case d == 0:
		return 0
	}
	ms := (d + time.Millisecond - 1) / time.Millisecond
	if ms > 0x7fffffff {
		ms = 0x7fffffff
	}
	return uint32(ms)
}

// Send implements fabric.Transport: one write of header and MAD.
func (t *Transport) Send(ctx context.Context, p *fabric.Packet) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t.mu.Lock()
	closed := t.closed
	known := p.Agent >= 0 && p.Agent < fabric.MaxAgents && t.agents[p.Agent] != nil
	t.mu.Unlock()
	if closed {
		return t.errClosed("send")
	}
	if !known {
		return fmt.Errorf("kernel: send from agent %d: %w", p.Agent, fabric.ErrNoAgent)
	}
	if len(p.Data) < umad.MinMADWrite {
		return fmt.Errorf("kernel: send from agent %d: MAD of %d bytes, need at least %d: %w", p.Agent, len(p.Data), umad.MinMADWrite, fabric.ErrInvalid)
	}
	if p.Retries < 0 {
		return fmt.Errorf("kernel: send from agent %d: retries %d: %w", p.Agent, p.Retries, fabric.ErrInvalid)
	}
	a := p.Addr
	h := umad.Header{Agent: uint32(p.Agent), TimeoutMS: timeoutMS(p.Timeout), Retries: uint32(p.Retries),
		QPN: a.QPN, QKey: a.QKey, LID: a.LID, SL: a.SL, PathBits: a.PathBits, GRHPresent: a.GRH,
		GIDIndex: a.GIDIndex, HopLimit: a.HopLimit, TrafficClass: a.TClass, GID: a.GID,
		FlowLabel: a.FlowLabel, PKeyIndex: a.PKeyIndex}
	err := t.p.Send(&h, p.Data, nil)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrClosed):
		return t.errClosed("send")
	case errors.Is(err, syscall.EINVAL) && !a.GRH && t.Port().RoCE():
		return fmt.Errorf("kernel: %w (%w): %s port %d is RoCE (link layer Ethernet), where every MAD needs a GRH: give the destination GID",
			err, fabric.ErrInvalid, t.Port().CAName, t.Port().PortNum)
	case errors.Is(err, syscall.EINVAL):
		return fmt.Errorf("kernel: %w (%w)", err, fabric.ErrInvalid)
	}
	return fmt.Errorf("kernel: %w", err)
}

// Recv implements fabric.Transport: a read with ctx as the read deadline
// (context.AfterFunc sets a past deadline when ctx ends). A timed-out
// send comes back with Status fabric.StatusTimeout and Data holding the
// 24-byte MAD header the kernel returns, with the TID as transmitted.
func (t *Transport) Recv(ctx context.Context, p *fabric.Packet) error {
	t.mu.Lock()
	closed := t.closed
	t.mu.Unlock()
	if closed {
		return t.errClosed("recv")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	t.rmu.Lock()
	defer t.rmu.Unlock()
	fired := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		t.p.SetReadDeadline(time.Unix(1, 0))
		close(fired)
	})
	defer func() {
		if !stop() {
			<-fired
			t.p.SetReadDeadline(time.Time{})
		}
	}()
	var h umad.Header
	for {
		data, err := t.p.Recv(&h, p.Data[:0])
		if err == nil {
			t.fill(p, &h, data)
			return nil
		}
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			if ctx.Err() != nil {
				return ctx.Err()
			}
			continue // a deadline left over from a previous call
		case errors.Is(err, os.ErrClosed):
			return t.errClosed("recv")
		}
		t.mu.Lock()
		closed := t.closed
		t.mu.Unlock()
		if closed {
			return t.errClosed("recv")
		}
		return fmt.Errorf("kernel: %w", err)
	}
}

func (t *Transport) fill(p *fabric.Packet, h *umad.Header, data []byte) {
	p.Agent = fabric.AgentID(h.Agent)
	p.Status = int(h.Status)
	p.Bounced = false // the kernel bounces nothing: its timeouts are its timer's
	p.Retries = int(h.Retries)
	switch {
	case h.TimeoutMS == 0:
		p.Timeout = 0
	case int32(h.TimeoutMS) < 0:
		p.Timeout = -1
	default:
		p.Timeout = time.Duration(h.TimeoutMS) * time.Millisecond
	}
	p.Addr = fabric.Addr{LID: h.LID, QPN: h.QPN, QKey: h.QKey, SL: h.SL, PathBits: h.PathBits,
		PKeyIndex: h.PKeyIndex, GRH: h.GRHPresent, GIDIndex: h.GIDIndex, HopLimit: h.HopLimit,
		TClass: h.TrafficClass, FlowLabel: h.FlowLabel, GID: h.GID}
	p.Data = data
}

// Close implements fabric.Transport: it closes the device, which
// unblocks Recv; the kernel unregisters the agents. Idempotent.
func (t *Transport) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	t.mu.Unlock()
	if t.fab != nil {
		t.fab.trs.remove(t)
	}
	if err := t.p.Close(); err != nil {
		return fmt.Errorf("kernel: close %s: %w", t.p.Path(), err)
	}
	return nil
}
