package tests

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/exporter"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/internal/simkernel"
	"github.com/ibscript/ibscript/internal/syncbuf"
	"github.com/ibscript/ibscript/sim/simtest"
	"github.com/ibscript/ibscript/topo"
)

// ibnetdiscoverText is d's fabric as ibnetdiscover's text, at a fixed
// time.
func ibnetdiscoverText(t *testing.T, d *engine.Discovery) string {
	var b bytes.Buffer
	if err := topo.WriteIBNetDiscover(&b, d.Fabric, &topo.WriteOptions{Time: time.Unix(0, 0).UTC()}); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDiscoverPlanesOnKernel: engine.DiscoverPlanes through the kernel
// backend, on a host whose planarized HCA's umad devices are cabled to
// the simulator's (simkernel.Host), finds what it finds on the simulator's own
// backend from the same plane port: the same ibnetdiscover text, every
// plane with its number, each host planarized. With the kernel's one SMI
// device, plane N is its port N; with one SMI device per plane (each
// plane port its device's port 1) the planes are numbered by device name,
// smi1 to smi4, not all 1, and the pair's SMI side is the last device
// (libibumad keeps the last SMI name of a port GUID), plane 4.
func TestDiscoverPlanesOnKernel(t *testing.T) {
	for _, c := range []struct {
		name     string
		perPlane bool
		plane    int // the plane the GSI device's pair sends its SMPs on
	}{{"one SMI device", false, 1}, {"an SMI device per plane", true, 4}} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), perTestTimeout)
			defer cancel()
			sf := loadSim(t, planesTopology)
			h := simkernel.Host(t, sf, "h000-00", c.perPlane)
			kf := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open})
			defer kf.Close()
			opts := &engine.Options{Timeout: 2 * time.Second, Retries: 3}
			discover := func(f fabric.Fabric, ca string, port int) (*engine.Discovery, fabric.PortAttr) {
				t.Helper()
				s := simtest.PortSession(t, f, ca, port, opts)
				d, err := s.DiscoverPlanes(ctx, f, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(d.Errors) > 0 {
					t.Errorf("%s port %d: discovery errors %v", ca, port, d.Errors)
				}
				return d, s.Port()
			}
			kd, ka := discover(kf, "mlx5_0", 1)
			if ka.SMIName == "" || ka.SMIName == "mlx5_0" {
				t.Fatalf("the kernel's mlx5_0 is no pair's GSI side: %+v", ka)
			}
			sd, _ := discover(sf, "h000-00", c.plane)
			got, want := ibnetdiscoverText(t, kd), ibnetdiscoverText(t, sd)
			if got != want {
				t.Errorf("kernel backend (SMI side %s port %d):\n%s\nsimulator (plane %d):\n%s", ka.SMIName, ka.SMIPort, got, c.plane, want)
			}
			planes := map[uint8]int{}
			for _, n := range kd.Fabric.Nodes {
				for _, p := range n.Ports {
					if p != nil && p.Remote != nil {
						planes[p.Plane]++
					}
				}
			}
			if len(planes) != 4 || planes[1] != planes[4] || planes[0] != 0 {
				t.Errorf("cabled ports by plane %v, want as many on each of planes 1 to 4", planes)
			}
			if o := kd.Fabric.Origin; o == nil || o.Num != c.plane || o.Plane != uint8(c.plane) {
				t.Errorf("Origin %+v, want the local plane port %d", o, c.plane)
			}
		})
	}
}

// TestPlaneTrapsOnKernel: through the kernel backend, on a host whose
// planarized HCA is the simulator's h001-00 (simkernel.Host, each plane
// port's sysfs sm_lid its plane's SM), Session.PlaneSMLIDs gives every
// plane's SM, as the simulator's plane ports name them; a subscription at
// the port's own SM alone hears nothing of a link change on plane 3, and
// one at every plane's SM (what the exporter and Lua's sa.subscribe{planes
// = true} make) gets its trap 128 from plane 3's SM, through the uplink
// and the kernel model's Report agent; then Lua's sa.subscribe{planes =
// true} on the kernel backend does too.
func TestPlaneTrapsOnKernel(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), perTestTimeout)
	defer cancel()
	sf := loadSim(t, planesTopology)
	attrs, err := sf.Ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var want []uint16 // the simulator's plane ports' SMs, by port
	for _, a := range attrs {
		if a.CAName == "h001-00" {
			want = append(want, a.SMLID)
		}
	}
	h := simkernel.Host(t, sf, "h001-00", false)
	kf := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open})
	defer kf.Close()
	s := simtest.PortSession(t, kf, "mlx5_0", 1, &engine.Options{Timeout: 2 * time.Second, Retries: 3})
	lids, err := s.PlaneSMLIDs(ctx, kf)
	if err != nil || len(lids) != 4 || !slices.Equal(lids, want) {
		t.Fatalf("PlaneSMLIDs on the kernel backend = %v, %v; want the simulator's plane SMs %v", lids, err, want)
	}
	simtest.PlaneTraps(t, sf, s, lids)

	// Lua's sa.subscribe{planes = true} on the kernel backend's default
	// port (mlx5_0, the GSI side): plane 3's trap from plane 3's SM. s
	// gives the port's Report method back first (the kernel lets one
	// agent own it).
	s.Close()
	L, _, done := planState(t, ctx, kf, &engine.Options{Timeout: 2 * time.Second, Retries: 3}, bindings.Options{})
	defer done()
	if err := bindings.DoString(L, `all = sa.subscribe{traps = {128}, planes = true}`); err != nil {
		t.Fatal(err)
	}
	if st := sf.ReportStats(); st.Subs != 4 {
		t.Errorf("sa.subscribe{planes = true}: %d subscriptions, want 4", st.Subs)
	}
	if err := sf.SetLink("p3-leaf001", 3, false); err != nil {
		t.Fatal(err)
	}
	if err := bindings.DoString(L, fmt.Sprintf(`
		local r = all:next(60000)
		assert(r and r.trap == 128 and r.from_lid == %d, "from LID " .. tostring(r and r.from_lid))
		all:close()`, lids[2])); err != nil {
		t.Fatal(err)
	}
}

// TestExporterPlaneTrapsOnKernel: the exporter on the kernel backend's
// planarized port (mlx5_0, cabled to the simulator's h001-00), with the
// kernel fabric, subscribes at every plane's SM from the plane ports'
// sysfs sm_lid (each trap at the 4 SMs), and a link down on plane 3
// reaches it: it re-reads p3-leaf001's ports, one down, for trap 128, and
// gets trap 65 issued by plane 3's SM (sim.Fabric.SMs).
func TestExporterPlaneTrapsOnKernel(t *testing.T) {
	sf := loadSim(t, planesTopology)
	h := simkernel.Host(t, sf, "h001-00", false)
	kf := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open})
	t.Cleanup(func() { kf.Close() }) // after the exporter's, registered later
	s := simtest.PortSession(t, kf, "mlx5_0", 1, &engine.Options{Timeout: 2 * time.Second, Retries: 3})
	var log syncbuf.Buffer
	e := exporter.New(s, &exporter.Options{Traps: true, Fabric: kf, Interval: time.Hour, DiscoverInterval: time.Hour, Settles: 8,
		Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	ctx, stop := context.WithCancel(t.Context())
	ran := make(chan error, 1)
	go func() { ran <- e.Run(ctx) }()
	t.Cleanup(func() {
		stop()
		if err := <-ran; !errors.Is(err, context.Canceled) {
			t.Errorf("exporter Run: %v", err)
		}
	})
	// Polling, bounded by the deadline: not synchronisation.
	await := func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Minute); !ok(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 5 minutes:\n%s", what, log.String())
			}
		}
	}
	await("the first sweep, subscribed", func() bool { s := e.Snapshot(); return s != nil && s.Subscribed })
	if st := sf.ReportStats(); st.Subs != 4*len(exporter.TrapNumbers()) {
		t.Errorf("the planes' SAs hold %d subscriptions, want %d (each trap at 4 SMs)", st.Subs, 4*len(exporter.TrapNumbers()))
	}
	if err := sf.SetLink("p3-leaf001", 3, false); err != nil {
		t.Fatal(err)
	}
	const reread = `msg="exporter: trap, ports re-read" node=p3-leaf001 ports=6 down=1`
	await("the trap's re-read", func() bool { return strings.Contains(log.String(), reread) })
	// Trap 65 (h001-02's plane-3 port out of service) is issued by the
	// SM of its plane.
	sm3 := fmt.Sprintf(`msg="exporter: trap" trap=65 issuer_lid=%d`, sf.SMs()[2].LID)
	await("trap 65 from plane 3's SM", func() bool { return strings.Contains(log.String(), sm3) })
}
