package sim

// Tests against a real ibsim 0.10 + OpenSM fabric: net.2sw2path4hca with
// OpenSM on Switch1, queried with smpquery, perfquery and ibroute from
// Switch1 (the ibsim rig's default node), and ibnetdiscover's view of it
// (topo/testdata/ibnd.2sw2path4hca.txt). The expected values below are
// those tools' outputs.

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// refFabric is net.2sw2path4hca with the SM on Switch1 and a client on
// Switch1's port 0, as in the reference run, answering only what ibsim
// answers (Options.IbsimStrict).
func refFabric(t *testing.T) (*Fabric, *raw) {
	t.Helper()
	f := mustLoad(t, "net.2sw2path4hca", &Options{SMNode: "Switch1", IbsimStrict: true})
	return f, attachRaw(t, f, "Switch1", 0)
}

func TestReferenceLIDs(t *testing.T) {
	// ibnetdiscover of the reference fabric: Switch1=1, Hca1=2, Switch2=3,
	// Hca2=4, Hca3=5, Hca4=6.
	ibnd, err := topo.ParseFile(filepath.Join("..", "topo", "testdata", "ibnd.2sw2path4hca.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := make(map[uint64]uint16)
	for _, n := range ibnd.Nodes {
		for _, p := range n.Ports {
			if p != nil && (p.Remote != nil || p.Num == 0) {
				want[p.GUID] = n.EndPort(p.Num).LID
			}
		}
	}
	lids := func(f *Fabric) map[uint64]uint16 {
		got := make(map[uint64]uint16)
		for _, n := range f.Topology().Nodes {
			for _, p := range n.Ports {
				if p != nil && (p.Remote != nil || p.Num == 0) {
					got[p.GUID] = n.EndPort(p.Num).LID
				}
			}
		}
		return got
	}
	f, _ := refFabric(t)
	if diff := cmp.Diff(want, lids(f)); diff != "" {
		t.Errorf("LIDs by port GUID (-ibnetdiscover +sim):\n%s", diff)
	}
	// The same file through ibnetdiscover's output, its LIDs preset.
	g, err := Load(filepath.Join("..", "topo", "testdata", "ibnd.2sw2path4hca.txt"), &Options{SMNode: "Switch1"})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if diff := cmp.Diff(want, lids(g)); diff != "" {
		t.Errorf("LIDs of the ibnetdiscover file (-want +got):\n%s", diff)
	}

	// With the SM on a CA, OpenSM's order gives it LID 1 and the others
	// follow by byte-swapped port GUID.
	h := mustLoad(t, "net.2sw2path4hca", &Options{SMNode: "Hca1"})
	got := map[string]uint16{}
	for _, id := range []string{"Hca1", "Switch1", "Switch2", "Hca2", "Hca3", "Hca4"} {
		num := 1
		if id[0] == 'S' {
			num = 0
		}
		got[id] = lidOf(t, h, id, num)
	}
	wantDefault := map[string]uint16{"Hca1": 1, "Switch1": 2, "Switch2": 3, "Hca2": 4, "Hca3": 5, "Hca4": 6}
	if diff := cmp.Diff(wantDefault, got); diff != "" {
		t.Errorf("LIDs with the SM on Hca1 (-want +got):\n%s", diff)
	}
	if node, port, lid := h.SM(); node != "Hca1" || port != 1 || lid != 1 {
		t.Errorf("SM() = %q %d %d", node, port, lid)
	}
}

func TestReferenceLFT(t *testing.T) {
	f, c := refFabric(t)
	// ibroute 1: LIDs 1..6 -> 0, 1, 3, 3, 2, 5.
	d := ok(t, c.lid(1, smp.AttrLinearForwardingTable, 0))
	var lft smp.LinearForwardingTable
	if err := lft.UnmarshalBinary(d); err != nil {
		t.Fatal(err)
	}
	want := [64]uint8{0xff, 0, 1, 3, 3, 2, 5}
	for i := 7; i < 64; i++ {
		want[i] = 0xff
	}
	if diff := cmp.Diff(want, lft.Ports); diff != "" {
		t.Errorf("Switch1 LFT block 0 (-ibroute +sim):\n%s", diff)
	}
	si := switchInfo(t, ok(t, c.lid(1, smp.AttrSwitchInfo, 0)))
	if si.LinearFDBTop != 6 {
		t.Errorf("LinearFDBTop %d, want 6", si.LinearFDBTop)
	}
	// Switch2 by the same rules: to Switch1 and Hca1 over port 3, Hca3
	// over port 5 (fewer CA LIDs), its own CAs direct.
	d = ok(t, c.lid(3, smp.AttrLinearForwardingTable, 0))
	if err := lft.UnmarshalBinary(d); err != nil {
		t.Fatal(err)
	}
	if got, want := lft.Ports[:7], []uint8{0xff, 3, 3, 0, 1, 5, 2}; !cmp.Equal(got, want) {
		t.Errorf("Switch2 LFT LIDs 0..6 = %v, want %v", got, want)
	}
	// Past the table: 0xFF; past the LID space: invalid.
	d = ok(t, c.lid(1, smp.AttrLinearForwardingTable, 767))
	for i, v := range d {
		if v != 0xff {
			t.Fatalf("block 767 entry %d = %d, want 0xff", i, v)
		}
	}
	if st := status(t, c.lid(1, smp.AttrLinearForwardingTable, 768)); st != mad.StatusInvalidField {
		t.Errorf("block 768: status %#x, want 0x1c", st)
	}
	_ = f
}

func TestReferenceSMA(t *testing.T) {
	_, c := refFabric(t)
	t.Run("nodeinfo CA", func(t *testing.T) {
		got := nodeInfo(t, ok(t, c.lid(2, smp.AttrNodeInfo, 0)))
		want := smp.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: 1, NumPorts: 2,
			SystemImageGUID: 0x100000, NodeGUID: 0x100000, PortGUID: 0x100001, PartitionCap: 64,
			Revision: 0xa1, LocalPortNum: 1}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("smpquery nodeinfo 2 (-ref +sim):\n%s", diff)
		}
	})
	t.Run("nodeinfo switch", func(t *testing.T) {
		got := nodeInfo(t, ok(t, c.lid(1, smp.AttrNodeInfo, 0)))
		want := smp.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: 2, NumPorts: 8,
			SystemImageGUID: 0x200000, NodeGUID: 0x200000, PortGUID: 0x200000, PartitionCap: 8,
			Revision: 0xa1, LocalPortNum: 0}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("smpquery nodeinfo 1 (-ref +sim):\n%s", diff)
		}
	})
	t.Run("nodeinfo DR 0,1", func(t *testing.T) {
		got := nodeInfo(t, ok(t, c.dr(smp.AttrNodeInfo, 0, 0, 1)))
		if got.NodeGUID != 0x100000 || got.PortGUID != 0x100001 || got.LocalPortNum != 1 {
			t.Errorf("smpquery -D nodeinfo 0,1: %+v", got)
		}
	})
	t.Run("portinfo CA port", func(t *testing.T) {
		got := portInfo(t, ok(t, c.lid(2, smp.AttrPortInfo, 1)))
		want := smp.PortInfo{GIDPrefix: 0xfe80000000000000, LID: 2, MasterSMLID: 1,
			CapabilityMask: 0x50c048, MKeyLeasePeriod: 4089, LocalPortNum: 1,
			LinkWidthEnabled: 2, LinkWidthSupported: 31, LinkWidthActive: 2, LinkSpeedSupported: 7,
			PortState: 4, PortPhysicalState: 5, LinkDownDefaultState: 2, LinkSpeedActive: 1,
			LinkSpeedEnabled: 1, NeighborMTU: 4, VLCap: 4, VLArbitrationHighCap: 8,
			VLArbitrationLowCap: 8, MTUCap: 4, VLStallCount: 7, OperationalVLs: 4, GUIDCap: 32,
			SubnetTimeOut: 31, CapabilityMask2: 0x30}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("smpquery portinfo 2 1 (-ref +sim):\n%s", diff)
		}
	})
	t.Run("portinfo switch port 0", func(t *testing.T) {
		got := portInfo(t, ok(t, c.lid(1, smp.AttrPortInfo, 0)))
		want := smp.PortInfo{GIDPrefix: 0xfe80000000000000, LID: 1, MasterSMLID: 1,
			CapabilityMask: 0xc04a, MKeyLeasePeriod: 4089, LocalPortNum: 0,
			LinkWidthEnabled: 2, LinkWidthSupported: 31, LinkWidthActive: 2, LinkSpeedSupported: 7,
			PortState: 4, PortPhysicalState: 5, LinkDownDefaultState: 2, LinkSpeedActive: 1,
			LinkSpeedEnabled: 1, NeighborMTU: 1, VLCap: 4, VLArbitrationHighCap: 8,
			VLArbitrationLowCap: 8, MTUCap: 3, OperationalVLs: 4, GUIDCap: 1,
			SubnetTimeOut: 31, RespTimeValue: 8, CapabilityMask2: 0x30}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("smpquery portinfo 1 0 (-ref +sim):\n%s", diff)
		}
	})
	t.Run("portinfo switch port 3", func(t *testing.T) {
		got := portInfo(t, ok(t, c.lid(1, smp.AttrPortInfo, 3)))
		want := smp.PortInfo{LinkWidthEnabled: 2, LinkWidthSupported: 31, LinkWidthActive: 2,
			LinkSpeedSupported: 7, PortState: 4, PortPhysicalState: 5, LinkDownDefaultState: 2,
			LinkSpeedActive: 1, LinkSpeedEnabled: 1, NeighborMTU: 4, VLCap: 4,
			VLArbitrationHighCap: 8, VLArbitrationLowCap: 8, MTUCap: 4, VLStallCount: 7,
			HOQLife: 18, OperationalVLs: 4}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("smpquery portinfo 1 3 (-ref +sim):\n%s", diff)
		}
	})
	t.Run("switchinfo", func(t *testing.T) {
		got := switchInfo(t, ok(t, c.lid(1, smp.AttrSwitchInfo, 0)))
		want := smp.SwitchInfo{LinearFDBCap: 30720, MulticastFDBCap: 1024, LinearFDBTop: 6,
			LifeTimeValue: 18, PartitionEnforcementCap: 64, FilterRawInboundCap: true,
			FilterRawOutboundCap: true}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("smpquery switchinfo 1 (-ref +sim):\n%s", diff)
		}
	})
	t.Run("nodedesc", func(t *testing.T) {
		var nd smp.NodeDescription
		if err := nd.UnmarshalBinary(ok(t, c.lid(2, smp.AttrNodeDescription, 0))); err != nil {
			t.Fatal(err)
		}
		if nd.NodeString != "Hca1" {
			t.Errorf("nodedesc %q, want Hca1", nd.NodeString)
		}
	})
	t.Run("pkeys", func(t *testing.T) {
		want := [32]uint16{0xffff}
		for block := uint32(0); block < 2; block++ {
			var pk smp.PKeyTable
			if err := pk.UnmarshalBinary(ok(t, c.lid(2, smp.AttrPKeyTable, block))); err != nil {
				t.Fatal(err)
			}
			if pk.PKeys != want {
				t.Errorf("pkeys block %d: %v", block, pk.PKeys)
			}
			want[0] = 0
		}
		// 64 pkeys capacity: block 2 is out of range.
		if st := status(t, c.lid(2, smp.AttrPKeyTable, 2)); st != mad.StatusInvalidField {
			t.Errorf("pkeys block 2: status %#x, want 0x1c", st)
		}
	})
	t.Run("sminfo", func(t *testing.T) {
		var si smp.SMInfo
		if err := si.UnmarshalBinary(ok(t, c.lid(1, smp.AttrSMInfo, 0))); err != nil {
			t.Fatal(err)
		}
		if si.GUID != 0x200000 || si.SMState != smp.SMStateMaster {
			t.Errorf("SMInfo %+v, want GUID 0x200000 Master", si)
		}
		// Elsewhere, no SM agent: the kernel answers 0x000C.
		if st := status(t, c.lid(2, smp.AttrSMInfo, 0)); st != mad.StatusMethodAttrUnsup {
			t.Errorf("SMInfo at Hca1: status %#x, want 0x000c", st)
		}
	})
}

func TestReferencePMA(t *testing.T) {
	f, c := refFabric(t)
	d := ok(t, c.one(2, perfReq(t, mad.MethodGet, perf.AttrClassPortInfo, 0)))
	var cpi mad.ClassPortInfo
	if err := cpi.UnmarshalBinary(d); err != nil {
		t.Fatal(err)
	}
	if cpi.CapabilityMask != 0x1200 || cpi.ClassVersion != 1 || cpi.RespTimeValue != 18 {
		t.Errorf("CA PMA ClassPortInfo %+v, want CapabilityMask 0x1200 (perfquery)", cpi)
	}
	if err := cpi.UnmarshalBinary(ok(t, c.one(1, perfReq(t, mad.MethodGet, perf.AttrClassPortInfo, 0)))); err != nil {
		t.Fatal(err)
	}
	if cpi.CapabilityMask != 0x1300 {
		t.Errorf("switch PMA CapabilityMask %#x, want 0x1300 (AllPortSelect)", cpi.CapabilityMask)
	}

	pc := func(lid uint16, method uint8, port uint8, sel uint16) perf.PortCounters {
		t.Helper()
		b := perfReq(t, method, perf.AttrPortCounters, port)
		if sel != 0 {
			pcCounterSelect.Put(perf.Data(b), uint64(sel))
		}
		var p perf.PortCounters
		if err := p.UnmarshalBinary(ok(t, c.one(lid, b))); err != nil {
			t.Fatal(err)
		}
		return p
	}
	before := pc(2, mad.MethodGet, 1, 0)
	if before.PortSelect != 1 || before.SymbolErrorCounter != 0 || before.PortXmitPkts == 0 || before.PortRcvData == 0 {
		t.Errorf("Hca1 port 1 counters %+v: want port 1, no errors, some traffic", before)
	}
	if err := f.SetCounter("Hca1", 1, "SymbolErrorCounter", 70000); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCounter("Hca1", 1, "link_downed_counter", 3); err != nil {
		t.Fatal(err)
	}
	got := pc(2, mad.MethodGet, 1, 0)
	if got.SymbolErrorCounter != 0xffff || got.LinkDownedCounter != 3 {
		t.Errorf("planted errors read %d %d, want 65535 (saturated) 3", got.SymbolErrorCounter, got.LinkDownedCounter)
	}
	got = pc(2, mad.MethodSet, 1, 1) // clear SymbolErrorCounter only
	if got.SymbolErrorCounter != 0 || got.LinkDownedCounter != 3 {
		t.Errorf("after Set CounterSelect 1: %d %d, want 0 3", got.SymbolErrorCounter, got.LinkDownedCounter)
	}
	// A CA's PMA answers only for the port the MAD came in on; ibsim
	// refuses PortSelect 0 too (perfquery LID: "iberror: failed").
	for _, sel := range []uint8{2, 0} {
		b := perfReq(t, mad.MethodGet, perf.AttrPortCounters, sel)
		if st := status(t, c.one(2, b)); st != mad.StatusInvalidField {
			t.Errorf("PortSelect %d at Hca1 port 1: status %#x, want 0x1c", sel, st)
		}
	}
	// A switch sums its ports for PortSelect 0xFF.
	if err := f.SetCounter("Switch2", 3, "PortRcvErrors", 2); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCounter("Switch2", 5, "PortRcvErrors", 5); err != nil {
		t.Fatal(err)
	}
	if got := pc(3, mad.MethodGet, 0xff, 0); got.PortRcvErrors != 7 {
		t.Errorf("Switch2 all ports PortRcvErrors %d, want 7", got.PortRcvErrors)
	}
	if got := pc(3, mad.MethodGet, 5, 0); got.PortRcvErrors != 5 {
		t.Errorf("Switch2 port 5 PortRcvErrors %d, want 5", got.PortRcvErrors)
	}

	// PortCountersExtended grows with traffic and clears by CounterSelect.
	ext := func(method uint8, sel uint16) perf.PortCountersExtended {
		t.Helper()
		b := perfReq(t, method, perf.AttrPortCountersExtended, 1)
		pceCounterSelect.Put(perf.Data(b), uint64(sel))
		var p perf.PortCountersExtended
		if err := p.UnmarshalBinary(ok(t, c.one(2, b))); err != nil {
			t.Fatal(err)
		}
		return p
	}
	e1 := ext(mad.MethodGet, 0)
	e2 := ext(mad.MethodGet, 0)
	if e2.PortXmitPkts != e1.PortXmitPkts+1 || e2.PortRcvData != e1.PortRcvData+madWords {
		t.Errorf("extended counters did not grow by one MAD: %+v then %+v", e1, e2)
	}
	e3 := ext(mad.MethodSet, 0xf)
	if e3.PortXmitData != 0 || e3.PortRcvPkts != 0 {
		t.Errorf("after clearing: %+v", e3)
	}
	if v, err := f.Counter("Hca1", 1, "PortXmitPkts"); err != nil || v == 0 {
		t.Errorf("Counter(PortXmitPkts) = %d, %v", v, err)
	}
	if err := f.SetCounter("Hca1", 1, "NoSuchCounter", 1); err == nil {
		t.Error("SetCounter accepted an unknown counter")
	}
	if err := f.SetCounter("Hca1", 3, "PortRcvErrors", 1); err == nil {
		t.Error("SetCounter accepted port 3 of a 2-port CA")
	}
}

// TestPMAPortSelectZero: outside IbsimStrict, a CA's PMA answers
// PortSelect 0 (perfquery LID, no port) for the port the MAD came in on,
// as an HCA does, and echoes the PortSelect asked; 2 stays refused.
func TestPMAPortSelectZero(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", &Options{SMNode: "Switch1"})
	c := attachRaw(t, f, "Switch1", 0)
	if err := f.SetCounter("Hca1", 1, "PortRcvErrors", 9); err != nil {
		t.Fatal(err)
	}
	var pc perf.PortCounters
	if err := pc.UnmarshalBinary(ok(t, c.one(2, perfReq(t, mad.MethodGet, perf.AttrPortCounters, 0)))); err != nil {
		t.Fatal(err)
	}
	if pc.PortSelect != 0 || pc.PortRcvErrors != 9 {
		t.Errorf("PortSelect 0 at Hca1 port 1: PortSelect %d PortRcvErrors %d, want 0 and port 1's 9", pc.PortSelect, pc.PortRcvErrors)
	}
	if st := status(t, c.one(2, perfReq(t, mad.MethodGet, perf.AttrPortCounters, 2))); st != mad.StatusInvalidField {
		t.Errorf("PortSelect 2 at Hca1 port 1: status %#x, want 0x1c", st)
	}
}
