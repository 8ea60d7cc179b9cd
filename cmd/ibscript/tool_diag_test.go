package main

import "testing"

// TestPerlGetopts: Getopt::Std's getopts("hRC:P:") as ibidsverify.pl
// reads its options: bundles, attached and separate values, the first
// non-option or "--" ending them, ibscript's own long options left out.
func TestPerlGetopts(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"-R"}, ""},
		{[]string{"-RC", "mlx4_0", "-P2"}, ""},
		{[]string{"-Rh"}, "help"},
		{[]string{"-R", "-h"}, "help"},
		{[]string{"x", "-h"}, ""},
		{[]string{"--", "-h"}, ""},
		{[]string{"-x"}, "unknown option: x"},
		{[]string{"-C"}, "option C wants a value"},
		{[]string{"-C", "-h"}, ""}, // -h is C's value
		{[]string{"--fabric", "sim:", "-R"}, ""},
		{[]string{"--help"}, ""}, // Getopt::Std's own help, then on
		{[]string{"--x"}, "unknown option: -"},
	} {
		if got := perlGetopts("hRC:P:", tc.args); got != tc.want {
			t.Errorf("%q: %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestSysstatServerUnaddressed: ibsysstat -S never resolves its
// destination (diag.Tool.Unaddressed), as the C tool's server does not:
// with a GUID no port has it serves until --time-limit, status 0, where
// the client with the same arguments cannot resolve it (255); an
// unknown op is still the usage (2).
func TestSysstatServerUnaddressed(t *testing.T) {
	for _, c := range []struct {
		args []string
		code int
		out  string
	}{
		{[]string{"-S", "-G", "0xdead"}, exitOK, ""},
		{[]string{"-G", "0xdead", "host"}, exitIBExit, "ibsysstat: iberror: failed: can't resolve destination port 0xdead\n"},
		{[]string{"-S", "-G", "0xdead", "bogus"}, exitError, ""},
	} {
		argv := append([]string{"ibsysstat", "--fabric", "sim:", "--quiet", "--time-limit", "100ms"}, c.args...)
		code, out, errOut := ibscript(t, argv...)
		if code != c.code || out != c.out {
			t.Errorf("%q: exit %d, stdout %q (stderr %q); want %d, %q", argv, code, out, errOut, c.code, c.out)
		}
	}
}
