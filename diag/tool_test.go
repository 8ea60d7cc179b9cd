package diag_test

import (
	"strings"
	"testing"

	"github.com/ibscript/ibscript/diag"
)

// TestToolContracts: every tool in diag.Tools is one value whose options
// the command line and Lua both take: each option and argument has a Lua
// key, no two share a key, a letter or a long name, and the arguments
// are numbered from 0 without a gap.
func TestToolContracts(t *testing.T) {
	names, luaNames := map[string]bool{}, map[string]bool{}
	for _, dt := range diag.Tools() {
		if dt.Name == "" || dt.Lua == "" || dt.Summary == "" || dt.LuaDoc == "" || dt.LuaExample == "" {
			t.Errorf("%q (Lua %q): a name, a Lua name, a summary, a Lua doc and example are required", dt.Name, dt.Lua)
		}
		if names[dt.Name] || luaNames[dt.Lua] {
			t.Errorf("%s: name or Lua name %q used twice", dt.Name, dt.Lua)
		}
		names[dt.Name], luaNames[dt.Lua] = true, true
		keys, shorts, longs, pos := map[string]bool{}, map[byte]bool{}, map[string]bool{}, map[int]bool{}
		for _, s := range dt.Options() {
			switch {
			case s.Lua == "":
				t.Errorf("%s: option %s has no Lua key", dt.Name, s.Key())
			case s.Lua == "-":
				if s.Kind != diag.OptNumber || !strings.Contains(s.Help, "never printed") {
					t.Errorf("%s: option %s is not offered to Lua: only a key is kept from scripts", dt.Name, s.Key())
				}
			case keys[s.Lua]:
				t.Errorf("%s: Lua key %q twice", dt.Name, s.Lua)
			case s.Short != 0 && shorts[s.Short], s.Long != "" && longs[s.Long], s.Pos >= 0 && pos[s.Pos]:
				t.Errorf("%s: option %s (pos %d) twice", dt.Name, s.Key(), s.Pos)
			}
			keys[s.Lua], shorts[s.Short], longs[s.Long], pos[s.Pos] = true, true, true, true
		}
		for i := range diag.NumberedArgs(dt.Options()) {
			if !pos[i] {
				t.Errorf("%s: no argument %d", dt.Name, i)
			}
		}
		if dt.NewOptions() == dt.NewOptions() {
			t.Errorf("%s: NewOptions returned the same value twice", dt.Name)
		}
	}
}

// TestToolOptionsDefaults: NewOptions starts from the C tool's defaults
// (sminfo's -s is SMINFO_STANDBY), and the options' setters reach the
// struct's fields.
func TestToolOptionsDefaults(t *testing.T) {
	var sminfo *diag.Tool
	for _, dt := range diag.Tools() {
		if dt.Name == "sminfo" {
			sminfo = dt
		}
	}
	o := sminfo.NewOptions().(*diag.SMInfoOptions)
	if o.State != 2 {
		t.Errorf("sminfo's state: %d, want 2 (SMINFO_STANDBY)", o.State)
	}
	for _, s := range sminfo.Options() {
		switch s.Lua {
		case "priority":
			if s.Max != 15 || s.ReadOption("0x1f") != 15 {
				t.Errorf("priority: max %d, 0x1f read as %d; want 15 and 15 (sminfo's mask)", s.Max, s.ReadOption("0x1f"))
			}
			s.SetNumber(o, 7)
		case "modifier":
			if s.ReadArg("-1") != 0xffffffff {
				t.Errorf("modifier -1 read as %#x, want 0xffffffff (strtol into a uint32)", s.ReadArg("-1"))
			}
		}
	}
	if o.Priority != 7 {
		t.Errorf("priority %d after SetNumber(7)", o.Priority)
	}
}
