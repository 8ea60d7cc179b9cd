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
