package ibndcache

import (
	"bytes"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/topo"
)

// FuzzDecode: any bytes are refused with an error naming the file, or
// decode to records that encode back to the same bytes; a fabric built of
// them has symmetric links, and its own cache file reads back to the
// same fabric.
func FuzzDecode(f *testing.F) {
	f.Add(readC(f))
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
		if !bytes.Equal(back, b) {
			t.Fatal("decoded records encode to other bytes")
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
		if d := topo.Diff(fab, fab2); len(d) != 0 {
			t.Fatalf("round trip differs: %v", d)
		}
	})
}
