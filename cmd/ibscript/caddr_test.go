package main

import "testing"

// TestCAddress: destination arguments as the C tools read them
// (strtol/strtoull base 0 for LIDs and GUIDs, str2drpath's atoi bytes
// for routes), each checked against the C tools on ibsim: smpquery
// nodedesc 2abc queries LID 2, -D 0,257 and -D 5,1 go out of port 1.
func TestCAddress(t *testing.T) {
	for _, c := range []struct{ kind, in, want string }{
		{"lid", "2", "2"},
		{"lid", "2abc", "2"},
		{"lid", "0x2zz", "2"},
		{"lid", " 2", "2"},
		{"lid", "010", "8"},
		{"lid", "abc", "0"},
		{"lid", "0x", "0"},
		{"lid", "-3", "-3"},
		{"lid", "70000", "70000"},
		{"guid", "0x200001zz", "0x200001"},
		{"guid", "zz", "0x0"},
		{"guid", "0X1F", "0x1f"},
		{"dr", "0,1,3", "0,1,3"},
		{"dr", "5,1", "0,1"},
		{"dr", "0,257", "0,1"},
		{"dr", "0,1,258", "0,1,2"},
		{"dr", "0,300", "0,44"},
		{"dr", "0,1,", "0,1"},
		{"dr", "0,x", "0,0"},
		{"dr", "0,-1", "0,255"},
		{"dr", "0,99999999999999999999", "0,255"},
		{"dr", "0", "0"},
	} {
		if got := cAddress(c.kind, c.in); got != c.want {
			t.Errorf("cAddress(%s, %q) = %q, want %q", c.kind, c.in, got, c.want)
		}
	}
}

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
