package sim

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/internal/leaktest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// topology returns the path of a shipped topology file.
func topology(name string) string { return filepath.Join("..", "tests", "topologies", name) }

func mustLoad(t testing.TB, name string, opts *Options) *Fabric {
	t.Helper()
	f, err := Load(topology(name), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func mustNew(t testing.TB, text string, opts *Options) *Fabric {
	t.Helper()
	tf, err := topo.Parse("test.net", strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	f, err := New(tf, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// collector is a receiver keeping copies of what is delivered to a raw
// wire.
type collector struct {
	mu   sync.Mutex
	pkts []fabric.Packet
}

func (c *collector) Deliver(p *fabric.Packet) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := *p
	q.Data = append([]byte(nil), p.Data...)
	c.pkts = append(c.pkts, q)
}

func (c *collector) take() []fabric.Packet {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.pkts
	c.pkts = nil
	return p
}

// raw is a test client attached to a port without a mux: what it
// transmits goes into the fabric as is, and everything delivered to the
// port lands in its collector.
type raw struct {
	t testing.TB
	w *wire
	c *collector
}

func attachRaw(t testing.TB, f *Fabric, node string, num int) *raw {
	t.Helper()
	return attachKindRaw(t, f, node, num, wirePort)
}

// attachKindRaw is attachRaw with a wire of kind k: for a planarized
// CA's devices, the GSI device at port 1.
func attachKindRaw(t testing.TB, f *Fabric, node string, num int, k wireKind) *raw {
	t.Helper()
	f.mu.Lock()
	p, err := f.portLocked("attach", node, num, false)
	if err != nil {
		f.mu.Unlock()
		t.Fatal(err)
	}
	att := f.attachmentsOf(p)
	c := &collector{}
	w := &wire{f: f, p: p, rx: c, kind: k}
	att.wires = append(att.wires, w)
	f.open = append(f.open, w)
	f.mu.Unlock()
	return &raw{t: t, w: w, c: c}
}

// send transmits b to lid and returns what came back to the port.
func (r *raw) send(lid uint16, b []byte) []fabric.Packet {
	r.t.Helper()
	if err := r.w.Transmit(&fabric.Packet{Addr: fabric.Addr{LID: lid}, Data: b}); err != nil {
		r.t.Fatal(err)
	}
	return r.c.take()
}

// one transmits b and returns the single MAD that came back, or nil.
func (r *raw) one(lid uint16, b []byte) []byte {
	r.t.Helper()
	got := r.send(lid, b)
	switch len(got) {
	case 0:
		return nil
	case 1:
		return got[0].Data
	}
	r.t.Fatalf("%d MADs came back", len(got))
	return nil
}

var tidSeq uint64

func drReq(t testing.TB, method uint8, attr uint16, mod uint32, path ...uint8) []byte {
	t.Helper()
	tidSeq++
	b, err := smp.NewRequest(make([]byte, mad.Size), method, tidSeq, attr, mod, path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dr sends a DR SMP Get along path (smpquery -D form: path[0] is the
// local port) and returns the response, or nil.
func (r *raw) dr(attr uint16, mod uint32, path ...uint8) []byte {
	r.t.Helper()
	return r.one(fabric.PermissiveLID, drReq(r.t, mad.MethodGet, attr, mod, path...))
}

// lid sends a LID-routed SMP Get.
func (r *raw) lid(lid uint16, attr uint16, mod uint32) []byte {
	r.t.Helper()
	return r.one(lid, drReq(r.t, mad.MethodGet, attr, mod))
}

// set sends a LID-routed SMP Set with data.
func (r *raw) set(lid uint16, attr uint16, mod uint32, data []byte) []byte {
	r.t.Helper()
	b := drReq(r.t, mad.MethodSet, attr, mod)
	copy(smp.Data(b), data)
	return r.one(lid, b)
}

func perfReq(t testing.TB, method uint8, attr uint16, port uint8) []byte {
	t.Helper()
	tidSeq++
	b, err := perf.NewRequest(make([]byte, mad.Size), method, tidSeq, attr, port)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ok checks a response is a GetResp with status 0 and returns its data.
func ok(t testing.TB, resp []byte) []byte {
	t.Helper()
	if resp == nil {
		t.Fatal("no response")
	}
	if m := mad.MethodOf(resp); m != mad.MethodGetResp {
		t.Fatalf("method %s, want GetResp", mad.MethodName(m))
	}
	if st := smp.Status(resp); st != 0 {
		t.Fatalf("status %s", mad.StatusText(st))
	}
	if smp.IsDR(resp) {
		return smp.Data(resp)
	}
	if mad.MgmtClassOf(resp) == mad.ClassPerf {
		return perf.Data(resp)
	}
	return smp.Data(resp)
}

func status(t testing.TB, resp []byte) uint16 {
	t.Helper()
	if resp == nil {
		t.Fatal("no response")
	}
	return smp.Status(resp)
}

func nodeInfo(t testing.TB, d []byte) smp.NodeInfo {
	t.Helper()
	var ni smp.NodeInfo
	if err := ni.UnmarshalBinary(d); err != nil {
		t.Fatal(err)
	}
	return ni
}

func portInfo(t testing.TB, d []byte) smp.PortInfo {
	t.Helper()
	var pi smp.PortInfo
	if err := pi.UnmarshalBinary(d); err != nil {
		t.Fatal(err)
	}
	return pi
}

func switchInfo(t testing.TB, d []byte) smp.SwitchInfo {
	t.Helper()
	var si smp.SwitchInfo
	if err := si.UnmarshalBinary(d); err != nil {
		t.Fatal(err)
	}
	return si
}

func lidOf(t testing.TB, f *Fabric, node string, num int) uint16 {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	p, err := f.portLocked("lid", node, num, true)
	if err != nil {
		t.Fatal(err)
	}
	return p.lid
}
