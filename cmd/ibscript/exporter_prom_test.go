package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/internal/freeport"
)

// needTool returns the path of a Debian tool the Prometheus tests need:
// missing, the test skips, or fails under CI (CI=true, or
// IBSCRIPT_TEST_PROMETHEUS=1 as .ci/run sets it after installing it).
func needTool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("IBSCRIPT_TEST_PROMETHEUS") == "1" {
			t.Fatalf("%s is not installed (apt-get install prometheus): CI must run this test", name)
		}
		t.Skipf("%s is not installed (apt-get install prometheus)", name)
	}
	return p
}

// TestExporterPromtool: promtool check metrics accepts the exposition.
func TestExporterPromtool(t *testing.T) {
	promtool := needTool(t, "promtool")
	addr, _, _ := startExporter(t, "--fabric", "sim:../../tests/topologies/net.2sw2path4hca", "--interval", "50ms")
	waitHealthy(t, addr)
	_, body := httpGet(t, "http://"+addr+"/metrics", "")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

// promQuery asks Prometheus' HTTP API for an instant vector and returns
// its samples' values by their label sets (JSON-encoded).
// awaitProm polls Prometheus' API at prom (it starts, then scrapes every
// second) until query q's result holds ok or a generous deadline passes
// (the test fails, saying what was awaited); it returns the result.
func awaitProm(t *testing.T, prom, what, q string, ok func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	return awaitPromWithin(t, prom, what, q, ok, 90*time.Second)
}

// awaitPromWithin is awaitProm with the deadline d.
func awaitPromWithin(t *testing.T, prom, what, q string, ok func(map[string]float64) bool, d time.Duration) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(d)
	var last map[string]float64
	var lastErr error
	for time.Now().Before(deadline) {
		if _, err := net.DialTimeout("tcp", prom, time.Second); err == nil {
			last, lastErr = promQuery(t, prom, q)
			if lastErr == nil && ok(last) {
				return last
			}
		}
		time.Sleep(100 * time.Millisecond) // polling, not synchronisation
	}
	t.Fatalf("%s: %s never held within %v: last %v %v", what, q, d, last, lastErr)
	return nil
}

func promQuery(t *testing.T, prom, q string) (map[string]float64, error) {
	t.Helper()
	resp, body := httpGet(t, "http://"+prom+"/api/v1/query?query="+url.QueryEscape(q), "")
	var r struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("%s: %s: %v: %q", q, resp.Status, err, body)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s %s", q, r.Status, r.Error)
	}
	out := map[string]float64{}
	for _, s := range r.Data.Result {
		k, _ := json.Marshal(s.Metric)
		str, _ := s.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: value %v", q, s.Value[1])
		}
		out[string(k)] = v
	}
	return out, nil
}

// TestExporterPrometheus runs Debian's Prometheus against the exporter on
// the simulator: after two scrapes, its HTTP API holds one series per
// linked switch port, and the packet counters the sweeps' own MADs move
// have a rate above zero.
func TestExporterPrometheus(t *testing.T) {
	promBin := needTool(t, "prometheus")
	addr, _, _ := startExporter(t, "--fabric", "sim:../../tests/topologies/net.2sw2path4hca", "--interval", "100ms")
	waitHealthy(t, addr)

	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: ibscript\n    static_configs:\n      - targets: [%q]\n", addr)
	prom := startPrometheus(t, promBin, dir, cfg)

	await := func(what, q string, ok func(map[string]float64) bool) map[string]float64 {
		t.Helper()
		return awaitProm(t, prom, what, q, ok)
	}
	one := func(want float64) func(map[string]float64) bool {
		return func(r map[string]float64) bool {
			for _, v := range r {
				return len(r) == 1 && v >= want
			}
			return false
		}
	}
	await("the target is up", `up{job="ibscript"}`, one(1))
	await("two scrapes", `count_over_time(infiniband_exporter_sweep_sequence[5m])`, one(2))
	// net.2sw2path4hca cables ports 1, 2, 3 and 5 of both switches.
	await("one series per linked switch port", `count(infiniband_switch_port_transmit_data_bytes_total)`, func(r map[string]float64) bool {
		for _, v := range r {
			return v == 8
		}
		return false
	})
	got := await("one uplink per linked switch port", `count by (switch) (infiniband_switch_uplink_info)`, func(r map[string]float64) bool { return len(r) == 2 })
	for k, v := range got {
		if v != 4 {
			t.Errorf("uplinks %s: %v, want 4", k, v)
		}
	}
	// The SM port's MADs cross the switches: packets move there.
	await("traffic", `sum(rate(infiniband_switch_port_transmit_packets_total[1m]))`, func(r map[string]float64) bool {
		for _, v := range r {
			return v > 0
		}
		return false
	})
	// The simulator's background load (--sim-traffic 0.3 by default):
	// 4xSDR links at 0.15..0.45 of 1 GB/s, far above what the sweeps'
	// MADs move (a few KB/s).
	await("the simulator's traffic", `max(rate(infiniband_switch_port_transmit_data_bytes_total[1m]))`, func(r map[string]float64) bool {
		for _, v := range r {
			return v > 1e8
		}
		return false
	})
	// An ordinary fabric's series have no plane label.
	if got, err := promQuery(t, prom, `count({job="ibscript",plane!=""})`); err != nil || len(got) != 0 {
		t.Errorf("series with a plane label on an ordinary fabric: %v %v", got, err)
	}
	// The other exporter's recording rule joins on (guid, port).
	await("treydock's join", `count(rate(infiniband_switch_port_transmit_data_bytes_total[1m]) * on(guid,port) group_left(switch, uplink, uplink_port) infiniband_switch_uplink_info)`, func(r map[string]float64) bool {
		for _, v := range r {
			return v == 8
		}
		return false
	})
}

// startPrometheus runs the prometheus server promBin with the
// configuration cfg (written to dir/prometheus.yml, its data in dir/data)
// on a free port until the test ends, and returns its address; its log
// is shown when the test failed.
func startPrometheus(t *testing.T, promBin, dir, cfg string) string {
	t.Helper()
	return startPrometheusFor(t, promBin, dir, cfg, 3*time.Minute)
}

// startPrometheusFor is startPrometheus, the server killed after d at the
// latest. Prometheus takes its port from the command line, so the port
// found free may be taken before it binds: one that exits saying so is
// started again on another (freeport.Retry). It returns once the server
// on the port answers with this run's flags (its data directory): not
// another test's Prometheus.
func startPrometheusFor(t *testing.T, promBin, dir, cfg string, d time.Duration) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	var prom string
	err := freeport.Retry(func(port int) error {
		prom = net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		ctx, cancel := context.WithTimeout(context.Background(), d)
		var log bytes.Buffer
		cmd := exec.CommandContext(ctx, promBin,
			"--config.file="+filepath.Join(dir, "prometheus.yml"),
			"--storage.tsdb.path="+data,
			"--web.listen-address="+prom,
			"--log.level=warn")
		cmd.Stdout, cmd.Stderr = &log, &log
		cmd.WaitDelay = 10 * time.Second
		if err := cmd.Start(); err != nil {
			cancel()
			return err
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		stop := func() {
			cmd.Process.Signal(os.Interrupt)
			<-done
			cancel()
		}
		for ready := false; !ready; {
			select {
			case err := <-done: // the log is whole once Wait returned
				cancel()
				if freeport.InUse(log.String()) {
					return fmt.Errorf("prometheus on %s: %w", prom, freeport.ErrInUse)
				}
				return fmt.Errorf("prometheus exited before it was ready (%v):\n%s", err, log.String())
			case <-ctx.Done():
				stop()
				return fmt.Errorf("prometheus not ready within %v:\n%s", d, log.String())
			case <-time.After(100 * time.Millisecond): // polling, not synchronisation
			}
			ready = promDataDir(prom) == data
		}
		t.Cleanup(func() {
			stop()
			if t.Failed() {
				t.Logf("prometheus log:\n%s", log.String())
			}
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return prom
}

// promDataDir is the storage.tsdb.path flag of the Prometheus answering at
// addr, "" when none answers (yet).
func promDataDir(addr string) string {
	resp, err := httpClient.Get("http://" + addr + "/api/v1/status/flags")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var r struct {
		Data map[string]string `json:"data"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&r) != nil {
		return ""
	}
	return r.Data["storage.tsdb.path"]
}

// TestExporterPrometheusPlanes runs Debian's Prometheus against the
// exporter on the planarized 2,240-node XDR fat tree (genfattree -preset
// 2000 -xdr -planes 4: 4 planes of the 2,000-node tree's 80 switches, 1,920
// hosts of 4 plane ports), the exporter on a host's plane port: every
// plane's 3,968 linked switch ports are in Prometheus once, each with the
// plane of its switch (joined on guid with infiniband_switch_info, whose
// names say the plane), and guid and port alone still tell them apart;
// every plane's 2,944 cables once in infiniband_link_info. Prometheus keeps
// only the families the test reads (metric_relabel_configs): a scrape is
// 470,000 series.
func TestExporterPrometheusPlanes(t *testing.T) {
	promBin := needTool(t, "prometheus")
	dir := t.TempDir()
	net := filepath.Join(dir, "planes.net")
	if err := (fattree.Spec{Leaves: 64, Spines: 16, Hosts: 30, LinksPerSpine: 1, XDR: true, Planes: 4}).WriteFile(net); err != nil {
		t.Fatal(err)
	}
	// One sweep, rendered once: under -race on a loaded machine a
	// rendering of it takes seconds, and a scrape that waits for one
	// longer than the scrape timeout fails (the next finds it ready).
	addr, _, _ := startExporter(t, "--fabric", "sim:"+net+"?node=h010-07&port=2", "--interval", "1h", "--discover-interval", "1h", "--sim-traffic", "0")
	cfg := fmt.Sprintf(`global:
  scrape_interval: 10s
  scrape_timeout: 10s
scrape_configs:
  - job_name: ibscript
    static_configs:
      - targets: [%q]
    metric_relabel_configs:
      - source_labels: [__name__]
        regex: infiniband_(switch_port_transmit_data_bytes_total|switch_port_state|switch_info|link_info|exporter_sweep_sequence)
        action: keep
`, addr)
	prom := startPrometheusFor(t, promBin, dir, cfg, 6*time.Minute)
	count := func(want float64) func(map[string]float64) bool {
		return func(r map[string]float64) bool {
			for _, v := range r {
				return len(r) == 1 && v == want
			}
			return false
		}
	}
	await := func(what, q string, want float64) {
		t.Helper()
		awaitPromWithin(t, prom, what, q, count(want), 5*time.Minute)
	}
	await("every plane's switch ports", `count(infiniband_switch_port_transmit_data_bytes_total)`, 4*3968)
	for p := 1; p <= 4; p++ {
		await(fmt.Sprintf("plane %d's switch ports, on plane %d's switches", p, p),
			fmt.Sprintf(`count(infiniband_switch_port_transmit_data_bytes_total{plane="%d"} * on(guid) group_left(switch) infiniband_switch_info{switch=~"p%d-.*"})`, p, p), 3968)
		await(fmt.Sprintf("plane %d's cables", p), fmt.Sprintf(`count(infiniband_link_info{plane="%d",local_name=~"p%d-.*"})`, p, p), 2944)
	}
	await("one series per (guid, port)", `count(count by (guid, port) (infiniband_switch_port_transmit_data_bytes_total))`, 4*3968)
	await("every switch once", `count(infiniband_switch_info)`, 4*80)
}
