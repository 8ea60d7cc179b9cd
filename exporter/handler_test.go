package exporter

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// get scrapes url with the Accept and Accept-Encoding headers given ("":
// none), and returns the status, the Content-Type and the body
// (decompressed when gzip).
func get(t *testing.T, url, accept, encoding string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	// Set by hand, the transport leaves the body compressed.
	if encoding != "" {
		req.Header.Set("Accept-Encoding", encoding)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
}

// TestHandler: exporter.Handler, as a Go program mounts it, serves the
// last sweep in the text format (gzip or not, the extra gatherer's
// families after the exporter's, the sweep age), in OpenMetrics to a
// scraper that asks for it, and the extra families only before the first
// sweep; each text body parses.
func TestHandler(t *testing.T) {
	e, _ := simExporter(t, net2sw, nil)
	extra := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "program_up", Help: "The program's own gauge."})
	g.Set(1)
	extra.MustRegister(g)
	srv := httptest.NewServer(Handler(e, &HandlerOptions{Extra: extra}))
	defer srv.Close()

	code, _, body0 := get(t, srv.URL, "", "")
	if code != http.StatusOK || strings.Contains(body0, "infiniband_") || !strings.Contains(body0, "program_up 1") {
		t.Fatalf("before the first sweep: %d %q", code, body0)
	}
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, enc := range []string{"", "gzip"} {
		code, ctype, body := get(t, srv.URL, "text/plain;version=0.0.4;q=0.5,*/*;q=0.1", enc)
		if code != http.StatusOK || !strings.HasPrefix(ctype, "text/plain") {
			t.Fatalf("encoding %q: %d %s", enc, code, ctype)
		}
		p := expfmt.NewTextParser(model.UTF8Validation)
		mfs, err := p.TextToMetricFamilies(strings.NewReader(body))
		if err != nil {
			t.Fatalf("encoding %q: %v", enc, err)
		}
		for _, name := range []string{"infiniband_switch_port_transmit_data_bytes_total", "infiniband_switch_port_link_flaps_total", ageName, "program_up"} {
			if mfs[name] == nil {
				t.Errorf("encoding %q: no %s", enc, name)
			}
		}
		if n := len(mfs["infiniband_switch_port_transmit_data_bytes_total"].GetMetric()); n != 8 {
			t.Errorf("encoding %q: %d transmit_data series, want 8", enc, n)
		}
	}
	code, ctype, body := get(t, srv.URL, "application/openmetrics-text;version=1.0.0", "")
	if code != http.StatusOK || !strings.HasPrefix(ctype, "application/openmetrics-text") ||
		!strings.Contains(body, "infiniband_switch_port_transmit_data_bytes_total{") || !strings.HasSuffix(body, "# EOF\n") {
		t.Errorf("OpenMetrics: %d %s %.200q", code, ctype, body)
	}
}
