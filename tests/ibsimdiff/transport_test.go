package ibsimdiff

import (
	"context"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/ibsim"
)

// TestTransportConformance runs the fabric.Transport suite on an ibsim
// client of Hca1 against a peer client on Hca2, both issm (ibsim forwards
// QP1 requests only to issm clients), LID-routed through the OpenSM-set
// LFTs.
func TestTransportConformance(t *testing.T) {
	s := shared.Get(t, topo2sw, nil)
	fabrictest.TestTransportOpts(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		ctx := t.Context()
		tr, err := ibsim.Open(ctx, s.Sock, &ibsim.Options{Node: "Hca1", ISSM: true})
		if err != nil {
			t.Fatal(err)
		}
		ptr, err := ibsim.Open(ctx, s.Sock, &ibsim.Options{Node: "Hca2", ISSM: true})
		if err != nil {
			tr.Close()
			t.Fatal(err)
		}
		self := fabric.Addr{LID: ptr.Port().LID, QPN: 1, QKey: 0x80010000}
		to := fabric.Addr{LID: tr.Port().LID, QPN: 1, QKey: 0x80010000}
		peer, err := fabrictest.NewTransportPeer(context.Background(), ptr, self, to)
		if err != nil {
			tr.Close()
			t.Fatal(err)
		}
		t.Cleanup(func() { peer.Close() })
		return tr, peer
	}, &fabrictest.SuiteOptions{RealTime: true, Timeout: 50 * time.Millisecond})
}

// TestFabricErrnoContract holds the ibsim backend to fabrictest.TestFabric
// on a live ibsim: ENODEV for unknown CAs and ports, GET_PKEYS' table in
// PortAttr, EINVAL after Close; with and without nodes=.
func TestFabricErrnoContract(t *testing.T) {
	s := shared.Get(t, topo2sw, nil)
	t.Run("node", func(t *testing.T) {
		f := ibsim.NewFabric(s.Sock, &ibsim.Options{Node: "Hca1"})
		defer f.Close()
		fabrictest.TestFabric(t, f)
	})
	t.Run("nodes", func(t *testing.T) {
		f := ibsim.NewFabric(s.Sock, &ibsim.Options{Nodes: []string{"Hca1", "Hca2"}})
		defer f.Close()
		fabrictest.TestFabric(t, f)
	})
}
