package main

import (
	"strings"
	"testing"
)

// TestNumbersAtTheEdge: negative and absurd counts and durations are
// refused with the flag's name, before anything runs.
func TestNumbersAtTheEdge(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--retries", "-5"}, "--retries -5: want 0 to 100"},
		{[]string{"--retries", "1000000"}, "--retries 1000000: want 0 to 100"},
		{[]string{"--timeout", "-1s"}, "timeout"},
		{[]string{"--timeout", "1000h"}, "--timeout 1000h0m0s: want at most 10m0s"},
		{[]string{"--time-limit", "-1s"}, "--time-limit -1s"},
		{[]string{"--max-mads", "-1"}, "max-mads"},
	} {
		code, out, errOut := ibscript(t, append(append([]string{"--fabric", "sim:"}, tc.args...), "-e", "print('ran')")...)
		if code != exitError || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
	// The same in Lua: a wait of 1e300 seconds overflowed into none.
	code, out, errOut := ibscript(t, "--fabric", "sim:", "-e", `print(pcall(plan.sleep, 1e300)) print(pcall(plan.sleep, -1)) print(pcall(plan.sleep, 0/0))`)
	if lines := strings.Split(out, "\n"); code != 0 || len(lines) != 4 || !strings.Contains(lines[0], "false") || !strings.Contains(lines[0], "at most 86400") ||
		!strings.HasPrefix(lines[1], "false") || !strings.HasPrefix(lines[2], "false") {
		t.Errorf("plan.sleep out of range: exit %d, %q %q", code, out, errOut)
	}
	if code, out, errOut := ibscript(t, "--fabric", "sim:", "--retries", "0", "--timeout", "10m", "-e", "print('ran')"); code != 0 || out != "ran\n" {
		t.Errorf("bounds themselves: exit %d, %q %q", code, out, errOut)
	}
}
