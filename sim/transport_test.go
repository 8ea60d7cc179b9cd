package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// peerOn opens the Transport under test on node a and a fabrictest peer
// on node b of the default fabric.
func peerOn(t *testing.T, f *Fabric, a, b string) (fabric.Transport, fabrictest.Peer) {
	t.Helper()
	tr, err := f.Attach(a, 1)
	if err != nil {
		t.Fatal(err)
	}
	ptr, err := f.Attach(b, 1)
	if err != nil {
		t.Fatal(err)
	}
	self := fabric.Addr{LID: ptr.Port().LID, QPN: 1, QKey: qp1QKey}
	to := fabric.Addr{LID: tr.Port().LID, QPN: 1, QKey: qp1QKey}
	peer, err := fabrictest.NewTransportPeer(t.Context(), ptr, self, to)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { peer.Close() })
	return tr, peer
}

func TestTransportConformance(t *testing.T) {
	fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		f, err := Default(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		// The peer sits three switches away: leaf01 - spine - leaf04.
		return peerOn(t, f, "node001", "node016")
	})
}

// TestTransportSecondAttachment runs the suite on a second transport of a
// port that already has one, and on a switch's port 0.
func TestTransportSecondAttachment(t *testing.T) {
	fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		f, err := Default(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		first, err := f.Attach("node005 HCA-1", 1) // by description
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { first.Close() })
		return peerOn(t, f, "node005", "node006")
	})
	fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		f, err := Default(nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		tr, err := f.Attach("spine02", 0)
		if err != nil {
			t.Fatal(err)
		}
		ptr, err := f.Attach("node009", 1)
		if err != nil {
			t.Fatal(err)
		}
		peer, err := fabrictest.NewTransportPeer(t.Context(), ptr,
			fabric.Addr{LID: ptr.Port().LID, QPN: 1}, fabric.Addr{LID: tr.Port().LID, QPN: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { peer.Close() })
		return tr, peer
	})
}

func TestAttachErrors(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	tests := []struct {
		node string
		port int
		want string
	}{
		{"Nope", 1, `sim: attach "Nope": no such node`},
		{"Hca1", 3, `sim: attach "Hca1" port 3: out of range (2 ports)`},
		{"Hca1", 0, `sim: attach "Hca1" port 0: out of range (2 ports)`},
		{"Hca1", -1, `sim: attach "Hca1" port -1: out of range (2 ports)`},
		{"Switch1", 2, `sim: attach "Switch1" port 2: a switch is attached at its port 0`},
	}
	for _, tt := range tests {
		_, err := f.Attach(tt.node, tt.port)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Attach(%q, %d) = %v, want %s", tt.node, tt.port, err, tt.want)
		}
		if nodev := !strings.Contains(tt.want, "switch"); nodev != errors.Is(err, syscall.ENODEV) {
			t.Errorf("Attach(%q, %d) = %v: errors.Is ENODEV %v, want %v", tt.node, tt.port, err, !nodev, nodev)
		}
	}
	if _, err := Load(topology("nope.net"), nil); err == nil || !strings.Contains(err.Error(), "nope.net") {
		t.Errorf("Load of a missing file: %v", err)
	}
	if _, err := Default(&Options{SMNode: "nobody"}); err == nil || err.Error() != `sim: SM node "nobody": no such node` {
		t.Errorf("bad SMNode: %v", err)
	}
	if _, err := Default(&Options{SMNode: "leaf01", SMPort: 3}); err == nil {
		t.Error("SM on a switch's port 3 accepted")
	}
	if _, err := New(nil, nil); err == nil {
		t.Error("New(nil) accepted")
	}
}

// TestFabricErrnoContract holds the simulator to fabrictest.TestFabric:
// ENODEV for unknown CAs and ports, each port's P_Key table in PortAttr,
// EINVAL after Close.
func TestFabricErrnoContract(t *testing.T) {
	fabrictest.TestFabric(t, mustLoad(t, "net.2sw2path4hca", nil))
}

func TestOpenAndPorts(t *testing.T) {
	f, err := Default(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx := t.Context()
	ports, err := f.Ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 16 || ports[0].CAName != "node001" || ports[15].CAName != "node016" {
		t.Fatalf("Ports: %d, first %q", len(ports), ports[0].CAName)
	}
	tr, err := f.Open(ctx, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	got := tr.Port()
	want := fabric.PortAttr{CAName: "node001", PortNum: 1, NodeType: 1, NodeGUID: 0x0002c90300a00000,
		PortGUID: 0x0002c90300a00001, GIDPrefix: 0xfe80000000000000, LID: 1, SMLID: 1,
		State: 4, PhysState: 5, Rate: 40, CapMask: 0x50c24a, // ibsim's 0x50c04a and IsLEDInfoSupported
		PKeys:  make([]uint16, 64),
		CAType: "simulator", FWVer: "1", HWVer: "a1", SysGUID: 0x0002c90300a00000, CANumPorts: 1}
	want.PKeys[0] = 0xffff // the default partition; PartitionCap 64
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Open(\"\", 0) port (-want +got):\n%s", diff)
	}
	tr2, err := f.Open(ctx, "leaf03", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p := tr2.Port(); p.NodeType != 2 || p.PortNum != 0 || p.LID == 0 {
		t.Errorf("Open(leaf03) = %+v", p)
	}
	tr3, err := f.Open(ctx, "", 1)
	if err != nil || tr3.Port().CAName != "node001" {
		t.Errorf("Open(\"\", 1) = %v, %v", tr3, err)
	}

	// Close closes every transport; later calls fail with net.ErrClosed.
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	var p fabric.Packet
	if err := tr.Recv(ctx, &p); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Recv after Close: %v", err)
	}
	if _, err := f.Attach("node001", 1); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Attach after Close: %v", err)
	}
	if _, err := f.Ports(ctx); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Ports after Close: %v", err)
	}
}

// TestTransportClosedWire checks a wire refuses to transmit once closed.
func TestTransportClosedWire(t *testing.T) {
	f := mustNew(t, workedExample, nil)
	r := attachRaw(t, f, "SM", 1)
	r.w.Close()
	err := r.w.Transmit(&fabric.Packet{Data: drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, 0)})
	if !errors.Is(err, net.ErrClosed) {
		t.Errorf("Transmit on a closed wire: %v", err)
	}
}

// TestKernelAnswers checks MADs no SMA, PMA or agent handles are answered
// as the kernel does.
func TestKernelAnswers(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", &Options{IbsimStrict: true}) // PortInfoExtended and LedInfo unmodeled
	c := attachRaw(t, f, "Hca1", 1)
	hca2 := lidOf(t, f, "Hca2", 1)
	gmp := func(method uint8) []byte {
		b := fabrictest.NewMAD(fabrictest.TestVersion, method, 7)
		return b
	}
	// No transport on Hca2: Get and Set get 0x000C, Send is dropped.
	for _, m := range []uint8{mad.MethodGet, mad.MethodSet} {
		if st := status(t, c.one(hca2, gmp(m))); st != mad.StatusMethodAttrUnsup {
			t.Errorf("%s to a port without agents: status %#x", mad.MethodName(m), st)
		}
	}
	if got := c.one(hca2, gmp(mad.MethodSend)); got != nil {
		t.Error("Send to a port without agents answered")
	}
	// A transport without an agent for the class: its mux answers.
	tr, err := f.Attach("Hca2", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	if st := status(t, c.one(hca2, gmp(mad.MethodGet))); st != mad.StatusMethodAttrUnsup {
		t.Errorf("Get to a transport without the agent: status %#x", st)
	}
	// An SMP attribute the SMA does not model, DR and LID-routed.
	resp := c.dr(smp.AttrPortInfoExtended, 0, 0, 1, 3, 1)
	if st := status(t, resp); st != mad.StatusMethodAttrUnsup || !smp.Direction(resp) {
		t.Errorf("PortInfoExtended by DR: status %#x D=%v", st, smp.Direction(resp))
	}
	if st := status(t, c.lid(hca2, smp.AttrLedInfo, 0)); st != mad.StatusMethodAttrUnsup {
		t.Errorf("LedInfo: status %#x", st)
	}
	// Unreachable destinations and LID 0 are dropped.
	for _, lid := range []uint16{0, 7, 0xc000, 0xffff} {
		if got := c.one(lid, gmp(mad.MethodGet)); got != nil {
			t.Errorf("GMP to LID %#x answered", lid)
		}
	}
}

// TestAgentAnswersSMP: an agent registered for SMP Get on a CA answers a DR
// SMP for an attribute the SMA does not model; the response finds its way
// back along the return path.
func TestAgentAnswersSMP(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	target, err := f.Attach("Hca4", 1)
	if err != nil {
		t.Fatal(err)
	}
	agent, err := target.Register(ctx, fabric.Agent{Class: mad.ClassSubnLID, Version: 1}.WithMethods(mad.MethodGet))
	if err != nil {
		t.Fatal(err)
	}
	sm, err := f.Attach("Hca1", 1)
	if err != nil {
		t.Fatal(err)
	}
	smAgent, err := sm.Register(ctx, fabric.Agent{Class: mad.ClassSubnDR, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	const attr = 0xff10 // a vendor SMP attribute
	req := drReq(t, mad.MethodGet, attr, 0, 0, 1, 5, 2)
	if err := sm.Send(ctx, &fabric.Packet{Agent: smAgent, Timeout: time.Second, Addr: fabric.Addr{LID: fabric.PermissiveLID}, Data: req}); err != nil {
		t.Fatal(err)
	}
	var in fabric.Packet
	if err := target.Recv(ctx, &in); err != nil {
		t.Fatal(err)
	}
	if mad.AttrIDOf(in.Data) != attr || in.Agent != agent {
		t.Fatalf("agent got attr %#x agent %d", mad.AttrIDOf(in.Data), in.Agent)
	}
	resp := append([]byte(nil), in.Data...)
	smp.MakeGetResp(resp, 0)
	copy(smp.Data(resp), "answered by an agent")
	if err := target.Send(ctx, &fabric.Packet{Agent: agent, Addr: in.Addr, Data: resp}); err != nil {
		t.Fatal(err)
	}
	var out fabric.Packet
	if err := sm.Recv(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != 0 || !strings.HasPrefix(string(smp.Data(out.Data)), "answered by an agent") {
		t.Errorf("SM got status %d data %q", out.Status, smp.Data(out.Data)[:20])
	}
}

// TestBare checks the fabric comes up as ibsim does without an SM, and
// that a script can then play the SM with Sets.
func TestBare(t *testing.T) {
	f := mustNew(t, workedExample, &Options{Bare: true})
	c := attachRaw(t, f, "SM", 1)
	pi := portInfo(t, ok(t, c.dr(smp.AttrPortInfo, 1, 0)))
	if pi.PortState != smp.PortStateInit || pi.PortPhysicalState != smp.PhysStateLinkUp ||
		pi.LID != 0 || pi.MasterSMLID != 0 || pi.GIDPrefix != 0 || pi.CapabilityMask&smp.CapIsSM != 0 {
		t.Errorf("bare CA port: %+v", pi)
	}
	pi = portInfo(t, ok(t, c.dr(smp.AttrPortInfo, 4, 0, 1)))
	if pi.PortState != smp.PortStateDown || pi.PortPhysicalState != smp.PhysStatePolling {
		t.Errorf("bare uncabled switch port: state %d phys %d", pi.PortState, pi.PortPhysicalState)
	}
	si := switchInfo(t, ok(t, c.dr(smp.AttrSwitchInfo, 0, 0, 1)))
	if si.LinearFDBTop != 0 || !si.PortStateChange || si.LifeTimeValue != 0 {
		t.Errorf("bare SwitchInfo %+v", si)
	}
	lft := ok(t, c.dr(smp.AttrLinearForwardingTable, 0, 0, 1))
	for i, v := range lft {
		if v != 0xff {
			t.Fatalf("bare LFT entry %d = %d", i, v)
		}
	}
	if st := status(t, c.dr(smp.AttrSMInfo, 0, 0, 1, 3, 7)); st != mad.StatusMethodAttrUnsup {
		t.Errorf("bare SMInfo: status %#x", st)
	}

	// Play the SM: LIDs SM=1 S1=2 S2=3 Target=4, LFTs, then Armed and
	// Active on every cabled port.
	setPI := func(path []uint8, port uint32, fn func(pi *smp.PortInfo)) uint16 {
		t.Helper()
		cur := portInfo(t, ok(t, c.dr(smp.AttrPortInfo, port, path...)))
		cur.PortState, cur.PortPhysicalState = 0, 0
		cur.LinkWidthEnabled, cur.LinkSpeedEnabled = 0, 0
		fn(&cur)
		b := drReq(t, mad.MethodSet, smp.AttrPortInfo, port, path...)
		if _, err := cur.AppendBinary(smp.Data(b)[:0]); err != nil {
			t.Fatal(err)
		}
		return status(t, c.one(fabric.PermissiveLID, b))
	}
	lids := []struct {
		path []uint8
		port uint32
		lid  uint16
	}{{[]uint8{0}, 1, 1}, {[]uint8{0, 1}, 0, 2}, {[]uint8{0, 1, 3}, 0, 3}, {[]uint8{0, 1, 3, 7}, 1, 4}}
	for _, l := range lids {
		if st := setPI(l.path, l.port, func(pi *smp.PortInfo) { pi.LID, pi.MasterSMLID = l.lid, 1 }); st != 0 {
			t.Fatalf("set LID %d: status %#x", l.lid, st)
		}
	}
	setLFT := func(path []uint8, ports map[int]uint8, top uint16) {
		var lft smp.LinearForwardingTable
		for i := range lft.Ports {
			lft.Ports[i] = 0xff
		}
		for lid, p := range ports {
			lft.Ports[lid] = p
		}
		b := drReq(t, mad.MethodSet, smp.AttrLinearForwardingTable, 0, path...)
		if _, err := lft.AppendBinary(smp.Data(b)[:0]); err != nil {
			t.Fatal(err)
		}
		if st := status(t, c.one(fabric.PermissiveLID, b)); st != 0 {
			t.Fatalf("set LFT: %#x", st)
		}
		b = drReq(t, mad.MethodSet, smp.AttrSwitchInfo, 0, path...)
		si := smp.SwitchInfo{LinearFDBTop: top, PortStateChange: true, LifeTimeValue: 18}
		if _, err := si.AppendBinary(smp.Data(b)[:0]); err != nil {
			t.Fatal(err)
		}
		got := switchInfo(t, ok(t, c.one(fabric.PermissiveLID, b)))
		if got.LinearFDBTop != top || got.PortStateChange || got.LinearFDBCap != 30720 {
			t.Errorf("SwitchInfo after Set: %+v", got)
		}
	}
	setLFT([]uint8{0, 1}, map[int]uint8{1: 5, 2: 0, 3: 3, 4: 3}, 4)
	setLFT([]uint8{0, 1, 3}, map[int]uint8{1: 2, 2: 2, 3: 0, 4: 7}, 4)

	// Before the ports are Active, GMPs do not pass but LID-routed SMPs do.
	if got := c.one(4, perfReq(t, mad.MethodGet, perf.AttrClassPortInfo, 0)); got != nil {
		t.Error("GMP crossed INIT links")
	}
	if ni := nodeInfo(t, ok(t, c.lid(4, smp.AttrNodeInfo, 0))); ni.NodeGUID != f.byID["Target"].guid {
		t.Errorf("LID 4 answered by %#x", ni.NodeGUID)
	}
	// Active straight from Init is refused; Armed then Active works.
	if st := setPI([]uint8{0}, 1, func(pi *smp.PortInfo) { pi.PortState = smp.PortStateActive }); st != mad.StatusInvalidField {
		t.Errorf("Init -> Active: status %#x, want 0x1c", st)
	}
	ports := []struct {
		path []uint8
		port uint32
	}{{[]uint8{0}, 1}, {[]uint8{0, 1}, 5}, {[]uint8{0, 1}, 3}, {[]uint8{0, 1, 3}, 2}, {[]uint8{0, 1, 3}, 7}, {[]uint8{0, 1, 3, 7}, 1}}
	for _, state := range []uint8{smp.PortStateArmed, smp.PortStateActive} {
		for _, p := range ports {
			if st := setPI(p.path, p.port, func(pi *smp.PortInfo) { pi.PortState = state }); st != 0 {
				t.Fatalf("state %d on %v port %d: status %#x", state, p.path, p.port, st)
			}
		}
	}
	d := ok(t, c.one(4, perfReq(t, mad.MethodGet, perf.AttrClassPortInfo, 0)))
	if cpi := (mad.ClassPortInfo{}); cpi.UnmarshalBinary(d) != nil {
		t.Error("bad ClassPortInfo")
	}

	// Down retrains the link: both ends back to Init.
	if st := setPI([]uint8{0, 1, 3}, 7, func(pi *smp.PortInfo) { pi.PortState = smp.PortStateDown }); st != 0 {
		t.Fatalf("Down: %#x", st)
	}
	if pi := portInfo(t, ok(t, c.dr(smp.AttrPortInfo, 1, 0, 1, 3, 7))); pi.PortState != smp.PortStateInit {
		t.Errorf("far end after Down: state %d, want Init", pi.PortState)
	}
	if got := c.one(4, perfReq(t, mad.MethodGet, perf.AttrClassPortInfo, 0)); got != nil {
		t.Error("GMP crossed a link retrained to INIT")
	}
	// Disabled takes the link down; Polling brings it back.
	if st := setPI([]uint8{0, 1, 3}, 7, func(pi *smp.PortInfo) { pi.PortPhysicalState = smp.PhysStateDisabled }); st != 0 {
		t.Fatalf("Disable: %#x", st)
	}
	if got := c.dr(smp.AttrNodeInfo, 0, 0, 1, 3, 7); got != nil {
		t.Error("DR SMP crossed a disabled link")
	}
	if st := setPI([]uint8{0, 1, 3}, 7, func(pi *smp.PortInfo) { pi.PortPhysicalState = smp.PhysStatePolling }); st != 0 {
		t.Fatalf("Polling: %#x", st)
	}
	if got := c.dr(smp.AttrNodeInfo, 0, 0, 1, 3, 7); got == nil {
		t.Error("link did not come back after Polling")
	}
	// A CA sets only the port the SMP came in on; bad states are refused.
	f2 := mustLoad(t, "net.2sw2path4hca2port", &Options{Bare: true})
	c2 := attachRaw(t, f2, "Hca1", 1)
	b := drReq(t, mad.MethodSet, smp.AttrPortInfo, 2, 0)
	if st := status(t, c2.one(fabric.PermissiveLID, b)); st != mad.StatusInvalidField {
		t.Errorf("Set PortInfo of another CA port: status %#x", st)
	}
	b = drReq(t, mad.MethodSet, smp.AttrPortInfo, 9, 0)
	if st := status(t, c2.one(fabric.PermissiveLID, b)); st != mad.StatusInvalidField {
		t.Errorf("PortInfo of port 9: status %#x", st)
	}
}

// TestLinkWidthSet checks LinkWidthEnabled and LinkSpeedEnabled Sets
// change the link's active values.
func TestLinkWidthSet(t *testing.T) {
	f := mustNew(t, `
width=11
speed=7
Hca 1 "H"
[1] "S"[1]

Switch 4 "S"
[1] "H"[1]
`, &Options{Bare: true})
	c := attachRaw(t, f, "H", 1)
	pi := portInfo(t, ok(t, c.dr(smp.AttrPortInfo, 1, 0, 1)))
	if pi.LinkWidthActive != 8 || pi.LinkSpeedActive != 4 {
		t.Fatalf("start: width %d speed %d, want 12x QDR", pi.LinkWidthActive, pi.LinkSpeedActive)
	}
	b := drReq(t, mad.MethodSet, smp.AttrPortInfo, 1, 0)
	req := smp.PortInfo{LinkWidthEnabled: 2, LinkSpeedEnabled: 3}
	if _, err := req.AppendBinary(smp.Data(b)[:0]); err != nil {
		t.Fatal(err)
	}
	got := portInfo(t, ok(t, c.one(fabric.PermissiveLID, b)))
	if got.LinkWidthEnabled != 2 || got.LinkWidthActive != 2 || got.LinkSpeedActive != 2 {
		t.Errorf("after Set: %+v", got)
	}
	far := portInfo(t, ok(t, c.dr(smp.AttrPortInfo, 1, 0, 1)))
	if far.LinkWidthActive != 2 || far.LinkSpeedActive != 2 || far.LinkWidthEnabled != 11 {
		t.Errorf("far end after Set: width %d/%d speed %d", far.LinkWidthEnabled, far.LinkWidthActive, far.LinkSpeedActive)
	}
}

// TestLinkWidthNegotiated: a link whose ends enable different widths
// (a switch port 1x or 8x, a CA 1x only: tests/topologies/net.odd-width)
// runs at the widest both enable, as link training does on hardware,
// and stays so after an SM's PortInfo Set writes the switch port's
// enabled widths again (OpenSM does). ibsim differs: its Set takes the
// active width from the written mask alone and forces it on both ends,
// so under OpenSM it shows this link 8x (sim's package doc).
func TestLinkWidthNegotiated(t *testing.T) {
	f := mustNew(t, `
Switch 4 "S"
[1] "A"[1]	w=5
[2] "B"[1]

Hca 1 "A"
[1] "S"[1]	w=1

Hca 1 "B"
[1] "S"[2]
`, nil)
	c := attachRaw(t, f, "B", 1)
	width := func(what string, path ...uint8) {
		t.Helper()
		if pi := portInfo(t, ok(t, c.dr(smp.AttrPortInfo, 1, path...))); pi.LinkWidthActive != 1 {
			t.Errorf("%s: LinkWidthActive %d (enabled %d), want 1 (1x)", what, pi.LinkWidthActive, pi.LinkWidthEnabled)
		}
	}
	width("A's port", 0, 1, 1)
	b := drReq(t, mad.MethodSet, smp.AttrPortInfo, 1, 0, 1)
	req := smp.PortInfo{LinkWidthEnabled: 5} // 1x or 8x, as OpenSM writes it back
	if _, err := req.AppendBinary(smp.Data(b)[:0]); err != nil {
		t.Fatal(err)
	}
	if got := portInfo(t, ok(t, c.one(fabric.PermissiveLID, b))); got.LinkWidthActive != 1 {
		t.Errorf("S port 1 after the Set: LinkWidthActive %d, want 1 (1x)", got.LinkWidthActive)
	}
	width("A's port after the Set", 0, 1, 1)
}

// TestExtendedSpeeds: ext speeds take precedence when both ends enable
// one; PortInfo shows the ext fields only then.
func TestExtendedSpeeds(t *testing.T) {
	f := mustNew(t, `
Switch 3 "S"
[1] "A"[1]	# "A" lid 0 4xEDR
[2] "B"[1]	# "B" lid 0 4xHDR

Hca 1 "A"
[1] "S"[1]	# lid 0 lmc 0 "S" lid 0 4xHDR

Hca 1 "B"
[1] "S"[2]	# lid 0 lmc 0 "S" lid 0 4xQDR
`, nil)
	tp := f.Topology()
	a, b := tp.NodeByID("A").Ports[1], tp.NodeByID("B").Ports[1]
	if a.SpeedExtActive != 2 || a.SpeedActive != 4 || a.WidthActive != 2 {
		t.Errorf("A: ext %d speed %d width %d, want EDR (ext 2)", a.SpeedExtActive, a.SpeedActive, a.WidthActive)
	}
	if b.SpeedExtActive != 0 || b.SpeedActive != 4 {
		t.Errorf("B: ext %d speed %d, want QDR without ext", b.SpeedExtActive, b.SpeedActive)
	}
	c := attachRaw(t, f, "A", 1)
	pi := portInfo(t, ok(t, c.dr(smp.AttrPortInfo, 1, 0)))
	if pi.LinkSpeedExtActive != 2 || pi.LinkSpeedExtEnabled != 7 || pi.LinkSpeedExtSupported != 7 {
		t.Errorf("A's PortInfo ext: active %d enabled %d supported %d", pi.LinkSpeedExtActive, pi.LinkSpeedExtEnabled, pi.LinkSpeedExtSupported)
	}
	if ports, _ := f.Ports(t.Context()); ports[0].Rate != 100 {
		t.Errorf("A's rate %d, want 100 (4x EDR)", ports[0].Rate)
	}
}

func TestDefaultFabric(t *testing.T) {
	f, err := Default(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tp := f.Topology()
	if len(tp.Nodes) != 22 || len(tp.Links()) != 24 {
		t.Fatalf("%d nodes, %d links; want 22, 24", len(tp.Nodes), len(tp.Links()))
	}
	if n := tp.Nodes[0]; n.ID != "node001" || n.Desc != "node001 HCA-1" || n.Type != 1 || n.Ports[1].LID != 1 {
		t.Errorf("first node %+v", n)
	}
	for _, l := range tp.Links() {
		for _, p := range []*struct{ w, s, st uint8 }{
			{l.A.WidthActive, l.A.SpeedActive, l.A.State}, {l.B.WidthActive, l.B.SpeedActive, l.B.State},
		} {
			if p.w != 2 || p.s != 4 || p.st != smp.PortStateActive {
				t.Errorf("link %v - %v: width %d speed %d state %d, want 4X QDR Active", l.A, l.B, p.w, p.s, p.st)
			}
		}
	}
	seen := map[uint16]bool{}
	for _, n := range tp.Nodes {
		lid := n.EndPort(1).LID
		if lid == 0 || seen[lid] {
			t.Errorf("%s: LID %d", n.ID, lid)
		}
		seen[lid] = true
	}
	// Every CA reaches every other by LID.
	c := attachRaw(t, f, "node007", 1)
	for _, n := range tp.Nodes {
		lid := n.EndPort(1).LID
		if ni := nodeInfo(t, ok(t, c.lid(lid, smp.AttrNodeInfo, 0))); ni.NodeGUID != n.GUID {
			t.Errorf("LID %d answered by %#x, want %s", lid, ni.NodeGUID, n.ID)
		}
	}
	if !strings.Contains(string(DefaultTopologyText()), "two-level fat tree") {
		t.Error("DefaultTopologyText")
	}
}

// TestGRH: a GMP sent with a GRH reaches the port whose LID and GID it
// names and arrives with a GRH (the sender's GID, gid_index 0, hop limit
// 255, the traffic class and flow label sent); the PMA's answer to such a
// request carries one back; a GRH naming another port's GID is dropped;
// gid_index past the port's one GID and a GRH on an SMP are refused.
func TestGRH(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	a, err := f.Attach("Hca1", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := f.Attach("Hca4", 1)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	pa, pb := a.Port(), b.Port()
	ga, _ := pa.GID(0)
	gb, _ := pb.GID(0)
	const class = 0x09
	aa, err := a.Register(ctx, fabric.Agent{Class: class, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	ab, err := b.Register(ctx, fabric.Agent{Class: class, Version: 1}.WithMethods(mad.MethodGet))
	if err != nil {
		t.Fatal(err)
	}
	req := make([]byte, mad.Size)
	(&mad.Header{BaseVersion: 1, MgmtClass: class, ClassVersion: 1, Method: mad.MethodGet, TID: 7, AttrID: 0xff00}).Put(req)
	grh := fabric.Addr{LID: pb.LID, QPN: 1, QKey: qp1QKey, GRH: true, GID: gb, HopLimit: 64, TClass: 3, FlowLabel: 0x12345}
	if err := a.Send(ctx, &fabric.Packet{Agent: aa, Timeout: time.Second, Addr: grh, Data: req}); err != nil {
		t.Fatal(err)
	}
	var in fabric.Packet
	if err := b.Recv(ctx, &in); err != nil {
		t.Fatal(err)
	}
	want := fabric.Addr{LID: pa.LID, QPN: 1, QKey: qp1QKey, GRH: true, GID: ga, HopLimit: 255, TClass: 3, FlowLabel: 0x12345}
	if in.Agent != ab || in.Addr != want {
		t.Fatalf("request at agent %d from %+v, want agent %d from %+v", in.Agent, in.Addr, ab, want)
	}
	resp := append([]byte(nil), in.Data...)
	resp[3] = mad.MethodGetResp
	if err := b.Send(ctx, &fabric.Packet{Agent: ab, Addr: in.Addr, Data: resp}); err != nil {
		t.Fatal(err)
	}
	var out fabric.Packet
	if err := a.Recv(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != 0 || !out.Addr.GRH || out.Addr.GID != gb {
		t.Fatalf("answer status %d addr %+v, want a GRH from %x", out.Status, out.Addr, gb)
	}

	// The PMA answers a request with a GRH with one.
	pm, err := a.Register(ctx, fabric.Agent{Class: mad.ClassPerf, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	preq := perfReq(t, mad.MethodGet, 0x0012, 1)
	if err := a.Send(ctx, &fabric.Packet{Agent: pm, Timeout: time.Second, Addr: grh, Data: preq}); err != nil {
		t.Fatal(err)
	}
	if err := a.Recv(ctx, &out); err != nil {
		t.Fatal(err)
	}
	if out.Status != 0 || !out.Addr.GRH || out.Addr.GID != gb || mad.MethodOf(out.Data) != mad.MethodGetResp {
		t.Fatalf("PMA answer status %d method %#x addr %+v", out.Status, mad.MethodOf(out.Data), out.Addr)
	}

	// Another port's GID at b's LID: the HCA drops it, the request times out.
	wrong := grh
	wrong.GID = ga
	mad.SetTID(req, 8)
	if err := a.Send(ctx, &fabric.Packet{Agent: aa, Timeout: 20 * time.Millisecond, Addr: wrong, Data: req}); err != nil {
		t.Fatal(err)
	}
	if err := a.Recv(ctx, &out); err != nil || out.Status != fabric.StatusTimeout {
		t.Fatalf("GRH to the wrong GID: status %d, %v; want a timeout", out.Status, err)
	}

	bad := grh
	bad.GIDIndex = 1
	if err := a.Send(ctx, &fabric.Packet{Agent: aa, Addr: bad, Data: req}); !errors.Is(err, fabric.ErrInvalid) {
		t.Errorf("gid_index 1: %v, want ErrInvalid", err)
	}
	sa, err := a.Register(ctx, fabric.Agent{Class: mad.ClassSubnLID, Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	smpReq := make([]byte, mad.Size)
	(&mad.Header{BaseVersion: 1, MgmtClass: mad.ClassSubnLID, ClassVersion: 1, Method: mad.MethodGet, TID: 9, AttrID: 0x11}).Put(smpReq)
	if err := a.Send(ctx, &fabric.Packet{Agent: sa, Addr: fabric.Addr{LID: pb.LID, GRH: true, GID: gb}, Data: smpReq}); !errors.Is(err, fabric.ErrInvalid) {
		t.Errorf("SMP with a GRH: %v, want ErrInvalid", err)
	}
}

// TestIPoIB: the topology's "# ipoib" lines and SetIPoIB give CA ports
// IPoIB addresses; an address another port holds, a switch port and a
// non-unicast address are refused, naming them.
func TestIPoIB(t *testing.T) {
	f := mustLoad(t, "net.ipoib", nil)
	got := fmt.Sprint(f.IPoIBAddrs())
	if want := "[{10.0.0.1 host1 1} {fd00::1 host1 1} {10.0.0.2 host2 1} {fd00::2 host2 1}]"; got != want {
		t.Errorf("IPoIBAddrs %s, want %s", got, want)
	}
	for _, c := range []struct {
		node string
		port int
		ip   string
		err  string
	}{
		{"host1", 1, "10.0.0.2", `10.0.0.2 is already "host2"[1]'s`},
		{"sw1", 1, "10.0.0.9", `no CA or router port "sw1"[1]`},
		{"host1", 2, "10.0.0.9", `no CA or router port "host1"[2]`},
		{"host1", 1, "224.0.0.1", "224.0.0.1 is not a unicast IPv4 or IPv6 address"},
	} {
		if err := f.SetIPoIB(c.node, c.port, netip.MustParseAddr(c.ip)); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("SetIPoIB(%s, %d, %s): %v, want %q", c.node, c.port, c.ip, err, c.err)
		}
	}
	if err := f.SetIPoIB("host2", 1); err != nil {
		t.Fatal(err)
	}
	if err := f.SetIPoIB("host1", 1, netip.MustParseAddr("10.0.0.2")); err != nil {
		t.Errorf("an address freed by its port: %v", err)
	}
}

// TestDescriptionKeptAsIbsim: the SMA answers at most 63 bytes of a
// node's description, as ibsim keeps them (a 64-byte one from the file
// loses its last byte, here the end of a UTF-8 sequence), and attaching
// by description finds the node by what it keeps.
func TestDescriptionKeptAsIbsim(t *testing.T) {
	long := "H long" + strings.Repeat("-", 64-len("H long")-len("é€")) + "é€"
	exact := strings.Repeat("e", 63)
	f := mustNew(t, "Hca 1 \"H\" # \""+long+"\"\n[1] \"S\"[1]\n\nHca 1 \"I\" # \""+exact+"\"\n[1] \"S\"[2]\n\nSwitch 4 \"S\"\n[1] \"H\"[1]\n[2] \"I\"[1]\n", &Options{Bare: true})
	c := attachRaw(t, f, "H", 1)
	for _, tc := range []struct {
		path []uint8
		want string
	}{{[]uint8{0}, long[:63]}, {[]uint8{0, 1, 2}, exact}} {
		var nd smp.NodeDescription
		if err := nd.UnmarshalBinary(ok(t, c.dr(smp.AttrNodeDescription, 0, tc.path...))); err != nil {
			t.Fatal(err)
		}
		if nd.NodeString != tc.want {
			t.Errorf("route %v: description %q, want %q", tc.path, nd.NodeString, tc.want)
		}
	}
	if _, err := f.Attach(long[:63], 1); err != nil {
		t.Errorf("attach by the 63 bytes kept: %v", err)
	}
}

// TestZeroGUIDRouterHasNoLID: OpenSM drops the NodeInfo of a node whose
// GUID is zero (a router of ibsim's default rtguid, 0), so its port gets
// no LID and the LIDs after it are not shifted; a router with a GUID
// gets one. The embedded SM does so with or without IbsimStrict.
func TestZeroGUIDRouterHasNoLID(t *testing.T) {
	const text = `
Switch 4 "S"
[1] "H"[1]
[2] "R0"[1]
[3] "R1"[1]

Hca 1 "H"
[1] "S"[1]

Rt 1 "R0"
[1] "S"[2]

rtguid=0x50
Rt 1 "R1"
[1] "S"[3]
`
	for _, strict := range []bool{true, false} {
		c := attachRaw(t, mustNew(t, text, &Options{IbsimStrict: strict}), "H", 1)
		for _, tc := range []struct {
			port  uint8
			lid   bool
			state uint8
		}{{2, false, smp.PortStateInit}, {3, true, smp.PortStateActive}} {
			pi := portInfo(t, ok(t, c.dr(smp.AttrPortInfo, 1, 0, 1, tc.port)))
			if (pi.LID != 0) != tc.lid || pi.PortState != tc.state {
				t.Errorf("IbsimStrict %v: router on S port %d: LID %d, state %d; want a LID: %v, state %d", strict, tc.port, pi.LID, pi.PortState, tc.lid, tc.state)
			}
		}
	}
}
