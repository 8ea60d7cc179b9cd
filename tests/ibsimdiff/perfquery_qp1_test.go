package ibsimdiff

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPerfQueryQP1Dropped: perfquery prints PortCounters' QP1Dropped
// from VL15Dropped's bits, as libibmad's field table makes it (issue 34
// item 4): with VL15Dropped 5 set through ibsim's console (which has no
// QP1Dropped to set: it stays 0), the C tool and ibscript perfquery both
// print 5 on both lines, and ibscript's JSON keeps the IBA's field: value
// 0 (its text what the C tool prints), VL15Dropped 5.
func TestPerfQueryQP1Dropped(t *testing.T) {
	s := privateSM(t, topo2sw)
	if out, err := s.Console(t.Context(), `PerformanceSet "Hca2"[1] PortCounters.VL15Dropped=5`); err != nil || !strings.Contains(out, "has been set") {
		t.Fatalf("PerformanceSet: %q %v", out, err)
	}
	want := diffTool(t, s, "Hca2", "perfquery")
	if !strings.Contains(string(want.stdout), "QP1Dropped:......................5\n") {
		t.Errorf("perfquery does not print VL15Dropped's 5 as QP1Dropped:\n%s", want.stdout)
	}
	diffTool(t, s, "Hca2", "perfquery", "-a")
	got := ibscriptTool(t, s, "Hca2", "perfquery", "--format", "json")
	var q struct {
		Blocks []struct {
			Fields []struct {
				Name  string `json:"name"`
				Value uint64 `json:"value"`
				Text  string `json:"text"`
			} `json:"fields"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(got.stdout, &q); err != nil || len(q.Blocks) == 0 {
		t.Fatalf("perfquery --format json: %v\n%s", err, got.stdout)
	}
	seen := 0
	for _, f := range q.Blocks[0].Fields {
		switch f.Name {
		case "QP1Dropped":
			seen++
			if f.Value != 0 || f.Text != "5" {
				t.Errorf("JSON QP1Dropped value %d text %q, want the IBA's 0 and the C tool's text 5", f.Value, f.Text)
			}
		case "VL15Dropped":
			seen++
			if f.Value != 5 {
				t.Errorf("JSON VL15Dropped %d, want 5", f.Value)
			}
		}
	}
	if seen != 2 {
		t.Errorf("JSON lacks QP1Dropped or VL15Dropped:\n%s", got.stdout)
	}
}
