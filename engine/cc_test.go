package engine_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// ccLIDs returns the LID of a switch and of a CA other than the session's
// own node on the embedded 2sw2path4hca fabric.
func ccLIDs(t *testing.T, s *engine.Session) (sw, ca uint16) {
	t.Helper()
	for lid := uint16(1); lid < 16 && (sw == 0 || ca == 0); lid++ {
		ni, err := s.NodeInfo(t.Context(), engine.LID(lid))
		if err != nil {
			continue
		}
		switch {
		case ni.NodeType == smp.NodeTypeSwitch && sw == 0:
			sw = lid
		case ni.NodeType == smp.NodeTypeCA && ca == 0 && lid != 1:
			ca = lid
		}
	}
	if sw == 0 || ca == 0 {
		t.Fatalf("no switch (%d) or CA (%d)", sw, ca)
	}
	return sw, ca
}

// TestCCGetSim reads every CC attribute through engine.Get from the
// simulator's agents: IBA's reset values, the switch and CA layouts of
// CongestionLog chosen by LogType, and errors for what a node type lacks.
func TestCCGetSim(t *testing.T) {
	s, _ := simSession(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1)
	ctx := t.Context()
	sw, ca := ccLIDs(t, s)

	cpiData, err := s.CC(ctx, engine.LID(sw), mad.MethodGet, cc.AttrClassPortInfo, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var cpi mad.ClassPortInfo
	if err := cpi.UnmarshalBinary(cpiData); err != nil || cpi.BaseVersion != 1 || cpi.ClassVersion != cc.Version {
		t.Errorf("ClassPortInfo %+v %v", cpi, err)
	}
	ci, err := engine.Get[cc.CongestionInfo](ctx, s, engine.LID(ca), 0)
	if err != nil || ci.ControlTableCap != 2 {
		t.Errorf("CA CongestionInfo %+v %v", ci, err)
	}
	if ci, err := engine.Get[cc.CongestionInfo](ctx, s, engine.LID(sw), 0); err != nil || ci.ControlTableCap != 0 {
		t.Errorf("switch CongestionInfo %+v %v", ci, err)
	}
	if ki, err := engine.Get[cc.CongestionKeyInfo](ctx, s, engine.LID(sw), 0); err != nil || ki != (cc.CongestionKeyInfo{}) {
		t.Errorf("CongestionKeyInfo %+v %v", ki, err)
	}
	for _, tc := range []struct {
		lid  uint16
		want *mad.Layout
	}{{sw, cc.CongestionLogLayout()}, {ca, cc.CongestionLogCALayout()}} {
		v, err := s.CongestionLog(ctx, engine.LID(tc.lid))
		if err != nil || v.AttrLayout() != tc.want {
			t.Errorf("lid %d CongestionLog: %v %v", tc.lid, v, err)
		}
	}
	t1, err := engine.Get[cc.Timestamp](ctx, s, engine.LID(sw), 0)
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; { // the clock moves
		t2, err := engine.Get[cc.Timestamp](ctx, s, engine.LID(sw), 0)
		if err != nil {
			t.Fatal(err)
		}
		if t2.Time > t1.Time {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Timestamp stays at %d", t1.Time)
		}
	}
	var st *engine.StatusError
	if _, err := engine.Get[cc.SwitchCongestionSetting](ctx, s, engine.LID(ca), 0); !errors.As(err, &st) || st.Status != mad.StatusMethodAttrUnsup {
		t.Errorf("SwitchCongestionSetting of a CA: %v", err)
	}
	if _, err := engine.Get[cc.CACongestionSetting](ctx, s, engine.LID(sw), 0); !errors.As(err, &st) || st.Status != mad.StatusMethodAttrUnsup {
		t.Errorf("CACongestionSetting of a switch: %v", err)
	}
	if _, err := engine.Get[cc.SwitchPortCongestionSetting](ctx, s, engine.LID(sw), 1); !errors.As(err, &st) || st.Status != mad.StatusInvalidField {
		t.Errorf("SwitchPortCongestionSetting block 1 of an 8-port switch: %v", err)
	}
	if _, err := engine.Get[cc.CongestionControlTable](ctx, s, engine.LID(ca), 2); !errors.As(err, &st) || st.Status != mad.StatusInvalidField {
		t.Errorf("CongestionControlTable block 2: %v", err)
	}
}

// TestCCSetSim: what a Set writes, the agent reads back, per node and per
// block.
func TestCCSetSim(t *testing.T) {
	s, _ := simSession(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1)
	ctx := t.Context()
	sw, ca := ccLIDs(t, s)

	scs := cc.SwitchCongestionSetting{ControlMap: 0x1f, Threshold: 0xf, PacketSize: 8, CSThreshold: 3, CSReturnDelay: 0x1234, MarkingRate: 77}
	scs.VictimMask[31] = 0x06
	if got, err := engine.Set(ctx, s, engine.LID(sw), 0, &scs); err != nil || got != scs {
		t.Errorf("Set SwitchCongestionSetting answered %+v %v", got, err)
	}
	var spcs cc.SwitchPortCongestionSetting
	spcs.Valid[3], spcs.ControlType[3], spcs.Threshold[3], spcs.PacketSize[3], spcs.CongParmMarkingRate[3] = true, true, 9, 16, 500
	if _, err := engine.Set(ctx, s, engine.LID(sw), 0, &spcs); err != nil {
		t.Fatal(err)
	}
	cacs := cc.CACongestionSetting{PortControl: 1, ControlMap: 0x8001}
	cacs.CCTITimer[15], cacs.CCTIIncrease[15], cacs.TriggerThreshold[15], cacs.CCTIMin[15] = 1000, 2, 3, 4
	if _, err := engine.Set(ctx, s, engine.LID(ca), 0, &cacs); err != nil {
		t.Fatal(err)
	}
	var cct cc.CongestionControlTable
	cct.CCTILimit, cct.CCTShift[63], cct.CCTMultiplier[63] = 127, 3, 0x3fff
	if _, err := engine.Set(ctx, s, engine.LID(ca), 1, &cct); err != nil {
		t.Fatal(err)
	}

	if got, err := engine.Get[cc.SwitchCongestionSetting](ctx, s, engine.LID(sw), 0); err != nil || got != scs {
		t.Errorf("SwitchCongestionSetting read back %+v %v", got, err)
	}
	if got, err := engine.Get[cc.SwitchPortCongestionSetting](ctx, s, engine.LID(sw), 0); err != nil || got != spcs {
		t.Errorf("SwitchPortCongestionSetting read back %+v %v", got, err)
	}
	if got, err := engine.Get[cc.CACongestionSetting](ctx, s, engine.LID(ca), 0); err != nil || got != cacs {
		t.Errorf("CACongestionSetting read back %+v %v", got, err)
	}
	if got, err := engine.Get[cc.CongestionControlTable](ctx, s, engine.LID(ca), 1); err != nil || got != cct {
		t.Errorf("CongestionControlTable block 1 read back %+v %v", got, err)
	}
	if got, err := engine.Get[cc.CongestionControlTable](ctx, s, engine.LID(ca), 0); err != nil || got.CCTILimit != 127 || got.CCTMultiplier[63] != 0 {
		t.Errorf("CongestionControlTable block 0 %+v %v", got, err)
	}

	var st *engine.StatusError
	if _, err := engine.Set(ctx, s, engine.LID(sw), 0, &cc.Timestamp{}); !errors.As(err, &st) || st.Status != mad.StatusMethodAttrUnsup {
		t.Errorf("Set Timestamp: %v", err)
	}
}

// TestCCKeySim: once a CongestionKeyInfo Set gives the agent a CC_Key, a
// request without it is dropped and counted when the key is protected,
// and answered without the key when it is not; with the key (the session's
// or the call's) everything works.
func TestCCKeySim(t *testing.T) {
	s, _ := simSession(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1)
	ctx := t.Context()
	sw, _ := ccLIDs(t, s)
	const key = 0x0123456789abcdef
	ki := cc.CongestionKeyInfo{CCKey: key, CCKeyProtectBit: true, CCKeyLeasePeriod: 60}
	if got, err := engine.Set(ctx, s, engine.LID(sw), 0, &ki); err != nil || got != ki {
		t.Fatalf("Set CongestionKeyInfo: %+v %v", got, err)
	}
	short := []engine.CallOption{engine.Timeout(20 * time.Millisecond), engine.Retries(0)}
	var te *engine.TimeoutError
	if _, err := engine.Get[cc.CongestionInfo](ctx, s, engine.LID(sw), 0, short...); !errors.As(err, &te) {
		t.Errorf("Get without the CC_Key: %v, want a timeout", err)
	}
	got, err := engine.Get[cc.CongestionKeyInfo](ctx, s, engine.LID(sw), 0, engine.CCKey(key))
	if err != nil || got.CCKey != key || got.CCKeyViolations != 1 {
		t.Errorf("with the key: %+v %v, want the key and 1 violation", got, err)
	}
	ki.CCKeyProtectBit = false
	if _, err := engine.Set(ctx, s, engine.LID(sw), 0, &ki, engine.CCKey(key)); err != nil {
		t.Fatal(err)
	}
	if got, err := engine.Get[cc.CongestionKeyInfo](ctx, s, engine.LID(sw), 0); err != nil || got.CCKey != 0 || got.CCKeyLeasePeriod != 60 {
		t.Errorf("unprotected, without the key: %+v %v, want the key hidden", got, err)
	}
	if _, err := engine.Set(ctx, s, engine.LID(sw), 0, &cc.SwitchCongestionSetting{}, short...); !errors.As(err, &te) {
		t.Errorf("Set without the key: %v, want a timeout", err)
	}
	ks, _ := simSessionOpts(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1, &engine.Options{CCKey: key})
	if _, err := engine.Get[cc.CongestionInfo](ctx, ks, engine.LID(sw), 0); err != nil {
		t.Errorf("a fresh fabric answers any key: %v", err)
	}
}

// TestCCPerPortSim: each port of a CA has its own CC agent: what a Set
// gives one port's, the CA's other port does not have.
func TestCCPerPortSim(t *testing.T) {
	s, _ := simSession(t, "../tests/topologies/net.mixed-router", "", 0)
	ctx := t.Context()
	d, err := s.Discover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var lids []uint16
	for _, n := range d.Fabric.Nodes {
		if n.Type != topo.CA || len(lids) == 2 {
			continue
		}
		lids = lids[:0]
		for _, p := range n.Ports {
			if p != nil && p.LID != 0 {
				lids = append(lids, p.LID)
			}
		}
	}
	if len(lids) != 2 {
		t.Fatal("no CA with two ports")
	}
	set := cc.CACongestionSetting{PortControl: 1, ControlMap: 1}
	set.CCTITimer[0] = 77
	if _, err := engine.Set(ctx, s, engine.LID(lids[0]), 0, &set); err != nil {
		t.Fatal(err)
	}
	if got, err := engine.Get[cc.CACongestionSetting](ctx, s, engine.LID(lids[0]), 0); err != nil || got != set {
		t.Errorf("port at lid %d: %+v %v", lids[0], got, err)
	}
	if got, err := engine.Get[cc.CACongestionSetting](ctx, s, engine.LID(lids[1]), 0); err != nil || got != (cc.CACongestionSetting{}) {
		t.Errorf("the other port (lid %d): %+v %v, want the reset values", lids[1], got, err)
	}
}
