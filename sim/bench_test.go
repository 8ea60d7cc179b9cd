package sim

import (
	"math"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// counting is a receiver that only counts deliveries and remembers the
// last one's status.
type counting struct {
	n      int
	status uint16
}

func (c *counting) Deliver(p *fabric.Packet) {
	c.n++
	c.status = smp.Status(p.Data)
}

// BenchmarkSMPRoundTrip measures one directed-route NodeInfo Get two hops
// away (node001 -> leaf01 -> spine01 and back) at the wire level: the
// fabric's forwarding and SMA path without a mux.
func BenchmarkSMPRoundTrip(b *testing.B) {
	f, err := Default(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	r := attachRaw(b, f, "node001", 1)
	c := &counting{}
	r.w.rx = c
	f.mu.Lock()
	r.w.p.att.wires[0].rx = c
	f.mu.Unlock()
	req := drReq(b, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 1, 33)
	pkt := &fabric.Packet{Addr: fabric.Addr{LID: fabric.PermissiveLID}, Data: req}
	b.ReportAllocs()
	start := time.Now()
	for b.Loop() {
		if err := r.w.Transmit(pkt); err != nil {
			b.Fatal(err)
		}
	}
	el := time.Since(start)
	if c.n != b.N || c.status != 0 {
		b.Fatalf("%d responses for %d requests, last status %#x", c.n, b.N, c.status)
	}
	b.ReportMetric(float64(b.N)/el.Seconds(), "MADs/s")
}

// BenchmarkTransportRoundTrip measures one SMP round trip through the Go
// API: Send (with a timeout, so the mux tracks it) and Recv of the
// response, DR NodeInfo two hops away.
func BenchmarkTransportRoundTrip(b *testing.B) {
	f, err := Default(nil)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	tr, err := f.Attach("node001", 1)
	if err != nil {
		b.Fatal(err)
	}
	ctx := b.Context()
	agent, err := tr.Register(ctx, fabric.Agent{Class: mad.ClassSubnDR, Version: 1})
	if err != nil {
		b.Fatal(err)
	}
	req := drReq(b, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 1, 33)
	out := &fabric.Packet{Agent: agent, Timeout: time.Second, Addr: fabric.Addr{LID: fabric.PermissiveLID}, Data: req}
	var in fabric.Packet
	in.Data = make([]byte, 0, mad.Size)
	b.ReportAllocs()
	start := time.Now()
	tid := uint64(0)
	for b.Loop() {
		tid++
		mad.SetTID(req, tid)
		if err := tr.Send(ctx, out); err != nil {
			b.Fatal(err)
		}
		if err := tr.Recv(ctx, &in); err != nil {
			b.Fatal(err)
		}
		if in.Status != 0 {
			b.Fatalf("status %d", in.Status)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "MADs/s")
}

// discover walks the whole fabric from one CA port by directed route, as
// a discovery engine would: NodeInfo through every switch port (and the
// NodeDescription of every new node). It returns the nodes found and the
// SMPs sent.
func discover(tb testing.TB, r *raw, c *counting) (nodes, mads int) {
	tb.Helper()
	type item struct {
		path []uint8
		ni   smp.NodeInfo
	}
	buf := make([]byte, mad.Size)
	resp := make([]byte, mad.Size)
	get := func(attr uint16, path []uint8) []byte {
		b, err := smp.NewGet(buf, uint64(mads), attr, 0, path)
		if err != nil {
			tb.Fatal(err)
		}
		mads++
		if err := r.w.Transmit(&fabric.Packet{Addr: fabric.Addr{LID: fabric.PermissiveLID}, Data: b}); err != nil {
			tb.Fatal(err)
		}
		got := r.c.take()
		if len(got) != 1 {
			return nil
		}
		copy(resp, got[0].Data)
		return resp
	}
	seen := map[uint64]bool{}
	var queue []item
	visit := func(path []uint8) {
		b := get(smp.AttrNodeInfo, path)
		if b == nil {
			return
		}
		var ni smp.NodeInfo
		if err := ni.UnmarshalBinary(smp.Data(b)); err != nil {
			tb.Fatal(err)
		}
		if seen[ni.NodeGUID] {
			return
		}
		seen[ni.NodeGUID] = true
		get(smp.AttrNodeDescription, path)
		queue = append(queue, item{path, ni})
	}
	visit([]uint8{0})
	for len(queue) > 0 {
		it := queue[0]
		queue = queue[1:]
		if it.ni.NodeType != smp.NodeTypeSwitch && len(it.path) > 1 {
			continue
		}
		for p := uint8(1); p <= it.ni.NumPorts; p++ {
			if it.ni.NodeType != smp.NodeTypeSwitch && p != it.ni.LocalPortNum {
				continue
			}
			path := append(append([]uint8(nil), it.path...), p)
			if len(it.path) == 1 && it.ni.NodeType != smp.NodeTypeSwitch {
				path = []uint8{0, p}
			}
			visit(path)
		}
	}
	return len(seen), mads
}

func TestDiscoverFatTree2000(t *testing.T) {
	f := mustLoad(t, "fattree-2000.net", &Options{Bare: true})
	r := attachRaw(t, f, "h000-00", 1)
	start := time.Now()
	nodes, mads := discover(t, r, nil)
	t.Logf("discovered %d nodes with %d SMPs in %v (through raw wires, collecting copies)", nodes, mads, time.Since(start))
	if nodes != 2000 {
		t.Errorf("discovered %d nodes, want 2000", nodes)
	}
}

func BenchmarkDiscoverFatTree2000(b *testing.B) {
	f := mustLoad(b, "fattree-2000.net", nil)
	r := attachRaw(b, f, "h000-00", 1)
	var mads int
	for b.Loop() {
		_, mads = discover(b, r, nil)
	}
	b.ReportMetric(float64(mads), "SMPs/op")
}

func BenchmarkLoadFatTree2000(b *testing.B) {
	t, err := topo.ParseFile(topology("fattree-2000.net"))
	if err != nil {
		b.Fatal(err)
	}
	benchLoad(b, func() (*Fabric, error) { return New(t, nil) })
}

// benchLoad times load, closing what it returns.
func benchLoad(b *testing.B, load func() (*Fabric, error)) {
	b.ReportAllocs()
	for b.Loop() {
		f, err := load()
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// TestMemoryPerNode checks the simulator's state stays under 2 KB per
// node on the 2000-node fat tree.
func TestMemoryPerNode(t *testing.T) {
	if testing.Short() {
		t.Skip("measures the heap")
	}
	tf, err := topo.ParseFile(topology("fattree-2000.net"))
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, err := New(tf, nil)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := float64(after.HeapAlloc-before.HeapAlloc) / float64(len(tf.Nodes))
	runtime.KeepAlive(f)
	f.Close()
	t.Logf("%.0f bytes per node", per)
	if per > 2048 {
		t.Errorf("%.0f bytes per node, want < 2048", per)
	}
}

// TestLoadAllocations: loading the planarized 2,000-node XDR tree
// allocates about 10,800 times and fattree-2000 about 6,700 (session 12;
// 47,242 and 20,625 before, most of them a string for each line of the
// file); the bounds leave half as much again before a change that
// allocates per line or per port is caught. Counts, not time: the same on
// a loaded machine.
func TestLoadAllocations(t *testing.T) {
	if testing.Short() {
		t.Skip("loads two 2,000-node trees")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		spec fattree.Spec
		max  float64
	}{
		{"fattree-2000", fattree.Nodes2000, 10_000},
		{"planes-xdr-2000x4", fattree.Spec{Leaves: 64, Spines: 16, Hosts: 30, LinksPerSpine: 1, XDR: true, Planes: 4}, 16_000},
	} {
		path := filepath.Join(dir, c.name+".net")
		if err := c.spec.WriteFile(path); err != nil {
			t.Fatal(err)
		}
		// The least of three counts: AllocsPerRun counts the process's
		// allocations, and a goroutine another test left ending could
		// add to one of them.
		n := math.Inf(1)
		for range 3 {
			n = min(n, testing.AllocsPerRun(1, func() {
				f, err := Load(path, nil)
				if err != nil {
					t.Fatal(err)
				}
				f.Close()
			}))
		}
		t.Logf("%s: %.0f allocations a load", c.name, n)
		if n > c.max {
			t.Errorf("%s: %.0f allocations a load, want at most %.0f", c.name, n, c.max)
		}
	}
}

// BenchmarkLoadFile2000 is what each command on a simulated fabric pays
// before its first MAD: Load (parse the file, build the simulator,
// configure LIDs and routes) of today's 2,000-node fat tree, its XDR
// twin and the planarized XDR tree of four such planes (2,240 nodes,
// four times the links).
func BenchmarkLoadFile2000(b *testing.B) {
	dir := b.TempDir()
	for _, fb := range []struct {
		name string
		spec fattree.Spec
	}{
		{"fattree-2000", fattree.Nodes2000},
		{"fattree-xdr-2000", fattree.Spec{Leaves: 64, Spines: 16, Hosts: 30, LinksPerSpine: 1, XDR: true}},
		{"planes-xdr-2000x4", fattree.Spec{Leaves: 64, Spines: 16, Hosts: 30, LinksPerSpine: 1, XDR: true, Planes: 4}},
	} {
		path := filepath.Join(dir, fb.name+".net")
		if err := fb.spec.WriteFile(path); err != nil {
			b.Fatal(err)
		}
		b.Run(fb.name, func(b *testing.B) {
			benchLoad(b, func() (*Fabric, error) { return Load(path, nil) })
		})
	}
}
