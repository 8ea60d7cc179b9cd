package main

import (
	"path/filepath"
	"testing"
)

// TestRecordReplayValidate records scripts/validate.lua on the simulator
// (--record) and replays it (--fabric replay:FILE): the same report.
func TestRecordReplayValidate(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "run.jsonl")
	code, want, errOut := ibscript(t, "run", "--fabric", "sim:", "--record", rec, "--format", "tap", "../../scripts/validate.lua")
	if code != 0 {
		t.Fatalf("recorded run: exit %d: %s", code, errOut)
	}
	code, got, errOut := ibscript(t, "run", "--fabric", "replay:"+rec, "--format", "tap", "../../scripts/validate.lua")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s\n%s", code, errOut, lineDiff(want, got))
	}
	if d := lineDiff(want, got); d != "" {
		t.Errorf("replay differs (-recorded +replayed):\n%s", d)
	}
	if code, _, errOut := ibscript(t, "--fabric", "replay:", "-e", "print(1)"); code != 2 || errOut == "" {
		t.Errorf("replay: with no file: exit %d, %q", code, errOut)
	}
}
