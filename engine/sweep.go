package engine

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/topo"
)

// SweepClass is the kind of query of a SweepReq.
type SweepClass int

const (
	SweepSMP  SweepClass = iota // a subnet management Get/Set (Session.SMP)
	SweepPerf                   // a PerfMgt Get/Set (Session.Perf); AttrMod is the port
)

// SweepReq is one query of a bulk sweep.
type SweepReq struct {
	Target  Target
	Class   SweepClass
	Method  uint8
	AttrID  uint16
	AttrMod uint32 // the SMP attribute modifier; for PerfMgt, the port
	Data    []byte // Set data; nil for Get
}

// SweepResult is the answer to one SweepReq: the attribute data or the
// error naming the target (a *TimeoutError, a *StatusError, ...).
type SweepResult struct {
	Data []byte
	Err  error
}

// Sweep runs many queries concurrently, keeping the Session's window full
// (the scheduler still sends one SMP at a time per destination node), and
// returns one result per request, in order. A failed query is an error in
// its own result: the sweep never stops on one target. progress, when not
// nil, is called with the number of queries done so far, from the
// sweep's goroutines (it must be safe for concurrent use). When ctx ends,
// the queries not yet answered fail with ctx.Err().
//
// A query that could not be read (Unreadable: no answer after every try,
// or answers that never agreed where they may be damaged) is asked again
// in a second pass once the first is over, and in further ones up to
// Passes (default 2); a loss that hit one query in a burst rarely hits
// it again seconds later. progress counts the first pass only.
func (s *Session) Sweep(ctx context.Context, reqs []SweepReq, progress func(done, total int), opts ...CallOption) []SweepResult {
	if slices.ContainsFunc(reqs, func(r SweepReq) bool { return r.Target.Via != nil }) {
		return s.sweepPlanes(ctx, reqs, progress, opts)
	}
	out := s.sweepPass(ctx, reqs, progress, opts)
	passes := s.callOpts(opts).passes
	if passes == 0 {
		passes = defaultSweepPasses
	}
	for pass := 1; pass < passes && ctx.Err() == nil; pass++ {
		var again []SweepReq
		var at []int
		for i, r := range out {
			if Unreadable(r.Err) {
				again = append(again, reqs[i])
				at = append(at, i)
			}
		}
		if len(again) == 0 {
			break
		}
		for k, r := range s.sweepPass(ctx, again, nil, opts) {
			if r.Err == nil || ctx.Err() == nil {
				out[at[k]] = r
			}
		}
	}
	return out
}

// defaultSweepPasses is Sweep's passes unless Passes says otherwise.
const defaultSweepPasses = 2

// sweepPass is one pass of Sweep over reqs.
func (s *Session) sweepPass(ctx context.Context, reqs []SweepReq, progress func(done, total int), opts []CallOption) []SweepResult {
	out := make([]SweepResult, len(reqs))
	order := interleave(reqs)
	workers := min(max(s.window, 1), len(reqs))
	var next, done atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(reqs) {
					return
				}
				i := order[k]
				r := &reqs[i]
				if err := ctx.Err(); err != nil {
					out[i].Err = err
				} else if r.Class == SweepPerf {
					out[i].Data, out[i].Err = s.Perf(ctx, r.Target, r.Method, r.AttrID, uint8(r.AttrMod), r.Data, opts...)
				} else {
					out[i].Data, out[i].Err = s.SMP(ctx, r.Target, r.Method, r.AttrID, r.AttrMod, r.Data, opts...)
				}
				if n := done.Add(1); progress != nil {
					progress(int(n), len(reqs))
				}
			}
		})
	}
	wg.Wait()
	return out
}

// interleave orders requests round-robin by destination, so that the
// window holds queries to many nodes rather than a queue to one (the
// scheduler sends SMPs to one node one at a time, and a list of ports
// usually names the ports of one switch in a row).
func interleave(reqs []SweepReq) []int {
	type key struct {
		kind TargetKind
		lid  uint16
		guid uint64
		path string
	}
	idx := map[key]int{}
	var buckets [][]int
	for i, r := range reqs {
		k := key{r.Target.Kind, r.Target.LID, r.Target.GUID, string(r.Target.Path)}
		b, ok := idx[k]
		if !ok {
			b = len(buckets)
			idx[k] = b
			buckets = append(buckets, nil)
		}
		buckets[b] = append(buckets[b], i)
	}
	order := make([]int, 0, len(reqs))
	for round := 0; len(order) < len(reqs); round++ {
		for _, b := range buckets {
			if round < len(b) {
				order = append(order, b[round])
			}
		}
	}
	return order
}

// LFTs are the linear forwarding tables of the switches of a fabric, read
// by Session.LFTs.
type LFTs struct {
	// Ports[i] is the egress port by LID of Switches[i]; 255 (or a LID
	// past the table) means drop. topo.AnalyzeRoutes follows them.
	topo.ForwardingTables
	// Errors are the switches (or blocks) that did not answer.
	Errors []TargetError
}

// LFTs reads the LinearForwardingTable of every switch of f up to its
// SwitchInfo.LinearFDBTop, all switches concurrently, by LID when the
// switch has one (else by the directed route of discovery d).
func (s *Session) LFTs(ctx context.Context, d *Discovery, progress func(done, total int)) *LFTs {
	return s.LFTsOf(ctx, d, nil, progress)
}

// LFTsOf is LFTs reading of each switch sw only the blocks b (LIDs 64b to
// 64b+63) that want(sw, b) takes, all when want is nil; the entries of the
// blocks not read are 255 (drop). A planarized fabric's plane routes its
// own LIDs alone (docs/planes.md), and all planes share one LID space: a
// plane's switches are followed to its LIDs only, and the blocks of the
// other planes' LIDs need not be read.
func (s *Session) LFTsOf(ctx context.Context, d *Discovery, want func(sw *topo.Node, block int) bool, progress func(done, total int)) *LFTs {
	res := &LFTs{}
	sws, targets, infos := s.switchInfos(ctx, d, &res.Errors)
	type blk struct{ sw, block int }
	var breqs []SweepReq
	var where []blk
	tops := make([]int, len(sws))
	for i, si := range infos {
		if si == nil {
			tops[i] = -1
			continue
		}
		tops[i] = int(si.LinearFDBTop)
		for b := 0; b*64 <= tops[i]; b++ {
			if want != nil && !want(sws[i], b) {
				continue
			}
			breqs = append(breqs, SweepReq{Target: targets[i], Method: mad.MethodGet, AttrID: smp.AttrLinearForwardingTable, AttrMod: uint32(b)})
			where = append(where, blk{i, b})
		}
	}
	blocks := s.Sweep(ctx, breqs, progress, Passes(sweepPasses))
	ports := make([][]uint8, len(sws))
	for i := range sws {
		if tops[i] >= 0 {
			ports[i] = make([]uint8, tops[i]+1)
			for j := range ports[i] {
				ports[i][j] = 255
			}
		}
	}
	failed := blockAnswers(blocks, targets, func(k int) int { return where[k].sw }, &res.Errors, func(k int, data []byte) {
		w := where[k]
		base := w.block * 64
		for j := 0; j < 64 && base+j < len(ports[w.sw]) && j < len(data); j++ {
			ports[w.sw][base+j] = data[j]
		}
	})
	for i, n := range sws {
		if tops[i] >= 0 && !failed[i] {
			res.Switches = append(res.Switches, n)
			res.Ports = append(res.Ports, ports[i])
		}
	}
	return res
}

// SwitchTarget is how the table reads (LFTs, MFTs, SL2VLs) address switch
// n of d, and so the Path of their errors about it: by its LID, else by
// directed route; a switch of another plane than the session's in a
// merged planarized discovery by its directed route from its plane port
// (its LID is not routed on the session's plane).
func (d *Discovery) SwitchTarget(n *topo.Node) (Target, bool) {
	if t, ok := d.Target(n.GUID); ok && t.Via != nil {
		return t, true
	}
	if len(n.Ports) > 0 && n.Ports[0] != nil && n.Ports[0].LID != 0 {
		return LID(n.Ports[0].LID), true
	}
	return d.Target(n.GUID)
}
