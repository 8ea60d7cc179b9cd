package engine_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

// TestDiscoverUnderCorruptionIsTrue is issue 31's finding: with 5% of the
// answers corrupted, discovery of fattree-500 completed with 0 errors but
// wrong node descriptions and a wrong port LID (only NodeInfo was read
// twice). Every answer is now read until two agree: whatever discovery
// returns is the fabric as it is, and what it could not verify is an
// error that says so (engine.Unreadable), never a wrong value.
func TestDiscoverUnderCorruptionIsTrue(t *testing.T) {
	for _, fl := range []sim.Faults{{Seed: 1, Corrupt: 0.05}, {Seed: 2, Corrupt: 0.05}, {Seed: 3, Corrupt: 0.05}, {Seed: 4, Corrupt: 0.2}} {
		t.Run(fmt.Sprintf("seed%d,corrupt%v", fl.Seed, fl.Corrupt), func(t *testing.T) {
			t.Parallel()
			d, ref := faultyDiscover(t, "../tests/topologies/fattree-500.net", fl)
			for _, e := range d.Errors {
				if !engine.Unreadable(e.Err) {
					t.Errorf("error that is no read failure: %v", e)
				}
			}
			if len(d.Errors) == 0 && len(d.Fabric.Nodes) != len(ref.Nodes) {
				t.Errorf("%d nodes, want %d", len(d.Fabric.Nodes), len(ref.Nodes))
			}
			if bad := untrue(d.Fabric, ref); len(bad) > 0 {
				t.Errorf("%d wrong values, first %s", len(bad), bad[0])
			}
		})
	}
}

// untrue lists what got says that ref does not: node identity, type,
// description, ports' LIDs, states and widths, and links.
func untrue(got, ref *topo.Fabric) []string {
	byGUID := map[uint64]*topo.Node{}
	for _, n := range ref.Nodes {
		byGUID[n.GUID] = n
	}
	var bad []string
	for _, n := range got.Nodes {
		r := byGUID[n.GUID]
		if r == nil {
			bad = append(bad, fmt.Sprintf("node GUID 0x%016x is not in the fabric", n.GUID))
			continue
		}
		if n.Desc != r.Desc || n.Type != r.Type || n.NumPorts != r.NumPorts || n.SysGUID != r.SysGUID {
			bad = append(bad, fmt.Sprintf("node %q: %q %s %d ports, want %q %s %d", r.Desc, n.Desc, n.Type, n.NumPorts, r.Desc, r.Type, r.NumPorts))
		}
		for i, p := range n.Ports {
			if p == nil || i >= len(r.Ports) || r.Ports[i] == nil {
				continue
			}
			rp := r.Ports[i]
			endport := n.Type != topo.Switch || i == 0
			if endport && (p.LID != rp.LID || p.GUID != rp.GUID) {
				bad = append(bad, fmt.Sprintf("%q port %d: LID %d GUID 0x%x, want %d 0x%x", r.Desc, i, p.LID, p.GUID, rp.LID, rp.GUID))
			}
			if i > 0 && (p.State != rp.State || p.WidthActive != rp.WidthActive || p.SpeedActive != rp.SpeedActive) {
				bad = append(bad, fmt.Sprintf("%q port %d: state %d width %d speed %d, want %d %d %d", r.Desc, i, p.State, p.WidthActive, p.SpeedActive, rp.State, rp.WidthActive, rp.SpeedActive))
			}
			if p.Remote != nil && (rp.Remote == nil || p.Remote.Node.GUID != rp.Remote.Node.GUID || p.Remote.Num != rp.Remote.Num) {
				bad = append(bad, fmt.Sprintf("%q port %d: linked to %q port %d, wrongly", r.Desc, i, p.Remote.Node.Desc, p.Remote.Num))
			}
		}
	}
	return bad
}

// TestReadsVerifiedUnderCorruption: where answers may be damaged, the
// Session's Gets (SMPs and PerfMgt) return only answers they read twice
// alike (counters: three in a row not going backwards), so no damaged
// value ever reaches the caller; a Get that could not be verified is an
// *UnverifiedError (engine.Unreadable). Where answers arrive intact, one
// request per Get, as before.
func TestReadsVerifiedUnderCorruption(t *testing.T) {
	s, f := simSession(t, "../tests/topologies/net.2sw2path4hca", "", 0)
	if err := f.SetCounter("Switch1", 2, "SymbolErrorCounter", 7); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	// The truth, read on an intact fabric, and the MADs it takes.
	if err := f.SetFaults(sim.Faults{Seed: 1, Loss: 1e-300}); err != nil { // injecting, nothing damaged
		t.Fatal(err)
	}
	nd, err := s.SMP(ctx, engine.LID(3), mad.MethodGet, smp.AttrNodeDescription, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	pi, err := s.SMP(ctx, engine.LID(3), mad.MethodGet, smp.AttrPortInfo, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	lft, err := s.SMP(ctx, engine.LID(1), mad.MethodGet, smp.AttrLinearForwardingTable, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st := f.FaultStats(); st.Requests != 3 {
		t.Errorf("intact: %d requests for 3 Gets, want 3", st.Requests)
	}
	pcl := perf.LayoutByID(perf.AttrPortCounters)
	sym, _ := pcl.Field("SymbolErrorCounter")

	if err := f.SetFaults(sim.Faults{Seed: 7, Corrupt: 0.2}); err != nil {
		t.Fatal(err)
	}
	var unverified, ok int
	for range 200 {
		for _, c := range []struct {
			attr uint16
			lid  uint16
			want []byte
		}{{smp.AttrNodeDescription, 3, nd}, {smp.AttrPortInfo, 3, pi}, {smp.AttrLinearForwardingTable, 1, lft}} {
			got, err := s.SMP(ctx, engine.LID(c.lid), mad.MethodGet, c.attr, 0, nil, engine.Timeout(20*time.Millisecond))
			switch {
			case errors.Is(err, engine.ErrUnverified):
				unverified++
			case err != nil && !engine.Unreadable(err):
				t.Fatalf("attribute 0x%x: %v", c.attr, err)
			case err == nil && string(got) != string(c.want):
				t.Fatalf("attribute 0x%x: a damaged answer returned:\n%x\nwant\n%x", c.attr, got, c.want)
			case err == nil:
				ok++
			}
		}
		pc, err := s.Perf(ctx, engine.LID(1), mad.MethodGet, perf.AttrPortCounters, 2, nil, engine.Timeout(20*time.Millisecond))
		switch {
		case err != nil && !engine.Unreadable(err):
			t.Fatalf("PortCounters: %v", err)
		case err == nil && sym.Get(pc) != 7:
			t.Fatalf("PortCounters: SymbolErrorCounter %d, want 7 (a damaged answer returned)", sym.Get(pc))
		}
	}
	st := f.FaultStats()
	if st.Corrupted == 0 || ok < 500 {
		t.Errorf("%d answers corrupted, %d of 600 reads verified", st.Corrupted, ok)
	}
	t.Logf("%d requests, %d corrupted, %d verified, %d unverified", st.Requests, st.Corrupted, ok, unverified)
}

// TestSweepSecondPass: a sweep asks again, once the pass is over, for the
// queries that got no answer after every try; with Passes(1) it does not
// (the C tools' one pass), and fails more of them.
func TestSweepSecondPass(t *testing.T) {
	errs := func(opts ...engine.CallOption) (int, int) {
		s, f := simSessionOpts(t, "../tests/topologies/net.2sw2path4hca", "", 0, &engine.Options{Timeout: 5 * time.Millisecond, Retries: engine.NoRetries})
		if err := f.SetFaults(sim.Faults{Seed: 3, Loss: 0.3}); err != nil {
			t.Fatal(err)
		}
		var reqs []engine.SweepReq
		for range 20 {
			for port := range 9 {
				reqs = append(reqs, engine.SweepReq{Target: engine.LID(1), Method: mad.MethodGet, AttrID: smp.AttrPortInfo, AttrMod: uint32(port)})
			}
		}
		n, unread := 0, 0
		for _, r := range s.Sweep(t.Context(), reqs, nil, opts...) {
			switch {
			case r.Err == nil:
			case engine.Unreadable(r.Err):
				unread++
			default:
				t.Fatalf("%v", r.Err)
			}
			n++
		}
		return n, unread
	}
	n1, one := errs(engine.Passes(1))
	n2, two := errs()
	n4, four := errs(engine.Passes(4))
	if n1 != 180 || n2 != 180 || n4 != 180 {
		t.Fatalf("results %d %d %d, want 180", n1, n2, n4)
	}
	if one == 0 || two >= one || four > two {
		t.Errorf("timed out: %d in one pass, %d in two, %d in four: want fewer with more passes", one, two, four)
	}
	t.Logf("timed out: %d in one pass, %d in two, %d in four", one, two, four)
}
