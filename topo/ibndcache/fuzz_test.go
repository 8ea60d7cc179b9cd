package ibndcache

import (
	"reflect"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/internal/topotest"
	"github.com/ibscript/ibscript/topo"
)

// FuzzDecode: any bytes are refused with an error naming the file, or
// decode to records that encode to bytes that decode to the same records
// (a remote flag other than 0 and 1 reads as 1, as libibnetdisc reads
// it, so the bytes themselves may differ); a fabric built of them has
// symmetric links, and its own cache file reads back to the same fabric.
//
// Its seeds are small caches (one CA and one switch, three nodes in a
// line), so that each input costs microseconds and an interesting one is
// minimized in moments: the 3.8 KB cache of infiniband-diags (tested
// whole in TestDecodeEncodeC) as a seed ran 57 inputs a second.
func FuzzDecode(f *testing.F) {
	for _, net := range []string{
		"Switch 2 \"S\"\n[1] \"H\"[1]\n\nHca 1 \"H\"\n[1] \"S\"[1]\n",
		"Switch 3 \"S\"\n[1] \"H\"[1]\n[2] \"T\"[1]\n\nHca 2 \"H\"\n[1] \"S\"[1]\n\nRt 1 \"T\"\n[1] \"S\"[2]\n",
	} {
		fab, err := topo.Parse("seed.net", strings.NewReader(net))
		if err != nil {
			f.Fatal(err)
		}
		c, err := FromFabric(fab)
		if err != nil {
			f.Fatal(err)
		}
		b, err := c.Encode()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add([]byte{0x2b, 0x83, 0xe7, 0x8f, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode("fuzz.cache", b)
		if err != nil {
			if c != nil || !strings.HasPrefix(err.Error(), "fuzz.cache: ") {
				t.Fatalf("error %v with %v", err, c)
			}
			return
		}
		back, err := c.Encode()
		if err != nil {
			t.Fatal(err)
		}
		c2, err := Decode("back", back)
		if err != nil {
			t.Fatalf("encoded records do not decode: %v", err)
		}
		if !reflect.DeepEqual(c, c2) {
			t.Fatal("decoded records encode to bytes that decode to other records")
		}
		fab, err := c.Fabric("fuzz.cache")
		if err != nil {
			if fab != nil || !strings.HasPrefix(err.Error(), "fuzz.cache: ") {
				t.Fatalf("error %v with %v", err, fab)
			}
			return
		}
		for _, l := range fab.Links() {
			if l.A.Remote != l.B || l.B.Remote != l.A {
				t.Fatalf("asymmetric link %v - %v", l.A, l.B)
			}
		}
		ours, err := FromFabric(fab)
		if err != nil {
			return // a description past 64 bytes cannot come from a file
		}
		ob, err := ours.Encode()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Decode("again", ob)
		if err != nil {
			t.Fatal(err)
		}
		fab2, err := again.Fabric("again")
		if err != nil {
			t.Fatalf("our own file does not read back: %v", err)
		}
		// A port whose PortState is 0 (its PortInfo unread) is not
		// cached, nor any link to it.
		for _, n := range fab.Nodes {
			for i, p := range n.Ports {
				if p != nil && p.State == 0 {
					if p.Remote != nil {
						p.Remote.Remote = nil
					}
					n.Ports[i] = nil
				}
			}
		}
		if d := topotest.SameByGUID(fab, fab2); d != "" {
			t.Fatalf("round trip differs: %s", d)
		}
	})
}
