package ibsimdiff

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
)

// privateIbsim starts an ibsim + OpenSM of the test's own on a copy of
// topology (a test that links and unlinks cables must not share one),
// stopped after the test's other cleanups; it returns the copy's path.
func privateIbsim(t *testing.T, topology string) (*ibsimtest.Sim, string) {
	t.Helper()
	ibsimtest.Require(t)
	src, err := os.ReadFile(topology)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tp := filepath.Join(dir, filepath.Base(topology)+".private")
	if err := os.WriteFile(tp, src, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := ibsimtest.Start(t.Context(), dir, tp, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop) // registered first: runs after the sessions' cleanups
	return s, tp
}

// trapSeen is what a differential trap test compares of one Report.
type trapSeen struct {
	Trap       uint16
	Type       uint8
	Producer   uint32
	IssuerLID  uint16
	IssuerGUID uint64 // IssuerGID's interface ID
	Detail     string // the GID's GUID (64, 65) or the LID (128)
}

func (s trapSeen) String() string {
	return fmt.Sprintf("trap %d type %d producer %d issuer lid %d guid %#x %s", s.Trap, s.Type, s.Producer, s.IssuerLID, s.IssuerGUID, s.Detail)
}

func seen(r engine.Report) trapSeen {
	n := r.Notice
	s := trapSeen{Trap: n.TrapNumber, Type: n.Type, Producer: n.ProducerType, IssuerLID: n.IssuerLID, IssuerGUID: n.IssuerGID.GUID()}
	if g, ok := n.DetailsGID(); ok {
		s.Detail = fmt.Sprintf("gid guid %#x", g.GUID())
	} else if l, ok := n.DetailsLID(); ok {
		s.Detail = fmt.Sprintf("lid %d", l)
	}
	if m, ok := n.DetailsCapabilityMask(); ok {
		s.Detail += fmt.Sprintf(" capability mask %#08x", m)
	}
	return s
}

// collectTraps reads Reports from sub until each of want's trap numbers
// arrived (or the deadline passes), and returns them sorted.
func collectTraps(t *testing.T, sub *engine.Subscription, what string, want ...uint16) []trapSeen {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()
	var got []trapSeen
	missing := slices.Clone(want)
	for len(missing) > 0 {
		r, err := sub.Next(ctx)
		if err != nil {
			t.Fatalf("%s: waiting for traps %v: %v (got %v)", what, missing, err, got)
		}
		got = append(got, seen(r))
		if i := slices.Index(missing, r.Notice.TrapNumber); i >= 0 {
			missing = slices.Delete(missing, i, i+1)
		}
	}
	slices.SortFunc(got, func(a, b trapSeen) int { return int(a.Trap) - int(b.Trap) })
	return got
}

// TestTrapsMatchOpenSM subscribes through OpenSM's SA on live ibsim (the
// session an issm client of Hca3, to which ibsim hands the port's QP1
// requests), unlinks and relinks Hca1's and Hca2's cables through ibsim's
// console, and receives the Reports OpenSM sends: the switch's trap 128
// (ibsim's), then 65 and 64 for the CA's port (OpenSM's sweep). The embedded simulator on the
// same file, with the same subscription and sim.SetLink, gives the same
// traps field for field.
func TestTrapsMatchOpenSM(t *testing.T) {
	s, tp := privateIbsim(t, topo2sw)
	sess, _ := session(t, s, "Hca3", &ibsim.Options{ISSM: true}, nil)
	traps := []uint16{smp.TrapGIDInService, smp.TrapGIDOutOfService, smp.TrapLinkStateChange, smp.TrapLocalChanges}
	sub, err := sess.Subscribe(t.Context(), engine.SubscribeOptions{Traps: traps})
	if err != nil {
		t.Fatal(err)
	}
	// Hca1 hangs off Switch1, where OpenSM runs (both LID 1); Hca2 off
	// Switch2: its trap 128 has another issuer than OpenSM's 64 and 65.
	steps := []struct {
		cmd  string
		node string
		up   bool
		want []uint16
	}{
		{`Unlink "Hca1"[1]`, "Hca1", false, []uint16{128, 65}},
		{`ReLink "Hca1"[1]`, "Hca1", true, []uint16{128, 64}},
		{`Unlink "Hca2"[1]`, "Hca2", false, []uint16{128, 65}},
		{`ReLink "Hca2"[1]`, "Hca2", true, []uint16{128, 64}},
	}
	var live [][]trapSeen
	for _, c := range steps {
		out, err := s.Console(t.Context(), c.cmd)
		if err != nil || strings.Contains(out, "#") {
			t.Fatalf("%s: %q %v", c.cmd, out, err)
		}
		got := collectTraps(t, sub, "ibsim: "+c.cmd, c.want...)
		t.Logf("%s: %v", c.cmd, got)
		live = append(live, got)
	}
	// A client setting IsSM on Hca2's port (SET_ISSM, as opening issm0
	// does): ibsim's trap 144 with the new CapabilityMask, forwarded.
	issm, err := ibsim.Open(t.Context(), s.Sock, &ibsim.Options{Node: "Hca2", ISSM: true, SetISSM: true})
	if err != nil {
		t.Fatal(err)
	}
	got := collectTraps(t, sub, "ibsim: SET_ISSM on Hca2", smp.TrapLocalChanges)
	t.Logf("SET_ISSM on Hca2: %v", got)
	live = append(live, got)
	if err := sub.Close(); err != nil { // before the issm client's Close traps 144 again
		t.Errorf("unsubscribe from OpenSM: %v", err)
	}
	if err := issm.Close(); err != nil {
		t.Error(err)
	}

	f, err := sim.Load(tp, &sim.Options{IbsimStrict: true})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := f.Attach("Hca3", 1)
	if err != nil {
		t.Fatal(err)
	}
	es, err := engine.New(tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer es.Close()
	esub, err := es.Subscribe(t.Context(), engine.SubscribeOptions{Traps: traps})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range steps {
		if err := f.SetLink(c.node, 1, c.up); err != nil {
			t.Fatal(err)
		}
		want := live[i]
		var nums []uint16
		for _, w := range want {
			nums = append(nums, w.Trap)
		}
		got := collectTraps(t, esub, fmt.Sprintf("sim: %s link up=%v", c.node, c.up), nums...)
		if !slices.Equal(got, want) {
			t.Errorf("%s:\nibsim + OpenSM: %v\nembedded:      %v", c.cmd, want, got)
		}
	}
	if err := f.AddSM("Hca2", 1, smp.SMStateStandby, 0); err != nil {
		t.Fatal(err)
	}
	if got, want := collectTraps(t, esub, "sim: AddSM on Hca2", smp.TrapLocalChanges), live[len(steps)]; !slices.Equal(got, want) {
		t.Errorf("IsSM set on Hca2:\nibsim + OpenSM: %v\nembedded:      %v", want, got)
	}
	if err := esub.Close(); err != nil {
		t.Error(err)
	}
}
