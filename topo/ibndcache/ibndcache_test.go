package ibndcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/ibscript/ibscript/topo"
)

// testdata/mixed-router.cache was written by infiniband-diags 44's
// `ibnetdiscover --cache` (libibnetdisc 44.0) on ibsim running
// tests/topologies/net.mixed-router with OpenSM, from HcaX port 1.
const cFile = "testdata/mixed-router.cache"

func readC(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(cFile)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDecodeEncodeC: libibnetdisc's file decodes and encodes back to the
// same bytes, with the counts, GUIDs and links it holds.
func TestDecodeEncodeC(t *testing.T) {
	b := readC(t)
	f, err := Decode(cFile, b)
	if err != nil {
		t.Fatal(err)
	}
	if f.FromNode != 0x100000 || f.MaxHops != 3 || len(f.Nodes) != 6 || len(f.Ports) != 25 {
		t.Fatalf("from 0x%x, %d hops, %d nodes, %d ports; want 0x100000, 3, 6, 25", f.FromNode, f.MaxHops, len(f.Nodes), len(f.Ports))
	}
	back, err := f.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(back, b) {
		t.Fatalf("re-encoded file differs from libibnetdisc's")
	}
	fab, err := f.Fabric(cFile)
	if err != nil {
		t.Fatal(err)
	}
	// The newest found first in the file: HcaX, where discovery started,
	// is the last node record and the first node.
	if fab.Nodes[0].GUID != 0x100000 || fab.Origin == nil || fab.Origin.Node != fab.Nodes[0] || fab.Origin.Num != 1 {
		t.Fatalf("first node %v, origin %v: want HcaX port 1", fab.Nodes[0], fab.Origin)
	}
	var sw *topo.Node
	for _, n := range fab.Nodes {
		if n.Desc == "SwA" {
			sw = n
		}
	}
	if sw == nil || sw.Type != topo.Switch || sw.NumPorts != 8 || sw.Ports[0].LID != 1 || sw.Ports[5].LID != 0 ||
		sw.Ports[5].Remote == nil || sw.Ports[5].Remote.Node.Desc != "SwB" || sw.Ports[5].WidthActive != 8 || sw.Ports[4].Remote != nil {
		t.Fatalf("SwA read as %+v", sw)
	}
	for _, l := range fab.Links() {
		if l.A.Remote != l.B || l.B.Remote != l.A {
			t.Fatalf("asymmetric link %v - %v", l.A, l.B)
		}
	}
}

// TestFromFabricC: the file made of the fabric libibnetdisc's file holds
// has its header, its records in its order, their keys, LIDs and links,
// byte for byte; the attribute blocks hold the fields the model keeps
// (FromFabric's doc), which decode to the same fabric.
func TestFromFabricC(t *testing.T) {
	b := readC(t)
	c, err := Decode(cFile, b)
	if err != nil {
		t.Fatal(err)
	}
	fab, err := c.Fabric(cFile)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := FromFabric(fab)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := ours.Encode()
	if err != nil {
		t.Fatal(err)
	}
	if len(ob) != len(b) {
		t.Fatalf("%d bytes, libibnetdisc's %d", len(ob), len(b))
	}
	if !bytes.Equal(ob[:HeaderLen], b[:HeaderLen]) {
		t.Errorf("header %x, libibnetdisc's %x", ob[:HeaderLen], b[:HeaderLen])
	}
	for i := range c.Nodes {
		cn, on := c.Nodes[i], ours.Nodes[i]
		cn.Info, cn.SwitchInfo, on.Info, on.SwitchInfo = [64]byte{}, [64]byte{}, [64]byte{}, [64]byte{}
		if !equalNode(cn, on) {
			t.Errorf("node record %d: %+v, libibnetdisc's %+v", i, on, cn)
		}
	}
	for i := range c.Ports {
		cp, op := c.Ports[i], ours.Ports[i]
		cp.Info, op.Info = [64]byte{}, [64]byte{}
		if cp != op {
			t.Errorf("port record %d: %+v, libibnetdisc's %+v", i, op, cp)
		}
	}
	again, err := Decode("ours", ob)
	if err != nil {
		t.Fatal(err)
	}
	fab2, err := again.Fabric("ours")
	if err != nil {
		t.Fatal(err)
	}
	if d := topo.Diff(fab, fab2); len(d) != 0 {
		t.Errorf("the fabric of our file differs: %v", d)
	}
}

func equalNode(a, b Node) bool {
	if len(a.Ports) != len(b.Ports) {
		return false
	}
	for i := range a.Ports {
		if a.Ports[i] != b.Ports[i] {
			return false
		}
	}
	a.Ports, b.Ports = nil, nil
	return a.SMALID == b.SMALID && a.SMALMC == b.SMALMC && a.SMAEnhSP0 == b.SMAEnhSP0 && a.SwitchInfo == b.SwitchInfo &&
		a.GUID == b.GUID && a.Type == b.Type && a.NumPorts == b.NumPorts && a.Info == b.Info && a.Desc == b.Desc
}

// TestTruncated: every prefix of the file is an error naming the file and
// an offset, never a panic.
func TestTruncated(t *testing.T) {
	b := readC(t)
	for n := range len(b) {
		_, err := Decode("f.cache", b[:n])
		if err == nil || !errors.Is(err, ErrFormat) || !strings.HasPrefix(err.Error(), "f.cache: offset ") {
			t.Fatalf("%d of %d bytes: %v", n, len(b), err)
		}
	}
	if _, err := Decode("f.cache", append(bytes.Clone(b), 0)); err == nil || !strings.Contains(err.Error(), "offset 3870: invalid ibnetdiscover cache: 1 bytes after the last port record") {
		t.Fatalf("a byte too many: %v", err)
	}
}

// Offsets in the C file (6 nodes, the first a CA with one port key).
const (
	node0    = HeaderLen
	node1    = node0 + NodeLen + PortKeyLen
	portKey0 = node0 + NodeLen // node 0's first port key
)

// TestHostile: what a corrupt or hostile file says, each the file and the
// offset of the record at fault.
func TestHostile(t *testing.T) {
	b := readC(t)
	c, err := Decode(cFile, b)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	ports := c.PortOffset(0)
	// The port record of node 0's port key.
	var keyed int
	for i, p := range c.Ports {
		if p.GUID == c.Nodes[0].Ports[0].GUID && p.Num == c.Nodes[0].Ports[0].Num {
			keyed = c.PortOffset(i)
		}
	}
	for _, tc := range []struct {
		name string
		edit func(b []byte) []byte
		want string
	}{
		{"magic", func(b []byte) []byte { le.PutUint32(b, 0x12345678); return b }, "offset 0: invalid ibnetdiscover cache: magic 0x12345678, want 0x8fe7832b"},
		{"version", func(b []byte) []byte { le.PutUint32(b[4:], 2); return b }, "offset 4: invalid ibnetdiscover cache: version 2, want 1"},
		{"node count", func(b []byte) []byte { le.PutUint32(b[8:], 0xffffffff); return b }, "offset 8: invalid ibnetdiscover cache: 4294967295 nodes and 25 ports need"},
		{"port count", func(b []byte) []byte { le.PutUint32(b[12:], 0x7fffffff); return b }, "offset 8: invalid ibnetdiscover cache: 6 nodes and 2147483647 ports need"},
		{"fewer ports", func(b []byte) []byte { le.PutUint32(b[12:], 24); return b }, "bytes after the last port record"},
		{"port keys", func(b []byte) []byte { b[node0+NodeLen-1] = 255; return b }, "truncated"},
		{"from node", func(b []byte) []byte { le.PutUint64(b[16:], 0xdead); return b }, "offset 16: invalid ibnetdiscover cache: the from node 0x000000000000dead has no node record"},
		{"duplicate node", func(b []byte) []byte { copy(b[node1+4+64:node1+4+72], b[node0+4+64:node0+4+72]); return b },
			"offset 244: invalid ibnetdiscover cache: node record 1 (GUID 0x0000000000100006): the GUID of node record 0 again"},
		{"node type", func(b []byte) []byte { b[node0+4+72] = 9; return b }, "offset 28: invalid ibnetdiscover cache: node record 0 (GUID 0x0000000000100006): node type 9"},
		{"port 0 of a CA", func(b []byte) []byte { b[portKey0+8] = 0; return b }, "offset 28: invalid ibnetdiscover cache: node record 0 (GUID 0x0000000000100006): port key 0x0000000000100007 port 0: a CA has no port 0"},
		// A link to a port the file lacks is left out (#1767), and the
		// far end's link is then one-sided.
		{"link to a missing port", func(b []byte) []byte { le.PutUint64(b[keyed+86:], 0xbeef); return b }, "which does not link back"},
		{"link not back", func(b []byte) []byte { b[keyed+94] = 8; return b }, "which does not link back"},
		{"record of another node", func(b []byte) []byte { le.PutUint64(b[keyed+77:], 0x200000); return b }, "names node 0x0000000000200000, claimed by node 0x0000000000100006"},
		{"duplicate port record", func(b []byte) []byte { copy(b[ports:ports+9], b[ports+PortLen:ports+PortLen+9]); return b }, "port record 1 (GUID 0x0000000000200001 port 8): the key of port record 0 again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := tc.edit(bytes.Clone(b))
			f, err := Decode("bad.cache", bad)
			if err == nil {
				_, err = f.Fabric("bad.cache")
			}
			if err == nil || !errors.Is(err, ErrFormat) || !strings.HasPrefix(err.Error(), "bad.cache: offset ") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v\nwant %q", err, tc.want)
			}
		})
	}
}

// TestWriteRead: Write replaces a file (mode 0644) and Read reads it
// back; Read refuses what is not a regular file.
func TestWriteRead(t *testing.T) {
	c := decodeC(t)
	p := filepath.Join(t.TempDir(), "x.cache")
	if err := os.WriteFile(p, []byte("old and longer than nothing"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(p); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm()&^0o022 != 0o644&^0o022 {
		t.Fatalf("stat %v, %v", st, err)
	}
	back, err := Read(p)
	if err != nil {
		t.Fatal(err)
	}
	if back.FromNode != c.FromNode || len(back.Ports) != len(c.Ports) {
		t.Fatal("read back differs")
	}
	if _, err := Read(filepath.Dir(p)); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory: %v", err)
	}
	if _, err := Read(filepath.Join(t.TempDir(), "none")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}

// decodeC is the C cache of testdata, decoded.
func decodeC(t *testing.T) *File {
	t.Helper()
	c, err := Decode(cFile, readC(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestWriteNeverRemovesADirectory: ibnd_cache_fabric unlink(2)s the old
// file, which a directory refuses (EISDIR); os.Remove rmdir'd an empty
// directory and wrote the cache in its place.
func TestWriteNeverRemovesADirectory(t *testing.T) {
	c := decodeC(t)
	dir := filepath.Join(t.TempDir(), "empty")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := c.Write(dir); err == nil || !strings.Contains(err.Error(), "error removing") || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("Write(an empty directory): %v, want error removing ...: is a directory", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Errorf("the directory is gone: %v, %v", fi, err)
	}
}

// TestWriteNeverRemovesADevice: a FIFO (as a device or a socket) given
// as the cache is refused, not unlinked and replaced: run as root,
// `ibnetdiscover --cache /dev/null` put a regular file in /dev/null's
// place (C's ibnd_cache_fabric would unlink it too).
func TestWriteNeverRemovesADevice(t *testing.T) {
	c := decodeC(t)
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if err := c.Write(fifo); err == nil || !strings.Contains(err.Error(), "error removing '"+fifo+"': not a regular file but a named pipe") {
		t.Errorf("Write(a FIFO): %v, want error removing ...: not a regular file but a named pipe", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO was replaced: %v, %v", fi, err)
	}
}

// TestIncompleteCache: a cache as libibnetdisc wrote it before rdma-core
// #1767 where a port's PortInfo timed out (its node's key and its peer's
// link kept, its record not written) loads as current libibnetdisc loads
// it: without that port, the peer unlinked (ibnetdisc_cache.c's
// _fill_port and _rebuild_ports skip what they cannot find).
func TestIncompleteCache(t *testing.T) {
	c := decodeC(t)
	k := c.Nodes[0].Ports[0] // a CA's port, linked to a switch
	c.Ports = slices.DeleteFunc(c.Ports, func(p Port) bool { return p.GUID == k.GUID && p.Num == k.Num })
	var fab *topo.Fabric
	b, err := c.Encode()
	if err == nil {
		c, err = Decode("incomplete.cache", b)
	}
	if err == nil {
		fab, err = c.Fabric("incomplete.cache")
	}
	if err != nil {
		t.Fatalf("the incomplete cache does not load: %v", err)
	}
	for _, n := range fab.Nodes {
		for _, p := range n.Ports {
			if p == nil {
				continue
			}
			if p.GUID == k.GUID && p.Num == int(k.Num) {
				t.Errorf("%v loaded without its record", p)
			}
			if p.Remote != nil && p.Remote.GUID == k.GUID {
				t.Errorf("%v links to the port without a record", p)
			}
		}
	}
	if len(fab.Nodes) != len(c.Nodes) { // c is the file as decoded again
		t.Errorf("%d nodes, want the file's %d", len(fab.Nodes), len(c.Nodes))
	}
}

// TestLoadedPortOrder: libibnetdisc's file comes back in its own order
// (every bucket's ports were found in node order); ports of two nodes
// that share a hash bucket come back node by node whatever the file's
// order (X's port 1, GUID 0x100011, and Y's 0x10009a: 137 apart), and a
// port no node names, or one past its node's port count, is dropped.
func TestLoadedPortOrder(t *testing.T) {
	f := decodeC(t)
	if got := f.LoadedPortOrder(); len(got) != len(f.Ports) || !slices.IsSorted(got) {
		t.Errorf("libibnetdisc's file: order %v, want its own", got)
	}
	x, y := PortKey{GUID: 0x100011, Num: 1}, PortKey{GUID: 0x10009a, Num: 1}
	if hashGUID(x.GUID) != hashGUID(y.GUID) {
		t.Fatalf("buckets %d and %d", hashGUID(x.GUID), hashGUID(y.GUID))
	}
	g := &File{
		Nodes: []Node{{GUID: 0x100010, Type: 1, NumPorts: 2, Ports: []PortKey{x, {GUID: 0x100012, Num: 2}}},
			{GUID: 0x100099, Type: 1, NumPorts: 1, Ports: []PortKey{y, {GUID: 0x10009b, Num: 2}}}},
		Ports: []Port{{GUID: y.GUID, Num: 1}, {GUID: x.GUID, Num: 1}, {GUID: 0x100012, Num: 2}, {GUID: 0x10009b, Num: 2}, {GUID: 0x7, Num: 1}},
	}
	// X is the file's first node: the load reaches it last, so its port
	// heads the bucket; Y's port 2 is past its port count, 0x7 nobody's.
	got := g.LoadedPortOrder()
	if len(got) != 3 || !slices.Contains(got, 2) || slices.Contains(got, 3) || slices.Contains(got, 4) {
		t.Fatalf("order %v: want records 0, 1, 2", got)
	}
	if i, j := slices.Index(got, 1), slices.Index(got, 0); i > j {
		t.Errorf("order %v: X's port 1 (record 1) after Y's (record 0)", got)
	}
}
