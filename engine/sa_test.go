package engine_test

import (
	"errors"
	"github.com/ibscript/ibscript/sim"
	"runtime"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
)

func TestSANodeRecordsFatTree(t *testing.T) {
	s, f := simSession(t, fattree2000, "", 0)
	recs, err := s.NodeRecords(t.Context(), engine.Timeout(2*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	tp := f.Topology()
	if len(recs) != len(tp.Nodes) {
		t.Fatalf("%d NodeRecords for %d nodes", len(recs), len(tp.Nodes))
	}
	seen := map[uint64]bool{}
	for _, r := range recs {
		if r.LID == 0 || seen[r.NodeInfo.NodeGUID] {
			t.Fatalf("record %+v: LID 0 or node twice", r)
		}
		seen[r.NodeInfo.NodeGUID] = true
	}
	// Component masks: only switches.
	tmpl := make([]byte, sa.NodeRecordLayout().Size)
	nt, c, _ := sa.NodeRecord().Field("node_type")
	nt.Put(tmpl, 2)
	sw, err := s.SAGetTable(t.Context(), sa.NodeRecord(), 1<<c, tmpl)
	if err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, n := range tp.Nodes {
		if n.Type == 2 {
			want++
		}
	}
	if len(sw) != want {
		t.Errorf("%d switch records, want %d", len(sw), want)
	}
}

func TestSAPathRecords(t *testing.T) {
	s, f := simSession(t, "../tests/topologies/net.2sw2path4hca", "", 0)
	_ = f
	recs, err := s.NodeRecords(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var hosts []uint16
	for _, r := range recs {
		if r.NodeInfo.NodeType == 1 {
			hosts = append(hosts, r.LID)
		}
	}
	for _, a := range hosts {
		for _, b := range hosts {
			p, err := s.PathRecord(t.Context(), a, b)
			if err != nil {
				t.Fatalf("%d->%d: %v", a, b, err)
			}
			if p.SLID != a || p.DLID != b || p.MTU == 0 || p.Rate == 0 {
				t.Errorf("%d->%d: %+v", a, b, p)
			}
		}
	}
}

// TestSAMultiPathRecords: one GetMulti for 4 sources x 40 destinations on
// fattree-50 (a 784-byte request in 4 segments, a 10 KB answer in 52)
// answers the same 160 paths as 160 PathRecord Gets.
func TestSAMultiPathRecords(t *testing.T) {
	s, f := simSession(t, "../tests/topologies/fattree-50.net", "h002-01", 1)
	_ = f
	recs, err := s.NodeRecords(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var gids []mad.GID
	byGUID := map[uint64]uint16{}
	for _, r := range recs {
		if r.NodeInfo.NodeType == 1 {
			gids = append(gids, mad.NewGID(0xfe80000000000000, r.NodeInfo.PortGUID))
			byGUID[r.NodeInfo.PortGUID] = r.LID
		}
	}
	src, dst := gids[:4], gids[4:]
	paths, err := s.MultiPathRecords(t.Context(), src, dst)
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != len(src)*len(dst) {
		t.Fatalf("%d paths, want %d", len(paths), len(src)*len(dst))
	}
	for i, p := range paths {
		a, b := src[i/len(dst)], dst[i%len(dst)]
		if p.SGID != a || p.DGID != b {
			t.Fatalf("path %d: %v -> %v, want %v -> %v", i, p.SGID, p.DGID, a, b)
		}
		one, err := s.PathRecord(t.Context(), byGUID[a.GUID()], byGUID[b.GUID()])
		if err != nil {
			t.Fatal(err)
		}
		if *one != p {
			t.Errorf("path %d: GetMulti %+v, Get %+v", i, p, *one)
		}
	}
}

// TestSAGetTableMemory: a GetTable's allocations (simulated SA and engine
// together) stay within a small multiple of the answer: the SA builds the
// message once, the driver reassembles it once, and segments are not kept.
func TestSAGetTableMemory(t *testing.T) {
	s, f := simSession(t, fattree2000, "", 0)
	answer := len(f.Topology().Nodes) * sa.NodeRecord().Stride * 8
	if _, err := s.SAGetTable(t.Context(), sa.NodeRecord(), 0, nil); err != nil { // warm up pools
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	recs, err := s.SAGetTable(t.Context(), sa.NodeRecord(), 0, nil)
	runtime.ReadMemStats(&after)
	if err != nil || len(recs) != 2000 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > uint64(6*answer) {
		t.Errorf("a %d-byte answer allocated %d bytes (%.1fx)", answer, got, float64(got)/float64(answer))
	} else {
		t.Logf("a %d-byte answer allocated %d bytes (%.1fx)", answer, got, float64(got)/float64(answer))
	}
}

// TestSASMKey: Options.SMKey goes into every SA request's SM_Key, and the
// SMKey call option overrides it; the simulated SA keeps OpenSM's rules:
// P_KeyTableRecords only with its key (sim.DefaultSAKey), requests with another
// non-zero key dropped, answers with SM_Key 0.
func TestSASMKey(t *testing.T) {
	s, _ := simSessionOpts(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1,
		&engine.Options{SMKey: sim.DefaultSAKey, Timeout: 20 * time.Millisecond, Retries: 1})
	ctx := t.Context()
	r, err := s.SAQuery(ctx, mad.MethodGetTable, sa.PKeyTableRecord(), 0, nil)
	if err != nil || len(r.Records) == 0 || sa.SMKeyOf(r.Message) != 0 {
		t.Fatalf("P_KeyTableRecords with the SA's key: %v, %d records, answer's SM_Key %#x", err, len(r.Records), sa.SMKeyOf(r.Message))
	}
	_, err = s.SAQuery(ctx, mad.MethodGetTable, sa.PKeyTableRecord(), 0, nil, engine.SMKey(0))
	var se *engine.StatusError
	if !errors.As(err, &se) || se.Status != sa.StatusReqInvalid {
		t.Errorf("P_KeyTableRecords without a key: %v, want ERR_REQ_INVALID", err)
	}
	_, err = s.SAQuery(ctx, mad.MethodGet, sa.NodeRecord(), 1, []byte{0, 1}, engine.SMKey(7))
	var te *engine.TimeoutError
	if !errors.As(err, &te) || te.Tries != 2 || te.TID == 0 || te.Class != mad.ClassSubnAdm || te.AttrID != sa.AttrNodeRecord {
		t.Errorf("SM_Key 7: %v (%+v), want a timeout of 2 tries naming the TID, SA and NodeRecord (the SA drops the request)", err, te)
	}
}
