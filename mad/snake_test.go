package mad_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/cm"
	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/rmpp"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
)

func TestSnakeName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"LinkWidthEnabled", "link_width_enabled"},
		{"M_Key", "m_key"},
		{"NodeGUID", "node_guid"},
		{"LID", "lid"},
		{"MasterSMLID", "master_sm_lid"},
		{"P_KeyViolations", "p_key_violations"},
		{"GidPrefix", "gid_prefix"},
		{"SystemImageGUID", "system_image_guid"},
		{"PortRcvSwitchRelayErrors", "port_rcv_switch_relay_errors"},
		{"VLArbitrationHighCap", "vl_arbitration_high_cap"},
		{"SMState", "sm_state"},
		{"M_KeyLeasePeriod", "m_key_lease_period"},
		{"HOQLife", "hoq_life"},
		{"MTUCap", "mtu_cap"},
		{"LIDsPerPort", "lids_per_port"},
		{"OptimizedSLtoVLMappingProgramming", "optimized_sl_to_vl_mapping_programming"},
		{"QP1Dropped", "qp1_dropped"},
		{"VL15Dropped", "vl15_dropped"},
		{"DrSLID", "dr_slid"},
		{"LinearFDBCap", "linear_fdb_cap"},
		{"RedirectQ_Key", "redirect_q_key"},
		{"SM_Key", "sm_key"},
		{"TrapHL", "trap_hl"},
		{"CapabilityMask2", "capability_mask2"},
		{"LinkSpeedExtActive2", "link_speed_ext_active2"},
		{"GUID0", "guid0"},
		{"P_Key31", "p_key31"},
		{"D", "d"},
		{"TransactionID", "transaction_id"},
		{"", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := mad.SnakeName(tc.name); got != tc.want {
				t.Errorf("SnakeName(%q) = %q, want %q", tc.name, got, tc.want)
			}
		})
	}
}

// allLayouts is every layout of mad and its sub-packages, once each.
func allLayouts() []*mad.Layout {
	ls := []*mad.Layout{mad.HeaderLayout(), mad.ClassPortInfoLayout(), smp.SMPLayout(), smp.DRSMPLayout(), perf.MADLayout(),
		sa.HeaderLayout(), rmpp.HeaderLayout(), cc.MADLayout(), cc.LogMADLayout()}
	more := slices.Concat(smp.Layouts(), perf.Layouts(), cc.Layouts(), cm.Layouts())
	for _, a := range sa.Attrs() {
		more = append(more, a.Layout)
	}
	for _, l := range more {
		if !slices.Contains(ls, l) {
			ls = append(ls, l)
		}
	}
	return ls
}

// TestLuaKeys: every field of every layout, generated or hand-written,
// has the key SnakeName gives its name (the generator wrote it, or the
// hand-written layout spelled it out), and KeyFieldKeys are the keys of
// KeyFieldNames.
func TestLuaKeys(t *testing.T) {
	for _, l := range allLayouts() {
		for _, f := range l.Fields {
			if want := mad.SnakeName(f.Name); f.LuaKey != want || f.Key() != want || want == "" {
				t.Errorf("%s.%s: LuaKey %q, want %q", l.Name, f.Name, f.LuaKey, want)
			}
		}
	}
	for i, n := range mad.KeyFieldNames() {
		if mad.KeyFieldKeys()[i] != mad.SnakeName(n) {
			t.Errorf("KeyFieldKeys[%d] = %q, want %q", i, mad.KeyFieldKeys()[i], mad.SnakeName(n))
		}
	}
}

// TestSnakeGolden pins the Lua key of every field of every layout.
func TestSnakeGolden(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("# Lua keys: layout.Field -> key (Field.Key, written by mad/internal/madgen); go test -update rewrites this file\n")
	for _, l := range allLayouts() {
		for _, f := range l.Fields {
			fmt.Fprintf(&sb, "%s.%s -> %s\n", l.Name, f.Name, f.Key())
		}
	}
	madtest.GoldenText(t, "testdata/snake.golden", sb.String())
}

func TestKeysUnique(t *testing.T) {
	for _, l := range allLayouts() {
		seen := map[string]string{}
		for _, f := range l.Fields {
			k := f.Key()
			if other, ok := seen[k]; ok {
				t.Errorf("%s: %s and %s both map to %q", l.Name, other, f.Name, k)
			}
			seen[k] = f.Name
			if k == "" || strings.ToLower(k) != k || strings.Contains(k, "__") {
				t.Errorf("%s.%s: bad key %q", l.Name, f.Name, k)
			}
		}
	}
}

func TestLayoutsConsistent(t *testing.T) {
	for _, l := range allLayouts() {
		t.Run(l.Name, func(t *testing.T) { madtest.CheckLayout(t, l) })
	}
}
