package exporter

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/internal/syncbuf"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

// TestTrapRediscovery: with Traps, Run subscribes to the SM's traps; a
// link taken down on the simulator (which raises trap 128 from each
// switch, as ibsim and OpenSM do) makes the exporter re-read just those
// switches' ports, without waiting for the hour-long intervals and
// without a discovery: the port reads Down, stays served (its counters
// too, until a discovery says the link is gone), with when it went down
// and one flap (LinkDownedCounter rose by one, and the exporter saw it go
// down: counted once). The link back up needs a discovery (a cable that
// comes up may lead anywhere): it shows Active again. Without Traps
// nothing is re-read.
func TestTrapRediscovery(t *testing.T) {
	// Settles 8 (up to 128 s of rediscoveries while the port is Init):
	// under -race on a loaded machine the simulated SM made the port
	// Active after the default's 31 s ("not within 30s").
	e, f := simExporter(t, net2sw, &Options{Traps: true, Interval: time.Hour, DiscoverInterval: time.Hour, Settles: 8})
	await := running(t, e)
	state := func(s *Snapshot, node string, port int) uint8 {
		for _, n := range s.Switches {
			if n.Desc == node {
				st, _ := s.PortState(n.Ports[port])
				return st
			}
		}
		t.Fatalf("no %s", node)
		return 0
	}
	s1 := await("the first sweep", 0, func(s *Snapshot) bool { return s.Subscribed })
	if state(s1, "Switch1", 3) != smp.PortStateActive || len(s1.Ports) != 8 {
		t.Fatalf("first sweep: Switch1 port 3 state %d, %d ports", state(s1, "Switch1", 3), len(s1.Ports))
	}
	if err := f.SetLink("Switch1", 3, false); err != nil {
		t.Fatal(err)
	}
	s2 := await("the ports re-read after the link went down", s1.Seq, func(s *Snapshot) bool { return state(s, "Switch1", 3) == smp.PortStateDown })
	if s2.Discovered || s2.TrapDiscovery || s2.Refreshed == 0 || s2.Refreshes == 0 || s2.Traps == 0 || s2.Unannounced != 0 {
		t.Errorf("sweep %d: Discovered %v, TrapDiscovery %v, %d ports re-read, %d refreshes, %d traps, %d unannounced changes; want a refresh, no discovery",
			s2.Seq, s2.Discovered, s2.TrapDiscovery, s2.Refreshed, s2.Refreshes, s2.Traps, s2.Unannounced)
	}
	if s2.Fabric != s1.Fabric || len(s2.Ports) != 8 {
		t.Errorf("after the link went down: a new topology, or %d ports (want the discovery's 8)", len(s2.Ports))
	}
	sw1 := hexGUID(s2.Switches[0].GUID)
	k := PortKey{s2.Switches[0].GUID, 3}
	if _, ok := s2.DownSince[k]; !ok || s2.Flaps[k] != 1 {
		t.Errorf("Switch1 port 3: DownSince %v, %d flaps; want a time, 1", s2.DownSince, s2.Flaps[k])
	}
	mfs := gather(t, e)
	if m := series(mfs["infiniband_switch_port_state"])[sw1+":3"]; m == nil || value(m) != 1 {
		t.Errorf("scrape: port_state of Switch1 port 3 %v, want 1 (Down)", m)
	}
	if m := series(mfs["infiniband_switch_port_physical_state"])[sw1+":3"]; m == nil || value(m) != float64(smp.PhysStateDisabled) {
		t.Errorf("scrape: physical_state of Switch1 port 3 %v, want 3 (Disabled)", m)
	}
	if m := series(mfs["infiniband_switch_port_down_since_timestamp_seconds"])[sw1+":3"]; m == nil || value(m) < float64(s1.Time.Unix()) {
		t.Errorf("scrape: down_since of Switch1 port 3 %v, want a time after the first sweep", m)
	}
	if m := series(mfs["infiniband_switch_port_link_flaps_total"])[sw1+":3"]; m == nil || value(m) != 1 {
		t.Errorf("scrape: link_flaps_total of Switch1 port 3 %v, want 1", m)
	}
	if m := series(mfs["infiniband_switch_port_link_downed_total"])[sw1+":3"]; m == nil || value(m) != 1 {
		t.Errorf("scrape: the down port's link_downed_total %v, want it served, 1", m)
	}
	if m := mfs["infiniband_exporter_trap_subscribed"]; m == nil || value(m.GetMetric()[0]) != 1 {
		t.Errorf("trap_subscribed %v", m)
	}
	relinked := time.Now()
	if err := f.SetLink("Switch1", 3, true); err != nil {
		t.Fatal(err)
	}
	// A discovery since the link came back, told by its time: the poll
	// sees the last snapshot only, and the other switch's trap, taken
	// after the discovery on a loaded machine, publishes a re-read over
	// it (Discovered false).
	s3 := await("a rediscovery after the link came back", s2.Seq, func(s *Snapshot) bool {
		return s.DiscoveryTime.After(relinked) && state(s, "Switch1", 3) == smp.PortStateActive && len(s.Ports) == 8
	})
	if _, ok := s3.DownSince[k]; ok || s3.Flaps[k] != 1 || s3.Discovered && !s3.TrapDiscovery {
		t.Errorf("after the link came back: DownSince %v, %d flaps, Discovered %v, TrapDiscovery %v; want none, 1, a trap's discovery", s3.DownSince, s3.Flaps[k], s3.Discovered, s3.TrapDiscovery)
	}
}

// TestNoTrapsNoRediscovery: without Traps a link change is seen only at
// the next discovery.
func TestNoTrapsNoRediscovery(t *testing.T) {
	e, f := simExporter(t, net2sw, nil)
	if _, err := e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := f.SetLink("Switch1", 3, false); err != nil {
		t.Fatal(err)
	}
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if s.Discovered || s.Subscribed || len(s.Ports) != 8 {
		t.Errorf("discovered %v, subscribed %v, %d ports: want the old topology", s.Discovered, s.Subscribed, len(s.Ports))
	}
	// The state is the last discovery's: Active until rediscovered.
	if st := s.Switches[0].Ports[3].State; s.Switches[0].Desc != "Switch1" || st != smp.PortStateActive {
		t.Errorf("%s port 3 state %d, want the discovered Active", s.Switches[0].Desc, st)
	}
}

// TestSettleBackoff: after a trap, a discovery that finds cabled ports in
// Init (a fabric no SM activates: the simulator bare) is repeated after
// 1 s, 2 s, 4 s, 8 s and 16 s, then no more until DiscoverInterval.
func TestSettleBackoff(t *testing.T) {
	e, _ := simExporterOn(t, net2sw, &sim.Options{Bare: true}, &Options{Interval: time.Second, DiscoverInterval: time.Hour}, nil, nil)
	clock := time.Unix(1_700_000_000, 0)
	e.now = func() time.Time { return clock }
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !transitional(s.Fabric) {
		t.Fatal("the bare fabric has no port in Init")
	}
	e.trapped.Store(true) // as a Report does
	var at []time.Duration
	start := clock
	for range 60 {
		s, err := e.Sweep(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if s.Discovered {
			at = append(at, clock.Sub(start))
		}
		clock = clock.Add(time.Second)
	}
	want := []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second, 15 * time.Second, 31 * time.Second}
	if !slices.Equal(at, want) {
		t.Errorf("discoveries at %v after the trap, want %v", at, want)
	}
}

// dropReports is a Transport that loses every SA Report (class 0x03,
// method 0x06) on its way in: a subscription the SA holds whose traps
// never arrive.
type dropReports struct{ fabric.Transport }

func (d dropReports) Caps() fabric.Caps {
	c := d.Transport.Caps()
	c.SetHandler = nil // every MAD through Recv, where the Reports are dropped
	return c
}

func (d dropReports) Recv(ctx context.Context, p *fabric.Packet) error {
	for {
		if err := d.Transport.Recv(ctx, p); err != nil {
			return err
		}
		if len(p.Data) < 4 || p.Data[1] != 0x03 || p.Data[3] != 0x06 {
			return nil
		}
	}
}

// TestUnannouncedChanges (issue 35): subscribed, but the SA's Reports are
// lost on the way: a link that goes down is seen at the next discovery on
// DiscoverInterval, which says that no trap announced it (a warning,
// infiniband_exporter_unannounced_changes_total 1); with the Reports
// arriving (TestTrapRediscovery) the count stays 0.
func TestUnannouncedChanges(t *testing.T) {
	var log syncbuf.Buffer
	e, f := simExporterWith(t, net2sw, &Options{Traps: true, Interval: 20 * time.Millisecond, DiscoverInterval: time.Second,
		Logger: slog.New(slog.NewTextHandler(&log, nil))}, nil, func(tr fabric.Transport) fabric.Transport { return dropReports{tr} })
	await := running(t, e)
	s1 := await("subscribed", 0, func(s *Snapshot) bool { return s.Subscribed })
	// A discovery with nothing changed counts nothing.
	s1 = await("a rediscovery with nothing changed", s1.Seq, func(s *Snapshot) bool { return s.Discovered })
	if s1.Unannounced != 0 || s1.TrapDiscovery {
		t.Fatalf("unchanged fabric: Unannounced %d, TrapDiscovery %v", s1.Unannounced, s1.TrapDiscovery)
	}
	if err := f.SetLink("Switch1", 3, false); err != nil {
		t.Fatal(err)
	}
	s2 := await("the next discovery", s1.Seq, func(s *Snapshot) bool { return s.Discovered && len(s.Ports) == 6 })
	if s2.TrapDiscovery || s2.Traps != 0 || s2.Unannounced != 1 {
		t.Errorf("sweep %d: TrapDiscovery %v, %d traps, Unannounced %d; want false, 0, 1", s2.Seq, s2.TrapDiscovery, s2.Traps, s2.Unannounced)
	}
	if !strings.Contains(log.String(), "traps may not be arriving") {
		t.Errorf("no warning: %q", log.String())
	}
	mfs := gather(t, e)
	if m := mfs["infiniband_exporter_unannounced_changes_total"]; m == nil || value(m.GetMetric()[0]) != 1 {
		t.Errorf("unannounced_changes_total %v, want 1", m)
	}
}

// TestTrapNames: what each trap makes the exporter re-read, on the
// discovered net2sw: 128 every port of the switch its LID names; 129-131
// the port of the switch the LID and port number name, or the CA port
// the LID names; 144 the port the LID names (a switch's port 0); 65 the
// switch port facing the endport gone, by its port GUID; a LID or a
// port the topology does not hold, 64 and a vendor notice want a
// discovery.
func TestTrapNames(t *testing.T) {
	e, _ := simExporter(t, net2sw, nil)
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ix := e.plan.index()
	var sw1, hca1 *topo.Node
	for _, n := range s.Fabric.Nodes {
		switch n.Desc {
		case "Switch1":
			sw1 = n
		case "Hca1":
			hca1 = n
		}
	}
	if sw1 == nil || hca1 == nil {
		t.Fatal("no Switch1 or Hca1")
	}
	swLID, hcaPort := sw1.Ports[0].LID, hca1.Ports[1]
	names := func(ps []*topo.Port) string {
		var out []string
		for _, p := range ps {
			out = append(out, fmt.Sprintf("%s/%d", p.Node.Desc, p.Num))
		}
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		ev   trapEvent
		want string // "" with ok false: a discovery
		ok   bool
	}{
		{trapEvent{trap: smp.TrapLinkStateChange, lid: swLID, port: -1}, "Switch1/1 Switch1/2 Switch1/3 Switch1/4 Switch1/5 Switch1/6 Switch1/7 Switch1/8", true},
		{trapEvent{trap: smp.TrapLinkIntegrity, lid: swLID, port: 5}, "Switch1/5", true},
		{trapEvent{trap: smp.TrapBufferOverrun, lid: hcaPort.LID, port: 1}, "Hca1/1", true},
		{trapEvent{trap: smp.TrapWatchdog, lid: swLID, port: 9}, "", false},
		{trapEvent{trap: smp.TrapLocalChanges, lid: hcaPort.LID, port: -1}, "Hca1/1", true},
		{trapEvent{trap: smp.TrapLocalChanges, lid: swLID, port: -1}, "Switch1/0", true},
		{trapEvent{trap: smp.TrapGIDOutOfService, gid: hcaPort.GUID, port: -1}, "Switch1/1", true},
		{trapEvent{trap: smp.TrapGIDOutOfService, gid: 0x1234, port: -1}, "", true},
		{trapEvent{trap: smp.TrapGIDInService, gid: hcaPort.GUID, port: -1}, "", false},
		{trapEvent{trap: smp.TrapLinkStateChange, lid: 999, port: -1}, "", false},
		{trapEvent{trap: smp.TrapLinkStateChange, lid: hcaPort.LID, port: -1}, "", false},
		{trapEvent{trap: 0, port: -1}, "", false},
	} {
		ps, ok := ix.named(c.ev)
		if got := names(ps); got != c.want || ok != c.ok {
			t.Errorf("%+v: %q %v, want %q %v", c.ev, got, ok, c.want, c.ok)
		}
	}
	// eventOf reads them from the Notices as smp.Notice carries them.
	n := smp.Notice{IsGeneric: true, TrapNumber: smp.TrapLinkIntegrity, IssuerLID: hcaPort.LID}
	n.SetDetailsLID(swLID)
	n.DataDetails[4] = 5 // the port, after the LID
	if ev := eventOf(&n); ev != (trapEvent{trap: smp.TrapLinkIntegrity, lid: swLID, port: 5}) {
		t.Errorf("trap 129: %+v", ev)
	}
	n = smp.Notice{IsGeneric: true, TrapNumber: smp.TrapGIDOutOfService}
	n.SetDetailsGID(mad.NewGID(0xfe80000000000000, hcaPort.GUID))
	if ev := eventOf(&n); ev != (trapEvent{trap: smp.TrapGIDOutOfService, gid: hcaPort.GUID, port: -1}) {
		t.Errorf("trap 65: %+v", ev)
	}
	n = smp.Notice{IsGeneric: true, TrapNumber: smp.TrapLinkStateChange, IssuerLID: swLID}
	if ev := eventOf(&n); ev != (trapEvent{trap: smp.TrapLinkStateChange, lid: swLID, port: -1}) {
		t.Errorf("trap 128 without its details: %+v", ev)
	}
}
