package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/internal/jsonschema"
)

// TestAnalyzeCommand: ibscript analyze on a simulated fat tree passes
// every check and its JSON follows docs/diag/analyze.schema.json; on a
// topology file (no LFTs) the routing checks fail saying why, the
// fat-tree check runs; an unknown check is a usage error.
func TestAnalyzeCommand(t *testing.T) {
	raw, err := os.ReadFile("../../docs/diag/analyze.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := ibscript(t, "analyze", "--fabric", "sim:../../tests/topologies/fattree-50.net", "--format", "json")
	if code != exitOK {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if errs := s.Validate([]byte(out)); len(errs) > 0 {
		t.Errorf("not valid against docs/diag/analyze.schema.json:\n%s\n%s", strings.Join(errs, "\n"), out)
	}
	for _, want := range []string{`"credit_loops"`, `"bisection_gbps"`, `"sl2vl": "tables"`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	code, out, _ = ibscript(t, "analyze", "--load", "../../tests/topologies/fattree-50.net")
	if code != exitFailed || !strings.Contains(out, "error: credit-loops: no linear forwarding tables") || !strings.Contains(out, "Fat tree: 2 levels") {
		t.Errorf("--load: exit %d\n%s", code, out)
	}
	code, out, _ = ibscript(t, "analyze", "--load", "../../tests/topologies/fattree-50.net", "fat-tree", "--format", "json")
	if code != exitOK || len(s.Validate([]byte(out))) > 0 {
		t.Errorf("--load fat-tree: exit %d\n%s", code, out)
	}
	// A cache file: its routing checks say what it is.
	cache := filepath.Join(t.TempDir(), "fabric.cache")
	if code, _, errOut := ibscript(t, "ibnetdiscover", "--fabric", "sim:../../tests/topologies/fattree-50.net", "--cache", cache); code != exitOK {
		t.Fatalf("ibnetdiscover --cache: exit %d: %s", code, errOut)
	}
	code, out, _ = ibscript(t, "analyze", "--load", cache, "routes", "fat-tree")
	if code != exitFailed || !strings.Contains(out, "is an ibnetdiscover --cache file") || !strings.Contains(out, "Fat tree: 2 levels") {
		t.Errorf("--load cache: exit %d\n%s", code, out)
	}
	if code, _, errOut := ibscript(t, "analyze", "--load", "../../tests/topologies/fattree-50.net", "loops"); code != exitError || !strings.Contains(errOut, `unknown check "loops"`) {
		t.Errorf("unknown check: exit %d: %s", code, errOut)
	}
}
