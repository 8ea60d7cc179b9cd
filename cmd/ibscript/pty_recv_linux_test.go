package main

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestREPLCtrlCRecv: umad.recv with a negative timeout on a quiet port
// blocks until something arrives; Ctrl-C cancels it, the REPL says so, and
// the session goes on with the same port. A line naming a key stays out
// of the history, and the key given in the environment is never shown.
func TestREPLCtrlCRecv(t *testing.T) {
	home := t.TempDir()
	t.Setenv("IBSCRIPT_MKEY", "0x5ec7e75ec7e75ec7")
	tm := startREPL(t, home, "--fabric=sim:"+topologies+"net.2sw2path4hca")
	pos := tm.expect(0, "> ", nil)

	tm.typ("port = umad.open_port()\r")
	pos = tm.expect(pos, "> ", nil)
	// Nothing is registered, so nothing ever arrives: recv blocks for
	// good. "blocked" shows the line before it ran, never after.
	tm.typ("print(\"blocked\"); r = umad.recv(port, -1); print(\"returned\")\r")
	pos = tm.expect(pos, "blocked\n", nil)
	blocked := pos
	pos = tm.expect(pos, "interrupted\n", func() { tm.typ("\x03") })
	if strings.Contains(tm.screen()[blocked:], "returned") {
		t.Fatalf("recv returned instead of being interrupted:\n%s", tm.screen())
	}

	// The session and the port are still usable: a poll times out as
	// usual, then a request is answered through the same port.
	tm.typ("umad.poll(port, 10)\r")
	pos = tm.expect(pos, "false\n", nil)
	tm.typ("a = umad.register_agent(port, 0x01, 1); umad.send(port, a, string.char(1, 1, 1, 1) .. " +
		"string.rep('\\0', 11) .. string.char(9, 0, 0x11) .. string.rep('\\0', 256 - 18), 100, 3, {lid = 2})\r")
	pos = tm.expect(pos, "> ", nil)
	tm.typ("#umad.recv(port, 1000)\r")
	pos = tm.expect(pos, "256\n", nil)

	// A line naming the key is evaluated but not recorded.
	tm.typ("m_key_used = smp.nodeinfo('lid:1').num_ports\r")
	tm.typ("m_key_used + 1\r")
	tm.expect(pos, "9\n", nil)
	tm.typ("port:close()\r")
	tm.typ("\x04")
	if err := waitExit(tm.cmd, 10*time.Second); err != nil {
		t.Fatalf("ibscript after Ctrl-D: %v\n%s", err, tm.screen())
	}
	hist, err := os.ReadFile(home + "/ibscript/history")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(hist), "umad.recv(port, -1)") || strings.Contains(string(hist), "m_key") {
		t.Errorf("history (want the recv line, no m_key line):\n%s", hist)
	}
	if s := strings.ToLower(tm.screen() + string(hist)); strings.Contains(s, "5ec7e75ec7e75ec7") {
		t.Errorf("the M_Key from IBSCRIPT_MKEY was shown:\n%s", s)
	}
}

// TestREPLCtrlCStuckPatternMatch: Ctrl-C stops a pattern match that
// would backtrack for hours (ibscript's matcher watches the call's
// context) and the session goes on (before, Ctrl-C did nothing and only
// SIGKILL ended it).
func TestREPLCtrlCStuckPatternMatch(t *testing.T) {
	tm := startREPL(t, t.TempDir(), "--fabric=sim:")
	holdSlave(t, tm)
	pos := tm.expect(0, "> ", nil)
	tm.typ("print('matching'); s = string.rep('a', 20000); print(s:find('.-.-.-.-.-b'))\r")
	pos = tm.expect(pos, "matching\n", nil)
	c := &child{cmd: tm.cmd}
	c.burning(t)
	tm.typ("\x03")
	pos = tm.expect(pos, "interrupted", nil)
	tm.typ("1 + 1\r")
	tm.expect(pos, "2\n", nil)
	tm.typ("\x04")
	if err := waitExit(tm.cmd, hangLimit); err != nil {
		t.Errorf("after Ctrl-D: %v\n%s", err, tm.screen())
	}
}

// TestREPLSIGTERMAtPrompt: SIGTERM (SIGHUP, SIGQUIT) while the REPL waits
// for a line ends the session at once with status 2, its ports closed
// (before, the session went on waiting for the line).
func TestREPLSIGTERMAtPrompt(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGHUP} {
		tm := startREPL(t, t.TempDir(), "--fabric=sim:")
		hold := holdSlave(t, tm)
		pos := tm.expect(0, "> ", nil)
		tm.typ("1 + 1\r")
		pos = tm.expect(pos, "2\n", nil)
		tm.expect(pos, "> ", nil)
		tm.cmd.Process.Signal(sig)
		err := waitExit(tm.cmd, hangLimit)
		if code := tm.cmd.ProcessState.ExitCode(); code != exitError {
			t.Fatalf("%v: exit %v (status %d), want %d:\n%s", sig, err, code, exitError, tm.screen())
		}
		tm.expect(pos, "interrupted by "+signalName(sig), nil)
		if s := tm.screen(); strings.Contains(s, "did not return") {
			t.Errorf("%v: the screen shows:\n%s", sig, s)
		}
		hold.Close()
	}
}

// holdSlave opens the terminal's slave side once more, so that the
// terminal does not hang up when ibscript exits: what it wrote just
// before stays readable (after a hang-up, Linux may drop it).
func holdSlave(t *testing.T, tm *term) *os.File {
	t.Helper()
	n, err := unix.IoctlGetInt(int(tm.pty.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Closed before startREPL's cleanup waits for the terminal's reader,
	// which ends only when no slave side is left open.
	t.Cleanup(func() { f.Close() })
	return f
}

// TestREPLCtrlCStuckGoCall: a Go call that ignores Ctrl-C holds the
// session's Lua state, which cannot be used while it runs: after the
// grace period the REPL says so and ends the session with status 2, its
// ports closed and the terminal given back; Ctrl-C again ends it at once.
func TestREPLCtrlCStuckGoCall(t *testing.T) {
	t.Setenv(stuckEnv, "1")
	for _, tc := range []struct {
		again bool // Ctrl-C again until the session ends (two at once are one signal)
		want  string
	}{
		{false, "interrupted by SIGINT (Ctrl-C); the call did not stop within 2s"},
		{true, "interrupted by SIGINT (Ctrl-C); a second Ctrl-C arrived while the call was not stopping"},
	} {
		tm := startREPL(t, t.TempDir(), "--fabric=sim:")
		hold := holdSlave(t, tm)
		pos := tm.expect(0, "> ", nil)
		tm.typ("stuck_go_call()\r")
		pos = tm.expect(pos, "ready\n", nil)
		tm.typ("\x03")
		var again func()
		if tc.again {
			again = func() { tm.typ("\x03") }
		}
		tm.expect(pos, tc.want, again)
		err := waitExit(tm.cmd, hangLimit)
		if code := tm.cmd.ProcessState.ExitCode(); code != exitError {
			t.Errorf("exit %v (status %d), want %d:\n%s", err, code, exitError, tm.screen())
		}
		hold.Close()
	}
}
