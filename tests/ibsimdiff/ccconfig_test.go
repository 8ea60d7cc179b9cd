package ibsimdiff

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/topo"
)

// TestCCConfigMatchesIBCCConfig: ibccconfig's refusals (the argument
// count, each argument reader's message, an unknown operation, a
// SwitchPortCongestionSetting to a CA or past the switch's ports), which
// send no Set, on the shared fabric; then, on a fabric of its own (ibsim
// hands a class 0x21 Set to the SMA Set handler of the same attribute ID,
// which changes the node), the same Sets from ibccconfig to one CA and
// from ibscript to another, and what each CA then holds read back
// (CongestionControlTable lands in ibsim's SL2VL handler,
// CACongestionSetting in its P_KeyTable handler): the Set's bytes, both
// ways, byte for byte; and a CongestionKeyInfo Set, which a CA's
// SwitchInfo handler refuses (status 0x000C): both fail alike. Never to
// OpenSM's node.
func TestCCConfigMatchesIBCCConfig(t *testing.T) {
	s := diagSim(t, "../topologies/net.mixed-router")
	sess, _ := session(t, s, "HcaX", nil, nil)
	var ca, sw uint16
	for _, tg := range ccTargets(t, sess) {
		switch {
		case tg.node.Type == topo.Switch && sw == 0:
			sw = tg.lid
		case tg.node.Type != topo.Switch && ca == 0 && tg.node.Desc == "HcaY":
			ca = tg.lid
		}
	}
	if ca == 0 || sw == 0 {
		t.Fatalf("no CA (%d) or switch (%d) other than the SM's", ca, sw)
	}
	c, w := strconv.Itoa(int(ca)), strconv.Itoa(int(sw))
	for _, args := range [][]string{
		{"CS", c, "1", "0"}, {"CS", c, "1", "0", "3x", "150", "1", "0"}, {"CS", c, "1", "0", "3", "150", "1", "99999999999999999999"},
		{"CK", c, "1", "2", "0", "0"}, {"CK", c, "1", "1", "65536", "0"}, {"CK", c, "1", "1", "0", "65536"},
		{"SS", c, "2", "0xg", "0", "0", "0", "0", "0:0", "1"}, {"SS", c, "2", "0", "0", "0", "0", "0", "5", "1"},
		{"SS", c, "2", strings.Repeat("f", 65), "0", "0", "0", "0", "0:0", "1"}, {"SS", c, "2", "0", "0", "0", "0", "0", "1:x", "1"},
		{"CT", c, "3", "0", "0:0"}, {"CT", c, "1"}, {"CT", c, "1", "0", "0:0", "7"},
		{"SP", c, "1", "1", "0", "0", "0", "0"}, {"SP", w, "99", "1", "0", "0", "0", "0"}, {"SP", w, "1", "1"},
		{"Bogus", c}, {"CS", "0", "1", "0", "3", "150", "1", "0"}, {"-G", "CS", "0x1", "1", "0", "3", "150", "1", "0"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			t.Parallel()
			diffToolIBExit(t, s, "HcaX", "ibccconfig", args...)
		})
	}
}

// TestCCConfigSetsMatchIBCCConfig: see TestCCConfigMatchesIBCCConfig.
func TestCCConfigSetsMatchIBCCConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("a fabric of its own")
	}
	s, _ := privateSim(t, "../topologies/net.mixed-router")
	sess, _ := session(t, s, "HcaX", nil, nil)
	lids := map[string]string{}
	for _, tg := range ccTargets(t, sess) {
		if _, ok := lids[tg.node.Desc]; !ok && tg.node.Type != topo.Switch {
			lids[tg.node.Desc] = strconv.Itoa(int(tg.lid))
		}
	}
	cLID, goLID := lids["HcaY"], lids["HcaZ"]
	if cLID == "" || goLID == "" {
		t.Fatalf("CAs other than the SM's: %v", lids)
	}
	lidWord := regexp.MustCompile(`Lid \d+`)
	// The P_Key table before: a Set must change it (ibsim's SL2VL
	// handler of a CA keeps its zeros).
	before := cTool(t, s, "HcaX", "smpquery", "pkeys", goLID, "1")
	for _, tc := range []struct {
		set  []string
		read []string
	}{
		{[]string{"CT", "0", "0", "1:2", "3:0x3fff", "0:5"}, []string{"sl2vl"}},
		{[]string{"CongestionControlTable", "6", "0", "1:2", "2:7", "0:0", "3:1", "0:9", "1:1", "2:2"}, []string{"sl2vl"}},
		{[]string{"CS", "0x1234", "0x8001", "3", "150", "1", "2"}, []string{"pkeys"}},
		{[]string{"cs", "1", "0", "0x3", "150", "1", "0"}, []string{"pkeys"}},
		{[]string{"CK", "0x1122334455667788", "1", "60", "0"}, nil},
	} {
		what := strings.Join(tc.set, " ")
		want := cTool(t, s, "HcaX", "ibccconfig", append([]string{tc.set[0], cLID}, tc.set[1:]...)...)
		got := ibscriptTool(t, s, "HcaX", "ibccconfig", append([]string{tc.set[0], goLID}, tc.set[1:]...)...)
		wantOut := strings.ReplaceAll(string(want.stdout), "/usr/sbin/ibccconfig: iberror:", "ibccconfig: iberror:")
		if wantOut != string(got.stdout) || want.code != got.code {
			t.Errorf("%s: ibscript exit %d stdout %q (stderr %q), ibccconfig exit %d stdout %q", what, got.code, got.stdout, got.stderr, want.code, wantOut)
		}
		if tc.read == nil {
			if want.code == 0 {
				t.Errorf("%s: ibccconfig succeeded: ibsim's CA SwitchInfo handler should refuse", what)
			}
			continue
		}
		if want.code != 0 {
			t.Errorf("%s: ibccconfig failed (%s): nothing was Set", what, want.stdout)
		}
		wantRead := cTool(t, s, "HcaX", "smpquery", append(tc.read, cLID, "1")...)
		gotRead := cTool(t, s, "HcaX", "smpquery", append(tc.read, goLID, "1")...)
		w, g := lidWord.ReplaceAllString(string(wantRead.stdout), "Lid N"), lidWord.ReplaceAllString(string(gotRead.stdout), "Lid N")
		if w != g || wantRead.code != 0 {
			t.Errorf("%s: read back (smpquery %s):\nibscript's Set:\n%s\nibccconfig's:\n%s", what, tc.read[0], g, w)
		}
		if tc.read[0] == "pkeys" && g == string(before.stdout) {
			t.Errorf("%s: the P_Key table did not change: nothing was compared", what)
		}
		t.Logf("%s: %s", what, strings.TrimSpace(w))
	}
}
