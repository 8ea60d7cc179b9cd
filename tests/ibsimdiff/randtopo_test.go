package ibsimdiff

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/internal/randtopo"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
	"github.com/ibscript/ibscript/topo"
	"github.com/ibscript/ibscript/topo/ibndcache"
)

// randSeedsEnv names the seeds TestRandomTopologies runs instead of its
// fixed ones: "7", "3,9", "10-20".
const randSeedsEnv = "IBSCRIPT_RANDTOPO_SEEDS"

// randSeeds are the fixed seeds, or those $IBSCRIPT_RANDTOPO_SEEDS names.
func randSeeds(t *testing.T) []uint64 {
	v := os.Getenv(randSeedsEnv)
	if v == "" {
		return []uint64{1, 2}
	}
	var out []uint64
	for _, f := range strings.Split(v, ",") {
		lo, hi, rng := strings.Cut(strings.TrimSpace(f), "-")
		a, err1 := strconv.ParseUint(lo, 10, 64)
		b, err2 := a, error(nil)
		if rng {
			b, err2 = strconv.ParseUint(hi, 10, 64)
		}
		if err1 != nil || err2 != nil || b < a {
			t.Fatalf("%s=%q: %q is not a seed or a range of seeds", randSeedsEnv, v, f)
		}
		for s := a; s <= b; s++ {
			out = append(out, s)
		}
	}
	return out
}

// TestRandomTopologies compares the tools on topologies internal/randtopo
// makes from seeds (odd cabling, widths, speeds, descriptions, GUIDs and
// LIDs nobody wrote by hand, islands, long chains), byte for byte and
// exit status, from one of their CAs: ibnetdiscover and iblinkinfo's
// main forms, ibqueryerrors with error counters set on random ports, the
// node lists, ibroute and dump_fts on random switches, ibtracert between
// random LIDs, smpquery and smpdump on random targets by LID and directed
// route, perfquery and its per-attribute groups (not on OpenSM's node),
// saquery's single-record queries, sminfo, ibaddr; from a switch, from a
// CA with no link and from a CA on the island; and through the caches
// of ibnetdiscover --cache (--load-cache, --diff, ibcacheedit). OpenSM
// runs with the LMC the seed gives (0, 1 or 2). A seed takes 20 to 40 s
// on an idle 2-core machine.
// `IBSCRIPT_RANDTOPO_SEEDS=3-20 go test ./tests/ibsimdiff -run
// RandomTopologies` runs more seeds; a seed's topology is
// `go run ./internal/randtopo/genrandtopo SEED`.
func TestRandomTopologies(t *testing.T) {
	for _, seed := range randSeeds(t) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			t.Parallel() // one ibsim per seed: the seeds run side by side (parallelTopologies)
			f := randtopo.Generate(seed)
			path := filepath.Join(t.TempDir(), fmt.Sprintf("net.rand-%d", seed))
			if err := os.WriteFile(path, []byte(f.Text), 0o644); err != nil {
				t.Fatal(err)
			}
			var osm []string
			if f.LMC > 0 {
				osm = []string{"--lmc", strconv.Itoa(f.LMC)}
			}
			s := privateInit(t, path, osm...) // its counters change
			r := rand.New(rand.NewPCG(seed, 1))
			host := f.Hosts[r.IntN(len(f.Hosts))]
			sess, _ := session(t, s, host, nil, nil)
			d, err := sess.Discover(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			// Error counters on random ports, for ibqueryerrors.
			counters := []string{"SymbolErrorCounter=3", "PortRcvErrors=20", "PortXmitDiscards=7", "LinkDownedCounter=2", "PortXmitWait=1500"}
			for range 3 {
				n := f.Switches[r.IntN(len(f.Switches))]
				c := fmt.Sprintf("%q[%d] PortCounters.%s", n, 1+r.IntN(min(4, f.Ports[n])), counters[r.IntN(len(counters))])
				if out, err := s.Console(t.Context(), "PerformanceSet "+c); err != nil || !strings.Contains(out, "has been set") {
					t.Logf("PerformanceSet %s: %q %v", c, out, err)
				}
			}
			for _, args := range [][]string{nil, {"-p"}, {"-g"}, {"-l"}, {"-H"}, {"-S"}, {"-R"}, {"-f"}, {"-m", "-s"}, {"-s", "-p"}} {
				diffTool(t, s, host, "ibnetdiscover", args...)
			}
			// -n: where libibnetdisc's hop limit stops it; -a: what a
			// partial scan holds.
			for _, args := range [][]string{nil, {"-l"}, {"-p"}, {"-d"}, {"--switches-only"}, {"--cas-only", "-l"},
				{"-n", "1"}, {"-n", "2"}, {"-n", "3", "-l"}, {"-a"}, {"-a", "-n", "2"}} {
				diffTool(t, s, host, "iblinkinfo", args...)
			}
			for _, args := range [][]string{nil, {"-r"}, {"--details"}, {"--switch"}, {"--ca", "--router"}} {
				diffTool(t, s, host, "ibqueryerrors", args...)
			}
			// The scripts' awk on discovery, on ibnetdiscover's text and on
			// the ibsim file itself; name maps.
			ibnd := cTool(t, s, host, "ibnetdiscover")
			topoFile := filepath.Join(t.TempDir(), "fabric.topo")
			if err := os.WriteFile(topoFile, ibnd.stdout, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, tool := range []string{"ibhosts", "ibswitches", "ibrouters", "ibnodes"} {
				diffTool(t, s, host, tool)
				diffTool(t, s, host, tool, topoFile)
				diffTool(t, s, host, tool, path)
			}
			nm := nameMap(t, ibnd.stdout, int(seed%2))
			diffTool(t, s, host, "ibnetdiscover", "--node-name-map", nm, "-p")
			diffTool(t, s, host, "iblinkinfo", "--node-name-map", nm)
			diffTool(t, s, host, "ibqueryerrors", "--node-name-map", nm, "-r")
			// From a switch (ibsim attaches a client to its port 0).
			sw := f.Switches[r.IntN(len(f.Switches))]
			diffTool(t, s, sw, "ibnetdiscover", "-m", "-s")
			diffTool(t, s, sw, "iblinkinfo", "-l")
			diffTool(t, s, sw, "iblinkinfo", "-n", "2")
			// From a CA whose port 1 is unlinked (Down, no LID), and from
			// one on the island (LinkUp, Init, no LID, no SM).
			for _, b := range append(f.Bare[:min(1, len(f.Bare))], f.Island[:min(1, len(f.Island))]...) {
				diffTool(t, s, b, "ibnetdiscover")
				for _, c := range [][]string{{"iblinkinfo"}, {"ibqueryerrors"}, {"ibhosts"}, {"perfquery"}, {"sminfo"},
					{"ibaddr"}, {"saquery"}, {"smpquery", "-D", "nodeinfo", "0"}, {"smpquery", "nodeinfo", "1"}, {"ibtracert", "1", "2"}, {"dump_fts"},
					{"ibnetdiscover", "-p"}, {"iblinkinfo", "-l"}, {"ibswitches"}, {"smpquery", "-D", "portinfo", "0,1", "0"},
					{"ibroute", "-D", "0,1"}, {"ibqueryerrors", "-D", "0,1"}, {"iblinkinfo", "-D", "0,1", "-n", "1"}} {
					diffCommandLine(t, s, b, c)
				}
			}
			// The perl scripts: ibidsverify, ibfindnodesusing on random
			// switch ports.
			diffIDsVerify(t, s, host)
			diffIDsVerify(t, s, host, "-R")
			dir := t.TempDir()
			for range 3 {
				sw := d.Fabric.Nodes[r.IntN(len(d.Fabric.Nodes))]
				if sw.Type == topo.Switch {
					diffFindNodesUsing(t, s, host, dir, fmt.Sprintf("0x%016x", sw.GUID), strconv.Itoa(1+r.IntN(sw.NumPorts)))
				}
			}
			dr := func(g uint64) string { p, _ := d.Path(g); return drArg(p) }
			for _, c := range randCommands(r, d.Fabric, sess.Port().SMLID, dr) {
				diffCommandLine(t, s, host, c)
			}
			for _, c := range randMatrix(r, d.Fabric, sess.Port().SMLID, dr, nm) {
				if c[0] == "ibnetdiscover" {
					diffTool(t, s, host, c[0], c[1:]...) // its date line masked
					continue
				}
				diffCommandLine(t, s, host, c)
			}
			for _, c := range randMasked(r, d.Fabric) {
				diffMasked(t, s, host, c)
			}
			diffClearing(t, s, host, f, d.Fabric, sess.Port().SMLID, r, dr)
			diffRandIBStat(t, s, host, active2x(d.Fabric, f.GUIDs[host]))
			diffRandIBStat(t, s, sw, false)
			diffRandCaches(t, s, host)
			// The embedded simulator on the same file, from the same CA.
			ef := simtest.Load(t, path, &sim.Options{IbsimStrict: true})
			ed, err := simtest.PortSession(t, ef, host, 1, nil).Discover(t.Context(), nil)
			if err != nil {
				t.Fatal(err)
			}
			sameFabric(t, d.Fabric, ed.Fabric, f.LMC == 0)
		})
	}
}

// sameFabric compares what discovery found on ibsim (a) and on the
// embedded simulator (b): the nodes (type, ports, description, system
// image GUID), each port's GUID and the port at its other end, and its
// LID when lids (OpenSM's LMC 0: the embedded SM assigns as OpenSM does,
// LIDs the file presets kept). Widths and speeds are not compared: where
// a link's ends enable different ones ibsim shows what OpenSM's Set
// wrote (sim's package doc).
func sameFabric(t *testing.T, a, b *topo.Fabric, lids bool) {
	t.Helper()
	desc := func(f *topo.Fabric) map[string]string {
		out := map[string]string{}
		for _, n := range f.Nodes {
			out[fmt.Sprintf("node %#x", n.GUID)] = fmt.Sprintf("%s ports %d sysimg %#x vendor %#x esp0 %v desc %q", n.Type, n.NumPorts, n.SysGUID, n.VendorID, n.EnhancedPort0, n.Desc)
			for _, p := range n.Ports {
				if p == nil {
					continue
				}
				v := fmt.Sprintf("guid %#x", p.GUID)
				if p.Remote != nil {
					v += fmt.Sprintf(" to %#x[%d]", p.Remote.Node.GUID, p.Remote.Num)
				}
				if lids {
					v += fmt.Sprintf(" lid %d", p.LID)
				}
				out[fmt.Sprintf("node %#x port %d", n.GUID, p.Num)] = v
			}
		}
		return out
	}
	da, db := desc(a), desc(b)
	union := maps.Clone(da)
	maps.Copy(union, db)
	n := 0
	for _, k := range slices.Sorted(maps.Keys(union)) {
		if da[k] != db[k] && n < 20 {
			t.Errorf("%s: ibsim %q, the embedded simulator %q", k, da[k], db[k])
			n++
		}
	}
}

// diffRandCaches compares, on the caches the C ibnetdiscover and
// ibscript's write of the fabric from host, what ibnetdiscover,
// iblinkinfo and ibqueryerrors print from them (--load-cache), --diff
// (with --diffcheck) and iblinkinfo's --filterdownports against the live
// fabric, and ibcacheedit's edits of the C tool's.
func diffRandCaches(t *testing.T, s *ibsimtest.Sim, host string) {
	t.Helper()
	dir := t.TempDir()
	cCache, ourCache := filepath.Join(dir, "c.cache"), filepath.Join(dir, "ibscript.cache")
	if r := cTool(t, s, host, "ibnetdiscover", "--cache", cCache); r.code != 0 {
		t.Fatalf("ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	if r := ibscriptTool(t, s, host, "ibnetdiscover", "--cache", ourCache); r.code != 0 {
		t.Fatalf("ibscript ibnetdiscover --cache: status %d: %s", r.code, r.stderr)
	}
	for _, c := range []string{cCache, ourCache} {
		for _, args := range [][]string{{"ibnetdiscover", "-p"}, {"ibnetdiscover", "-g"}, {"iblinkinfo", "-l"}, {"ibqueryerrors", "-r"}} {
			diffTool(t, s, host, args[0], append([]string{"--load-cache", c}, args[1:]...)...)
		}
		for _, args := range [][]string{{"ibnetdiscover", "--diff", c}, {"ibnetdiscover", "--diff", c, "--diffcheck", "lid,nodedesc"},
			{"iblinkinfo", "--diff", c}, {"iblinkinfo", "--diff", c, "--diffcheck", "port,lid"}, {"iblinkinfo", "--filterdownports", c, "-l"},
			{"iblinkinfo", "--load-cache", c, "-d"}} {
			diffTool(t, s, host, args[0], args[1:]...)
		}
	}
	if _, err := exec.LookPath("ibcacheedit"); err != nil {
		return
	}
	cf, err := ibndcache.Read(cCache)
	if err != nil {
		t.Fatal(err)
	}
	for _, args := range cacheEdits(cf, cCache, dir) {
		diffCacheEdit(t, dir, args)
	}
}

// randCommands are the point and route queries on random targets of f:
// ibroute and dump_fts on switches, ibtracert between LIDs, smpquery by
// LID and by directed route (dr gives a node's), perfquery, saquery,
// sminfo, ibaddr.
func randCommands(r *rand.Rand, f *topo.Fabric, smLID uint16, dr func(guid uint64) string) [][]string {
	type target struct {
		n    *topo.Node
		lid  string
		port string
		guid string // the port's GUID (port 0's on a switch)
	}
	var sws, eps []target
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 {
				continue
			}
			tg := target{n, strconv.Itoa(int(p.LID)), strconv.Itoa(p.Num), fmt.Sprintf("%#x", p.GUID)}
			if n.Type == topo.Switch {
				tg.port = strconv.Itoa(1 + r.IntN(n.NumPorts))
				sws = append(sws, tg)
			} else {
				eps = append(eps, tg)
			}
		}
	}
	all := append(append([]target{}, sws...), eps...)
	one := func(ts []target) target { return ts[r.IntN(len(ts))] }
	// SA tables only of the records one MAD holds: under ibsim (no RMPP)
	// the C tool gets the first 224 bytes of the one MAD OpenSM's answer
	// comes in (umad2sim; docs/diag.md) and prints what its buffer holds
	// past them, ibscript every record the MAD holds (and a warning).
	cmds := [][]string{{"sminfo"}, {"ibaddr"}, {"saquery"}, {"saquery", "-s"}, {"saquery", "-N"}, {"saquery", "-D"}, {"saquery", "-L"},
		{"dump_fts"}, {"dump_fts", "-n"}, {"dump_mfts"}, {"dump_lfts", "-a"}}
	for range 2 {
		sw := one(sws)
		cmds = append(cmds, []string{"ibroute", sw.lid}, []string{"ibroute", "-M", sw.lid}, []string{"dump_fts", sw.lid},
			[]string{"smpquery", "switchinfo", sw.lid}, []string{"smpquery", "-D", "switchinfo", dr(sw.n.GUID)},
			[]string{"smpquery", "portinfo", sw.lid, sw.port}, []string{"perfquery", sw.lid, sw.port},
			[]string{"perfquery", "-x", sw.lid, sw.port}, []string{"saquery", "SWIR", sw.lid})
	}
	for range 2 {
		sw, ep := one(sws), one(eps)
		cmds = append(cmds, []string{"ibroute", "-D", dr(sw.n.GUID)}, []string{"smpquery", "sl2vl", sw.lid, sw.port},
			[]string{"smpquery", "vlarb", sw.lid, sw.port}, []string{"smpquery", "pkeys", ep.lid, ep.port},
			[]string{"smpquery", "guids", ep.lid}, []string{"smpquery", "-x", "portinfo", sw.lid, sw.port},
			[]string{"smpquery", "nodeinfo", sw.lid}, []string{"smpquery", "-D", "nodeinfo", dr(ep.n.GUID)},
			[]string{"perfquery", "-a", sw.lid}, []string{"perfquery", "-l", sw.lid}, []string{"perfquery", "-x", "-a", sw.lid},
			[]string{"perfquery", "-x", ep.lid, ep.port}, []string{"ibaddr", "-D", dr(ep.n.GUID)},
			[]string{"iblinkinfo", "-D", dr(ep.n.GUID)}, []string{"iblinkinfo", "-D", dr(sw.n.GUID), "-l"},
			[]string{"iblinkinfo", "-G", ep.guid}, []string{"ibqueryerrors", "-D", dr(sw.n.GUID)},
			[]string{"ibqueryerrors", "-G", ep.guid}, []string{"ibqueryerrors", "-D", dr(ep.n.GUID)},
			[]string{"iblinkinfo", "-D", dr(ep.n.GUID), "-n", "2"}, []string{"iblinkinfo", "-a", "-D", dr(ep.n.GUID)},
			[]string{"iblinkinfo", "-a", "-G", ep.guid, "-n", "2"},
			[]string{"ibtracert", "-G", one(eps).guid, ep.guid}, []string{"ibtracert", "-n", ep.lid, one(all).lid},
			// A switch's port by directed route (by LID, the C tool reads
			// its peer by a combined route, which ibsim does not answer:
			// docs/diag.md).
			[]string{"ibportstate", ep.lid, ep.port}, []string{"ibportstate", "-D", dr(sw.n.GUID), sw.port},
			[]string{"smpquery", "mlnxextportinfo", sw.lid, sw.port}, []string{"ibroute", "-M", "-D", dr(sw.n.GUID)})
	}
	// perfquery's per-attribute groups and the SA's single-record
	// queries, on a switch and an endport that are not OpenSM's node.
	notSM := func(ts []target) []target {
		var out []target
		for _, tg := range ts {
			if !nodeHasLID(tg.n, smLID) {
				out = append(out, tg)
			}
		}
		return out
	}
	if sws, eps := notSM(sws), notSM(eps); len(sws) > 0 && len(eps) > 0 {
		sw, ep := one(sws), one(eps)
		for _, o := range []string{"-X", "-S", "-D", "-E", "-T", "-c", "--oprcvcounters", "--flowctlcounters", "--vloppackets",
			"--vlopdata", "--vlxmitflowctlerrors", "--vlxmitcounters", "--swportvlcong", "--xmitcc", "--vlxmittimecc"} {
			cmds = append(cmds, []string{"perfquery", o, sw.lid, sw.port})
		}
		for _, o := range []string{"-X", "-S", "-E", "--rcvcc", "--slrcvfecn", "--slrcvbecn"} {
			cmds = append(cmds, []string{"perfquery", o, ep.lid, ep.port})
		}
		cmds = append(cmds, []string{"saquery", "-c"}, []string{"saquery", "SMIR"}, []string{"saquery", "-g"}, []string{"saquery", "IIR"},
			[]string{"saquery", "PIR", ep.lid}, []string{"saquery", "GIR", ep.lid}, []string{"saquery", "SL2VL", ep.lid},
			[]string{"saquery", "LR", ep.lid}, []string{"saquery", "LFTR", sw.lid + "/0"}, []string{"saquery", "PKTR", ep.lid},
			[]string{"smpdump", "-D", dr(ep.n.GUID), "0x15"}, []string{"smpdump", sw.lid, "0x11"}, []string{"smpdump", "-s", sw.lid, "0x10"},
			[]string{"ibroute", sw.lid, "1", "64"}, []string{"ibroute", "-a", sw.lid}, []string{"ibroute", "-n", sw.lid},
			[]string{"smpquery", "PIE", sw.lid, sw.port}, []string{"smpquery", "GI", sw.lid})
	}
	for range 3 {
		a, b := one(all), one(all)
		ep := one(eps)
		cmds = append(cmds, []string{"ibtracert", a.lid, b.lid}, []string{"ibtracert", "-m", "0xc000", a.lid, b.lid},
			[]string{"smpquery", "nodeinfo", a.lid}, []string{"smpquery", "nodedesc", b.lid},
			[]string{"smpquery", "-D", "nodedesc", dr(b.n.GUID)}, []string{"smpquery", "-D", "portinfo", dr(ep.n.GUID), ep.port},
			[]string{"smpquery", "portinfo", ep.lid, ep.port}, []string{"perfquery", ep.lid, ep.port},
			[]string{"saquery", "NR", ep.lid}, []string{"saquery", "-p", "--src-to-dst", a.lid + ":" + b.lid},
			[]string{"saquery", "-N", ep.lid}, []string{"saquery", "-O", ep.lid}, []string{"saquery", "-U", ep.lid},
			[]string{"sminfo", a.lid}, []string{"ibaddr", b.lid}, []string{"ibaddr", "-g", ep.lid})
	}
	return cmds
}
