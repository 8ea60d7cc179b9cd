package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

const planesTopo = "fattree-xdr-4planes.net"

// detach takes a raw wire off its port (a planarized CA's ports share
// their attachments, and the first wire gets what arrives).
func (r *raw) detach() {
	f := r.w.f
	f.mu.Lock()
	defer f.mu.Unlock()
	a := r.w.p.att
	a.wires = slices.DeleteFunc(a.wires, func(x *wire) bool { return x == r.w })
}

// TestPlanarizedSweep: the SM on planarized h000-00 sweeps every plane
// through its plane ports; each plane port of a planarized CA answers
// SMPs as an ordinary CA port of its plane (NodeInfo's LocalPortNum its
// number, PortGUID the one port GUID the planes share, a LID of its own,
// no IsSMdisabled), and the switches of a plane reach only that plane.
func TestPlanarizedSweep(t *testing.T) {
	f := mustLoad(t, planesTopo, nil)
	if planes, ok := f.Planarized("h001-02"); !ok || planes != 4 {
		t.Fatalf("Planarized(h001-02) = %d, %v", planes, ok)
	}
	if _, ok := f.Planarized("p1-leaf000"); ok {
		t.Error("a switch is planarized")
	}
	lids := map[uint16]bool{}
	for p := 1; p <= 4; p++ {
		smi := attachKindRaw(t, f, "h000-00", p, wireSMI)
		defer smi.detach()
		// h000-00 port p -> pP-leaf000 port 1 -> back out to h000-01's
		// port p (leaf port 2).
		ni := nodeInfo(t, ok(t, smi.dr(smp.AttrNodeInfo, 0, 0, uint8(p), 2)))
		pi := portInfo(t, ok(t, smi.dr(smp.AttrPortInfo, 0, 0, uint8(p), 2)))
		if ni.NodeType != smp.NodeTypeCA || ni.NumPorts != 4 || int(ni.LocalPortNum) != p || ni.PortGUID != ni.NodeGUID+1 {
			t.Errorf("plane %d: h000-01's NodeInfo %+v", p, ni)
		}
		if pi.CapabilityMask&smp.CapIsSMDisabled != 0 || pi.PortState != smp.PortStateActive || pi.LID == 0 || lids[pi.LID] {
			t.Errorf("plane %d: h000-01's PortInfo: capmask %#x state %d lid %d (LIDs so far %v)", p, pi.CapabilityMask, pi.PortState, pi.LID, lids)
		}
		lids[pi.LID] = true
		desc := strings.TrimRight(string(ok(t, smi.dr(smp.AttrNodeDescription, 0, 0, uint8(p)))[:16]), "\x00")
		if want := "p" + string(rune('0'+p)) + "-leaf000"; desc != want {
			t.Errorf("plane %d: the first hop is %q, want %q", p, desc, want)
		}
		smi.detach()
	}
	// Plane 1's switches do not route plane 2's LIDs.
	smi1 := attachKindRaw(t, f, "h000-00", 1, wireSMI)
	if got := smi1.lid(lidOf(t, f, "h001-00", 2), smp.AttrNodeInfo, 0); got != nil {
		t.Errorf("an SMP from plane 1 to a plane-2 LID was answered")
	}
	if got := smi1.lid(lidOf(t, f, "h001-00", 1), smp.AttrNodeInfo, 0); got == nil {
		t.Errorf("an SMP from plane 1 to a plane-1 LID was not answered")
	}
}

// TestPlanarizedDevices: libibumad's rule, as the simulator's devices
// show it: the SMI devices (plane ports) and the GSI device share one port
// GUID, only the GSI device's capability mask has IsSMdisabled; the SMI
// device sends no GMP and the GSI device no SMP (fabric.ErrInvalid), Open
// pairs them (SMPs on the plane port, GMPs on the GSI device), and a CA
// that is not planarized has no GSI device of its own.
func TestPlanarizedDevices(t *testing.T) {
	ctx := context.Background()
	f := mustLoad(t, planesTopo, nil)
	gsi, smi := opened(t)(f.AttachGSI("h001-01")), opened(t)(f.Attach("h001-01", 3))
	ga, sa := gsi.Port(), smi.Port()
	if ga.PortGUID != sa.PortGUID || ga.CapMask&smp.CapIsSMDisabled == 0 || sa.CapMask&smp.CapIsSMDisabled != 0 {
		t.Errorf("GSI %#x capmask %#x, SMI %#x capmask %#x: want one GUID, IsSMdisabled on the GSI side only",
			ga.PortGUID, ga.CapMask, sa.PortGUID, sa.CapMask)
	}
	smpPkt := &fabric.Packet{Addr: fabric.Addr{LID: fabric.PermissiveLID}, Data: drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 3)}
	gmpPkt := &fabric.Packet{Addr: fabric.Addr{LID: 1, QPN: 1, QKey: qp1QKey}, Data: perfReq(t, mad.MethodGet, perf.AttrClassPortInfo, 0)}
	// Agents of the class each device refuses to send (agent 0).
	if _, err := gsi.Register(ctx, fabric.Agent{Class: mad.ClassSubnDR, Version: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := smi.Register(ctx, fabric.Agent{Class: mad.ClassPerf, Version: 1}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		tr   fabric.Transport
		p    *fabric.Packet
		want string
	}{
		{"GSI sends an SMP", gsi, smpPkt, `"h001-01"'s GSI device has IsSMdisabled`},
		{"SMI sends a GMP", smi, gmpPkt, `"h001-01" port 3 is a plane port (SMI device) of planarized CA "h001-01"`},
	} {
		err := c.tr.Send(ctx, c.p)
		if err == nil || !errors.Is(err, fabric.ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want ErrInvalid with %q", c.name, err, c.want)
		}
	}
	if _, err := f.AttachGSI("p1-leaf000"); err == nil || !strings.Contains(err.Error(), "not a planarized CA") {
		t.Errorf("AttachGSI on a switch: %v", err)
	}
	if _, err := f.AttachGSI("nobody"); err == nil || !errors.Is(err, fabric.ErrNoDevice) {
		t.Errorf("AttachGSI on no node: %v", err)
	}
}

// opened returns a function that takes what an attach returned and fails
// t on its error, else closes the transport when t ends.
func opened(t *testing.T) func(fabric.Transport, error) fabric.Transport {
	return func(tr fabric.Transport, err error) fabric.Transport {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tr.Close() })
		return tr
	}
}

// TestPlanarizedGMPs: the GSI device sends each GMP on the plane that
// routes its destination LID, so the request and its answer move that
// plane port's counters and no other's; the planarized CA's PMA answers
// for any plane port and, with AllPortSelect (which its ClassPortInfo
// does not announce, as a CA's does not), for the aggregated port: the
// planes' sum.
func TestPlanarizedGMPs(t *testing.T) {
	f := mustLoad(t, planesTopo, nil)
	gsi := attachKindRaw(t, f, "h000-00", 1, wireGSI)
	xmit := func(node string, port int) uint64 {
		v, err := f.Counter(node, port, "PortXmitPkts")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	var before [5]uint64
	for p := 1; p <= 4; p++ {
		before[p] = xmit("h000-00", p)
	}
	// h001-02's PMA, through plane 3's LID, asked for plane 3's port.
	dst := lidOf(t, f, "h001-02", 3)
	d := ok(t, gsi.one(dst, perfReq(t, mad.MethodGet, perf.AttrPortCounters, 3)))
	if ps := pcPortSelect.Get(d); ps != 3 {
		t.Errorf("PortSelect %d, want 3", ps)
	}
	for p := 1; p <= 4; p++ {
		want := before[p]
		if p == 3 {
			want++
		}
		if got := xmit("h000-00", p); got != want {
			t.Errorf("h000-00 port %d PortXmitPkts %d, want %d (the GMP leaves by plane 3)", p, got, want)
		}
	}
	// Any plane port through plane 3's LID; AllPortSelect sums them.
	for p := 1; p <= 4; p++ {
		if err := f.SetCounter("h001-02", p, "PortRcvErrors", uint64(p)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		sel  uint8
		want uint64
	}{{1, 1}, {2, 2}, {4, 4}, {perf.AllPorts, 10}} {
		d := ok(t, gsi.one(dst, perfReq(t, mad.MethodGet, perf.AttrPortCounters, c.sel)))
		var pc perf.PortCounters
		if err := pc.UnmarshalBinary(d); err != nil {
			t.Fatal(err)
		}
		if uint64(pc.PortRcvErrors) != c.want {
			t.Errorf("PortSelect %d: PortRcvErrors %d, want %d", c.sel, pc.PortRcvErrors, c.want)
		}
	}
	if st := status(t, gsi.one(dst, perfReq(t, mad.MethodGet, perf.AttrPortCounters, 5))); st != mad.StatusInvalidField {
		t.Errorf("PortSelect 5 of a 4-plane CA: status %#x, want invalid field", st)
	}
	// Not announced: ibqueryerrors would then ask a CA's LID-less
	// undiscovered planes for it; perfquery -a sums the planes itself.
	var cpi mad.ClassPortInfo
	if err := cpi.UnmarshalBinary(ok(t, gsi.one(dst, perfReq(t, mad.MethodGet, perf.AttrClassPortInfo, 0)))); err != nil {
		t.Fatal(err)
	}
	if cpi.CapabilityMask&perf.CapAllPortSelect != 0 {
		t.Errorf("ClassPortInfo capmask %#x with AllPortSelect", cpi.CapabilityMask)
	}
	// A GMP to a LID no plane routes is dropped.
	if got := gsi.send(0xbffe, perfReq(t, mad.MethodGet, perf.AttrClassPortInfo, 0)); len(got) != 0 {
		t.Errorf("a GMP to an unrouted LID was answered: %d MADs", len(got))
	}
}

// TestPlanarizedOpen: Open's pair discovers through the plane port and
// reads counters through the GSI device on one transport, as the tools
// do with libibmad's port pair.
func TestPlanarizedOpen(t *testing.T) {
	ctx := context.Background()
	f := mustLoad(t, planesTopo, nil)
	tr := opened(t)(f.Open(ctx, "h001-03", 2))
	// The pair's port is its GSI side (the kernel backend's rule), its LID
	// plane 2's.
	if p := tr.Port(); p.CAName != "h001-03:gsi" || p.PortNum != 1 || p.CapMask&smp.CapIsSMDisabled == 0 || p.LID != lidOf(t, f, "h001-03", 2) {
		t.Errorf("Open's port %s/%d capmask %#x lid %d", p.CAName, p.PortNum, p.CapMask, p.LID)
	}
	ports, err := f.Ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ports {
		if strings.HasPrefix(p.CAName, "h001-03") {
			names = append(names, fmt.Sprintf("%s/%d %#x", p.CAName, p.PortNum, p.PortGUID))
		}
	}
	if got, want := strings.Join(names, ", "), "h001-03/1 0x100024, h001-03/2 0x100024, h001-03/3 0x100024, h001-03/4 0x100024, h001-03:gsi/1 0x100024"; got != want {
		t.Errorf("Ports: %s\nwant %s", got, want)
	}
	if gsi, err := f.Open(ctx, "h001-03:gsi", 0); err != nil || gsi.Port().LID != lidOf(t, f, "h001-03", 1) {
		t.Errorf("Open of the GSI device: %v", err)
	} else {
		gsi.Close()
	}
	if _, err := f.Open(ctx, "h001-03:gsi", 2); !errors.Is(err, fabric.ErrNoDevice) {
		t.Errorf("Open of the GSI device's port 2: %v", err)
	}
	for _, c := range []struct {
		class uint8
		addr  fabric.Addr
		req   []byte
	}{
		{mad.ClassSubnDR, fabric.Addr{LID: fabric.PermissiveLID}, drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 2)},
		{mad.ClassPerf, fabric.Addr{LID: lidOf(t, f, "h000-00", 2), QPN: 1, QKey: qp1QKey}, perfReq(t, mad.MethodGet, perf.AttrPortCounters, 2)},
	} {
		id, err := tr.Register(ctx, fabric.Agent{Class: c.class, Version: mad.ClassVersionOf(c.req)})
		if err != nil {
			t.Fatal(err)
		}
		p := &fabric.Packet{Agent: id, Addr: c.addr, Data: c.req, Timeout: 10 * time.Second}
		if err := tr.Send(ctx, p); err != nil {
			t.Fatalf("class %#x: %v", c.class, err)
		}
		var got fabric.Packet
		if err := tr.Recv(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if got.Status != 0 || mad.MethodOf(got.Data) != mad.MethodGetResp || smp.Status(got.Data) != 0 {
			t.Errorf("class %#x: status %d, method %#x, MAD status %#x", c.class, got.Status, mad.MethodOf(got.Data), smp.Status(got.Data))
		}
	}
	f.Close()
	for _, open := range []func() (fabric.Transport, error){
		func() (fabric.Transport, error) { return f.Open(ctx, "h001-03:gsi", 1) },
		func() (fabric.Transport, error) { return f.AttachGSI("h001-03") },
	} {
		if _, err := open(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("GSI device of a closed fabric: %v", err)
		}
	}
}

// TestPlanarizedPairs: the simulator's pairs follow libibumad's rule:
// a planarized CA pairs its plane ports (SMI) with its GSI device, any
// other CA is its own pair; Pair fills the preferred ports as
// umad_get_smi_gsi_pair_by_ca_name does, a named port in any state.
func TestPlanarizedPairs(t *testing.T) {
	ctx := context.Background()
	f := mustLoad(t, planesTopo, nil)
	pairs, err := fabric.PairsOf(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 8 || pairs[0] != (fabric.PortPair{SMIName: "h000-00", GSIName: "h000-00:gsi"}) || !pairs[7].Planarized() {
		t.Errorf("pairs %+v", pairs)
	}
	if err := f.SetLink("h001-02", 1, false); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		ca   string
		port int
		want fabric.PortPair
		err  string
	}{
		{"", 0, fabric.PortPair{SMIName: "h000-00", SMIPort: 1, GSIName: "h000-00:gsi", GSIPort: 1}, ""},
		{"h001-02", 0, fabric.PortPair{SMIName: "h001-02", SMIPort: 2, GSIName: "h001-02:gsi", GSIPort: 1}, ""},
		{"h001-02", 1, fabric.PortPair{SMIName: "h001-02", SMIPort: 1, GSIName: "h001-02:gsi", GSIPort: 1}, ""},
		{"h001-02:gsi", 0, fabric.PortPair{SMIName: "h001-02", SMIPort: 2, GSIName: "h001-02:gsi", GSIPort: 1}, ""},
		{"h001-02:gsi", 2, fabric.PortPair{}, "a GSI device has port 1 only"},
		{"h001-02", 5, fabric.PortPair{}, `no SMI/GSI pair for CA "h001-02" port 5`},
		{"p1-leaf000", 0, fabric.PortPair{}, `no SMI/GSI pair for CA "p1-leaf000"`},
	} {
		got, err := fabric.PairOf(ctx, f, c.ca, c.port, true)
		switch {
		case c.err != "" && (err == nil || !errors.Is(err, fabric.ErrNoDevice) || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Pair(%q, %d) = %+v, %v; want ENODEV %q", c.ca, c.port, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("Pair(%q, %d) = %+v, %v; want %+v", c.ca, c.port, got, err, c.want)
		}
	}
	tr := opened(t)(f.Open(ctx, "h001-02", 0))
	if a := tr.Port(); a.SMIName != "h001-02" || a.SMIPort != 2 || a.CAName != "h001-02:gsi" {
		t.Errorf("Open's port: SMI %s/%d, CA %s", a.SMIName, a.SMIPort, a.CAName)
	}
}

// TestPlanarizedTraffic: the background load moves each plane port's
// counters by its own share (its load and link), which the GSI side's PMA
// reads per plane; AllPortSelect gives the aggregated port's, their sum.
func TestPlanarizedTraffic(t *testing.T) {
	f := mustLoad(t, planesTopo, nil)
	clock := time.Unix(1_700_000_000, 0)
	if err := f.SetTraffic(&Traffic{Load: 0.5, Now: func() time.Time { return clock }}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Second)
	gsi := attachKindRaw(t, f, "h000-00", 1, wireGSI)
	dst := lidOf(t, f, "h001-01", 2)
	xmit := func(sel uint8) uint64 {
		var pce perf.PortCountersExtended
		if err := pce.UnmarshalBinary(ok(t, gsi.one(dst, perfReq(t, mad.MethodGet, perf.AttrPortCountersExtended, sel)))); err != nil {
			t.Fatal(err)
		}
		return pce.PortXmitData
	}
	var sum uint64
	seen := map[uint64]bool{}
	for p := uint8(1); p <= 4; p++ {
		v := xmit(p)
		if v == 0 || seen[v] {
			t.Errorf("plane %d: PortXmitData %d (planes so far %v): want its own share of the load", p, v, seen)
		}
		seen[v] = true
		sum += v
	}
	// Each read's answer leaves by plane 2 and adds its own words.
	if all := xmit(perf.AllPorts); all < sum || all > sum+4*mad.Size/4 {
		t.Errorf("AllPortSelect PortXmitData %d, want the planes' sum %d", all, sum)
	}
}

// FuzzPlanarizedTransmit sends arbitrary MADs into the planarized tree
// from each device of planarized h000-00 (a plane port's SMI side, its GSI
// side, Open's pair) and from a plane's switch: nothing panics, a device
// refuses only the classes it does not carry (and short MADs), and every
// port keeps its invariants.
func FuzzPlanarizedTransmit(f *testing.F) {
	t := f
	f.Add(uint16(fabric.PermissiveLID), drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 2, 5, 1))
	f.Add(uint16(2), perfReq(t, mad.MethodSet, perf.AttrPortCounters, 0xff))
	f.Add(uint16(41), perfReq(t, mad.MethodGet, perf.AttrPortCountersExtended, 3))
	f.Add(uint16(1), saReq(t, mad.MethodGet, sa.AttrNodeRecord, 0, make([]byte, 64)))
	f.Fuzz(func(t *testing.T, lid uint16, data []byte) {
		fab, err := Load(topology(planesTopo), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer fab.Close()
		if len(data) > mad.Size {
			data = data[:mad.Size]
		}
		for _, at := range []struct {
			node string
			port int
			kind wireKind
		}{{"h000-00", 2, wireSMI}, {"h000-00", 1, wireGSI}, {"h000-00", 3, wirePair}, {"p2-leaf001", 0, wirePort}} {
			r := attachKindRaw(t, fab, at.node, at.port, at.kind)
			err := r.w.Transmit(&fabric.Packet{Addr: fabric.Addr{LID: lid}, Data: data})
			short := len(data) < mad.HeaderSize
			refused := !short && (at.kind == wireSMI && !isSMP(data) || at.kind == wireGSI && isSMP(data))
			if (short || refused) != (err != nil) || refused && !errors.Is(err, fabric.ErrInvalid) {
				t.Fatalf("%s/%d kind %d, %d bytes: %v", at.node, at.port, at.kind, len(data), err)
			}
			r.detach()
		}
		for _, n := range fab.nodes {
			for _, p := range n.ports {
				if p != nil && p.lid != uint16(piLID.Get(p.pi[:])) {
					t.Fatalf("%v: cached LID out of step", p)
				}
			}
		}
	})
}

// TestPlanarizedSMPerPlane: with the SM on planarized h000-00, each plane
// is a subnet of its own whose SM is h000-00's plane port (one OpenSM per
// plane): that plane's ports, switches' too, carry its LID in
// MasterSMLID; it answers SMInfo as the MASTER with IsSM in its
// capability mask; its SA answers what is sent to its LID (SMInfoRecord
// naming it, PortInfoRecords' LocalPortNum towards it); and a trap on
// its plane goes, issued by it, to the subscriptions made through it
// alone.
func TestPlanarizedSMPerPlane(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustLoad(t, planesTopo, nil)
		smGUID := f.byID["h000-00"].ports[1].guid
		smLIDs := map[int]uint16{}
		for p := 1; p <= 4; p++ {
			smLIDs[p] = lidOf(t, f, "h000-00", p)
		}
		hosts := map[int]*raw{}
		for p := 1; p <= 4; p++ {
			// h001-0N is on leaf001 of each plane; one host per plane,
			// as a planarized CA's plane ports share their attachments.
			r := attachRaw(t, f, fmt.Sprintf("h001-%02d", p-1), p)
			hosts[p] = r
			sm := smLIDs[p]
			if pi := portInfo(t, ok(t, r.dr(smp.AttrPortInfo, 0, 0))); pi.MasterSMLID != sm {
				t.Errorf("plane %d: a host's MasterSMLID %d, want %d", p, pi.MasterSMLID, sm)
			}
			if pi := portInfo(t, ok(t, r.dr(smp.AttrPortInfo, 0, 0, uint8(p)))); pi.MasterSMLID != sm {
				t.Errorf("plane %d: its leaf's MasterSMLID %d, want %d", p, pi.MasterSMLID, sm)
			}
			var si smp.SMInfo
			if err := si.UnmarshalBinary(ok(t, r.lid(sm, smp.AttrSMInfo, 0))); err != nil || si.SMState != smp.SMStateMaster || si.GUID != smGUID {
				t.Errorf("plane %d: SMInfo at LID %d: %+v %v", p, sm, si, err)
			}
			if pi := portInfo(t, ok(t, r.lid(sm, smp.AttrPortInfo, 0))); pi.CapabilityMask&smp.CapIsSM == 0 {
				t.Errorf("plane %d: the SM port's capability mask %#x has no IsSM", p, pi.CapabilityMask)
			}
			got := r.send(sm, saReq(t, mad.MethodGetTable, sa.AttrSMInfoRecord, 0, nil))
			if len(got) != 1 {
				t.Fatalf("plane %d: SMInfoRecord: %d MADs", p, len(got))
			}
			var h rmpp.Header
			_ = h.UnmarshalBinary(got[0].Data)
			recs, err := sa.Records(got[0].Data[:rmpp.HeaderEnd+int(h.Data2)])
			if err != nil || len(recs) != 1 || uint16(recs[0][0])<<8|uint16(recs[0][1]) != sm {
				t.Errorf("plane %d: SMInfoRecords %x %v, want the one of LID %d", p, recs, err, sm)
			}
			if got[0].Addr.LID != sm {
				t.Errorf("plane %d: the SA answered from LID %d, want %d", p, got[0].Addr.LID, sm)
			}
		}
		// A spine's ports but the one towards its plane's SM: the SM saw
		// them through that one.
		f.mu.Lock()
		for p := 1; p <= 4; p++ {
			spine := f.byID[fmt.Sprintf("p%d-spine000", p)]
			e := spine.egress(smLIDs[p])
			for _, q := range spine.ports[1:] {
				if e == nil || f.smIngress(spine, q) != e.num {
					t.Errorf("plane %d: smIngress(%s) = %d, want the port towards the SM (%v)", p, q, f.smIngress(spine, q), e)
				}
			}
		}
		f.mu.Unlock()

		// Subscriptions through plane 1's and plane 2's SMs; a link of
		// plane 2 goes down: plane 2's SM reports it, to plane 2's
		// subscriber alone.
		for _, p := range []int{1, 2} {
			if st := status(t, hosts[p].one(smLIDs[p], informReq(t, smp.TrapAll, 1, 0))); st != 0 {
				t.Fatalf("plane %d: subscribe: status %#04x", p, st)
			}
		}
		if err := f.SetLink("h001-00", 2, false); err != nil {
			t.Fatal(err)
		}
		if ns, _ := reports(t, hosts[1].c.take()); len(ns) != 0 {
			t.Errorf("plane 1's subscriber got plane 2's traps %v", trapNumbers(ns))
		}
		ns, _ := reports(t, hosts[2].c.take())
		if got := trapNumbers(ns); !slices.Equal(got, []uint16{65, 128}) {
			t.Fatalf("plane 2's subscriber got traps %v, want 65 128", got)
		}
		for _, n := range ns {
			if n.TrapNumber == 65 && n.IssuerLID != smLIDs[2] {
				t.Errorf("trap 65 issued by LID %d, want plane 2's SM %d", n.IssuerLID, smLIDs[2])
			}
		}
	})
}

// TestSMs: with the SM on planarized h000-00, SMs lists its four plane
// ports, each its plane's SM at the LID that plane's ports carry as their
// SM's (the sysfs sm_lid of another planarized host's plane port), SM
// the first; an SM on an ordinary node of the planarized fabric (a plane-2
// switch) manages its plane alone; an ordinary fabric has the one SM SM
// gives, plane 0, and a bare one none.
func TestSMs(t *testing.T) {
	f := mustLoad(t, planesTopo, nil)
	sms := f.SMs()
	if len(sms) != 4 {
		t.Fatalf("SMs = %+v, want 4", sms)
	}
	attrs, err := f.Ports(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	planeSM := map[uint8]uint16{} // h001-00's plane ports' SM LIDs, by plane (its port)
	for _, a := range attrs {
		if a.CAName == "h001-00" {
			planeSM[uint8(a.PortNum)] = a.SMLID
		}
	}
	for i, s := range sms {
		p := i + 1
		if s.Node != "h000-00" || s.Port != p || s.Plane != uint8(p) || s.LID != lidOf(t, f, "h000-00", p) || s.LID != planeSM[s.Plane] {
			t.Errorf("SMs[%d] = %+v, want h000-00 port %d, plane %d, at its LID %d (h001-00's plane port's sm_lid %d)", i, s, p, p, lidOf(t, f, "h000-00", p), planeSM[s.Plane])
		}
	}
	if node, port, lid := f.SM(); node != sms[0].Node || port != sms[0].Port || lid != sms[0].LID {
		t.Errorf("SM() = %s %d %d, want SMs' first %+v", node, port, lid, sms[0])
	}

	sw := mustLoad(t, planesTopo, &Options{SMNode: "p2-spine000"})
	if sms := sw.SMs(); len(sms) != 1 || sms[0].Node != "p2-spine000" || sms[0].Port != 0 || sms[0].Plane != 2 || sms[0].LID == 0 {
		t.Errorf("SM on p2-spine000: SMs = %+v, want its port 0 alone, plane 2", sms)
	}
	d := mustLoad(t, "net", nil)
	node, port, lid := d.SM()
	if sms := d.SMs(); !slices.Equal(sms, []SubnetManager{{Node: node, Port: port, LID: lid}}) {
		t.Errorf("net: SMs = %+v, want SM's %s port %d LID %d, plane 0", sms, node, port, lid)
	}
	if sms := mustLoad(t, "net", &Options{Bare: true}).SMs(); sms != nil {
		t.Errorf("bare: SMs = %+v, want none", sms)
	}
}
