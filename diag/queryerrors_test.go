package diag

import "testing"

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
