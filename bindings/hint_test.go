package bindings

import (
	"errors"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/fabric"
)

// TestErrorHint: Options.ErrorHint's text follows the message of an error
// a function raises for the errors it names, and only those.
func TestErrorHint(t *testing.T) {
	hint := func(err error) string {
		if errors.Is(err, fabric.ErrTimeout) {
			return " (the host's hint)"
		}
		return ""
	}
	L, _, _ := newTestStateOpts(t, &Options{ErrorHint: hint})
	err := DoString(L, `smp.nodeinfo("lid:999")`)
	if err == nil || strings.Count(err.Error(), "(the host's hint)") != 1 {
		t.Errorf("timeout: %v, want the hint once", err)
	}
	err = DoString(L, `smp.nodeinfo("lid:x")`)
	if err == nil || strings.Contains(err.Error(), "hint") {
		t.Errorf("bad target: %v, want no hint", err)
	}
}
