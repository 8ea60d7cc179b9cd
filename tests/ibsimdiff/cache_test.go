package ibsimdiff

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/host"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
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

// makeCaches writes the cache of the live fabric with the C ibnetdiscover
// and with ibscript's, from cacheTopology's host.
func makeCaches(t *testing.T, s *ibsimtest.Sim) (cCache, ourCache string) {
	t.Helper()
	dir := t.TempDir()
	cCache, ourCache = filepath.Join(dir, "c.cache"), filepath.Join(dir, "ibscript.cache")
	if r := cTool(t, s, cacheTopology.host, "ibnetdiscover", "--cache", cCache); r.code != 0 {
		t.Fatalf("ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	if r := ibscriptTool(t, s, cacheTopology.host, "ibnetdiscover", "--cache", ourCache); r.code != 0 {
		t.Fatalf("ibscript ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	return cCache, ourCache
}

// diffFromCache compares the C tool and ibscript's on each cache with
// each set of arguments (after --load-cache FILE), and the C tool's
// output from the cache with its live output (args without the cache),
// except for -S, -G and -n: live, those scan part of the fabric, and a
// CA's node then holds only the port scanned from; from a cache, the
// whole node is printed and -n is ignored.
func diffFromCache(t *testing.T, s *ibsimtest.Sim, tool string, caches []string, argSets [][]string) {
	t.Helper()
	host := cacheTopology.host
	for _, args := range argSets {
		partial := slices.ContainsFunc(args, func(a string) bool { return a == "-S" || a == "-G" || a == "-n" })
		var live toolResult
		if !partial {
			live = cTool(t, s, host, tool, args...)
		}
		for _, cache := range caches {
			what := tool + " --load-cache " + filepath.Base(cache) + " " + strings.Join(args, " ")
			full := append([]string{"--load-cache", cache}, args...)
			want := cTool(t, s, host, tool, full...)
			if !partial && (string(live.stdout) != string(want.stdout) || live.code != want.code) {
				t.Errorf("%s: the C tool prints from the cache (status %d) what it does not print live (status %d):\n%s", what, want.code, live.code, lineDiff(string(live.stdout), string(want.stdout)))
			}
			if len(want.stdout) == 0 && !partial {
				t.Errorf("%s: the C tool printed nothing: nothing compared", what)
			}
			got := ibscriptTool(t, s, host, tool, full...)
			if string(want.stdout) != string(got.stdout) || want.code != got.code {
				t.Errorf("%s: exit %d, the C tool's %d (stderr %s):\n%s", what, got.code, want.code, got.stderr, lineDiff(string(want.stdout), string(got.stdout)))
			}
		}
	}
}

// TestCacheMatchesIBLinkInfo: iblinkinfo --load-cache, on the C tool's
// cache and on ibscript's.
func TestCacheMatchesIBLinkInfo(t *testing.T) {
	s := diagSim(t, cacheTopology.path)
	cCache, ourCache := makeCaches(t, s)
	// The host's port GUID and another CA's, for -S/-G.
	ibnd := string(cTool(t, s, cacheTopology.host, "ibnetdiscover").stdout)
	from := initiatedFrom.FindStringSubmatch(ibnd)
	var ca string
	for _, m := range caPortLine.FindAllStringSubmatch(ibnd, -1) {
		if from != nil && m[2] != from[2] && ca == "" {
			ca = "0x" + m[2]
		}
	}
	if from == nil || ca == "" {
		t.Fatalf("no local port or other CA in ibnetdiscover's output:\n%s", ibnd)
	}
	diffFromCache(t, s, "iblinkinfo", []string{cCache, ourCache}, [][]string{
		nil, {"-l"}, {"-p"}, {"-d"}, {"-l", "-p"}, {"--switches-only"}, {"--cas-only", "-l"},
		{"-S", ca}, {"-G", "0x" + from[2], "-l"}, {"-G", ca, "--switches-only"}, {"-n", "1"},
	})
	// No fabric is needed: ibscript reads the cache alone.
	argv := []string{"iblinkinfo", "--load-cache", ourCache, "--fabric", "ibsim:" + filepath.Join(t.TempDir(), "nosock")}
	r := runCmd(t, exec.CommandContext(t.Context(), ibscriptBinary(t), argv...))
	if want := cTool(t, s, cacheTopology.host, "iblinkinfo"); r.code != 0 || string(r.stdout) != string(want.stdout) {
		t.Errorf("iblinkinfo --load-cache without a fabric: exit %d (stderr %s):\n%s", r.code, r.stderr, lineDiff(string(want.stdout), string(r.stdout)))
	}
	for _, args := range [][]string{{"--load-cache", ourCache, "-D", "0"}, {"--load-cache", filepath.Join(t.TempDir(), "none")}} {
		want, got := cTool(t, s, cacheTopology.host, "iblinkinfo", args...), ibscriptTool(t, s, cacheTopology.host, "iblinkinfo", args...)
		if want.code != 1 || got.code != want.code || len(got.stdout) != 0 || len(want.stdout) != 0 {
			t.Errorf("iblinkinfo %s: exit %d, stdout %q; the C tool's %d, %q", strings.Join(args, " "), got.code, got.stdout, want.code, want.stdout)
		}
	}
}

// TestCacheMatchesIBQueryErrors: ibqueryerrors --load-cache takes the
// topology from the cache and reads the counters from the fabric.
func TestCacheMatchesIBQueryErrors(t *testing.T) {
	s := diagSim(t, cacheTopology.path)
	cCache, ourCache := makeCaches(t, s)
	ibnd := string(cTool(t, s, cacheTopology.host, "ibnetdiscover").stdout)
	from := initiatedFrom.FindStringSubmatch(ibnd)
	if from == nil {
		t.Fatalf("no local port in ibnetdiscover's output:\n%s", ibnd)
	}
	diffFromCache(t, s, "ibqueryerrors", []string{cCache, ourCache}, [][]string{
		// Not --data or --counters: the data counters move between runs.
		nil, {"-r"}, {"--switch"}, {"--ca", "-r"}, {"--router"}, {"-G", "0x" + from[2]},
	})
	for _, args := range [][]string{{"--load-cache", ourCache, "-D", "0"}, {"--load-cache", filepath.Join(t.TempDir(), "none")}} {
		want, got := cTool(t, s, cacheTopology.host, "ibqueryerrors", args...), ibscriptTool(t, s, cacheTopology.host, "ibqueryerrors", args...)
		if want.code != 255 || got.code != want.code || len(got.stdout) != 0 || len(want.stdout) != 0 {
			t.Errorf("ibqueryerrors %s: exit %d, stdout %q; the C tool's %d, %q", strings.Join(args, " "), got.code, got.stdout, want.code, want.stdout)
		}
	}
}

func TestCacheMatchesIBNetDiscover(t *testing.T) {
	dt := cacheTopology
	s := diagSim(t, dt.path)
	cCache, ourCache := makeCaches(t, s)
	live := map[string]toolResult{}
	for _, args := range cacheOutputs {
		live[strings.Join(args, " ")] = cTool(t, s, dt.host, "ibnetdiscover", args...)
	}
	// The topology (its "generated on" date aside), also with -f, -g and
	// -m (from a cache: the cache's max hops and 0 MADs, not what the C
	// tool prints live).
	topoArgs := [][]string{nil, {"-f"}, {"-g"}, {"-m"}}
	liveTopo := map[int]toolResult{}
	for i, args := range topoArgs {
		liveTopo[i] = cTool(t, s, dt.host, "ibnetdiscover", args...)
	}
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
		for i, args := range topoArgs {
			what := "ibnetdiscover --load-cache " + filepath.Base(cache) + " " + strings.Join(args, " ")
			args = append([]string{"--load-cache", cache}, args...)
			want := cTool(t, s, dt.host, "ibnetdiscover", args...)
			if w, l := normDate(string(want.stdout)), normDate(string(liveTopo[i].stdout)); w != l && !slices.Contains(args, "-m") {
				t.Errorf("%s: the C tool prints from the cache what it does not print live:\n%s", what, lineDiff(l, w))
			}
			got := ibscriptTool(t, s, dt.host, "ibnetdiscover", args...)
			if w, g := normDate(string(want.stdout)), normDate(string(got.stdout)); w != g || want.code != got.code {
				t.Errorf("%s: exit %d, the C tool's %d (stderr %s):\n%s", what, got.code, want.code, got.stderr, lineDiff(w, g))
			}
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
	// A cache loaded and cached again reads as the first; a cache that
	// cannot be written ends as the C tool ends, after the output.
	again := filepath.Join(dir, "again.cache")
	if r := ibscriptTool(t, s, dt.host, "ibnetdiscover", "--load-cache", good, "--cache", again, "-l"); r.code != 0 {
		t.Fatalf("ibnetdiscover --load-cache --cache: status %d: %s", r.code, r.stderr)
	}
	if w, g := cTool(t, s, dt.host, "ibnetdiscover", "--load-cache", good, "-p"), cTool(t, s, dt.host, "ibnetdiscover", "--load-cache", again, "-p"); string(w.stdout) != string(g.stdout) || len(w.stdout) == 0 {
		t.Errorf("a cache cached again prints otherwise:\n%s", lineDiff(string(w.stdout), string(g.stdout)))
	}
	unwritable := filepath.Join(dir, "no-such-dir", "x.cache")
	for _, args := range [][]string{{"--cache", unwritable, "-l"}, {"--load-cache", good, "--cache", unwritable}} {
		want := cTool(t, s, dt.host, "ibnetdiscover", args...)
		got := ibscriptTool(t, s, dt.host, "ibnetdiscover", args...)
		w := sbinIBError.ReplaceAllString(string(want.stdout), "$1: iberror: ")
		if want.code != 255 || got.code != 255 || normDate(string(got.stdout)) != normDate(w) || !strings.Contains(string(got.stderr), "no-such-dir") {
			t.Errorf("ibnetdiscover %s: exit %d, stdout %q, stderr %q; the C tool's %d, %q", strings.Join(args, " "), got.code, got.stdout, got.stderr, want.code, w)
		}
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

// TestCacheDiffMatchesC: --diff, --diffcheck and --filterdownports of
// ibnetdiscover and iblinkinfo against the C tools, on a private fabric
// changed through ibsim's console after a cache of it was written: a
// switch-to-switch link and a CA's second link taken down, and a CA's
// node GUID changed (a node gone, another come). Compared between two
// caches (before and after, both tools' caches), and live against the
// cache of before once the fabric is settled.
func TestCacheDiffMatchesC(t *testing.T) {
	ibsimtest.Require(t)
	s, dir := privateSim(t, cacheTopology.path)
	host := cacheTopology.host
	cBefore, ourBefore := filepath.Join(dir, "c-before.cache"), filepath.Join(dir, "ibscript-before.cache")
	if r := cTool(t, s, host, "ibnetdiscover", "--cache", cBefore); r.code != 0 {
		t.Fatalf("ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	if r := ibscriptTool(t, s, host, "ibnetdiscover", "--cache", ourBefore); r.code != 0 {
		t.Fatalf("ibscript ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	for _, c := range []string{`Unlink "SwB"[6]`, `Unlink "HcaY"[2]`, `Guid "HcaZ" 0x123456`} {
		if _, err := s.Console(t.Context(), c); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}
	// Settled: two C ibnetdiscover runs in a row print the same.
	var cAfter, ourAfter string
	deadline := time.Now().Add(30 * time.Second)
	for prev := ""; ; {
		out := normDate(string(cTool(t, s, host, "ibnetdiscover", "-f").stdout))
		if out == prev && !strings.Contains(out, "SwB\" lid 1 4xQDR s=4 w=2 v=4\n[6]") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fabric did not settle after the console changes:\n%s", out)
		}
		prev = out
	}
	cAfter, ourAfter = filepath.Join(dir, "c-after.cache"), filepath.Join(dir, "ibscript-after.cache")
	if r := cTool(t, s, host, "ibnetdiscover", "--cache", cAfter); r.code != 0 {
		t.Fatalf("ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	if r := ibscriptTool(t, s, host, "ibnetdiscover", "--cache", ourAfter); r.code != 0 {
		t.Fatalf("ibscript ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	cmp := func(tool string, args ...string) string {
		t.Helper()
		return string(diffTool(t, s, host, tool, args...).stdout)
	}
	// What the changes must show, so that the comparisons compare
	// something: the new GUID's node, HcaZ's old one, and the two links.
	for _, args := range [][]string{{"ibnetdiscover", "--load-cache", cAfter, "--diff", cBefore}, {"iblinkinfo", "--load-cache", cAfter, "--diff", cBefore}, {"ibnetdiscover", "--diff", cBefore}} {
		out := cmp(args[0], args[1:]...)
		for _, want := range []string{"> ", "< ", "12345", "HcaZ", "\"SwA\"", "\"HcaY\""} {
			if !strings.Contains(out, want) {
				t.Errorf("%s: the C tool's output has no %q:\n%s", strings.Join(args, " "), want, out)
			}
		}
	}
	if out := cmp("iblinkinfo", "--load-cache", cAfter, "--filterdownports", cBefore); !strings.Contains(out, "Down/ Polling") || strings.Count(out, "Down/") >= strings.Count(cmp("iblinkinfo", "--load-cache", cAfter), "Down/") {
		t.Errorf("iblinkinfo --filterdownports filters nothing, or every Down port:\n%s", out)
	}
	for _, pair := range [][2]string{{cBefore, cAfter}, {ourBefore, ourAfter}, {cBefore, ourAfter}} {
		before, after := pair[0], pair[1]
		for _, check := range []string{"", "sw,ca,router,port,lid,nodedesc", "sw,port", "ca,lid", "router,port,nodedesc", "port"} {
			args := []string{"--load-cache", after, "--diff", before}
			if check != "" {
				args = append(args, "--diffcheck", check)
			}
			cmp("ibnetdiscover", args...)
		}
		cmp("ibnetdiscover", "--load-cache", after, "--diff", before, "-f")
		cmp("ibnetdiscover", "--load-cache", before, "--diff", after)
		for _, extra := range [][]string{nil, {"--diffcheck", "port"}, {"--diffcheck", "state"}, {"--diffcheck", "port,lid,nodedesc,state"}, {"-l"}, {"-d"}, {"--switches-only"}, {"--cas-only", "-p"}} {
			cmp("iblinkinfo", append([]string{"--load-cache", after, "--diff", before}, extra...)...)
		}
		cmp("iblinkinfo", "--load-cache", before, "--diff", after, "-l")
		for _, extra := range [][]string{nil, {"-d"}, {"-l", "--switches-only"}} {
			cmp("iblinkinfo", append([]string{"--load-cache", after, "--filterdownports", before}, extra...)...)
		}
	}
	// ibsim cannot change a description or (for long: OpenSM puts it
	// back) a LID: a cache of after with SwA renamed and HcaX's port 1
	// given another LID, through ibndcache, shows those checks. (Not a
	// switch's LID: ibnetdiscover --diffcheck lid then prints its
	// unlinked ports, dereferencing their missing link, and crashes.)
	edited := filepath.Join(dir, "edited.cache")
	b, err := os.ReadFile(cAfter)
	if err != nil {
		t.Fatal(err)
	}
	ef, err := ibndcache.Decode(cAfter, b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ef.Nodes {
		n := &ef.Nodes[i]
		switch string(bytes.TrimRight(n.Desc[:], "\x00")) {
		case "SwA":
			copy(n.Desc[:], "SwA-renamed")
		case "HcaX":
			for j := range ef.Ports {
				if ef.Ports[j].NodeGUID == n.GUID && ef.Ports[j].Num == 1 {
					ef.Ports[j].BaseLID = 99
				}
			}
		}
	}
	if err := ef.Write(edited); err != nil {
		t.Fatal(err)
	}
	for _, check := range []string{"sw,ca,router,port,lid,nodedesc", "sw,nodedesc", "ca,lid", "sw,ca,port,lid", "sw,ca,port,nodedesc"} {
		out := cmp("ibnetdiscover", "--load-cache", edited, "--diff", cAfter, "--diffcheck", check)
		if check == "sw,ca,router,port,lid,nodedesc" && (!strings.Contains(out, "SwA-renamed") || !strings.Contains(out, "lid 99")) {
			t.Errorf("ibnetdiscover --diff of the edited cache shows no new name or LIDs:\n%s", out)
		}
	}
	// iblinkinfo prints a node's two headers only in line mode (it
	// crashes otherwise: linkDiff's doc).
	for _, check := range []string{"port,state,lid,nodedesc", "port,nodedesc", "lid", "port,lid"} {
		cmp("iblinkinfo", "--load-cache", edited, "--diff", cAfter, "--diffcheck", check, "-l")
	}

	// Live, against the caches of before.
	for _, before := range []string{cBefore, ourBefore} {
		cmp("ibnetdiscover", "--diff", before)
		cmp("ibnetdiscover", "--diff", before, "--diffcheck", "sw,ca,router,port,lid,nodedesc")
		cmp("iblinkinfo", "--diff", before)
		cmp("iblinkinfo", "--diff", before, "-l", "--diffcheck", "port,state,lid")
		cmp("iblinkinfo", "--filterdownports", before)
		cmp("iblinkinfo", "--filterdownports", before, "-d")
	}
	// Bad keys and bad files, as the C tools end.
	cmp("ibnetdiscover", "--diff", cBefore, "--diffcheck", "sw,bogus")
	cmp("iblinkinfo", "--diff", cBefore, "--diffcheck", "sw")
	for _, tool := range []string{"ibnetdiscover", "iblinkinfo"} {
		bad := filepath.Join(dir, "none.cache")
		want, got := cTool(t, s, host, tool, "--diff", bad), ibscriptTool(t, s, host, tool, "--diff", bad)
		if w := sbinIBError.ReplaceAllString(string(want.stdout), "$1: iberror: "); want.code != 255 || got.code != 255 || string(got.stdout) != w {
			t.Errorf("%s --diff %s: exit %d, stdout %q; the C tool's %d, %q", tool, bad, got.code, got.stdout, want.code, w)
		}
		if !strings.Contains(string(got.stderr), "--diff: open "+bad) {
			t.Errorf("%s --diff %s: stderr %q does not name the option and the file", tool, bad, got.stderr)
		}
	}
	want, got := cTool(t, s, host, "iblinkinfo", "--filterdownports", filepath.Join(dir, "none")), ibscriptTool(t, s, host, "iblinkinfo", "--filterdownports", filepath.Join(dir, "none"))
	if w := sbinIBError.ReplaceAllString(string(want.stdout), "$1: iberror: "); want.code != 255 || got.code != 255 || string(got.stdout) != w {
		t.Errorf("iblinkinfo --filterdownports: exit %d, stdout %q; the C tool's %d, %q", got.code, got.stdout, want.code, w)
	}
}

// TestCacheIntoDirectory: ibnetdiscover --cache DIR on an empty directory
// fails as the C tool's unlink(2) makes it fail (EISDIR: the directory
// stays, no cache is written, the same status and stdout); ibscript
// removed the directory and wrote the cache in its place.
func TestCacheIntoDirectory(t *testing.T) {
	s := diagSim(t, cacheTopology.path)
	for _, run := range []func(dir string) toolResult{
		func(dir string) toolResult { return cTool(t, s, cacheTopology.host, "ibnetdiscover", "--cache", dir) },
		func(dir string) toolResult {
			return ibscriptTool(t, s, cacheTopology.host, "ibnetdiscover", "--cache", dir)
		},
	} {
		dir := filepath.Join(t.TempDir(), "empty")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		r := run(dir)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Errorf("the directory was replaced: %v, %v (status %d, stderr %s)", fi, err, r.code, r.stderr)
		}
		t.Logf("status %d, stderr %s", r.code, r.stderr)
	}
	dirC, dirOurs := filepath.Join(t.TempDir(), "c"), filepath.Join(t.TempDir(), "ours")
	for _, d := range []string{dirC, dirOurs} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	want := cTool(t, s, cacheTopology.host, "ibnetdiscover", "--cache", dirC)
	got := ibscriptTool(t, s, cacheTopology.host, "ibnetdiscover", "--cache", dirOurs)
	// libibmad's IBEXIT names the program as it was run (/usr/sbin/...).
	// Both print the topology before the cache fails: its "generated on"
	// line is the second each ran.
	w := normDate(sbinIBError.ReplaceAllString(string(want.stdout), "$1: iberror: "))
	if g := normDate(string(got.stdout)); want.code != got.code || w != g {
		t.Errorf("exit %d, the C tool's %d (stderr %s; C's %s):\n%s", got.code, want.code, got.stderr, want.stderr, lineDiff(w, g))
	}
}

// TestCachePortInfoTimeouts (rdma-core #1767): a discovery in which two
// ports' PortInfo times out (the embedded simulator's MutePortInfo: Hca2's
// port, reached and linked through Switch2, and Switch1's port 5, linked
// from Switch2's) is cached as current libibnetdisc caches it: no record
// of either port, no key of it in its node, no link to it from its peer.
// The file loads in ibscript and in infiniband-diags 44's C ibnetdiscover,
// which print it alike. A cache as libibnetdisc wrote it before #1767
// (the key and the peer's link left to a port without a record) the C
// tool of 44 refuses, and ibscript loads as current libibnetdisc does,
// without the port.
func TestCachePortInfoTimeouts(t *testing.T) {
	s := diagSim(t, topo2sw) // the C tools run on ibsim, reading the file only
	// The simulator's SM port (Switch1), tried twice 20 ms apart.
	f, err := sim.Load(topo2sw, nil)
	if err == nil {
		err = f.SetFaults(sim.Faults{MutePortInfo: []sim.PortRef{{Node: "Hca2", Port: 1}, {Node: "Switch1", Port: 5}}})
	}
	var h *host.Host
	if err == nil {
		h, err = host.OpenWith(t.Context(), f, &host.Options{Session: engine.Options{Timeout: 20 * time.Millisecond, Retries: 1}})
	}
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	d, err := h.Session().Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Errors) != 2 {
		t.Fatalf("discovery errors %v; want the two muted PortInfos", d.Errors)
	}
	cf, err := ibndcache.FromFabric(d.Fabric)
	if err != nil {
		t.Fatal(err)
	}
	const hca2, sw1 = 0x100004, 0x200000 // Hca2's port GUID, Switch1's
	muted := func(k ibndcache.PortKey) bool {
		return k == ibndcache.PortKey{GUID: hca2, Num: 1} || k == ibndcache.PortKey{GUID: sw1, Num: 5}
	}
	links := 0
	for _, p := range cf.Ports {
		if muted(ibndcache.PortKey{GUID: p.GUID, Num: p.Num}) || p.HasRemote && muted(p.Remote) {
			t.Errorf("port record 0x%x port %d: a muted port, or a link to one (%v)", p.GUID, p.Num, p.Remote)
		}
		if p.HasRemote {
			links++
		}
	}
	for _, n := range cf.Nodes {
		for _, k := range n.Ports {
			if muted(k) {
				t.Errorf("node 0x%x keys the muted port 0x%x port %d", n.GUID, k.GUID, k.Num)
			}
		}
	}
	if links != 2*4 { // Hca1, Hca3, Hca4 and the one inter-switch link left, both ends
		t.Errorf("%d linked port records, want 8", links)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "timeouts.cache")
	if err := cf.Write(file); err != nil {
		t.Fatal(err)
	}
	// Before #1767: Hca2's key and Switch2 port 1's link kept, Hca2's
	// port without its record.
	b, err := cf.Encode()
	if err != nil {
		t.Fatal(err)
	}
	old, err := ibndcache.Decode("old", b)
	if err != nil {
		t.Fatal(err)
	}
	for i := range old.Nodes {
		if old.Nodes[i].GUID == hca2-1 {
			old.Nodes[i].Ports = append(old.Nodes[i].Ports, ibndcache.PortKey{GUID: hca2, Num: 1})
		}
	}
	for i := range old.Ports {
		if p := &old.Ports[i]; p.GUID == 0x200001 && p.Num == 1 {
			p.HasRemote, p.Remote = true, ibndcache.PortKey{GUID: hca2, Num: 1}
		}
	}
	oldFile := filepath.Join(dir, "old.cache")
	if err := old.Write(oldFile); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"-l"}, {"-p"}} {
		args = append([]string{"--load-cache", file}, args...)
		want := cTool(t, s, "Hca1", "ibnetdiscover", args...)
		got := ibscriptTool(t, s, "Hca1", "ibnetdiscover", args...)
		if w, g := normDate(string(want.stdout)), normDate(string(got.stdout)); w != g || want.code != 0 || got.code != 0 {
			t.Errorf("ibnetdiscover %v: exit %d, the C tool's %d (stderr %s / %s):\n%s", args, got.code, want.code, got.stderr, want.stderr, lineDiff(w, g))
		}
		if !strings.Contains(string(want.stdout), "Hca2") && args[len(args)-1] != "-p" {
			t.Errorf("ibnetdiscover %v: Hca2's node is not printed:\n%s", args, want.stdout)
		}
	}
	if c := cTool(t, s, "Hca1", "ibnetdiscover", "--load-cache", oldFile); c.code == 0 {
		t.Errorf("the C ibnetdiscover 44 loads a cache with a dangling port key: %s", c.stdout)
	}
	fab, err := func() (*topo.Fabric, error) {
		c, err := ibndcache.Read(oldFile)
		if err != nil {
			return nil, err
		}
		return c.Fabric(oldFile)
	}()
	if err != nil {
		t.Fatalf("the pre-#1767 cache does not load: %v", err)
	}
	for _, n := range fab.Nodes {
		for _, p := range n.Ports {
			if p != nil && (p.GUID == hca2 || p.Remote != nil && p.Remote.GUID == hca2) {
				t.Errorf("the pre-#1767 cache loads with %v (linked to %v)", p, p.Remote)
			}
		}
	}
}
