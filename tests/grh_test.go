package tests

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/kernel"
	"github.com/ibscript/ibscript/internal/rocetest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/native/rdmacm"
	"github.com/ibscript/ibscript/native/rdmacm/rdmacmtest"
	"github.com/ibscript/ibscript/native/umad/umadtest"
	"github.com/ibscript/ibscript/scripts"
	"github.com/ibscript/ibscript/sim/simtest"
)

// runScriptPlan runs a script of scripts/ as a plan on f (its session on the
// default port) and returns the report's summary, failing on a run error
// or a resource left open.
func runScriptPlan(t *testing.T, f fabric.Fabric, script string, args map[string]string) (passed, failed int) {
	t.Helper()
	src, err := os.ReadFile("../scripts/" + script)
	if err != nil {
		t.Fatal(err)
	}
	return runScriptSource(t, f, script, string(src), args)
}

// expectPlan runs a script of scripts/ as a plan on f and fails t unless
// its checks passed and failed as many times as wanted.
func expectPlan(t *testing.T, f fabric.Fabric, script string, args map[string]string, pass, fail int) {
	t.Helper()
	if p, fl := runScriptPlan(t, f, script, args); p != pass || fl != fail {
		t.Errorf("%s: %d passed, %d failed; want %d passed, %d failed", script, p, fl, pass, fail)
	}
}

// simPlan runs a script of scripts/ on net.ipoib in the simulator and
// wants its two checks passed.
func simPlan(t *testing.T, script string) {
	t.Helper()
	f, err := openFabric("net.ipoib")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	expectPlan(t, f, script, nil, 2, 0)
}

// runScriptSource is runScriptPlan with the script's text.
func runScriptSource(t *testing.T, f fabric.Fabric, script, src string, args map[string]string) (passed, failed int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), perTestTimeout)
	defer cancel()
	var out strings.Builder
	L, env, done := planState(t, ctx, f, nil, bindings.Options{Stdout: &out,
		PlanName: strings.TrimSuffix(script, ".lua"), PlanArgs: args})
	defer done()
	runErr := bindings.DoString(L, src)
	rep := env.PlanReport(runErr)
	if rep == nil || runErr != nil {
		t.Fatalf("run: %v\n%s", runErr, out.String())
	}
	for _, ch := range rep.Checks {
		for _, r := range ch.Results {
			t.Logf("%s: %s %s", ch.Name, r.Status, r.Message)
		}
	}
	if n := env.OpenResources(); n != 0 {
		t.Errorf("%d resources left open", n)
	}
	return rep.Summary.Passed, rep.Summary.Failed
}

func gid(s string) [16]byte { return netip.MustParseAddr(s).As16() }

// roceHost is the CI guest's pair of Soft-RoCE devices on the kernel
// model: rxe0 and rxe1, link layer Ethernet, LID 0, GID index 1 the
// IPv4-mapped GID of 10.0.0.N and index 2 fd00::N.
func roceHost() *umadtest.Host {
	h, _ := rocetest.ModelHost()
	return h
}

// TestUMADGRHPlan runs scripts/umad_grh.lua, a request with a GRH to an
// agent on another port and its answer, on the simulator (InfiniBand:
// global routing by LID and GID) and unchanged on the kernel backend over
// the kernel model's RoCE ports (rxe0 to rxe1 at fd00::2) and IB ports.
func TestUMADGRHPlan(t *testing.T) {
	t.Run("sim", func(t *testing.T) { simPlan(t, "umad_grh.lua") })
	t.Run("kernel-roce", func(t *testing.T) {
		h := roceHost()
		f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open, CMPath: "/nonexistent"})
		defer f.Close()
		expectPlan(t, f, "umad_grh.lua", map[string]string{"from": "rxe0", "to": "rxe1"}, 2, 0)
	})
	t.Run("kernel-roce-ipv4-mapped", func(t *testing.T) {
		// The kernel matches no answer from an IPv4-mapped GID to its
		// request: the request times out, and the check says so.
		h := roceHost()
		f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open, CMPath: "/nonexistent"})
		defer f.Close()
		expectPlan(t, f, "umad_grh.lua", map[string]string{"gid": "::ffff:10.0.0.2", "timeout": "50"}, 1, 1)
	})
	t.Run("kernel-ib", func(t *testing.T) {
		h := umadtest.NewHost(umadtest.New(nil))
		h.AddCA("mlx5_0", 1, 0x0002c90300001000, umadtest.HostPort{Num: 1, LID: 1, State: 4, PhysState: 5})
		h.AddCA("mlx5_1", 1, 0x0002c90300002000, umadtest.HostPort{Num: 1, LID: 2, State: 4, PhysState: 5})
		f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open, CMPath: "/nonexistent"})
		defer f.Close()
		expectPlan(t, f, "umad_grh.lua", nil, 2, 0)
	})
}

// TestEngineOnRoCE: on a RoCE port the engine's own GMPs carry a GRH:
// PerfMgt to gid:fd00::2 reaches rxe1, where no PMA answers and the
// kernel's MAD layer does (status 0x000C); a LID or directed-route target
// is refused naming the reason, before anything is sent.
func TestEngineOnRoCE(t *testing.T) {
	h := roceHost()
	f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open, CMPath: "/nonexistent"})
	t.Cleanup(func() { f.Close() }) // after the session's
	ctx := t.Context()
	s := simtest.PortSession(t, f, "rxe0", 1, nil)
	_, err := s.Perf(ctx, engine.GID(gid("fd00::2")), mad.MethodGet, perf.AttrPortCounters, 1, nil)
	var st *engine.StatusError
	if !errors.As(err, &st) || st.Status != mad.StatusMethodAttrUnsup {
		t.Errorf("PortCounters to gid:fd00::2: %v, want status 0x000C from rxe1's MAD layer", err)
	}
	for _, tg := range []engine.Target{engine.LID(2), engine.DR()} {
		if _, err := s.NodeInfo(ctx, tg); !errors.Is(err, engine.ErrBadTarget) || !strings.Contains(err.Error(), "is RoCE") {
			t.Errorf("NodeInfo(%s) on RoCE: %v", tg, err)
		}
	}
	if _, err := s.Perf(ctx, engine.LID(2), mad.MethodGet, perf.AttrPortCounters, 1, nil); !errors.Is(err, engine.ErrBadTarget) {
		t.Errorf("PortCounters to lid:2 on RoCE: %v", err)
	}
}

// TestRdmacmIPPlan runs scripts/rdmacm_ip.lua, RDMA CM connections by
// IPv4 and IPv6 address with migrate_id and disconnect, on the simulator
// (net.ipoib's IPoIB addresses) and unchanged on the kernel backend over
// the kernel's rdma_cm model with the same addresses on its netdevs.
func TestRdmacmIPPlan(t *testing.T) {
	t.Run("sim", func(t *testing.T) { simPlan(t, "rdmacm_ip.lua") })
	t.Run("kernel-model", func(t *testing.T) {
		h := umadtest.NewHost(umadtest.New(nil))
		for i := range 2 {
			h.AddCA(fmt.Sprintf("mlx5_%d", i), 1, 0x0002c90300001000+uint64(i)<<8,
				umadtest.HostPort{Num: 1, LID: uint16(i + 1), State: 4, PhysState: 5})
		}
		k := rdmacmtest.New()
		f := kernel.New(&kernel.Options{FS: h.FS, Open: h.Open, OpenCM: func() (rdmacm.Dev, error) { return k.Open(), nil }})
		defer f.Close()
		ports, err := f.Ports(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range ports {
			g := mad.NewGID(p.GIDPrefix, p.PortGUID)
			k.AddGID(g)
			k.AddIP(netip.MustParseAddr(fmt.Sprintf("10.0.0.%d", i+1)), g)
			k.AddIP(netip.MustParseAddr(fmt.Sprintf("fd00::%d", i+1)), g)
		}
		expectPlan(t, f, "rdmacm_ip.lua", nil, 2, 0)
	})
}

// TestRoCEScripts runs scripts/rdmacm_ip.lua on the host's kernel,
// between the two Soft-RoCE ports the real-kernel stage names
// ($IBSCRIPT_TEST_ROCE; skipped without): RDMA CM connections by the
// ports' IPv4 and IPv6 addresses (read from their RoCE GIDs) with
// migrate_id and disconnect. The script is the repository's, embedded
// (package scripts), unchanged from the simulator run above. (The stage
// runs scripts/umad_grh.lua through the ibscript command.)
func TestRoCEScripts(t *testing.T) {
	pair := rocetest.Pair(t)
	f := kernel.New(nil)
	defer f.Close()
	ports, err := f.Ports(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	ips := map[string][2]netip.Addr{} // CA: IPv4, IPv6
	for _, p := range ports {
		var a [2]netip.Addr
		for _, g := range p.GIDs {
			ip := netip.AddrFrom16(g)
			switch {
			case g == [16]byte{} || ip.IsLinkLocalUnicast():
			case ip.Is4In6():
				a[0] = ip.Unmap()
			default:
				a[1] = ip
			}
		}
		ips[p.CAName] = a
	}
	server, client := ips[pair[0].CA], ips[pair[1].CA]
	if !server[0].IsValid() || !server[1].IsValid() || !client[0].IsValid() || !client[1].IsValid() {
		t.Fatalf("the pair's IPv4 and IPv6 addresses, from their GIDs: %v %v", server, client)
	}
	run := func(script string, args map[string]string) (int, int) {
		src, err := fs.ReadFile(scripts.FS, script)
		if err != nil {
			t.Fatal(err)
		}
		return runScriptSource(t, f, script, string(src), args)
	}
	t.Run("engine_gid", func(t *testing.T) {
		// The engine's own GMP to a gid: target from the first port: it
		// goes with a GRH, rxe1 has no PMA, and its MAD layer answers
		// status 0x000C, as on the model (TestEngineOnRoCE).
		s := simtest.PortSession(t, f, pair[0].CA, pair[0].Port, nil)
		_, err = s.Perf(t.Context(), engine.GID(pair[1].GID), mad.MethodGet, perf.AttrPortCounters, 1, nil)
		var st *engine.StatusError
		if !errors.As(err, &st) || st.Status != mad.StatusMethodAttrUnsup {
			t.Errorf("PortCounters to gid:%v: %v, want status 0x000C from the peer's MAD layer", netip.AddrFrom16(pair[1].GID), err)
		}
		if _, err := s.NodeInfo(t.Context(), engine.DR()); !errors.Is(err, engine.ErrBadTarget) {
			t.Errorf("NodeInfo(dr:0) on RoCE: %v, want the RoCE refusal", err)
		}
	})
	t.Run("rdmacm_ip", func(t *testing.T) {
		args := map[string]string{"server4": server[0].String(), "client4": client[0].String(),
			"server6": server[1].String(), "client6": client[1].String()}
		want := 2
		// Where the kernel refuses IPv6 RDMA CM connections to librdmacm
		// itself (the stage's two ports on one host), IPv4 alone, and the
		// IPv6 half skips naming what librdmacm met.
		if why := rocetest.LibrdmacmConnects(t, client[1], server[1], 7458); why != "" {
			args["families"], want = "4", 1
			t.Run("IPv6", func(t *testing.T) { t.Skip(why) })
		}
		if p, fl := run("rdmacm_ip.lua", args); p != want || fl != 0 {
			t.Errorf("%d passed, %d failed; want %d passed", p, fl, want)
		}
	})
}
