package exporter

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"
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
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("IBSCRIPT_TEST_PROMETHEUS") == "1" {
			t.Fatal("promtool is not installed (apt-get install prometheus): CI must run this test")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	for _, args := range [][]string{{"check", "rules", alertsFile}, {"test", "rules", alertsTest}} {
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		out, err := exec.CommandContext(ctx, promtool, args...).CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("promtool %v: %v\n%s", args, err, out)
		}
	}
}
