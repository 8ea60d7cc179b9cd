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
