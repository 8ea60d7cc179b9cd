package main

import (
	"strings"
	"testing"
)

// TestLimitsNameTheirFlags: a limit reached says which flag set it, on
// every path: --time-limit 1ns ended with "context deadline exceeded"
// (the backend's open was cut short and said so), in a chunk, a run, a
// discovery and a tool. The memory limit (errMemoryLimit) ends a run
// through the same cause (TestMemoryLimit runs it in a process of its
// own: its hard end exits).
func TestLimitsNameTheirFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--fabric", "sim:", "--time-limit", "1ns", "-e", "print(1)"},
		{"--fabric", "sim:", "--time-limit", "1ns", "run", "../../scripts/validate.lua"},
		{"--time-limit", "1ns", "discover", "--fabric", "sim:"},
		{"ibnetdiscover", "--fabric", "sim:", "--time-limit", "1ns"},
	} {
		code, _, errOut := ibscript(t, args...)
		if code == exitOK || !strings.Contains(errOut, "time limit reached (--time-limit 1ns)") || strings.Contains(errOut, "deadline exceeded") {
			t.Errorf("%v: exit %d, stderr %q; want the flag named", args, code, errOut)
		}
	}
}
