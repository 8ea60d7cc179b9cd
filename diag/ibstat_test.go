package diag_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/ibscript/ibscript/diag"
	"github.com/ibscript/ibscript/fabric"
)

// TestIBStatKernelCAs: two kernel devices listed out of order (ibstat
// sorts them by name), a RoCE port, a 1x SDR rate (2, printed 2.5), -l,
// -p, a port alone, and the two ibpanics.
func TestIBStatKernelCAs(t *testing.T) {
	ca := func(name string, guid uint64) fabric.PortAttr {
		return fabric.PortAttr{CAName: name, NodeType: 1, NodeGUID: guid, CAType: "MT4123", FWVer: "20.31.1014",
			HWVer: "0x0", SysGUID: guid, CANumPorts: 1, State: 4, PhysState: 5, LID: 7, SMLID: 1, CapMask: 0x2659e848}
	}
	b := ca("mlx5_1", 0xb8cef60300123456)
	b.PortNum, b.PortGUID, b.Rate, b.LinkLayer, b.State, b.PhysState, b.LID, b.SMLID = 1, 0xbacef6fffe123456, 25, "Ethernet", 1, 3, 0, 0
	a := ca("mlx5_0", 0x0002c90300001234)
	a.PortNum, a.PortGUID, a.Rate = 1, 0x0002c90300001235, 2
	ports := []fabric.PortAttr{b, a}
	text := func(o diag.IBStatOptions) string {
		r, err := diag.IBStatOf(ports, o)
		if err != nil {
			t.Fatal(err)
		}
		var s strings.Builder
		if err := diag.WriteIBStat(&s, r); err != nil {
			t.Fatal(err)
		}
		return s.String()
	}
	want := `CA 'mlx5_0'
	CA type: MT4123
	Number of ports: 1
	Firmware version: 20.31.1014
	Hardware version: 0x0
	Node GUID: 0x0002c90300001234
	System image GUID: 0x0002c90300001234
	Port 1:
		State: Active
		Physical state: LinkUp
		Rate: 2.5
		Base lid: 7
		LMC: 0
		SM lid: 1
		Capability mask: 0x2659e848
		Port GUID: 0x0002c90300001235
		Link layer: InfiniBand
CA 'mlx5_1'
	CA type: MT4123
	Number of ports: 1
	Firmware version: 20.31.1014
	Hardware version: 0x0
	Node GUID: 0xb8cef60300123456
	System image GUID: 0xb8cef60300123456
	Port 1:
		State: Down
		Physical state: Disabled
		Rate: 25
		Base lid: 0
		LMC: 0
		SM lid: 0
		Capability mask: 0x2659e848
		Port GUID: 0xbacef6fffe123456
		Link layer: Ethernet
`
	if d := cmp.Diff(want, text(diag.IBStatOptions{Port: -1})); d != "" {
		t.Errorf("ibstat (-want +got):\n%s", d)
	}
	for _, c := range []struct {
		o    diag.IBStatOptions
		want string
	}{
		{diag.IBStatOptions{Port: -1, List: true}, "mlx5_0\nmlx5_1\n"},
		{diag.IBStatOptions{Port: -1, PortList: true}, "0x0002c90300001235\n0xbacef6fffe123456\n"},
		{diag.IBStatOptions{CA: "mlx5_1", Port: -1, PortList: true}, "0xbacef6fffe123456\n"},
		{diag.IBStatOptions{CA: "mlx5_0", Port: 1}, "CA: 'mlx5_0'\nPort 1:\nState: Active\nPhysical state: LinkUp\nRate: 2.5\nBase lid: 7\nLMC: 0\nSM lid: 1\nCapability mask: 0x2659e848\nPort GUID: 0x0002c90300001235\nLink layer: InfiniBand\n"},
	} {
		if got := text(c.o); got != c.want {
			t.Errorf("%+v: %q, want %q", c.o, got, c.want)
		}
	}
	var noCA diag.ErrNoCA
	if _, err := diag.IBStatOf(ports, diag.IBStatOptions{CA: "mlx4_0", Port: -1}); !errors.As(err, &noCA) || err.Error() != "'mlx4_0' IB device can't be found" {
		t.Errorf("unknown CA: %v", err)
	}
	var noPort *diag.ErrNoPort
	_, err := diag.IBStatOf(ports, diag.IBStatOptions{CA: "mlx5_0", Port: 2})
	if !errors.As(err, &noPort) || noPort.Warning() != "ca_stat: CA: 'mlx5_0' has no port number 2 - max (1)" || err.Error() != "stat of IB device 'mlx5_0' failed" {
		t.Errorf("port 2: %v", err)
	}
}

// TestIBStatFDR10: a port whose kernel rate text names FDR10 (Soft-RoCE
// on a 10 Gb/s veth: "10 Gb/sec (1X FDR10)") prints as C ibstat prints
// it there.
func TestIBStatFDR10(t *testing.T) {
	p := fabric.PortAttr{CAName: "rxe0", PortNum: 1, NodeType: 1, State: 4, PhysState: 5, Rate: 10, FDR10: true, LinkLayer: "Ethernet", CANumPorts: 1}
	r, err := diag.IBStatOf([]fabric.PortAttr{p}, diag.IBStatOptions{CA: "rxe0", Port: 1})
	if err != nil {
		t.Fatal(err)
	}
	var s strings.Builder
	if err := diag.WriteIBStat(&s, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(s.String(), "\nRate: 10 (FDR10)\n") {
		t.Errorf("ibstat rxe0 1:\n%s", s.String())
	}
}

// TestIBStatEffectiveSpeed: current rdma-core's ibstat (#1769, commit
// 9a645e432, infiniband-diags/ibstat.c port_dump) prints, after the Rate
// line, "%sEffective speed: %g\n" of ibv_query_port_speed's value (units
// of 100 Mb/s, libibverbs/man/ibv_query_port_speed.3.md) divided by 10.0,
// and nothing where the verb fails; the goldens are that printf's.
func TestIBStatEffectiveSpeed(t *testing.T) {
	port := func(num int) fabric.PortAttr {
		return fabric.PortAttr{CAName: "mlx5_0", NodeType: 1, NodeGUID: 0x10, CANumPorts: 4, PortNum: num, State: 4, PhysState: 5, Rate: 400, PortGUID: 0x11}
	}
	speeds := map[int]uint64{1: 4000, 2: 2125, 3: 12345678} // port 4: the verb fails
	text := func(o diag.IBStatOptions) string {
		r, err := diag.IBStatOf([]fabric.PortAttr{port(1), port(2), port(3), port(4)}, o)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.CAs[0].Ports {
			if v, ok := speeds[r.CAs[0].Ports[i].Port]; ok {
				r.CAs[0].Ports[i].EffectiveSpeed = &v
			}
		}
		var s strings.Builder
		if err := diag.WriteIBStat(&s, r); err != nil {
			t.Fatal(err)
		}
		return s.String()
	}
	var got []string
	for _, l := range strings.Split(text(diag.IBStatOptions{Port: -1}), "\n") {
		if strings.Contains(l, "Rate") || strings.Contains(l, "Effective") {
			got = append(got, l)
		}
	}
	want := []string{"\t\tRate: 400", "\t\tEffective speed: 400", "\t\tRate: 400", "\t\tEffective speed: 212.5",
		"\t\tRate: 400", "\t\tEffective speed: 1.23457e+06", "\t\tRate: 400"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ports (-want +got):\n%s", diff)
	}
	if got, want := text(diag.IBStatOptions{Port: 2}), "CA: 'mlx5_0'\nPort 2:\nState: Active\nPhysical state: LinkUp\nRate: 400\nEffective speed: 212.5\nBase lid: 0\n"; !strings.HasPrefix(got, want) {
		t.Errorf("port 2 alone:\n%s\nwant it to start:\n%s", got, want)
	}
}

// TestIBStatEffectiveSpeedSim: on the embedded simulator (sim.Fabric's
// PortSpeed: a simulated port's effective bandwidth is its link's rate)
// the line is there with --diags-version current only; with 44's
// behaviour ibstat prints as infiniband-diags 44 does.
func TestIBStatEffectiveSpeedSim(t *testing.T) {
	env, f := simEnv(t)
	env.Ports, env.PortSpeed = f.Ports, f.PortSpeed
	old, err := diag.IBStatRun(t.Context(), env, diag.IBStatOptions{Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	cur := *env
	cur.Version = diag.VersionCurrent
	r, err := diag.IBStatRun(t.Context(), &cur, diag.IBStatOptions{Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	p := r.CAs[0].Ports[0]
	if p.EffectiveSpeed == nil || *p.EffectiveSpeed != uint64(p.Rate)*10 || old.CAs[0].Ports[0].EffectiveSpeed != nil {
		t.Errorf("effective speed %v (rate %d), 44's %v; want rate*10, and none for 44", p.EffectiveSpeed, p.Rate, old.CAs[0].Ports[0].EffectiveSpeed)
	}
	var a, b strings.Builder
	diag.WriteIBStat(&a, old)
	diag.WriteIBStat(&b, r)
	if want := strings.Replace(a.String(), "\t\tRate: 40\n", "\t\tRate: 40\n\t\tEffective speed: 40\n", 1); b.String() != want {
		t.Errorf("current:\n%s\nwant 44's with the line:\n%s", b.String(), want)
	}
}
