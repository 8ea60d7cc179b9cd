package main

import (
	"regexp"
	"strings"
	"testing"
)

// corruptSends makes the simulator corrupt one random byte of every
// answer and sends 1000 NodeInfo Gets without waiting for answers: a few
// answers come back with a bad base version, which the mux drops.
const corruptSends = `
sim.faults{seed=1, corrupt=1}
local port = umad.open_port()
local agent = umad.register_agent(port, 0x01, 1)
local get = string.char(1, 1, 1, 1) .. string.rep("\0", 11) .. string.char(7, 0, 0x11)
  .. string.rep("\0", 256 - 18)
for i = 1, 1000 do umad.send(port, agent, get, 0, 0, {lid = 2}) end
print(sim.stats().corrupted)
port:close()`

// TestDebugFlag: --debug logs malformed MADs the transport drops (and the
// simulator's notes) on stderr; without it nothing is logged.
func TestDebugFlag(t *testing.T) {
	code, out, errOut := ibscript(t, "--debug", "--fabric", "sim:", "-e", corruptSends)
	if code != 0 || strings.TrimSpace(out) != "1000" {
		t.Fatalf("exit %d, output %q, stderr %s", code, out, errOut)
	}
	line := regexp.MustCompile(`(?m)^time=\S+ level=DEBUG msg="mux: malformed MAD dropped" why="base version \d+, not 1" len=256 slid=2 sqp=0$`)
	if n := len(line.FindAllString(errOut, -1)); n == 0 {
		t.Errorf("stderr has no malformed-MAD line:\n%s", errOut)
	}
	if !strings.Contains(errOut, `level=INFO msg="sim: fabric up" nodes=22`) {
		t.Errorf("stderr lacks the simulator's note:\n%s", errOut)
	}

	code, _, errOut = ibscript(t, "--fabric", "sim:", "-e", corruptSends)
	if code != 0 || strings.Contains(errOut, "level=") {
		t.Errorf("without --debug: exit %d, stderr %q", code, errOut)
	}
}
