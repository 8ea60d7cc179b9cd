package diag

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestVerifyIDsScriptRules: the script's checks on lines the simulators
// cannot make: a CA port GUID that is another node's GUID, a switch port
// GUID seen twice, a LID 0, and a zero GUID written as the script would
// catch it (the text "0", which ibnetdiscover never prints).
func TestVerifyIDsScriptRules(t *testing.T) {
	text := "switchguid=0x10(10)\n" +
		"Switch\t8 \"S-0000000000000010\"\t\t# \"sw\" base port 0 lid 1 lmc 0\n" +
		"switchguid=0x11(10)\n" +
		"Switch\t8 \"S-0000000000000011\"\t\t# \"sw2\" base port 0 lid 2 lmc 0\n" +
		"caguid=0x20\n" +
		"Ca\t2 \"H-0000000000000020\"\t\t# \"h\"\n" +
		"[1](11) \t\"S-0000000000000010\"[1]\t\t# lid 0 lmc 0 \"sw\" lid 1 4xSDR\n" +
		"caguid=0\n" +
		"Ca\t2 \"H-0000000000000000\"\t\t# \"z\"\n" +
		"[1](21) \t\"S-0000000000000010\"[2]\t\t# lid 3 lmc 0 \"sw\" lid 1 4xSDR\n"
	r, code := VerifyIDs(text)
	want := []string{
		"PortGUID 0x10 already defined for LID 1",
		"LID 0 found for ca NodeGUID 0x20",
		"PortGUID 0x11 is an invalid duplicate of a NodeGUID",
		"ca GUID 0x0 found with LID 3",
	}
	if d := cmp.Diff(want, r.Problems); d != "" || code != 1 {
		t.Errorf("status %d, problems (-want +got):\n%s", code, d)
	}
	if r.LIDs != 3 || r.NodeGUIDs != 3 || r.PortGUIDs != 3 {
		t.Errorf("counts %d %d %d, want 3 3 3", r.LIDs, r.NodeGUIDs, r.PortGUIDs)
	}
}
