package ibsimdiff

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ibscript/ibscript/exporter"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/internal/syncbuf"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// TestExporterMatchesPerfQuery: on live ibsim, with error counters set
// through its console, one exporter sweep (CA ports too, --collector.hca)
// holds every linked switch and CA port, and each port's error counters,
// QP1Dropped and PortXmitWait are what perfquery prints for it (the data
// and packet counters move with every MAD, so they are not compared), and
// with the detail counters asked (--details), its PortRcvErrorDetails and
// PortXmitDiscardDetails are what perfquery -E and -D print.
func TestExporterMatchesPerfQuery(t *testing.T) {
	ibsimtest.Require(t)
	src, err := os.ReadFile(topo2sw)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tp := filepath.Join(dir, "net.exporter") // a private ibsim: its counters change
	if err := os.WriteFile(tp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ibsimtest.Start(t.Context(), dir, tp, nil)
	t.Cleanup(s.Stop) // after the session's cleanup closes it
	if err != nil {
		t.Fatal(err)
	}
	console(t, s,
		`PerformanceSet "Switch1"[1] PortCounters.SymbolErrorCounter=3`,
		`PerformanceSet "Switch1"[3] PortCounters.PortRcvErrors=1234`,
		`PerformanceSet "Switch2"[2] PortCounters.PortXmitWait=11`,
		`PerformanceSet "Switch2"[5] PortCounters.LinkDownedCounter=250`,
		`PerformanceSet "Hca2"[1] PortCounters.PortRcvErrors=77`,
		`PerformanceSet "Switch1"[2] PortRcvErrorDetails.PortDLIDMappingErrors=19`,
		`PerformanceSet "Switch2"[1] PortXmitDiscardDetails.PortNeighborMTUDiscards=5`,
		`PerformanceSet "Hca1"[1] PortRcvErrorDetails.PortLoopingErrors=3`)
	sess, _ := session(t, s, "", nil, nil)
	snap, err := exporter.New(sess, &exporter.Options{HCA: true, Details: true, HCADetails: true}).Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if snap.Errors != 0 || len(snap.Ports) != 12 {
		t.Fatalf("sweep: %d errors, %d ports (want 0 and the 8 linked switch ports and 4 CA ports)", snap.Errors, len(snap.Ports))
	}
	line := regexp.MustCompile(`(?m)^(\w+):\.*(\d+)$`)
	compared, nonZero := 0, 0
	for _, ps := range snap.Ports {
		if ps.PCErr != nil || ps.ExtErr != nil || ps.CapsErr != nil || ps.RcvErrErr != nil || ps.DiscardErr != nil {
			t.Errorf("%s port %d: %v %v %v %v %v", ps.Port.Node.Desc, ps.Port.Num, ps.PCErr, ps.ExtErr, ps.CapsErr, ps.RcvErrErr, ps.DiscardErr)
			continue
		}
		lid := ps.Port.Node.EndPort(ps.Port.Num).LID // a CA port's own, a switch's port 0's
		for _, c := range []struct {
			flag string // perfquery's option for the attribute
			id   uint16
			v    interface{ MarshalBinary() ([]byte, error) }
		}{
			{"", perf.AttrPortCounters, &ps.PC},
			{"-E", perf.AttrPortRcvErrorDetails, &ps.RcvErr},
			{"-D", perf.AttrPortXmitDiscardDetails, &ps.Discard},
		} {
			args := []string{strconv.Itoa(int(lid)), strconv.Itoa(ps.Port.Num)}
			if c.flag != "" {
				args = append([]string{c.flag}, args...)
			}
			out, err := s.Run(t.Context(), "", "perfquery", args...)
			if err != nil {
				t.Fatalf("perfquery %s: %v\n%s", strings.Join(args, " "), err, out)
			}
			ref := map[string]uint64{}
			for _, m := range line.FindAllStringSubmatch(string(out), -1) {
				ref[m[1]], _ = strconv.ParseUint(m[2], 10, 64)
			}
			data, err := c.v.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range perf.LayoutByID(c.id).Fields {
				if perfTraffic[f.Name] || strings.HasPrefix(f.Name, "PortSelect") || strings.HasPrefix(f.Name, "CounterSelect") {
					continue
				}
				want, ok := ref[f.Name]
				if !ok {
					continue // a field perfquery does not print
				}
				compared++
				got := f.Get(data)
				if got != 0 {
					nonZero++
				}
				if got != want {
					t.Errorf("%s port %d %s: exporter %d, perfquery %s %d", ps.Port.Node.Desc, ps.Port.Num, f.Name, got, c.flag, want)
				}
			}
		}
	}
	// 12 ports: the 12 error counters, QP1Dropped and PortXmitWait; the 6
	// and 4 detail counters.
	if compared < 12*(13+10) || nonZero < 8 {
		t.Errorf("%d values compared (%d not zero), want at least %d (8)", compared, nonZero, 12*(13+10))
	}
}

// TestExporterTrapRediscovery runs the exporter's loop on live ibsim with
// OpenSM (its session an issm client of Hca3, as TestTrapsMatchOpenSM's,
// so ibsim hands it the Reports): it subscribes through OpenSM's SA, and
// a cable between the switches unlinked through ibsim's console (ibsim's
// trap 128 from each switch, forwarded by OpenSM) makes the exporter
// re-read that switch's ports: a snapshot with its end Down, without a
// discovery and without waiting for the hour-long intervals (only the
// trap can explain it), the port still served; then the far end (re-read,
// or found by a discovery when the LID route to it went with the link),
// both with when they went down and one flap each; the cable relinked (a port come up: its cable may
// lead anywhere) makes a new discovery that brings them back Active.
func TestExporterTrapRediscovery(t *testing.T) {
	ibsimtest.Require(t)
	src, err := os.ReadFile(topo2sw)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tp := filepath.Join(dir, "net.exporter-traps") // a private ibsim: its links change
	if err := os.WriteFile(tp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ibsimtest.Start(t.Context(), dir, tp, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop) // after the session's cleanup
	sess, tr := session(t, s, "Hca3", &ibsim.Options{ISSM: true}, nil)
	if tr.Caps().NoRequests {
		t.Fatal("an issm client's transport says requests never reach it")
	}
	// Beside it, an exporter on a plain (not issm) client of Hca1: the SA
	// takes its subscription, but ibsim hands the SA's Reports to issm
	// clients only, so traps cannot arrive there. It says so (a warning,
	// trap_subscribed 0), holds no subscription, and sees no trap while
	// the other one does.
	plain, ptr := session(t, s, "Hca1", nil, nil)
	if !ptr.Caps().NoRequests {
		t.Fatal("a plain ibsim client's transport says requests reach it")
	}
	var plog syncbuf.Buffer
	pe := exporter.New(plain, &exporter.Options{Traps: true, Interval: time.Hour, DiscoverInterval: time.Hour, Logger: slog.New(slog.NewTextHandler(&plog, nil))})
	pctx, pcancel := context.WithCancel(t.Context())
	perrc := make(chan error, 1)
	go func() { perrc <- pe.Run(pctx) }()
	defer func() {
		pcancel()
		<-perrc
	}()
	// Settles 8: rediscoveries after 1, 2, ... 128 s while the relinked
	// ports are Init, where the default stops after 31 s: OpenSM on this
	// machine, loaded by other builds, took longer to make them Active
	// ("not within 60s" after ReLink).
	e := exporter.New(sess, &exporter.Options{Traps: true, Interval: time.Hour, DiscoverInterval: time.Hour, Settles: 8})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- e.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-errc; err != context.Canceled {
			t.Errorf("Run: %v", err)
		}
	}()
	await := func(what string, seq uint64, ok func(*exporter.Snapshot) bool) *exporter.Snapshot {
		t.Helper()
		deadline := time.Now().Add(5 * time.Minute)
		for time.Now().Before(deadline) {
			if snap := e.Snapshot(); snap != nil && snap.Seq > seq && ok(snap) {
				return snap
			}
			time.Sleep(10 * time.Millisecond) // polling, not synchronisation
		}
		t.Fatalf("%s: not within 5 minutes (last snapshot %+v)", what, e.Snapshot())
		return nil
	}
	state := func(snap *exporter.Snapshot, node string, port int) uint8 {
		for _, n := range snap.Switches {
			if n.Desc == node {
				st, _ := snap.PortState(n.Ports[port])
				return st
			}
		}
		t.Fatalf("no switch %q", node)
		return 0
	}
	s1 := await("the first sweep, subscribed", 0, func(snap *exporter.Snapshot) bool { return snap.Subscribed })
	for deadline := time.Now().Add(5 * time.Minute); pe.Snapshot() == nil || !strings.Contains(plog.String(), "traps cannot arrive"); {
		if time.Now().After(deadline) {
			t.Fatalf("the plain client's exporter: no sweep or no warning within 5 minutes: %q", plog.String())
		}
		time.Sleep(10 * time.Millisecond) // polling, not synchronisation
	}
	if ps := pe.Snapshot(); ps.Subscribed {
		t.Error("the plain client's exporter reads subscribed where traps cannot arrive")
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(pe)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	gotSub := false
	for _, mf := range mfs {
		if mf.GetName() == "infiniband_exporter_trap_subscribed" {
			gotSub = true
			if v := mf.GetMetric()[0].GetGauge().GetValue(); v != 0 {
				t.Errorf("plain client: trap_subscribed %v, want 0", v)
			}
		}
	}
	if !gotSub {
		t.Error("plain client: no infiniband_exporter_trap_subscribed")
	}
	if s1.Errors != 0 || len(s1.Ports) != 8 || state(s1, "Switch1", 3) != smp.PortStateActive {
		t.Fatalf("first sweep: %d errors, %d ports, Switch1 port 3 state %d", s1.Errors, len(s1.Ports), state(s1, "Switch1", 3))
	}
	for _, c := range []struct {
		cmd        string
		state      uint8
		discovered bool
	}{
		{`Unlink "Switch1"[3]`, smp.PortStateDown, false},
		{`ReLink "Switch1"[3]`, smp.PortStateActive, true},
	} {
		last := e.Snapshot().Seq
		sent := time.Now()
		out, err := s.Console(t.Context(), c.cmd)
		if err != nil || strings.Contains(out, "#") {
			t.Fatalf("%s: %q %v", c.cmd, out, err)
		}
		if !c.discovered {
			// Switch1's trap: its ports re-read, no discovery. Switch2's
			// end is re-read next, or, when the link's loss cut the LID
			// route to it (OpenSM has not rerouted yet), found by a
			// discovery.
			// The re-read's snapshot may be followed by the discovery's
			// before the poll sees it: then Switch1's port went down
			// (was seen Down) before that discovery began.
			snap := await("Switch1's ports re-read after "+c.cmd, last, func(snap *exporter.Snapshot) bool { return state(snap, "Switch1", 3) == c.state })
			// Reported, not judged (timing is the machine's): how long
			// from the console's command to the snapshot showing it.
			t.Logf("%s: Switch1 port 3 %s in the metrics %v after the command (sweep interval 1 h)", c.cmd, smp.PortStateName(c.state), snap.Time.Sub(sent).Round(time.Millisecond))
			at, ok := snap.DownSince[exporter.PortKey{GUID: snap.Switches[0].GUID, Port: 3}]
			if !ok || snap.Refreshes == 0 || snap.Traps == 0 || snap.Discovered && !at.Before(snap.DiscoveryTime) {
				t.Errorf("%s: sweep %d Discovered %v (at %v), %d refreshes, %d traps, Switch1 port 3 down since %v: want it re-read before any discovery",
					c.cmd, snap.Seq, snap.Discovered, snap.DiscoveryTime, snap.Refreshes, snap.Traps, at)
			}
		}
		// The poll sees the last snapshot only: the relink's discovery
		// may be followed by the re-read of a later trap (the other
		// switch's, or a Report OpenSM forwarded late on a loaded
		// machine) before the poll looks, and that one says Discovered
		// false, so a discovery since the command is told by its time
		// (with hour-long intervals only a trap explains it).
		snap := await("both ends after "+c.cmd, last, func(snap *exporter.Snapshot) bool {
			return (!c.discovered || snap.DiscoveryTime.After(sent)) && state(snap, "Switch1", 3) == c.state && state(snap, "Switch2", 3) == c.state
		})
		if c.discovered && snap.Discovered && !snap.TrapDiscovery || snap.Traps == 0 {
			t.Errorf("%s: sweep %d Discovered %v TrapDiscovery %v, %d traps", c.cmd, snap.Seq, snap.Discovered, snap.TrapDiscovery, snap.Traps)
		}
		for _, n := range snap.Switches {
			k := exporter.PortKey{GUID: n.GUID, Port: 3}
			if _, down := snap.DownSince[k]; down != !c.discovered || snap.Flaps[k] != 1 {
				t.Errorf("%s: %s port 3: down since %v (want %v), %d flaps (want 1)", c.cmd, n.Desc, snap.DownSince[k], !c.discovered, snap.Flaps[k])
			}
		}
		if ps := pe.Snapshot(); ps.Traps != 0 {
			t.Errorf("%s: the plain client's exporter counts %d traps", c.cmd, ps.Traps)
		}
	}
}
