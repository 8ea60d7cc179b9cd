package sim

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// workedExample is the fabric of mad-formats.md 6.1's worked example: the
// SM's CA port 1 -> S1 port 5; S1 port 3 -> S2 port 2; S2 port 7 -> the
// target CA's port 1.
const workedExample = `
Hca 1 "SM"
[1] "S1"[5]

Switch 8 "S1"
[5] "SM"[1]
[3] "S2"[2]

Switch 8 "S2"
[2] "S1"[3]
[7] "Target"[1]

Hca 1 "Target"
[1] "S2"[7]
`

func TestDRWorkedExample(t *testing.T) {
	f := mustNew(t, workedExample, &Options{Bare: true})
	var hops []hop
	f.trace = func(h hop) { hops = append(hops, h) }
	sm := attachRaw(t, f, "SM", 1)

	resp := sm.dr(smp.AttrNodeInfo, 0, 0, 1, 3, 7)
	want := []hop{
		{Node: "SM", HPIn: 0, HPOut: 1, Out: 1, Action: "forward"},     // 1: SM CA sends
		{Node: "S1", HPIn: 1, HPOut: 2, Out: 3, Action: "forward"},     // 2
		{Node: "S2", HPIn: 2, HPOut: 3, Out: 7, Action: "forward"},     // 3
		{Node: "Target", HPIn: 3, HPOut: 4, Out: 0, Action: "sma"},     // 4: SMA answers
		{Node: "Target", HPIn: 4, HPOut: 3, Out: 1, Action: "forward"}, // 5: reply
		{Node: "S2", HPIn: 3, HPOut: 2, Out: 2, Action: "forward"},     // 6
		{Node: "S1", HPIn: 2, HPOut: 1, Out: 5, Action: "forward"},     // 7
		{Node: "SM", HPIn: 1, HPOut: 0, Out: 0, Action: "deliver"},     // 8: to the SM
	}
	if diff := cmp.Diff(want, hops); diff != "" {
		t.Errorf("hops (-want +got):\n%s", diff)
	}
	d := ok(t, resp)
	if !smp.Direction(resp) || smp.HopPointer(resp) != 0 || smp.HopCount(resp) != 3 {
		t.Errorf("response D=%v hp=%d hc=%d, want D=1 hp=0 hc=3",
			smp.Direction(resp), smp.HopPointer(resp), smp.HopCount(resp))
	}
	if got := smp.ReturnPath(resp)[:4]; !cmp.Equal(got, []byte{0, 5, 2, 1}) {
		t.Errorf("ReturnPath[0:4] = %v, want [0 5 2 1]", got)
	}
	if got := smp.InitialPath(resp)[:4]; !cmp.Equal(got, []byte{0, 1, 3, 7}) {
		t.Errorf("InitialPath[0:4] = %v, want [0 1 3 7]", got)
	}
	ni := nodeInfo(t, d)
	if ni.NodeGUID != f.byID["Target"].guid || ni.LocalPortNum != 1 || ni.NodeType != smp.NodeTypeCA {
		t.Errorf("NodeInfo %+v is not the target's, port 1", ni)
	}
}

func TestDRDiscardsAndLocal(t *testing.T) {
	const net = `
Hca 2 "SM"
[1] "S1"[5]
[2] "S1"[6]

Switch 8 "S1"
[5] "SM"[1]
[6] "SM"[2]
[3] "S2"[2]
[1] "CA"[1]

Switch 8 "S2"
[2] "S1"[3]
[7] "Target"[1]

Hca 1 "Target"
[1] "S2"[7]

Hca 2 "CA"
[1] "S1"[1]
[2] "Target2"[1]

Hca 1 "Target2"
[1] "CA"[2]
`
	for _, bare := range []bool{true, false} {
		f := mustNew(t, net, &Options{Bare: bare})
		sm := attachRaw(t, f, "SM", 1)
		tests := []struct {
			name string
			path []uint8
			want string // node id answering, "" for a drop
			port uint8  // its LocalPortNum
		}{
			{"hop count 0: own SMA", []uint8{0}, "SM", 1},
			{"first hop not the sending port", []uint8{0, 2}, "", 0},
			{"one hop", []uint8{0, 1}, "S1", 5},
			{"to the target", []uint8{0, 1, 3, 7}, "Target", 1},
			{"uncabled egress", []uint8{0, 1, 4}, "", 0},
			{"egress past the port count", []uint8{0, 1, 9}, "", 0},
			{"egress port 0", []uint8{0, 1, 0, 7}, "", 0},
			{"through a CA", []uint8{0, 1, 1, 2}, "", 0},
			{"to a CA's other port neighbour", []uint8{0, 1, 1}, "CA", 1},
			{"back to the SM's other port", []uint8{0, 1, 6}, "SM", 2},
		}
		for _, tt := range tests {
			resp := sm.dr(smp.AttrNodeInfo, 0, tt.path...)
			if tt.want == "" {
				if resp != nil {
					t.Errorf("bare=%v %s: got a response, want a drop", bare, tt.name)
				}
				continue
			}
			if resp == nil {
				t.Errorf("bare=%v %s: no response", bare, tt.name)
				continue
			}
			ni := nodeInfo(t, ok(t, resp))
			if ni.NodeGUID != f.byID[tt.want].guid || ni.LocalPortNum != tt.port {
				t.Errorf("bare=%v %s: NodeInfo of guid %#x port %d, want %q port %d",
					bare, tt.name, ni.NodeGUID, ni.LocalPortNum, tt.want, tt.port)
			}
		}
	}
}

func TestDRHopCountLimits(t *testing.T) {
	f := mustNew(t, workedExample, &Options{Bare: true})
	sm := attachRaw(t, f, "SM", 1)
	b := drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 1, 3, 7)
	smp.SetHopCount(b, 64)
	if got := sm.one(fabric.PermissiveLID, b); got != nil {
		t.Error("hop count 64 answered")
	}
	b = drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 1, 3, 7)
	smp.SetHopPointer(b, 2) // an unreasonable hop pointer at the sender
	if got := sm.one(fabric.PermissiveLID, b); got != nil {
		t.Error("hop pointer 2 at the sender answered")
	}
	b = drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 1, 3, 7)
	smp.SetDrDLID(b, 5) // LID-routed last legs are not supported
	if got := sm.one(fabric.PermissiveLID, b); got != nil {
		t.Error("non-permissive DrDLID answered")
	}
}

// TestDRLIDRoutedFirstLeg sends a DR SMP LID-routed to a switch, which
// starts the directed part (DrSLID = the requester's LID), as ibportstate
// does; the response comes back LID-routed from that switch.
func TestDRLIDRoutedFirstLeg(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", &Options{SMNode: "Switch1"})
	hca2 := attachRaw(t, f, "Hca2", 1)
	s1 := lidOf(t, f, "Switch1", 0)
	for _, tt := range []struct {
		name string
		path []uint8
		want string
		port uint8
	}{
		{"switch itself", []uint8{0}, "Switch1", 0},
		{"one hop from the switch", []uint8{0, 2}, "Hca3", 1},
		{"two hops", []uint8{0, 5, 2}, "Hca4", 1},
	} {
		b := drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, tt.path...)
		smp.SetDrSLID(b, lidOf(t, f, "Hca2", 1))
		got := hca2.send(s1, b)
		if len(got) != 1 {
			t.Errorf("%s: %d responses", tt.name, len(got))
			continue
		}
		ni := nodeInfo(t, ok(t, got[0].Data))
		if ni.NodeGUID != f.byID[tt.want].guid || ni.LocalPortNum != tt.port {
			t.Errorf("%s: NodeInfo guid %#x port %d, want %q port %d", tt.name, ni.NodeGUID, ni.LocalPortNum, tt.want, tt.port)
		}
		if got[0].Addr.LID != s1 {
			t.Errorf("%s: response from LID %d, want the switch's %d", tt.name, got[0].Addr.LID, s1)
		}
	}
}
