package ibsimdiff

import (
	"strings"
	"testing"
)

// TestDuplicateGUIDMatchesCTools: with two switches of one node GUID (SwC
// given SwB's 0x200001 through ibsim's console), the infiniband-diags
// personalities see what libibnetdisc sees, one node whose ports the
// second switch's links are added to (SwB's port 3, down, linked to SwA's
// port 3; its port 4 to itself), SwC's CA never reached, and exit 0:
// ibnetdiscover, iblinkinfo and ibqueryerrors print what the C tools
// print (issue 34 item 4). ibscript's own discover and validate.lua still
// report the duplicate GUID as the fault it is.
func TestDuplicateGUIDMatchesCTools(t *testing.T) {
	s, _ := privateSim(t, "../topologies/net.dup-guid")
	if out, err := s.Console(t.Context(), `Guid "SwC" 0x200001`); err != nil {
		t.Fatalf("Guid: %v (%s)", err, out)
	}
	r := diffTool(t, s, "H1", "ibnetdiscover")
	if r.code != 0 || !strings.Contains(string(r.stdout), "[4]\t\"S-0000000000200001\"[4]") || strings.Contains(string(r.stdout), "H3") {
		t.Errorf("ibnetdiscover: exit %d, not the merged switch of the duplicate GUID: the duplicate was not compared\n%s", r.code, r.stdout)
	}
	for _, args := range [][]string{{"-p"}, {"-s"}, {"-l"}, {"-H"}, {"-S"}} {
		diffTool(t, s, "H1", "ibnetdiscover", args...)
	}
	diffTool(t, s, "H1", "iblinkinfo")
	diffTool(t, s, "H1", "iblinkinfo", "-l")
	diffTool(t, s, "H1", "iblinkinfo", "--switches-only")
	diffTool(t, s, "H1", "ibqueryerrors")
	diffTool(t, s, "H1", "ibswitches")
	diffTool(t, s, "H1", "ibhosts")

	own := ibscriptTool(t, s, "H1", "discover")
	if own.code == 0 || !strings.Contains(string(own.stderr), "0x0000000000200001") {
		t.Errorf("ibscript discover: exit %d, stderr %q: the duplicate GUID is not reported", own.code, own.stderr)
	}
	rep, code, _ := runValidate(t, s, "H1")
	if f := rep.verdicts("fail"); code != 1 || len(f) == 0 || !strings.Contains(strings.Join(f, "\n"), "node GUID 0x0000000000200001") {
		t.Errorf("validate.lua: exit %d, failed %q: the duplicate GUID is not a failure", code, f)
	}
}
