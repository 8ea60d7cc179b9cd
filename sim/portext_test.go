package sim

import (
	"testing"
	"time"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

// perfGet sends a PerfMgt Get (or Set with data) of attr for PortSelect
// port to lid and returns the response.
func (r *raw) perf(lid uint16, method uint8, attr uint16, port uint8, data []byte) []byte {
	r.t.Helper()
	b := perfReq(r.t, method, attr, port)
	if data != nil {
		copy(perf.Data(b), data)
	}
	return r.one(lid, b)
}

// twoHosts is a switch S1 with hosts H1 and H2 on its ports 1 and 2, the
// global line first and opt on S1's port 2.
func twoHosts(global, opt string) string {
	return global + `
Switch 4 "S1"
[1] "H1"[1]
[2] "H2"[1] ` + opt + `

Hca 1 "H1"
[1] "S1"[1]

Hca 1 "H2"
[1] "S1"[2]
`
}

// TestPortInfoExtended: announced in PortInfo.CapabilityMask2 of CA
// ports and switch port 0 (not under IbsimStrict); the FEC mode a link
// runs is the most preferred one both ends enable at its speed (RS-FEC on
// EDR, none on SDR); a Set of the Enabled masks changes it, a mode not
// supported is refused; port 0 of a switch has no FEC fields.
func TestPortInfoExtended(t *testing.T) {
	f := mustNew(t, twoHosts("extspeed=2", ""), nil)
	c := attachRaw(t, f, "H1", 1)
	s1, h2 := lidOf(t, f, "S1", 0), lidOf(t, f, "H2", 1)
	for _, lid := range []uint16{s1, h2} {
		pi := portInfo(t, ok(t, c.lid(lid, smp.AttrPortInfo, 0)))
		if pi.CapabilityMask2&smp.Cap2IsPortInfoExtendedSupported == 0 || pi.CapabilityMask&smp.CapIsLEDInfoSupported == 0 {
			t.Errorf("lid %d PortInfo CapabilityMask %#x CapabilityMask2 %#x", lid, pi.CapabilityMask, pi.CapabilityMask2)
		}
	}
	pie := func(lid uint16, mod uint32) smp.PortInfoExtended {
		t.Helper()
		var p smp.PortInfoExtended
		if err := p.UnmarshalBinary(ok(t, c.lid(lid, smp.AttrPortInfoExtended, mod))); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := pie(h2, 0); p.CapabilityMask != smp.PIECapFECModeSupported || p.FECModeActive != fecRS || p.EDRFECModeSupported != 0xf || p.EDRFECModeEnabled != 0xf {
		t.Errorf("H2 (EDR): %+v, want RS-FEC active", p)
	}
	if p := pie(s1, 2); p.FECModeActive != fecRS {
		t.Errorf("S1 port 2 (EDR): %+v, want RS-FEC active", p)
	}
	if p := pie(s1, 0); p != (smp.PortInfoExtended{}) {
		t.Errorf("S1 port 0: %+v, want no FEC fields", p)
	}
	// H2 enables only low-latency RS-FEC at EDR: both ends run it.
	req, _ := (&smp.PortInfoExtended{EDRFECModeEnabled: 1 << fecLLRS}).MarshalBinary()
	if st := status(t, c.set(h2, smp.AttrPortInfoExtended, 1, req)); st != 0 {
		t.Fatalf("Set: status %#x", st)
	}
	if a, b := pie(h2, 1), pie(s1, 2); a.FECModeActive != fecLLRS || b.FECModeActive != fecLLRS || a.EDRFECModeEnabled != 1<<fecLLRS || a.FDRFECModeEnabled != 0x3 {
		t.Errorf("after the Set: H2 %+v, S1 port 2 %+v", a, b)
	}
	bad, _ := (&smp.PortInfoExtended{HDRFECModeEnabled: 1 << fecRS}).MarshalBinary()
	if st := status(t, c.set(h2, smp.AttrPortInfoExtended, 1, bad)); st != mad.StatusInvalidField {
		t.Errorf("Set of a mode HDR does not support: status %#x", st)
	}
	// perfquery -T's test: the PMA has IsRSFECCountersSupported.
	var cpi mad.ClassPortInfo
	_ = cpi.UnmarshalBinary(ok(t, c.perf(h2, mad.MethodGet, perf.AttrClassPortInfo, 1, nil)))
	if cpi.CapabilityMask&perf.CapRSFECCounters == 0 {
		t.Errorf("PMA CapabilityMask %#x", cpi.CapabilityMask)
	}
}

// TestLedInfo: off, Set on and read back, a non-zero modifier refused.
func TestLedInfo(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	c := attachRaw(t, f, "Hca1", 1)
	hca2 := lidOf(t, f, "Hca2", 1)
	var li smp.LedInfo
	_ = li.UnmarshalBinary(ok(t, c.lid(hca2, smp.AttrLedInfo, 0)))
	if li.LedMask {
		t.Error("LED on at start")
	}
	on, _ := (&smp.LedInfo{LedMask: true}).MarshalBinary()
	if st := status(t, c.set(hca2, smp.AttrLedInfo, 0, on)); st != 0 {
		t.Fatalf("Set: status %#x", st)
	}
	_ = li.UnmarshalBinary(ok(t, c.lid(hca2, smp.AttrLedInfo, 0)))
	if !li.LedMask {
		t.Error("LED off after the Set")
	}
	if st := status(t, c.lid(hca2, smp.AttrLedInfo, 1)); st != mad.StatusInvalidField {
		t.Errorf("modifier 1: status %#x", st)
	}
	s := mustLoad(t, "net.2sw2path4hca", &Options{IbsimStrict: true})
	cs := attachRaw(t, s, "Hca1", 1)
	for _, id := range []uint16{smp.AttrLedInfo, smp.AttrPortInfoExtended} {
		if st := status(t, cs.lid(hca2, id, 0)); st != mad.StatusMethodAttrUnsup {
			t.Errorf("strict: attribute %#x status %#x, want 0x000C", id, st)
		}
	}
	for _, id := range []uint16{perf.AttrPortXmitDataSL, perf.AttrPortSamplesControl, perf.AttrPortExtendedSpeedsCounters} {
		if st := status(t, cs.perf(hca2, mad.MethodGet, id, 1, nil)); st != mad.StatusMethodAttrUnsup {
			t.Errorf("strict: PerfMgt %#x status %#x, want 0x000C", id, st)
		}
	}
}

// loaded is net.2sw2path4hca under a background load of the clock it
// returns, which the test moves by hand.
func loaded(t *testing.T, load float64) (*Fabric, *time.Time) {
	t.Helper()
	f := mustLoad(t, "net.2sw2path4hca", nil)
	clock := time.Unix(1_700_000_000, 0)
	if err := f.SetTraffic(&Traffic{Load: load, Now: func() time.Time { return clock }}); err != nil {
		t.Fatal(err)
	}
	return f, &clock
}

// TestDataSL: PortXmitDataSL and PortRcvDataSL grow with PortXmitData and
// PortRcvData (the MADs on their SL, the background load on SL 0), sum
// to them, and a Set clears the SLs CounterSelect selects.
func TestDataSL(t *testing.T) {
	f, clock := loaded(t, 0.3)
	c := attachRaw(t, f, "Hca1", 1)
	hca2 := lidOf(t, f, "Hca2", 1)
	for range 5 {
		*clock = clock.Add(time.Second)
		c.lid(hca2, smp.AttrNodeInfo, 0)
	}
	sum := func(attr uint16) (uint64, [16]uint32) {
		var x perf.PortXmitDataSL // PortRcvDataSL has the same layout
		if err := x.UnmarshalBinary(ok(t, c.perf(hca2, mad.MethodGet, attr, 1, nil))); err != nil {
			t.Fatal(err)
		}
		var s uint64
		for _, v := range x.PortXmitDataSL {
			s += uint64(v)
		}
		return s, x.PortXmitDataSL
	}
	f.mu.Lock()
	p := f.byID["Hca2"].ports[1]
	f.accrueLocked(p)
	xd, rd := uint64(p.pc.pc[pcXmitData]), uint64(p.pc.pc[pcRcvData])
	f.mu.Unlock()
	xs, xsl := sum(perf.AttrPortXmitDataSL)
	rs, _ := sum(perf.AttrPortRcvDataSL)
	// The two Gets of the SL counters crossed the port too: each request
	// came in before its answer was read, the first answer went out
	// before the second was read.
	if xd == 0 || xs != xd || rs != rd+2*madWords {
		t.Errorf("SL sums xmit %d rcv %d, PortXmitData %d PortRcvData %d", xs, rs, xd, rd)
	}
	if xsl[0] == 0 {
		t.Errorf("SL 0 %d", xsl[0])
	}
	sel := make([]byte, 4)
	sel[1], sel[3] = 1, 1 // PortSelect 1, CounterSelect bit 0
	if st := status(t, c.perf(hca2, mad.MethodSet, perf.AttrPortXmitDataSL, 1, sel)); st != 0 {
		t.Fatalf("Set: status %#x", st)
	}
	if _, v := sum(perf.AttrPortXmitDataSL); v[0] > 2*madWords {
		t.Errorf("SL 0 after clearing it: %d", v[0])
	}
}

// TestSamples: a sample over an interval of the background load's clock
// counts what the load moved in it, PortSamplesControl says Running then
// Done, PortSamplesResult holds the differences with the Tag.
func TestSamples(t *testing.T) {
	f, clock := loaded(t, 0.5)
	c := attachRaw(t, f, "Hca1", 1)
	sw := lidOf(t, f, "Switch1", 0)
	ctl := perf.PortSamplesControl{PortSelect: 3, SampleInterval: 1_000_000_000, Tag: 0x77}
	ctl.CounterSelect[0], ctl.CounterSelect[1] = 1, 2 // PortXmitData, PortRcvData
	d, _ := ctl.MarshalBinary()
	var got perf.PortSamplesControl
	_ = got.UnmarshalBinary(ok(t, c.perf(sw, mad.MethodSet, perf.AttrPortSamplesControl, 3, d)))
	if got.SampleStatus != sampleRunning || got.Tag != 0x77 || got.CounterWidth != sampleWidth32 {
		t.Fatalf("after the Set: %+v", got)
	}
	*clock = clock.Add(10 * time.Second) // past the 4 s interval (4xSDR: 4 ns a tick)
	var res perf.PortSamplesResult
	_ = res.UnmarshalBinary(ok(t, c.perf(sw, mad.MethodGet, perf.AttrPortSamplesResult, 0, nil)))
	f.mu.Lock()
	load := f.traffic.load(f.byID["Switch1"].ports[3])
	f.mu.Unlock()
	want := load * 1e9 / 4 * 4 // words in 4 s at 4xSDR (1e9 bytes/s)
	if res.SampleStatus != sampleDone || res.Tag != 0x77 || float64(res.Counter[0]) < want-1 || float64(res.Counter[0]) > want+1 || res.Counter[1] == 0 {
		t.Errorf("result %+v, want XmitData about %.0f", res, want)
	}

	// SampleStart 1 s ahead: Started, then Running; a Set meanwhile is
	// ignored (the sample in progress stays); a select past IBA's five
	// and a CA's PortSelect other than the arrival port are refused.
	ctl.SampleStart, ctl.SampleInterval, ctl.Tag = 250_000_000, 250_000_000, 0x78
	d, _ = ctl.MarshalBinary()
	_ = got.UnmarshalBinary(ok(t, c.perf(sw, mad.MethodSet, perf.AttrPortSamplesControl, 3, d)))
	if got.SampleStatus != sampleStarted || got.Tag != 0x78 {
		t.Errorf("SampleStart ahead: %+v", got)
	}
	other := ctl
	other.Tag = 0x79
	d2, _ := other.MarshalBinary()
	_ = got.UnmarshalBinary(ok(t, c.perf(sw, mad.MethodSet, perf.AttrPortSamplesControl, 3, d2)))
	if got.Tag != 0x78 {
		t.Errorf("a Set while a sample is in progress took effect: %+v", got)
	}
	*clock = clock.Add(1500 * time.Millisecond)
	_ = got.UnmarshalBinary(ok(t, c.perf(sw, mad.MethodGet, perf.AttrPortSamplesControl, 3, nil)))
	if got.SampleStatus != sampleRunning {
		t.Errorf("1.5 s later: status %d, want Running", got.SampleStatus)
	}
	bad := perf.PortSamplesControl{PortSelect: 1}
	bad.CounterSelect[0] = 6
	d3, _ := bad.MarshalBinary()
	hca2 := lidOf(t, f, "Hca2", 1)
	if st := status(t, c.perf(hca2, mad.MethodSet, perf.AttrPortSamplesControl, 1, d3)); st != mad.StatusInvalidField {
		t.Errorf("counter select 6: status %#x", st)
	}
	if st := status(t, c.perf(hca2, mad.MethodGet, perf.AttrPortSamplesControl, 2, nil)); st != mad.StatusInvalidField {
		t.Errorf("CA PortSelect 2: status %#x", st)
	}
}

// TestXDR: a topology's extspeed bit 32 (libibnetdisc's aggregated XDR)
// makes ports that can run XDR: IsExtendedSpeeds2Supported in the
// CapabilityMask2 of CA ports and switch port 0,
// LinkSpeedExtSupported2/Enabled2 1, and LinkSpeedExtActive2 1 on a
// link both ends of which can (LinkSpeedExtActive 0), else the best
// common extended speed (NDR where one end enables up to NDR); the load
// runs at XDR's 200 Gb/s a lane; the snapshot says XDR (32).
func TestXDR(t *testing.T) {
	f := mustNew(t, twoHosts("extspeed=0x2f", "e=15"), nil)
	c := attachRaw(t, f, "H1", 1)
	s1, h1 := lidOf(t, f, "S1", 0), lidOf(t, f, "H1", 1)
	for _, tc := range []struct {
		lid            uint16
		mod            uint32
		cap2, xdr, act bool
		ext            uint8
	}{
		{s1, 0, true, true, false, 0},   // port 0: no link
		{s1, 1, false, true, true, 0},   // to H1: XDR
		{s1, 2, false, false, false, 8}, // e=15: up to NDR
		{h1, 1, true, true, true, 0},    // H1: XDR
	} {
		pi := portInfo(t, ok(t, c.lid(tc.lid, smp.AttrPortInfo, tc.mod)))
		if got := pi.CapabilityMask2&cap2ExtSpeeds2 != 0; got != tc.cap2 {
			t.Errorf("lid %d port %d: CapabilityMask2 %#x", tc.lid, tc.mod, pi.CapabilityMask2)
		}
		if (pi.LinkSpeedExtSupported2 == 1) != tc.xdr || pi.LinkSpeedExtEnabled2 != pi.LinkSpeedExtSupported2 || (pi.LinkSpeedExtActive2 == 1) != tc.act || pi.LinkSpeedExtActive != tc.ext {
			t.Errorf("lid %d port %d: ExtActive %d ExtActive2 %d Supported2 %d Enabled2 %d", tc.lid, tc.mod,
				pi.LinkSpeedExtActive, pi.LinkSpeedExtActive2, pi.LinkSpeedExtSupported2, pi.LinkSpeedExtEnabled2)
		}
	}
	var pie smp.PortInfoExtended
	_ = pie.UnmarshalBinary(ok(t, c.lid(h1, smp.AttrPortInfoExtended, 1)))
	if pie.FECModeActive != fecRS544 {
		t.Errorf("H1 FECModeActive %d, want RS-FEC (544,514)", pie.FECModeActive)
	}
	f.mu.Lock()
	rate := linkRate(f.byID["H1"].ports[1])
	f.mu.Unlock()
	if rate != 4*200e9/8 {
		t.Errorf("4X XDR link rate %v bytes/s", rate)
	}
	for _, n := range f.Topology().Nodes {
		if n.ID == "H1" && n.Ports[1].SpeedExtActive != extXDR {
			t.Errorf("snapshot: H1 SpeedExtActive %d", n.Ports[1].SpeedExtActive)
		}
	}
}

// TestPlantedGroupCounters: SetCounter plants the counters of the groups
// the PMA answers beyond ibsim, which read back through the PMA (the
// RS-FEC layout on an EDR port), sum over a switch's ports for
// PortSelect 0xFF, and clear by CounterSelect.
func TestPlantedGroupCounters(t *testing.T) {
	f := mustNew(t, twoHosts("extspeed=2", ""), nil)
	c := attachRaw(t, f, "H1", 1)
	s1 := lidOf(t, f, "S1", 0)
	for _, pl := range []struct {
		port int
		name string
		v    uint64
	}{
		{1, "PortFECCorrectableBlockCounter", 7}, {2, "port_fec_correctable_block_counter", 5},
		{1, "SyncHeaderErrorCounter", 70000}, // saturates at 16 bits
		{1, "PortXmitTimeCong", 9}, {2, "PortXmitDataSL3", 11},
	} {
		if err := f.SetCounter("S1", pl.port, pl.name, pl.v); err != nil {
			t.Fatal(err)
		}
	}
	var rs perf.PortExtendedSpeedsCountersRSFEC
	if err := rs.UnmarshalBinary(ok(t, c.perf(s1, mad.MethodGet, perf.AttrPortExtendedSpeedsCounters, 1, nil))); err != nil {
		t.Fatal(err)
	}
	if rs.PortFECCorrectableBlockCounter != 7 || rs.SyncHeaderErrorCounter != 0xffff {
		t.Errorf("port 1: %+v", rs)
	}
	// 0xFF starts at port 0, which has no link: the layout without
	// RS-FEC, the counters both layouts have summed.
	var plain perf.PortExtendedSpeedsCounters
	_ = plain.UnmarshalBinary(ok(t, c.perf(s1, mad.MethodGet, perf.AttrPortExtendedSpeedsCounters, perf.AllPorts, nil)))
	if plain.SyncHeaderErrorCounter != 0xffff || plain.PortSelect != perf.AllPorts {
		t.Errorf("all ports: %+v", plain)
	}
	var xc perf.PortXmitConCtrl
	_ = xc.UnmarshalBinary(ok(t, c.perf(s1, mad.MethodGet, perf.AttrPortXmitConCtrl, 1, nil)))
	if xc.PortXmitTimeCong != 9 {
		t.Errorf("PortXmitTimeCong %d", xc.PortXmitTimeCong)
	}
	clr, _ := (&perf.PortXmitConCtrl{PortSelect: 1, CounterSelect: 1}).MarshalBinary()
	ok(t, c.perf(s1, mad.MethodSet, perf.AttrPortXmitConCtrl, 1, clr))
	if v, err := f.Counter("S1", 1, "PortXmitTimeCong"); err != nil || v != 0 {
		t.Errorf("after the clear: %d %v", v, err)
	}
	if v, err := f.Counter("S1", 2, "port_xmit_data_sl3"); err != nil || v != 11 {
		t.Errorf("PortXmitDataSL3: %d %v", v, err)
	}
	if err := f.SetCounter("S1", 1, "NoSuchCounter", 1); err == nil {
		t.Error("an unknown counter was set")
	}
}

// TestXDRPathRate: the SA's PathRecord Rate of a path through XDR links is
// the code of its slowest link (libibmad's IB_PATH_RECORD_RATE_*): 4x XDR
// 23 (800 Gb/s), to a host behind a 4x NDR link 21 (400 Gb/s); 12x XDR,
// 2400 Gb/s, which has no code, the fastest, 24 (1200 Gb/s). The umad
// port's rate (sysfs') of a 4x XDR port is 800.
func TestXDRPathRate(t *testing.T) {
	for _, tc := range []struct {
		global     string
		toS1, toH2 uint64
		umad       int
	}{
		{"extspeed=0x2f", 23, 21, 800},
		{"width=8\nextspeed=0x2f", 24, 24, 2400}, // 12x NDR is 1200 too
	} {
		f := mustNew(t, twoHosts(tc.global, "e=15"), nil)
		h1, s1, h2 := lidOf(t, f, "H1", 1), lidOf(t, f, "S1", 0), lidOf(t, f, "H2", 1)
		for _, c := range []struct {
			dlid uint16
			want uint64
		}{{s1, tc.toS1}, {h2, tc.toH2}} {
			st, recs := saTable(t, f, mad.MethodGetTable, sa.PathRecord(), 1<<4|1<<5,
				map[string]uint64{"SLID": uint64(h1), "DLID": uint64(c.dlid)})
			if st != 0 || len(recs) != 1 {
				t.Fatalf("%q: H1 to lid %d: status %#x, %d records", tc.global, c.dlid, st, len(recs))
			}
			if got := recVal(t, sa.PathRecord(), recs[0], "Rate"); got != c.want {
				t.Errorf("%q: H1 to lid %d: Rate %d, want %d", tc.global, c.dlid, got, c.want)
			}
		}
		ports, err := f.Ports(t.Context())
		if err != nil || len(ports) != 2 || ports[0].Rate != tc.umad {
			t.Errorf("%q: umad ports %+v (%v), want H1's rate %d", tc.global, ports, err, tc.umad)
		}
	}
}
