package sim

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/mux"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// Planarized CAs (the model is docs/planes.md's): a planarized CA is one
// node whose ports are its planes, one plane per port, all with one port
// GUID. On the wire each plane port is an ordinary CA port of its plane:
// the SM sweeps it through that plane, it gets a LID of its own, and it
// answers SMPs (its SMA) as any CA port does, without IsSMdisabled. On the
// host the CA is libibumad's SMI/GSI pair: each plane port is an SMI
// device (Attach: SMPs only), and the aggregated port is the GSI device
// (AttachGSI: every other class; PortInfo's CapabilityMask with
// IsSMdisabled, the bit umad_get_smi_gsi_pairs reads). The GSI device
// sends each GMP on the plane that routes its destination LID, so a GMP's
// packets and counters move on that plane's port; GMPs that arrive on any
// plane port reach the GSI device's agents, and its PMA answers for every
// plane port (PortSelect a plane's port number) and for the aggregated
// port (AllPortSelect: the planes' sum; its ClassPortInfo does not announce
// it, as a CA's does not, so ibqueryerrors reads the planes one by one).

// wireKind says which device of a planarized CA a wire is, and so which
// classes it may send.
type wireKind uint8

const (
	wirePort wireKind = iota // an ordinary port: every class
	wireSMI                  // a plane port of a planarized CA: SMPs only
	wireGSI                  // a planarized CA's aggregated port: GMPs only
	wirePair                 // SMPs on a plane port, GMPs on the GSI (Open; libibmad's port pair)
)

// isSMP reports whether the MAD b is an SMP (LID-routed or directed).
func isSMP(b []byte) bool {
	c := mad.MgmtClassOf(b)
	return c == mad.ClassSubnLID || c == mad.ClassSubnDR
}

// source returns the port a MAD the wire sends leaves from: the wire's
// port, or for a GMP of a planarized CA's GSI device the plane port that
// reaches dlid. A class the wire's device does not carry is an error.
// f.mu is held.
func (w *wire) source(b []byte, dlid uint16) (*port, error) {
	smp := isSMP(b)
	switch {
	case w.kind == wirePort:
		return w.p, nil
	case w.kind == wireSMI && !smp:
		return nil, fmt.Errorf("sim: %s is a plane port (SMI device) of planarized CA %q: it carries SMPs only; send class 0x%02x on the CA's GSI device: %w",
			w.p, w.p.node.id, mad.MgmtClassOf(b), fabric.ErrInvalid)
	case w.kind == wireGSI && smp:
		return nil, fmt.Errorf("sim: %q's GSI device has IsSMdisabled: it sends no SMPs; send them on a plane port (SMI device): %w",
			w.p.node.id, fabric.ErrInvalid)
	case smp:
		return w.p, nil
	}
	return w.p.node.planeTo(dlid), nil
}

// planeTo returns the plane port of planarized CA n a GMP to dlid leaves
// by: the port that holds dlid, else the first linked port (in port order)
// whose switch holds or forwards it, else the first linked port (the GMP
// is then dropped on the way, as on a plane that cannot route it).
func (n *node) planeTo(dlid uint16) *port {
	var first *port
	for _, p := range n.ports[1:] {
		if p.owns(dlid) {
			return p
		}
		if !p.up(false) {
			continue
		}
		if first == nil {
			first = p
		}
		if s := p.remote.node; s.typ == typeSwitch && (s.ports[0].owns(dlid) || s.egress(dlid) != nil) {
			return p
		}
	}
	if first == nil {
		return n.ports[1]
	}
	return first
}

// attachmentsOf returns the attachments of p, made on first use: a
// planarized CA's ports share one set (one registry), as a GMP that
// arrives on any plane reaches the GSI device's agents. f.mu is held.
func (f *Fabric) attachmentsOf(p *port) *attachments {
	if p.att != nil {
		return p.att
	}
	a := &attachments{reg: mux.NewPort()}
	if p.node.planarized {
		for _, q := range p.node.ports[1:] {
			q.att = a
		}
	}
	p.att = a
	return a
}

// attachKind opens a transport of kind k on port p. f.mu is held.
func (f *Fabric) attachKind(p *port, k wireKind) fabric.Transport {
	att := f.attachmentsOf(p)
	w := &wire{f: f, p: p, kind: k}
	attr := f.portAttr(p)
	switch k {
	case wireGSI:
		attr = f.gsiAttr(p.node, nil)
	case wirePair:
		attr = f.gsiAttr(p.node, p)
		attr.SMIName, attr.SMIPort = p.node.id, p.num
	}
	w.m = mux.New(w, attr, &mux.Options{Port: att.reg, AnswerUnowned: true, Logger: f.log, Intact: f.intact})
	w.rx = w.m
	att.wires = append(att.wires, w)
	f.open = append(f.open, w)
	return w.m
}

// AttachGSI opens the GSI device of a planarized CA (node id or
// description): its aggregated port, which sends and receives every class
// but SMPs (see the package doc). Several may be open at once.
func (f *Fabric) AttachGSI(node string) (fabric.Transport, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return nil, errClosed("attach")
	}
	n := f.lookup(node)
	switch {
	case n == nil:
		return nil, fabric.NoDevice("sim: attach GSI %q: no such node", node)
	case !n.planarized:
		return nil, fabric.NoDevice("sim: attach GSI %q: not a planarized CA (its ports are SMI and GSI at once)", n.id)
	}
	return f.attachKind(n.ports[1], wireGSI), nil
}

// GSISuffix names a planarized CA's GSI device: the node id and this
// suffix ("h000-00:gsi"), a CA of one port in Ports and Open.
const GSISuffix = ":gsi"

// gsiNode returns the planarized CA whose GSI device ca names, or nil.
// f.mu is held.
func (f *Fabric) gsiNode(ca string) *node {
	id, ok := strings.CutSuffix(ca, GSISuffix)
	if !ok {
		return nil
	}
	if n := f.lookup(id); n != nil && n.planarized {
		return n
	}
	return nil
}

// smiPort returns the plane port planarized CA n's GSI device pairs with
// when none is named: its first Active port, else port 1
// (umad_get_smi_gsi_pair_by_ca_name's preferred port).
func (n *node) smiPort() *port {
	for _, q := range n.ports[1:] {
		if q.state == smp.PortStateActive {
			return q
		}
	}
	return n.ports[1]
}

// gsiAttr describes planarized CA n's GSI device as umad_get_port would:
// a CA named for GSISuffix with one port, its LID and state those of the
// plane port via (nil: smiPort), IsSMdisabled in its capability mask.
// f.mu is held.
func (f *Fabric) gsiAttr(n *node, via *port) fabric.PortAttr {
	if via == nil {
		via = n.smiPort()
	}
	a := f.portAttr(via)
	a.CAName, a.PortNum, a.CANumPorts = n.id+GSISuffix, 1, 1
	a.CapMask |= smp.CapIsSMDisabled
	return a
}

// Planarized reports whether node (id or description) is a planarized CA
// and its number of planes (ports).
func (f *Fabric) Planarized(node string) (planes int, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.lookup(node)
	if n == nil || !n.planarized {
		return 0, false
	}
	return n.numPorts, true
}

var _ fabric.Pairer = (*Fabric)(nil)

// Pairs lists the CAs' SMI/GSI pairs as umad_get_smi_gsi_pairs does: one
// per CA, by name; a planarized CA's SMI side is the node (its plane
// ports), its GSI side the GSI device (GSISuffix); preferred ports 0.
func (f *Fabric) Pairs(ctx context.Context) ([]fabric.PortPair, error) {
	if err := f.lockOpen(ctx, "pairs"); err != nil {
		return nil, err
	}
	cas := f.casByName("")
	f.mu.Unlock()
	pairs := make([]fabric.PortPair, len(cas))
	for i, n := range cas {
		pairs[i] = n.pairOf(nil)
	}
	return pairs, nil
}

// casByName returns the CAs named ca (id or description; "" for every
// one), sorted by id. f.mu is held.
func (f *Fabric) casByName(ca string) []*node {
	cas := slices.DeleteFunc(slices.Clone(f.nodes), func(n *node) bool {
		return n.typ != typeCA || ca != "" && n.id != ca && n.desc != ca
	})
	slices.SortStableFunc(cas, func(a, b *node) int { return strings.Compare(a.id, b.id) })
	return cas
}

// Pair finds the pair of (ca, port) as umad_get_smi_gsi_pair_by_ca_name
// does: ca a CA or GSI device ("" for any), port one of its ports (0 for
// any); a port named with its CA is taken in any state, else the first
// above Down, the CAs taken by name. A planarized CA's pair is its plane
// port (SMI side) and its GSI device (port 1); another CA's port is both
// sides. enforceSMI skips pairs without an SMI side: every simulated CA
// has one. No match wraps fabric.ErrNoDevice.
func (f *Fabric) Pair(ctx context.Context, ca string, port int, enforceSMI bool) (fabric.PortPair, error) {
	if err := f.lockOpen(ctx, "pair"); err != nil {
		return fabric.PortPair{}, err
	}
	defer f.mu.Unlock()
	named := ca != "" && port != 0
	if n := f.gsiNode(ca); n != nil {
		if port > 1 {
			return fabric.PortPair{}, fabric.NoDevice("sim: no SMI/GSI pair for CA %q port %d: a GSI device has port 1 only", ca, port)
		}
		return n.pairOf(n.smiPort()), nil
	}
	for _, n := range f.casByName(ca) {
		for _, p := range n.ports[1:] {
			if port != 0 && p.num != port {
				continue
			}
			if named || p.state > smp.PortStateDown {
				return n.pairOf(p), nil
			}
		}
	}
	return fabric.PortPair{}, fabric.NoDevice("sim: no SMI/GSI pair for CA %q port %d", ca, port)
}

// pairOf is the pair of CA port p: p itself, or for a planarized CA p
// (SMI) and the GSI device's port 1; with p nil, n's pair without
// preferred ports (umad_get_smi_gsi_pairs').
func (n *node) pairOf(p *port) fabric.PortPair {
	pp := fabric.PortPair{SMIName: n.id, GSIName: n.id}
	if p != nil {
		pp.SMIPort, pp.GSIPort = p.num, p.num
	}
	if n.planarized {
		pp.GSIName = n.id + GSISuffix
		if p != nil {
			pp.GSIPort = 1
		}
	}
	return pp
}

// One SM per plane. A planarized fabric is one subnet per plane, each with
// its own SM: a site runs one OpenSM per plane, bound to that plane's
// port. When the simulated SM runs on a planarized CA, each of its plane ports is the SM
// of its plane: the master whose LID that plane's ports carry in
// PortInfo.MasterSMLID, which answers SMInfo as MASTER, whose SA answers the
// requests sent to its LID and whose traps (64, 65, 128, 144) go to the
// subscriptions made through it. Every other fabric has one SM (smPort).

// planeSMs returns, by port.idx, the SM port of each port's plane when the
// SM runs on a planarized CA: the SM CA's plane port whose plane (its
// switches, through the cables as the topology has them) the port is on;
// nil for a port no plane port reaches, and nil in all when the SM's CA
// is not planarized. f.mu is held or the fabric not yet shared.
func (f *Fabric) planeSMs() []*port {
	if !f.smPort.node.planarized {
		return nil
	}
	of := make([]*port, f.nports)
	seen := make([]bool, len(f.nodes))
	var queue []*node
	for _, s := range f.smPort.node.ports[1:] {
		of[s.idx] = s
		switch r := s.remote; {
		case r == nil:
		case r.node.typ != typeSwitch:
			if of[r.idx] == nil {
				of[r.idx] = s
			}
		case !seen[r.node.idx]:
			seen[r.node.idx] = true
			queue = append(queue[:0], r.node)
		}
		for len(queue) > 0 {
			n := queue[0]
			queue = queue[1:]
			for _, p := range n.ports {
				if p == nil {
					continue
				}
				of[p.idx] = s
				switch r := p.remote; {
				case r == nil || p.num == 0:
				case r.node.typ == typeSwitch:
					if !seen[r.node.idx] {
						seen[r.node.idx] = true
						queue = append(queue, r.node)
					}
				case of[r.idx] == nil:
					of[r.idx] = s
				}
			}
		}
	}
	return of
}

// smFor returns the SM port of p's subnet: its plane's SM (planeSMs), else
// the fabric's SM port.
func (f *Fabric) smFor(p *port) *port {
	if f.smOf != nil {
		if s := f.smOf[p.idx]; s != nil {
			return s
		}
	}
	return f.smPort
}

// isSMPort reports whether p is an SM's port: the fabric's, or a plane
// port of the planarized CA the SM runs on.
func (f *Fabric) isSMPort(p *port) bool {
	return p == f.smPort || f.smOf != nil && p.node == f.smPort.node && f.smOf[p.idx] == p
}

// smToward returns the SM port that sends to lid: the plane SM whose plane
// routes it (planeTo), else the fabric's SM port. f.mu is held.
func (f *Fabric) smToward(lid uint16) *port {
	if f.smOf == nil {
		return f.smPort
	}
	return f.smPort.node.planeTo(lid)
}
