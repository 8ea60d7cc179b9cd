package diag

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/topo"
)

// TestHuman: conv_cnt_human_readable's text, powers of 1024 in single
// precision; data counters count 4-byte words (so bytes, and a unit up
// once the bytes pass 1024 of the current one).
func TestHuman(t *testing.T) {
	for _, c := range []struct {
		v    uint64
		data bool
		want string
	}{
		{0, false, "0.000"},
		{5, false, "5.000"},
		{1023, false, "1023.000"},
		{1024, false, "1.000K"},
		{1 << 20, false, "1.000M"},
		{1536, false, "1.500K"},
		{0, true, "0.000B"},
		{216, true, "864.000B"},
		{360, true, "1.406KB"},   // 1440 bytes
		{256, true, "1024.000B"}, // exactly 1024 bytes: not past it
		{1 << 20, true, "4.000MB"},
		{1 << 62, true, "16.000EB"},
		{1<<64 - 1, false, "16.000E"},
	} {
		if got := human(c.v, c.data); got != c.want {
			t.Errorf("human(%d, %v) = %q, want %q", c.v, c.data, got, c.want)
		}
	}
}

// TestThresholdsText: ibqueryerrors' summary line lists the file's lines
// in order, a counter set twice twice, and Of takes the last.
func TestThresholdsText(t *testing.T) {
	ts := Thresholds{{"SymbolErrorCounter", 5}, {"PortXmitWait", 100}, {"SymbolErrorCounter", 4}}
	if got, want := ts.Text(), "Thresholds: [SymbolErrorCounter = 5][PortXmitWait = 100][SymbolErrorCounter = 4]"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	if ts.Of("SymbolErrorCounter") != 4 || ts.Of("VL15Dropped") != 0 {
		t.Errorf("Of: %d %d", ts.Of("SymbolErrorCounter"), ts.Of("VL15Dropped"))
	}
	if got := Thresholds(nil).Text(); got != "Thresholds: " {
		t.Errorf("no thresholds: %q", got)
	}
}

// TestQueryErrorsSkipNoLID: net.mixed-router's router has node GUID 0,
// which the SM gives no LID (as OpenSM). ibqueryerrors asks its PMA at
// LID 0: three PMA query failures (ClassPortInfo at port 1, PortCounters
// of ports 1 and 2), which the simulator leaves to time out. SkipNoLID
// sends none of them: the same summary, and one warning per port naming
// it, each could-not-be-read, not a timeout's text. Either way both ports
// are counted checked (as ibqueryerrors counts them) and not read. The router alone is
// read (--router): no other PMA's answer, late on a loaded machine, can
// add a failure to either reading.
func TestQueryErrorsSkipNoLID(t *testing.T) {
	s, _ := simAnalyzed(t, "../tests/topologies/net.mixed-router", &engine.Options{Timeout: 200 * time.Millisecond, Retries: 1})
	e := &Env{Session: s}
	routers := []topo.NodeType{topo.Router}
	asked, err := QueryErrorsOf(t.Context(), e, QueryErrorsOptions{Types: routers})
	if err != nil {
		t.Fatal(err)
	}
	skipped, err := QueryErrorsOf(t.Context(), e, QueryErrorsOptions{Types: routers, SkipNoLID: true})
	if err != nil {
		t.Fatal(err)
	}
	if asked.Summary.PMAQueryFailures != 3 {
		t.Errorf("ibqueryerrors' reading: %d PMA query failures, want 3 (as the C tool on ibsim): %q", asked.Summary.PMAQueryFailures, asked.Warnings)
	}
	if diff := cmp.Diff(asked.Summary, skipped.Summary); diff != "" {
		t.Errorf("summary with SkipNoLID differs from ibqueryerrors' (-ibqueryerrors +SkipNoLID):\n%s", diff)
	}
	if asked.PortsNotRead != 2 || skipped.PortsNotRead != 2 {
		t.Errorf("ports not read %d and %d, want 2 (the router's two, both counted checked)", asked.PortsNotRead, skipped.PortsNotRead)
	}
	want := []string{"Rt1 port 1: has no LID: the SM did not configure it", "Rt1 port 2: has no LID: the SM did not configure it"}
	if !slices.Equal(skipped.Warnings, want) || !slices.Equal(skipped.Unreadable, want) {
		t.Errorf("warnings %q, unreadable %q; want both %q", skipped.Warnings, skipped.Unreadable, want)
	}
}
