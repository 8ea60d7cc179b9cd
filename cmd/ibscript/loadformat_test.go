package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLoadRefusesOtherFormats: what is not a topology, a recording, a
// node-name map or a cache is an error naming the file and line and what
// was expected, status 2: fabric.load("FooBar=1") returned an empty
// fabric, and validate.lua --arg reference=FILE then failed every node as
// "extra" with status 1.
func TestLoadRefusesOtherFormats(t *testing.T) {
	dir := t.TempDir()
	foo := filepath.Join(dir, "foo.topo")
	passwd := filepath.Join(dir, "passwd")
	if err := os.WriteFile(foo, []byte("FooBar=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(passwd, []byte("root:x:0:0:root:/root:/bin/bash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"fabric.load", []string{"--fabric", "sim:", "--allow-path", dir, "-e", `fabric.load("` + foo + `")`}, foo + ":1: not a topology line"},
		{"sim:", []string{"--fabric", "sim:" + passwd, "-e", "print(1)"}, passwd + ":1: not a topology line"},
		{"reference", []string{"run", "--fabric", "sim:", "../../scripts/validate.lua", "--arg", "reference=" + foo}, "--arg reference=" + foo + ": fabric.load: " + foo + ":1: not a topology line"},
		{"topology.lua reference", []string{"run", "--fabric", "sim:", "../../scripts/checks/topology.lua", "--arg", "reference=" + passwd}, passwd + ":1: not a topology line"},
		{"replay:", []string{"--fabric", "replay:" + passwd, "-e", "print(1)"}, passwd + ": record: line 1: not a recording"},
		{"node-name-map", []string{"--fabric", "sim:", "--node-name-map", foo, "-e", "print(1)"}, foo + ":1:"},
		{"load-cache", []string{"ibnetdiscover", "--fabric", "sim:", "--load-cache", passwd}, "invalid ibnetdiscover cache"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := ibscript(t, c.args...)
			want := exitError
			if c.name == "load-cache" {
				want = 255 // ibnetdiscover's IBEXIT
			}
			if code != want || !strings.Contains(errOut+out, c.want) {
				t.Errorf("exit %d, want %d; stdout %q; stderr %q; want %q", code, want, out, errOut, c.want)
			}
			if strings.Contains(out+errOut, "extra-node") || strings.Contains(out+errOut, "root:x") {
				t.Errorf("output: %q %q", out, errOut)
			}
		})
	}
}
