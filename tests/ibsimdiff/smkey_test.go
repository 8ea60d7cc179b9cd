package ibsimdiff

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
)

// smKeyOutcome is what an SA call gave, in words comparable between
// backends: "timeout", "status 0x0200", or "ok" with what the caller
// wants to say about the answer.
func smKeyOutcome(r *engine.SARecords, err error, ok func(*engine.SARecords) string) string {
	var te *engine.TimeoutError
	var se *engine.StatusError
	switch {
	case errors.As(err, &te):
		return "timeout"
	case errors.As(err, &se):
		return fmt.Sprintf("status %#04x", se.Status)
	case err != nil && !errors.Is(err, engine.ErrTruncated):
		return "error " + err.Error()
	}
	return "ok " + ok(r)
}

// smKeyFacts asks the SA what OpenSM guards with its SM_Key (1, its
// default sa_key) with no key, the SA's key and another one, and says
// what came back.
func smKeyFacts(t *testing.T, sess *engine.Session) map[string]string {
	t.Helper()
	ctx := t.Context()
	out := map[string]string{}
	some := func(r *engine.SARecords) string {
		return fmt.Sprintf("records>0=%v SM_Key=%#x", len(r.Records) > 0, sa.SMKeyOf(r.Message))
	}
	for _, key := range []uint64{0, sim.DefaultSAKey, 2} {
		r, err := sess.SAQuery(ctx, mad.MethodGetTable, sa.PKeyTableRecord(), 0, nil, engine.SMKey(key))
		out[fmt.Sprintf("P_KeyTableRecord SM_Key %d", key)] = smKeyOutcome(r, err, some)
		r, err = sess.SAQuery(ctx, mad.MethodGetTable, sa.SMInfoRecord(), 0, nil, engine.SMKey(key))
		out[fmt.Sprintf("SMInfoRecord SM_Key %d", key)] = smKeyOutcome(r, err, some)
	}
	// Security traps: subscribed to only with the key (ERR 430B).
	for _, key := range []uint64{0, sim.DefaultSAKey} {
		sub, err := sess.Subscribe(ctx, engine.SubscribeOptions{Traps: []uint16{smp.TrapBadMKey}}, engine.SMKey(key))
		what := "ok"
		var se *engine.StatusError
		switch {
		case errors.As(err, &se):
			what = fmt.Sprintf("status %#04x", se.Status)
		case err != nil:
			what = err.Error()
		default:
			if cerr := sub.Close(); cerr != nil {
				what = "unsubscribe: " + cerr.Error()
			}
		}
		out[fmt.Sprintf("subscribe to trap 256 SM_Key %d", key)] = what
	}
	// InformInfoRecords: the subscription's QPN only with the key.
	sub, err := sess.Subscribe(ctx, engine.SubscribeOptions{Traps: []uint16{smp.TrapLinkStateChange}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for _, key := range []uint64{0, sim.DefaultSAKey} {
		r, err := sess.SAQuery(ctx, mad.MethodGetTable, sa.InformInfoRecord(), 0, nil, engine.SMKey(key))
		out[fmt.Sprintf("InformInfoRecord SM_Key %d", key)] = smKeyOutcome(r, err, func(r *engine.SARecords) string {
			var qpns []string
			for _, rec := range r.Records {
				var ii sa.Inform
				if err := ii.UnmarshalBinary(rec[24:]); err != nil {
					return err.Error()
				}
				qpns = append(qpns, fmt.Sprintf("trap %d QPN %d", ii.TrapNumber, ii.QPN))
			}
			return strings.Join(qpns, ", ")
		})
	}
	return out
}

// TestSMKeyRulesMatchOpenSM: what OpenSM guards with its SM_Key, asked of
// OpenSM's SA on live ibsim and of the embedded simulator's on the same
// topology, comes back the same: P_KeyTableRecords refused without the
// key (ERR_REQ_INVALID) and answered with it, every request with another
// key dropped (no answer), answers carrying SM_Key 0, subscriptions to
// security traps refused without the key, and InformInfoRecords giving
// the subscription's QPN only to a request with the key.
func TestSMKeyRulesMatchOpenSM(t *testing.T) {
	s := shared.Get(t, topo2sw, nil)
	// A generous timeout: a Set(InformInfo) OpenSM answers late is
	// resent, and its second copy may be processed after the next Set
	// (1 s was not enough under CI's load; the two requests OpenSM drops
	// cost 2 x 5 s here).
	live, _ := session(t, s, "Hca1", nil, &engine.Options{Timeout: 5 * time.Second, Retries: 1})
	want := smKeyFacts(t, live)

	f, err := sim.Load(topo2sw, &sim.Options{IbsimStrict: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := f.Attach("Hca1", 1)
	if err != nil {
		t.Fatal(err)
	}
	es, err := engine.New(tr, &engine.Options{Timeout: 50 * time.Millisecond, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	got := smKeyFacts(t, es)
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			t.Errorf("%s: ibsim + OpenSM %q, embedded %q", k, want[k], got[k])
		} else {
			t.Logf("%s: %s", k, got[k])
		}
	}
}
