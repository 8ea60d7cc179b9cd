package main

import (
	"os"
	"path/filepath"
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
