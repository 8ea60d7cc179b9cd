package sim

import (
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

func informReq(t testing.TB, trap uint16, subscribe uint8, smKey uint64) []byte {
	t.Helper()
	ii := sa.Inform{LIDRangeBegin: 0xFFFF, IsGeneric: 1, Subscribe: subscribe, Type: 0xFFFF, TrapNumber: trap,
		QPN: 1, RespTimeValue: 18, ProducerType: 0xFFFFFF}
	d, err := ii.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	b := saReq(t, mad.MethodSet, sa.AttrInformInfo, 0, d)
	sa.SetSMKey(b, smKey)
	return b
}

// reports returns the Reports among pkts, decoded, in arrival order.
func reports(t testing.TB, pkts []fabric.Packet) (out []smp.Notice, raw [][]byte) {
	t.Helper()
	for _, p := range pkts {
		b := p.Data
		if mad.MethodOf(b) == mad.MethodGetTableRes {
			continue // the InformInfoRecords' segment, resent as nobody ACKs it
		}
		if mad.MgmtClassOf(b) != mad.ClassSubnAdm || mad.MethodOf(b) != mad.MethodReport {
			t.Fatalf("not a Report: class %#x method %#x", mad.MgmtClassOf(b), mad.MethodOf(b))
		}
		if mad.AttrIDOf(b) != sa.AttrNotice || p.Addr.QPN != 1 || p.Addr.QKey != qp1QKey {
			t.Fatalf("Report attr %#x from QP %d QKey %#x", mad.AttrIDOf(b), p.Addr.QPN, p.Addr.QKey)
		}
		var n smp.Notice
		if err := n.UnmarshalBinary(b[sa.HeaderSize:]); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
		raw = append(raw, b)
	}
	return out, raw
}

func trapNumbers(ns []smp.Notice) []uint16 {
	var out []uint16
	for _, n := range ns {
		out = append(out, n.TrapNumber)
	}
	slices.Sort(out)
	return out
}

// TestInformInfo plays a subscriber by hand against the SA's event
// forwarding: OpenSM's Set(InformInfo) rules, its InformInfoRecords, the
// Reports of a link going down and up (128 from the switch, 65 and 64 for
// the CA port), answered by ReportResp or resent and given up.
func TestInformInfo(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := mustLoad(t, "net.2sw2path4hca", nil)
		r := attachRaw(t, f, "Hca3", 1)
		_, _, sm := f.SM()
		sw1 := lidOf(t, f, "Switch1", 0)

		req := informReq(t, smp.TrapLinkStateChange, 1, 0)
		for range 2 { // the second Set updates the first's subscription
			resp := r.one(sm, req)
			if mad.MethodOf(resp) != mad.MethodGetResp || status(t, resp) != 0 {
				t.Fatalf("Set(InformInfo): method %#x status %#04x", mad.MethodOf(resp), status(t, resp))
			}
			if got, want := resp[sa.HeaderSize:sa.HeaderSize+36], req[sa.HeaderSize:sa.HeaderSize+36]; !slices.Equal(got, want) {
				t.Errorf("answer % x, want the request's InformInfo % x", got, want)
			}
		}
		// Every trap, and a security trap only with an SM_Key (ERR 430B).
		if st := status(t, r.one(sm, informReq(t, smp.TrapAll, 1, 0))); st != 0 {
			t.Fatalf("subscribe to every trap: status %#04x", st)
		}
		if st := status(t, r.one(sm, informReq(t, smp.TrapBadMKey, 1, 0))); st != sa.StatusReqInvalid {
			t.Errorf("trap 256 without SM_Key: status %#04x, want %#04x", st, sa.StatusReqInvalid)
		}
		if st := status(t, r.one(sm, informReq(t, 999, 2, 0))); st != sa.StatusReqInvalid {
			t.Errorf("Subscribe 2: status %#04x", st)
		}
		if st := status(t, r.one(sm, saReq(t, mad.MethodGet, sa.AttrInformInfo, 0, nil))); st != mad.StatusMethodAttrUnsup {
			t.Errorf("Get(InformInfo): status %#04x", st)
		}

		// Two subscriptions, newest first; the QPN only for an SM_Key.
		for _, key := range []uint64{0, 1} {
			q := saReq(t, mad.MethodGetTable, sa.AttrInformInfoRecord, 0, nil)
			sa.SetSMKey(q, key)
			got := r.send(sm, q)
			if len(got) != 1 {
				t.Fatalf("%d MADs", len(got))
			}
			var h rmpp.Header
			_ = h.UnmarshalBinary(got[0].Data)
			msg := got[0].Data[:rmpp.HeaderEnd+int(h.Data2)] // one segment: PayloadLength says where it ends
			recs, err := sa.Records(msg)
			if err != nil || len(recs) != 2 {
				for _, rec := range recs {
					t.Logf("% x", rec)
				}
				t.Fatalf("%d InformInfoRecords, %v", len(recs), err)
			}
			for i, trap := range []uint16{smp.TrapAll, smp.TrapLinkStateChange} {
				var ii sa.Inform
				_ = ii.UnmarshalBinary(recs[i][24:])
				if ii.TrapNumber != trap || ii.Subscribe != 1 || ii.QPN != uint32(key) {
					t.Errorf("SM_Key %d: record %d: trap %d subscribe %d QPN %d", key, i, ii.TrapNumber, ii.Subscribe, ii.QPN)
				}
				if g := mad.GID(recs[i][:16]); g.GUID() != f.byID["Hca3"].ports[1].guid {
					t.Errorf("record %d: SubscriberGID %v", i, g)
				}
			}
		}

		// Hca1's link goes down: Switch1's trap 128 for both
		// subscriptions, then 65 for Hca1's port for the one of every
		// trap; each ReportResp ends its Report.
		if err := f.SetLink("Hca1", 1, false); err != nil {
			t.Fatal(err)
		}
		ns, raws := reports(t, r.c.take())
		if got := trapNumbers(ns); !slices.Equal(got, []uint16{65, 128, 128}) {
			t.Fatalf("traps %v, want 65 128 128", got)
		}
		hca1 := mad.NewGID(gidPrefix, f.byID["Hca1"].ports[1].guid)
		for _, n := range ns {
			switch n.TrapNumber {
			case 128:
				lid, _ := n.DetailsLID()
				if !n.IsGeneric || n.Type != smp.NoticeUrgent || n.ProducerType != smp.ProducerSwitch || n.IssuerLID != sw1 || lid != sw1 {
					t.Errorf("trap 128 %+v", n)
				}
			case 65:
				g, _ := n.DetailsGID()
				if n.Type != smp.NoticeSubnetMgmt || n.ProducerType != smp.ProducerClassMgr || n.IssuerLID != sm || g != hca1 {
					t.Errorf("trap 65 %+v, GID %v want %v", n, g, hca1)
				}
			}
		}
		for _, b := range raws {
			rr := slices.Clone(b)
			rr[3] = mad.MethodReportResp
			if got := r.send(sm, rr); len(got) != 0 {
				t.Errorf("ReportResp answered with %d MADs", len(got))
			}
		}
		if st := f.ReportStats(); st.Sent != 3 || st.Answered != 3 || st.Pending != 0 || st.Subs != 2 {
			t.Errorf("stats %+v", st)
		}

		// Back up, unanswered: each Report is sent 1+3 times, 200ms
		// apart, then given up.
		if err := f.SetLink("Hca1", 1, true); err != nil {
			t.Fatal(err)
		}
		ns, _ = reports(t, r.c.take())
		if got := trapNumbers(ns); !slices.Equal(got, []uint16{64, 128, 128}) {
			t.Fatalf("traps %v, want 64 128 128", got)
		}
		for range reportRetries {
			time.Sleep(reportTimeout)
			synctest.Wait()
			if ns, _ := reports(t, r.c.take()); len(ns) != 3 {
				t.Errorf("%d Reports resent, want 3", len(ns))
			}
		}
		time.Sleep(reportTimeout)
		synctest.Wait()
		if ns, _ := reports(t, r.c.take()); len(ns) != 0 {
			t.Errorf("%d Reports after the retries", len(ns))
		}
		if st := f.ReportStats(); st.Sent != 6 || st.Lost != 3 || st.Pending != 0 {
			t.Errorf("stats %+v", st)
		}

		// Unsubscribe: once, then there is nothing to unsubscribe
		// (ERR 4307).
		if st := status(t, r.one(sm, informReq(t, smp.TrapLinkStateChange, 0, 0))); st != 0 {
			t.Errorf("unsubscribe: status %#04x", st)
		}
		if st := status(t, r.one(sm, informReq(t, smp.TrapLinkStateChange, 0, 0))); st != sa.StatusReqInvalid {
			t.Errorf("second unsubscribe: status %#04x", st)
		}
		if st := f.ReportStats(); st.Subs != 1 {
			t.Errorf("%d subscriptions left, want 1", st.Subs)
		}
	})
}

// TestSAKeyRules: the SA's SM_Key rules (OpenSM's): requests with a
// non-zero SM_Key other than the SA's (DefaultSAKey, or Options.SAKey) get
// no answer, P_KeyTableRecords need it (ERR_REQ_INVALID without),
// PortInfoRecords show the M_Key only to
// a request with the key, answers carry SM_Key 0. (The M_Key rule is not
// in tests/ibsimdiff's TestSMKeyRulesMatchOpenSM: OpenSM leaves every
// M_Key 0 there.)
func TestSAKeyRules(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	r := attachRaw(t, f, "Hca3", 1)
	_, _, sm := f.SM()
	hca1 := lidOf(t, f, "Hca1", 1)
	f.mu.Lock()
	f.byID["Hca1"].ports[1].put(piMKey, 0x1234)
	f.mu.Unlock()

	pkt := func(key uint64) []byte {
		q := saReq(t, mad.MethodGet, sa.AttrPKeyTableRecord, 0, nil)
		sa.SetSMKey(q, key)
		return q
	}
	if st := status(t, r.one(sm, pkt(0))); st != sa.StatusReqInvalid {
		t.Errorf("P_KeyTableRecord without SM_Key: status %#04x, want ERR_REQ_INVALID", st)
	}
	if got := r.send(sm, pkt(2)); len(got) != 0 {
		t.Errorf("SM_Key 2: %d answers, want none", len(got))
	}
	if got := r.send(sm, informReq(t, smp.TrapLinkStateChange, 1, 2)); len(got) != 0 || f.ReportStats().Subs != 0 {
		t.Errorf("Set(InformInfo) with SM_Key 2: %d answers, %d subscriptions", len(got), f.ReportStats().Subs)
	}
	for _, c := range []struct {
		key, mkey uint64
	}{{0, 0}, {DefaultSAKey, 0x1234}} {
		tmpl := make([]byte, sa.PortInfoRecordLayout().Size)
		el, ce, _ := sa.PortInfoRecord().Field("EndportLID")
		el.Put(tmpl, uint64(hca1))
		q := saReq(t, mad.MethodGet, sa.AttrPortInfoRecord, 1<<ce, tmpl)
		sa.SetSMKey(q, c.key)
		resp := r.one(sm, q)
		if st := status(t, resp); st != 0 || sa.SMKeyOf(resp) != 0 {
			t.Fatalf("PortInfoRecord SM_Key %d: status %#04x, answer's SM_Key %#x", c.key, st, sa.SMKeyOf(resp))
		}
		if got := piMKey.Get(resp[sa.HeaderSize+pirPortInfo:]); got != c.mkey {
			t.Errorf("PortInfoRecord SM_Key %d: M_Key %#x, want %#x", c.key, got, c.mkey)
		}
	}

	// A fabric whose SM has another key: OpenSM's default is just
	// another key there.
	g := mustLoad(t, "net.2sw2path4hca", &Options{SAKey: 0x77})
	rg := attachRaw(t, g, "Hca3", 1)
	if got := rg.send(sm, pkt(DefaultSAKey)); len(got) != 0 {
		t.Errorf("SA key 0x77, request SM_Key 1: %d answers, want none", len(got))
	}
	if st := status(t, rg.one(sm, pkt(0x77))); st != sa.StatusTooManyRecords {
		t.Errorf("SA key 0x77, request SM_Key 0x77: status %#04x, want every record (too many for a Get)", st)
	}
}

// TestTrap144: AddSM sets IsSM on a CA port, which traps 144 as ibsim's
// SET_ISSM does; the SA forwards it with the new CapabilityMask, once.
func TestTrap144(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	r := attachRaw(t, f, "Hca3", 1)
	_, _, sm := f.SM()
	if st := status(t, r.one(sm, informReq(t, smp.TrapLocalChanges, 1, 0))); st != 0 {
		t.Fatalf("subscribe: status %#04x", st)
	}
	if err := f.AddSM("Hca1", 1, smp.SMStateStandby, 1); err != nil {
		t.Fatal(err)
	}
	ns, _ := reports(t, r.c.take())
	hca1 := lidOf(t, f, "Hca1", 1)
	if len(ns) != 1 {
		t.Fatalf("%d Reports, want 1", len(ns))
	}
	n := ns[0]
	m, _ := n.DetailsCapabilityMask()
	lid, _ := n.DetailsLID()
	if n.TrapNumber != 144 || n.Type != smp.NoticeInformation || n.ProducerType != smp.ProducerCA || n.IssuerLID != hca1 ||
		lid != hca1 || m&smp.CapIsSM == 0 || n.IssuerGID.GUID() != f.byID["Hca1"].ports[1].guid {
		t.Errorf("trap 144 %+v, capability mask %#x", n, m)
	}
}
