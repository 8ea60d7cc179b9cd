package main

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/bindings"
	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric/ibsim"
)

// TestFlagHint: the library's errors describe the condition without naming
// a flag; the command line adds the flag that changes it.
func TestFlagHint(t *testing.T) {
	for _, tc := range []struct {
		err  error
		flag string
	}{
		{fmt.Errorf("engine: lid:1 PortCounters: %w", engine.ErrSetRefused), "--allow-set"},
		{fmt.Errorf("engine: lid:1 NodeInfo: %w (40 MADs)", engine.ErrMADBudget), "--max-mads"},
		{fmt.Errorf("/etc/x: %w", bindings.ErrFileNotAllowed), "--allow-path"},
		{fmt.Errorf(`ibsim "sim": control socket: connect: connection refused: %w`, ibsim.ErrNoServer), "IBSIM_SOCKNAME"},
		{errors.New("timeout"), ""},
	} {
		if strings.Contains(tc.err.Error(), "--") {
			t.Errorf("engine error %q names a flag", tc.err)
		}
		h := flagHint(tc.err)
		if wrapped := fmt.Errorf("--fabric x: %w%s", tc.err, h); hinted(wrapped) != wrapped.Error() {
			t.Errorf("hinted(%q) = %q, adds the hint twice", wrapped, hinted(wrapped))
		}
		if got := hinted(tc.err); got != tc.err.Error()+h {
			t.Errorf("hinted(%q) = %q, want the hint once", tc.err, got)
		}
		if (tc.flag == "") != (h == "") || !strings.Contains(h, tc.flag) {
			t.Errorf("flagHint(%q) = %q, want it to name %q", tc.err, h, tc.flag)
		}
	}
}
