package ibsimdiff

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/topo/ibndcache"
)

// libibnetdisc's cache file (ibnetdiscover --cache, --load-cache), both
// ways: a cache the C ibnetdiscover wrote prints through ibscript as it
// prints through the C tool, and a cache ibscript wrote prints through the
// C tool as the C tool prints the live fabric. No fabric is asked while a
// cache is loaded: the output of a cache is compared on the same live
// fabric only to have one.

// cacheTopology is the fabric the cache tests run on: two switches, a
// router, multi-port CAs, unused ports, mixed widths and speeds.
var cacheTopology = diagTopologies[0]

// cacheOutputs are the ibnetdiscover outputs compared from a cache.
var cacheOutputs = [][]string{{"-l"}, {"-H"}, {"-S"}, {"-R"}, {"-p"}, {"-g", "-l"}, {"-g", "-p"}}

func TestCacheMatchesIBNetDiscover(t *testing.T) {
	dt := cacheTopology
	s := diagSim(t, dt.path)
	dir := t.TempDir()
	cCache, ourCache := filepath.Join(dir, "c.cache"), filepath.Join(dir, "ibscript.cache")
	if r := cTool(t, s, dt.host, "ibnetdiscover", "--cache", cCache); r.code != 0 {
		t.Fatalf("ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	if r := ibscriptTool(t, s, dt.host, "ibnetdiscover", "--cache", ourCache); r.code != 0 {
		t.Fatalf("ibscript ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	live := map[string]toolResult{}
	for _, args := range cacheOutputs {
		live[strings.Join(args, " ")] = cTool(t, s, dt.host, "ibnetdiscover", args...)
	}
	liveTopo := cTool(t, s, dt.host, "ibnetdiscover")
	for _, cache := range []string{cCache, ourCache} {
		for _, args := range cacheOutputs {
			what := "ibnetdiscover --load-cache " + filepath.Base(cache) + " " + strings.Join(args, " ")
			args = append([]string{"--load-cache", cache}, args...)
			want := cTool(t, s, dt.host, "ibnetdiscover", args...)
			if l := live[strings.Join(args[2:], " ")]; string(l.stdout) != string(want.stdout) {
				t.Errorf("%s: the C tool prints from the cache what it does not print live:\n%s", what, lineDiff(string(l.stdout), string(want.stdout)))
			}
			got := ibscriptTool(t, s, dt.host, "ibnetdiscover", args...)
			if string(want.stdout) != string(got.stdout) || want.code != got.code {
				t.Errorf("%s: exit %d, the C tool's %d (stderr %s):\n%s", what, got.code, want.code, got.stderr, lineDiff(string(want.stdout), string(got.stdout)))
			}
		}
		want := cTool(t, s, dt.host, "ibnetdiscover", "--load-cache", cache)
		if w, l := normDate(string(want.stdout)), normDate(string(liveTopo.stdout)); w != l {
			t.Errorf("ibnetdiscover --load-cache %s: the C tool prints from the cache what it does not print live:\n%s", filepath.Base(cache), lineDiff(l, w))
		}
		got := ibscriptTool(t, s, dt.host, "ibnetdiscover", "--load-cache", cache)
		if w, g := normDate(string(want.stdout)), normDate(string(got.stdout)); w != g || want.code != got.code {
			t.Errorf("ibnetdiscover --load-cache %s: exit %d, the C tool's %d (stderr %s):\n%s", filepath.Base(cache), got.code, want.code, got.stderr, lineDiff(w, g))
		}
	}
	// The two files hold the same records in the same order (libibnetdisc's
	// node list and port hash order, which discovery order fixes) with the
	// same keys, LIDs and links; only the attribute blocks differ: the
	// model keeps the fields the tools print, not the blocks' bytes
	// (ibndcache.FromFabric), and the C tools print the same of both.
	cb, err := os.ReadFile(cCache)
	if err != nil {
		t.Fatal(err)
	}
	ob, err := os.ReadFile(ourCache)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := ibndcache.Decode(cCache, cb)
	if err != nil {
		t.Fatal(err)
	}
	of, err := ibndcache.Decode(ourCache, ob)
	if err != nil {
		t.Fatal(err)
	}
	if len(cb) != len(ob) || !bytes.Equal(cb[:ibndcache.HeaderLen], ob[:ibndcache.HeaderLen]) || len(cf.Nodes) != len(of.Nodes) || len(cf.Ports) != len(of.Ports) {
		t.Fatalf("ibscript's cache: %d bytes, header %x; the C tool's %d bytes, header %x", len(ob), ob[:min(len(ob), ibndcache.HeaderLen)], len(cb), cb[:ibndcache.HeaderLen])
	}
	for i := range cf.Nodes {
		c, o := cf.Nodes[i], of.Nodes[i]
		c.Info, c.SwitchInfo, o.Info, o.SwitchInfo = [64]byte{}, [64]byte{}, [64]byte{}, [64]byte{}
		if fmt.Sprint(c) != fmt.Sprint(o) {
			t.Errorf("node record %d: %+v, the C tool's %+v", i, o, c)
		}
	}
	for i := range cf.Ports {
		c, o := cf.Ports[i], of.Ports[i]
		c.Info, o.Info = [64]byte{}, [64]byte{}
		if c != o {
			t.Errorf("port record %d: %+v, the C tool's %+v", i, o, c)
		}
	}
}

// TestCacheBadFile: a cache that cannot be loaded ends ibnetdiscover
// --load-cache as it ends the C tool (its iberror line on stdout, status
// 255), and ibscript says on stderr what is wrong and where.
func TestCacheBadFile(t *testing.T) {
	dt := cacheTopology
	s := diagSim(t, dt.path)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.cache")
	if r := cTool(t, s, dt.host, "ibnetdiscover", "--cache", good); r.code != 0 {
		t.Fatalf("ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"missing", "no such file or directory"},
		{"truncated", "truncated.cache: offset "},
		{"magic", "magic.cache: offset 0: invalid ibnetdiscover cache: magic 0x00000000"},
	} {
		p := filepath.Join(dir, tc.name+".cache")
		switch tc.name {
		case "truncated":
			os.WriteFile(p, b[:len(b)/2], 0o644)
		case "magic":
			os.WriteFile(p, append(make([]byte, 4), b[4:]...), 0o644)
		}
		for _, args := range [][]string{{"--load-cache", p}, {"--load-cache", p, "-p"}} {
			want := cTool(t, s, dt.host, "ibnetdiscover", args...)
			got := ibscriptTool(t, s, dt.host, "ibnetdiscover", args...)
			w := sbinIBError.ReplaceAllString(string(want.stdout), "$1: iberror: ")
			if want.code != 255 || got.code != want.code || string(got.stdout) != w {
				t.Errorf("%s: exit %d, stdout %q; the C tool's %d, %q", strings.Join(args, " "), got.code, got.stdout, want.code, w)
			}
			if !strings.Contains(string(got.stderr), tc.want) {
				t.Errorf("%s: stderr %q does not say %q", strings.Join(args, " "), got.stderr, tc.want)
			}
		}
	}
}
