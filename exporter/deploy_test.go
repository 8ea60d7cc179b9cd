package exporter

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// The example deployment in deploy/: a Grafana dashboard and Prometheus
// alert rules.
const (
	dashboardFile = "../deploy/grafana-dashboard.json"
	alertsFile    = "../deploy/prometheus-alerts.yml"
	alertsTest    = "../deploy/prometheus-alerts_test.yml"
)

var metricName = regexp.MustCompile(`\binfiniband_[a-z0-9_]+`)

// exprs collects the "expr" strings of a decoded JSON value.
func exprs(v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "expr" || k == "query" || k == "definition") {
				*out = append(*out, s)
			}
			exprs(x, out)
		}
	case []any:
		for _, x := range v {
			exprs(x, out)
		}
	}
}

// TestDeployNames: every metric the dashboard and the alert rules name is
// one the exporter serves (a renamed series would leave a panel or an
// alert silently empty).
func TestDeployNames(t *testing.T) {
	served := map[string]bool{}
	for _, f := range families {
		served[f.name] = true
	}
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var dash any
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var qs []string
	exprs(dash, &qs)
	if len(qs) < 10 {
		t.Fatalf("%s: %d queries", dashboardFile, len(qs))
	}
	rules, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	// The rules without their comments (which name the other exporter).
	uncommented := regexp.MustCompile(`(?m)^\s*#.*$`).ReplaceAllString(string(rules), "")
	for file, texts := range map[string][]string{dashboardFile: qs, alertsFile: {uncommented}} {
		n := 0
		for _, q := range texts {
			for _, name := range metricName.FindAllString(q, -1) {
				n++
				if !served[name] {
					t.Errorf("%s: %s is not a metric the exporter serves", file, name)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s names no metric", file)
		}
	}
}

// TestDeployRules: promtool accepts the alert rules, and their unit tests
// (deploy/prometheus-alerts_test.yml: the alerts fire on the exporter's
// series) pass. Skipped without promtool, an error under CI.
func TestDeployRules(t *testing.T) {
	promtool := promtool(t)
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", alertsTest}} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		out, err := exec.CommandContext(ctx, promtool, args...).CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}

// TestAlertsFromLinkDown (issue 35): the chain from a link going down to
// an alert, on the exporter's own series: a link taken down on the
// simulator (its trap re-reads the switch at once) gives Switch1 port 3 a
// went-down time and a flap, and promtool test rules, fed those series
// as a scrape every minute would store them (before the link went down,
// then after), fires InfinibandPortDown and InfinibandLinkFlap for that
// port. Skipped without promtool, an error under CI.
func TestAlertsFromLinkDown(t *testing.T) {
	promtool := promtool(t)
	e, f := simExporter(t, net2sw, &Options{Traps: true, Interval: time.Hour, DiscoverInterval: time.Hour})
	await := running(t, e)
	port3 := func(s *Snapshot) *topo.Port {
		for _, n := range s.Switches {
			if n.Desc == "Switch1" {
				return n.Ports[3]
			}
		}
		t.Fatal("no Switch1")
		return nil
	}
	before := e.Families(await("the first sweep", 0, func(s *Snapshot) bool { return s.Subscribed }))
	if err := f.SetLink("Switch1", 3, false); err != nil {
		t.Fatal(err)
	}
	s := await("Switch1 port 3 down", 0, func(s *Snapshot) bool { st, _ := s.PortState(port3(s)); return st == smp.PortStateDown })
	after := e.Families(s)
	guid := hexGUID(port3(s).Node.GUID)
	// The series of Switch1 port 3 in a family of fams ("_": none).
	sample := func(fams []Family, name string) string {
		for _, f := range fams {
			if f.Name != name {
				continue
			}
			for _, sr := range f.Series {
				if sr.Labels[0] == guid && sr.Labels[1] == "3" {
					return strconv.FormatFloat(math.Floor(sr.Value), 'f', -1, 64)
				}
			}
		}
		return "_"
	}
	flaps, down := "infiniband_switch_port_link_flaps_total", "infiniband_switch_port_down_since_timestamp_seconds"
	if sample(before, flaps) != "0" || sample(after, flaps) != "1" || sample(before, down) != "_" || sample(after, down) == "_" {
		t.Fatalf("Switch1 port 3: flaps %s then %s, down since %s then %s; want 0, 1, none, a time",
			sample(before, flaps), sample(after, flaps), sample(before, down), sample(after, down))
	}
	at, _ := strconv.ParseInt(sample(after, down), 10, 64)
	rules, err := filepath.Abs(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	series := func(name, a, b string) string {
		return fmt.Sprintf("      - series: '%s{guid=%q,port=\"3\"}'\n        values: '%s %s %s %sx10'\n", name, guid, a, a, a, b)
	}
	unit := "rule_files:\n  - " + rules + "\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n    input_series:\n" +
		series(flaps, sample(before, flaps), sample(after, flaps)) + series(down, "_", sample(after, down)) +
		fmt.Sprintf(`    alert_rule_test:
      - eval_time: 5m
        alertname: InfinibandLinkFlap
        exp_alerts:
          - exp_labels: {severity: warning, guid: %q, port: "3"}
            exp_annotations:
              summary: "Switch %s port 3: the link went down 1 times in 10 minutes"
      - eval_time: 5m
        alertname: InfinibandPortDown
        exp_alerts:
          - exp_labels: {severity: critical, guid: %q, port: "3"}
            exp_annotations:
              summary: "Switch %s port 3 went down at %s and is still down"
`, guid, guid, guid, guid, time.Unix(at, 0).UTC().Format("2006-01-02 15:04:05 -0700 MST"))
	path := filepath.Join(t.TempDir(), "linkdown_test.yml")
	if err := os.WriteFile(path, []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	tctx, tcancel := context.WithTimeout(t.Context(), time.Minute)
	defer tcancel()
	if out, err := exec.CommandContext(tctx, promtool, "test", "rules", path).CombinedOutput(); err != nil {
		t.Errorf("promtool test rules: %v\n%s\n%s", err, out, unit)
	}
}
