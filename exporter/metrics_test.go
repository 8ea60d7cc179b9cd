package exporter

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

// series indexes a family's series by guid:port (or by the labels named).
func series(mf *dto.MetricFamily, keys ...string) map[string]*dto.Metric {
	if len(keys) == 0 {
		keys = []string{"guid", "port"}
	}
	out := map[string]*dto.Metric{}
	for _, m := range mf.GetMetric() {
		l := labels(m)
		var k []string
		for _, n := range keys {
			k = append(k, l[n])
		}
		out[strings.Join(k, ":")] = m
	}
	return out
}

// TestPortStateSeries: every port of every switch (linked or not) has its
// PortState and PortPhysicalState as discovery read them; active ports
// their width in lanes, speed and rate; down ports none of those.
func TestPortStateSeries(t *testing.T) {
	e, _ := simExporter(t, net2sw, nil)
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	mfs := gather(t, e)
	state := series(mfs["infiniband_switch_port_state"])
	phys := series(mfs["infiniband_switch_port_physical_state"])
	width := series(mfs["infiniband_switch_port_link_width_lanes"])
	rate := series(mfs["infiniband_switch_port_rate_bytes_per_second"])
	speed := series(mfs["infiniband_switch_port_link_speed_info"])
	nrate := series(mfs["infiniband_switch_rate_bytes_per_second"], "guid")
	raw := series(mfs["infiniband_switch_port_raw_rate_bytes_per_second"])
	nraw := series(mfs["infiniband_switch_raw_rate_bytes_per_second"], "guid")
	active, down := 0, 0
	for _, n := range s.Switches {
		best, bestRaw := 0.0, 0.0
		for _, p := range n.Ports[1:] {
			k := hexGUID(n.GUID) + ":" + itoa(p.Num)
			if state[k] == nil || phys[k] == nil {
				t.Errorf("%s port %d: no state series", n.Desc, p.Num)
				continue
			}
			if value(state[k]) != float64(p.State) || value(phys[k]) != float64(p.PhysState) {
				t.Errorf("%s port %d: state %v phys %v, discovery read %d %d", n.Desc, p.Num, value(state[k]), value(phys[k]), p.State, p.PhysState)
			}
			if p.Remote == nil {
				down++
				if p.State != smp.PortStateDown || width[k] != nil || rate[k] != nil || speed[k] != nil || raw[k] != nil {
					t.Errorf("%s port %d unlinked: state %d, width/rate/speed/raw series %v %v %v %v", n.Desc, p.Num, p.State, width[k], rate[k], speed[k], raw[k])
				}
				continue
			}
			active++
			if p.State != smp.PortStateActive || p.PhysState != smp.PhysStateLinkUp {
				t.Errorf("%s port %d linked: state %d phys %d", n.Desc, p.Num, p.State, p.PhysState)
			}
			l := smp.WidthLanes(p.WidthActive)
			r := float64(l) * laneDataRate(p) / 8
			if l == 0 || width[k] == nil || value(width[k]) != float64(l) || rate[k] == nil || value(rate[k]) != r {
				t.Errorf("%s port %d: width %v rate %v, want %d lanes, %v B/s", n.Desc, p.Num, width[k], rate[k], l, r)
			}
			sp := smp.LinkSpeedText(p.SpeedActive, p.SpeedExtActive)
			if m := series(mfs["infiniband_switch_port_link_speed_info"], "guid", "port", "speed")[k+":"+sp]; m == nil {
				t.Errorf("%s port %d: no speed series %q", n.Desc, p.Num, sp)
			}
			rr := float64(l) * rawLaneRates[sp] / 8
			if rr == 0 || raw[k] == nil || value(raw[k]) != rr {
				t.Errorf("%s port %d: raw rate %v, want %v B/s", n.Desc, p.Num, raw[k], rr)
			}
			best, bestRaw = max(best, r), max(bestRaw, rr)
		}
		if m := nrate[hexGUID(n.GUID)]; m == nil || value(m) != best {
			t.Errorf("%s: rate_bytes_per_second %v, want %v", n.Desc, m, best)
		}
		if m := nraw[hexGUID(n.GUID)]; m == nil || value(m) != bestRaw {
			t.Errorf("%s: raw_rate_bytes_per_second %v, want %v", n.Desc, m, bestRaw)
		}
	}
	if active != 8 || down != 8 {
		t.Errorf("%d active and %d down switch ports, want 8 and 8", active, down)
	}
	// 4x SDR (the simulator's default): 4 lanes x 2 Gb/s = 1 GB/s, as
	// treydock/infiniband_exporter computes it from ibnetdiscover's 4xSDR.
	sw1 := s.Switches[0]
	if m := rate[hexGUID(sw1.GUID)+":1"]; m == nil || value(m) != 1e9 {
		t.Errorf("Switch port 1 rate %v, want 1e9 (4xSDR)", m)
	}
	// Its raw rate: 4 lanes x 2.5 Gb/s signalling = 1.25 GB/s.
	if m := raw[hexGUID(sw1.GUID)+":1"]; m == nil || value(m) != 1.25e9 {
		t.Errorf("Switch port 1 raw rate %v, want 1.25e9 (4xSDR)", m)
	}
}

// TestLaneRates: the lane data rates and symbol times of each speed.
func TestLaneRates(t *testing.T) {
	for _, c := range []struct {
		speed, ext uint8
		rate       float64 // Gb/s
		name       string
		raw        float64 // Gb/s, treydock/infiniband_exporter 0.10.0's raw lane rate (XDR: see rawLaneRates)
	}{
		{1, 0, 2, "SDR", 2.5}, {2, 0, 4, "DDR", 5}, {4, 0, 8, "QDR", 10},
		{4, 1, 14.0625 * 64 / 66, "FDR", 14.0625}, {4, 2, 25, "EDR", 25.78125}, {4, 4, 50, "HDR", 50}, {4, 8, 100, "NDR", 100},
		{4, smp.ExtSpeedXDR, 200, "XDR", 200},
		{0, 0, 0, "", 0}, {7, 0, 0, "", 0}, {1, 3, 0, "", 0},
	} {
		p := &topo.Port{SpeedActive: c.speed, SpeedExtActive: c.ext, WidthActive: 2}
		if r := laneDataRate(p); math.Abs(r-c.rate*1e9) > 1 {
			t.Errorf("speed %d ext %d: lane rate %v, want %v Gb/s", c.speed, c.ext, r, c.rate)
		}
		if n := speedText(p); n != c.name {
			t.Errorf("speed %d ext %d: %q, want %q", c.speed, c.ext, n, c.name)
		}
		if c.rate != 0 && math.Abs(rateBytes(p)-4*c.rate*1e9/8) > 1 {
			t.Errorf("speed %d ext %d: 4x rate %v", c.speed, c.ext, rateBytes(p))
		}
		if r := rawRateBytes(p); r != 4*c.raw*1e9/8 {
			t.Errorf("speed %d ext %d: 4x raw rate %v, want %v", c.speed, c.ext, r, 4*c.raw*1e9/8)
		}
	}
	if st := symbolTime(&topo.Port{SpeedActive: 1}); math.Abs(st-4e-9) > 1e-18 {
		t.Errorf("SDR symbol time %v, want 4 ns", st)
	}
	for w, l := range map[uint8]int{1: 1, 2: 4, 4: 8, 8: 12, 16: 2, 0: 0, 3: 0} {
		if smp.WidthLanes(w) != l {
			t.Errorf("smp.WidthLanes(%d) = %d, want %d", w, smp.WidthLanes(w), l)
		}
	}
}

// TestXmitWaitRatio plants PortXmitWait values 10 s apart: the ratio is
// the growth times the tick over the interval, with the default tick (one
// symbol time) and with XmitWaitTick 8 (PortSamplesControl.Tick 7);
// none on the first sweep, after a reset, or at saturation.
func TestXmitWaitRatio(t *testing.T) {
	for _, tick := range []int{0, 8} {
		e, f := simExporter(t, net2sw, &Options{XmitWaitTick: tick})
		clock := time.Unix(1_700_000_000, 0)
		e.now = func() time.Time { return clock }
		set := func(v uint64) {
			t.Helper()
			if err := f.SetCounter("Switch1", 3, "PortXmitWait", v); err != nil {
				t.Fatal(err)
			}
		}
		ratio := func() (float64, bool) {
			t.Helper()
			m := series(gather(t, e)["infiniband_switch_port_transmit_wait_ratio"])
			s := e.Snapshot()
			k := hexGUID(s.Switches[0].GUID) + ":3"
			if s.Switches[0].Desc != "Switch1" {
				t.Fatalf("first switch %q", s.Switches[0].Desc)
			}
			if m[k] == nil {
				return 0, false
			}
			return value(m[k]), true
		}
		set(1000)
		if _, err := e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, ok := ratio(); ok {
			t.Error("a ratio after the first sweep")
		}
		// 4xSDR: 4 ns a symbol. 250,000,000 ticks of 4 ns (x tick) in 10 s.
		set(1000 + 250_000_000)
		clock = clock.Add(10 * time.Second)
		if _, err := e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		mult := float64(max(tick, 1))
		want := 250_000_000 * 4e-9 * mult / 10
		if r, ok := ratio(); !ok || math.Abs(r-want) > 1e-9 {
			t.Errorf("tick %d: ratio %v %v, want %v", tick, r, ok, want)
		}
		// A reset: no ratio.
		set(5)
		clock = clock.Add(10 * time.Second)
		if _, err := e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r, ok := ratio(); ok {
			t.Errorf("tick %d: ratio %v across a reset", tick, r)
		}
		// Saturated: no ratio.
		set(math.MaxUint32)
		clock = clock.Add(10 * time.Second)
		if _, err := e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		if r, ok := ratio(); ok {
			t.Errorf("tick %d: ratio %v of a saturated counter", tick, r)
		}
	}
}

// TestSaturatedCounters: a series per counter at the top of its width
// (16-bit SymbolErrorCounter, 4-bit LocalLinkIntegrityErrors, 32-bit
// PortXmitWait), none for one below it.
func TestSaturatedCounters(t *testing.T) {
	e, f := simExporter(t, net2sw, nil)
	for _, c := range []struct {
		node string
		port int
		name string
		v    uint64
	}{
		{"Switch1", 1, "SymbolErrorCounter", 0xFFFF},
		{"Switch1", 1, "PortXmitWait", 0xFFFFFFFF},
		{"Switch2", 3, "LocalLinkIntegrityErrors", 0xF},
		{"Switch2", 3, "PortRcvErrors", 0xFFFE},
		{"Switch2", 5, "LinkDownedCounter", 0xFF},
	} {
		if err := f.SetCounter(c.node, c.port, c.name, c.v); err != nil {
			t.Fatal(err)
		}
	}
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	names := map[uint64]string{}
	for _, n := range s.Switches {
		names[n.GUID] = n.Desc
	}
	got := map[string]bool{}
	for _, m := range gather(t, e)["infiniband_switch_port_counter_saturated"].GetMetric() {
		l := labels(m)
		if value(m) != 1 {
			t.Errorf("%v = %v, want 1", l, value(m))
		}
		got[names[parseGUID(t, l["guid"])]+":"+l["port"]+":"+l["counter"]] = true
	}
	want := map[string]bool{
		"Switch1:1:SymbolErrorCounter": true, "Switch1:1:PortXmitWait": true,
		"Switch2:3:LocalLinkIntegrityErrors": true, "Switch2:5:LinkDownedCounter": true,
	}
	if len(got) != len(want) {
		t.Errorf("saturated series %v, want %v", got, want)
	}
	for k := range want {
		if !got[k] {
			t.Errorf("no saturated series %s (got %v)", k, got)
		}
	}
	for _, ps := range s.Ports {
		if ps.Port.Node.Desc == "Switch1" && ps.Port.Num == 1 {
			if sat := ps.Saturated(); strings.Join(sat, ",") != "SymbolErrorCounter,PortXmitWait" {
				t.Errorf("Saturated() = %v", sat)
			}
		}
	}
}

// TestDetailCounters: PortRcvErrorDetails and PortXmitDiscardDetails are
// read for every linked port (the simulator, as ibsim, answers zeros),
// each field served under its name, with Options.Details only (as
// treydock's exporter, off by default); HCADetails asks them of CA ports.
func TestDetailCounters(t *testing.T) {
	e, _ := simExporter(t, net2sw, &Options{Details: true})
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	detail := []string{"local_physical_errors_total", "malformed_packet_errors_total", "buffer_overrun_errors_total",
		"dli_mapping_errors_total", "vl_mapping_errors_total", "looping_errors_total",
		"inactive_discards_total", "neighbor_mtu_discards_total", "sw_lifetime_limit_discards_total", "sw_hoq_lifetime_limit_discards_total"}
	mfs := gather(t, e)
	for _, name := range detail {
		if n := len(mfs["infiniband_switch_port_"+name].GetMetric()); n != len(s.Ports) {
			t.Errorf("%s: %d series, want %d", name, n, len(s.Ports))
		}
	}
	// Each field to its series: a snapshot with distinct values.
	c := *s
	c.Ports = append([]PortSample(nil), s.Ports...)
	c.Ports[0].RcvErr = perf.PortRcvErrorDetails{PortLocalPhysicalErrors: 1, PortMalformedPacketErrors: 2, PortBufferOverrunErrors: 3, PortDLIDMappingErrors: 4, PortVLMappingErrors: 5, PortLoopingErrors: 6}
	c.Ports[0].Discard = perf.PortXmitDiscardDetails{PortInactiveDiscards: 7, PortNeighborMTUDiscards: 8, PortSwLifetimeLimitDiscards: 9, PortSwHOQLifetimeLimitDiscards: 10}
	e.snap.Store(&c)
	mfs = gather(t, e)
	k := hexGUID(c.Ports[0].Port.Node.GUID) + ":" + itoa(c.Ports[0].Port.Num)
	for i, name := range detail {
		if m := series(mfs["infiniband_switch_port_"+name])[k]; m == nil || value(m) != float64(i+1) {
			t.Errorf("%s = %v, want %d", name, m, i+1)
		}
	}

	// By default none; with HCA and HCADetails, the CA ports' only; with
	// HCA and Details, the switch ports' only.
	for _, c := range []struct {
		opts     *Options
		sw, hcas bool
	}{
		{nil, false, false},
		{&Options{HCA: true, HCADetails: true}, false, true},
		{&Options{HCA: true, Details: true}, true, false},
	} {
		e2, _ := simExporter(t, net2sw, c.opts)
		s2, err := e2.Sweep(t.Context())
		if err != nil || s2.Errors != 0 {
			t.Fatalf("%+v: sweep: %v, %d errors", c.opts, err, s2.Errors)
		}
		mfs = gather(t, e2)
		for _, name := range detail {
			for _, k := range []struct {
				prefix string
				want   bool
			}{{"infiniband_switch_port_", c.sw}, {"infiniband_hca_port_", c.hcas}} {
				if got := mfs[k.prefix+name] != nil; got != k.want {
					t.Errorf("%+v: %s%s served: %v, want %v", c.opts, k.prefix, name, got, k.want)
				}
			}
		}
	}
}

// TestLinkInfo: one infiniband_link_info series per cable, both ends as
// labels, the switch end local.
func TestLinkInfo(t *testing.T) {
	e, _ := simExporter(t, net2sw, nil)
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, m := range gather(t, e)["infiniband_link_info"].GetMetric() {
		l := labels(m)
		k := l["local_name"] + ":" + l["local_port"] + ":" + l["local_type"] + "-" + l["remote_name"] + ":" + l["remote_port"] + ":" + l["remote_type"]
		if got[k] {
			t.Errorf("two series for %s", k)
		}
		got[k] = true
		ln, rn := s.Fabric.Node(parseGUID(t, l["local_guid"])), s.Fabric.Node(parseGUID(t, l["remote_guid"]))
		if ln == nil || rn == nil || ln.Desc != l["local_name"] || rn.Desc != l["remote_name"] {
			t.Errorf("%v: guids do not name the nodes", l)
		}
	}
	// 2sw2path4hca: 4 switch-CA cables and 2 between the switches.
	sw1, sw2 := s.Switches[0], s.Switches[1]
	a, b := sw1, sw2
	if a.GUID > b.GUID {
		a, b = b, a
	}
	want := []string{
		a.Desc + ":3:SW-" + b.Desc + ":3:SW", a.Desc + ":5:SW-" + b.Desc + ":5:SW",
		sw1.Desc + ":1:SW-" + sw1.Ports[1].Remote.Node.Desc + ":1:CA", sw1.Desc + ":2:SW-" + sw1.Ports[2].Remote.Node.Desc + ":1:CA",
		sw2.Desc + ":1:SW-" + sw2.Ports[1].Remote.Node.Desc + ":1:CA", sw2.Desc + ":2:SW-" + sw2.Ports[2].Remote.Node.Desc + ":1:CA",
	}
	if len(got) != len(want) {
		t.Errorf("%d link series, want %d: %v", len(got), len(want), got)
	}
	for _, k := range want {
		if !got[k] {
			t.Errorf("no link series %s (got %v)", k, got)
		}
	}
}

// TestHCAPorts: with Options.HCA the CA ports are swept too, served as
// infiniband_hca_* series (treydock/infiniband_exporter's names) with the
// hca collector's gauges; without it, none.
func TestHCAPorts(t *testing.T) {
	e, f := simExporter(t, net2sw, &Options{HCA: true, Details: true, HCADetails: true})
	if err := f.SetCounter("Hca2", 1, "SymbolErrorCounter", 9); err != nil {
		t.Fatal(err)
	}
	s, err := e.Sweep(t.Context())
	if err != nil || s.Errors != 0 {
		t.Fatalf("sweep: %v, %d errors", err, s.Errors)
	}
	if len(s.HCAs) != 4 || len(s.Ports) != 12 {
		t.Fatalf("%d HCAs, %d ports, want 4 and 8+4", len(s.HCAs), len(s.Ports))
	}
	mfs := gather(t, e)
	for _, name := range []string{"port_transmit_data_bytes_total", "port_symbol_error_total", "port_transmit_wait_total", "port_local_physical_errors_total"} {
		if n := len(mfs["infiniband_hca_"+name].GetMetric()); n != 4 {
			t.Errorf("infiniband_hca_%s: %d series, want 4", name, n)
		}
		if n := len(mfs["infiniband_switch_"+name].GetMetric()); n != 8 {
			t.Errorf("infiniband_switch_%s: %d series, want 8", name, n)
		}
	}
	hca2 := s.Fabric.Node(findGUID(t, s.Fabric, "Hca2"))
	if m := series(mfs["infiniband_hca_port_symbol_error_total"])[hexGUID(hca2.GUID)+":1"]; m == nil || value(m) != 9 {
		t.Errorf("Hca2 port 1 symbol errors %v, want 9", m)
	}
	info := series(mfs["infiniband_hca_info"], "guid", "hca", "lid")
	if info[hexGUID(hca2.GUID)+":Hca2:"+itoa(int(hca2.Ports[1].LID))] == nil {
		t.Errorf("no infiniband_hca_info for Hca2: %v", info)
	}
	up := series(mfs["infiniband_hca_uplink_info"])[hexGUID(hca2.GUID)+":1"]
	if l := labels(up); up == nil || l["uplink_type"] != "SW" || l["uplink"] != "Switch2" || l["hca"] != "Hca2" {
		t.Errorf("Hca2 uplink %v", l)
	}
	col := series(mfs["infiniband_exporter_collect_errors"], "collector")
	if col["hca"] == nil || col["switch"] == nil {
		t.Errorf("collect_errors collectors %v, want switch and hca", col)
	}
	// Without the flag: no hca series.
	e2, _ := simExporter(t, net2sw, nil)
	if _, err := e2.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	for name := range gather(t, e2) {
		if strings.HasPrefix(name, "infiniband_hca_") {
			t.Errorf("%s served without HCA", name)
		}
	}
}

// TestSimTraffic: under the simulator's background load, two sweeps 10 s
// apart (on one clock) see every linked switch port send at its load
// times its rate, and wait the fraction of the time the simulator gives
// it (sim.WaitFraction): the XmitWait ratio's formula checked against a
// known wait.
func TestSimTraffic(t *testing.T) {
	e, f := simExporter(t, net2sw, nil)
	clock := time.Unix(1_700_000_000, 0)
	now := func() time.Time { return clock }
	e.now = now
	if err := f.SetTraffic(&sim.Traffic{Load: 0.5, Now: now}); err != nil {
		t.Fatal(err)
	}
	s1, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(10 * time.Second)
	s2, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for i := range s2.Ports {
		p1, p2 := &s1.Ports[i], &s2.Ports[i]
		n := p2.Port.Node
		l, err := f.TrafficLoad(n.Desc, p2.Port.Num)
		if err != nil {
			t.Fatal(err)
		}
		if l < 0.25 || l > 0.75 {
			t.Errorf("%s port %d: load %v", n.Desc, p2.Port.Num, l)
		}
		bytes := float64(p2.Ext.PortXmitData-p1.Ext.PortXmitData) * 4 / 10
		if want := l * rateBytes(p2.Port); math.Abs(bytes-want) > want*1e-6+1e4 {
			t.Errorf("%s port %d: %v B/s, want %v", n.Desc, p2.Port.Num, bytes, want)
		}
		if w := sim.WaitFraction(l); !p2.XmitWaitOK || math.Abs(p2.XmitWaitRatio-w) > w*1e-6+1e-8 {
			t.Errorf("%s port %d: XmitWait ratio %v %v, want %v", n.Desc, p2.Port.Num, p2.XmitWaitRatio, p2.XmitWaitOK, w)
		}
	}
}

// TestDemoDay (issue 35): the default fabric under the exporter's demo
// load (--sim-traffic 0.3, its symbol errors too) runs 24 simulated hours,
// swept every 10 simulated minutes on one clock, without a counter the
// exporter reports saturated (PortXmitWait filled within 2.5 minutes when
// the simulator waited load²/4 of the time); at full load the congested
// links' PortXmitWait does fill, and is reported so.
func TestDemoDay(t *testing.T) {
	for _, c := range []struct {
		load      float64
		saturated bool
	}{{0.3, false}, {1, true}} {
		e, f := simExporter(t, "../sim/default.net", &Options{HCA: true, Details: true, HCADetails: true})
		clock := time.Unix(1_700_000_000, 0)
		now := func() time.Time { return clock }
		e.now = now
		if err := f.SetTraffic(&sim.Traffic{Load: c.load, ErrorRate: 0.05, Now: now}); err != nil {
			t.Fatal(err)
		}
		var sat []string
		var s *Snapshot
		for i := 0; i <= 24*6 && len(sat) == 0; i++ {
			var err error
			if s, err = e.Sweep(t.Context()); err != nil {
				t.Fatal(err)
			}
			if s.Errors != 0 || len(s.Ports) != 32+16 {
				t.Fatalf("load %v, sweep %d: %d errors, %d ports", c.load, i, s.Errors, len(s.Ports))
			}
			for j := range s.Ports {
				ps := &s.Ports[j]
				for _, name := range ps.Saturated() {
					sat = append(sat, fmt.Sprintf("%s port %d %s after %v", ps.Port.Node.Desc, ps.Port.Num, name, time.Duration(i)*10*time.Minute))
				}
			}
			clock = clock.Add(10 * time.Minute)
		}
		if (len(sat) > 0) != c.saturated {
			t.Errorf("load %v: saturated %v, want saturated %v", c.load, sat, c.saturated)
		}
		if c.saturated {
			mfs := gather(t, e)
			if mf := mfs["infiniband_switch_port_counter_saturated"]; mf == nil || len(mf.GetMetric()) == 0 {
				t.Errorf("load %v: saturation not served", c.load)
			}
			continue
		}
		// The demo's waits and symbol errors still move: the graphs are
		// not flat.
		var wait, sym uint64
		for j := range s.Ports {
			wait += uint64(s.Ports[j].PC.PortXmitWait)
			sym += uint64(s.Ports[j].PC.SymbolErrorCounter)
		}
		if wait == 0 || sym == 0 {
			t.Errorf("load %v after 24 h: PortXmitWait %d, SymbolErrorCounter %d in all; want both above 0", c.load, wait, sym)
		}
	}
}

// TestAdditionalCounters (issue 35): where the PMA's ClassPortInfo has
// Cap2AdditionalPortCounters (the simulator with AdditionalPortCounters,
// as current HCAs and switches), the error counters, PortXmitWait and
// QP1Dropped are served from PortCountersExtended's 64-bit copies: at
// full load for 24 simulated hours the congested links' PortXmitWait
// grows past the 32 bits PortCounters has for it, and the exporter (which
// does not read PortCounters there) serves it past them, reports nothing
// saturated, and still has a transmit wait ratio.
func TestAdditionalCounters(t *testing.T) {
	e, f := simExporterOn(t, "../sim/default.net", &sim.Options{AdditionalPortCounters: true}, &Options{HCA: true}, nil, nil)
	clock := time.Unix(1_700_000_000, 0)
	now := func() time.Time { return clock }
	e.now = now
	if err := f.SetTraffic(&sim.Traffic{Load: 1, ErrorRate: 0.05, Now: now}); err != nil {
		t.Fatal(err)
	}
	var s *Snapshot
	for i := 0; i <= 24*6; i++ {
		var err error
		if s, err = e.Sweep(t.Context()); err != nil {
			t.Fatal(err)
		}
		for j := range s.Ports {
			if sat := s.Ports[j].Saturated(); len(sat) > 0 {
				t.Fatalf("after %v: %s port %d saturated %v", time.Duration(i)*10*time.Minute, s.Ports[j].Port.Node.Desc, s.Ports[j].Port.Num, sat)
			}
		}
		clock = clock.Add(10 * time.Minute)
	}
	past, ratios := 0, 0
	for j := range s.Ports {
		ps := &s.Ports[j]
		if !ps.hasAdditional() {
			t.Fatalf("%s port %d: Caps2 %#x, ExtErr %v: no additional counters", ps.Port.Node.Desc, ps.Port.Num, ps.Caps2, ps.ExtErr)
		}
		if !errors.Is(ps.PCErr, errPCNotRead) {
			t.Fatalf("%s port %d: PortCounters %v, want them not read", ps.Port.Node.Desc, ps.Port.Num, ps.PCErr)
		}
		if ps.Ext.PortXmitWait > 1<<32-1 {
			past++
		}
		if ps.XmitWaitOK && ps.XmitWaitRatio > 0 {
			ratios++
		}
	}
	if past == 0 || ratios == 0 {
		t.Errorf("%d ports with PortXmitWait past 32 bits, %d with a wait ratio; want some of each", past, ratios)
	}
	mfs := gather(t, e)
	if mf := mfs["infiniband_switch_port_counter_saturated"]; mf != nil {
		t.Errorf("saturated served: %v", mf)
	}
	max := 0.0
	for _, m := range mfs["infiniband_switch_port_transmit_wait_total"].GetMetric() {
		max = math.Max(max, value(m))
	}
	if max <= 1<<32-1 {
		t.Errorf("transmit_wait_total at most %v, want past 2^32-1", max)
	}
}

// TestXDRSeries: on the bundled XDR fat tree every active switch port's
// speed label is "XDR" (discovery's LinkSpeedExtActive2 aggregation, as
// ibnetdiscover -p names it) and its rate 4 lanes x 200 Gb/s = 100 GB/s;
// the switch rate is its best port's.
func TestXDRSeries(t *testing.T) {
	e, _ := simExporter(t, "../tests/topologies/fattree-xdr-50.net", nil)
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	mfs := gather(t, e)
	rate := series(mfs["infiniband_switch_port_rate_bytes_per_second"])
	speed := series(mfs["infiniband_switch_port_link_speed_info"], "guid", "port", "speed")
	nrate := series(mfs["infiniband_switch_rate_bytes_per_second"], "guid")
	ports := 0
	for _, n := range s.Switches {
		for _, p := range n.Ports[1:] {
			if p.Remote == nil {
				continue
			}
			ports++
			k := hexGUID(n.GUID) + ":" + itoa(p.Num)
			if m := rate[k]; m == nil || value(m) != 100e9 {
				t.Errorf("%s port %d: rate %v, want 1e11 B/s", n.Desc, p.Num, m)
			}
			if speed[k+":XDR"] == nil {
				t.Errorf("%s port %d: no speed=\"XDR\" series", n.Desc, p.Num)
			}
		}
		if m := nrate[hexGUID(n.GUID)]; m == nil || value(m) != 100e9 {
			t.Errorf("%s: switch rate %v", n.Desc, m)
		}
	}
	if ports != 44+2*8 { // a host link's switch end, both ends of a leaf-spine link
		t.Errorf("%d active switch ports, want 60", ports)
	}
}
