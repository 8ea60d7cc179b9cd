package engine_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

// fakePMA is one switch at LID 1 with ports 0-3 (an enhanced port 0)
// whose PMA has the capabilities cap and cap2 and answers each port's
// counters from pc and pce (PortSelect 255 refused, as a PMA without
// AllPortSelect does).
type fakePMA struct {
	cap  uint16
	cap2 uint32
	pc   [4]perf.PortCounters
	pce  [4]perf.PortCountersExtended
	asks []uint8 // the PortSelects asked, in order

	// PortInfo.CapabilityMask2 of port 0, PortInfoExtended of every port
	// and the SMP attributes asked (ExtendedSpeedsCounters).
	cap2PI  uint16
	pie     smp.PortInfoExtended
	smpAsks []string
}

func (f *fakePMA) respond(p *fabric.Packet) ([]byte, bool) {
	req := p.Data
	if len(req) < mad.Size || mad.IsResponse(req) || p.Addr.LID != 1 {
		return nil, false
	}
	b := append([]byte(nil), req...)
	switch mad.MgmtClassOf(req) {
	case mad.ClassSubnLID:
		var st uint16
		d := smp.Data(b)[:0]
		switch mad.AttrIDOf(req) {
		case smp.AttrNodeInfo:
			ni := smp.NodeInfo{BaseVersion: 1, ClassVersion: 1, NodeType: smp.NodeTypeSwitch, NumPorts: 3, NodeGUID: 0x10}
			ni.AppendBinary(d)
		case smp.AttrSwitchInfo:
			si := smp.SwitchInfo{LinearFDBCap: 0xc000, EnhancedPort0: true}
			si.AppendBinary(d)
		case smp.AttrPortInfo:
			f.smpAsks = append(f.smpAsks, fmt.Sprintf("PortInfo %d", mad.AttrModOf(req)))
			pi := smp.PortInfo{CapabilityMask: smp.CapIsCapabilityMask2Supported, CapabilityMask2: f.cap2PI}
			pi.AppendBinary(d)
		case smp.AttrPortInfoExtended:
			f.smpAsks = append(f.smpAsks, fmt.Sprintf("PortInfoExtended %d", mad.AttrModOf(req)))
			f.pie.AppendBinary(d)
		default:
			st = mad.StatusMethodAttrUnsup
		}
		smp.MakeGetResp(b, st)
		return b, true
	case mad.ClassPerf:
	default:
		return nil, false
	}
	d := perf.Data(b)
	ps := d[1]
	var st uint16
	switch mad.AttrIDOf(req) {
	case perf.AttrClassPortInfo:
		cpi := mad.ClassPortInfo{BaseVersion: 1, ClassVersion: 1, CapabilityMask: f.cap, CapabilityMask2: f.cap2}
		clear(d)
		cpi.AppendBinary(d[:0])
	case perf.AttrPortCounters, perf.AttrPortCountersExtended:
		f.asks = append(f.asks, ps)
		switch {
		case ps == perf.AllPorts && f.cap&perf.CapAllPortSelect != 0:
			// a stand-in for the PMA's own sum
			pc := perf.PortCounters{PortSelect: ps, SymbolErrorCounter: 77}
			pce := perf.PortCountersExtended{PortSelect: ps, PortXmitData: 77}
			if mad.AttrIDOf(req) == perf.AttrPortCounters {
				pc.AppendBinary(d[:0])
			} else {
				pce.AppendBinary(d[:0])
			}
		case int(ps) >= len(f.pc):
			st = mad.StatusInvalidField
		case mad.AttrIDOf(req) == perf.AttrPortCounters:
			f.pc[ps].AppendBinary(d[:0])
		default:
			f.pce[ps].AppendBinary(d[:0])
		}
	case perf.AttrPortExtendedSpeedsCounters:
		f.asks = append(f.asks, ps)
		for i := 2; i < len(d); i++ {
			d[i] = byte(i*37 + 11) // the libibmad golden's pattern
		}
	default:
		st = mad.StatusMethodAttrUnsup
	}
	b[3] = mad.MethodGetResp
	b[4], b[5] = byte(st>>8), byte(st)
	return b, true
}

func pmaSession(t *testing.T, f *fakePMA) *engine.Session {
	pipe := fabrictest.NewPipe(&fabrictest.PipeOptions{PacketResponder: f.respond})
	s, err := engine.New(pipe.Transport(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); pipe.Close() })
	return s
}

// TestPerfCountersEmulatesAllPortSelect: on a PMA without AllPortSelect,
// port 255 is the sum of ports 0-3 (enhanced port 0), each counter
// stopping at its largest value, PortSelect 255 and the last port's
// CounterSelect, as perfquery -a prints; PortXmitWait is absent without
// CapPortXmitWait. With AllPortSelect the PMA's own answer is kept.
func TestPerfCountersEmulatesAllPortSelect(t *testing.T) {
	f := &fakePMA{cap: perf.CapExtendedWidth}
	for i := range f.pc {
		f.pc[i] = perf.PortCounters{PortSelect: uint8(i), CounterSelect: uint16(i), SymbolErrorCounter: 0x4000,
			LocalLinkIntegrityErrors: 5, PortXmitData: 0x60000000, PortRcvPkts: uint32(i), PortXmitWait: 9}
	}
	s := pmaSession(t, f)
	c, err := s.PerfCounters(t.Context(), engine.LID(1), perf.AllPorts, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Summed, []uint8{0, 1, 2, 3}) || !slices.Equal(f.asks, []uint8{0, 1, 2, 3}) {
		t.Fatalf("summed %v, asked %v; want ports 0-3 one by one", c.Summed, f.asks)
	}
	for name, want := range map[string]uint64{
		"PortSelect": 255, "CounterSelect": 3, "SymbolErrorCounter": 0xffff, // 4 x 0x4000 stops at 16 bits
		"LocalLinkIntegrityErrors": 0xf, "PortXmitData": 0xffffffff, "PortRcvPkts": 6, "PortXmitWait": 0,
	} {
		if v, _ := c.Value(name); v != want {
			t.Errorf("%s = %#x, want %#x", name, v, want)
		}
	}
	if !slices.Equal(c.Absent, []string{"PortXmitWait"}) {
		t.Errorf("absent %v, want PortXmitWait (no CapPortXmitWait)", c.Absent)
	}

	// PortCountersExtended without ExtendedWidth (NoIETF) or the
	// additional counters: data and packets only.
	f.cap, f.asks = perf.CapExtendedWidthNoIETF, nil
	for i := range f.pce {
		f.pce[i] = perf.PortCountersExtended{PortSelect: uint8(i), PortXmitData: 1 << 62, PortUnicastXmitPkts: 3, SymbolErrorCounter: 4}
	}
	c, err = s.PerfCounters(t.Context(), engine.LID(1), perf.AllPorts, true)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := c.Value("PortXmitData"); v != ^uint64(0) {
		t.Errorf("PortXmitData %#x, want saturated", v)
	}
	if v, _ := c.Value("PortUnicastXmitPkts"); v != 0 || !slices.Contains(c.Absent, "PortUnicastXmitPkts") || !slices.Contains(c.Absent, "SymbolErrorCounter") || !slices.Contains(c.Absent, "CounterSelect2") {
		t.Errorf("NoIETF layout: unicast %d, absent %v", v, c.Absent)
	}
	f.cap, f.cap2 = perf.CapExtendedWidth, perf.Cap2AdditionalPortCounters
	c, err = s.PerfCounters(t.Context(), engine.LID(1), 2, true)
	if err != nil || c.Summed != nil || len(c.Absent) != 0 {
		t.Fatalf("port 2 with every capability: %v, summed %v absent %v", err, c.Summed, c.Absent)
	}
	if v, _ := c.Value("SymbolErrorCounter"); v != 4 {
		t.Errorf("additional counters: SymbolErrorCounter %d, want 4", v)
	}

	// A PMA with AllPortSelect answers for itself.
	f.cap, f.asks = perf.CapAllPortSelect|perf.CapPortXmitWait, nil
	c, err = s.PerfCounters(t.Context(), engine.LID(1), perf.AllPorts, false)
	if err != nil || c.Summed != nil || !slices.Equal(f.asks, []uint8{255}) {
		t.Fatalf("AllPortSelect: %v, summed %v, asked %v", err, c.Summed, f.asks)
	}
	if v, _ := c.Value("SymbolErrorCounter"); v != 77 {
		t.Errorf("AllPortSelect answer: SymbolErrorCounter %d, want the PMA's 77", v)
	}

	// A port that fails ends the emulation with its number.
	f.cap = 0
	f.pc = [4]perf.PortCounters{}
	if _, err := s.PerfCounters(t.Context(), engine.LID(1), 7, false); err == nil {
		t.Error("port 7 of a 3-port switch: no error")
	}
}

// TestWholeTables: PKeys and GUIDs read every block up to the capacity
// NodeInfo, SwitchInfo and PortInfo give, as smpquery pkeys and GUIDInfo.
func TestWholeTables(t *testing.T) {
	s, _ := simSession(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1)
	ctx := t.Context()
	ca := engine.LID(2)
	ni, err := s.NodeInfo(ctx, ca)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := s.PKeys(ctx, ca, 0)
	if err != nil || len(keys) != int(ni.PartitionCap) || ni.PartitionCap <= 32 {
		t.Fatalf("CA P_Keys: %d (%v), PartitionCap %d (want more than one block)", len(keys), err, ni.PartitionCap)
	}
	for b := 0; b*32 < len(keys); b++ {
		pt, err := s.PKeyTable(ctx, ca, 0, uint16(b))
		if err != nil || !slices.Equal(keys[b*32:min(len(keys), b*32+32)], pt.PKeys[:min(32, len(keys)-b*32)]) {
			t.Errorf("block %d: %v %x", b, err, pt.PKeys)
		}
	}
	si, err := s.SwitchInfo(ctx, engine.LID(1))
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := s.PKeys(ctx, engine.LID(1), 3); err != nil || len(keys) != int(si.PartitionEnforcementCap) {
		t.Errorf("switch port 3: %d P_Keys (%v), PartitionEnforcementCap %d", len(keys), err, si.PartitionEnforcementCap)
	}
	if _, err := s.PKeys(ctx, ca, ni.NumPorts+1); err == nil {
		t.Error("a port past the node's: no error")
	}
	pi, err := s.PortInfo(ctx, ca, 0)
	if err != nil {
		t.Fatal(err)
	}
	guids, err := s.GUIDs(ctx, ca)
	if err != nil || len(guids) == 0 || len(guids) != int(pi.GUIDCap) || guids[0] != ni.PortGUID {
		t.Errorf("GUIDs: %d (%v), GUIDCap %d, first %#x want %#x", len(guids), err, pi.GUIDCap, guids, ni.PortGUID)
	}
}

// TestExtendedSpeedsCountersLayout: the RS-FEC layout of
// PortExtendedSpeedsCounters exactly when perfquery -T prints it: the
// PMA's IsRSFECCountersSupported, PortInfoExtended announced in port 0's
// CapabilityMask2 (a switch) and the port's PortInfoExtended saying FEC
// modes are valid with RS-FEC (2) or RS-FEC2 (4) active.
func TestExtendedSpeedsCountersLayout(t *testing.T) {
	rs := perf.PortExtendedSpeedsCountersRSFECLayout()
	plain := perf.PortExtendedSpeedsCountersLayout()
	fec := func(m uint16) smp.PortInfoExtended {
		return smp.PortInfoExtended{CapabilityMask: smp.PIECapFECModeSupported, FECModeActive: m}
	}
	for _, c := range []struct {
		name   string
		f      fakePMA
		want   *mad.Layout
		smpAsk []string
	}{
		{"no RS-FEC capability", fakePMA{cap2PI: smp.Cap2IsPortInfoExtendedSupported, pie: fec(smp.FECModeRS)}, plain, nil},
		{"RS-FEC", fakePMA{cap: perf.CapRSFECCounters, cap2PI: smp.Cap2IsPortInfoExtendedSupported, pie: fec(smp.FECModeRS)}, rs,
			[]string{"PortInfo 0", "PortInfoExtended 2"}},
		{"RS-FEC2", fakePMA{cap: perf.CapRSFECCounters, cap2PI: smp.Cap2IsPortInfoExtendedSupported, pie: fec(smp.FECModeRS2)}, rs,
			[]string{"PortInfo 0", "PortInfoExtended 2"}},
		{"low-latency RS-FEC", fakePMA{cap: perf.CapRSFECCounters, cap2PI: smp.Cap2IsPortInfoExtendedSupported, pie: fec(smp.FECModeLowLatencyRS)}, plain,
			[]string{"PortInfo 0", "PortInfoExtended 2"}},
		{"FEC modes not valid", fakePMA{cap: perf.CapRSFECCounters, cap2PI: smp.Cap2IsPortInfoExtendedSupported, pie: smp.PortInfoExtended{FECModeActive: smp.FECModeRS}}, plain,
			[]string{"PortInfo 0", "PortInfoExtended 2"}},
		{"no PortInfoExtended", fakePMA{cap: perf.CapRSFECCounters, pie: fec(smp.FECModeRS)}, plain, []string{"PortInfo 0"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := c.f
			s := pmaSession(t, &f)
			got, err := s.ExtendedSpeedsCounters(t.Context(), engine.LID(1), 2)
			if err != nil {
				t.Fatal(err)
			}
			if got.Layout != c.want || !slices.Equal(f.smpAsks, c.smpAsk) || !slices.Equal(f.asks, []uint8{2}) {
				t.Errorf("layout %s, SMPs %v, PMA ports %v; want %s, %v, [2]", got.Layout.Name, f.smpAsks, f.asks, c.want.Name, c.smpAsk)
			}
			if v, _ := got.Value("PortFECCorrectedSymbolCounter"); c.want == rs && v != 1872017886 {
				t.Errorf("PortFECCorrectedSymbolCounter %d, want 1872017886 (libibmad's reading of the pattern)", v)
			}
		})
	}
}

// TestPKeyIndex: Options.PKeyIndex (infiniband-diags' -Y, rdma-core
// #1759) is the P_Key index of every MAD but an SMP: libibmad's
// mad_build_pkt hands portid->pkey_idx to umad_set_pkey for every class
// but the SMPs', which go out on index 0. The call option overrides it,
// and Do keeps an index its packet names.
func TestPKeyIndex(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	pipe := fabrictest.NewPipe(&fabrictest.PipeOptions{
		Port: fabric.PortAttr{LID: 2, SMLID: 1},
		PacketResponder: func(p *fabric.Packet) ([]byte, bool) {
			if mad.IsResponse(p.Data) {
				return nil, false
			}
			mu.Lock()
			seen = append(seen, fmt.Sprintf("class 0x%02x pkey_index %d", mad.MgmtClassOf(p.Data), p.Addr.PKeyIndex))
			mu.Unlock()
			return fabrictest.GetResp(p.Data, 0), true
		}})
	s, err := engine.New(pipe.Transport(), &engine.Options{PKeyIndex: 5, Retries: engine.NoRetries})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); pipe.Close() })
	ctx := t.Context()
	s.SMP(ctx, engine.LID(1), mad.MethodGet, smp.AttrNodeInfo, 0, nil)
	s.SMP(ctx, engine.DR(0, 1), mad.MethodGet, smp.AttrNodeInfo, 0, nil)
	s.PortCounters(ctx, engine.LID(1), 1)
	s.PortCounters(ctx, engine.LID(1), 1, engine.PKeyIndex(7))
	s.SAGetTable(ctx, sa.PortInfoRecord(), 0, nil)
	vendor := fabrictest.NewMAD(1, mad.MethodGet, 9)
	vendor[1] = 0x09 // a vendor class of range 1
	s.Do(ctx, &fabric.Packet{Addr: fabric.Addr{LID: 1, QPN: 1, QKey: 0x80010000}, Data: vendor})
	s.Do(ctx, &fabric.Packet{Addr: fabric.Addr{LID: 1, QPN: 1, QKey: 0x80010000, PKeyIndex: 2}, Data: vendor})
	sysstat := fabrictest.NewMAD(1, mad.MethodGet, 0x11)
	sysstat[1] = 0x33 // a vendor class of range 2, with an OUI
	mad.SetVendorOUI(sysstat, 0x001405)
	s.DoRMPP(ctx, &fabric.Packet{Addr: fabric.Addr{LID: 1, QPN: 1, QKey: 0x80010000}, Data: sysstat})
	s.DoRMPP(ctx, &fabric.Packet{Addr: fabric.Addr{LID: 1, QPN: 1, QKey: 0x80010000, PKeyIndex: 3}, Data: sysstat})
	want := []string{
		"class 0x01 pkey_index 0", "class 0x81 pkey_index 0", // SMPs: always 0
		"class 0x04 pkey_index 5", "class 0x04 pkey_index 7", // PerfMgt: the Session's, the call's
		"class 0x03 pkey_index 5",                            // SA
		"class 0x09 pkey_index 5", "class 0x09 pkey_index 2", // Do: the Session's, the packet's own
		"class 0x33 pkey_index 5", "class 0x33 pkey_index 3", // DoRMPP: the same
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(seen, want) {
		t.Errorf("sent:\n%q\nwant:\n%q", seen, want)
	}
}
