package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ibscript/ibscript/internal/treydock"
)

// treydock/infiniband_exporter's documented command lines, copied as they
// are (facts, not code): its systemd unit's ExecStart
// (systemd/infiniband_exporter.service), its sysconfig's OPTIONS
// (systemd/infiniband_exporter.sysconfig, for infiniband_exporter@.service)
// and the flags its README gives for large fabrics (cron with
// --exporter.runonce, and the rcv-err-details variant), for the collectors
// (--collector.hca, --no-collector.<name>, --collector.ibswinfo) and for
// the external tools (--ibnetdiscover.node-name-map, --sudo,
// --ibnetdiscover.path, --perfquery.path, --ibswinfo.path,
// --ibswinfo.max-concurrent).
const (
	treydockExecStart = `/usr/local/bin/infiniband_exporter --web.listen-address=:9315`
	treydockSysconfig = `OPTIONS="--web.listen-address=:9315"`
	treydockRunonce   = `--exporter.runonce --exporter.output=/var/lib/node_exporter/textfile_collector/infiniband_exporter.prom`
	treydockRcvErr    = `--exporter.runonce --exporter.output=/var/lib/node_exporter/textfile_collector/infiniband_exporter.prom --no-collector.switch.base-metrics --collector.switch.rcv-err-details --perfquery.max-concurrent=8`
	treydockTools     = `--sudo --ibnetdiscover.path=/usr/sbin/ibnetdiscover --perfquery.path=/usr/sbin/perfquery --collector.ibswinfo --ibswinfo.path=/usr/local/bin/ibswinfo --ibswinfo.max-concurrent=4`
	treydockHCA       = `--collector.hca --no-collector.switch`
)

// treydockArgs splits a documented command line into its flags (after the
// program, or inside OPTIONS="..."), with the test's substitutions: the
// listen address's port (:9315 may be taken on a shared machine) and the
// output file's directory; nothing else changes.
func treydockArgs(line, dir string) []string {
	line = strings.TrimPrefix(line, "/usr/local/bin/infiniband_exporter ")
	if v, ok := strings.CutPrefix(line, "OPTIONS="); ok {
		line = strings.Trim(v, `"`)
	}
	line = strings.ReplaceAll(line, "--web.listen-address=:9315", "--web.listen-address=127.0.0.1:0")
	line = strings.ReplaceAll(line, "/var/lib/node_exporter/textfile_collector", dir)
	return strings.Fields(line)
}

// checkNames checks that every name of want is served with exactly its
// labels, and that none of absent is.
func checkNames(t *testing.T, what string, mfs map[string]*dto.MetricFamily, want map[string][]string, absent ...map[string][]string) {
	t.Helper()
	for name, labels := range want {
		mf := mfs[name]
		if mf == nil || len(mf.GetMetric()) == 0 {
			t.Errorf("%s: %s not served", what, name)
			continue
		}
		var got []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			got = append(got, lp.GetName())
		}
		slices.Sort(got)
		w := slices.Sorted(slices.Values(labels))
		if !slices.Equal(got, w) {
			t.Errorf("%s: %s labels %v, want %v", what, name, got, w)
		}
	}
	for _, m := range absent {
		for name := range m {
			if mfs[name] != nil {
				t.Errorf("%s: %s served, as treydock's exporter does not", what, name)
			}
		}
	}
}

func collectorLabels(mfs map[string]*dto.MetricFamily, name string) []string {
	var out []string
	if mf := mfs[name]; mf != nil {
		for _, m := range mf.GetMetric() {
			out = append(out, promLabels(m)["collector"])
		}
	}
	slices.Sort(out)
	return out
}

func parseText(t *testing.T, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	return mfs
}

// TestTreydockCommandLines (issue 35): treydock/infiniband_exporter's
// documented command lines start ibscript's exporter unchanged (but for
// the port and the output directory) and it serves that exporter's metric
// names with their labels: its systemd unit and sysconfig as a daemon, its
// README's cron lines as --exporter.runonce (collector="switch-runonce",
// infiniband_exporter_last_execution, detail counters only without base
// metrics), the collector and tool flags.
func TestTreydockCommandLines(t *testing.T) {
	for _, line := range []string{treydockExecStart, treydockSysconfig} {
		t.Run("daemon", func(t *testing.T) {
			addr, stop, stderr := startExporterArgv(t, append([]string{"exporter"}, treydockArgs(line, t.TempDir())...))
			waitHealthy(t, addr)
			mfs := scrape(t, addr)
			checkNames(t, line, mfs, treydock.SwitchBase, treydock.SwitchDetails, treydock.AsHCA(treydock.SwitchBase))
			checkNames(t, line, mfs, treydock.Collector)
			if got := collectorLabels(mfs, "infiniband_exporter_collect_errors"); !slices.Equal(got, []string{"switch"}) {
				t.Errorf("%s: collector labels %v, want [switch]", line, got)
			}
			if mfs["go_goroutines"] == nil || mfs["process_cpu_seconds_total"] == nil {
				t.Errorf("%s: no exporter metrics (go_*, process_*)", line)
			}
			if code := stop(); code != 0 {
				t.Errorf("exit %d: %s", code, stderr.String())
			}
			// promslog's logfmt at info: time=... level=INFO source=... msg=...
			if !strings.Contains(stderr.String(), "level=INFO") || !strings.Contains(stderr.String(), `msg="Listening on"`) {
				t.Errorf("no promslog info lines on stderr: %q", stderr.String())
			}
		})
	}

	runonce := func(t *testing.T, line string, extra ...string) (map[string]*dto.MetricFamily, string) {
		t.Helper()
		dir := t.TempDir()
		args := append([]string{"exporter", "--exporter.lockfile", filepath.Join(dir, "lock")}, treydockArgs(line, dir)...)
		var stdout, stderr bytes.Buffer
		if code := run(append(args, extra...), strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("%s: exit %d: %s", line, code, stderr.String())
		}
		if strings.Contains(line, "--exporter.output=-") {
			return parseText(t, stdout.Bytes()), stderr.String()
		}
		b, err := os.ReadFile(filepath.Join(dir, "infiniband_exporter.prom"))
		if err != nil {
			t.Fatal(err)
		}
		if stdout.Len() != 0 {
			t.Errorf("%s: stdout %q", line, stdout.String())
		}
		return parseText(t, b), stderr.String()
	}
	t.Run("runonce", func(t *testing.T) {
		mfs, _ := runonce(t, treydockRunonce)
		checkNames(t, treydockRunonce, mfs, treydock.SwitchBase, treydock.SwitchDetails)
		checkNames(t, treydockRunonce, mfs, treydock.Collector)
		checkNames(t, treydockRunonce, mfs, map[string][]string{"infiniband_exporter_last_execution": {"collector"}})
		if got := collectorLabels(mfs, "infiniband_exporter_collect_errors"); !slices.Equal(got, []string{"switch-runonce"}) {
			t.Errorf("collector labels %v, want [switch-runonce]", got)
		}
	})
	t.Run("rcv-err-details", func(t *testing.T) {
		mfs, _ := runonce(t, treydockRcvErr)
		checkNames(t, treydockRcvErr, mfs, treydock.SwitchDetails, treydock.SwitchBase)
		checkNames(t, treydockRcvErr, mfs, treydock.Collector)
	})
	t.Run("tools", func(t *testing.T) {
		// The tool flags change nothing; --collector.ibswinfo says so.
		mfs, stderr := runonce(t, treydockTools+" --exporter.runonce --exporter.output=-")
		checkNames(t, treydockTools, mfs, treydock.SwitchBase, treydock.SwitchDetails)
		if !strings.Contains(stderr, "--collector.ibswinfo is accepted but collects nothing") {
			t.Errorf("stderr %q does not say ibswinfo collects nothing", stderr)
		}
	})
	t.Run("hca", func(t *testing.T) {
		mfs, _ := runonce(t, treydockHCA+" --exporter.runonce --exporter.output=-")
		checkNames(t, treydockHCA, mfs, treydock.AsHCA(treydock.SwitchBase), treydock.SwitchBase, treydock.AsHCA(treydock.SwitchDetails))
		if got := collectorLabels(mfs, "infiniband_exporter_collect_errors"); !slices.Equal(got, []string{"hca-runonce", "switch-runonce"}) {
			t.Errorf("collector labels %v", got)
		}
	})
	t.Run("node-name-map", func(t *testing.T) {
		dir := t.TempDir()
		nm := filepath.Join(dir, "map")
		// The default simulated fabric's first switch, renamed.
		var stdout, stderr bytes.Buffer
		if code := run([]string{"ibswitches"}, strings.NewReader(""), &stdout, &stderr); code != 0 {
			t.Fatalf("ibswitches: %d %s", code, stderr.String())
		}
		f := strings.Fields(stdout.String())
		if len(f) < 3 {
			t.Fatalf("ibswitches: %q", stdout.String())
		}
		if err := os.WriteFile(nm, []byte(f[2]+" \"renamed-by-map\"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		mfs, _ := runonce(t, "--ibnetdiscover.node-name-map "+nm+" --exporter.runonce --exporter.output=-")
		found := false
		for _, m := range mfs["infiniband_switch_info"].GetMetric() {
			found = found || promLabels(m)["switch"] == "renamed-by-map"
		}
		if !found {
			t.Errorf("--ibnetdiscover.node-name-map: no switch named renamed-by-map")
		}
	})
}
