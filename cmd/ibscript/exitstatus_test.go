package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExitStatusIsTheReports: os.exit takes a status in 0..255 (256 and
// 2^40 exited 0, the kernel keeping the low byte), and a plan's status
// is its report's: os.exit(0) after a failed check printed no report and
// exited 0, a wrong "passed"; now the report is written and the worse
// status wins. A chunk (-e) that checks gets its report and status too.
func TestExitStatusIsTheReports(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name, src string
		want      int
		out       string // in stdout
	}{
		{"256", `os.exit(256)`, 2, ""},
		{"2^40", `os.exit(2^40)`, 2, ""},
		{"-1", `os.exit(-1)`, 2, ""},
		{"1.5", `os.exit(1.5)`, 2, ""},
		{"255", `os.exit(255)`, 255, ""},
		{"3 without a plan", `os.exit(3)`, 3, ""},
		{"0 after a failed check", `plan.check("x", function(r) r:fail("no") end) os.exit(0)`, 1, "0 checks passed, 1 failed"},
		{"0 inside a failed check", `plan.check("x", function(r) r:fail("no") os.exit(0) end)`, 1, "1 failed"},
		{"0 after passed checks", `plan.check("x", function(r) r:pass("yes") end) os.exit(0)`, 0, "1 checks passed, 0 failed"},
		{"3 after passed checks", `plan.check("x", function(r) r:pass("yes") end) os.exit(3)`, 3, "1 checks passed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".lua")
			if err := os.WriteFile(file, []byte(c.src), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := ibscript(t, "run", "--fabric", "sim:", file)
			if code != c.want || !strings.Contains(out, c.out) {
				t.Errorf("run: exit %d, want %d; stdout %q (want %q); stderr %q", code, c.want, out, c.out, errOut)
			}
			code, out, errOut = ibscript(t, "--fabric", "sim:", "-e", c.src)
			if code != c.want || !strings.Contains(out, c.out) {
				t.Errorf("-e: exit %d, want %d; stdout %q (want %q); stderr %q", code, c.want, out, c.out, errOut)
			}
		})
	}
	code, _, errOut := ibscript(t, "--fabric", "sim:", "-e", "os.exit(256)")
	if !strings.Contains(errOut, "exit status 256 is not an integer in 0..255") {
		t.Errorf("os.exit(256): exit %d, stderr %q", code, errOut)
	}
}
