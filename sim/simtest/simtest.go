// Package simtest holds what tests share to run on the embedded simulator:
// the bundled fabric, and an engine session on it (or on any fabric),
// closed when the test ends. It is imported by tests only (internal/archtest).
package simtest

import (
	"context"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/sim"
)

// Load returns the fabric of the topology file path (sim.Load) with
// options o (nil: the defaults), closed when tb ends.
func Load(tb testing.TB, path string, o *sim.Options) *sim.Fabric {
	tb.Helper()
	f, err := sim.Load(path, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// Default returns the bundled fabric (sim.Default) with options o (nil:
// the defaults), closed when tb ends.
func Default(tb testing.TB, o *sim.Options) *sim.Fabric {
	tb.Helper()
	f, err := sim.Default(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// Session returns an engine session with options o (nil: the defaults)
// on f's default port (umad_get_port(NULL, 0)'s; on the simulator the
// SM's), closed when tb ends.
func Session(tb testing.TB, f fabric.Fabric, o *engine.Options) *engine.Session {
	tb.Helper()
	return PortSession(tb, f, "", 0, o)
}

// PortSession is Session on f's port ca/port.
func PortSession(tb testing.TB, f fabric.Fabric, ca string, port int, o *engine.Options) *engine.Session {
	tb.Helper()
	tr, err := f.Open(context.Background(), ca, port)
	if err != nil {
		tb.Fatal(err)
	}
	sess, err := engine.New(tr, o)
	if err != nil {
		tr.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sess.Close() })
	return sess
}

// PlaneTraps checks the traps of a planarized port's session s on the
// fabric f of fattree-xdr-4planes.net, lids its planes' SM LIDs
// (Session.PlaneSMLIDs): subscribed at the port's own SM alone, a link
// change on plane 3 (p3-leaf001 port 3 down) sends it no Report; subscribed
// at every plane's SM, the link coming back gives trap 128 from plane 3's
// SM (lids[2]) within a minute, which s answers with a ReportResp; Close
// leaves the SAs no subscription.
func PlaneTraps(tb testing.TB, f *sim.Fabric, s *engine.Session, lids []uint16) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(tb.Context(), time.Minute)
	defer cancel()
	own, err := s.Subscribe(ctx, engine.SubscribeOptions{Traps: []uint16{128}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := f.SetLink("p3-leaf001", 3, false); err != nil {
		tb.Fatal(err)
	}
	// The SM forwards the trap as the link changes (under SetLink): no
	// Report now is none at all.
	if st := f.ReportStats(); st.Subs != 1 || st.Sent != 0 {
		tb.Errorf("at the port's SM (LID %d) alone: %d subscriptions, %d Reports sent; want 1 and 0", s.Port().SMLID, st.Subs, st.Sent)
	}
	if err := own.Close(); err != nil {
		tb.Error(err)
	}
	all, err := s.Subscribe(ctx, engine.SubscribeOptions{Traps: []uint16{128}, SMLIDs: lids})
	if err != nil {
		tb.Fatal(err)
	}
	if st := f.ReportStats(); st.Subs != len(lids) {
		tb.Errorf("the planes' SAs hold %d subscriptions, want %d", st.Subs, len(lids))
	}
	if err := f.SetLink("p3-leaf001", 3, true); err != nil {
		tb.Fatal(err)
	}
	r, err := all.Next(ctx)
	if err != nil || r.Notice.TrapNumber != 128 || r.From.LID != lids[2] {
		tb.Fatalf("Report %+v, %v; want trap 128 from plane 3's SM, LID %d", r, err, lids[2])
	}
	if err := all.Close(); err != nil {
		tb.Error(err)
	}
	// s sent its ReportResp before the unsubscriptions Close waited for.
	if st := f.ReportStats(); st.Subs != 0 || st.Answered != 1 {
		tb.Errorf("after Close: %d subscriptions left, %d Reports answered; want 0 and 1", st.Subs, st.Answered)
	}
}
