package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestToolsBeyondIbsim: on the default fabric the simulator answers what
// ibsim refuses, and perfquery -X, -S, -D, -E, -T, -c and the congestion
// options and smpquery pie and mepi print it as infiniband-diags 44 does.
// ibsim refuses these attributes, so 44 cannot be run against it: each
// golden is libibmad 44's own rendering of the data the simulator is
// documented to answer (testdata/simtools/gen.py), so the tool's output
// matching it checks the simulator's bytes and the tool's printing at
// once. The RS-FEC layout of -T is on a 4X EDR fabric.
func TestToolsBeyondIbsim(t *testing.T) {
	edr := "sim:" + filepath.Join("testdata", "simtools", "net.edr")
	for _, tc := range []struct {
		golden string
		argv   []string
	}{
		{"xmtsl", []string{"perfquery", "-X", "2", "1"}},
		{"rcvsl", []string{"perfquery", "-S", "2", "1"}},
		{"xmtdisc", []string{"perfquery", "-D", "2", "1"}},
		{"rcverr", []string{"perfquery", "-E", "2", "1"}},
		{"extspeeds", []string{"perfquery", "-T", "2", "1"}},
		{"smplctl", []string{"perfquery", "-c", "2", "1"}},
		{"SwPortVLCongestion", []string{"perfquery", "--swportvlcong", "2", "1"}},
		{"PortXmitConCtrl", []string{"perfquery", "--xmitcc", "2", "1"}},
		{"PortVLXmitTimeCong", []string{"perfquery", "--vlxmittimecc", "2", "1"}},
		{"PortRcvConCtrl", []string{"perfquery", "--rcvcc", "1", "1"}},
		{"PortSLRcvFECN", []string{"perfquery", "--slrcvfecn", "1", "1"}},
		{"PortSLRcvBECN", []string{"perfquery", "--slrcvbecn", "1", "1"}},
		{"pie", []string{"smpquery", "pie", "2", "1"}},
		{"mepi", []string{"smpquery", "mepi", "2", "1"}},
		{"extspeeds-rsfec", []string{"perfquery", "-T", "2", "1", "--fabric", edr}},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "simtools", tc.golden+".golden"))
			if err != nil {
				t.Fatal(err)
			}
			argv := tc.argv
			if argv[len(argv)-2] != "--fabric" {
				argv = append(argv, "--fabric", "sim:")
			}
			code, out, errOut := ibscript(t, argv...)
			if code != exitOK || out != string(want) {
				t.Errorf("%q: exit %d, stderr %q\nstdout:\n%s\nlibibmad 44:\n%s", argv, code, errOut, out, want)
			}
		})
	}
}

// TestSMPQueryCombined: smpquery -c on the default fabric, whose
// simulator follows combined routes (ibsim drops them, so the C tool
// cannot be run against them there: tests/ibsimdiff compares its errors).
// LID 6 is leaf04, whose port 1 is node013 (LID 19): a combined route of
// no hop is the LID's node, "Lid 6" as portid2str prints it, the same
// bytes as smpquery by LID; one hop on reaches node013, printed as by
// LID but for its header, which is libibmad's "Lid 6 DR path slid 1;
// dlid 65535; 0,1" (DrSLID the local LID, 1).
func TestSMPQueryCombined(t *testing.T) {
	run := func(argv ...string) string {
		t.Helper()
		code, out, errOut := ibscript(t, append(argv, "--fabric", "sim:")...)
		if code != exitOK {
			t.Fatalf("%q: exit %d, stderr %q", argv, code, errOut)
		}
		return out
	}
	if got, want := run("smpquery", "-c", "nodeinfo", "6", "0"), run("smpquery", "nodeinfo", "6"); got != want {
		t.Errorf("-c nodeinfo 6 0:\n%s\nwant (nodeinfo 6):\n%s", got, want)
	}
	if got, want := run("smpquery", "-c", "nodeinfo", "6"), run("smpquery", "nodeinfo", "6"); got != want {
		t.Errorf("-c nodeinfo 6 (route \"(null)\", no hop):\n%s\nwant:\n%s", got, want)
	}
	got, want := run("smpquery", "-c", "portinfo", "6", "0,1", "1"), run("smpquery", "portinfo", "19", "1")
	want = strings.Replace(want, "# Port info: Lid 19 port 1\n", "# Port info: Lid 6 DR path slid 1; dlid 65535; 0,1 port 1\n", 1)
	if got != want {
		t.Errorf("-c portinfo 6 0,1 1:\n%s\nwant:\n%s", got, want)
	}
	if got := run("smpquery", "-c", "nodedesc", "7", "0,4"); got != "Node Description:..........................leaf04\n" {
		t.Errorf("-c nodedesc 7 0,4 (spine01 port 4): %q", got)
	}
}
