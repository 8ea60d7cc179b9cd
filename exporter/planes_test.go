package exporter

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/syncbuf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

// planesNet is the bundled planarized XDR fat tree: 4 planes of 2 leaves
// and 2 spines ("pN-..." on plane N), 8 hosts whose port N is on plane N.
const planesNet = "../tests/topologies/fattree-xdr-4planes.net"

// planesExporter is an exporter on planesNet's default port (h000-00's,
// the SM's host: planarized) given the simulator as Options.Fabric.
func planesExporter(t *testing.T, opts Options) (*Exporter, *sim.Fabric) {
	t.Helper()
	f, s := simSession(t, planesNet, nil, nil, nil)
	opts.Fabric = f
	return New(s, &opts), f
}

// wantPlane is the plane a port of planesNet is on, from the file's
// names and cabling alone: a switch's from its name, a host's port N on
// plane N.
func wantPlane(n *topo.Node, num int) string {
	if n.Type == topo.Switch {
		return n.Desc[1:2]
	}
	return itoa(num)
}

// TestPlanesSeries: from a planarized port, given the fabric, the
// exporter discovers and sweeps every plane of the planarized XDR tree:
// every linked port of the 16 switches and 8 hosts (96: each of the 48
// cables at both ends) is served once (the pedantic registry refuses a
// duplicate), labelled with its plane (the switch's, the host port's
// number); a host's node series (info, rate, node errors) once, not once
// per plane; each cable once with its plane; speed XDR and 100 GB/s on
// every port. Counters move per plane: a symbol error count planted on
// h001-02's plane-3 port is served on that port alone, and the
// background load moves every plane's data counters. Against the file
// (Options.Reference) no node or link is missing (one plane's sweep
// missed three planes).
func TestPlanesSeries(t *testing.T) {
	ref, err := topo.ParseFile(planesNet)
	if err != nil {
		t.Fatal(err)
	}
	e, f := planesExporter(t, Options{HCA: true, Reference: ref})
	if !e.Planes() {
		t.Fatal("Planes() false on a planarized port with the fabric given")
	}
	clock := time.Unix(1_700_000_000, 0)
	now := func() time.Time { return clock }
	e.now = now
	if err := f.SetCounter("h001-02", 3, "SymbolErrorCounter", 7); err != nil {
		t.Fatal(err)
	}
	s1, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s1.Errors != 0 || len(s1.Switches) != 16 || len(s1.HCAs) != 8 || len(s1.Ports) != 96 {
		t.Fatalf("sweep: %d errors, %d switches, %d HCAs, %d ports; want 0, 16, 8, 96", s1.Errors, len(s1.Switches), len(s1.HCAs), len(s1.Ports))
	}
	if s1.Topology != (TopologyDiff{}) {
		t.Errorf("against the file: %+v, want every node and link found", s1.Topology)
	}
	mfs := gather(t, e) // pedantic: no series twice, one label set per name
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			l := labels(m)
			if _, port := l["port"]; port != (l[planeLabel] != "") && !strings.HasPrefix(name, "infiniband_link_info") {
				t.Errorf("%s %v: a port label and no plane, or a plane and no port", name, l)
			}
		}
	}
	ports := map[string]int{} // series of each port family by plane
	for _, s := range s1.Ports {
		p := s.Port
		kind := "switch"
		if p.Node.Type != topo.Switch {
			kind = "hca"
		}
		k := hexGUID(p.Node.GUID) + ":" + itoa(p.Num) + ":" + wantPlane(p.Node, p.Num)
		for _, fam := range []string{"port_transmit_data_bytes_total", "port_link_flaps_total", "port_state", "uplink_info", "port_rate_bytes_per_second"} {
			if series(mfs["infiniband_"+kind+"_"+fam], "guid", "port", planeLabel)[k] == nil {
				t.Errorf("%s port %d: no %s series on plane %s", p.Node.Desc, p.Num, fam, wantPlane(p.Node, p.Num))
			}
		}
		if m := series(mfs["infiniband_"+kind+"_port_rate_bytes_per_second"], "guid", "port", planeLabel)[k]; m == nil || value(m) != 100e9 {
			t.Errorf("%s port %d: rate %v, want 4x XDR's 1e11 B/s", p.Node.Desc, p.Num, m)
		}
		if series(mfs["infiniband_"+kind+"_port_link_speed_info"], "guid", "port", planeLabel, "speed")[k+":XDR"] == nil {
			t.Errorf("%s port %d: no speed=\"XDR\"", p.Node.Desc, p.Num)
		}
		ports[wantPlane(p.Node, p.Num)]++
	}
	for pl := 1; pl <= 4; pl++ {
		if ports[itoa(pl)] != 24 {
			t.Errorf("plane %d: %d linked ports, want 24 (8 host links, 4 leaf-spine links, both ends)", pl, ports[itoa(pl)])
		}
	}
	for _, c := range []struct {
		name string
		want int
	}{{"infiniband_hca_info", 8}, {"infiniband_hca_rate_bytes_per_second", 8}, {"infiniband_switch_info", 16}, {"infiniband_exporter_node_errors", 24}, {"infiniband_link_info", 48}} {
		if got := len(mfs[c.name].GetMetric()); got != c.want {
			t.Errorf("%s: %d series, want %d (one per node, or per cable)", c.name, got, c.want)
		}
	}
	for _, m := range mfs["infiniband_link_info"].GetMetric() {
		if l := labels(m); l[planeLabel] != l["local_name"][1:2] {
			t.Errorf("link %v: plane %q, want its switch's", l, l[planeLabel])
		}
	}
	h := s1.Fabric.NodesByGUID()
	symbols := series(mfs["infiniband_hca_port_symbol_error_total"], "guid", "port", planeLabel)
	for guid, n := range h {
		if n.Desc != "h001-02" {
			continue
		}
		for pl := 1; pl <= 4; pl++ {
			want := 0.0
			if pl == 3 {
				want = 7
			}
			if m := symbols[hexGUID(guid)+":"+itoa(pl)+":"+itoa(pl)]; m == nil || value(m) != want {
				t.Errorf("h001-02 plane %d: symbol errors %v, want %v", pl, m, want)
			}
		}
	}

	if err := f.SetTraffic(&sim.Traffic{Load: 0.3, Now: now}); err != nil {
		t.Fatal(err)
	}
	clock = clock.Add(10 * time.Minute)
	s2, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	moved := map[string]int{}
	for i := range s2.Ports {
		if p := s2.Ports[i].Port; s2.Ports[i].Ext.PortXmitData > s1.Ports[i].Ext.PortXmitData+1e9 {
			moved[wantPlane(p.Node, p.Num)]++
		}
	}
	for pl := 1; pl <= 4; pl++ {
		if moved[itoa(pl)] != 24 {
			t.Errorf("plane %d: %d of 24 ports' PortXmitData moved with 10 minutes of load", pl, moved[itoa(pl)])
		}
	}
}

// TestPlanesOrdinaryPort: given the fabric on an ordinary port (every
// fabric but a planarized one), the exporter is what it was: one walk,
// no plane label on any family it describes or serves.
func TestPlanesOrdinaryPort(t *testing.T) {
	f, s := simSession(t, net2sw, nil, nil, nil)
	e := New(s, &Options{Fabric: f, HCA: true})
	if e.Planes() {
		t.Fatal("Planes() on an ordinary port")
	}
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	for name, mf := range gather(t, e) {
		for _, m := range mf.GetMetric() {
			if _, ok := labels(m)[planeLabel]; ok {
				t.Fatalf("%s: a plane label on an ordinary fabric", name)
			}
		}
	}
}

// TestPlanesTrap: a host link taken down on plane 3 (not the exporter's
// plane 1) raises trap 128 from its plane-3 leaf; the exporter re-reads
// the leaf's ports through its own plane-3 port (its SMPs reach plane 1
// only) and finds the port Down, at once, without a discovery (its log
// says so: the poll sees the last snapshot only, and the re-read of the
// far end, the host's plane port now cut off, calls for a discovery).
// Through plane 1 the re-read times out and finds nothing Down. The port
// is served Down with plane 3; the link back up makes a discovery, which
// walks every plane: all 64 switch ports again, the port Active.
func TestPlanesTrap(t *testing.T) {
	var log syncbuf.Buffer
	e, f := planesExporter(t, Options{Traps: true, Interval: time.Hour, DiscoverInterval: time.Hour, Settles: 8,
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	await := running(t, e)
	state := func(s *Snapshot) uint8 {
		for _, n := range s.Switches {
			if n.Desc == "p3-leaf001" {
				st, _ := s.PortState(n.Ports[3])
				return st
			}
		}
		t.Fatal("no p3-leaf001")
		return 0
	}
	s1 := await("the first sweep", 0, func(s *Snapshot) bool { return s.Subscribed })
	if state(s1) != smp.PortStateActive || len(s1.Ports) != 64 {
		t.Fatalf("first sweep: p3-leaf001 port 3 state %d, %d switch ports; want Active, 64", state(s1), len(s1.Ports))
	}
	if err := f.SetLink("p3-leaf001", 3, false); err != nil {
		t.Fatal(err)
	}
	const reread = `msg="exporter: trap, ports re-read" node=p3-leaf001 ports=6 down=1`
	for deadline := time.Now().Add(5 * time.Minute); !strings.Contains(log.String(), reread); {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 5 minutes:\n%s", reread, log.String())
		}
		time.Sleep(5 * time.Millisecond) // polling, not synchronisation
	}
	s2 := await("the port served Down", s1.Seq, func(s *Snapshot) bool { return state(s) == smp.PortStateDown })
	var guid uint64
	for _, n := range s2.Switches {
		if n.Desc == "p3-leaf001" {
			guid = n.GUID
		}
	}
	if m := series(gather(t, e)["infiniband_switch_port_state"], "guid", "port", planeLabel)[hexGUID(guid)+":3:3"]; m == nil || value(m) != 1 {
		t.Errorf("scrape: p3-leaf001 port 3 (plane 3) state %v, want 1 (Down)", m)
	}
	relinked := time.Now()
	if err := f.SetLink("p3-leaf001", 3, true); err != nil {
		t.Fatal(err)
	}
	// A discovery since the link came back, told by its time (a late
	// trap's re-read may follow it).
	s3 := await("a rediscovery of every plane after the link came back", s2.Seq, func(s *Snapshot) bool {
		return s.DiscoveryTime.After(relinked) && state(s) == smp.PortStateActive && len(s.Ports) == 64
	})
	planes := map[uint8]int{}
	for _, p := range s3.Ports {
		planes[p.Port.Plane]++
	}
	if len(planes) != 4 || planes[3] != 16 {
		t.Errorf("after the rediscovery: switch ports by plane %v, want 16 on each of 4", planes)
	}
}
