package sim

import (
	"math"
	"testing"
	"time"
)

// TestTraffic: with a background load on a hand-moved clock, the data,
// packet and XmitWait counters of an active link move by exactly what the
// load gives over the time passed (4xSDR: 1e9 bytes/s), the receiving end
// counting what the sending end sent; reading often or once gives the
// same totals; a link taken down moves nothing; SetTraffic(nil) stops it.
func TestTraffic(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	clock := time.Unix(1_700_000_000, 0)
	now := func() time.Time { return clock }
	if err := f.SetTraffic(&Traffic{Load: 0.5, Now: now}); err != nil {
		t.Fatal(err)
	}
	get := func(node string, port int, name string) uint64 {
		t.Helper()
		v, err := f.Counter(node, port, name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	ext := func(node string, port int, name string) uint64 {
		t.Helper()
		f.mu.Lock()
		defer f.mu.Unlock()
		p, err := f.portLocked("test", node, port, true)
		if err != nil {
			t.Fatal(err)
		}
		f.accrueLocked(p)
		return p.pc.pce[counterIndex(pceNames[:], name)]
	}
	f.mu.Lock()
	p3 := f.byID["Switch1"].ports[3]
	l3, lr := f.traffic.load(p3), f.traffic.load(p3.remote)
	f.mu.Unlock()
	if l3 < 0.25 || l3 > 0.75 || lr < 0.25 || lr > 0.75 {
		t.Fatalf("loads %v %v, want within 0.25..0.75", l3, lr)
	}
	// 10 s in 1000 steps, read each time, against one read after 10 s
	// at the other end's counters (Switch2 port 3 receives what Switch1
	// port 3 sends).
	for range 1000 {
		clock = clock.Add(10 * time.Millisecond)
		get("Switch1", 3, "PortXmitData")
	}
	wantWords := uint64(math.Floor(l3 * 1e9 / 4 * 10))
	if v := ext("Switch1", 3, "PortXmitData"); v != wantWords {
		t.Errorf("Switch1 port 3 PortXmitData (ext) %d words, want %d", v, wantWords)
	}
	if v := ext("Switch2", 3, "PortRcvData"); v != wantWords {
		t.Errorf("Switch2 port 3 PortRcvData (ext) %d words, want Switch1's %d", v, wantWords)
	}
	if v := ext("Switch2", 3, "PortXmitData"); v != uint64(math.Floor(lr*1e9/4*10)) {
		t.Errorf("Switch2 port 3 PortXmitData %d, want %d", v, uint64(math.Floor(lr*1e9/4*10)))
	}
	pkts := uint64(math.Floor(l3 * 1e9 / 2048 * 10))
	mc := uint64(math.Floor(l3 * 1e9 / 2048 / 64 * 10))
	if v := ext("Switch1", 3, "PortXmitPkts"); v != pkts {
		t.Errorf("PortXmitPkts %d, want %d", v, pkts)
	}
	if u, m := ext("Switch1", 3, "PortUnicastXmitPkts"), ext("Switch1", 3, "PortMulticastXmitPkts"); m != mc || u+m != pkts {
		t.Errorf("unicast %d multicast %d, want %d and %d", u, m, pkts-mc, mc)
	}
	// XmitWait: load^16 of 10 s in 4 ns ticks.
	if v, want := get("Switch1", 3, "PortXmitWait"), uint64(math.Floor(math.Pow(l3, 16)*2e9/8*10)); v != want {
		t.Errorf("PortXmitWait %d, want %d", v, want)
	}
	// The 32-bit PortCounters data counter: the same words (below 2^32).
	if v := get("Switch1", 3, "PortXmitData"); v != wantWords {
		t.Errorf("PortCounters PortXmitData %d, want %d", v, wantWords)
	}
	// Down: nothing moves; up again: it does.
	if err := f.SetLink("Switch1", 3, false); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(10 * time.Second)
	if v := ext("Switch1", 3, "PortXmitData"); v != wantWords {
		t.Errorf("down link: PortXmitData %d, want still %d", v, wantWords)
	}
	if err := f.SetLink("Switch1", 3, true); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(time.Second)
	if v := ext("Switch1", 3, "PortXmitData"); v <= wantWords {
		t.Errorf("link up again: PortXmitData %d, want above %d", v, wantWords)
	}
	// Stopped.
	if err := f.SetTraffic(nil); err != nil {
		t.Fatal(err)
	}
	v0 := ext("Switch1", 3, "PortXmitData")
	clock = clock.Add(time.Hour)
	if v := ext("Switch1", 3, "PortXmitData"); v != v0 {
		t.Errorf("stopped: PortXmitData %d, want %d", v, v0)
	}
	// An unlinked port never counts.
	if v := get("Switch1", 4, "PortXmitData"); v != 0 {
		t.Errorf("unlinked port: %d", v)
	}
}

// TestTrafficErrors: a few ports get symbol errors at ErrorRate, the same
// ones each time; a bad load is refused.
func TestTrafficErrors(t *testing.T) {
	f := mustLoad(t, "fattree-2000.net", nil)
	clock := time.Unix(1_700_000_000, 0)
	if err := f.SetTraffic(&Traffic{Load: 0.3, ErrorRate: 2, Now: func() time.Time { return clock }}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(10 * time.Second)
	f.mu.Lock()
	var with, linked int
	for _, n := range f.nodes {
		for _, p := range n.ports {
			if p == nil || p.remote == nil || p.state != 4 {
				continue
			}
			linked++
			f.accrueLocked(p)
			switch v := p.pc.pc[pcSymbolError]; v {
			case 0:
			case 20:
				with++
			default:
				t.Errorf("%s: %d symbol errors, want 0 or 20", p, v)
			}
		}
	}
	f.mu.Unlock()
	if with == 0 || with > linked/10 {
		t.Errorf("%d of %d linked ports with symbol errors, want a few", with, linked)
	}
	for _, bad := range []*Traffic{{Load: -0.1}, {Load: 1.5}, {Load: math.NaN()}, {Load: 0.5, ErrorRate: -1}} {
		if err := f.SetTraffic(bad); err == nil {
			t.Errorf("SetTraffic(%+v) accepted", *bad)
		}
	}
}
