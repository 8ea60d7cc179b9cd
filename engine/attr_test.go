package engine_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

func target(t *testing.T, s string) engine.Target {
	t.Helper()
	tg, err := engine.ParseTarget(s)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func wantStatus(t *testing.T, err error, st uint16) {
	t.Helper()
	var se *engine.StatusError
	if !errors.As(err, &se) || se.Status != st {
		t.Errorf("error %v, want MAD status %#04x", err, st)
	}
}

// TestGetSLtoVLAndVLArb reads the SLtoVL and VL arbitration tables through
// the generic Get, as ibsim answers them (its defaults, which OpenSM keeps
// with QoS off: smpquery sl2vl prints VL 0..14 then 7; vlarb low VL0 0 and
// VL1-7 4, high VL0 4), and checks ibsim's modifier rules and Sets.
func TestGetSLtoVLAndVLArb(t *testing.T) {
	s, _ := simSession(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1)
	ctx := t.Context()
	ca, sw := target(t, "dr:0"), target(t, "dr:0,1")
	want := smp.SLtoVLMappingTable{VL: [16]uint8{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 7}}
	for _, c := range []struct {
		tg  engine.Target
		mod uint32
	}{{ca, 0}, {ca, 0x0102}, {sw, 0}, {sw, 3<<8 | 5}, {sw, 8<<8 | 8}} {
		got, err := engine.Get[smp.SLtoVLMappingTable](ctx, s, c.tg, c.mod)
		if err != nil {
			t.Fatalf("%s mod %#x: %v", c.tg, c.mod, err)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s mod %#x (-want +got):\n%s", c.tg, c.mod, d)
		}
	}
	_, err := engine.Get[smp.SLtoVLMappingTable](ctx, s, sw, 9<<8|1) // no input port 9
	wantStatus(t, err, mad.StatusInvalidField)

	// A Set of one switch port pair changes that pair only.
	set := smp.SLtoVLMappingTable{VL: [16]uint8{15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0}}
	got, err := engine.Set(ctx, s, sw, 3<<8|5, &set)
	if err != nil || got != set {
		t.Fatalf("Set: %v %v", got, err)
	}
	if got, _ := engine.Get[smp.SLtoVLMappingTable](ctx, s, sw, 3<<8|5); got != set {
		t.Errorf("after Set: %v", got)
	}
	if got, _ := engine.Get[smp.SLtoVLMappingTable](ctx, s, sw, 3<<8|4); got != want {
		t.Errorf("another pair after Set: %v", got)
	}

	var low, high smp.VLArbitrationTable
	for vl := range 8 {
		low.VL[vl], high.VL[vl] = uint8(vl), uint8(vl)
		low.Weight[vl] = 4
	}
	low.Weight[0], high.Weight[0] = 0, 4
	for _, c := range []struct {
		tg   engine.Target
		mod  uint32
		want smp.VLArbitrationTable
	}{{ca, 1 << 16, low}, {ca, 3 << 16, high}, {sw, 1<<16 | 2, low}, {sw, 3<<16 | 0, high}} {
		got, err := engine.Get[smp.VLArbitrationTable](ctx, s, c.tg, c.mod)
		if err != nil {
			t.Fatalf("%s mod %#x: %v", c.tg, c.mod, err)
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s mod %#x (-want +got):\n%s", c.tg, c.mod, d)
		}
	}
	// The caps are 8 entries: blocks 2 and 4 (entries 32-63) do not exist.
	for _, mod := range []uint32{0, 2 << 16, 4 << 16, 5 << 16} {
		_, err := engine.Get[smp.VLArbitrationTable](ctx, s, ca, mod)
		wantStatus(t, err, mad.StatusInvalidField)
	}
	ext, err := engine.Get[smp.MlnxExtPortInfo](ctx, s, sw, 1)
	if err != nil || ext != (smp.MlnxExtPortInfo{}) {
		t.Errorf("MlnxExtPortInfo: %+v %v", ext, err)
	}
	// MulticastForwardingTable: switches only, empty until a Set; a block
	// past ibsim's 1024 MLIDs or a position past the ports reads zero.
	_, err = engine.Get[smp.MulticastForwardingTable](ctx, s, ca, 0)
	wantStatus(t, err, mad.StatusMethodAttrUnsup)
	var mft smp.MulticastForwardingTable
	mft.PortMask[0], mft.PortMask[31] = 0x000a, 0x8001
	if got, err := engine.Set(ctx, s, sw, 5, &mft); err != nil || got != mft {
		t.Fatalf("Set MFT: %v %v", got, err)
	}
	for _, c := range []struct {
		mod  uint32
		want smp.MulticastForwardingTable
	}{{5, mft}, {0, smp.MulticastForwardingTable{}}, {1<<28 | 5, smp.MulticastForwardingTable{}}, {32, smp.MulticastForwardingTable{}}} {
		got, err := engine.Get[smp.MulticastForwardingTable](ctx, s, sw, c.mod)
		if err != nil || got != c.want {
			t.Errorf("MFT mod %#x: %v %v", c.mod, got.PortMask, err)
		}
	}
	if got, err := engine.Set(ctx, s, sw, 1<<28, &mft); err != nil || got != (smp.MulticastForwardingTable{}) {
		t.Errorf("Set of position 1 on an 8-port switch: %v %v, want it ignored", got.PortMask, err)
	}

	// ibsim does not answer PortInfoExtended; the simulator does, as a
	// current HCA: FEC fields valid, no FEC on an SDR link.
	pie, err := engine.Get[smp.PortInfoExtended](ctx, s, ca, 1)
	if err != nil || pie.CapabilityMask != smp.PIECapFECModeSupported || pie.FECModeActive != 0 || pie.EDRFECModeSupported == 0 {
		t.Errorf("PortInfoExtended: %+v %v", pie, err)
	}
}

// TestGetPerfDetails reads the detail counter groups ibsim's PMA answers
// (all zero: nothing in ibsim moves them) with its PortSelect rules.
func TestGetPerfDetails(t *testing.T) {
	s, _ := simSession(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1)
	ctx := t.Context()
	ca, sw := target(t, "dr:0"), target(t, "dr:0,1")
	rcv, err := engine.Get[perf.PortRcvErrorDetails](ctx, s, ca, 1)
	if err != nil || rcv != (perf.PortRcvErrorDetails{PortSelect: 1}) {
		t.Errorf("PortRcvErrorDetails: %+v %v", rcv, err)
	}
	vl, err := engine.Get[perf.PortVLXmitWaitCounters](ctx, s, sw, uint32(perf.AllPorts))
	if err != nil || vl != (perf.PortVLXmitWaitCounters{PortSelect: perf.AllPorts}) {
		t.Errorf("PortVLXmitWaitCounters: %+v %v", vl, err)
	}
	_, err = engine.Get[perf.PortXmitDiscardDetails](ctx, s, ca, 2) // a CA answers for its own port only
	wantStatus(t, err, mad.StatusInvalidField)
	if _, err := engine.Get[perf.PortFlowCtlCounters](ctx, s, ca, 256); err == nil {
		t.Error("port 256 accepted")
	}
}

// TestSMInfoRecord: the SA lists the SM, as saquery SMIR shows OpenSM's on
// the same file under ibsim (LID 1, GUID 0x200000, SM_Key blank, Master),
// and refuses what it does not serve (InformInfo: no subscriptions).
func TestSMInfoRecord(t *testing.T) {
	s, _ := simSession(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1)
	ctx := t.Context()
	recs, err := s.SAGetTable(ctx, sa.SMInfoRecord(), 0, nil)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	var si smp.SMInfo
	if err := si.UnmarshalBinary(recs[0][4:]); err != nil {
		t.Fatal(err)
	}
	ni, err := s.NodeInfo(ctx, target(t, "dr:0,1")) // Switch1, the first node of the file, runs the SM
	if err != nil {
		t.Fatal(err)
	}
	lid, _, _ := sa.SMInfoRecord().Field("LID")
	if si.GUID != ni.PortGUID || si.SMState != smp.SMStateMaster || si.SMKey != 0 || lid.Get(recs[0]) == 0 {
		t.Errorf("SMInfoRecord lid %d %+v, want the SM (Switch1, port GUID %#x) as master", lid.Get(recs[0]), si, ni.PortGUID)
	}
	_, err = s.SAGet(ctx, sa.InformInfo(), 0, nil)
	var se *engine.StatusError
	if !errors.As(err, &se) || se.Status != mad.StatusMethodAttrUnsup {
		t.Errorf("InformInfo: %v, want status 0x000c", err)
	}
}
