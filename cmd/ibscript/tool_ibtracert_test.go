package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/internal/jsonschema"
)

// TestIBTracertPortsFileJSON: ibtracert --ports-file --format json is
// {"traces": [...]}, valid against docs/diag/ibtracert.schema.json, and
// a failing pair ends it with status 255, the traces so far and the error
// naming the line.
func TestIBTracertPortsFileJSON(t *testing.T) {
	raw, err := os.ReadFile("../../docs/diag/ibtracert.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	s, err := jsonschema.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	pairs := filepath.Join(t.TempDir(), "pairs")
	if err := os.WriteFile(pairs, []byte("# two pairs\n1 16\n2\t3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := ibscript(t, "ibtracert", "--fabric", "sim:", "--format", "json", "--ports-file", pairs)
	if code != exitOK || strings.Count(out, `"src_lid"`) != 2 {
		t.Fatalf("exit %d: %s%s", code, out, errOut)
	}
	if errs := s.Validate([]byte(out)); len(errs) > 0 {
		t.Errorf("not valid: %s\n%s", strings.Join(errs, "\n"), out)
	}
	if err := os.WriteFile(pairs, []byte("1 16\n1 999\n2 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = ibscript(t, "ibtracert", "--fabric", "sim:", "--format", "json", "--ports-file", pairs)
	if code != exitIBExit || !strings.Contains(out, "Failed to get route information at line 2") || strings.Count(out, `"src_lid"`) != 2 {
		t.Errorf("failing pair: exit %d:\n%s", code, out)
	}
	if errs := s.Validate([]byte(out)); len(errs) > 0 {
		t.Errorf("failing pair: not valid: %s\n%s", strings.Join(errs, "\n"), out)
	}
}
