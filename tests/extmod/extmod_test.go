// Package extmod proves that a Go program outside this module opens
// fabrics by URI with package host alone: it writes a small main package
// with its own go.mod into a temporary directory, builds it with the go
// command, and runs it against sim:, ibsim: and replay:.
package extmod

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/ibsimtest"
)

// program is the outside program: it opens the URI of its first argument
// (recording to its second, when given), discovers the fabric, reads the
// local port's counters and prints what it found.
const program = `package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/host"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := &host.Options{Session: engine.Options{Timeout: 2 * time.Second}}
	if len(os.Args) > 2 {
		o.Record = os.Args[2]
	}
	h, err := host.Open(ctx, os.Args[1], o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	sess := h.Session()
	d, err := sess.Discover(ctx, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "discover:", err)
		os.Exit(2)
	}
	var names []string
	for _, n := range d.Fabric.Nodes {
		names = append(names, n.Type.String()+" "+n.Desc)
	}
	slices.Sort(names)
	fmt.Println(len(d.Fabric.Nodes), "nodes,", len(d.Fabric.Links()), "links,", len(d.Errors), "errors")
	for _, n := range names {
		fmt.Println(n)
	}
	p := sess.Port()
	pc, err := sess.PortCounters(ctx, engine.LID(p.LID), uint8(p.PortNum))
	if err != nil {
		fmt.Fprintln(os.Stderr, "counters:", err)
		os.Exit(2)
	}
	fmt.Println("local port", p.PortNum, "symbol errors", pc.SymbolErrorCounter)
	if err := h.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		os.Exit(2)
	}
}
`

// build writes program as a module of its own that requires this one
// (replaced by the repository), with this module's go.sum so that no
// checksum is looked up, and builds it. It needs the go command; the
// module cache has what go.sum lists once this module's tests built.
func build(t *testing.T) string {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		if goCmd, err = exec.LookPath(filepath.Join(runtime.GOROOT(), "bin", "go")); err != nil {
			t.Skipf("the go command is not found (PATH, or GOROOT %s): cannot build a program outside the module", runtime.GOROOT())
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mod := "module example.com/ibprobe\n\ngo 1.25.0\n\nrequire github.com/ibscript/ibscript v0.0.0\n\nreplace github.com/ibscript/ibscript => " + root + "\n"
	for name, data := range map[string][]byte{"go.mod": []byte(mod), "go.sum": sum, "main.go": []byte(program)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	exe := filepath.Join(dir, "ibprobe")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "build", "-o", exe, ".")
	cmd.Dir = dir
	// GOPROXY and the caches come from the environment; the module's
	// requirements are completed from go.sum and the module cache.
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of a module outside this one: %v\n%s", err, out)
	}
	return exe
}

// probe runs the built program with args.
func probe(t *testing.T, exe string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("ibprobe %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

const topology = "../topologies/net.2sw2path4hca"

// want is what the program prints of net.2sw2path4hca from any port.
const want = `6 nodes, 6 links, 0 errors
CA Hca1
CA Hca2
CA Hca3
CA Hca4
Switch Switch1
Switch Switch2
`

func TestOutsideModule(t *testing.T) {
	exe := build(t)
	topo, err := filepath.Abs(topology)
	if err != nil {
		t.Fatal(err)
	}
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	simOut := probe(t, exe, "sim:"+topo+"?node=Hca1", rec)
	if !strings.HasPrefix(simOut, want) || !strings.HasSuffix(simOut, "local port 1 symbol errors 0\n") {
		t.Errorf("sim: printed\n%s\nwant\n%s...", simOut, want)
	}
	// The recording made by the library plays back as the fabric.
	if got := probe(t, exe, "replay:"+rec); got != simOut {
		t.Errorf("replay: printed\n%s\nwant what sim: printed\n%s", got, simOut)
	}
	t.Run("ibsim", func(t *testing.T) {
		ibsimtest.Require(t)
		s, err := ibsimtest.Start(t.Context(), t.TempDir(), topology, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		if got := probe(t, exe, "ibsim:"+s.Sock+"?node=Hca1"); got != simOut {
			t.Errorf("ibsim: printed\n%s\nwant what sim: printed\n%s", got, simOut)
		}
	})
}
