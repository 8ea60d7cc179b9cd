package diag_test

import (
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/sim"
)

// TestCCQueryTables: on the simulator, ibccquery's table walks: the
// CongestionControlTable read block by block up to CCTI_Limit (entries 0
// to the limit, as ibccquery counts them), one port of a switch's
// SwitchPortCongestionSetting, and the errors ibccquery names.
func TestCCQueryTables(t *testing.T) {
	env, _ := simEnv(t)
	ctx := t.Context()
	var cct cc.CongestionControlTable
	cct.CCTILimit, cct.CCTShift[2], cct.CCTMultiplier[2] = 66, 1, 300 // entry 66: block 1, entry 2
	if _, err := engine.Set(ctx, env.Session, engine.LID(1), 1, &cct); err != nil {
		t.Fatal(err)
	}
	q, err := diag.CCQueryRun(ctx, env, diag.CCQueryOptions{Op: "ct", Target: engine.LID(1)})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	diag.WriteCCQuery(&b, q)
	text := b.String()
	if !strings.HasPrefix(text, "# CongestionControlTable: Lid 1\nCCTI_Limit:......................66\n\nEntry:...........................0\nCCT_Shift:") ||
		!strings.HasSuffix(text, "Entry:...........................66\nCCT_Shift:.......................1\nCCT_Multiplier:..................300\n\n") ||
		strings.Count(text, "Entry:") != 67 {
		t.Errorf("CongestionControlTable:\n%s", text)
	}

	var sp cc.SwitchPortCongestionSetting
	sp.Valid[5], sp.Threshold[5], sp.CongParmMarkingRate[5] = true, 0xa, 1000
	if _, err := engine.Set(ctx, env.Session, engine.LID(2), 0, &sp); err != nil {
		t.Fatal(err)
	}
	q, err = diag.CCQueryRun(ctx, env, diag.CCQueryOptions{Op: "SwitchPortCongestionSetting", Target: engine.LID(2), Port: 5})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	diag.WriteCCQuery(&b, q)
	want := "# SwitchPortCongestionSetting: Lid 2\nValid:...........................1\nControl_Type:....................0\n" +
		"Threshold:.......................0x0a\nPacket_Size:.....................0\nCong_Parm_Marking_Rate:..........1000\n"
	if b.String() != want {
		t.Errorf("port 5:\n%s\nwant\n%s", b.String(), want)
	}

	for _, tc := range []struct{ op, port, want string }{
		{"SP", "", "operation SP: destination not a switch"},
		{"NoSuchOp", "", "operation 'NoSuchOp' not supported"},
		{"SS", "", "operation SS: switch congestion setting query failed"},
	} {
		_, err := diag.CCQueryRun(ctx, env, diag.CCQueryOptions{Op: tc.op, Target: engine.LID(1)})
		var b strings.Builder
		diag.WriteIBError(&b, "ibccquery", err)
		if b.String() != "ibccquery: iberror: failed: "+tc.want+"\n" {
			t.Errorf("%s: %q, want %q", tc.op, b.String(), tc.want)
		}
	}
}

// TestCCQueryKeyGivenZero: ibccquery -c 0 sends CC_Key 0, as the C tool
// does (its cckey is what -c says), even where the session has a key of
// its own ($IBSCRIPT_CCKEY, --cckey): a node whose key is the session's,
// protected, answers without -c and refuses -c 0 (before, a 0 meant "not
// given" and the session's key went out).
func TestCCQueryKeyGivenZero(t *testing.T) {
	f, err := sim.Default(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	const key = 0x77
	env := &diag.Env{Session: attachSession(t, f, "", &engine.Options{Timeout: 50 * time.Millisecond, Retries: 1, CCKey: key})}
	ki := cc.CongestionKeyInfo{CCKey: key, CCKeyProtectBit: true}
	if _, err := engine.Set(t.Context(), env.Session, engine.LID(1), 0, &ki); err != nil {
		t.Fatal(err)
	}
	if _, err := diag.CCQueryRun(t.Context(), env, diag.CCQueryOptions{Op: "CongestionInfo", Target: engine.LID(1)}); err != nil {
		t.Errorf("without -c (the session's key): %v", err)
	}
	zero := uint64(0)
	if _, err := diag.CCQueryRun(t.Context(), env, diag.CCQueryOptions{Op: "CongestionInfo", Target: engine.LID(1), CCKey: &zero}); err == nil {
		t.Error("-c 0 to a node protected by another key: answered, want it refused (the MAD must carry 0)")
	}
}
