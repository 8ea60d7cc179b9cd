package engine_test

import (
	"errors"
	"fmt"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/rmppdriver"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/sim/simtest"
)

// TestUMADPortCoalesced is umad_recv of a multi-segment GetTableResp: a
// 256-byte buffer gets ENOSPC with the needed length and the message stays
// queued; a big enough buffer gets the whole message with the first
// segment's header (rmpp.md section 8).
func TestUMADPortCoalesced(t *testing.T) {
	p := hca3UMADPort(t)
	ctx := t.Context()
	agent, err := p.Register(ctx, mad.ClassSubnAdm, sa.ClassVersion, 1, [2]uint64{})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := sa.NewRequest(mad.MethodGetTable, sa.AttrNodeRecord, 0x42, 0, nil)
	sm := p.Port().SMLID
	if err := p.Send(ctx, agent, req, fabric.Addr{LID: sm, QPN: 1, QKey: 0x80010000}, 1000, 1); err != nil {
		t.Fatal(err)
	}
	want := 56 + 6*112
	_, err = p.Recv(ctx, 256, 1000)
	var ns *engine.NoSpaceError
	if !errors.As(err, &ns) || ns.Need != want {
		t.Fatalf("recv 256: %v, want ENOSPC needing %d", err, want)
	}
	if err := p.Poll(ctx, 0); err != nil {
		t.Errorf("poll after ENOSPC: %v (the message stays queued)", err)
	}
	if _, err := p.Recv(ctx, want-1, 0); !errors.As(err, &ns) || ns.Need != want {
		t.Fatalf("recv %d, one byte short: %v, want ENOSPC needing %d", want-1, err, want)
	}
	pkt, err := p.Recv(ctx, want, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var h sa.Header
	if err := h.UnmarshalBinary(pkt.Data); err != nil {
		t.Fatal(err)
	}
	if len(pkt.Data) != want || h.Method != mad.MethodGetTableRes || h.RMPP.Type != rmpp.TypeData ||
		h.RMPP.Flags != rmpp.FlagActive|rmpp.FlagFirst || h.RMPP.Data1 != 1 || h.RMPP.Data2 != uint32(6*112+4*20) {
		t.Errorf("message of %d bytes, header %+v", len(pkt.Data), h)
	}
	recs, _ := sa.Records(pkt.Data)
	if len(recs) != 6 {
		t.Errorf("%d records", len(recs))
	}
}

// TestRMPPSendSilentPeer: an RMPP send whose ACKs never come ends in one
// timeout record after the ACK wait (2 s when timeout_ms is 0 or larger
// than 2 s) times 1+retries, as rmpp.md section 9 cases 21 and 22 say.
func TestRMPPSendSilentPeer(t *testing.T) {
	for _, c := range []struct {
		timeoutMS, retries int
		want               time.Duration
	}{{0, 0, 2 * time.Second}, {0, 1, 4 * time.Second}, {500, 3, 2 * time.Second}, {5000, 1, 4 * time.Second}} {
		t.Run(fmt.Sprintf("timeout %d retries %d", c.timeoutMS, c.retries), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p := hca3UMADPort(t)
				ctx := t.Context()
				agent, err := p.Register(ctx, mad.ClassSubnAdm, sa.ClassVersion, 1, [2]uint64{})
				if err != nil {
					t.Fatal(err)
				}
				// A three-segment GetMulti to a host, which has no SA and
				// drops it.
				req, _ := sa.NewRequest(mad.MethodGetMulti, sa.AttrPathRecord, 9, 0, nil)
				req = append(req, make([]byte, 400)...)
				req[26] = rmpp.FlagActive
				start := time.Now()
				if err := p.Send(ctx, agent, req, fabric.Addr{LID: 2, QPN: 1, QKey: 0x80010000}, c.timeoutMS, c.retries); err != nil {
					t.Fatal(err)
				}
				pkt, err := p.Recv(ctx, 4096, -1)
				if err != nil {
					t.Fatal(err)
				}
				if pkt.Status != fabric.StatusTimeout || time.Since(start) != c.want {
					t.Errorf("status %d after %v, want %d after %v", pkt.Status, time.Since(start), fabric.StatusTimeout, c.want)
				}
			})
		})
	}
}

// TestUMADPortRMPPEdges: rmpp.md section 9 cases 28-30 through UMADPort.
func TestUMADPortRMPPEdges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := hca3UMADPort(t)
		ctx := t.Context()
		sm := fabric.Addr{LID: p.Port().SMLID, QPN: 1, QKey: 0x80010000}
		// 30: rmpp_version 1 on a class without RMPP.
		if _, err := p.Register(ctx, mad.ClassPerf, 1, 1, [2]uint64{}); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("rmpp_version 1 on PerfMgt: %v, want EINVAL", err)
		}
		// 28: an agent without RMPP gets the first segment only.
		plain, err := p.Register(ctx, mad.ClassSubnAdm, sa.ClassVersion, 0, [2]uint64{})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := sa.NewRequest(mad.MethodGetTable, sa.AttrNodeRecord, 5, 0, nil)
		if err := p.Send(ctx, plain, req, sm, 1000, 0); err != nil {
			t.Fatal(err)
		}
		pkt, err := p.Recv(ctx, 4096, 1000)
		if err != nil {
			t.Fatal(err)
		}
		var h rmpp.Header
		_ = h.UnmarshalBinary(pkt.Data)
		if len(pkt.Data) != mad.Size || h.Flags != rmpp.FlagActive|rmpp.FlagFirst || h.Data1 != 1 {
			t.Errorf("%d bytes, RMPP %+v: want segment 1 alone", len(pkt.Data), h)
		}
		if _, err := p.Recv(ctx, 4096, 5000); !errors.Is(err, syscall.ETIMEDOUT) {
			t.Errorf("after segment 1: %v, want nothing more (the SA's resends match no request)", err)
		}
		// 29: more than 256 bytes without the Active flag.
		withRMPP, err := p.Register(ctx, mad.ClassSubnAdm, sa.ClassVersion, 1, [2]uint64{})
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Send(ctx, withRMPP, append(req, make([]byte, 100)...), sm, 1000, 0); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("356 bytes, Active clear: %v, want EINVAL", err)
		}
	})
}

// TestRMPPMaxTotal: Options.RMPP reaches the Session's RMPP driver: a transfer that would take the bytes held by all
// receive transfers past Options.RMPP.MaxTotal is stopped, and the call
// says which limit.
func TestRMPPMaxTotal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := simSessionOpts(t, fattree2000, "h010-05", 1, &engine.Options{RMPP: rmppdriver.Limits{MaxTotal: 100_000}})
		_, err := s.NodeRecords(t.Context())
		var le *rmppdriver.LimitError
		if !errors.As(err, &le) || le.Limit != "MaxTotal" || le.Bytes != 100_000 {
			t.Fatalf("err %v, want a LimitError on MaxTotal 100000", err)
		}
		if st := s.RMPPStats(); st.Stopped != 1 || st.Held != 0 {
			t.Errorf("stats %+v", st)
		}
		// Within the limits the same query works.
		s2, _ := simSessionOpts(t, fattree2000, "h010-05", 1, &engine.Options{RMPP: rmppdriver.Limits{MaxTotal: 1 << 20}})
		if recs, err := s2.NodeRecords(t.Context()); err != nil || len(recs) != 2000 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
	})
}

// TestSATruncatedAnswers: the two answers OpenSM gives under ibsim, made
// here without ibsim. A GetTable answered by one MAD with RMPP Active and
// type 0 gives its whole records and a TruncatedError (before: dropped as
// a control of no transfer, the call timed out); a GetMultiResp whose
// PayloadLength (the request's) ends inside a PathRecord gives the whole
// paths and a TruncatedError (before: the same paths, silently).
func TestSATruncatedAnswers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The SA (LID 2) answers each request with one MAD.
		answer := func(p *fabric.Packet) ([]byte, bool) {
			req := p.Data
			var rh rmpp.Header
			_ = rh.UnmarshalBinary(req)
			if mad.IsResponse(req) || rmpp.IsActive(req) && (rh.Type != rmpp.TypeData || rh.Flags&rmpp.FlagLast == 0) {
				return nil, false
			}
			b := make([]byte, mad.Size)
			copy(b, req[:sa.HeaderSize])
			b[3] = mad.MethodOf(req) | mad.MethodResp
			if rmpp.IsActive(req) {
				// The GetMulti request, whole: one DATA segment whose
				// PayloadLength is the request's.
				(&rmpp.Header{Version: rmpp.Version, Type: rmpp.TypeData, Flags: rmpp.FlagActive | rmpp.FlagFirst | rmpp.FlagLast, Data1: 1, Data2: rh.Data2}).Put(b)
				sa.SetAttributeOffset(b, uint16(sa.PathRecord().Stride))
			} else {
				(&rmpp.Header{Version: rmpp.Version, Flags: rmpp.FlagActive}).Put(b)
				sa.SetAttributeOffset(b, uint16(sa.NodeRecord().Stride))
			}
			return b, true
		}
		pipe := fabrictest.NewPipe(&fabrictest.PipeOptions{
			Port:            fabric.PortAttr{LID: 1, SMLID: 2, State: 4},
			PeerAddr:        fabric.Addr{LID: 2, QPN: 1, QKey: 0x80010000},
			PacketResponder: answer,
		})
		s, err := engine.New(pipe.Transport(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { s.Close(); pipe.Close() }()
		recs, err := s.SAGetTable(t.Context(), sa.NodeRecord(), 0, nil)
		var te *engine.TruncatedError
		if !errors.As(err, &te) || !errors.Is(err, engine.ErrTruncated) || len(recs) != 1 || te.Records != 1 {
			t.Fatalf("type-0 GetTable answer: %d records, %v", len(recs), err)
		}
		g := mad.NewGID(0xfe80000000000000, 1)
		paths, err := s.MultiPathRecords(t.Context(), []mad.GID{g, g}, []mad.GID{g, g})
		if !errors.As(err, &te) || len(paths) != 1 || te.Records != 1 {
			t.Fatalf("GetMultiResp cut by its PayloadLength: %d paths, %v", len(paths), err)
		}
		t.Logf("%v", err)
	})
}

// hca3UMADPort is a UMADPort on Hca3 port 1 of net.2sw2path4hca in the
// simulator, closed with the simulator when the test ends.
func hca3UMADPort(t *testing.T) *engine.UMADPort {
	t.Helper()
	f := simtest.Load(t, "../tests/topologies/net.2sw2path4hca", nil)
	tr, err := f.Attach("Hca3", 1)
	if err != nil {
		t.Fatal(err)
	}
	p := engine.NewUMADPort(tr)
	t.Cleanup(func() { p.Close() })
	return p
}
