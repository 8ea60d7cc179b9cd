package main

import "testing"

// TestCStrtoul: strtoul(s, &end, 0) as glibc gives it, and whether C's
// checks of *end and errno (process_opt's -t and -y) find it whole.
func TestCStrtoul(t *testing.T) {
	const top = ^uint64(0)
	for _, c := range []struct {
		in    string
		v     uint64
		whole bool
	}{
		{"", 0, true}, {"12", 12, true}, {" 12", 12, true}, {"12 ", 12, false},
		{"0x20", 32, true}, {"0X1f", 31, true}, {"010", 8, true}, {"08", 0, false},
		{"0x", 0, false}, {"2x", 2, false}, {"zz", 0, false}, {"-", 0, false}, {"+7", 7, true},
		{"-1", top, true}, {"-0", 0, true},
		{"18446744073709551615", top, true}, {"0xffffffffffffffff", top, true},
		{"18446744073709551616", top, false}, {"0x10000000000000000", top, false},
	} {
		v, whole := cStrtoul(c.in)
		if v != c.v || whole != c.whole {
			t.Errorf("cStrtoul(%q) = %d, %v; want %d, %v", c.in, v, whole, c.v, c.whole)
		}
	}
}
