// Package archtest keeps the layers of ibscript honest: it reads the import
// graph with `go list -json ./...` and fails on any edge that breaks the
// dependency rules of the project (README "Layout").
package archtest

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/ibscript/ibscript"

// rule says which packages of this module a package may import. Patterns
// ending in "/..." match a package and everything below it.
type rule struct {
	pkg   string
	allow []string
	// third lists the third-party import path prefixes allowed.
	third []string
	// denyStd lists standard packages it may not import, in its code or
	// its tests.
	denyStd []string
	// testAllow lists what its tests may import beyond allow and testOnly.
	testAllow []string
	// deny lists packages of this module its code may not import even
	// when allow matches them (its tests may).
	deny []string
}

var rules = []rule{
	{pkg: "mad/...", allow: []string{"mad/..."}},
	{pkg: "fabric", allow: nil},
	{pkg: "native/...", allow: nil, third: []string{"golang.org/x/sys"}},
	// The in-memory model of the kernel implements native/umad's Dev.
	{pkg: "native/umad/umadtest", allow: []string{"native/umad"}},
	// The in-memory model of the rdma_cm device implements native/rdmacm's Dev.
	{pkg: "native/rdmacm/rdmacmtest", allow: []string{"native/rdmacm"}},
	{pkg: "topo", allow: []string{"mad/..."}},
	// libibnetdisc's cache file, to and from the topology model.
	{pkg: "topo/ibndcache", allow: []string{"topo", "mad/..."}},
	// Routing analytics over the topology and its tables: no I/O, no Lua.
	{pkg: "topo/analyze", allow: []string{"topo", "mad/..."}},
	// The topology exports (Slurm, Graphviz, JSON graph): no Lua, no I/O
	// but the writer given.
	{pkg: "topo/export", allow: []string{"topo", "mad/..."}},
	{pkg: "fabric/mux", allow: []string{"fabric", "mad/...", "internal/intmap"}},
	// A planarized port's SMI and GSI sides as one Transport (SMPs on
	// the SMI side, the other classes on the GSI side): any backend's.
	{pkg: "fabric/pair", allow: []string{"fabric"}, testAllow: []string{"mad/..."}},
	{pkg: "fabric/kernel", allow: []string{"fabric", "fabric/mux", "fabric/pair", "native/...", "mad/..."}, third: []string{"golang.org/x/sys"}},
	// sendmmsg and the raw sockaddrs for it come from x/sys/unix.
	{pkg: "fabric/ibsim", allow: []string{"fabric", "fabric/mux", "mad/..."}, third: []string{"golang.org/x/sys"}},
	{pkg: "fabric/fabrictest", allow: []string{"fabric", "fabric/mux", "mad/..."}},
	{pkg: "fabric/record", allow: []string{"fabric", "mad/..."}},
	// RMPP in user space in front of any Transport (the engine's driver).
	// Its tests drive a mux.Mux as the wire that bounces a MAD back as
	// ibsim does (mux.Mux.Lost), beside fabrictest's pipes.
	{pkg: "fabric/rmppdriver", allow: []string{"fabric", "mad/..."}, testAllow: []string{"fabric/mux"}},
	{pkg: "sim", allow: []string{"fabric", "fabric/mux", "fabric/pair", "mad/...", "topo"}},
	// Test scaffolding: the bundled fabric and an engine session on it.
	{pkg: "sim/simtest", allow: []string{"sim", "engine", "fabric"}},
	{pkg: "engine", allow: []string{"fabric", "fabric/rmppdriver", "mad/...", "topo", "internal/intmap"}},
	// RDMA CM: librdmacm's layer over a fabric.CMDevice (the kernel's
	// rdma_cm, or the user-space IB CM of rdmacm/ibcm); routes and remote
	// GIDs from the engine's SA queries. No Lua.
	{pkg: "rdmacm", allow: []string{"engine", "fabric", "mad/...", "rdmacm/ibcm"}},
	// The user-space RDMA CM (ucma, cma and ib_cm over class 0x07) as a
	// fabric.CMDevice.
	{pkg: "rdmacm/ibcm", allow: []string{"engine", "fabric", "mad/..."}},
	// The CM conformance suite, for tests.
	{pkg: "rdmacm/cmtest", allow: []string{"rdmacm", "mad/..."}},
	// The hot-path hash map: the standard library only.
	{pkg: "internal/intmap", allow: nil},
	// Every package's TestMain: goleak's check, waiting as a loaded
	// machine needs.
	{pkg: "internal/leaktest", allow: nil, third: []string{"go.uber.org/goleak"}},
	// Plan results and reporters: the standard library only.
	{pkg: "plan", allow: nil},
	// The infiniband-diags tools' data and text (iblinkinfo, perfquery,
	// saquery, ...): built on the engine's queries and sweeps, no Lua.
	{pkg: "diag", allow: []string{"engine", "fabric", "mad/...", "topo", "topo/analyze", "topo/ibndcache", "internal/intmap"}},
	// The Prometheus exporter: sweeps with the engine, serves through
	// client_golang; no Lua.
	{pkg: "exporter", allow: []string{"engine", "fabric", "mad/...", "topo"}, third: []string{"github.com/prometheus/client_golang", "github.com/prometheus/client_model",
		"github.com/prometheus/common"}}, // expfmt: Handler writes the other collectors' families in the text format
	// Opening a fabric by URI: the one place a backend is picked, between
	// the backends and the engine below and cmd and Go programs above. No
	// Lua. Its tests drive the fake kernel and a real ibsim.
	{pkg: "host", allow: []string{"engine", "fabric", "fabric/kernel", "fabric/ibsim", "fabric/record", "sim"}, testAllow: []string{"internal/ibsimtest", "mad/...", "native/umad", "plan"}},
	// No unsafe: the bindings use gopher-lua's exported API only, never
	// its unexported fields (embedders choose their gopher-lua version).
	{pkg: "bindings", allow: []string{"engine", "fabric", "mad/...", "topo", "topo/export", "plan", "diag", "rdmacm", "exporter"}, third: []string{"github.com/yuin/gopher-lua"}, denyStd: []string{"unsafe"}},
	// The Lua sim module over the embedded simulator (bindings.Options.Sim).
	{pkg: "bindings/simmod", allow: []string{"bindings", "sim"}, denyStd: []string{"unsafe"}},
	// cmd picks no backend itself: it opens fabrics through host.
	{pkg: "cmd/...", allow: []string{"..."}, deny: backends, third: []string{"github.com/yuin/gopher-lua", "github.com/peterh/liner", "golang.org/x/sys", "github.com/prometheus/client_golang", "github.com/prometheus/common",
		// The exporter's --web.config.file (TLS, basic auth) and systemd
		// socket activation, as exporter-toolkit serves them.
		"github.com/prometheus/exporter-toolkit", "github.com/coreos/go-systemd/v22", "go.yaml.in/yaml/v2"}},
	{pkg: "internal/...", allow: []string{"..."}, third: []string{"github.com/yuin/gopher-lua"}},
	// The example plans, embedded for tests that run away from the
	// repository (the real-kernel stage's guest).
	{pkg: "scripts", allow: nil},
	{pkg: "tests", allow: []string{"..."}},
	{pkg: "tests/ibsimdiff", allow: []string{"..."}},
	// A program outside the module, built and run against host.Open.
	{pkg: "tests/extmod", allow: []string{"..."}},
}

// backends are the fabric.Fabric implementations host picks from by URI.
var backends = []string{"fabric/kernel", "fabric/ibsim", "fabric/record"}

// testOnly may be imported by any package's tests.
var testOnly = []string{"sim", "sim/simtest", "internal/rocetest", "internal/keytest", "fabric/fabrictest", "mad/madtest", "topo", "internal/fattree", "internal/topotest", "native/umad/umadtest", "native/rdmacm/rdmacmtest", "internal/jsonschema", "rdmacm/cmtest", "internal/syncbuf", "internal/treydock", "internal/leaktest", "internal/simkernel", "internal/freeport"}

// xtestOnly may also be imported by external (package x_test) tests: they
// use a package as its callers do, and its examples show a whole session.
var xtestOnly = []string{"engine", "rdmacm", "bindings/simmod"}

var testThird = []string{"github.com/google/go-cmp", "go.uber.org/goleak", "github.com/yuin/gopher-lua", "github.com/prometheus/client_golang", "github.com/prometheus/client_model", "github.com/prometheus/common",
	"golang.org/x/crypto/bcrypt"} // the exporter's basic-auth tests hash their passwords

type pkgInfo struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func match(pattern, rel string) bool {
	if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return rel == base || strings.HasPrefix(rel, base+"/")
	}
	return rel == pattern
}

func ruleFor(rel string) *rule {
	// The most specific rule wins: exact matches before patterns.
	for i := range rules {
		if rules[i].pkg == rel {
			return &rules[i]
		}
	}
	for i := range rules {
		if match(rules[i].pkg, rel) {
			return &rules[i]
		}
	}
	return nil
}

func isStd(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}

func allowed(r *rule, imp string, test bool) bool {
	return allowedFrom(r, imp, test, nil)
}

func allowedFrom(r *rule, imp string, test bool, extra []string) bool {
	if isStd(imp) {
		for _, d := range r.denyStd {
			if imp == d {
				return false
			}
		}
		return true
	}
	if rel, ok := strings.CutPrefix(imp, module+"/"); ok {
		if test {
			for _, p := range append(append(extra, testOnly...), r.testAllow...) {
				if match(p, rel) {
					return true
				}
			}
		}
		for _, p := range r.deny {
			if !test && match(p, rel) {
				return false
			}
		}
		for _, p := range r.allow {
			if match(p, rel) {
				return true
			}
		}
		return false
	}
	third := r.third
	if test {
		third = append(append([]string{}, third...), testThird...)
	}
	for _, p := range third {
		if imp == p || strings.HasPrefix(imp, p+"/") {
			return true
		}
	}
	return false
}

func TestImportRules(t *testing.T) {
	touchSources(t)
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	n := 0
	for {
		var p pkgInfo
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if rel == "" {
			rel = "."
		}
		r := ruleFor(rel)
		if r == nil {
			t.Errorf("package %s has no import rule: add one to internal/archtest", rel)
			continue
		}
		check := func(imps []string, test bool, extra ...string) {
			for _, imp := range imps {
				if imp == p.ImportPath || strings.HasPrefix(imp, p.ImportPath+" ") {
					continue
				}
				if !allowedFrom(r, imp, test, extra) {
					kind := "imports"
					if test {
						kind = "test imports"
					}
					t.Errorf("%s %s %s: not allowed by rule %q", rel, kind, imp, r.pkg)
				}
			}
		}
		check(p.Imports, false)
		check(p.TestImports, true)
		check(p.XTestImports, true, xtestOnly...)
	}
	if n < 5 {
		t.Fatalf("go list found only %d packages", n)
	}
}

// TestRulesReject makes sure the checker would catch a bad edge.
func TestRulesReject(t *testing.T) {
	for _, c := range []struct{ pkg, imp string }{
		{"mad", module + "/engine"},
		{"mad/smp", module + "/fabric"},
		{"engine", module + "/sim"},
		{"engine", "github.com/yuin/gopher-lua"},
		{"native/umad", module + "/fabric"},
		{"sim", module + "/engine"},
		{"bindings", module + "/sim"},
		{"bindings", "unsafe"},
		{"fabric", module + "/mad"},
		{"engine", module + "/rdmacm"},
		{"rdmacm", "github.com/yuin/gopher-lua"},
		{"rdmacm/ibcm", module + "/rdmacm"},
		{"cmd/ibscript", module + "/fabric/kernel"},
		{"cmd/ibscript", module + "/fabric/ibsim"},
		{"host", module + "/bindings"},
		{"host", "github.com/yuin/gopher-lua"},
	} {
		r := ruleFor(c.pkg)
		if r == nil || allowed(r, c.imp, false) {
			t.Errorf("%s importing %s should be refused", c.pkg, c.imp)
		}
	}
}

// touchSources stats every Go file of the module, so that go test's cache
// (which records the files a test reads, not what go list reads for it)
// reruns this test whenever an import may have changed.
func touchSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			return f.Close()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
