package engine_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
)

// nextReports reads n Reports from sub, failing after a generous deadline.
func nextReports(t *testing.T, sub *engine.Subscription, n int) []engine.Report {
	t.Helper()
	var out []engine.Report
	for range n {
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		r, err := sub.Next(ctx)
		cancel()
		if err != nil {
			t.Fatalf("after %d of %d Reports: %v", len(out), n, err)
		}
		out = append(out, r)
	}
	return out
}

func traps(rs []engine.Report) []uint16 {
	var out []uint16
	for _, r := range rs {
		out = append(out, r.Notice.TrapNumber)
	}
	slices.Sort(out)
	return out
}

// waitStats polls the simulator's Report counts until ok says yes.
func waitStats(t *testing.T, f *sim.Fabric, what string, ok func(sim.ReportStats) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := f.ReportStats()
		if ok(st) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: stats %+v", what, st)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestSubscribe subscribes through the simulated SA, on a CA port and on
// the SM's own port, and takes a CA's link down and up: the switch's trap
// 128 and the SM's 65, then 128 and 64, arrive decoded, each once per
// subscription, every Report answered by a ReportResp; two subscriptions
// share an InformInfo, Close unsubscribes what no other subscription
// uses, and Session.Close what is left. With a lossy fabric Reports are
// resent by the SA and still delivered once.
func TestSubscribe(t *testing.T) {
	for _, c := range []struct {
		name   string
		node   string
		faults *sim.Faults
	}{
		{"CA port", "Hca3", nil},
		{"SM port", "", nil},
		{"lossy", "Hca3", &sim.Faults{Seed: 7, Loss: 0.15}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, f := simSession(t, net2sw, c.node, 1)
			if c.faults != nil {
				if err := f.SetFaults(*c.faults); err != nil {
					t.Fatal(err)
				}
			}
			ctx := t.Context()
			sub1, err := s.Subscribe(ctx, engine.SubscribeOptions{Traps: []uint16{64, 65, 128}})
			if err != nil {
				t.Fatal(err)
			}
			sub2, err := s.Subscribe(ctx, engine.SubscribeOptions{Traps: []uint16{128, 128}})
			if err != nil {
				t.Fatal(err)
			}
			if st := f.ReportStats(); st.Subs != 3 {
				t.Fatalf("the SA holds %d subscriptions, want 3 (64, 65, 128 shared)", st.Subs)
			}
			topology := f.Topology()
			guid := func(node string, port int) uint64 {
				for _, n := range topology.Nodes {
					if n.ID == node {
						return n.Ports[port].GUID
					}
				}
				t.Fatalf("no node %s", node)
				return 0
			}
			_, _, smLID := f.SM()
			for _, up := range []bool{false, true} {
				if err := f.SetLink("Hca1", 1, up); err != nil {
					t.Fatal(err)
				}
				gidTrap := uint16(65)
				if up {
					gidTrap = 64
				}
				got1 := nextReports(t, sub1, 2)
				got2 := nextReports(t, sub2, 1)
				if tr := traps(got1); !slices.Equal(tr, []uint16{min(gidTrap, 128), max(gidTrap, 128)}) {
					t.Errorf("up=%v: first subscription got traps %v", up, tr)
				}
				if tr := traps(got2); !slices.Equal(tr, []uint16{128}) {
					t.Errorf("up=%v: second subscription got traps %v", up, tr)
				}
				for _, r := range append(got1, got2...) {
					n := r.Notice
					switch n.TrapNumber {
					case 128:
						lid, ok := n.DetailsLID()
						if !ok || lid != n.IssuerLID || n.ProducerType != smp.ProducerSwitch || n.Type != smp.NoticeUrgent ||
							n.IssuerGID.GUID() != guid("Switch1", 0) {
							t.Errorf("trap 128: %+v", n)
						}
					default:
						g, ok := n.DetailsGID()
						if !ok || g.GUID() != guid("Hca1", 1) || n.IssuerLID != smLID || n.ProducerType != smp.ProducerClassMgr {
							t.Errorf("trap %d: %+v (GID %v)", n.TrapNumber, n, g)
						}
					}
					if r.From.LID != smLID || r.From.QPN != 1 {
						t.Errorf("Report from %+v", r.From)
					}
				}
				for i, sub := range []*engine.Subscription{sub1, sub2} {
					select {
					case r := <-sub.C():
						t.Errorf("subscription %d: an extra trap %d", i+1, r.Notice.TrapNumber)
					default:
					}
				}
			}
			waitStats(t, f, "every Report answered", func(st sim.ReportStats) bool {
				return st.Pending == 0 && st.Answered == st.Sent && st.Lost == 0
			})
			if st := f.ReportStats(); c.faults != nil && st.Resent == 0 {
				t.Errorf("no Report resent on the lossy fabric (%+v): the case tests nothing", st)
			}
			if err := sub2.Close(); err != nil {
				t.Fatal(err)
			}
			if st := f.ReportStats(); st.Subs != 3 {
				t.Errorf("after closing the second subscription the SA holds %d, want 3", st.Subs)
			}
			if err := sub1.Close(); err != nil {
				t.Fatal(err)
			}
			if st := f.ReportStats(); st.Subs != 0 {
				t.Errorf("after closing both the SA holds %d subscriptions", st.Subs)
			}
			if _, err := sub1.Next(ctx); !errors.Is(err, engine.ErrSubscriptionClosed) {
				t.Errorf("Next after Close: %v", err)
			}
			if _, ok := <-sub1.C(); ok {
				t.Error("C open after Close")
			}
			if err := sub1.Close(); err != nil {
				t.Errorf("second Close: %v", err)
			}

			// Session.Close unsubscribes what is still open.
			if _, err := s.Subscribe(ctx, engine.SubscribeOptions{}); err != nil {
				t.Fatal(err)
			}
			if st := f.ReportStats(); st.Subs != 1 {
				t.Errorf("every trap: the SA holds %d subscriptions", st.Subs)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if st := f.ReportStats(); st.Subs != 0 {
				t.Errorf("after Session.Close the SA holds %d subscriptions", st.Subs)
			}
		})
	}
}

// TestSubscribeRefused: security traps need the SM_Key (OpenSM's ERR
// 430B), and the Set of one trap refused unsubscribes those set before it;
// bad options are errors naming them.
func TestSubscribeRefused(t *testing.T) {
	s, f := simSession(t, net2sw, "Hca3", 1)
	ctx := t.Context()
	_, err := s.Subscribe(ctx, engine.SubscribeOptions{Traps: []uint16{128, smp.TrapBadMKey}})
	var se *engine.StatusError
	if !errors.As(err, &se) || se.Status != sa.StatusReqInvalid || se.AttrID != sa.AttrInformInfo {
		t.Fatalf("trap 256 without SM_Key: %v", err)
	}
	if st := f.ReportStats(); st.Subs != 0 {
		t.Errorf("the refused Subscribe left %d subscriptions", st.Subs)
	}
	sub, err := s.Subscribe(ctx, engine.SubscribeOptions{Traps: []uint16{smp.TrapBadMKey}}, engine.SMKey(1))
	if err != nil {
		t.Fatalf("trap 256 with an SM_Key: %v", err)
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if st := f.ReportStats(); st.Subs != 0 {
		t.Errorf("%d subscriptions left", st.Subs)
	}
	for _, o := range []engine.SubscribeOptions{
		{LIDEnd: 4},
		{LIDBegin: 5, LIDEnd: 4},
		{Traps: []uint16{0xFFFF}},
		{Buffer: -1},
	} {
		if _, err := s.Subscribe(ctx, o); err == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// lateSubscribe is a Transport that, after the first unsubscription it
// sends, sends the subscription that came before it once more with a TID
// of its own: a try the engine gave up on that the SA carries out late.
type lateSubscribe struct {
	fabric.Transport
	sub []byte // the last Set(InformInfo) subscribing
	did bool
}

func (l *lateSubscribe) Send(ctx context.Context, p *fabric.Packet) error {
	b := p.Data
	isInform := mad.MgmtClassOf(b) == mad.ClassSubnAdm && mad.MethodOf(b) == mad.MethodSet && mad.AttrIDOf(b) == sa.AttrInformInfo
	var ii sa.Inform
	if !isInform || ii.UnmarshalBinary(b[sa.HeaderSize:]) != nil {
		return l.Transport.Send(ctx, p)
	}
	if ii.Subscribe == 1 {
		l.sub = slices.Clone(b)
		return l.Transport.Send(ctx, p)
	}
	if err := l.Transport.Send(ctx, p); err != nil || l.did || l.sub == nil {
		return err
	}
	l.did = true
	late := *p
	late.Data = l.sub
	mad.SetTID(late.Data, mad.TIDOf(b)^0xABCD0000)
	return l.Transport.Send(ctx, &late)
}

// TestUnsubscribeLateSubscription: a subscription the SA carries out
// after the unsubscription (OpenSM serves SA requests from several
// threads; a retried Set's first try can come last) is found in the SA's
// InformInfoRecords when Close checks them and unsubscribed again.
func TestUnsubscribeLateSubscription(t *testing.T) {
	var late *lateSubscribe
	s, f := simSessionWrap(t, net2sw, "Hca3", 1, nil, func(tr fabric.Transport) fabric.Transport {
		late = &lateSubscribe{Transport: tr}
		return late
	})
	sub, err := s.Subscribe(t.Context(), engine.SubscribeOptions{Traps: []uint16{smp.TrapGIDInService}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sub.Close(); err != nil {
		t.Fatal(err)
	}
	if !late.did {
		t.Fatal("the late subscription was not sent")
	}
	if st := f.ReportStats(); st.Subs != 0 {
		t.Errorf("%d subscriptions left at the SA after Close", st.Subs)
	}
}

// TestSubscribePlanes: on a planarized port (h001-00 plane 1, the pair
// Open gives) each plane is a subnet with its own SM (h000-00's plane
// ports), which reports its own plane's traps only: subscribed at the
// port's SM alone, a plane-3 link going down makes no Report; at every
// plane's SM (PlaneSMLIDs, through the GSI side), its coming back up
// makes trap 128, from plane 3's SM. SALID sends an SA query to another
// plane's SA.
func TestSubscribePlanes(t *testing.T) {
	f := simtest.Load(t, "../tests/topologies/fattree-xdr-4planes.net", nil)
	s := simtest.PortSession(t, f, "h001-00", 1, nil)
	ctx := t.Context()
	lids, err := s.PlaneSMLIDs(ctx, f)
	if err != nil || len(lids) != 4 || lids[0] != s.Port().SMLID {
		t.Fatalf("PlaneSMLIDs = %v, %v; want 4, the port's SM first", lids, err)
	}
	for _, l := range lids {
		r, err := s.SAQuery(ctx, mad.MethodGetTable, sa.SMInfoRecord(), 0, nil, engine.SALID(l))
		if err != nil || len(r.Records) != 1 || uint16(r.Records[0][0])<<8|uint16(r.Records[0][1]) != l {
			t.Errorf("SMInfoRecord at the SA of LID %d: %v, %v", l, r, err)
		}
	}
	simtest.PlaneTraps(t, f, s, lids)
}
