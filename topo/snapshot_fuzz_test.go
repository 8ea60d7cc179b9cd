package topo_test

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/internal/topotest"
	"github.com/ibscript/ibscript/topo"
)

// FuzzReadSnapshot: a snapshot from anywhere is refused with an error
// naming the file, or read into a fabric whose cables are symmetric,
// which writes (as a snapshot and as ibnetdiscover) without a panic and
// reads back unchanged.
//
// Its seeds are small (a CA and a switch; a two-port CA, a switch and a
// router): each input costs microseconds, and an interesting one is
// minimized in moments. The 5 KB snapshots of net.2sw2path4hca it had
// as seeds stalled the fuzzer for seconds at a time.
func FuzzReadSnapshot(f *testing.F) {
	for _, net := range []string{
		"Switch 2 \"S\"\n[1] \"H\"[1]\n\nHca 1 \"H\"\n[1] \"S\"[1]\n",
		"Switch 3 \"S\"\n[1] \"H\"[1]\n[2] \"H\"[2]\n[3] \"T\"[1]\n\nHca 2 \"H\"\n[1] \"S\"[1]\n[2] \"S\"[2]\n\nRt 1 \"T\"\n[1] \"S\"[3]\n",
	} {
		fab, err := topo.Parse("seed.net", strings.NewReader(net))
		if err != nil {
			f.Fatal(err)
		}
		var s bytes.Buffer
		if err := topo.WriteSnapshot(&s, fab); err != nil {
			f.Fatal(err)
		}
		f.Add(s.String())
	}
	f.Add(`{"schema":"ibscript.topology.v1","nodes":[{"type":"CA","num_ports":1,"guid":"0x1","ports":[{"num":1,"remote":{"node":0,"port":1}}]}]}`)
	f.Add(`{"schema":"ibscript.topology.v1","nodes":[null]}`)
	f.Fuzz(func(t *testing.T, in string) {
		fab, err := topo.ReadSnapshot(strings.NewReader(in), "fuzz.json")
		if err != nil {
			if fab != nil {
				t.Fatal("fabric with an error")
			}
			if !strings.Contains(err.Error(), "fuzz.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		for _, l := range fab.Links() {
			if l.A.Remote != l.B || l.B.Remote != l.A {
				t.Fatalf("asymmetric link %v - %v", l.A, l.B)
			}
		}
		var s bytes.Buffer
		if err := topo.WriteSnapshot(&s, fab); err != nil {
			t.Fatal(err)
		}
		back, err := topo.ReadSnapshot(bytes.NewReader(s.Bytes()), "again.json")
		if err != nil {
			t.Fatalf("a written snapshot does not read back: %v\n%s", err, s.String())
		}
		if d := topotest.SameByGUID(fab, back); d != "" {
			t.Fatalf("round trip differs: %s", d)
		}
		if err := topo.WriteIBNetDiscover(io.Discard, fab, nil); err != nil {
			t.Fatal(err)
		}
	})
}
