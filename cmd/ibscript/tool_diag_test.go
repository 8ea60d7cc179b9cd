package main

import (
	"strings"
	"testing"
)

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

// TestMadRPCWarning: a query nobody answers (a LID no port has, a
// directed route out of an uncabled port) warns on stderr as libibmad's
// mad_rpc does, naming the target as the C tools do ("ibwarn: [pid]
// mad_rpc: _do_madrpc failed; dport (Lid 99)" from smpquery, perfquery,
// ibroute, ... on ibsim, less the pid), with the C tool's IBEXIT on
// stdout, status 255.
func TestMadRPCWarning(t *testing.T) {
	const lid999 = "ibwarn: mad_rpc: _do_madrpc failed; dport (Lid 999)\n"
	for _, c := range []struct {
		args       []string
		out, warns string
	}{
		{[]string{"smpquery", "nodeinfo", "999"}, "smpquery: iberror: failed: operation nodeinfo: node info query failed\n", lid999},
		{[]string{"smpquery", "-D", "nodeinfo", "0,1,30"}, "smpquery: iberror: failed: operation nodeinfo: node info query failed\n",
			"ibwarn: mad_rpc: _do_madrpc failed; dport (DR path slid 65535; dlid 65535; 0,1,30)\n"},
		{[]string{"perfquery", "999", "1"}, "perfquery: iberror: failed: classportinfo query\n", lid999},
		{[]string{"ibccquery", "CongestionInfo", "999"}, "ibccquery: iberror: failed: operation CongestionInfo: congestion info query failed\n", lid999},
		{[]string{"sminfo", "999"}, "sminfo: iberror: failed: query\n", lid999},
		{[]string{"ibroute", "999"}, "ibroute: iberror: failed: dump tables: node info failed: valid addr?\n", lid999},
		{[]string{"ibtracert", "1", "999"}, "ibtracert: iberror: failed: Failed to get route information\n",
			lid999 + "ibwarn: find_route: can't reach to/from ports\nibwarn: get_route: can't find a route from src to dest\n"},
	} {
		argv := append([]string{c.args[0], "--fabric", "sim:", "--quiet", "-t", "20"}, c.args[1:]...)
		code, out, errOut := ibscript(t, argv...)
		if code != exitIBExit || out != c.out || errOut != c.warns {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %d, %q, %q", argv, code, out, errOut, exitIBExit, c.out, c.warns)
		}
	}
	// With -e, an answer refusing the query is warned of too, as
	// libibmad's ERRS does, before ibscript's line saying why.
	argv := []string{"smpquery", "--fabric", "sim:", "--quiet", "-e", "portinfo", "1", "99"}
	code, out, errOut := ibscript(t, argv...)
	if want := "ibwarn: mad_rpc: MAD completed with error status 0x1c; dport (Lid 1)\n"; code != exitIBExit || out != "smpquery: iberror: failed: operation portinfo: port info query failed\n" || !strings.HasPrefix(errOut, want) {
		t.Errorf("%q: exit %d, stdout %q, stderr %q; want 255 and stderr starting %q", argv, code, out, errOut, want)
	}
	// ibping warns of each lost ping as mad_rpc_rmpp does, and ends with
	// its statistics, status 0.
	argv = []string{"ibping", "--fabric", "sim:", "--quiet", "-t", "20", "-c", "1", "999"}
	code, out, errOut = ibscript(t, argv...)
	if want := "ibwarn: mad_rpc_rmpp: _do_madrpc failed; dport (Lid 999)\n"; code != exitOK || errOut != want || !strings.Contains(out, "1 packets transmitted, 0 received") {
		t.Errorf("%q: exit %d, stdout %q, stderr %q; want 0 and %q", argv, code, out, errOut, want)
	}
}
