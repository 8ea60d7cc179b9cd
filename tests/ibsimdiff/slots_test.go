package ibsimdiff

import (
	"context"
	"os/exec"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/ibsimtest"
)

// attachedRE is a line of ibsim's console command Attached: the slot,
// the client's ID and its node.
var attachedRE = regexp.MustCompile(`(?m)^Client (\d+): pid (\d+) connected at "([^"]*)"`)

// attachedAt counts the ibsim clients attached at node.
func attachedAt(t *testing.T, s *ibsimtest.Sim, node string) int {
	t.Helper()
	out, err := s.Console(t.Context(), "Attached")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range attachedRE.FindAllStringSubmatch(out, -1) {
		if m[3] == node {
			n++
		}
	}
	return n
}

// awaitAttached waits until node has n ibsim clients (a tool started is
// attached once its CONNECT is answered), bounded by a minute.
func awaitAttached(t *testing.T, s *ibsimtest.Sim, node string, n int) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); attachedAt(t, s, node) != n; {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d ibsim clients, want %d", node, attachedAt(t, s, node), n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestKilledToolsGiveSlotsBack: a tool still running when its bound ends
// (ibping -S serves until killed) must not keep one of ibsim's 10 client
// slots. ibscript, sent SIGTERM first (ibscriptCmd), disconnects; the C
// tool under umad2sim disconnects only at exit (atexit), which neither
// SIGTERM nor SIGKILL runs, so its slot stays taken until Release frees
// it. With SIGKILL at once, as exec.CommandContext does by default, each
// run left a slot taken.
func TestKilledToolsGiveSlotsBack(t *testing.T) {
	s, _ := privateSim(t, "../topologies/net.2sw2path4hca")
	for _, c := range []struct {
		name string
		cmd  func(ctx context.Context) *exec.Cmd
	}{
		{"ibscript", func(ctx context.Context) *exec.Cmd { return ibscriptCmd(ctx, t, s, "Hca2", "ibping", "-S") }},
		{"C", func(ctx context.Context) *exec.Cmd {
			cmd, err := s.Command(ctx, "Hca2", "ibping", "-S")
			if err != nil {
				t.Fatal(err)
			}
			return cmd
		}},
	} {
		before := attachedAt(t, s, "Hca2")
		ctx, cancel := context.WithCancel(t.Context())
		cmd := c.cmd(ctx)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		awaitAttached(t, s, "Hca2", before+1)
		cancel()
		// ibscript ends with status 0 on SIGTERM, which Wait reports
		// as ctx's error; the C tool dies of it.
		if err := cmd.Wait(); err == nil {
			t.Fatalf("%s ibping -S: ended by itself, want by its context", c.name)
		}
		if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			t.Errorf("%s ibping -S: killed by SIGKILL, want SIGTERM first", c.name)
		}
		if c.name == "C" {
			// umad2sim disconnects at exit only: its slot is still
			// taken, unless ibsim wrote to it meanwhile and found it
			// gone (nothing here sends it a MAD, so not seen).
			if got := attachedAt(t, s, "Hca2"); got != before+1 {
				t.Logf("C ibping -S ended by SIGTERM: %d clients, ibsim freed its slot itself", got)
			}
			if err := s.Release(t.Context(), cmd); err != nil {
				t.Fatal(err)
			}
		}
		if got := attachedAt(t, s, "Hca2"); got != before {
			t.Errorf("%s ibping -S ended by its context: %d ibsim clients at Hca2, want %d as before", c.name, got, before)
		}
	}
}
