package engine_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/engine"
)

// targetSeeds are the texts FuzzParseTarget starts from: each form, its
// limits, and what is not one.
var targetSeeds = []string{"lid:5", "lid:0x5", "5", "0x5", "0xbfff", "0xc000", "0", "-1", "lid:", "dr:0,1,3", "dr:0", "dr:",
	"dr:0,,1", "dr:0,256", "guid:0x0002c90300001234", "guid:0", "gid:fd00::2", "gid:10.0.0.1", "gid:zz",
	"lid:6+dr:0,12", "lid:6+dr:", "+dr:0", "lid:99999999999999999999", "\xff\xfe", "", " lid:5"}

// FuzzParseTarget: every text ParseTarget reads gives a target whose
// String reads back to the same target, and every text it refuses
// gives an error wrapping ErrBadTarget that quotes the input; it never
// panics.
func FuzzParseTarget(f *testing.F) {
	for _, seed := range targetSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := engine.ParseTarget(s)
		if err != nil {
			if !errors.Is(err, engine.ErrBadTarget) {
				t.Errorf("ParseTarget(%q): %v, not wrapping ErrBadTarget", s, err)
			}
			if q := fmt.Sprintf("%q", s); !strings.Contains(err.Error(), q) {
				t.Errorf("ParseTarget(%q): %q does not quote the input", s, err)
			}
			return
		}
		back, err := engine.ParseTarget(tg.String())
		if err != nil {
			t.Fatalf("ParseTarget(%q) = %v, whose String %q does not read back: %v", s, tg, tg.String(), err)
		}
		if d := cmp.Diff(tg, back); d != "" {
			t.Errorf("ParseTarget(%q) then String %q reads back otherwise (-first +back):\n%s", s, tg.String(), d)
		}
	})
}
