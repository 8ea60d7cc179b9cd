package bindings

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite docs/lua-api.md")

const apiDocPath = "../docs/lua-api.md"

// TestAPIReference fails when docs/lua-api.md is not what the registration
// tables and examples generate.
func TestAPIReference(t *testing.T) {
	var b bytes.Buffer
	if err := WriteAPIReference(&b); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(apiDocPath), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(apiDocPath, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(apiDocPath)
	if err != nil {
		t.Fatalf("%v (run go test ./bindings -run TestAPIReference -update)", err)
	}
	if !bytes.Equal(have, b.Bytes()) {
		t.Errorf("docs/lua-api.md is stale: run go test ./bindings -run TestAPIReference -update")
	}
}

// TestExamples runs every function's example on the default fabric, in a
// directory that has the repository's tests/ as the repository root does
// (paths in examples are relative to it; what they write stays there);
// every function must have one.
func TestExamples(t *testing.T) {
	tests, err := filepath.Abs("../tests")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(tests, filepath.Join(dir, "tests")); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	var missing []string
	for _, m := range append(Modules(), SimModule()) {
		for _, f := range m.Funcs {
			if _, ok := examples[m.Name+"."+f.Name]; !ok {
				missing = append(missing, m.Name+"."+f.Name)
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("functions without an example in bindings/examples.go: %s", strings.Join(missing, ", "))
	}
	for name, src := range examples {
		t.Run(name, func(t *testing.T) {
			newState := newTestState
			if strings.HasPrefix(name, "sim.") || strings.Contains(src, "sim.link") {
				newState = newSimTestState // the sim module exists on sim backends only
			}
			L, env, out := newState(t)
			if err := DoString(L, src); err != nil {
				t.Fatalf("example:\n%s\nerror: %v", src, err)
			}
			if n := env.OpenResources(); n > 0 {
				t.Errorf("example leaves %d ports open", n)
			}
			t.Logf("output:\n%s", out)
		})
	}
}

// TestReadmeFabricSupport: the README shows the table of what each fabric
// supports as docs/lua-api.md does (FabricSupport).
func TestReadmeFabricSupport(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), FabricSupport) {
		t.Errorf("README.md lacks bindings.FabricSupport's table (or has another version of it):\n%s", FabricSupport)
	}
}
