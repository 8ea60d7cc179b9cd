package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/fabric/record"
	"github.com/ibscript/ibscript/internal/syncbuf"
)

// stuckEnv makes the child ibscript offer stuck_go_call(), a Go function
// that never returns and never looks at its context: what a call blocked
// in the kernel looks like to the guard.
const stuckEnv = "IBSCRIPT_TEST_STUCK_GO"

// Set during package initialisation, before pty_linux_test.go's init
// runs the child.
var _ = func() bool {
	if os.Getenv(stuckEnv) == "1" {
		testHookLua = func(L *lua.LState) {
			L.SetGlobal("stuck_go_call", L.NewFunction(func(*lua.LState) int {
				os.Stdout.WriteString("ready\n") // inside the call: a signal now finds it stuck
				for {
					time.Sleep(time.Hour)
				}
			}))
		}
	}
	return true
}()

// hangLimit is how long a child may take to end after its signal or
// time limit before the test calls it a hang: far above the guard's
// grace period, so that a loaded machine (the race detector, other
// builds) does not fail the test, far below the hours a stuck call would
// take. startLimit bounds the child's start and its burning CPU.
const (
	hangLimit  = 30 * time.Second
	startLimit = 2 * time.Minute
)

// child is ibscript (this test binary) running a script that prints
// "ready" before it gets stuck.
type child struct {
	cmd    *exec.Cmd
	stderr *syncbuf.Buffer
	waited bool
}

// startStuck writes script to a file, runs `ibscript run FILE` with args
// and env, and returns once the script printed "ready".
func startStuck(t *testing.T, env []string, script string, args ...string) *child {
	t.Helper()
	file := filepath.Join(t.TempDir(), "stuck.lua")
	if err := os.WriteFile(file, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], append(append([]string{"run"}, args...), file)...)
	cmd.Env = append(append(os.Environ(), replChildEnv+"=1"), env...)
	c := &child{cmd: cmd, stderr: &syncbuf.Buffer{}}
	cmd.Stderr = c.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !c.waited {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	slow := time.AfterFunc(startLimit, func() { cmd.Process.Kill() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if !slow.Stop() || err != nil || line != "ready\n" {
		t.Fatalf("child said %q, %v (killed after %v without a line); stderr %s", line, err, startLimit, c.stderr.String())
	}
	return c
}

// cpuTicks is the child's user and system CPU time in clock ticks.
func (c *child) cpuTicks(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// Fields after the command name, which ends with the last ')'.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	utime, err1 := strconv.Atoi(f[11])
	stime, err2 := strconv.Atoi(f[12])
	if err1 != nil || err2 != nil {
		t.Fatalf("/proc/%d/stat: %q", c.cmd.Process.Pid, b)
	}
	return utime + stime
}

// burning waits until the child has spent 300 ms of CPU since it said
// "ready": what is left of patternScript then is the pattern match, so a
// signal finds it stuck there rather than between two Lua instructions.
func (c *child) burning(t *testing.T) {
	t.Helper()
	start, deadline := c.cpuTicks(t), time.Now().Add(startLimit)
	for c.cpuTicks(t) < start+30 { // 100 ticks a second on Linux
		if time.Now().After(deadline) {
			t.Fatalf("the child did not spend 300 ms of CPU in the pattern match in %v", startLimit)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// end waits for the child and checks that it ended by itself (not at the
// test's hang limit) with status 2 and want on stderr.
func (c *child) end(t *testing.T, want string) {
	t.Helper()
	c.waited = true
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(hangLimit):
		c.cmd.Process.Kill()
		<-done
		t.Fatalf("child still running %v after its end began (killed); stderr %s", hangLimit, c.stderr.String())
	}
	if code := c.cmd.ProcessState.ExitCode(); code != exitError || !strings.Contains(c.stderr.String(), want) {
		t.Errorf("exit status %d, stderr %q; want %d and %q", code, c.stderr.String(), exitError, want)
	}
}

const (
	// patternScript backtracks for hours inside one Go call (string.find);
	// ibscript's pattern matcher sees the run end and stops, so the run
	// ends without the forced exit ("a call did not return").
	patternScript = "smp.nodeinfo('lid:1')\nprint('ready')\nlocal s = string.rep('a', 20000)\nprint(s:find('.-.-.-.-.-b'))\n"
	goCallScript  = "smp.nodeinfo('lid:1')\nstuck_go_call()\n"
)

// TestStuckCallsEnd: a Lua pattern match that would backtrack for hours
// stops when the run ends, and a Go call that never returns is abandoned
// after the grace period: either way the run ends after --time-limit or a signal,
// with exit status 2, the ibsim client slot returned and the recording
// flushed. Before the guard, only SIGKILL ended them (leaking the slot).
func TestStuckCallsEnd(t *testing.T) {
	s := startIbsim(t)
	fab := "--fabric=ibsim:" + s.Sock + "?node=Hca2"
	for _, tc := range []struct {
		name   string
		script string
		sig    syscall.Signal // 0: --time-limit 1s
		want   string
	}{
		{"pattern/time-limit", patternScript, 0, "time limit reached (--time-limit 1s)\n"},
		{"pattern/SIGTERM", patternScript, syscall.SIGTERM, "interrupted by SIGTERM\n"},
		{"pattern/SIGINT", patternScript, syscall.SIGINT, "interrupted by SIGINT\n"},
		{"pattern/SIGHUP", patternScript, syscall.SIGHUP, "interrupted by SIGHUP\n"},
		{"pattern/SIGQUIT", patternScript, syscall.SIGQUIT, "interrupted by SIGQUIT\n"},
		{"go-call/time-limit", goCallScript, 0, "time limit reached (--time-limit 1s); a call did not return"},
		{"go-call/SIGTERM", goCallScript, syscall.SIGTERM, "interrupted by SIGTERM; a call did not return"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := len(attached(t, s)) // OpenSM, and a slot an earlier subtest leaked
			rec := filepath.Join(t.TempDir(), "rec.jsonl")
			args := []string{fab, "--record", rec}
			if tc.sig == 0 {
				args = append(args, "--time-limit", "1s")
			}
			c := startStuck(t, []string{stuckEnv + "=1"}, tc.script, args...)
			if n := len(attached(t, s)); n != base+1 {
				t.Errorf("while running: %d clients attached, want %d", n, base+1)
			}
			if tc.sig != 0 {
				if tc.script == patternScript {
					c.burning(t)
				}
				c.cmd.Process.Signal(tc.sig)
			}
			c.end(t, tc.want)
			if n := len(attached(t, s)); n != base {
				t.Errorf("after the end %d clients attached, want %d (the slot leaked)", n, base)
			}
			r, err := record.ReadFile(rec)
			if err != nil {
				t.Fatalf("recording: %v", err)
			}
			if len(r.Events) < 2 {
				t.Errorf("recording has %d events, want the NodeInfo query and its answer", len(r.Events))
			}
		})
	}
}

// TestSecondSignalEndsAtOnce: a second signal while a stuck run waits
// for its grace period ends it at once. (Two different signals: the
// kernel merges a signal sent twice before it is delivered.)
func TestSecondSignalEndsAtOnce(t *testing.T) {
	c := startStuck(t, []string{stuckEnv + "=1"}, goCallScript, "--fabric=sim:")
	c.cmd.Process.Signal(syscall.SIGTERM)
	c.cmd.Process.Signal(syscall.SIGHUP)
	c.end(t, "arrived while it was ending")
}

// TestMemoryLimit: a plan whose heap grows past --memory-limit ends with
// status 2 and a message naming the flag, its ibsim slot returned,
// whether it grows in Lua (stopped at the next instruction) or inside one
// Go call (string.gsub, abandoned); one allocation too large for the
// limit is refused before it is made, pcall or not.
func TestMemoryLimit(t *testing.T) {
	s := startIbsim(t)
	fab := "--fabric=ibsim:" + s.Sock + "?node=Hca2"
	for _, tc := range []struct{ name, script, want string }{
		{"lua loop", `print('ready')
plan.check("grows", function()
	local t = {}
	for i = 1, 1e9 do t[i] = string.rep("x", 1000) .. i end
end)
`, "memory limit reached (--memory-limit 64 MiB; the heap held"},
		{"one go call", `print('ready')
local s = string.rep("x", 2^20)
s:gsub(".", string.rep("y", 4096))
`, "memory limit reached (--memory-limit 64 MiB): string.gsub would allocate"},
		{"string.rep", `print('ready')
print(pcall(string.rep, ("x"):rep(2^20), 2^20))
print("still running")
`, "memory limit reached (--memory-limit 64 MiB): string.rep would allocate 1 TiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := len(attached(t, s))
			c := startStuck(t, nil, tc.script, fab, "--memory-limit", "64MiB")
			c.end(t, tc.want)
			if n := len(attached(t, s)); n != base {
				t.Errorf("after the end %d clients attached, want %d (the slot leaked)", n, base)
			}
		})
	}
}

// TestAllocationChecks: string.rep, table.concat and string.format
// refuse a result past the memory limit before making it (Go's fatal
// out-of-memory error, which skips every cleanup, before), and the run
// ends even when the script catches the error.
func TestAllocationChecks(t *testing.T) {
	for _, tc := range []struct{ chunk, want string }{
		// the count is a C int, as Lua 5.1's luaL_checkint reads it
		{`string.rep(("x"):rep(2^20), 2^20)`, "string.rep would allocate 1 TiB"},
		{`("x"):rep(2^31 - 1):rep(2^31 - 1)`, "string.rep would allocate 2 GiB"},
		{`local s = string.rep("x", 2^20); local t = {}; for i = 1, 600 do t[i] = s end; table.concat(t)`, "table.concat would allocate 600 MiB"},
		{`local t = {}; for i = 1, 600 do t[i] = 1 end; string.format(string.rep("%999999d", 600), unpack(t))`, "string.format would allocate 572.2 MiB"},
		{`pcall(string.rep, ("x"):rep(2^20), 2^20); print("went on")`, "string.rep would allocate 1 TiB"},
		// '..' doubling a string ended in Go's fatal "out of memory"
		// under an address-space limit, and passed the limit 1.8 times.
		// Which doubling is refused depends on how much the collector
		// has freed of the earlier ones (128 MiB with 207 MiB in use
		// under load), so the size is not part of what is checked.
		{`local s = "x" while true do s = s .. s end`, "'..' would allocate"},
		{`local s = "x" while true do pcall(function() s = s .. s .. "" end) end`, "'..' would allocate"},
		// gsub building a huge result passed the limit 1.4 times.
		{`local s = string.rep("x", 2^20) s:gsub(".", string.rep("y", 4096))`, "string.gsub would allocate"},
	} {
		code, out, errOut := ibscript(t, "--fabric", "sim:", "--memory-limit", "256MiB", "-e", tc.chunk)
		if code != exitError || !strings.Contains(errOut, "memory limit reached (--memory-limit 256 MiB)") || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2 and %q", tc.chunk, code, out, errOut, tc.want)
		}
	}
	// Under the limit, the same functions work as before.
	code, out, errOut := ibscript(t, "--fabric", "sim:", "--memory-limit", "256MiB", "-e",
		`print(#string.rep("ab", 3 * 2^20), #table.concat({"a", "b", 1}, ","), string.format("%5d|%-3s", 42, "x"))`)
	if code != exitOK || out != "6291456\t5\t   42|x  \n" {
		t.Errorf("under the limit: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestLoadRefusesDevices: fabric.load of /dev/zero is refused at once
// (it grew to 24 GB before), even where every file is allowed (without
// --allow-files it is outside the paths a run may use: files_test.go).
func TestLoadRefusesDevices(t *testing.T) {
	code, _, errOut := ibscript(t, "--fabric", "sim:", "--allow-files", "-e", `fabric.load("/dev/zero")`)
	if code != exitError || !strings.Contains(errOut, "/dev/zero: not a regular file but a character device") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestMemoryLimitFlag(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
	}{{"0", 0}, {"4GiB", 4 << 30}, {"512M", 512 << 20}, {"512MB", 512 << 20}, {"1048576", 1 << 20}, {"2t", 2 << 40}} {
		if got, err := parseSize(tc.in); err != nil || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "-1", "4X", "GiB", "99999999999T"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
	if code, _, errOut := ibscript(t, "--memory-limit", "lots", "-e", "print(1)"); code != exitError || !strings.Contains(errOut, "memory-limit") {
		t.Errorf("--memory-limit lots: exit %d, stderr %q", code, errOut)
	}
	if d := defaultMemoryLimit(); d < 256<<20 || d > defaultMemoryLimitCap {
		t.Errorf("default memory limit %d out of [256 MiB, 4 GiB]", d)
	}
}

// TestREPLAllocationRefused: in the REPL a refused allocation is the
// chunk's error, said in words (it printed "userdata: 0x..."), and the
// session goes on.
func TestREPLAllocationRefused(t *testing.T) {
	c := &config{fabricURI: "sim:", memLimit: memoryLimitFlag{v: 256 << 20, set: true}}
	b, L, env, err := newLua(t.Context(), c, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer closeLua(b, L, env, 0, io.Discard)
	ev := &evaluator{L: L}
	_, err = ev.Eval(t.Context(), `string.rep(("x"):rep(2^20), 2^20)`)
	if err == nil || !strings.Contains(shortTrace(err), "string.rep: would allocate 1 TiB") {
		t.Errorf("refused allocation: %v", err)
	}
	if out, err := ev.Eval(t.Context(), "1 + 1"); err != nil || out != "2" {
		t.Errorf("after it: %q, %v", out, err)
	}
}
