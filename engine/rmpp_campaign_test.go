package engine_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ibscript/ibscript/fabric/rmppdriver"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/sim"
)

// campaignTables are the tables the RMPP campaign fetches: NodeRecord
// (2,000 records, 1,120 segments on fattree-2000) and PortInfoRecord
// (every switch port and CA port).
var campaignTables = []*sa.Attr{sa.NodeRecord(), sa.PortInfoRecord()}

// campaignRun fetches every campaign table through a session on
// fattree-2000 under faults, with the Session's default timeout and
// retries, inside a synctest bubble.
func campaignRun(t *testing.T, fl sim.Faults) ([][][]byte, sim.FaultStats, rmppdriver.Stats) {
	var out [][][]byte
	var st sim.FaultStats
	var rs rmppdriver.Stats
	synctest.Test(t, func(t *testing.T) {
		s, f := simSession(t, fattree2000, "h010-05", 1)
		if err := f.SetFaults(fl); err != nil {
			t.Fatal(err)
		}
		for _, a := range campaignTables {
			recs, err := s.SAGetTable(t.Context(), a, 0, nil)
			if err != nil {
				t.Fatalf("GetTable %s: %v (faults so far %+v, driver %+v)", a.Name(), err, f.FaultStats(), s.RMPPStats())
			}
			out = append(out, recs)
		}
		// A double-sided exchange: GetMulti(MultiPathRecord) of 12x12
		// host ports (a 3-segment request, a 45-segment answer).
		var gids []mad.GID
		for _, n := range f.Topology().Nodes {
			if n.Type == 1 && len(gids) < 12 {
				gids = append(gids, mad.NewGID(s.Port().GIDPrefix, n.Ports[1].GUID))
			}
		}
		paths, err := s.MultiPathRecords(t.Context(), gids, gids)
		if err != nil {
			t.Fatalf("GetMulti MultiPathRecord: %v (faults so far %+v, driver %+v)", err, f.FaultStats(), s.RMPPStats())
		}
		var recs [][]byte
		for i := range paths {
			b, _ := paths[i].MarshalBinary()
			recs = append(recs, b)
		}
		out = append(out, recs)
		st, rs = f.FaultStats(), s.RMPPStats()
	})
	return out, st, rs
}

// TestRMPPCampaign: SA GetTable of large tables over the RMPP driver and
// the simulator's SA survives loss, duplication and reordering of every
// MAD (requests, ACKs, segments) at 5% and 10%, for 20 seeds each, with
// exactly the records of a clean run. Before the driver kept transfers
// alive across lost ACKs and passed ABORT to receivers, and before the
// SA stopped restarting a transfer for a duplicate request, 5% loss
// failed several seeds with "timeout after 4 tries".
func TestRMPPCampaign(t *testing.T) {
	clean, _, _ := campaignRun(t, sim.Faults{})
	names := []string{"NodeRecord", "PortInfoRecord", "MultiPathRecord answer"}
	for i, name := range names {
		if len(clean[i]) == 0 {
			t.Fatalf("clean run: no %s", name)
		}
	}
	var mu sync.Mutex
	var total sim.FaultStats
	t.Cleanup(func() { t.Logf("faults injected over the campaign: %+v", total) })
	for _, kind := range []string{"loss", "duplicate", "reorder"} {
		for _, rate := range []float64{0.05, 0.10} {
			t.Run(fmt.Sprintf("%s %.0f%%", kind, rate*100), func(t *testing.T) {
				t.Parallel()
				for seed := uint64(1); seed <= 20; seed++ {
					fl := sim.Faults{Seed: seed}
					switch kind {
					case "loss":
						fl.Loss = rate
					case "duplicate":
						fl.Duplicate = rate
					case "reorder":
						fl.Reorder = rate
					}
					got, st, rs := campaignRun(t, fl)
					if t.Failed() {
						t.Fatalf("seed %d failed", seed)
					}
					if st.LostRequests+st.LostResponses+st.Duplicated+st.Reordered == 0 {
						t.Errorf("seed %d: no fault injected (%+v)", seed, st)
					}
					if rs.Refused+rs.Stopped+rs.Aborted != 0 {
						t.Errorf("seed %d: driver refused or ended transfers: %+v", seed, rs)
					}
					for i, name := range names {
						if len(got[i]) != len(clean[i]) {
							t.Fatalf("seed %d: %d %ss, clean run %d", seed, len(got[i]), name, len(clean[i]))
						}
						for j := range got[i] {
							if !bytes.Equal(got[i][j], clean[i][j]) {
								t.Fatalf("seed %d: %s %d differs from the clean run's", seed, name, j)
							}
						}
					}
					mu.Lock()
					total.LostRequests += st.LostRequests
					total.LostResponses += st.LostResponses
					total.Duplicated += st.Duplicated
					total.Reordered += st.Reordered
					mu.Unlock()
				}
			})
		}
	}
}
