package diag

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// TestWriteLinkinfoFormats: the hand-appended lines are iblinkinfo's
// printf formats ("%6d %4d[%2s] ==(%3s %18s %6s/%8s)==>  ...", -l's
// "0x%016x \"%30s\" ", -p's HOQ), with C's padding: in bytes, so a
// non-ASCII name is padded as glibc pads it, not by runes.
func TestWriteLinkinfoFormats(t *testing.T) {
	hoq, stall := uint8(16), uint8(7)
	li := &Linkinfo{Nodes: []LinkNode{
		{Type: "Switch", GUID: 0x20, PortGUID: 0x20, Name: "sw é", LID: 3, Ports: []LinkPort{
			{Port: 1, GUID: 0x20, LID: 3, Width: "4X", Speed: "25.78125 Gbps", State: "Active", PhysState: "LinkUp",
				HOQLife: &hoq, VLStallCount: &stall,
				Remote: &LinkRemote{GUID: 0x101, NodeGUID: 0x100, LID: 12, Port: 1, Name: "h1 \"x\"", CouldBeWidth: "Could be 12X"}},
			{Port: 2, GUID: 0x20, LID: 3, State: "Down", PhysState: "Disabled"},
			{Port: 10, GUID: 0x20, LID: 3, Width: "1X", Speed: "2.5 Gbps", State: "Init", PhysState: "LinkUp"},
		}},
		{Type: "CA", GUID: 0x100, Name: strings.Repeat("n", 34), Ports: []LinkPort{
			{Port: 1, GUID: 0x101, LID: 12, Width: "4X", Speed: "25.78125 Gbps", State: "Active", PhysState: "LinkUp",
				Remote: &LinkRemote{GUID: 0x20, NodeGUID: 0x20, LID: 3, Port: 1, Name: "sw é", CouldBeSpeed: "Could be 53.125 Gbps"}},
		}},
	}}
	want := "Switch: 0x0000000000000020 sw é:\n" +
		"           3    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>      12    1[  ] \"h1 \"x\"\" (Could be 12X )\n" +
		"           3    2[  ] ==(                Down/Disabled)==>             [  ] \"\" ( )\n" +
		"           3   10[  ] ==( 1X           2.5 Gbps   Init/  LinkUp)==>      \"Port not available\"\n" +
		"CA: " + strings.Repeat("n", 34) + ":\n" +
		"      0x0000000000000101     12    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>       3    1[  ] \"sw é\" ( Could be 53.125 Gbps)\n"
	var got bytes.Buffer
	if err := WriteLinkinfo(&got, io.Discard, li); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Errorf("default (-want +got):\n%s", cmp.Diff(strings.Split(want, "\n"), strings.Split(got.String(), "\n")))
	}
	li.line, li.additional = true, true
	pad25 := strings.Repeat(" ", 25) // "sw é" is 5 bytes: "%30s" pads it with 25
	want = "0x0000000000000020 \"" + pad25 + "sw é\"      3    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp) (HOQ:16 VL_Stall:7)==>  0x0000000000000101     12    1[  ] \"h1 \"x\"\" (Could be 12X )\n" +
		"0x0000000000000020 \"" + pad25 + "sw é\"      3    2[  ] ==(                Down/Disabled)==>             [  ] \"\" ( )\n" +
		"0x0000000000000020 \"" + pad25 + "sw é\"      3   10[  ] ==( 1X           2.5 Gbps   Init/  LinkUp)==>      \"Port not available\"\n" +
		"0x0000000000000101 \"" + strings.Repeat("n", 34) + "\"     12    1[  ] ==( 4X      25.78125 Gbps Active/  LinkUp)==>  0x0000000000000020      3    1[  ] \"sw é\" ( Could be 53.125 Gbps)\n"
	got.Reset()
	if err := WriteLinkinfo(&got, io.Discard, li); err != nil {
		t.Fatal(err)
	}
	if got.String() != want {
		t.Errorf("-l -p (-want +got):\n%s", cmp.Diff(strings.Split(want, "\n"), strings.Split(got.String(), "\n")))
	}
}

// TestCouldBeXDR: get_max_msg on aggregated extended speeds
// (ibnd_get_agg_linkspeedextsup of both ends, ibnd_dump_agg_linkspeedext):
// a link both ends of which support XDR but that runs NDR could be
// "212.5 Gbps"; at XDR, or with one end without XDR, nothing is said.
func TestCouldBeXDR(t *testing.T) {
	const ext = smp.CapIsExtendedSpeedsSupported
	end := func(supp, act uint8) *topo.Port {
		n := &topo.Node{Type: topo.CA}
		p := &topo.Port{Node: n, Num: 1, CapMask: ext, WidthSupported: 2, WidthActive: 2,
			SpeedSupported: 7, SpeedActive: 4, SpeedExtSupported: supp, SpeedExtActive: act}
		n.Ports = []*topo.Port{nil, p}
		return p
	}
	for _, tc := range []struct {
		supp, rsupp, act uint8
		want             string
	}{
		{0x2f, 0x2f, 8, "Could be 212.5 Gbps"},
		{0x2f, 0x2f, 32, ""},
		{0x2f, 0x0f, 8, ""},
		{0x2f, 0x0f, 4, "Could be 106.25 Gbps"},
	} {
		if _, got := couldBe(end(tc.supp, tc.act), end(tc.rsupp, tc.act)); got != tc.want {
			t.Errorf("supported %#x and %#x, active %d: %q, want %q", tc.supp, tc.rsupp, tc.act, got, tc.want)
		}
	}
}
