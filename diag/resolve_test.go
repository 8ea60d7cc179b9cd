package diag_test

import (
	"strings"
	"testing"

	"github.com/ibscript/ibscript/diag"
)

// TestResolve: address texts and the flag that says how to read them
// (-L, -G, -D, or ibscript's target text) -> the port addressed, as
// resolve_portid_str addresses it (checked against the C tools on ibsim
// by tests/ibsimdiff's TestDiagQueryCLI: smpquery nodedesc 2abc queries
// LID 2, -D 0,257 and -D 5,1 go out of port 1, -G of a CA's node GUID
// is "can't resolve destination port"), or where it gives up: the C
// tools' -1, which they print as "can't resolve destination port ARG".
// A GUID is resolved to its LID through the SA, on the simulator's
// bundled fabric.
func TestResolve(t *testing.T) {
	env, _ := simEnv(t)
	for _, c := range []struct {
		name   string
		kind   diag.AddrKind
		in     string
		want   string // the target resolved, "" for an error
		readAs string // the warning's "read as", "" when read as typed
		err    string // part of the error
	}{
		{name: "lid", kind: diag.AddrLID, in: "2", want: "lid:2"},
		{name: "lid hex", kind: diag.AddrLID, in: "0x10", want: "lid:16"},
		{name: "lid octal", kind: diag.AddrLID, in: "010", want: "lid:8"},
		{name: "lid blank", kind: diag.AddrLID, in: " 2", want: "lid:2"},
		{name: "lid trailing text", kind: diag.AddrLID, in: "2abc", want: "lid:2", readAs: "lid 2"},
		{name: "lid hex trailing text", kind: diag.AddrLID, in: "0x2zz", want: "lid:2", readAs: "lid 2"},
		{name: "lid top unicast", kind: diag.AddrLID, in: "0xbfff", want: "lid:49151"},
		{name: "lid 0", kind: diag.AddrLID, in: "0", err: "not a unicast LID"},
		{name: "lid no digits", kind: diag.AddrLID, in: "abc", err: "not a unicast LID"},
		{name: "lid 0x", kind: diag.AddrLID, in: "0x", err: "not a unicast LID"},
		{name: "lid multicast", kind: diag.AddrLID, in: "0xc000", err: "not a unicast LID"},
		{name: "lid negative", kind: diag.AddrLID, in: "-3", err: "not a number of 16 bits"},
		{name: "lid past 16 bits", kind: diag.AddrLID, in: "70000", err: "not a number of 16 bits"},
		{name: "guid of a switch", kind: diag.AddrGUID, in: "0x0002c90300f00000", want: "lid:2"},
		{name: "guid of a CA port", kind: diag.AddrGUID, in: "0x0002c90300a00013", want: "lid:16"},
		{name: "guid trailing text", kind: diag.AddrGUID, in: "0x0002c90300a00013zz", want: "lid:16", readAs: "guid 0x0002c90300a00013"},
		{name: "guid of a CA node", kind: diag.AddrGUID, in: "0x0002c90300a00012", err: "ERR_NO_RECORDS"},
		{name: "guid unknown", kind: diag.AddrGUID, in: "0x1234", err: "ERR_NO_RECORDS"},
		{name: "guid 0", kind: diag.AddrGUID, in: "zz", err: "GUID 0"},
		{name: "route", kind: diag.AddrDR, in: "0,1,3", want: "dr:0,1,3"},
		{name: "route local", kind: diag.AddrDR, in: "0", want: "dr:0"},
		{name: "route first element as typed", kind: diag.AddrDR, in: "5,1", want: "dr:5,1"},
		{name: "route byte", kind: diag.AddrDR, in: "0,257", want: "dr:0,1", readAs: "route 0,1"},
		{name: "route atoi", kind: diag.AddrDR, in: "0,300", want: "dr:0,44", readAs: "route 0,44"},
		{name: "route trailing comma", kind: diag.AddrDR, in: "0,1,", want: "dr:0,1", readAs: "route 0,1"},
		{name: "route no digits", kind: diag.AddrDR, in: "0,x", want: "dr:0,0", readAs: "route 0,0"},
		{name: "route negative", kind: diag.AddrDR, in: "0,-1", want: "dr:0,255", readAs: "route 0,255"},
		{name: "route saturates", kind: diag.AddrDR, in: "0,99999999999999999999", want: "dr:0,255", readAs: "route 0,255"},
		{name: "route empty", kind: diag.AddrDR, in: "", err: "empty directed route"},
		{name: "route too long", kind: diag.AddrDR, in: strings.Repeat("0,", 64) + "1", err: "64 hops"},
		{name: "target lid", kind: diag.AddrTarget, in: "lid:5", want: "lid:5"},
		{name: "target bare lid", kind: diag.AddrTarget, in: "5", want: "lid:5"},
		{name: "target guid", kind: diag.AddrTarget, in: "guid:0x0002c90300f00000", want: "lid:2"},
		{name: "target route", kind: diag.AddrTarget, in: "dr:0,1", want: "dr:0,1"},
		{name: "target strict", kind: diag.AddrTarget, in: "2abc", err: "is not a number"},
		{name: "target lid 0", kind: diag.AddrTarget, in: "lid:0", err: "not a unicast LID"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a, err := env.Resolve(t.Context(), c.kind, c.in)
			switch {
			case c.err != "":
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Resolve(%v, %q) = %v, %v; want an error containing %q", c.kind, c.in, a.Target, err, c.err)
				}
			case err != nil:
				t.Fatalf("Resolve(%v, %q): %v", c.kind, c.in, err)
			case a.Target.String() != c.want || a.ReadAs != c.readAs:
				t.Errorf("Resolve(%v, %q) = %v read as %q; want %s read as %q", c.kind, c.in, a.Target, a.ReadAs, c.want, c.readAs)
			}
		})
	}
	if env.Session.LastDiscovery() != nil {
		t.Error("a GUID was resolved by discovery, not by the SA")
	}
}
