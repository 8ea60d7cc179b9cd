package diag

import (
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/ibscript/ibscript/mad/cc"
)

// TestCCConfigArgs: ibccconfig's argument readers as its parseint,
// parselonglongint, parse256 and parsecct read them, and the payloads
// laid out at libibmad's field offsets.
func TestCCConfigArgs(t *testing.T) {
	// cStrtoul's text -> "value|rest|erange".
	top := fmt.Sprint(^uint64(0))
	strtoul := map[string]string{
		"0x1F": "31||false", "010": "8||false", "": "0||false", " 7": "7||false", "-1": top + "||false",
		"12x": "12|x|false", "x": "0|x|false", "0x": "0|x|false", top: top + "||false", "18446744073709551616": top + "||true",
	}
	for in, want := range strtoul {
		v, rest, rng := cStrtoul(in)
		if got := fmt.Sprintf("%d|%s|%v", v, rest, rng); got != want {
			t.Errorf("cStrtoul(%q) = %s, want %s", in, got, want)
		}
	}
	var r ccArgs
	if m := r.mask256("0x1FFFFFFFFF"); hex.EncodeToString(m[27:]) != "1fffffffff" || m[26] != 0 || r.err != "" {
		t.Errorf("mask256: %x %q", m, r.err)
	}
	for _, c := range []struct {
		attr uint16
		args []string
		want string
	}{
		{cc.AttrCACongestionSetting, []string{"1", "0"}, "invalid number of parameters for CACongestionSetting"},
		{cc.AttrCACongestionSetting, []string{"1", "0", "3x", "150", "1", "0"}, "invalid integer input"},
		{cc.AttrCongestionKeyInfo, []string{"1", "2", "0", "0"}, "invalid cc_keyprotectbit value"},
		{cc.AttrCongestionKeyInfo, []string{"1", "1", "65536", "0"}, "invalid cc_keyleaseperiod value"},
		{cc.AttrSwitchCongestionSetting, []string{"2", "0xg", "0", "0", "0", "0", "0:0", "1"}, "invalid hex digit read"},
		{cc.AttrSwitchCongestionSetting, []string{"2", "0", "0", "0", "0", "0", "5", "1"}, "ccts are formatted shift:multiplier"},
		{cc.AttrCongestionControlTable, []string{"3", "0", "0:0"}, "invalid number of cct entries input given ccti_limit and index"},
		{cc.AttrCongestionControlTable, []string{"99999999999999999999", "0"}, "value out of range"},
	} {
		var mod uint32
		if got := ccPayload(c.attr, c.args, make([]byte, 192), &mod); got != c.want {
			t.Errorf("%#x %q: %q, want %q", c.attr, c.args, got, c.want)
		}
	}
	p := make([]byte, 192)
	var mod uint32
	if msg := ccPayload(cc.AttrCACongestionSetting, []string{"1", "0x8001", "0x3", "150", "1", "2"}, p, &mod); msg != "" {
		t.Fatal(msg)
	}
	// Port_Control 1, Control_Map 0x8001, SL 0's entry at byte 4 (SL 15's at 124).
	if got := hex.EncodeToString(p[:12]); got != "000180010003960102000000" {
		t.Errorf("CACongestionSetting payload %s", got)
	}
	p = make([]byte, 192)
	if msg := ccPayload(cc.AttrCongestionControlTable, []string{"64", "1", "1:2"}, p, &mod); msg != "" || mod != 1 {
		t.Fatalf("CongestionControlTable: %q mod %d", msg, mod)
	}
	if got := hex.EncodeToString(p[:6]); got != "004000004002" {
		t.Errorf("CongestionControlTable payload %s", got)
	}
}
