package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/topo"
)

// The benchmarks below time what issue 33's Done-when names, "discovered,
// validated, exported and queried with the tools, in the simulator", on
// today's 2,000-node fat tree (fattree-2000, SDR; and the same at XDR)
// and on the planarized XDR one of 4 planes each that tree (genfattree
// -preset 2000 -xdr -planes 4: 2,240 nodes, 2,000 of them on each plane).
// Every command runs in process as it runs from the shell, loading the
// simulator from the file.
//
// "Per node" is reported three ways (BENCHMARKS.md says why the first
// is the one that compares like with like):
//   - per visit (cpu-ns/visit): a visit is a node reached on one plane,
//     summed over the planes a command walks: a switch is on one plane,
//     a planarized CA on each plane its ports are. One plane of the
//     planarized tree is 2,000 visits, as fattree-2000 is; discover,
//     topology and validate.lua walk its 4 planes (8,000), and so does
//     the exporter (its link series count its planes), ibnetdiscover,
//     iblinkinfo and ibqueryerrors the local port's plane (2,000);
//     perfquery -a is 1.
//     The visits are counted from the commands' output, not assumed.
//   - per distinct node of the file (cpu-ns/fnode): 2,000 or 2,240.
//   - per 2,000 nodes (ns/node, cpu-ns/node): BenchmarkFabric2000's
//     figure since session 10, kept to compare with the earlier rounds.

// fabric2000 is one fabric of the benchmarks.
type fabric2000 struct {
	name string
	spec fattree.Spec
	args []string // validate.lua's
}

var fabrics2000 = []fabric2000{
	{"fattree-2000", fattree.Nodes2000, nil},
	{"fattree-xdr-2000", fattree.Spec{Leaves: 64, Spines: 16, Hosts: 30, LinksPerSpine: 1, XDR: true}, []string{"--arg", "speed=XDR"}},
	{"planes-xdr-2000x4", fattree.Spec{Leaves: 64, Spines: 16, Hosts: 30, LinksPerSpine: 1, XDR: true, Planes: 4}, []string{"--arg", "speed=XDR"}},
}

// verbCmd is one command and the Done-when verb it stands for; old marks
// the seven commands BenchmarkFabric2000 has run since session 10.
type verbCmd struct {
	verb   string
	args   []string
	old    bool
	visits int // nodes it reaches, summed over the planes it walks
}

// verbs2000 are the Done-when's four verbs in the order they are timed.
var verbs2000 = []string{"discover", "validate", "export", "query"}

// benchFabric writes fb's topology into dir and returns its commands,
// each run once (which warms up and checks them) with its visits counted
// from its output, and the number of nodes in the file.
func benchFabric(b *testing.B, dir string, fb fabric2000) ([]verbCmd, int) {
	b.Helper()
	path := filepath.Join(dir, fb.name+".net")
	if err := fb.spec.WriteFile(path); err != nil {
		b.Fatal(err)
	}
	file, err := topo.ParseFile(path)
	if err != nil {
		b.Fatal(err)
	}
	fab := "sim:" + path
	metrics := filepath.Join(dir, "metrics")
	cmds := []verbCmd{
		{verb: "discover", args: []string{"discover", "--fabric", fab}, old: true},
		{verb: "validate", args: append([]string{"run", "--fabric", fab, "../../scripts/validate.lua"}, fb.args...), old: true},
		{verb: "discover", args: []string{"topology", "--fabric", fab, "--format", "json"}, old: true},
		{verb: "export", args: []string{"exporter", "--fabric", fab, "--once", "--output", metrics}, old: true},
		{verb: "query", args: []string{"ibnetdiscover", "--fabric", fab}, old: true},
		{verb: "query", args: []string{"iblinkinfo", "--fabric", fab}, old: true},
		{verb: "query", args: []string{"ibqueryerrors", "--fabric", fab}},
		{verb: "query", args: []string{"perfquery", "--fabric", fab, "-a"}, old: true},
	}
	outs := make([]string, len(cmds))
	for i, c := range cmds {
		outs[i] = runBenchCmd(b, fb.name, c.args)
	}
	all, allLinks := planeVisits(b, outs[0]) // discover: every plane
	plane, links := planeVisits(b, outs[4])  // ibnetdiscover: the local port's
	if allLinks%links != 0 || links == 0 {
		b.Fatalf("%s: %d links on every plane, %d on one", fb.name, allLinks, links)
	}
	prom, err := os.ReadFile(metrics)
	if err != nil {
		b.Fatal(err)
	}
	// The exporter's planes: its link series over one plane's links.
	exported := strings.Count(string(prom), "\ninfiniband_link_info{")
	if exported == 0 || exported%links != 0 {
		b.Fatalf("%s: the exporter has %d link series, a plane %d links", fb.name, exported, links)
	}
	for i := range cmds {
		switch cmds[i].args[0] {
		case "discover", "topology", "run":
			// validate.lua's discovery is discover's (every plane)
			cmds[i].visits = all
		case "exporter":
			cmds[i].visits = plane * exported / links
		case "perfquery":
			cmds[i].visits = 1
		default:
			cmds[i].visits = plane
		}
	}
	return cmds, len(file.Nodes)
}

// planeVisits parses a discovery's ibnetdiscover text and returns its
// visits (each switch once, each CA once per cabled port: once per plane
// for a planarized CA) and its links.
func planeVisits(b *testing.B, text string) (visits, links int) {
	b.Helper()
	t, err := topo.Parse("discovery", strings.NewReader(text))
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range t.Nodes {
		if n.Type == topo.Switch {
			visits++
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil {
				visits++
			}
		}
	}
	return visits, len(t.Links())
}

// runBenchCmd runs one command as the shell would and returns its output.
func runBenchCmd(b *testing.B, fabric string, args []string) string {
	var out, errOut bytes.Buffer
	if code := run(append([]string{"--quiet"}, args...), strings.NewReader(""), &out, &errOut); code != 0 {
		b.Fatalf("%s on %s: exit %d: %s", args, fabric, code, errOut.String())
	}
	if args[0] == "run" && !strings.Contains(out.String(), " passed, 0 failed") {
		b.Fatalf("validate.lua on %s:\n%s", fabric, out.String())
	}
	return out.String()
}

// timeCmds runs cmds b.N times and reports the time per visit and per
// node of the file.
func timeCmds(b *testing.B, fabric string, cmds []verbCmd, nodes int) {
	visits := 0
	for _, c := range cmds {
		visits += c.visits
	}
	cpu0 := processCPU()
	for b.Loop() {
		for _, c := range cmds {
			runBenchCmd(b, fabric, c.args)
		}
	}
	cpu := float64((processCPU() - cpu0).Nanoseconds()) / float64(b.N)
	b.ReportMetric(cpu/float64(visits), "cpu-ns/visit")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(visits), "ns/visit")
	b.ReportMetric(cpu/float64(nodes), "cpu-ns/fnode")
	b.ReportMetric(float64(visits), "visits/op")
}

// BenchmarkFabric2000 runs the seven commands of session 10 (discover,
// validate.lua, topology --format json, the exporter's one sweep,
// ibnetdiscover, iblinkinfo and perfquery -a) on each fabric; ns/node and
// cpu-ns/node are per 2,000 nodes, as they were then.
func BenchmarkFabric2000(b *testing.B) {
	dir := b.TempDir()
	for _, fb := range fabrics2000 {
		cmds, nodes := benchFabric(b, dir, fb)
		var old []verbCmd
		for _, c := range cmds {
			if c.old {
				old = append(old, c)
			}
		}
		b.Run(fb.name, func(b *testing.B) {
			cpu0 := processCPU()
			timeCmds(b, fb.name, old, nodes)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/2000, "ns/node")
			b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/float64(b.N)/2000, "cpu-ns/node")
		})
	}
}

// BenchmarkFabric2000Verbs times each verb of the Done-when on each
// fabric: discover (discover, topology --format json), validate
// (validate.lua), export (the exporter's one sweep) and query
// (ibnetdiscover, iblinkinfo, ibqueryerrors, perfquery -a).
func BenchmarkFabric2000Verbs(b *testing.B) {
	dir := b.TempDir()
	for _, fb := range fabrics2000 {
		cmds, nodes := benchFabric(b, dir, fb)
		for _, verb := range verbs2000 {
			var these []verbCmd
			for _, c := range cmds {
				if c.verb == verb {
					these = append(these, c)
				}
			}
			b.Run(fb.name+"/"+verb, func(b *testing.B) { timeCmds(b, fb.name, these, nodes) })
		}
	}
}

// processCPU is the process's user plus system CPU time so far (the
// machine's other load changes it less than the wall clock).
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru) // zero on error
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
