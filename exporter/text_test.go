package exporter

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/ibscript/ibscript/sim"
)

// seriesSet is a family's series as "name{labels} value" strings, sorted.
func seriesSet(mf *dto.MetricFamily) []string {
	var out []string
	for _, m := range mf.GetMetric() {
		var ls []string
		for _, l := range m.GetLabel() {
			ls = append(ls, l.GetName()+"="+l.GetValue())
		}
		sort.Strings(ls)
		out = append(out, fmt.Sprintf("%s{%s} %v", mf.GetName(), strings.Join(ls, ","), value(m)))
	}
	sort.Strings(out)
	return out
}

// TestTextMatchesRegistry: the text Text renders (with AppendAge) parses
// to the families, help texts, types and series a registry holding the
// Exporter gathers, on a snapshot with every kind of series (CA ports,
// saturated counters, XmitWait ratios, resets, traps off), names with
// characters to escape; the age follows the clock; a new sweep is
// rendered anew.
func TestTextMatchesRegistry(t *testing.T) {
	e, f := simExporter(t, net2sw, &Options{HCA: true, ResetSaturated: true, Names: nil})
	clock := time.Unix(1_700_000_000, 0)
	e.now = func() time.Time { return clock }
	if err := f.SetTraffic(&sim.Traffic{Load: 0.4, Now: e.now}); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCounter("Switch1", 1, "SymbolErrorCounter", 0xFFFF); err != nil {
		t.Fatal(err)
	}
	if e.Text() != nil {
		t.Fatal("Text before the first sweep")
	}
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(10 * time.Second)
	if err := f.SetCounter("Switch1", 1, "SymbolErrorCounter", 0xFFFF); err != nil { // reset by the first sweep
		t.Fatal(err)
	}
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// A name to escape, as a node-name-map may give.
	s.Switches[0].Desc = `sw "1" \\ a` + "\nb"
	clock = clock.Add(3 * time.Second)

	r := e.Text()
	if r == nil || r.Snap != s || e.Text() != r {
		t.Fatal("Text: not the last snapshot, or rendered twice")
	}
	zr, err := gzip.NewReader(bytes.NewReader(r.Gzip))
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	body = e.AppendAge(body, r, clock)
	p := expfmt.NewTextParser(model.UTF8Validation)
	got, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the text does not parse: %v", err)
	}
	want := gather(t, e)
	if len(got) != len(want) {
		t.Errorf("%d families, registry %d", len(got), len(want))
	}
	for name, w := range want {
		g := got[name]
		if g == nil {
			t.Errorf("%s: not in the text", name)
			continue
		}
		if g.GetHelp() != w.GetHelp() || g.GetType() != w.GetType() {
			t.Errorf("%s: help %q type %v, registry %q %v", name, g.GetHelp(), g.GetType(), w.GetHelp(), w.GetType())
		}
		gs, ws := seriesSet(g), seriesSet(w)
		if strings.Join(gs, "\n") != strings.Join(ws, "\n") {
			t.Errorf("%s: text\n%s\nregistry\n%s", name, strings.Join(gs, "\n"), strings.Join(ws, "\n"))
		}
	}
	for _, name := range []string{"infiniband_switch_port_counter_saturated", "infiniband_switch_port_transmit_wait_ratio", "infiniband_hca_port_transmit_data_bytes_total", ageName} {
		if got[name] == nil {
			t.Errorf("%s: not served (the test covers less than it says)", name)
		}
	}
	if a := value(got[ageName].GetMetric()[0]); a != 3 {
		t.Errorf("age %v, want 3", a)
	}
	// A new sweep: rendered anew.
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if r2 := e.Text(); r2 == r || r2.Snap != e.Snapshot() {
		t.Error("a new sweep served from the old rendering")
	}
}

// TestWriteTextIsTheScrape: WriteText (the --once file) writes what a
// scrape of the rendered sweep gets, byte for byte: the gzip'd families,
// then the age at the same instant; and it fails before a sweep and on
// a writer's error.
func TestWriteTextIsTheScrape(t *testing.T) {
	e, _ := simExporter(t, net2sw, &Options{HCA: true, Details: true})
	if err := e.WriteText(io.Discard, time.Now()); err == nil {
		t.Error("WriteText before a sweep: no error")
	}
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	var got bytes.Buffer
	if err := e.WriteText(&got, now); err != nil {
		t.Fatal(err)
	}
	r := e.Text()
	zr, err := gzip.NewReader(bytes.NewReader(r.Gzip))
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	want = e.AppendAge(want, r, now)
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("WriteText: %d bytes, the scrape %d, not equal", got.Len(), len(want))
	}
	if err := e.WriteText(failWriter{}, now); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("WriteText to a failing writer: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, fmt.Errorf("disk full") }

// TestAppendFloatAsG: the value writer's shortcuts give the bytes
// strconv's 'g' (client_golang's) gives.
func TestAppendFloatAsG(t *testing.T) {
	for _, v := range []float64{0, 1, -1, 7, 999999, -999999, 1e6, 1234567, 4294967295, 1 << 53, 0.5, 1e-7, 123456.5, 1e21, math.Copysign(0, -1)} {
		if got, want := string(appendFloat(nil, v)), strconv.FormatFloat(v, 'g', -1, 64); got != want {
			t.Errorf("appendFloat(%v) = %q, want %q", v, got, want)
		}
	}
	for _, s := range []string{"", "plain", `a"b`, `a\b`, "a\nb", `"\` + "\n"} {
		want := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s)
		if got := string(appendEscaped(nil, s)); got != want {
			t.Errorf("appendEscaped(%q) = %q, want %q", s, got, want)
		}
	}
}
