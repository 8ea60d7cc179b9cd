package ibsimdiff

import (
	"context"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/internal/luatest"
	"github.com/ibscript/ibscript/rdmacm"
	"github.com/ibscript/ibscript/rdmacm/cmtest"
	"github.com/ibscript/ibscript/sim/simtest"
)

// TestRdmacmOnIbsim runs tests/lua/rdmacm_test.lua on ibsim (with OpenSM)
// on the same topology: each endpoint attaches to its CA node with issm,
// the engine speaks the IB CM between them through ibsim, routes come from
// OpenSM's SA.
func TestRdmacmOnIbsim(t *testing.T) {
	const file = "../lua/rdmacm_test.lua"
	topology := luaTopology(t, file)
	s := shared.Get(t, "../topologies/"+topology, nil)
	src, names, err := luatest.ReadSuite(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			if err := runLuaOnIbsim(t, s.Sock, src, name, hostsISSM); err != nil {
				t.Error(err)
			}
		})
	}
}

// hostsISSM attaches RDMA CM endpoints to the four hosts with issm, so
// ibsim forwards the CM's GMPs to them; the session's own port is plain.
var hostsISSM = &ibsim.Options{Nodes: []string{"Hca1", "Hca2", "Hca3", "Hca4"}, ISSM: true}

// TestRdmacmPlanOnIbsim runs scripts/rdmacm_migrate.lua on ibsim: every
// check passes, as on the embedded simulator.
func TestRdmacmPlanOnIbsim(t *testing.T) {
	s := shared.Get(t, "../topologies/net.2sw2path4hca", nil)
	src, err := os.ReadFile("../../scripts/rdmacm_migrate.lua")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	f := ibsim.NewFabric(s.Sock, hostsISSM)
	defer f.Close()
	sess := simtest.Session(t, f, nil)
	var out strings.Builder
	L, env, err := bindings.NewState(ctx, &bindings.Options{Session: sess, Fabric: f, Stdout: &out,
		PlanName: "rdmacm_migrate", PlanArgs: map[string]string{"connections": "12"}})
	if err != nil {
		t.Fatal(err)
	}
	defer L.Close()
	defer env.Close()
	luatest.ExpectPlan(t, env, bindings.DoString(L, string(src)), 7)
}

// TestConformanceIbsim runs the CM conformance suite on the user-space IB
// CM over ibsim: the four hosts attached with issm (so ibsim forwards the
// CM's MADs to them), routes from OpenSM's SA. One CM at a time: a node
// takes one issm client.
func TestConformanceIbsim(t *testing.T) {
	s := shared.Get(t, "../topologies/net.2sw2path4hca", nil)
	open := func(t *testing.T, o *rdmacm.Options) (*ibsim.Fabric, *engine.Session, *rdmacm.CM) {
		f := ibsim.NewFabric(s.Sock, hostsISSM)
		t.Cleanup(func() { f.Close() })
		sess := simtest.Session(t, f, nil)
		c, err := rdmacm.New(f, sess, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return f, sess, c
	}
	f, sess, c := open(t, nil)
	ports, err := f.Ports(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var lids [4]uint16
	for _, p := range ports {
		for i, name := range hostsISSM.Nodes {
			if p.CAName == name {
				lids[i] = p.LID
			}
		}
	}
	if lids[0] == 0 || lids[1] == 0 || lids[2] == 0 || lids[3] == 0 {
		t.Fatalf("the hosts' LIDs: %v (ports %+v)", lids, ports)
	}
	c.Close()
	sess.Close()
	f.Close()
	// ibsim's topology has no IPoIB addresses: the CM is given them
	// (rdmacm.Options.IPoIB), 10.0.0.N and fd00::N for the Nth host.
	var v4, v6 []netip.Addr
	var ipoib []fabric.IPoIBAddr
	for i, name := range hostsISSM.Nodes[:4] {
		a4, a6 := netip.AddrFrom4([4]byte{10, 0, 0, byte(i + 1)}), netip.AddrFrom16([16]byte{0: 0xfd, 15: byte(i + 1)})
		v4, v6 = append(v4, a4), append(v6, a6)
		for _, p := range ports {
			if p.CAName == name {
				ipoib = append(ipoib, fabric.IPoIBAddr{IP: a4, CAName: name, PortNum: p.PortNum},
					fabric.IPoIBAddr{IP: a6, CAName: name, PortNum: p.PortNum})
			}
		}
	}
	cmtest.Run(t, cmtest.Hosts{LIDs: lids, IPv4: v4, IPv6: v6, New: func(t *testing.T, o *rdmacm.Options) *rdmacm.CM {
		if o == nil {
			o = &rdmacm.Options{}
		}
		o.IPoIB = ipoib
		_, _, c := open(t, o)
		return c
	}})
}
