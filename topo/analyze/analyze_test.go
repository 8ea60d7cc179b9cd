package analyze_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
	"github.com/ibscript/ibscript/topo"
	"github.com/ibscript/ibscript/topo/analyze"
)

// ring4 is four switches in a ring (port 1 to the next switch's port 2)
// with a host on port 3 of each.
const ring4 = `
Switch	4 "S0"
[1]	"S1"[2]
[2]	"S3"[1]
[3]	"H0"[1]

Switch	4 "S1"
[1]	"S2"[2]
[2]	"S0"[1]
[3]	"H1"[1]

Switch	4 "S2"
[1]	"S3"[2]
[2]	"S1"[1]
[3]	"H2"[1]

Switch	4 "S3"
[1]	"S0"[2]
[2]	"S2"[1]
[3]	"H3"[1]

Hca	1 "H0"
[1]	"S0"[3]

Hca	1 "H1"
[1]	"S1"[3]

Hca	1 "H2"
[1]	"S2"[3]

Hca	1 "H3"
[1]	"S3"[3]
`

// live is a simulated fabric with a session on its SM port.
type live struct {
	sim  *sim.Fabric
	sess *engine.Session
}

func newLive(tb testing.TB, text, path string) *live {
	tb.Helper()
	if text != "" {
		path = filepath.Join(tb.TempDir(), "net")
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	f := simtest.Load(tb, path, nil)
	return &live{sim: f, sess: simtest.Session(tb, f, nil)}
}

// read discovers the fabric and reads its LFTs, MFTs and SL2VL tables.
func (l *live) read(tb testing.TB) (*topo.Fabric, analyze.Tables) {
	tb.Helper()
	d, err := l.sess.Discover(tb.Context(), nil)
	if err != nil {
		tb.Fatal(err)
	}
	lft := l.sess.LFTs(tb.Context(), d, nil)
	mft := l.sess.MFTs(tb.Context(), d, nil)
	sl := l.sess.SL2VLs(tb.Context(), d, nil)
	for _, e := range [][]engine.TargetError{lft.Errors, mft.Errors, sl.Errors} {
		if len(e) > 0 {
			tb.Fatal(e)
		}
	}
	return d.Fabric, analyze.Tables{LFT: &lft.ForwardingTables, MFT: &mft.MulticastTables, SL2VL: &sl.SL2VLTables}
}

func lidOf(tb testing.TB, f *topo.Fabric, desc string) uint16 {
	for _, n := range f.Nodes {
		if n.Desc == desc {
			return n.EndPort(1).LID
		}
	}
	tb.Fatalf("no node %q", desc)
	return 0
}

// clockwise routes every host of the ring the short way, ties (two hops)
// clockwise by port 1.
func (l *live) clockwise(tb testing.TB, f *topo.Fabric) {
	for s := range 4 {
		for h := range 4 {
			port := uint8(3)
			switch (h - s + 4) % 4 {
			case 1, 2:
				port = 1
			case 3:
				port = 2
			}
			if err := l.sim.SetLFT(fmt.Sprintf("S%d", s), lidOf(tb, f, fmt.Sprintf("H%d", h)), port); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

func TestCreditLoopRing(t *testing.T) {
	l := newLive(t, ring4, "")
	f, _ := l.read(t)
	l.clockwise(t, f)
	f, tabs := l.read(t)
	res, err := analyze.FindCreditLoops(f, tabs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count == 0 || len(res.Loops) == 0 {
		t.Fatalf("no credit loop found: %+v", res)
	}
	// ibsim's SL2VL: SL i on VL i (15 on 7) on every port: 15 classes
	// (7 and 15 one), each the ring's loop on its own VL.
	if len(res.SLClasses) != 15 || res.Count != 15 || res.SL2VL != "tables" || res.MissingSL2VL != 0 {
		t.Fatalf("classes %v, count %d, sl2vl %q missing %d", res.SLClasses, res.Count, res.SL2VL, res.MissingSL2VL)
	}
	if l := res.Loops[7]; fmt.Sprint(l.SLs) != "[7 15]" || l.Channels[0].VL != 7 || fmt.Sprint(res.Loops[0].SLs) != "[0]" {
		t.Errorf("loop 7 SLs %v on VL %d, loop 0 SLs %v", l.SLs, l.Channels[0].VL, res.Loops[0].SLs)
	}
	var got []string
	for _, c := range res.Loops[0].Channels {
		got = append(got, fmt.Sprintf("%s:%d>%s:%d/VL%d", c.Node.Desc, c.Port, c.RemoteNode.Desc, c.RemotePort, c.VL))
	}
	want := "S0:1>S1:2/VL0 S1:1>S2:2/VL0 S2:1>S3:2/VL0 S3:1>S0:2/VL0"
	if strings.Join(got, " ") != want || res.Loops[0].Component != 4 || res.Loops[0].Multicast {
		t.Errorf("loop %v (component %d), want %s", got, res.Loops[0].Component, want)
	}
}

// TestCreditLoopRingDateline: the VL of a hop is the SL2VL entry of the
// switch's input and output ports. With S0 sending what came from S3 on
// VL 1 (everything else on VL 0), the only traffic on S0's port 1 VL 1 is
// S3's for H1, which leaves at S1: the cycle of TestCreditLoopRing is cut
// there. Sending H0's own traffic on VL 1 as well (in 0: both input
// ports) moves the whole cycle's hop there.
func TestCreditLoopRingDateline(t *testing.T) {
	l := newLive(t, ring4, "")
	f, _ := l.read(t)
	l.clockwise(t, f)
	f, tabs := l.read(t)
	for _, tc := range []struct {
		in    uint8
		loops int
		want  string
	}{
		{in: 2, loops: 0},
		{in: 0, loops: 1, want: "S0:1/VL1 S1:1/VL0 S2:1/VL0 S3:1/VL0"},
	} {
		var zero, one [16]uint8
		for sl := range one {
			one[sl] = 1
		}
		for k := range tabs.SL2VL.Tables {
			tabs.SL2VL.Tables[k] = zero
			if k.Node.Desc == "S0" && (k.In == tc.in || tc.in == 0) && k.Out == 1 {
				tabs.SL2VL.Tables[k] = one
			}
		}
		res, err := analyze.FindCreditLoops(f, tabs)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.SLClasses) != 1 || res.Count != tc.loops {
			t.Fatalf("S0 %d->1 on VL 1: classes %v, %d loops, want %d", tc.in, res.SLClasses, res.Count, tc.loops)
		}
		if tc.loops == 0 {
			continue
		}
		var got []string
		for _, c := range res.Loops[0].Channels {
			got = append(got, fmt.Sprintf("%s:%d/VL%d", c.Node.Desc, c.Port, c.VL))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("S0 %d->1 on VL 1: loop %v, want %s", tc.in, got, tc.want)
		}
	}
}

func TestNoCreditLoopFatTree(t *testing.T) {
	l := newLive(t, "", "../../tests/topologies/fattree-50.net")
	f, tabs := l.read(t)
	res, err := analyze.FindCreditLoops(f, tabs)
	if err != nil {
		t.Fatal(err)
	}
	if res.Count != 0 || len(res.Loops) != 0 || res.Dependencies == 0 || res.Sources != 44 || res.Destinations != 50 {
		t.Errorf("%+v", res)
	}
}

// TestTablesReadBack: MFT blocks and SL2VL tables set through SMPs come
// back from engine.Session.MFTs and SL2VLs as set: the MLID's ports from
// the mask's bits (IBA 14.2.5.12, big-endian 16-port masks), SL 0's VL
// in the high nibble of the first byte (14.2.5.8).
func TestTablesReadBack(t *testing.T) {
	l := newLive(t, ring4, "")
	f, _ := l.read(t)
	s0 := node(t, f, "S0")
	target := engine.LID(s0.Ports[0].LID)
	mft := make([]byte, 64)
	mft[2], mft[3] = 0x00, 0x0a // MLID 0xc001: ports 1 and 3
	if _, err := l.sess.SMP(t.Context(), target, mad.MethodSet, smp.AttrMulticastForwardingTable, 0, mft); err != nil {
		t.Fatal(err)
	}
	sl2vl := make([]byte, 64)
	copy(sl2vl, []byte{0x12, 0x34, 0x56, 0x70, 0, 0, 0, 0x0f})
	if _, err := l.sess.SMP(t.Context(), target, mad.MethodSet, smp.AttrSLtoVLMappingTable, 2<<8|1, sl2vl); err != nil {
		t.Fatal(err)
	}
	f, tabs := l.read(t)
	s0 = node(t, f, "S0")
	for i, n := range tabs.MFT.Switches {
		m, ok := tabs.MFT.Groups[i][0xc001]
		switch {
		case n == s0 && (!ok || !m.Has(1) || m.Has(2) || !m.Has(3) || len(tabs.MFT.Groups[i]) != 1):
			t.Errorf("S0's MFT %v, want MLID 0xc001 on ports 1 and 3", tabs.MFT.Groups[i])
		case n != s0 && len(tabs.MFT.Groups[i]) != 0:
			t.Errorf("%s's MFT %v, want none", n.Desc, tabs.MFT.Groups[i])
		}
	}
	got := tabs.SL2VL.Tables[topo.SL2VLKey{Node: s0, In: 2, Out: 1}]
	if want := [16]uint8{1, 2, 3, 4, 5, 6, 7, 0, 0, 0, 0, 0, 0, 0, 0, 15}; got != want {
		t.Errorf("S0 2->1 SL2VL %v, want %v", got, want)
	}
}

// TestCreditLoopAcrossSLs: SL 0 with its dateline at S0 (what came from
// S3 moves to VL 1) and SL 1 with the opposite one (VL 1, moving to VL 0)
// have no cycle each, but share the VLs' buffers: together they close one
// through all eight channels, which a search per SL would miss.
func TestCreditLoopAcrossSLs(t *testing.T) {
	l := newLive(t, ring4, "")
	f, _ := l.read(t)
	l.clockwise(t, f)
	f, tabs := l.read(t)
	for k := range tabs.SL2VL.Tables {
		var v [16]uint8
		v[1] = 1
		if k.Node.Desc == "S0" && k.In == 2 && k.Out == 1 {
			for sl := range v {
				v[sl] = 1
			}
			v[1] = 0
		}
		tabs.SL2VL.Tables[k] = v
	}
	res, err := analyze.FindCreditLoops(f, tabs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.SLClasses) != 2 || res.Count != 1 || len(res.Loops[0].Channels) != 8 || len(res.Loops[0].SLs) != 16 {
		t.Fatalf("classes %v, %d loops: %+v", res.SLClasses, res.Count, res.Loops)
	}
	var got []string
	for _, c := range res.Loops[0].Channels {
		got = append(got, fmt.Sprintf("%s:%d/VL%d", c.Node.Desc, c.Port, c.VL))
	}
	if want := "S0:1/VL0 S1:1/VL0 S2:1/VL0 S3:1/VL0 S0:1/VL1 S1:1/VL1 S2:1/VL1 S3:1/VL1"; strings.Join(got, " ") != want {
		t.Errorf("loop %v, want %s", got, want)
	}
	// Each SL alone: no loop.
	for _, sl := range []int{0, 1} {
		one := &topo.SL2VLTables{Tables: map[topo.SL2VLKey][16]uint8{}}
		for k, v := range tabs.SL2VL.Tables {
			var w [16]uint8
			for i := range w {
				w[i] = v[sl]
			}
			one.Tables[k] = w
		}
		t2 := tabs
		t2.SL2VL = one
		if r, _ := analyze.FindCreditLoops(f, t2); r.Count != 0 {
			t.Errorf("SL %d alone: %d loops", sl, r.Count)
		}
	}
}
