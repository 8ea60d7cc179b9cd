package ibsimdiff

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/topo/ibndcache"
)

// TestCacheEditMatchesC: `ibscript ibcacheedit` writes the very bytes
// infiniband-diags' ibcacheedit writes, prints what it prints and exits
// as it does, on the caches the C ibnetdiscover --cache wrote of each
// diag fabric: every switch, CA, system image and port GUID edit (a
// switch's port, a CA's second port), several at once, GUIDs that are
// not there (a router's GUID as a CA's, a port of another node), values
// the C tool refuses, no or one file, an unreadable original, a file
// that is no cache, a new file in a missing directory, and the original
// written over; and net.odd-cacheorder, whose cache libibnetdisc writes
// back in another order.
func TestCacheEditMatchesC(t *testing.T) {
	if _, err := exec.LookPath("ibcacheedit"); err != nil {
		t.Skip("infiniband-diags' ibcacheedit is not installed")
	}
	// net.odd-cacheorder: a cache whose ports the C tool writes in
	// another order once loaded.
	for _, dt := range append(diagTopologies[:len(diagTopologies):len(diagTopologies)], struct{ path, host string }{"../topologies/net.odd-cacheorder", "H"}) {
		t.Run(topoName(dt.path), func(t *testing.T) {
			s := diagSim(t, dt.path)
			dir := t.TempDir()
			orig := filepath.Join(dir, "c.cache")
			if r := cTool(t, s, dt.host, "ibnetdiscover", "--cache", orig); r.code != 0 {
				t.Fatalf("ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
			}
			cf, err := ibndcache.Read(orig)
			if err != nil {
				t.Fatal(err)
			}
			for _, args := range cacheEdits(cf, orig, dir) {
				diffCacheEdit(t, dir, args)
			}
		})
	}
}

// cacheEdits are the command lines compared on one cache.
func cacheEdits(cf *ibndcache.File, orig, dir string) [][]string {
	h := func(v uint64) string { return fmt.Sprintf("0x%x", v) }
	var out [][]string
	add := func(args ...string) { out = append(out, append(args, orig, "NEW")) }
	for _, n := range cf.Nodes {
		sys := binary.BigEndian.Uint64(n.Info[4:12])
		switch n.Type {
		case 2:
			add("--switchguid", h(n.GUID)+":0xdead")
			add("--portguid", h(n.GUID)+":"+h(n.GUID)+":0xbeef")
			add("--caguid", h(n.GUID)+":0x1") // a switch is no CA
		case 1:
			add("--caguid", h(n.GUID)+":0x1234")
			for _, k := range n.Ports {
				add("--portguid", h(n.GUID)+":"+h(k.GUID)+":0x77")
			}
			add("--portguid", h(n.GUID)+":0x42:0x77")
		case 3:
			add("--caguid", h(n.GUID)+":0x5") // a router is no CA
		}
		add("--sysimgguid", fmt.Sprintf("%#x:%d", sys, 99))
	}
	sw, ca := firstOfType(cf, 2), firstOfType(cf, 1)
	if sw != nil && ca != nil {
		add("--switchguid", h(sw.GUID)+":0x5", "--caguid", h(ca.GUID)+":0x6", "--sysimgguid", h(binary.BigEndian.Uint64(ca.Info[4:12]))+":0x7",
			"--portguid", h(ca.GUID)+":"+h(ca.Ports[0].GUID)+":0x8")
		// The edits go in the C tool's order: the CA's GUID is changed
		// before --portguid looks for the node.
		add("--caguid", h(ca.GUID)+":0x6", "--portguid", h(ca.GUID)+":"+h(ca.Ports[0].GUID)+":0x8")
		add("--swi", h(sw.GUID)+":0x5") // a long option's prefix
	}
	add()
	add("--caguid", "0x999999:0x1")
	add("--caguid", "zz:0x5")
	add("--caguid", "0x100006")
	add("--caguid", "0x100006:")
	add("--portguid", "1:2")
	add("-C", "mlx4_0")
	out = append(out, []string{}, []string{orig}, []string{orig, "NEW", "extra"},
		[]string{filepath.Join(dir, "none.cache"), "NEW"}, []string{"/etc/hostname", "NEW"},
		[]string{orig, filepath.Join(dir, "nodir", "new.cache")})
	return out
}

func firstOfType(cf *ibndcache.File, typ uint8) *ibndcache.Node {
	for i := range cf.Nodes {
		if cf.Nodes[i].Type == typ && len(cf.Nodes[i].Ports) > 0 {
			return &cf.Nodes[i]
		}
	}
	return nil
}

// diffCacheEdit runs both tools on args (NEW standing for each one's own
// new file) and compares their stdout, status and files.
func diffCacheEdit(t *testing.T, dir string, args []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	run := func(name string, argv ...string) (toolResult, []byte) {
		newFile := filepath.Join(dir, name+".new.cache")
		os.Remove(newFile)
		a := make([]string, len(args))
		for i, s := range args {
			a[i] = strings.ReplaceAll(s, "NEW", newFile)
		}
		r := runCmd(t, exec.CommandContext(ctx, argv[0], append(argv[1:], a...)...))
		b, _ := os.ReadFile(newFile)
		return r, b
	}
	want, wantFile := run("c", "ibcacheedit")
	got, gotFile := run("ibscript", ibscriptBinary(t), "ibcacheedit")
	what := "ibcacheedit " + strings.Join(args, " ")
	if string(want.stdout) != string(got.stdout) || want.code != got.code {
		t.Errorf("%s: exit %d, the C tool's %d (stderr %s):\n%s", what, got.code, want.code, got.stderr, lineDiff(string(want.stdout), string(got.stdout)))
	}
	if !bytes.Equal(wantFile, gotFile) {
		t.Errorf("%s: ibscript wrote %d bytes, the C tool %d, not the same", what, len(gotFile), len(wantFile))
	}
	if want.code == 0 && len(wantFile) == 0 && !strings.Contains(what, "nodir") {
		t.Errorf("%s: the C tool wrote nothing: nothing compared", what)
	}
}

// TestCacheEditOverOriginal: both tools write over the original when it
// is named as the new file too, with the same bytes.
func TestCacheEditOverOriginal(t *testing.T) {
	if _, err := exec.LookPath("ibcacheedit"); err != nil {
		t.Skip("infiniband-diags' ibcacheedit is not installed")
	}
	dt := diagTopologies[0]
	s := diagSim(t, dt.path)
	dir := t.TempDir()
	c, g := filepath.Join(dir, "c.cache"), filepath.Join(dir, "g.cache")
	if r := cTool(t, s, dt.host, "ibnetdiscover", "--cache", c); r.code != 0 {
		t.Fatalf("ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(g, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cf, err := ibndcache.Read(c)
	if err != nil {
		t.Fatal(err)
	}
	edit := fmt.Sprintf("0x%x:0x1", cf.Nodes[0].GUID)
	if r := runCmd(t, exec.CommandContext(t.Context(), "ibcacheedit", "--switchguid", edit, "--caguid", edit, c, c)); r.code != 255 {
		// One of the two finds nothing: the C tool exits before writing.
		t.Fatalf("C ibcacheedit: status %d, want 255: %s", r.code, r.stdout)
	}
	flag := "--caguid"
	if cf.Nodes[0].Type == 2 {
		flag = "--switchguid"
	}
	rc := runCmd(t, exec.CommandContext(t.Context(), "ibcacheedit", flag, edit, c, c))
	rg := runCmd(t, exec.CommandContext(t.Context(), ibscriptBinary(t), "ibcacheedit", flag, edit, g, g))
	cb, _ := os.ReadFile(c)
	gb, _ := os.ReadFile(g)
	if rc.code != 0 || rg.code != 0 || !bytes.Equal(cb, gb) || bytes.Equal(cb, b) {
		t.Errorf("over the original: C status %d, ibscript %d (%s); the files are the same: %v, changed: %v", rc.code, rg.code, rg.stderr, bytes.Equal(cb, gb), !bytes.Equal(cb, b))
	}
}
