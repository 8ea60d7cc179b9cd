package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenNeverBlocks: a FIFO with no writer given to sim:, replay:,
// report merge, --node-name-map, dofile, fabric.load or ibscript run
// blocked in open forever; a device (/dev/zero) was read forever. Now
// none blocks: the FIFO reads as empty (and is refused as not a topology,
// a recording or a report), the device is refused by name.
func TestOpenNeverBlocks(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	defer func() {
		if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
			t.Errorf("the FIFO was replaced: %v, %v", fi, err)
		}
	}()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--fabric", "sim:" + fifo, "-e", "print(1)"}, exitError, "not a topology"},
		{[]string{"--fabric", "replay:" + fifo, "-e", "print(1)"}, exitError, "empty recording"},
		{[]string{"report", "merge", fifo}, exitError, fifo},
		{[]string{"--fabric", "sim:", "--node-name-map", "/dev/zero", "-e", "print(1)"}, exitError, "/dev/zero: not a regular file but a character device"},
		{[]string{"--fabric", "sim:", "--node-name-map", fifo, "-e", "print(1)"}, exitOK, ""},
		{[]string{"--fabric", "sim:", "--allow-files", "-e", `dofile("/dev/zero")`}, exitError, "/dev/zero: not a regular file but a character device"},
		{[]string{"--fabric", "sim:", "--allow-files", "-e", `dofile("` + fifo + `")`}, exitOK, ""},
		{[]string{"--fabric", "sim:", "--allow-files", "-e", `fabric.load("` + fifo + `")`}, exitError, "not a regular file but a named pipe"},
		{[]string{"--fabric", "sim:", "run", "/dev/zero"}, exitError, "/dev/zero: not a regular file but a character device"},
		{[]string{"--fabric", "sim:", "run", fifo}, exitOK, ""},
		// The tools' own files: ibhosts' topology file, ibqueryerrors'
		// thresholds and ibtracert's port pairs blocked in open; /dev/null
		// reads as empty, as the C tools read it.
		{[]string{"ibhosts", "--fabric", "sim:", fifo}, exitOK, ""},
		{[]string{"ibhosts", "--fabric", "sim:", "/dev/zero"}, exitFailed, "/dev/zero: not a regular file but a character device"},
		{[]string{"ibqueryerrors", "--fabric", "sim:", "--threshold-file", fifo}, exitOK, ""},
		{[]string{"ibqueryerrors", "--fabric", "sim:", "--threshold-file", "/dev/null"}, exitOK, ""},
		{[]string{"ibtracert", "--fabric", "sim:", "--ports-file", fifo}, exitOK, ""},
		// Written files: a cache is never put in a FIFO's (a device's)
		// place, and the exporter's output goes into one as it is (a
		// FIFO nobody reads: ENXIO, no hang).
		{[]string{"ibnetdiscover", "--fabric", "sim:", "--cache", fifo}, exitIBExit, "not a regular file but a named pipe"},
		{[]string{"exporter", "--fabric", "sim:", "--once", "--output", fifo}, exitError, "no such device or address"},
	} {
		code, _, errOut := ibscript(t, c.args...)
		if code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", c.args, code, errOut, c.code, c.want)
		}
	}
}
