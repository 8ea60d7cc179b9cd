package exporter

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/internal/fattree"
	"github.com/ibscript/ibscript/internal/treydock"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

const net2sw = "../tests/topologies/net.2sw2path4hca"

// simExporter opens a session on the simulated fabric at path (on the
// SM's port) and returns an Exporter on it.
func simExporter(t testing.TB, path string, opts *Options) (*Exporter, *sim.Fabric) {
	t.Helper()
	return simExporterWith(t, path, opts, nil, nil)
}

// simExporterWith is simExporter with engine options, and the transport
// wrapped by wrap when not nil.
func simExporterWith(t testing.TB, path string, opts *Options, eo *engine.Options, wrap func(fabric.Transport) fabric.Transport) (*Exporter, *sim.Fabric) {
	t.Helper()
	return simExporterOn(t, path, nil, opts, eo, wrap)
}

// simExporterOn is simExporterWith on a simulator with options so.
func simExporterOn(t testing.TB, path string, so *sim.Options, opts *Options, eo *engine.Options, wrap func(fabric.Transport) fabric.Transport) (*Exporter, *sim.Fabric) {
	t.Helper()
	f, s := simSession(t, path, so, eo, wrap)
	return New(s, opts), f
}

// simSession loads the simulator on path with options so and opens a
// session on its default port (engine options eo, the transport wrapped
// by wrap when not nil), both closed when the test ends.
func simSession(t testing.TB, path string, so *sim.Options, eo *engine.Options, wrap func(fabric.Transport) fabric.Transport) (*sim.Fabric, *engine.Session) {
	t.Helper()
	f, err := sim.Load(path, so)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := f.Open(context.Background(), "", 0)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	if wrap != nil {
		tr = wrap(tr)
	}
	s, err := engine.New(tr, eo)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); f.Close() })
	return f, s
}

// running runs e.Run until the test ends (Run must then return
// context.Canceled), and returns a function that polls for a snapshot
// after seq that satisfies ok, failing the test after 5 minutes.
func running(t *testing.T, e *Exporter) (await func(what string, seq uint64, ok func(*Snapshot) bool) *Snapshot) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- e.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != context.Canceled {
			t.Errorf("Run: %v", err)
		}
	})
	return func(what string, seq uint64, ok func(*Snapshot) bool) *Snapshot {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Minute); time.Now().Before(deadline); {
			if s := e.Snapshot(); s != nil && s.Seq > seq && ok(s) {
				return s
			}
			time.Sleep(5 * time.Millisecond) // polling, not synchronisation
		}
		t.Fatalf("%s: not within 5 minutes (last snapshot %+v)", what, e.Snapshot())
		return nil
	}
}

// promtool returns promtool's path, skipping the test without it (an
// error under CI).
func promtool(t *testing.T) string {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" || os.Getenv("IBSCRIPT_TEST_PROMETHEUS") == "1" {
			t.Fatal("promtool is not installed (apt-get install prometheus): CI must run this test")
		}
		t.Skip("promtool is not installed (apt-get install prometheus)")
	}
	return path
}

// gather scrapes e through a registry, as /metrics does.
func gather(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(e); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

func labels(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func value(m *dto.Metric) float64 {
	if c := m.GetCounter(); c != nil {
		return c.GetValue()
	}
	return m.GetGauge().GetValue()
}

// treydockNames are the metric names and label names of
// treydock/infiniband_exporter's switch collector and its exporter gauges,
// which its Grafana dashboards and alert rules use, and treydockHCANames
// those of its HCA collector (the same names under infiniband_hca_).
var (
	treydockNames    = treydock.All()
	treydockHCANames = treydock.AsHCA(treydock.SwitchDetails)
)

func init() { maps.Copy(treydockHCANames, treydock.AsHCA(treydock.SwitchBase)) }

// TestTreydockNames scrapes a sweep of the simulated fabric and checks
// that every name of the other exporter is served with exactly its
// labels.
func TestTreydockNames(t *testing.T) {
	// As treydock's with --collector.hca and both rcv-err-details flags.
	e, _ := simExporter(t, net2sw, &Options{HCA: true, Details: true, HCADetails: true})
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	mfs := gather(t, e)
	all := maps.Clone(treydockNames)
	maps.Copy(all, treydockHCANames)
	if len(all) != 2*len(treydockNames)-3 { // the collector gauges are shared
		t.Fatalf("%d names", len(all))
	}
	for name, want := range all {
		mf := mfs[name]
		if mf == nil || len(mf.GetMetric()) == 0 {
			t.Errorf("%s: not served", name)
			continue
		}
		var got []string
		for k := range labels(mf.GetMetric()[0]) {
			got = append(got, k)
		}
		sort.Strings(got)
		w := slices.Clone(want)
		sort.Strings(w)
		if !slices.Equal(got, w) {
			t.Errorf("%s: labels %v, want %v", name, got, w)
		}
		if strings.HasSuffix(name, "_total") && mf.GetType() != dto.MetricType_COUNTER {
			t.Errorf("%s: type %v, want counter", name, mf.GetType())
		}
	}
}

// TestSweepSim checks one series per linked switch port, counters as the
// simulator holds them (data in bytes), the info series, and the
// exporter's own gauges.
func TestSweepSim(t *testing.T) {
	e, f := simExporter(t, net2sw, &Options{Details: true})
	// Plant values before the sweep: 2^40 words sent (past 32 bits), errors.
	if err := f.SetCounter("Switch1", 3, "PortXmitData", 1<<40); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCounter("Switch2", 1, "SymbolErrorCounter", 7); err != nil {
		t.Fatal(err)
	}
	if err := f.SetCounter("Switch2", 1, "PortXmitWait", 42); err != nil {
		t.Fatal(err)
	}
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s.Seq != 1 || !s.Discovered || s.Errors != 0 {
		t.Fatalf("snapshot: seq %d discovered %v errors %d", s.Seq, s.Discovered, s.Errors)
	}
	// The linked switch ports of the topology, by guid:port.
	want := map[string]bool{}
	for _, n := range s.Fabric.Nodes {
		if n.Type != topo.Switch {
			continue
		}
		for _, p := range n.Ports[1:] {
			if p != nil && p.Remote != nil {
				want[hexGUID(n.GUID)+":"+itoa(p.Num)] = true
			}
		}
	}
	// 2sw2path4hca: Switch1 ports 1,2,3,5 and Switch2 ports 1,2,3,5.
	if len(want) != 8 {
		t.Fatalf("%d linked switch ports in the discovered fabric, want 8", len(want))
	}
	mfs := gather(t, e)
	for name := range treydockNames {
		if !strings.HasPrefix(name, "infiniband_switch_port_") {
			continue
		}
		got := map[string]bool{}
		for _, m := range mfs[name].GetMetric() {
			l := labels(m)
			k := l["guid"] + ":" + l["port"]
			if got[k] {
				t.Errorf("%s: two series for %s", name, k)
			}
			got[k] = true
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d series, want %d", name, len(got), len(want))
		}
		for k := range want {
			if !got[k] {
				t.Errorf("%s: no series for %s", name, k)
			}
		}
	}
	sw1 := s.Fabric.Node(findGUID(t, s.Fabric, "Switch1"))
	sw2 := s.Fabric.Node(findGUID(t, s.Fabric, "Switch2"))
	get := func(name string, n *topo.Node, port int) float64 {
		t.Helper()
		for _, m := range mfs[name].GetMetric() {
			l := labels(m)
			if l["guid"] == hexGUID(n.GUID) && l["port"] == itoa(port) {
				return value(m)
			}
		}
		t.Errorf("%s{%s port %d}: no series", name, n.Desc, port)
		return -1
	}
	check := func(name string, n *topo.Node, port int, want float64) {
		t.Helper()
		if v := get(name, n, port); v != want {
			t.Errorf("%s{%s port %d} = %v, want %v", name, n.Desc, port, v, want)
		}
	}
	// The simulator counts the MADs that cross the port too (a few
	// hundred words per sweep): the value is the planted 2^40 words and
	// a little more, in bytes.
	if v := get("infiniband_switch_port_transmit_data_bytes_total", sw1, 3); v < 4<<40 || v > 4*(1<<40+1<<20) || uint64(v)%4 != 0 {
		t.Errorf("transmit_data_bytes_total{Switch1 port 3} = %v, want 4 x (2^40 + a few MADs)", v)
	}
	check("infiniband_switch_port_symbol_error_total", sw2, 1, 7)
	check("infiniband_switch_port_transmit_wait_total", sw2, 1, 42)
	check("infiniband_switch_port_symbol_error_total", sw1, 1, 0)

	info := mfs["infiniband_switch_info"].GetMetric()
	if len(info) != 2 {
		t.Fatalf("infiniband_switch_info: %d series, want 2", len(info))
	}
	for _, m := range info {
		l := labels(m)
		n := s.Fabric.Node(parseGUID(t, l["guid"]))
		if n == nil || l["switch"] != n.Desc || l["lid"] != itoa(int(n.Ports[0].LID)) || n.Ports[0].LID == 0 {
			t.Errorf("infiniband_switch_info %v: does not match the fabric", l)
		}
	}
	// Switch1 port 3 is cabled to Switch2 port 3; port 1 to Hca1.
	up := map[string]map[string]string{}
	for _, m := range mfs["infiniband_switch_uplink_info"].GetMetric() {
		l := labels(m)
		up[l["guid"]+":"+l["port"]] = l
	}
	if l := up[hexGUID(sw1.GUID)+":3"]; l["uplink"] != sw2.Desc || l["uplink_type"] != "SW" || l["uplink_port"] != "3" ||
		l["uplink_guid"] != hexGUID(sw2.GUID) || l["uplink_lid"] != itoa(int(sw2.Ports[0].LID)) || l["switch"] != sw1.Desc {
		t.Errorf("uplink of Switch1 port 3: %v", l)
	}
	hca := sw1.Ports[1].Remote
	if l := up[hexGUID(sw1.GUID)+":1"]; l["uplink_type"] != "CA" || l["uplink_lid"] != itoa(int(hca.LID)) || hca.LID == 0 || l["uplink"] != hca.Node.Desc {
		t.Errorf("uplink of Switch1 port 1: %v (CA port LID %d)", l, hca.LID)
	}
	if v := value(mfs["infiniband_exporter_sweep_sequence"].GetMetric()[0]); v != 1 {
		t.Errorf("sweep_sequence %v, want 1", v)
	}
	if v := value(mfs["infiniband_exporter_collect_errors"].GetMetric()[0]); v != 0 {
		t.Errorf("collect_errors %v, want 0", v)
	}
}

// TestScrapeIsOneSweep sets one counter of every port to the sweep's
// number (SymbolErrorCounter: the simulator's MADs do not move it) before
// each sweep, and scrapes concurrently: every scrape must show one number
// across all ports, the one its sweep_sequence names.
func TestScrapeIsOneSweep(t *testing.T) {
	e, f := simExporter(t, net2sw, nil)
	ports := []struct {
		node string
		port int
	}{{"Switch1", 1}, {"Switch1", 2}, {"Switch1", 3}, {"Switch1", 5}, {"Switch2", 1}, {"Switch2", 2}, {"Switch2", 3}, {"Switch2", 5}}
	set := func(k uint64) {
		for _, p := range ports {
			if err := f.SetCounter(p.node, p.port, "SymbolErrorCounter", k); err != nil {
				t.Fatal(err)
			}
		}
	}
	set(1)
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e)
	done := make(chan struct{})
	var wg sync.WaitGroup
	var scrapes int
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			mfs, err := reg.Gather()
			if err != nil {
				t.Error(err)
				return
			}
			scrapes++
			var seq float64
			var vals []float64
			for _, mf := range mfs {
				switch mf.GetName() {
				case "infiniband_exporter_sweep_sequence":
					seq = value(mf.GetMetric()[0])
				case "infiniband_switch_port_symbol_error_total":
					for _, m := range mf.GetMetric() {
						vals = append(vals, value(m))
					}
				}
			}
			if len(vals) != len(ports) {
				t.Errorf("scrape: %d symbol_error series, want %d", len(vals), len(ports))
				return
			}
			for _, v := range vals {
				if v != seq {
					t.Errorf("scrape of sweep %v holds %v: a mix of sweeps (%v)", seq, v, vals)
					return
				}
			}
		}
	})
	for k := uint64(2); k <= 20; k++ {
		set(k)
		s, err := e.Sweep(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s.Seq != k {
			t.Fatalf("sweep %d has sequence %d", k, s.Seq)
		}
		if s.Discovered {
			t.Errorf("sweep %d discovered again before DiscoverInterval", k)
		}
	}
	close(done)
	wg.Wait()
	if scrapes == 0 {
		t.Error("no scrape ran")
	}
}

// TestRunStops runs the background loop until a few sweeps are
// published, then cancels it: Run returns and the snapshot stays.
func TestRunStops(t *testing.T) {
	e, _ := simExporter(t, net2sw, &Options{Interval: time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- e.Run(ctx) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if s := e.Snapshot(); s != nil && s.Seq >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no third sweep within 30s")
		}
		time.Sleep(5 * time.Millisecond) // polling, not synchronisation
	}
	cancel()
	select {
	case err := <-errc:
		if err != context.Canceled {
			t.Errorf("Run: %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return within 30s of cancel")
	}
	if e.Snapshot() == nil {
		t.Error("no snapshot after Run")
	}
}

// TestNoSnapshotServesNothing: before the first sweep a scrape is empty,
// never zeros that would read as counters.
func TestNoSnapshotServesNothing(t *testing.T) {
	e, _ := simExporter(t, net2sw, nil)
	if mfs := gather(t, e); len(mfs) != 0 {
		t.Errorf("before the first sweep: %d families served", len(mfs))
	}
}

// TestFailedQueriesCounted makes one switch dead: its ports have no
// counter series, the errors and timeouts are counted, the other switch
// is still served.
func TestFailedQueriesCounted(t *testing.T) {
	e, f := simExporter(t, net2sw, nil)
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := f.SetFaults(sim.Faults{DeadNodes: []string{"Switch2"}}); err != nil {
		t.Fatal(err)
	}
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Switch2's 4 linked ports, two queries each (no detail counters).
	if s.Errors != 8 || s.Timeouts != 8 {
		t.Errorf("errors %d timeouts %d, want 8 and 8", s.Errors, s.Timeouts)
	}
	mfs := gather(t, e)
	if n := len(mfs["infiniband_switch_port_transmit_data_bytes_total"].GetMetric()); n != 4 {
		t.Errorf("transmit_data_bytes_total: %d series, want Switch1's 4", n)
	}
	if v := value(mfs["infiniband_exporter_collect_timeouts"].GetMetric()[0]); v != 8 {
		t.Errorf("collect_timeouts %v, want 8", v)
	}
	// Per node: all of them Switch2's.
	got := map[string][2]float64{}
	for _, m := range mfs["infiniband_exporter_node_errors"].GetMetric() {
		l := labels(m)
		v := got[l["name"]]
		v[0] = value(m)
		got[l["name"]] = v
	}
	for _, m := range mfs["infiniband_exporter_node_timeouts"].GetMetric() {
		l := labels(m)
		v := got[l["name"]]
		v[1] = value(m)
		got[l["name"]] = v
	}
	if len(got) != 2 || got["Switch2"] != [2]float64{8, 8} || got["Switch1"] != [2]float64{0, 0} {
		t.Errorf("node errors and timeouts: %v, want Switch2 8 8, Switch1 0 0", got)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

func findGUID(t *testing.T, f *topo.Fabric, desc string) uint64 {
	t.Helper()
	for _, n := range f.Nodes {
		if n.Desc == desc {
			return n.GUID
		}
	}
	t.Fatalf("no node %q", desc)
	return 0
}

func parseGUID(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("guid %q: %v", s, err)
	}
	return v
}

// TestCapabilitiesChooseSeries: the fields a PMA's ClassPortInfo says it
// does not fill (PortXmitWait without CapPortXmitWait, the extended
// unicast and multicast counters without CapExtendedWidth) are not
// served as counters reading 0, nor when the capabilities are unknown.
func TestCapabilitiesChooseSeries(t *testing.T) {
	e, _ := simExporter(t, net2sw, nil)
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// The simulator's switch PMAs, as ibsim's, have both.
	for _, ps := range s.Ports {
		if ps.CapsErr != nil || ps.Caps&(perf.CapExtendedWidth|perf.CapPortXmitWait) != perf.CapExtendedWidth|perf.CapPortXmitWait {
			t.Fatalf("%s port %d: caps 0x%x %v", ps.Port.Node.Desc, ps.Port.Num, ps.Caps, ps.CapsErr)
		}
	}
	// The same sweep from PMAs without them: one with no capabilities,
	// the others with unknown ones.
	c := *s
	c.Ports = slices.Clone(s.Ports)
	for i := range c.Ports {
		c.Ports[i].Caps = 0
		if i > 0 {
			c.Ports[i].CapsErr = errors.New("PMA ClassPortInfo: timeout")
		}
	}
	e.snap.Store(&c)
	mfs := gather(t, e)
	for _, name := range []string{"unicast_transmit_packets_total", "unicast_receive_packets_total", "multicast_transmit_packets_total", "multicast_receive_packets_total", "transmit_wait_total"} {
		if mf := mfs["infiniband_switch_port_"+name]; mf != nil {
			t.Errorf("%s: %d series from PMAs that do not give it", name, len(mf.GetMetric()))
		}
	}
	for _, name := range []string{"transmit_data_bytes_total", "transmit_packets_total", "symbol_error_total"} {
		if n := len(mfs["infiniband_switch_port_"+name].GetMetric()); n != len(s.Ports) {
			t.Errorf("%s: %d series, want %d", name, n, len(s.Ports))
		}
	}
}

// TestGathererMatchesRegistry: Gatherer serves what a registry holding
// the Exporter serves, renews the age at each scrape, and follows a new
// sweep.
func TestGathererMatchesRegistry(t *testing.T) {
	e, f := simExporter(t, net2sw, nil)
	g := e.Gatherer(nil)
	if mfs, err := g.Gather(); err != nil || len(mfs) != 0 {
		t.Fatalf("before the first sweep: %d families, %v", len(mfs), err)
	}
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	clock := time.Now()
	e.now = func() time.Time { return clock }
	text := func(mfs []*dto.MetricFamily) string {
		var b strings.Builder
		for _, mf := range mfs {
			if _, err := expfmt.MetricFamilyToText(&b, mf); err != nil {
				t.Fatal(err)
			}
		}
		return b.String()
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(e)
	want, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if text(got) != text(want) {
		t.Fatalf("Gatherer:\n%s\nregistry:\n%s", text(got), text(want))
	}
	age := func(mfs []*dto.MetricFamily) float64 {
		for _, mf := range mfs {
			if mf.GetName() == ageName {
				return mf.GetMetric()[0].GetGauge().GetValue()
			}
		}
		t.Fatal("no age")
		return 0
	}
	a0 := age(got)
	clock = clock.Add(3 * time.Second)
	got, _ = g.Gather()
	if a := age(got); a != a0+3 {
		t.Errorf("age %v after 3s, want %v", a, a0+3)
	}
	// A new sweep with a new value is served by the next scrape.
	if err := f.SetCounter("Switch1", 1, "SymbolErrorCounter", 99); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	want, _ = reg.Gather()
	got, _ = g.Gather()
	if text(got) != text(want) || !strings.Contains(text(got), "infiniband_exporter_sweep_sequence 2") || !strings.Contains(text(got), " 99\n") {
		t.Errorf("after the second sweep:\n%s", text(got))
	}
}

// sendLog is a transport that logs the class and attribute of each MAD
// sent. With holdAt > 0 it holds the directed-route SMP of that number,
// and every later one, until a PMA query is sent (at most 5 s): the
// embedded simulator answers inside Send, so a small discovery could
// otherwise run to its end before a goroutine it started is scheduled at
// all, as a real fabric's latency never lets it.
type sendLog struct {
	fabric.Transport
	holdAt int
	mu     sync.Mutex
	sent   []uint32 // class<<16 | attribute ID
	smps   int
	pma    chan struct{} // closed at the first PMA query
}

func (l *sendLog) Send(ctx context.Context, p *fabric.Packet) error {
	if len(p.Data) >= 24 {
		l.mu.Lock()
		l.sent = append(l.sent, uint32(p.Data[1])<<16|uint32(p.Data[16])<<8|uint32(p.Data[17]))
		hold := false
		switch p.Data[1] {
		case mad.ClassSubnDR:
			l.smps++
			hold = l.holdAt > 0 && l.smps >= l.holdAt
		case mad.ClassPerf:
			if l.pma != nil {
				close(l.pma)
				l.pma = nil
			}
		}
		pma := l.pma
		l.mu.Unlock()
		if hold && pma != nil {
			select {
			case <-pma:
			case <-time.After(5 * time.Second):
			}
		}
	}
	return l.Transport.Send(ctx, p)
}

// TestSweepAsksExtendedAlone: a sweep after the discovery asks each
// linked switch port for PortCountersExtended and PortCounters, but
// where the PMA's ClassPortInfo has Cap2AdditionalPortCounters for
// PortCountersExtended alone (its 64-bit copies carry every counter, as
// perfquery -x reads such a port): one MAD fewer per port, and the same
// numbers served (two error counters set on Switch1 port 3, and its
// link downed count growing by 2 between the sweeps, its flaps).
func TestSweepAsksExtendedAlone(t *testing.T) {
	for _, additional := range []bool{false, true} {
		t.Run(fmt.Sprintf("additional=%v", additional), func(t *testing.T) {
			var log *sendLog
			e, f := simExporterOn(t, net2sw, &sim.Options{AdditionalPortCounters: additional}, nil, nil, func(tr fabric.Transport) fabric.Transport {
				log = &sendLog{Transport: tr}
				return log
			})
			for name, v := range map[string]uint64{"SymbolErrorCounter": 17, "PortRcvErrors": 5, "LinkDownedCounter": 1} {
				if err := f.SetCounter("Switch1", 3, name, v); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := e.Sweep(t.Context()); err != nil {
				t.Fatal(err)
			}
			if err := f.SetCounter("Switch1", 3, "LinkDownedCounter", 3); err != nil {
				t.Fatal(err)
			}
			log.mu.Lock()
			log.sent = nil
			log.mu.Unlock()
			s, err := e.Sweep(t.Context())
			if err != nil || s.Errors != 0 || s.Discovered {
				t.Fatalf("second sweep: %v, %d errors, discovered %v", err, s.Errors, s.Discovered)
			}
			log.mu.Lock()
			asked := map[uint16]int{}
			for _, v := range log.sent {
				if v>>16 == uint32(mad.ClassPerf) {
					asked[uint16(v)]++
				}
			}
			log.mu.Unlock()
			wantPC := len(s.Ports)
			if additional {
				wantPC = 0
			}
			if asked[perf.AttrPortCountersExtended] != len(s.Ports) || asked[perf.AttrPortCounters] != wantPC {
				t.Errorf("%d linked switch ports asked for PortCountersExtended %d times, PortCounters %d; want %d and %d",
					len(s.Ports), asked[perf.AttrPortCountersExtended], asked[perf.AttrPortCounters], len(s.Ports), wantPC)
			}
			mfs := gather(t, e)
			sw1 := findGUID(t, s.Fabric, "Switch1")
			for name, want := range map[string]float64{"symbol_error_total": 17, "receive_errors_total": 5, "link_downed_total": 3} {
				got := -1.0
				for _, m := range mfs["infiniband_switch_port_"+name].GetMetric() {
					if l := labels(m); l["port"] == "3" && l["guid"] == fmt.Sprintf("0x%016x", sw1) {
						got = value(m)
					}
				}
				if got != want {
					t.Errorf("%s of Switch1 port 3: %v, want %v", name, got, want)
				}
			}
			if k := (PortKey{GUID: sw1, Port: 3}); e.flaps.m[k] != 2 {
				t.Errorf("Switch1 port 3: %d flaps, want 2 (LinkDownedCounter 1 -> 3)", e.flaps.m[k])
			}
		})
	}
}

// TestDiscoverySweepOverlaps: a sweep with a discovery reads each
// switch's counters while the discovery goes on (a PMA query goes out
// before the discovery's last SMP), reads each linked port's counters
// once, and reads what the next sweep reads.
func TestDiscoverySweepOverlaps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tree.net")
	if err := (fattree.Spec{Leaves: 8, Spines: 4, Hosts: 8, LinksPerSpine: 2}).WriteFile(path); err != nil {
		t.Fatal(err)
	}
	var log *sendLog
	e, f := simExporterWith(t, path, nil, nil, func(tr fabric.Transport) fabric.Transport {
		// Held from the 200th SMP of the discovery's ~480: by then the
		// first switches' ports are all read.
		log = &sendLog{Transport: tr, holdAt: 200, pma: make(chan struct{})}
		return log
	})
	if err := f.SetCounter("leaf003", 2, "SymbolErrorCounter", 17); err != nil {
		t.Fatal(err)
	}
	s1, err := e.Sweep(t.Context())
	if err != nil || s1.Errors != 0 || !s1.Discovered {
		t.Fatalf("first sweep: %v, %d errors, discovered %v", err, s1.Errors, s1.Discovered)
	}
	const smpDR, pma = uint32(mad.ClassSubnDR) << 16, uint32(mad.ClassPerf) << 16
	firstPMA, lastSMP, counters := -1, -1, 0
	for i, v := range log.sent {
		switch {
		case v&0xff0000 == smpDR:
			lastSMP = i
		case v&0xff0000 == pma:
			if firstPMA < 0 {
				firstPMA = i
			}
			if uint16(v) == perf.AttrPortCounters {
				counters++
			}
		}
	}
	if firstPMA < 0 || firstPMA > lastSMP {
		t.Errorf("first PMA query at %d, the discovery's last SMP at %d: no overlap", firstPMA, lastSMP)
	}
	if counters != len(s1.Ports) {
		t.Errorf("%d PortCounters queries for %d linked switch ports", counters, len(s1.Ports))
	}
	s2, err := e.Sweep(t.Context())
	if err != nil || s2.Errors != 0 || s2.Discovered || len(s2.Ports) != len(s1.Ports) {
		t.Fatalf("second sweep: %v, %d errors, discovered %v, %d ports", err, s2.Errors, s2.Discovered, len(s2.Ports))
	}
	sym := 0
	for i := range s1.Ports {
		a, b := &s1.Ports[i], &s2.Ports[i]
		if a.Port != b.Port || a.PC.SymbolErrorCounter != b.PC.SymbolErrorCounter || a.Caps != b.Caps || a.PCErr != nil || a.ExtErr != nil {
			t.Errorf("port %d: %s port %d %+v, then %s port %d %+v", i, a.Port.Node, a.Port.Num, a.PC, b.Port.Node, b.Port.Num, b.PC)
		}
		if a.PC.SymbolErrorCounter == 17 {
			sym++
		}
	}
	if sym != 1 {
		t.Errorf("%d ports with the 17 symbol errors set, want 1", sym)
	}
}
