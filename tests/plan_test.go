package tests

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/internal/jsonschema"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/plan"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
	"github.com/ibscript/ibscript/topo"
)

// runPlan runs a plan script of scripts/ on f as `ibscript run` does
// (package.path with the script's directory and its checks/) and returns
// its report.
func runPlan(tb testing.TB, f *sim.Fabric, script string, args map[string]string) *plan.Report {
	tb.Helper()
	return runPlanWith(tb, f, nil, script, args)
}

// runPlanWith is runPlan on a session made with eopts.
func runPlanWith(tb testing.TB, f *sim.Fabric, eopts *engine.Options, script string, args map[string]string) *plan.Report {
	tb.Helper()
	var out bytes.Buffer
	L, env, done := planState(tb, context.Background(), f, eopts, bindings.Options{Stdout: &out,
		PlanName: strings.TrimSuffix(filepath.Base(script), ".lua"), PlanArgs: args})
	defer done()
	dir := filepath.Dir(script)
	pkg := L.GetGlobal("package").(*lua.LTable)
	pkg.RawSetString("path", lua.LString(filepath.Join(dir, "?.lua")+";"+filepath.Join(dir, "checks", "?.lua")))
	err := bindings.DoFile(L, script)
	r := env.PlanReport(err)
	if r == nil {
		tb.Fatalf("%s made no report (err %v)", script, err)
	}
	if err != nil {
		tb.Logf("%s: %v", script, err)
	}
	return r
}

func failedChecks(r *plan.Report) []string { return checksWith(r, plan.Fail) }

// checksWith names r's checks that ended with one of the statuses, in
// the report's order.
func checksWith(r *plan.Report, status ...plan.Status) []string {
	var out []string
	for _, c := range r.Checks {
		if slices.Contains(status, c.Status) {
			out = append(out, c.Name)
		}
	}
	return out
}

// unreadMessages are the messages of r's error results (what its checks
// could not read), in the report's order.
func unreadMessages(r *plan.Report) []string {
	var out []string
	for _, c := range r.Checks {
		for _, res := range c.Results {
			if res.Status == plan.Error {
				out = append(out, res.Message)
			}
		}
	}
	return out
}

func loadSim(tb testing.TB, topology string) *sim.Fabric {
	tb.Helper()
	f := simtest.Load(tb, topology, nil)
	return f
}

// session opens a second session on f, for planting faults by SMP.
func session(tb testing.TB, f *sim.Fabric) *engine.Session {
	tb.Helper()
	return simtest.Session(tb, f, nil)
}

// TestPlantedFaults runs scripts/validate.lua on fabrics with one planted
// fault each: exactly the expected checks fail (and those that cannot
// read what the fault hides end in ERROR), in every output format, and
// the clean fabric passes everything.
func TestPlantedFaults(t *testing.T) {
	const clean = "topologies/net.2sw2path4hca"
	dir := t.TempDir()
	thresholds := filepath.Join(dir, "error_thresholds")
	os.WriteFile(thresholds, []byte("# ibqueryerrors format\nSymbolErrorCounter=10\n#LinkDownedCounter=10\n"), 0o644)
	for _, c := range []struct {
		name     string
		topology string
		args     map[string]string
		plant    func(t *testing.T, f *sim.Fabric)
		want     []string // the checks that fail
		unread   []string // the checks that end in ERROR (exit 2)
		// unreadMsgs are the messages of the ERROR checks' results, in
		// the report's order (when not nil)
		unreadMsgs []string
	}{
		{name: "clean", topology: clean, args: map[string]string{"width": "4X", "thresholds": thresholds}},
		{name: "degraded link", topology: "topologies/net.2sw2path4hca-degraded", args: map[string]string{"width": "4X"},
			want: []string{"expected width and speed"}},
		// The SM refuses the zero-GUID router as OpenSM does: its link
		// stays in Init, and with no LID its PMA cannot be read: it is
		// not asked at LID 0 (ibqueryerrors asks there; the simulator
		// leaves that to time out every try), it is named; so is it by
		// the deltas check (interval given), which sweeps no LID 0 either.
		{name: "zero router GUID, partners enabling different sets", topology: "topologies/net.2sw2path4hca-faulty",
			args: map[string]string{"interval": "0.01"},
			want: []string{"links ACTIVE", "no zero GUIDs"}, unread: []string{"error counters within thresholds", "error counter deltas"},
			unreadMsgs: []string{"Rtr port 1: has no LID: the SM did not configure it", "has no LID: the SM did not configure it"}},
		{name: "duplicate GUID", topology: clean, plant: func(t *testing.T, f *sim.Fabric) {
			hca1 := findNode(t, session(t, f), "Hca1")
			if err := f.SetPortGUID("Hca2", 1, hca1.Ports[1].GUID); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"unique GUIDs"}},
		{name: "missing cable", topology: "topologies/net.2sw2path4hca-nocable",
			args: map[string]string{"reference": clean}, want: []string{"topology matches the reference"}},
		{name: "broken LFT entry", topology: clean, plant: func(t *testing.T, f *sim.Fabric) {
			// Switch2 (behind Switch1's port 3) sends Hca1's LID out of
			// its uncabled port 8.
			s := session(t, f)
			hcaLID := findNode(t, s, "Hca1").Ports[1].LID
			sw2 := engine.DR(3)
			data, err := s.SMP(t.Context(), sw2, mad.MethodGet, smp.AttrLinearForwardingTable, uint32(hcaLID/64), nil)
			if err != nil {
				t.Fatal(err)
			}
			data[hcaLID%64] = 8
			if _, err := s.SMP(t.Context(), sw2, mad.MethodSet, smp.AttrLinearForwardingTable, uint32(hcaLID/64), data); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"LFTs reach every LID"}},
		// The ring routed one way round (every switch sends what is not
		// its own to the next clockwise): every route arrives, but the
		// four inter-switch channels wait on each other.
		{name: "credit loop", topology: "topologies/net.route-ring", args: map[string]string{"credit_loops": "true", "multicast": "true"},
			plant: func(t *testing.T, f *sim.Fabric) {
				s := session(t, f)
				next := map[string]uint8{"ring sw-A 'top'": 3, "ring-B": 4, "ring-C": 5, "ring-D": 4}
				at := map[string]string{"h2": "", "h3 with  two spaces": "ring-C", "h4": "ring-D", "host no.1 (one)": "ring sw-A 'top'"}
				for host, local := range at {
					for _, p := range findNode(t, s, host).Ports {
						if p == nil || p.LID == 0 {
							continue
						}
						for sw, out := range next {
							if sw == local || (host == "h2" && (sw == "ring sw-A 'top'" || sw == "ring-B")) {
								continue
							}
							if err := f.SetLFT(sw, p.LID, out); err != nil {
								t.Fatal(err)
							}
						}
					}
				}
			}, want: []string{"no credit loops"}},
		{name: "ring routed by the SM, analytics asked", topology: "topologies/net.route-ring", args: map[string]string{"credit_loops": "true", "multicast": "true"}},
		{name: "two master SMs", topology: clean, plant: func(t *testing.T, f *sim.Fabric) {
			if err := f.AddSM("Hca4", 1, smp.SMStateMaster, 1); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"one MASTER SM"}},
		{name: "counters over threshold", topology: clean, args: map[string]string{"thresholds": thresholds}, plant: func(t *testing.T, f *sim.Fabric) {
			if err := f.SetCounter("Switch1", 2, "symbol_error_counter", 50); err != nil {
				t.Fatal(err)
			}
			if err := f.SetCounter("Switch1", 3, "symbol_error_counter", 10); err != nil { // at the threshold: fine
				t.Fatal(err)
			}
		}, want: []string{"error counters within thresholds"}},
		// ibqueryerrors reads every switch port: discards on an unused one
		// count; a CA port discovery never reached is read by neither.
		{name: "discards on an unused switch port", topology: clean, plant: func(t *testing.T, f *sim.Fabric) {
			if err := f.SetCounter("Switch1", 4, "port_xmit_discards", 7); err != nil {
				t.Fatal(err)
			}
			if err := f.SetCounter("Hca1", 2, "port_rcv_errors", 9); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"error counters within thresholds"}},
		{name: "port xmit wait", topology: clean, plant: func(t *testing.T, f *sim.Fabric) {
			if err := f.SetCounter("Switch2", 2, "port_xmit_wait", 11); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"error counters within thresholds"}},
		{name: "unreached CA port", topology: clean, plant: func(t *testing.T, f *sim.Fabric) {
			if err := f.SetCounter("Hca1", 2, "port_rcv_errors", 9); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := loadSim(t, c.topology)
			if c.plant != nil {
				c.plant(t, f)
			}
			r := runPlan(t, f, "../scripts/validate.lua", c.args)
			if r.Error != "" {
				t.Fatalf("run failed: %s", r.Error)
			}
			if got := failedChecks(r); !slices.Equal(got, c.want) {
				var b bytes.Buffer
				plan.WriteText(&b, r, false)
				t.Fatalf("failed checks %q, want %q\n%s", got, c.want, b.String())
			}
			if got := checksWith(r, plan.Error); !slices.Equal(got, c.unread) {
				t.Errorf("checks in ERROR %q, want %q", got, c.unread)
			}
			if got := unreadMessages(r); c.unreadMsgs != nil && !slices.Equal(got, c.unreadMsgs) {
				t.Errorf("could not read %q, want %q", got, c.unreadMsgs)
			}
			wantExit := plan.ExitOK
			switch {
			case len(c.unread) > 0:
				wantExit = plan.ExitError
			case len(c.want) > 0:
				wantExit = plan.ExitFailed
			}
			if r.ExitCode() != wantExit {
				t.Errorf("exit %d, want %d", r.ExitCode(), wantExit)
			}
			checkFormats(t, r, c.want, c.unread)
		})
	}
}

// checkFormats writes r in every format and checks each shows exactly the
// failed checks want as failed and the checks unread as in error (TAP's
// "not ok" lists both, in the report's order).
func checkFormats(t *testing.T, r *plan.Report, want, unread []string) {
	t.Helper()
	schema := jsonschema.Load(t, "../docs/plan-report.schema.json")
	for _, format := range plan.Formats() {
		var b bytes.Buffer
		if err := plan.Write(&b, format, r, false); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		var failPat, errPat string
		wantFail := want
		switch format {
		case "text":
			failPat = `(?m)^  FAIL  (.+?)\s+\d+ ok, \d+ failed$`
			errPat = `(?m)^  ERROR (.+?)\s+\d+ ok, \d+ could not be read$`
		case "json":
			if errs := schema.Validate(b.Bytes()); len(errs) > 0 {
				t.Errorf("json: schema: %s", strings.Join(errs, "\n"))
			}
			failPat = `"name": "([^"]+)",\s+"category": "[^"]+",\s+"status": "fail"`
			errPat = `"name": "([^"]+)",\s+"category": "[^"]+",\s+"status": "error"`
		case "tap":
			failPat = `(?m)^not ok \d+ - [^:]+: (.+)$`
			wantFail = checksWith(r, plan.Fail, plan.Error)
			if n := len(want) + len(unread); len(wantFail) != n {
				t.Errorf("tap: the report has %q failed or in error, want %d", wantFail, n)
			}
		case "junit":
			failPat = `<testcase name="([^"]+)"[^>]*>\s*<failure `
		}
		matches := func(pat string) []string {
			var got []string
			for _, m := range regexp.MustCompile(pat).FindAllStringSubmatch(out, -1) {
				got = append(got, m[1])
			}
			return got
		}
		if got := matches(failPat); !slices.Equal(got, wantFail) {
			t.Errorf("%s: failed checks %q, want %q\n%s", format, got, wantFail, out)
		}
		if errPat == "" {
			continue
		}
		if got := matches(errPat); !slices.Equal(got, unread) {
			t.Errorf("%s: checks in error %q, want %q\n%s", format, got, unread, out)
		}
	}
}

func findNode(t *testing.T, s *engine.Session, desc string) *topo.Node {
	t.Helper()
	d, err := s.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range d.Fabric.Nodes {
		if n.Desc == desc {
			return n
		}
	}
	t.Fatalf("no node %q", desc)
	return nil
}

// TestValidateFatTree2000 runs validate.lua on the bundled 2,000-node fat
// tree: everything passes and the JSON report matches the schema.
func TestValidateFatTree2000(t *testing.T) {
	f := loadSim(t, "topologies/fattree-2000.net")
	r := runPlan(t, f, "../scripts/validate.lua", nil)
	if got := failedChecks(r); len(got) > 0 || r.Error != "" {
		t.Fatalf("failed %q, error %q", got, r.Error)
	}
	if r.Fabric.Nodes != 2000 {
		t.Errorf("%d nodes", r.Fabric.Nodes)
	}
	checkFormats(t, r, nil, nil)
}

// TestValidatePlanarized2000 runs validate.lua on the planarized XDR fat
// tree of 4 planes, each the 2,000-node tree (genfattree -preset 2000 -xdr
// -planes 4: 2,240 nodes): from the SM's plane port it checks every plane
// (its 2,240 nodes, each plane's links, LIDs and forwarding tables), and
// everything passes (docs/planes.md; cmd/ibscript BenchmarkFabric2000
// times it against fattree-2000).
func TestValidatePlanarized2000(t *testing.T) {
	spec := fattree.Nodes2000
	spec.XDR, spec.Planes = true, 4
	path := filepath.Join(t.TempDir(), "planes.net")
	if err := spec.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	r := runPlan(t, loadSim(t, path), "../scripts/validate.lua", map[string]string{"speed": "XDR"})
	if got := failedChecks(r); len(got) > 0 || r.Error != "" || r.Fabric.Nodes != 2240 || spec.Nodes() != 2240 {
		t.Fatalf("failed %q, error %q, %d nodes of %d", got, r.Error, r.Fabric.Nodes, spec.Nodes())
	}
	// 4 planes' worth: each plane's 80 switches and 2,000 LIDs (1,920
	// host plane ports, 80 switches), 2,944 links
	for _, c := range r.Checks {
		want := map[string]string{"discovery": "2240 nodes, 11776 links, 4 planes",
			"LFTs reach every LID": "320 switches, 8000 LIDs, 640000 routes followed"}[c.Name]
		if want != "" && (len(c.Results) == 0 || c.Results[len(c.Results)-1].Message != want) {
			t.Errorf("%s: %+v, want %q", c.Name, c.Results, want)
		}
		if c.Name == "links ACTIVE" && c.Passed != 11776 {
			t.Errorf("links ACTIVE: %d passed, want 11776", c.Passed)
		}
	}
}

// BenchmarkValidate16k runs validate.lua on a 16,050-node fat tree (250
// leaves x 63 hosts, 50 spines): discovery, every check, the report.
func BenchmarkValidate16k(b *testing.B) {
	path := fattree.TempFile(b, 250, 50, 63)
	f, err := sim.Load(path, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var last bytes.Buffer
	for b.Loop() {
		r := runPlan(b, f, "../scripts/validate.lua", nil)
		if got := failedChecks(r); len(got) > 0 || r.Error != "" {
			b.Fatalf("failed %q, error %q", got, r.Error)
		}
		last.Reset()
		if err := plan.WriteJSON(&last, r); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	schema := jsonschema.Load(b, "../docs/plan-report.schema.json")
	if errs := schema.Validate(last.Bytes()); len(errs) > 0 {
		b.Fatalf("the 16k report does not match the schema: %s", strings.Join(errs, "\n"))
	}
	b.ReportMetric(float64(last.Len()), "report-bytes")
}

// TestDeadSwitchNamedInReport: with a switch dead and a reference
// topology, the discovery check's results name the port each failed
// route leaves from and the switch the reference had behind it. A switch
// that never answers cannot be told from one whose answers were all lost:
// what it hides is "could not be read" (status error, exit 2), and no
// check fails for it (routes into it, counters and cables behind it).
func TestDeadSwitchNamedInReport(t *testing.T) {
	const clean = "topologies/net.2sw2path4hca"
	f := loadSim(t, clean)
	if err := f.SetFaults(sim.Faults{DeadNodes: []string{"Switch2"}}); err != nil {
		t.Fatal(err)
	}
	r := runPlan(t, f, "../scripts/validate.lua", map[string]string{"reference": clean})
	var disc *plan.Check
	for _, c := range r.Checks {
		if c.Name == "discovery" {
			disc = c
		}
	}
	if disc == nil || disc.Status != plan.Error || len(disc.Results) == 0 {
		t.Fatalf("discovery check %+v: want could-not-read results for the dead switch", disc)
	}
	if got := failedChecks(r); len(got) > 0 || r.ExitCode() != plan.ExitError {
		var b bytes.Buffer
		plan.WriteText(&b, r, false)
		t.Errorf("failed checks %q, exit %d: want none failed and exit 2\n%s", got, r.ExitCode(), b.String())
	}
	named := 0
	for _, res := range disc.Results {
		if strings.Contains(res.Message, `where the reference topology had "Switch2" (Switch2) port`) {
			named++
		}
	}
	if named == 0 {
		var b bytes.Buffer
		plan.WriteText(&b, r, false)
		t.Errorf("no failure names Switch2:\n%s", b.String())
	}
}

// TestValidateXDR runs validate.lua on the bundled XDR fat tree
// (genfattree -xdr, 4x XDR links): everything passes, --arg speed=XDR
// too, every link reads 4X XDR (discovery aggregates LinkSpeedExtActive2
// as libibnetdisc does); with one leaf port enabling no more than NDR
// (its ibnetdiscover comment 4xNDR), that link runs NDR, the best both
// ends enable, and the expected speed check fails on it alone.
func TestValidateXDR(t *testing.T) {
	const file = "topologies/fattree-xdr-50.net"
	var want bytes.Buffer
	if err := (fattree.Spec{Leaves: 4, Spines: 2, Hosts: 11, LinksPerSpine: 1, XDR: true}).Write(&want); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(text, want.Bytes()) {
		t.Errorf("%s is not genfattree -leaves 4 -spines 2 -hosts 11 -xdr", file)
	}
	args := map[string]string{"width": "4X", "speed": "XDR"}
	r := runPlan(t, loadSim(t, file), "../scripts/validate.lua", args)
	if got := failedChecks(r); len(got) > 0 || r.Error != "" || r.Fabric.Nodes != 50 {
		t.Fatalf("failed %q, error %q, %d nodes", got, r.Error, r.Fabric.Nodes)
	}

	const port = "[1]\t\"h000-00\"[1]\t# lid 0 4x"
	if !bytes.Contains(text, []byte(port+"XDR")) {
		t.Fatalf("%s has no %q", file, port)
	}
	degraded := filepath.Join(t.TempDir(), "xdr-ndr.net")
	if err := os.WriteFile(degraded, bytes.Replace(text, []byte(port+"XDR"), []byte(port+"NDR"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	r = runPlan(t, loadSim(t, degraded), "../scripts/validate.lua", args)
	if got := failedChecks(r); !slices.Equal(got, []string{"expected width and speed"}) {
		t.Fatalf("failed %q, want the expected speed check", got)
	}
	for _, c := range r.Checks {
		if c.Status != plan.Fail {
			continue
		}
		var msgs []string
		for _, res := range c.Results {
			if res.Status == plan.Fail {
				msgs = append(msgs, res.Message)
			}
		}
		if len(msgs) != 1 || !strings.Contains(msgs[0], "h000-00 port 1") || !strings.Contains(msgs[0], "NDR") {
			t.Errorf("%s: failures %q, want h000-00's link at NDR", c.Name, msgs)
		}
	}
}
