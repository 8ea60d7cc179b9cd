package engine_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
	"github.com/ibscript/ibscript/topo"
)

// TestDiscoverFaults2000 is issue 9's acceptance test for fault
// injection: the 2000-node fat tree with 5% loss (each way), 1%
// duplication and 2% reordering is discovered completely, with the
// retransmissions reported; with a dead leaf switch the sweep finishes
// and reports the switch as unreachable, and finds everything but it and
// the hosts behind it.
func TestDiscoverFaults2000(t *testing.T) {
	if testing.Short() {
		t.Skip("2000-node sweeps")
	}
	t.Run("lossy", func(t *testing.T) {
		s, f := simSession(t, fattree2000, "", 0)
		ref := f.Topology()
		if err := f.SetFaults(sim.Faults{Seed: 1, Loss: 0.05, Duplicate: 0.01, Reorder: 0.02}); err != nil {
			t.Fatal(err)
		}
		disc, err := s.Discover(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		st := f.FaultStats()
		t.Logf("%d nodes, %d SMPs, %d retransmits, %d errors in %v; faults %+v",
			len(disc.Fabric.Nodes), disc.MADs, disc.Retransmits, len(disc.Errors), disc.Elapsed, st)
		expectWhole(t, disc, ref)
		if disc.Retransmits == 0 || st.LostRequests == 0 || st.Duplicated == 0 || st.Reordered == 0 {
			t.Errorf("retransmits %d, faults %+v: want some of each", disc.Retransmits, st)
		}
	})
	t.Run("dead-switch", func(t *testing.T) {
		s, f := simSession(t, fattree2000, "", 0)
		ref := f.Topology()
		if err := f.SetFaults(sim.Faults{Seed: 1, DeadNodes: []string{"leaf005"}}); err != nil {
			t.Fatal(err)
		}
		disc, err := s.Discover(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d nodes, %d SMPs, %d errors in %v", len(disc.Fabric.Nodes), disc.MADs, len(disc.Errors), disc.Elapsed)
		if len(disc.Errors) == 0 {
			t.Fatal("no errors for the dead switch")
		}
		for _, e := range disc.Errors {
			t.Logf("unreachable: %v", e)
		}
		found := map[uint64]bool{}
		for _, n := range disc.Fabric.Nodes {
			found[n.GUID] = true
		}
		var missing []string
		for _, n := range ref.Nodes {
			if !found[n.GUID] {
				missing = append(missing, n.ID)
			}
		}
		want := behind(ref, "leaf005")
		slices.Sort(missing)
		if !slices.Equal(missing, want) {
			t.Errorf("missing %d nodes %v, want %d %v", len(missing), missing, len(want), want)
		}
	})
}

// behind returns the switch id and the CAs cabled only to it, sorted.
func behind(f *topo.Fabric, id string) []string {
	out := []string{id}
	for _, n := range f.Nodes {
		if n.Type != topo.CA {
			continue
		}
		only := true
		for _, p := range n.Ports {
			if p != nil && p.Remote != nil && p.Remote.Node.ID != id {
				only = false
			}
		}
		if only && strings.HasPrefix(n.ID, "h005-") {
			out = append(out, n.ID)
		}
	}
	slices.Sort(out)
	return out
}

// TestFaultsSeeded checks that the same seed replays the same faults,
// that corrupted answers end a sweep with errors rather than a hang or a
// panic, and that SetLink and SetLFT take effect.
func TestFaultsSeeded(t *testing.T) {
	const net = "../tests/topologies/fattree-50.net"
	// Sequential queries with a short timeout: every request, and every
	// retransmission, is the same from run to run, so the faults are too.
	run := func(fl sim.Faults) (sim.FaultStats, string) {
		s, f := simSession(t, net, "", 0)
		if err := f.SetFaults(fl); err != nil {
			t.Fatal(err)
		}
		var out []byte
		for p := uint8(1); p <= 20; p++ {
			_, err := s.NodeInfo(t.Context(), engine.DR(p), engine.Timeout(20*time.Millisecond), engine.Retries(6))
			out = append(out, '0'+byte(btoi(err != nil)))
		}
		return f.FaultStats(), string(out)
	}
	fl := sim.Faults{Seed: 7, Loss: 0.2, Duplicate: 0.05, Reorder: 0.05}
	a, oa := run(fl)
	b, ob := run(fl)
	if a != b || oa != ob {
		t.Errorf("seed 7 twice: %+v (%s) and %+v (%s)", a, oa, b, ob)
	}
	if a.LostRequests == 0 {
		t.Errorf("no faults injected: %+v", a)
	}
	fl.Seed = 8
	if c, _ := run(fl); c == a {
		t.Errorf("seeds 7 and 8 gave the same faults %+v", c)
	}
	fl.Corrupt = 0.3
	if st, _ := run(fl); st.Corrupted == 0 {
		t.Errorf("nothing corrupted: %+v", st)
	}

	s, f := simSession(t, net, "", 0)
	d0, err := s.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	host := ""
	for _, n := range f.Topology().Nodes {
		if n.Type == topo.CA && n.ID != d0.Fabric.Nodes[0].ID {
			host = n.ID
			break
		}
	}
	if err := f.SetLink(host, 1, false); err != nil {
		t.Fatal(err)
	}
	d1, err := s.Discover(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(d1.Fabric.Nodes) != len(d0.Fabric.Nodes)-1 {
		t.Errorf("link of %s down: %d nodes, want %d", host, len(d1.Fabric.Nodes), len(d0.Fabric.Nodes)-1)
	}
	if v, err := f.Counter(host, 1, "LinkDownedCounter"); err != nil || v != 1 {
		t.Errorf("LinkDownedCounter %d, %v; want 1", v, err)
	}
	if err := f.SetLink(host, 1, true); err != nil {
		t.Fatal(err)
	}
	if d2, err := s.Discover(t.Context(), nil); err != nil || len(d2.Fabric.Nodes) != len(d0.Fabric.Nodes) {
		t.Errorf("link back up: %v", err)
	}
	if err := f.SetLFT(host, 1, 1); err == nil {
		t.Error("SetLFT on a CA: no error")
	}
	if err := f.SetFaults(sim.Faults{Loss: 2}); err == nil {
		t.Error("loss 2: no error")
	}
	if err := f.SetFaults(sim.Faults{DeadNodes: []string{"nosuch"}}); err == nil {
		t.Error("dead node nosuch: no error")
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestMaxMADs: past Options.MaxMADs every request fails with
// ErrMADBudget, and a discovery that runs out of MADs half way fails as a
// whole with it: no partial fabric whose missing nodes look like faults.
func TestMaxMADs(t *testing.T) {
	s, f := simSessionOpts(t, "../tests/topologies/net.2sw2path4hca", "", 0, &engine.Options{MaxMADs: 5})
	for i := range 5 {
		if _, err := s.NodeInfo(t.Context(), engine.DR()); err != nil {
			t.Fatalf("MAD %d: %v", i+1, err)
		}
	}
	if _, err := s.NodeInfo(t.Context(), engine.DR()); !errors.Is(err, engine.ErrMADBudget) {
		t.Errorf("MAD 6: %v, want ErrMADBudget", err)
	}
	d, err := s.Discover(t.Context(), nil)
	if d != nil || !errors.Is(err, engine.ErrMADBudget) {
		t.Errorf("discovery past the budget: %v, %v; want no discovery and ErrMADBudget", d, err)
	}
	s2 := simtest.Session(t, f, &engine.Options{MaxMADs: 12}) // a few nodes' worth
	d, err = s2.Discover(t.Context(), nil)
	if d != nil || !errors.Is(err, engine.ErrMADBudget) || !strings.Contains(err.Error(), "12 MADs") || strings.Contains(err.Error(), "--") {
		t.Errorf("discovery running out half way: %v, %v; want no discovery and ErrMADBudget naming the budget of 12 MADs, and no command-line flag", d, err)
	}
}
