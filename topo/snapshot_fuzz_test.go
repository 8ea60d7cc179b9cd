package topo

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
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
		fab, err := Parse("seed.net", strings.NewReader(net))
		if err != nil {
			f.Fatal(err)
		}
		var s bytes.Buffer
		if err := WriteSnapshot(&s, fab); err != nil {
			f.Fatal(err)
		}
		f.Add(s.String())
	}
	f.Add(`{"schema":"ibscript.topology.v1","nodes":[{"type":"CA","num_ports":1,"guid":"0x1","ports":[{"num":1,"remote":{"node":0,"port":1}}]}]}`)
	f.Add(`{"schema":"ibscript.topology.v1","nodes":[null]}`)
	f.Fuzz(func(t *testing.T, in string) {
		fab, err := ReadSnapshot(strings.NewReader(in), "fuzz.json")
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
		if err := WriteSnapshot(&s, fab); err != nil {
			t.Fatal(err)
		}
		back, err := ReadSnapshot(bytes.NewReader(s.Bytes()), "again.json")
		if err != nil {
			t.Fatalf("a written snapshot does not read back: %v\n%s", err, s.String())
		}
		if d := sameByGUID(fab, back); d != "" {
			t.Fatalf("round trip differs: %s", d)
		}
		if err := WriteIBNetDiscover(io.Discard, fab, nil); err != nil {
			t.Fatal(err)
		}
	})
}

// sameByGUID reports how b differs from a, nodes matched by GUID (unique
// in both: the loaders refuse two nodes with one GUID): type, description,
// port count, and each port's GUID and peer. Diff matches nodes whose
// GUID is 0 by description instead, which need not be unique, so it
// cannot judge a round trip of such fabrics.
func sameByGUID(a, b *Fabric) string {
	if len(a.Nodes) != len(b.Nodes) {
		return fmt.Sprintf("%d nodes, then %d", len(a.Nodes), len(b.Nodes))
	}
	idx := make(map[uint64]*Node, len(b.Nodes))
	for _, n := range b.Nodes {
		idx[n.GUID] = n
	}
	for _, n := range a.Nodes {
		m := idx[n.GUID]
		if m == nil || m.Type != n.Type || m.Desc != n.Desc || m.NumPorts != n.NumPorts || len(m.Ports) != len(n.Ports) {
			return fmt.Sprintf("node 0x%x %q differs", n.GUID, n.Desc)
		}
		for i, p := range n.Ports {
			q := m.Ports[i]
			if (p == nil) != (q == nil) {
				return fmt.Sprintf("node 0x%x port %d: present in one only", n.GUID, i)
			}
			if p == nil {
				continue
			}
			if p.GUID != q.GUID || (p.Remote == nil) != (q.Remote == nil) {
				return fmt.Sprintf("node 0x%x port %d differs", n.GUID, i)
			}
			if p.Remote != nil && (p.Remote.Node.GUID != q.Remote.Node.GUID || p.Remote.Num != q.Remote.Num) {
				return fmt.Sprintf("node 0x%x port %d: another peer", n.GUID, i)
			}
		}
	}
	return ""
}
