package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ibscript/ibscript/internal/syncbuf"
	"github.com/ibscript/ibscript/topo"
)

// startExporter runs `ibscript exporter ARGS` on a loopback port and
// returns its address, a function that stops it and returns its exit
// status, and its stderr.
func startExporter(t *testing.T, args ...string) (addr string, stop func() int, stderr *syncbuf.Buffer) {
	t.Helper()
	return startExporterArgv(t, append([]string{"exporter", "--web.listen-address", "127.0.0.1:0"}, args...))
}

// startExporterArgv is startExporter with the whole command line (its
// --web.listen-address too).
func startExporterArgv(t *testing.T, argv []string) (addr string, stop func() int, stderr *syncbuf.Buffer) {
	t.Helper()
	started := make(chan struct{})
	var stopFn func()
	testExporterStarted = func(a string, s func()) { addr, stopFn = a, s; close(started) }
	t.Cleanup(func() { testExporterStarted = nil })
	stderr = &syncbuf.Buffer{}
	codec := make(chan int, 1)
	go func() {
		codec <- run(argv, strings.NewReader(""), io.Discard, stderr)
	}()
	select {
	case <-started:
	case code := <-codec:
		t.Fatalf("exporter exited with %d before listening: %s", code, stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatal("exporter not listening within 30s")
	}
	var once sync.Once
	code := -1
	stop = func() int {
		once.Do(func() {
			stopFn()
			select {
			case code = <-codec:
			case <-time.After(30 * time.Second):
				t.Fatal("exporter did not end within 30s of stop")
			}
		})
		return code
	}
	t.Cleanup(func() { stop() })
	return addr, stop, stderr
}

var httpClient = &http.Client{Timeout: time.Minute} // a hang bound: -race on a loaded machine is 10-20x slower

func httpGet(t *testing.T, url, accept string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// waitHealthy polls /healthz until it answers 200 (a sweep completed).
func waitHealthy(t *testing.T, addr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, body := httpGet(t, "http://"+addr+"/healthz", "")
		if resp.StatusCode == http.StatusOK {
			if !strings.HasPrefix(string(body), "ok: sweep ") {
				t.Errorf("/healthz: %q", body)
			}
			return
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("/healthz: %s %q", resp.Status, body)
		}
		if time.Now().After(deadline) {
			t.Fatal("/healthz not 200 within 30s")
		}
		time.Sleep(10 * time.Millisecond) // polling, not synchronisation
	}
}

func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, body := httpGet(t, "http://"+addr+"/metrics", "")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return mfs
}

func promLabels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// TestExporterCommand runs the exporter on the simulator, as a user
// would, and scrapes it: one series per linked switch port of the
// topology file for every counter, switches named as the file names
// them, scrapes that follow the sweeps, OpenMetrics on request, and exit
// status 0 when stopped.
func TestExporterCommand(t *testing.T) {
	const net2sw = "../../tests/topologies/net.2sw2path4hca"
	addr, stop, stderr := startExporter(t, "--fabric", "sim:"+net2sw, "--interval", "20ms", "--details")
	waitHealthy(t, addr)

	// What the file cables: switch name -> linked port numbers.
	tf, err := topo.ParseFile(net2sw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, n := range tf.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		for _, p := range n.Ports {
			if p != nil && p.Num > 0 && p.Remote != nil {
				want[n.Desc+":"+strconv.Itoa(p.Num)] = true
			}
		}
	}
	if len(want) != 8 {
		t.Fatalf("%d linked switch ports in %s, want 8", len(want), net2sw)
	}

	mfs := scrape(t, addr)
	names := map[string]string{} // guid -> switch name
	for _, m := range mfs["infiniband_switch_info"].GetMetric() {
		l := promLabels(m)
		names[l["guid"]] = l["switch"]
	}
	if len(names) != 2 {
		t.Fatalf("infiniband_switch_info: %v, want 2 switches", names)
	}
	families := 0
	for name, mf := range mfs {
		if !strings.HasPrefix(name, "infiniband_switch_port_") || !strings.HasSuffix(name, "_total") {
			continue
		}
		families++
		got := map[string]bool{}
		for _, m := range mf.GetMetric() {
			l := promLabels(m)
			k := names[l["guid"]] + ":" + l["port"]
			if got[k] {
				t.Errorf("%s: two series for %s", name, k)
			}
			got[k] = true
		}
		for k := range want {
			if !got[k] {
				t.Errorf("%s: no series for %s", name, k)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d series, want %d", name, len(got), len(want))
		}
	}
	// treydock's 22, the 10 of PortRcvErrorDetails and
	// PortXmitDiscardDetails, and link_flaps_total.
	if families != 33 {
		t.Errorf("%d infiniband_switch_port_*_total families, want 33", families)
	}
	// The simulator's SA took the exporter's InformInfos (--traps).
	if ms := mfs["infiniband_exporter_trap_subscribed"].GetMetric(); len(ms) != 1 || ms[0].GetGauge().GetValue() != 1 {
		t.Errorf("trap_subscribed: %v, want 1", ms)
	}
	// State series for every port of both switches, linked or not.
	for _, name := range []string{"infiniband_switch_port_state", "infiniband_switch_port_physical_state"} {
		if n := len(mfs[name].GetMetric()); n != 16 {
			t.Errorf("%s: %d series, want 16 (2 switches of 8 ports)", name, n)
		}
	}
	if n := len(mfs["infiniband_switch_uplink_info"].GetMetric()); n != len(want) {
		t.Errorf("infiniband_switch_uplink_info: %d series, want %d", n, len(want))
	}

	// The scrapes follow the background sweeps: a later one is served
	// from a later sweep, and the data counters never go back.
	seq := func(mfs map[string]*dto.MetricFamily) float64 {
		ms := mfs["infiniband_exporter_sweep_sequence"].GetMetric()
		if len(ms) != 1 {
			t.Fatalf("sweep_sequence: %d series", len(ms))
		}
		return ms[0].GetGauge().GetValue()
	}
	total := func(mfs map[string]*dto.MetricFamily) float64 {
		var s float64
		for _, m := range mfs["infiniband_switch_port_receive_packets_total"].GetMetric() {
			s += m.GetCounter().GetValue()
		}
		return s
	}
	first, firstTotal := seq(mfs), total(mfs)
	deadline := time.Now().Add(30 * time.Second)
	for {
		later := scrape(t, addr)
		if seq(later) > first {
			if total(later) < firstTotal {
				t.Errorf("receive_packets_total went from %v to %v", firstTotal, total(later))
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("still sweep %v after 30s with --interval 20ms", first)
		}
		time.Sleep(10 * time.Millisecond) // polling, not synchronisation
	}

	// OpenMetrics when asked for it.
	resp, body := httpGet(t, "http://"+addr+"/metrics", "application/openmetrics-text; version=1.0.0")
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") || !bytes.HasSuffix(body, []byte("# EOF\n")) {
		t.Errorf("OpenMetrics: Content-Type %q, ends %q", ct, body[max(len(body)-20, 0):])
	}
	// The text format with and without gzip (two gzip members: the
	// rendered sweep, then the age and the Go collectors): the same
	// exporter series.
	textOf := func(enc string) map[string]*dto.MetricFamily {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), "GET", "http://"+addr+"/metrics", nil)
		req.Header.Set("Accept-Encoding", enc) // set: the client leaves the body as sent
		resp, err := httpClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r io.Reader = resp.Body
		if got := resp.Header.Get("Content-Encoding"); (got == "gzip") != (enc == "gzip") {
			t.Fatalf("Accept-Encoding %s: Content-Encoding %q", enc, got)
		}
		if enc == "gzip" {
			zr, err := gzip.NewReader(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			r = zr
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
			t.Errorf("Content-Type %q", ct)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(r)
		if err != nil {
			t.Fatalf("Accept-Encoding %s: %v", enc, err)
		}
		return mfs
	}
	// Prometheus' own Accept header (OpenMetrics preferred, the text
	// format accepted; the first as Debian's Prometheus 2.42 sends it):
	// served the rendered text.
	for _, accept := range []string{
		"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		"application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2",
		"text/plain",
		"*/*",
	} {
		resp, _ := httpGet(t, "http://"+addr+"/metrics", accept)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
			t.Errorf("Accept %q: Content-Type %q, want the text format", accept, ct)
		}
	}
	for _, accept := range []string{"application/openmetrics-text; version=1.0.0", "text/plain;version=0.0.4;q=0,application/openmetrics-text"} {
		resp, _ := httpGet(t, "http://"+addr+"/metrics", accept)
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/openmetrics-text") {
			t.Errorf("Accept %q: Content-Type %q, want OpenMetrics", accept, ct)
		}
	}
	plain, zipped := textOf("identity"), textOf("gzip")
	for _, mfs := range []map[string]*dto.MetricFamily{plain, zipped} {
		if mfs["infiniband_exporter_sweep_age_seconds"] == nil || mfs["go_goroutines"] == nil || len(mfs["infiniband_switch_port_state"].GetMetric()) != 16 {
			t.Errorf("text scrape without the age, the Go collector or the port states: %d families", len(mfs))
		}
	}
	for name := range plain {
		if strings.HasPrefix(name, "infiniband_switch_port_") && zipped[name] == nil {
			t.Errorf("%s: not in the gzip scrape", name)
		}
	}
	if resp, _ := httpGet(t, "http://"+addr+"/nope", ""); resp.StatusCode != http.StatusNotFound {
		t.Errorf("/nope: %s", resp.Status)
	}

	if code := stop(); code != exitOK {
		t.Errorf("stopped exporter exited %d, want 0; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "serving /metrics on http://"+addr) {
		t.Errorf("stderr does not say where it serves: %q", stderr.String())
	}
	// The port is free again.
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Errorf("after the exporter ended: %v", err)
	} else {
		ln.Close()
	}
}

// TestExporterBadFlags: each mistake is named, with exit status 2,
// before anything is served.
func TestExporterBadFlags(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--interval", "0s"}, "--interval 0s: want a positive duration"},
		{[]string{"--discover-interval", "-1s"}, "--discover-interval -1s: want a positive duration"},
		{[]string{"--web.telemetry-path", "metrics"}, `--web.telemetry-path "metrics": want a path starting with /`},
		{[]string{"--web.telemetry-path", "/healthz"}, `--web.telemetry-path "/healthz"`},
		{[]string{"--web.listen-address", busy.Addr().String()}, "--web.listen-address " + busy.Addr().String() + ": listen tcp"},
		{[]string{"--web.listen-address", "127.0.0.1:99999"}, "--web.listen-address 127.0.0.1:99999"},
		{[]string{"extra"}, "ibscript exporter: unexpected arguments extra"},
		{[]string{"--once"}, "--once and --output FILE go together"},
		{[]string{"--output", "x.prom"}, "--once and --output FILE go together"},
		{[]string{"--xmit-wait-tick", "0"}, "--xmit-wait-tick 0: want 1..256 symbol times"},
		{[]string{"--sim-traffic", "1.5"}, "--sim-traffic 1.5: want a fraction of link capacity, 0..1"},
		{[]string{"--xmit-wait-tick", "257"}, "--xmit-wait-tick 257: want 1..256"},
		{[]string{"--once", "--output", "/nonexistent-dir/x.prom"}, "--output /nonexistent-dir/x.prom: directory /nonexistent-dir: no such file or directory\n"},
		{[]string{"--once", "--output", "/etc/passwd/x.prom"}, "--output /etc/passwd/x.prom: /etc/passwd is not a directory\n"},
		{[]string{"--topology-reference", "/nonexistent.topo"}, "--topology-reference /nonexistent.topo: "},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"exporter", "--fabric", "sim:", "--web.listen-address", "127.0.0.1:0"}, tc.args...)
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		done := make(chan int, 1)
		go func() { done <- run(args, strings.NewReader(""), &stdout, &stderr) }()
		select {
		case code := <-done:
			if code != exitError || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr.String(), tc.want)
			}
		case <-ctx.Done():
			t.Fatalf("%v: still running after 30s", tc.args)
		}
		cancel()
	}
}

// TestExporterOnce writes one sweep for node_exporter's textfile
// collector: the file alone in its directory (the temporary one renamed),
// readable by node_exporter, one series per linked switch port.
func TestExporterOnce(t *testing.T) {
	dir := t.TempDir()
	out := dir + "/infiniband.prom"
	var stdout, stderr bytes.Buffer
	code := run([]string{"exporter", "--fabric", "sim:../../tests/topologies/net.2sw2path4hca", "--once", "--output", out}, strings.NewReader(""), &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "infiniband.prom" {
		t.Errorf("directory holds %v, want infiniband.prom alone", ents)
	}
	fi, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644", fi.Mode().Perm())
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s does not parse: %v", out, err)
	}
	if n := len(mfs["infiniband_switch_port_transmit_data_bytes_total"].GetMetric()); n != 8 {
		t.Errorf("transmit_data_bytes_total: %d series, want 8", n)
	}
	if ms := mfs["infiniband_exporter_sweep_sequence"].GetMetric(); len(ms) != 1 || ms[0].GetGauge().GetValue() != 1 {
		t.Errorf("sweep_sequence: %v, want one series of 1", ms)
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout: %q", stdout.String())
	}
	if mfs["infiniband_hca_port_transmit_data_bytes_total"] != nil || mfs["infiniband_switch_port_local_physical_errors_total"] != nil {
		t.Error("default: CA ports served, or PortRcvErrorDetails series (off by default, as in treydock's exporter)")
	}

	// --collector.hca adds the 4 CA ports; treydock's
	// --collector.hca.rcv-err-details their detail counters, not the
	// switch ports'.
	code = run([]string{"exporter", "--fabric", "sim:../../tests/topologies/net.2sw2path4hca", "--once", "--output", out, "--collector.hca", "--collector.hca.rcv-err-details"}, strings.NewReader(""), &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	f2, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f2.Close()
	p2 := expfmt.NewTextParser(model.UTF8Validation)
	if mfs, err = p2.TextToMetricFamilies(f2); err != nil {
		t.Fatal(err)
	}
	if n := len(mfs["infiniband_hca_port_transmit_data_bytes_total"].GetMetric()); n != 4 {
		t.Errorf("--collector.hca: %d hca transmit_data_bytes_total series, want 4", n)
	}
	if mfs["infiniband_switch_port_local_physical_errors_total"] != nil || len(mfs["infiniband_hca_port_local_physical_errors_total"].GetMetric()) != 4 {
		t.Error("--collector.hca.rcv-err-details: switch ports' PortRcvErrorDetails served, or not the 4 CA ports'")
	}
}

// TestSystemdUnit: the ExecStart of deploy/ibscript-exporter.service is an
// exporter command line ibscript accepts (with and without extra
// arguments from its environment file).
func TestSystemdUnit(t *testing.T) {
	b, err := os.ReadFile("../../deploy/ibscript-exporter.service")
	if err != nil {
		t.Fatal(err)
	}
	var exec string
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "ExecStart="); ok {
			exec = v
		}
	}
	f := strings.Fields(exec)
	if len(f) < 2 || f[0] != "/usr/local/bin/ibscript" || f[len(f)-1] != "$IBSCRIPT_EXPORTER_ARGS" {
		t.Fatalf("ExecStart=%q", exec)
	}
	for _, extra := range [][]string{nil, {"--interval", "5s", "--collector.hca", "--node-name-map", "/etc/ibscript/node-name-map"}} {
		args := append(append([]string(nil), f[1:len(f)-1]...), extra...)
		c, err := parseArgs(args, io.Discard)
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if c.cmd != "exporter" || c.fabricURI != "umad:" || c.exporter.listen != ":9315" {
			t.Errorf("%v: command %q fabric %q listen %q", args, c.cmd, c.fabricURI, c.exporter.listen)
		}
		if err := c.exporter.check(); err != nil {
			t.Errorf("%v: %v", args, err)
		}
	}
	// systemd's own check, where it is installed, with the binary's path
	// pointing at an executable that exists (this test's).
	sa, err := osexec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("no systemd-analyze: the unit's keys are not checked")
		return
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	unit := filepath.Join(t.TempDir(), "ibscript-exporter.service")
	if err := os.WriteFile(unit, []byte(strings.ReplaceAll(string(b), "/usr/local/bin/ibscript", self)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := osexec.Command(sa, "verify", unit).CombinedOutput()
	if err != nil || strings.Contains(string(out), "Unknown") || strings.Contains(string(out), "nvalid") {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestExporterTopologyReference: --topology-reference names the topology
// the infiniband_topology_* series compare the discovery with: net2sw
// against itself without Hca4 (and its cable) is one extra node and one
// extra link, nothing missing; without the flag the first discovery is
// the reference (all 0).
func TestExporterTopologyReference(t *testing.T) {
	src, err := os.ReadFile("../../tests/topologies/net.2sw2path4hca")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string // the lines, but Hca4's record and Switch2's cable to it
	skip := false
	for _, line := range strings.Split(string(src), "\n") {
		if strings.HasPrefix(line, "Hca") || strings.HasPrefix(line, "Switch") {
			skip = strings.Contains(line, `"Hca4"`)
		}
		if !skip && !strings.Contains(line, `"Hca4"`) {
			kept = append(kept, line)
		}
	}
	ref := filepath.Join(t.TempDir(), "ref.topo")
	if err := os.WriteFile(ref, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want map[string]string
	}{
		{[]string{"--topology-reference", ref}, map[string]string{"missing_nodes": "0", "extra_nodes": "1", "missing_links": "0", "extra_links": "1"}},
		{nil, map[string]string{"missing_nodes": "0", "extra_nodes": "0", "missing_links": "0", "extra_links": "0"}},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"exporter", "--fabric", "sim:../../tests/topologies/net.2sw2path4hca", "--once", "--output", "-"}, c.args...)
		if code := run(args, strings.NewReader(""), &stdout, &stderr); code != exitOK {
			t.Fatalf("%v: exit %d: %s", c.args, code, stderr.String())
		}
		for k, v := range c.want {
			if line := "infiniband_topology_" + k + " " + v + "\n"; !strings.Contains(stdout.String(), line) {
				t.Errorf("%v: no %q", c.args, line)
			}
		}
	}
}
