package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const devFull = "/dev/full" // every write fails with ENOSPC

func needDevFull(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(devFull); err != nil {
		t.Skipf("%s: %v", devFull, err)
	}
}

// TestAuditFailsClosed: with an audit file that cannot be written, a Set
// (typed, or raw through umad.send) is not sent: it fails with an error
// naming the audit file, the simulator never sees it, and a run that
// does not catch the error exits 2.
func TestAuditFailsClosed(t *testing.T) {
	needDevFull(t)
	code, out, errOut := ibscript(t, "--fabric", "sim:", "--audit", devFull, "-e", `
		local before = sim.stats().requests
		print(pcall(perf.reset, "lid:1", 1))
		local set = string.char(1, 0x01, 1, 0x02) .. string.rep("\0", 12) .. string.char(0x00, 0x15, 0, 0)
			.. string.rep("\0", 256 - 20)
		local port = umad.open_port()
		local agent = umad.register_agent(port, 0x01, 1)
		print(pcall(umad.send, port, agent, set, 100, 0, { lid = 1 }))
		print(sim.stats().requests - before)`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 {
		t.Fatalf("output %q", out)
	}
	for _, l := range lines[:2] {
		if !strings.HasPrefix(l, "false\t") || !strings.Contains(l, "--audit "+devFull) || !strings.Contains(l, "Set not sent") {
			t.Errorf("Set with an unwritable audit: %q, want false and an error naming --audit %s", l, devFull)
		}
	}
	if lines[2] != "0" {
		t.Errorf("%s requests reached the fabric, want 0", lines[2])
	}
	code, _, errOut = ibscript(t, "--fabric", "sim:", "--audit", devFull, "-e", `perf.reset("lid:1", 1)`)
	if code != exitError || !strings.Contains(errOut, devFull) {
		t.Errorf("uncaught: exit %d, stderr %q; want 2 naming %s", code, errOut, devFull)
	}
}

// TestRecordFailsClosed: a recording that cannot be written ends the run
// with status 2 and a message naming it, whether the run is a chunk, a
// plan or a discovery (fabric/record TestRecorderFailsClosed: no MAD goes
// out after the failure).
func TestRecordFailsClosed(t *testing.T) {
	needDevFull(t)
	for _, args := range [][]string{
		{"-e", "fabric.discover()"},
		{"run", "../../scripts/validate.lua"},
		{"discover"},
	} {
		t.Run(args[0], func(t *testing.T) {
			code, _, errOut := ibscript(t, append([]string{"--fabric", "sim:", "--record", devFull}, args...)...)
			if code != exitError || !strings.Contains(errOut, "--record "+devFull) {
				t.Errorf("exit %d, stderr %q; want 2 naming --record %s", code, errOut, devFull)
			}
		})
	}
}

// TestReportFailsClosed: a plan report that cannot be written (stdout on
// /dev/full) is exit status 2, in every format.
func TestReportFailsClosed(t *testing.T) {
	needDevFull(t)
	for _, format := range []string{"text", "json", "tap", "junit"} {
		t.Run(format, func(t *testing.T) {
			f, err := os.OpenFile(devFull, os.O_WRONLY, 0)
			if err != nil {
				t.Skip(err)
			}
			defer f.Close()
			var stderr bytes.Buffer
			code := run([]string{"run", "--fabric", "sim:", "--format", format, "../../scripts/validate.lua"}, strings.NewReader(""), f, &stderr)
			if code != exitError || !strings.Contains(stderr.String(), "report") {
				t.Errorf("exit %d, stderr %q; want 2 and a message about the report", code, stderr.String())
			}
		})
	}
}

// TestRecordMode: a recording is created 0600, and an existing one
// narrowed to it.
func TestRecordMode(t *testing.T) {
	rec := filepath.Join(t.TempDir(), "r.jsonl")
	if err := os.WriteFile(rec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, errOut := ibscript(t, "--fabric", "sim:", "--record", rec, "-e", "smp.nodeinfo(1)"); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	fi, err := os.Stat(rec)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("recording mode %v (%v), want 0600", fi.Mode(), err)
	}
}
