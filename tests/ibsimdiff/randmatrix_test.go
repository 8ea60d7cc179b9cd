package ibsimdiff

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/internal/randtopo"
	"github.com/ibscript/ibscript/topo"
)

// randTarget is a node of a random fabric as the command lines name it.
type randTarget struct {
	n    *topo.Node
	lid  string // port 0's LID on a switch, the port's on a CA or router
	port string // a port of the node: a random one on a switch
	guid string // the port's GUID (port 0's on a switch)
	lid1 string // the port's LID past its base (LMC > 0), else lid
}

// randTargets are f's switches and end ports with a LID, each switch
// with a random port of its own.
func randTargets(r *rand.Rand, f *topo.Fabric) (sws, eps []randTarget) {
	for _, n := range f.Nodes {
		for _, p := range n.Ports {
			if p == nil || p.LID == 0 {
				continue
			}
			tg := randTarget{n, strconv.Itoa(int(p.LID)), strconv.Itoa(p.Num), fmt.Sprintf("%#x", p.GUID), strconv.Itoa(int(p.LID))}
			if p.LMC > 0 {
				tg.lid1 = strconv.Itoa(int(p.LID) + 1)
			}
			if n.Type == topo.Switch {
				tg.port = strconv.Itoa(r.IntN(n.NumPorts + 1))
				sws = append(sws, tg)
			} else {
				eps = append(eps, tg)
			}
		}
	}
	return sws, eps
}

// randMatrix is the option matrix (optmatrix_test.go) on a random
// fabric's nodes: every smpquery op on a switch, a CA and a router by
// LID, directed route and GUID; saquery's record types with their
// selectors and its name lookups by the fabric's own (odd) node
// descriptions; ibaddr, ibroute and dump_fts options; ibtracert by port
// GUIDs, to LIDs past a port's base, with -f, -n and a name map; the
// iblinkinfo, ibqueryerrors and ibnetdiscover options TestRandomTopologies
// does not run. Nothing sets or resets: those are diffClearing's.
func randMatrix(r *rand.Rand, f *topo.Fabric, smLID uint16, dr func(uint64) string, nameMap string) [][]string {
	sws, eps := randTargets(r, f)
	one := func(ts []randTarget) randTarget { return ts[r.IntN(len(ts))] }
	sw, ca := one(sws), one(eps)
	kinds := []randTarget{sw, ca}
	var cas []randTarget
	for _, ep := range eps {
		if ep.n.Type == topo.Router {
			kinds = append(kinds, ep)
		} else {
			cas = append(cas, ep)
		}
	}
	var cmds [][]string
	add := func(c ...string) { cmds = append(cmds, c) }
	for _, op := range []string{"NI", "ND", "PI", "PIE", "SI", "PKeys", "SL2VL", "VLArb", "GI", "MEPI"} {
		for i, k := range kinds[:min(len(kinds), 3)] {
			if i == 2 && k.n.Type != topo.Router {
				break
			}
			add("smpquery", op, k.lid, k.port)
			add("smpquery", "-D", op, dr(k.n.GUID), k.port)
		}
		add("smpquery", "-G", op, sw.guid)
	}
	if len(kinds) > 2 && !nodeHasLID(kinds[2].n, smLID) {
		rt := kinds[2] // a router's PMA
		add("perfquery", rt.lid, rt.port)
		add("perfquery", "-x", rt.lid, rt.port)
		add("perfquery", "-a", rt.lid)
		add("perfquery", "-X", rt.lid, rt.port)
	}
	add("smpquery", "-x", "PI", ca.lid1, ca.port)
	add("smpquery", "--node-name-map", nameMap, "ND", sw.lid)
	add("smpquery", "--node-name-map", nameMap, "-D", "NI", dr(ca.n.GUID))
	add("smpquery", "PI", sw.lid, strconv.Itoa(sw.n.NumPorts+1))

	cmds = append(cmds, randSAQuery(r, f, sws, cas, smLID, nameMap)...)

	for _, a := range []randTarget{sw, ca} {
		add("ibaddr", "-L", a.lid)
		add("ibaddr", "-l", a.lid1)
		add("ibaddr", "-g", "-L", a.lid)
		add("ibaddr", "-G", a.guid)
		add("ibaddr", "-l", "-G", a.guid)
	}
	sw2 := one(sws)
	add("ibroute", "-M", sw2.lid, "0xc000", "0xc000")
	add("ibroute", "-a", sw2.lid, "1", strconv.Itoa(1+r.IntN(0x3000)))
	add("ibroute", "-n", sw2.lid, ca.lid)
	add("ibroute", "--node-name-map", nameMap, sw2.lid)
	add("ibroute", "-G", fmt.Sprintf("%#x", sw2.n.GUID))
	add("ibroute", "-M", ca.lid)
	add("ibroute", sw2.lid, ca.lid1, ca.lid1)
	add("dump_fts", "-M")
	add("dump_fts", "-a", "-n")
	add("dump_fts", "--node-name-map", nameMap)
	add("dump_lfts", "-n")

	for range 2 {
		a, b := one(eps), one(append(append([]randTarget{}, eps...), sws...))
		add("ibtracert", "-G", a.guid, b.guid)
		add("ibtracert", a.lid1, b.lid1)
		add("ibtracert", "-f", a.lid, b.lid)
		add("ibtracert", "-n", "-m", "0xc000", a.lid, b.lid)
		add("ibtracert", "--node-name-map", nameMap, a.lid, b.lid)
	}

	// -S/-G of a CA's port: of a switch's, iblinkinfo 44 hangs under
	// umad2sim (docs/diag.md).
	ca2 := one(eps)
	for _, c := range [][]string{{"-S", ca2.guid}, {"-G", ca2.guid, "-n", "1"}, {"-S", ca2.guid, "-l", "-p"}, {"-d", "-l"}, {"-p", "-l"},
		{"--node-name-map", nameMap, "-l"}, {"-S", ca2.guid, "-d"}, {"--switches-only", "-p"}, {"--cas-only", "-d"}} {
		add(append([]string{"iblinkinfo"}, c...)...)
	}
	// --data and --counters: diffMasked's (the data counters move).
	for _, c := range [][]string{{"-s", "SymbolErrorCounter,PortRcvErrors"}, {"-c"}, {"--skip-sl"}, {"-R"}, {"-S", ca.guid},
		{"--switch", "-c", "-r"}, {"-s", "PortXmitWait", "--details"}} {
		add(append([]string{"ibqueryerrors"}, c...)...)
	}
	for _, c := range [][]string{{"-l"}, {"-H"}, {"-S"}, {"-R"}, {"-g"}, {"-s"}, {"-f"}} {
		add(append([]string{"ibnetdiscover", "--node-name-map", nameMap}, c...)...)
	}
	return cmds
}

// randSAQuery is randMatrix's saquery lines: each record type with its
// selectors on random nodes, and the name lookups by the descriptions
// the fabric's nodes carry (quotes, '#', tabs, control bytes, UTF-8).
// Only what one MAD holds: under ibsim the C tool prints its stale
// buffer past the first MAD (docs/diag.md): a CA's links (-x), not a
// switch's, paths between two GIDs only where the LMC is 0.
func randSAQuery(r *rand.Rand, f *topo.Fabric, sws, cas []randTarget, smLID uint16, nameMap string) [][]string {
	one := func(ts []randTarget) randTarget { return ts[r.IntN(len(ts))] }
	sw, ca, ca2 := one(sws), one(cas), one(cas)
	gid := func(g string) string {
		v, _ := strconv.ParseUint(g, 0, 64)
		return "fe80::" + colonGUID(v)
	}
	cmds := [][]string{{"saquery", "PIR", ca.lid + "/" + ca.port}, {"saquery", "PIR", sw.lid + "/" + sw.port},
		{"saquery", "SL2VL", sw.lid + "/" + strconv.Itoa(r.IntN(sw.n.NumPorts+1)) + "/" + sw.port},
		{"saquery", "PKTR", ca.lid + "/" + ca.port + "/0"}, {"saquery", "VLAR", ca.lid + "/" + ca.port + "/1"},
		{"saquery", "LR", sw.lid + "/" + sw.port}, {"saquery", "LR", ca.lid + "/" + ca.port, ""},
		{"saquery", "LFTR", sw.lid + "/" + strconv.Itoa(r.IntN(4))}, {"saquery", "GIR", ca.lid + "/0"},
		{"saquery", "SWIR", sw.lid}, {"saquery", "SMIR", strconv.Itoa(int(smLID))}, {"saquery", "IIR", gid(ca.guid)},
		{"saquery", "-x", ca.lid}, {"saquery", "-S"}, {"saquery", "-I"}, {"saquery", "-m", "0xc000"},
		{"saquery", "NR", ca.lid1}, {"saquery", "-O", ca.lid1}, {"saquery", "-U", ca.guid}, {"saquery", "-U", sw.guid},
		{"saquery", "--src-to-dst", ca.lid + ":" + ca2.lid1}, {"saquery", "PR", "--slid", ca.lid, "--dlid", ca2.lid1},
		{"saquery", "MCMR", "--mgid", "ff12:401b:ffff::1"},
		{"saquery", "--node-name-map", nameMap, "-O", sw.lid}, {"saquery", "--node-name-map", nameMap, "-x", ca.lid},
		{"saquery", "--node-name-map", nameMap, "NR", ca.lid}}
	if ca.lid1 == ca.lid && ca2.lid1 == ca2.lid {
		// With an LMC, more paths than one MAD holds between two GIDs.
		cmds = append(cmds, []string{"saquery", "--sgid-to-dgid", gid(ca.guid) + "-" + gid(ca2.guid)},
			[]string{"saquery", "PR", "--sgid", gid(ca.guid), "--dgid", gid(sw.guid)})
	}
	// The name lookups, by a CA's and a switch's description.
	for _, n := range []*topo.Node{ca.n, sw.n, ca2.n} {
		d := n.Desc
		cmds = append(cmds, []string{"saquery", "NR", d}, []string{"saquery", "-N", d}, []string{"saquery", "-L", d},
			[]string{"saquery", "-l", d}, []string{"saquery", "-G", d}, []string{"saquery", "-D", d})
	}
	cmds = append(cmds, []string{"saquery", "--src-to-dst", ca.n.Desc + ":" + ca2.n.Desc}, []string{"saquery", "-p", "--src-to-dst", ca.n.Desc + ":" + sw.lid})
	return cmds
}

// randMasked are the ibqueryerrors lines that print data counters, for
// diffMasked.
func randMasked(r *rand.Rand, f *topo.Fabric) [][]string {
	_, eps := randTargets(r, f)
	ca := eps[r.IntN(len(eps))]
	return [][]string{{"ibqueryerrors", "--data"}, {"ibqueryerrors", "--counters"}, {"ibqueryerrors", "-r", "--details", "--data"},
		{"ibqueryerrors", "-G", ca.guid, "--data"}, {"ibqueryerrors", "-s", "LinkDownedCounter", "--counters"},
		{"ibqueryerrors", "--counters", "--ca", "-r"}}
}

// diffMasked is diffCommandLine with the data counters' values masked:
// every MAD through a port moves them (ibsim counts them), so the two
// runs read different ones.
func diffMasked(t *testing.T, s *ibsimtest.Sim, host string, c []string) {
	t.Helper()
	what := strings.Join(c, " ") + " (data counters masked)"
	var want, got toolResult
	for try := 1; ; try++ {
		want = cTool(t, s, host, c[0], c[1:]...)
		got = ibscriptTool(t, s, host, c[0], c[1:]...)
		want.stdout = dataCounter.ReplaceAll(want.stdout, []byte("[$1 == N]"))
		got.stdout = dataCounter.ReplaceAll(got.stdout, []byte("[$1 == N]"))
		if try == loadTries || (string(want.stdout) == string(got.stdout) && want.code == got.code) {
			break
		}
		t.Logf("%s: the two differ (exit %d, the C tool's %d); both run again", what, got.code, want.code)
	}
	diffQuery(t, what, want, got)
}

// diffClearing compares the tools that reset counters, on a random CA
// and switch of f that are not OpenSM's node (no Sets go there): the
// same error counters planted before each side, the C tool's run and
// read back (perfquery), then ibscript's: ibqueryerrors -k and -K of the
// node (-G of a CA, -D of a switch), perfquery -r, -R and -R with a
// mask. Both sides must print the same and leave the counters the same.
func diffClearing(t *testing.T, s *ibsimtest.Sim, host string, rf *randtopo.Fabric, f *topo.Fabric, smLID uint16, r *rand.Rand, dr func(uint64) string) {
	t.Helper()
	byGUID := map[uint64]*topo.Node{}
	for _, n := range f.Nodes {
		byGUID[n.GUID] = n
	}
	type target struct {
		id, lid, port string
		sel           []string   // ibqueryerrors' selection of the node
		reset         [][]string // perfquery -R of each of its ports
	}
	var ts []target
	for _, ids := range [][]string{rf.Hosts, rf.Switches} {
		for _, id := range r.Perm(len(ids)) {
			n := byGUID[rf.GUIDs[ids[id]]]
			if n == nil || nodeHasLID(n, smLID) {
				continue // not reached (the island) or OpenSM's
			}
			// A switch by directed route: ibqueryerrors -G of a
			// switch's port hangs under umad2sim (docs/diag.md).
			p, port, sel := n.Ports[0], 1+r.IntN(min(4, n.NumPorts)), []string{"-D", dr(n.GUID)}
			if n.Type != topo.Switch {
				p, port = n.Ports[1], 1
				sel = []string{"-G", fmt.Sprintf("%#x", p.GUID)}
			}
			if p == nil || p.LID == 0 {
				continue
			}
			lid := strconv.Itoa(int(p.LID))
			reset := [][]string{{"-R", "-a", lid}}
			if n.Type != topo.Switch {
				reset = nil
				for q := 1; q <= n.NumPorts; q++ {
					reset = append(reset, []string{"-R", lid, strconv.Itoa(q)})
				}
			}
			ts = append(ts, target{ids[id], lid, strconv.Itoa(port), sel, reset})
			break
		}
	}
	for _, tg := range ts {
		// Every port's counters reset (the first counters planted, or a
		// -k of the other side, leave others), then the same planted.
		plant := func() {
			for _, c := range tg.reset {
				cRun(t, s, host, "perfquery", c...)
			}
			console(t, s,
				fmt.Sprintf(`PerformanceSet %q[%s] PortCounters.SymbolErrorCounter=42`, tg.id, tg.port),
				fmt.Sprintf(`PerformanceSet %q[%s] PortCounters.PortRcvErrors=7`, tg.id, tg.port),
				fmt.Sprintf(`PerformanceSet %q[%s] PortCounters.LinkDownedCounter=3`, tg.id, tg.port),
				fmt.Sprintf(`PerformanceSet %q[%s] PortCounters.PortXmitWait=1500`, tg.id, tg.port))
		}
		readBack := func() []byte {
			out, _ := cRun(t, s, host, "perfquery", tg.lid, tg.port)
			return out
		}
		qe := func(o ...string) []string { return append(append([]string{"ibqueryerrors"}, o...), tg.sel...) }
		for _, c := range [][]string{qe("-k"), qe("-K"), qe("-k", "-K", "--data"), {"perfquery", "-r", tg.lid, tg.port},
			{"perfquery", "-R", tg.lid, tg.port}, {"perfquery", "-R", tg.lid, tg.port, "0x0001"}, {"perfquery", "-x", "-r", tg.lid, tg.port}} {
			what := strings.Join(c, " ") + " (" + tg.id + ")"
			// Both sides again while they differ: a MAD that timed out
			// on a loaded machine (the other tests' loadTries).
			for try := 1; ; try++ {
				plant()
				want := cTool(t, s, host, c[0], c[1:]...)
				wantAfter := readBack()
				plant()
				got := ibscriptTool(t, s, host, c[0], c[1:]...)
				gotAfter := readBack()
				got.stdout = []byte(settleMoving(t, what, want.stdout, string(got.stdout), false))
				want.stdout = dataCounter.ReplaceAll(want.stdout, []byte("[$1 == N]"))
				got.stdout = dataCounter.ReplaceAll(got.stdout, []byte("[$1 == N]"))
				a, b := string(wantAfter), settleMoving(t, what, wantAfter, string(gotAfter), false)
				w := sbinIBError.ReplaceAllString(string(want.stdout), "$1: iberror: ")
				if try < loadTries && (w != string(got.stdout) || want.code != got.code || a != b) {
					t.Logf("%s: the two differ (exit %d, the C tool's %d); both run again", what, got.code, want.code)
					continue
				}
				diffQuery(t, what, want, got)
				if a != b {
					t.Errorf("%s: the counters after differ (-C +ibscript):\n%s", what, cmp.Diff(a, b))
				}
				break
			}
		}
	}
	if len(ts) == 0 {
		t.Logf("no CA or switch off OpenSM's node with a LID: no clearing compared")
	}
}

// diffRandIBStat compares ibstat on node: the same text, but for the
// rate of an EDR or HDR port, which umad2sim writes at 26 Gb/s a lane
// where the kernel (and ibscript) write 25 and 50 (TestGetPortMatchesIBStat),
// and of a 2x port (twoX: the node's port 1 is active at 2x), which
// umad2sim writes as 0 where the kernel multiplies by 2 (seeds 14, 16,
// 17: 2x DDR is 10, 2x EDR 50).
func diffRandIBStat(t *testing.T, s *ibsimtest.Sim, node string, twoX bool) {
	t.Helper()
	for _, args := range [][]string{{}, {"-l"}, {"-s"}, {"-p"}, {"ibsim0", "1"}, {"ibsim0", "2"}} {
		what := "ibstat " + strings.Join(args, " ") + " on " + node
		want := cTool(t, s, node, "ibstat", args...)
		got := ibscriptTool(t, s, node, "ibstat", args...)
		out := strings.ReplaceAll(string(got.stdout), "Link layer: InfiniBand\n", "Link layer: IB\n")
		wl, gl := strings.Split(string(want.stdout), "\n"), strings.Split(out, "\n")
		if len(wl) == len(gl) {
			for i := range gl {
				var c, o int
				if _, err := fmt.Sscanf(strings.TrimSpace(wl[i]), "Rate: %d", &c); err != nil {
					continue
				}
				if _, err := fmt.Sscanf(strings.TrimSpace(gl[i]), "Rate: %d", &o); err != nil {
					continue
				}
				if (o%25 == 0 && c == o/25*26) || (o%50 == 0 && c == o/50*26) || (twoX && c == 0) {
					gl[i] = wl[i]
				}
			}
		}
		got.stdout = []byte(strings.Join(gl, "\n"))
		diffQuery(t, what, want, got)
	}
}

// active2x says whether port 1 of the node of GUID guid in f is active
// at 2x.
func active2x(f *topo.Fabric, guid uint64) bool {
	for _, n := range f.Nodes {
		if n.GUID == guid && len(n.Ports) > 1 && n.Ports[1] != nil {
			return n.Ports[1].WidthActive == 16
		}
	}
	return false
}
