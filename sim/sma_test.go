package sim

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

func TestSMAAttributes(t *testing.T) {
	f, c := refFabric(t)
	t.Run("GUIDInfo", func(t *testing.T) {
		var gi smp.GUIDInfo
		if err := gi.UnmarshalBinary(ok(t, c.lid(5, smp.AttrGUIDInfo, 0))); err != nil {
			t.Fatal(err)
		}
		if gi.GUIDs != [8]uint64{0x100007} {
			t.Errorf("Hca3 GUIDInfo block 0 %#x, want [0x100007 0...]", gi.GUIDs)
		}
		if err := gi.UnmarshalBinary(ok(t, c.lid(3, smp.AttrGUIDInfo, 0))); err != nil {
			t.Fatal(err)
		}
		if gi.GUIDs[0] != 0x200001 {
			t.Errorf("Switch2 GUIDInfo[0] %#x", gi.GUIDs[0])
		}
		if err := gi.UnmarshalBinary(ok(t, c.lid(5, smp.AttrGUIDInfo, 1))); err != nil {
			t.Fatal(err)
		}
		if gi.GUIDs != [8]uint64{} {
			t.Errorf("block 1 %#x, want empty", gi.GUIDs)
		}
	})
	t.Run("SwitchInfo and LFT of a CA", func(t *testing.T) {
		for _, attr := range []uint16{smp.AttrSwitchInfo, smp.AttrLinearForwardingTable} {
			if st := status(t, c.lid(2, attr, 0)); st != mad.StatusMethodAttrUnsup {
				t.Errorf("attr %#x of a CA: status %#x, want 0x000c", attr, st)
			}
		}
	})
	t.Run("Get-only attributes", func(t *testing.T) {
		for _, attr := range []uint16{smp.AttrNodeDescription, smp.AttrNodeInfo, smp.AttrGUIDInfo} {
			resp := c.set(2, attr, 0, make([]byte, 64))
			if st := status(t, resp); st != mad.StatusMethodAttrUnsup {
				t.Errorf("Set attr %#x: status %#x, want 0x000c", attr, st)
			}
		}
		var nd smp.NodeDescription
		_ = nd.UnmarshalBinary(smp.Data(c.set(2, smp.AttrNodeDescription, 0, []byte("renamed"))))
		if nd.NodeString != "Hca1" {
			t.Errorf("NodeDescription after Set: %q", nd.NodeString)
		}
	})
	t.Run("PortInfo modifier", func(t *testing.T) {
		// On a CA, 0 means the port the SMP came in on; on a switch it is
		// port 0. LocalPortNum is the port of arrival either way.
		if pi := portInfo(t, ok(t, c.lid(2, smp.AttrPortInfo, 0))); pi.LID != 2 || pi.LocalPortNum != 1 {
			t.Errorf("Hca1 PortInfo 0: LID %d LocalPortNum %d", pi.LID, pi.LocalPortNum)
		}
		if pi := portInfo(t, ok(t, c.lid(2, smp.AttrPortInfo, 2))); pi.PortState != smp.PortStateDown || pi.LocalPortNum != 1 || pi.CapabilityMask != 0x10c048 {
			t.Errorf("Hca1 PortInfo 2 (uncabled): %+v", pi)
		}
		if st := status(t, c.lid(2, smp.AttrPortInfo, 3)); st != mad.StatusInvalidField {
			t.Errorf("PortInfo 3 of a 2-port CA: status %#x", st)
		}
		pi := portInfo(t, ok(t, c.dr(smp.AttrPortInfo, 0, 0, 3)))
		if pi.LID != 3 || pi.LocalPortNum != 3 {
			t.Errorf("Switch2 PortInfo 0 by DR in at port 3: LID %d LocalPortNum %d", pi.LID, pi.LocalPortNum)
		}
		if ni := nodeInfo(t, ok(t, c.dr(smp.AttrNodeInfo, 0, 0, 5))); ni.LocalPortNum != 5 || ni.PortGUID != 0x200001 {
			t.Errorf("Switch2 NodeInfo by DR in at port 5: %+v", ni)
		}
	})
	t.Run("P_KeyTable Set", func(t *testing.T) {
		var pk smp.PKeyTable
		pk.PKeys[0], pk.PKeys[1] = 0xffff, 0x8001
		b, _ := pk.MarshalBinary()
		if st := status(t, c.set(4, smp.AttrPKeyTable, 0, b)); st != 0 {
			t.Fatalf("status %#x", st)
		}
		var got smp.PKeyTable
		if err := got.UnmarshalBinary(ok(t, c.lid(4, smp.AttrPKeyTable, 0))); err != nil {
			t.Fatal(err)
		}
		if got.PKeys != pk.PKeys {
			t.Errorf("P_Keys after Set: %#x", got.PKeys[:2])
		}
		// A switch's port 0 has 8 entries; its external ports 64.
		if st := status(t, c.lid(1, smp.AttrPKeyTable, 1)); st != mad.StatusInvalidField {
			t.Errorf("switch port 0 block 1: %#x", st)
		}
		if st := status(t, c.lid(1, smp.AttrPKeyTable, 3<<16|1)); st != 0 {
			t.Errorf("switch port 3 block 1: %#x", st)
		}
	})
	_ = f
}

// TestLIDLoopDropped programs a forwarding loop and checks the packet is
// dropped (and counted) instead of circling forever.
func TestLIDLoopDropped(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	c := attachRaw(t, f, "Hca1", 1)
	s1, s2 := lidOf(t, f, "Switch1", 0), lidOf(t, f, "Switch2", 0)
	loop := func(lid uint16, port uint8) {
		d := ok(t, c.lid(lid, smp.AttrLinearForwardingTable, 0))
		lft := append([]byte(nil), d...)
		lft[9] = port
		if st := status(t, c.set(lid, smp.AttrLinearForwardingTable, 0, lft)); st != 0 {
			t.Fatalf("LFT Set: %#x", st)
		}
		si := switchInfo(t, ok(t, c.lid(lid, smp.AttrSwitchInfo, 0)))
		si.LinearFDBTop = 9
		b, _ := si.MarshalBinary()
		ok(t, c.set(lid, smp.AttrSwitchInfo, 0, b))
	}
	loop(s1, 3)
	loop(s2, 3)
	if got := c.lid(9, smp.AttrNodeInfo, 0); got != nil {
		t.Error("LID 9 answered")
	}
	if v, _ := f.Counter("Switch1", 3, "PortXmitPkts"); v < maxLIDHops/2 {
		t.Errorf("Switch1 port 3 sent %d packets; the loop did not go round", v)
	}
}

func TestPresetLIDs(t *testing.T) {
	// H1's preset LID 5 is kept, H2's duplicate is not; S's preset 7 is
	// kept. The SM (H1) does not take LID 1 then.
	f := mustNew(t, `
Switch 3 "S" # "s" lid 7
[1] "H1"[1]
[2] "H2"[1]
[3] "H3"[1]

Hca 1 "H1"
[1] "S"[1] # lid 5 lmc 0 "s" lid 7 4xSDR

Hca 1 "H2"
[1] "S"[2] # lid 5 lmc 0 "s" lid 7 4xSDR

Hca 1 "H3"
[1] "S"[3] # lid 7 lmc 0 "s" lid 7 4xSDR
`, nil)
	for id, want := range map[string]uint16{"H1": 5, "S": 7, "H2": 1, "H3": 2} {
		num := 1
		if id == "S" {
			num = 0
		}
		if got := lidOf(t, f, id, num); got != want {
			t.Errorf("%s: LID %d, want %d", id, got, want)
		}
	}
}

// TestTwoTransportsOnePort: unsolicited MADs go to whichever transport of
// the port owns the method.
func TestTwoTransportsOnePort(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	a, err := f.Attach("Hca3", 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.Attach("Hca3", 1)
	if err != nil {
		t.Fatal(err)
	}
	agent := fabric.Agent{Class: fabrictest.TestClass, Version: fabrictest.TestVersion}
	ida, err := a.Register(ctx, agent.WithMethods(mad.MethodGet))
	if err != nil {
		t.Fatal(err)
	}
	idb, err := b.Register(ctx, agent.WithMethods(mad.MethodSet))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Register(ctx, agent.WithMethods(mad.MethodGet)); err == nil {
		t.Error("second owner of Get on the same port accepted")
	}
	c := attachRaw(t, f, "Hca2", 1)
	lid := lidOf(t, f, "Hca3", 1)
	for _, m := range []uint8{mad.MethodGet, mad.MethodSet} {
		if got := c.send(lid, fabrictest.NewMAD(fabrictest.TestVersion, m, 1)); len(got) != 0 {
			t.Errorf("%s answered by the fabric", mad.MethodName(m))
		}
	}
	var p fabric.Packet
	if err := a.Recv(ctx, &p); err != nil || p.Agent != ida || mad.MethodOf(p.Data) != mad.MethodGet {
		t.Errorf("transport a: %v agent %d", err, p.Agent)
	}
	if p.Addr.LID != lidOf(t, f, "Hca2", 1) || p.Addr.QPN != 1 || p.Addr.QKey != qp1QKey {
		t.Errorf("received address %+v", p.Addr)
	}
	if err := b.Recv(ctx, &p); err != nil || p.Agent != idb || mad.MethodOf(p.Data) != mad.MethodSet {
		t.Errorf("transport b: %v agent %d", err, p.Agent)
	}
}

// TestRoundRobinRouting checks the round-robin fast path builds the same
// forwarding tables as the naive min-hop balancing.
func TestRoundRobinRouting(t *testing.T) {
	for _, name := range []string{"fattree-2000.net", "fattree-50.net", "net", "net.2sw2path", "net.2sw2path4hca", "net.2sw2path4hca2port"} {
		rr := 0
		lfts := func() map[string][]byte {
			f := mustLoad(t, name, nil)
			m := map[string][]byte{}
			for _, n := range f.nodes {
				if n.sw != nil {
					m[n.id] = n.sw.table()
				}
			}
			rr += f.rrSwitches
			return m
		}
		fast := lfts()
		naiveRouting = true
		slow := lfts()
		naiveRouting = false
		if !cmp.Equal(fast, slow) {
			t.Errorf("%s: round-robin and naive min-hop tables differ", name)
		}
		if rr == 0 {
			t.Errorf("%s: the round-robin path was not taken", name)
		}
	}
}
