package tests

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/topo"
)

// kind is a node kind the schema table test asks.
type kind string

const (
	kindCA     kind = "CA"
	kindSwitch kind = "switch"
	kindSM     kind = "SM"     // the CA port the SM (and its SA) runs on
	kindRouter kind = "router" // net.mixed-router's Rt1
)

// notCarried lists the attributes a node kind does not carry, with the
// status its agent answers (0x000C, as a real SMA or PMA, or the kernel
// for a MAD no agent takes). Every other attribute of mad/smp, mad/perf
// and mad/cc answers with status 0 on both kinds; the SA's at the SM.
var notCarried = map[string]uint16{
	"SMP Notice CA":                         mad.StatusMethodAttrUnsup, // sent in Trap and Report, never read with Get
	"SMP Notice switch":                     mad.StatusMethodAttrUnsup,
	"SMP SwitchInfo CA":                     mad.StatusMethodAttrUnsup,
	"SMP LinearForwardingTable CA":          mad.StatusMethodAttrUnsup,
	"SMP MulticastForwardingTable CA":       mad.StatusMethodAttrUnsup,
	"SMP SMInfo CA":                         mad.StatusMethodAttrUnsup, // no SM on that port (kindSM has one)
	"SMP SMInfo switch":                     mad.StatusMethodAttrUnsup,
	"PerfMgt SwPortVLCongestion CA":         mad.StatusMethodAttrUnsup, // IBA A10: switch ports mark
	"PerfMgt PortXmitConCtrl CA":            mad.StatusMethodAttrUnsup,
	"PerfMgt PortVLXmitTimeCong CA":         mad.StatusMethodAttrUnsup,
	"PerfMgt PortRcvConCtrl switch":         mad.StatusMethodAttrUnsup, // IBA A10: CAs receive FECN/BECN
	"PerfMgt PortSLRcvFECN switch":          mad.StatusMethodAttrUnsup,
	"PerfMgt PortSLRcvBECN switch":          mad.StatusMethodAttrUnsup,
	"CC SwitchCongestionSetting CA":         mad.StatusMethodAttrUnsup,
	"CC SwitchPortCongestionSetting CA":     mad.StatusMethodAttrUnsup,
	"CC CACongestionSetting switch":         mad.StatusMethodAttrUnsup,
	"CC CongestionControlTable switch":      mad.StatusMethodAttrUnsup,
	"SMP Notice router":                     mad.StatusMethodAttrUnsup,
	"SMP SwitchInfo router":                 mad.StatusMethodAttrUnsup,
	"SMP LinearForwardingTable router":      mad.StatusMethodAttrUnsup,
	"SMP MulticastForwardingTable router":   mad.StatusMethodAttrUnsup,
	"SMP SMInfo router":                     mad.StatusMethodAttrUnsup,
	"PerfMgt SwPortVLCongestion router":     mad.StatusMethodAttrUnsup, // a router's ports are not a switch's
	"PerfMgt PortXmitConCtrl router":        mad.StatusMethodAttrUnsup,
	"PerfMgt PortVLXmitTimeCong router":     mad.StatusMethodAttrUnsup,
	"CC ClassPortInfo router":               mad.StatusMethodAttrUnsup, // IBA A10: CC agents are on switches and CAs
	"CC CongestionInfo router":              mad.StatusMethodAttrUnsup,
	"CC CongestionKeyInfo router":           mad.StatusMethodAttrUnsup,
	"CC CongestionLog router":               mad.StatusMethodAttrUnsup,
	"CC SwitchCongestionSetting router":     mad.StatusMethodAttrUnsup,
	"CC SwitchPortCongestionSetting router": mad.StatusMethodAttrUnsup,
	"CC CACongestionSetting router":         mad.StatusMethodAttrUnsup,
	"CC CongestionControlTable router":      mad.StatusMethodAttrUnsup,
	"CC Timestamp router":                   mad.StatusMethodAttrUnsup,
	"SA InformInfo SM":                      mad.StatusMethodAttrUnsup, // Set only (subscribing)
	"SA MultiPathRecord SM":                 mad.StatusMethodAttrUnsup, // GetMulti only
	"SA P_KeyTableRecord SM (no SM_Key)":    sa.StatusReqInvalid,       // OpenSM: trusted requesters only
	"SA ServiceRecord SM (no records)":      0,
	"SA InformInfoRecord SM (no records)":   0,
}

// mayBeZero are the attributes whose answer may be all zero on the
// default fabric: state that is off or empty until something sets it.
var mayBeZero = map[string]bool{
	"SMP LedInfo":                    true, // the LED is off
	"SMP MlnxExtPortInfo":            true, // no FDR10
	"SMP MulticastForwardingTable":   true, // no multicast group
	"PerfMgt PortSamplesResult":      true, // no sample taken
	"CC SwitchCongestionSetting":     true, // congestion control off (IBA reset values)
	"CC SwitchPortCongestionSetting": true,
	"CC CACongestionSetting":         true,
	"CC CongestionControlTable":      true,
	"CC CongestionKeyInfo":           true, // no CC_Key
	"CC CongestionInfo":              true, // a switch's: no CCT
	"CC Timestamp":                   true, // the clock may read 0 at first
}

// TestSimAnswersSchema asks the embedded simulator, on the default
// fabric, every SMP, PerfMgt and CC attribute the schema names on a CA
// and a switch (and on net.mixed-router's router, given a GUID: with
// ibsim's default 0 the SM gives it no LID, as OpenSM), and every SA
// attribute at the SM: each answers with status 0 and contents that are
// not all zero, with no bit set outside the attribute's fields (reserved),
// from the node asked (NodeInfo's type, a CA's or router's PortInfo LID,
// PerfMgt's PortSelect), or with the status notCarried documents. The
// attributes come from the schema's tables (smp, perf, cc Layouts, sa
// Attrs): one added there that the simulator does not answer fails here.
func TestSimAnswersSchema(t *testing.T) {
	f, s := simSession(t, "")
	rf, rs := simSession(t, withRouterGUID(t, filepath.Join("topologies", "net.mixed-router")))
	ctx := t.Context()
	lids := map[kind]uint16{}
	for _, n := range f.Topology().Nodes {
		switch {
		case n.ID == "node001":
			lids[kindSM] = n.EndPort(1).LID
		case n.Type == topo.CA && lids[kindCA] == 0:
			lids[kindCA] = n.EndPort(1).LID
		case n.Type == topo.Switch && lids[kindSwitch] == 0:
			lids[kindSwitch] = n.EndPort(0).LID
		}
	}
	for _, n := range rf.Topology().Nodes {
		if n.Type == topo.Router {
			lids[kindRouter] = n.EndPort(1).LID
		}
	}
	if lids[kindRouter] == 0 {
		t.Fatal("net.mixed-router's router has no LID")
	}
	sess := map[kind]*engine.Session{kindCA: s, kindSwitch: s, kindSM: s, kindRouter: rs}
	gmpKinds := []kind{kindCA, kindSwitch, kindRouter}
	check := func(name string, k kind, l *mad.Layout, data []byte, err error, zeroOK bool) {
		t.Helper()
		key := fmt.Sprintf("%s %s", name, k)
		want, documented := notCarried[key]
		var se *engine.StatusError
		switch {
		case err == nil && want == 0:
			if !zeroOK && allZero(data) {
				t.Errorf("%s: answered all zero", key)
			}
			if bit, ok := reservedSet(l, data); ok {
				t.Errorf("%s: bit %d, in no field of %s, is set: % x", key, bit, l.Name, data)
			}
		case errors.As(err, &se) && documented && se.Status == want:
		default:
			t.Errorf("%s: %v, want status %#04x", key, err, want)
		}
	}
	seen := map[string]bool{}
	once := func(class string, id uint16) bool {
		k := fmt.Sprintf("%s %#x", class, id)
		if seen[k] {
			return false // an alternative layout of an attribute asked
		}
		seen[k] = true
		return true
	}
	n := 0
	for _, l := range smp.Layouts() {
		if !once("SMP", l.ID) {
			continue
		}
		for _, k := range []kind{kindCA, kindSwitch, kindSM, kindRouter} {
			if k == kindSM && l.ID != smp.AttrSMInfo {
				continue
			}
			d, err := sess[k].SMP(ctx, engine.LID(lids[k]), mad.MethodGet, l.ID, smpMod(l.ID, k), nil)
			check("SMP "+l.Name, k, l, d, err, mayBeZero["SMP "+l.Name])
			if err == nil {
				checkIdentity(t, k, lids[k], l.ID, d)
			}
			n++
		}
	}
	// The GMP classes: PortSelect (PerfMgt) or the modifier (CC) 1 or 0.
	gmps := []struct {
		class   string
		layouts []*mad.Layout
		get     func(s *engine.Session, lid, id uint16) ([]byte, error)
	}{
		{"PerfMgt", perf.Layouts(), func(s *engine.Session, lid, id uint16) ([]byte, error) {
			return s.Perf(ctx, engine.LID(lid), mad.MethodGet, id, 1, nil)
		}},
		{"CC", cc.Layouts(), func(s *engine.Session, lid, id uint16) ([]byte, error) {
			return s.CC(ctx, engine.LID(lid), mad.MethodGet, id, 0, nil)
		}},
	}
	for _, g := range gmps {
		for _, l := range g.layouts {
			if !once(g.class, l.ID) {
				continue
			}
			name := g.class + " " + l.Name
			for _, k := range gmpKinds {
				d, err := g.get(sess[k], lids[k], l.ID)
				check(name, k, l, d, err, mayBeZero[name])
				if ps, ok := l.Field("PortSelect"); ok && err == nil && ps.Get(d) != 1 {
					t.Errorf("%s %s: PortSelect %d, want 1", name, k, ps.Get(d))
				}
				n++
			}
		}
	}
	for _, a := range sa.Attrs() {
		name := "SA " + a.Name()
		method := mad.MethodGetTable
		if a == sa.ClassPortInfo() {
			method = mad.MethodGet
		}
		r, err := s.SAQuery(ctx, method, a, 0, nil)
		var recs [][]byte
		if err == nil {
			recs = r.Records
		}
		switch {
		case a == sa.PKeyTableRecord():
			check(name, kindSM+" (no SM_Key)", nil, nil, err, false)
			r, err = s.SAQuery(ctx, method, a, 0, nil, engine.SMKey(sim.DefaultSAKey))
			if err == nil {
				recs = r.Records
			}
		case a == sa.ClassPortInfo():
			recs = [][]byte{r.Message[sa.HeaderSize:]}
		}
		if _, empty := notCarried[name+" SM (no records)"]; empty {
			if err != nil || len(recs) != 0 {
				t.Errorf("%s: %d records (%v), want none", name, len(recs), err)
			}
			n++
			continue
		}
		data := []byte(nil)
		if len(recs) > 0 {
			data = recs[0]
		}
		if err == nil && len(recs) == 0 && a != sa.MulticastForwardingTableRecord() {
			t.Errorf("%s: no records", name)
		}
		check(name, kindSM, a.Layout, data, err, a == sa.MulticastForwardingTableRecord())
		n++
	}
	t.Logf("%d attribute and node kind pairs asked", n)
}

// simSession is the simulator on the topology file path (the default
// fabric when "") and a session on its SM's port, both closed when the
// test ends.
func simSession(t *testing.T, path string) (*sim.Fabric, *engine.Session) {
	t.Helper()
	var f *sim.Fabric
	var err error
	if path == "" {
		f, err = sim.Default(nil)
	} else {
		f, err = sim.Load(path, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var s *engine.Session
	tr, err := f.Open(t.Context(), "", 0)
	if err == nil {
		s, err = engine.New(tr, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return f, s
}

// smpMod is the attribute modifier the table test sends: port 1, block 1
// or position 0 as the attribute reads it.
func smpMod(id uint16, k kind) uint32 {
	switch id {
	case smp.AttrPortInfo, smp.AttrPortInfoExtended, smp.AttrMlnxExtPortInfo:
		return 1
	case smp.AttrVLArbitrationTable:
		if k == kindSwitch {
			return 1<<16 | 1
		}
		return 1 << 16
	case smp.AttrSLtoVLMappingTable:
		if k == kindSwitch {
			return 1<<8 | 2
		}
	}
	return 0
}

// checkIdentity checks that an SMP answer is the node asked: NodeInfo's
// NodeType is the kind's, and a CA's or router's PortInfo (port 1) holds
// the LID it was asked at.
func checkIdentity(t *testing.T, k kind, lid, id uint16, d []byte) {
	t.Helper()
	want := map[kind]uint8{kindCA: smp.NodeTypeCA, kindSM: smp.NodeTypeCA, kindSwitch: smp.NodeTypeSwitch, kindRouter: smp.NodeTypeRouter}[k]
	switch id {
	case smp.AttrNodeInfo:
		var ni smp.NodeInfo
		if err := ni.UnmarshalBinary(d); err != nil || ni.NodeType != want {
			t.Errorf("SMP NodeInfo %s: node type %d (%v), want %d", k, ni.NodeType, err, want)
		}
	case smp.AttrPortInfo:
		var pi smp.PortInfo
		if err := pi.UnmarshalBinary(d); err != nil || (k != kindSwitch && pi.LID != lid) {
			t.Errorf("SMP PortInfo %s: LID %d (%v), want %d", k, pi.LID, err, lid)
		}
	}
}

// reservedSet returns the first bit of data, within l's size, that no
// field of l covers and that is set: IBA reserves those bits, which a
// responder sends as 0. A nil l checks nothing.
func reservedSet(l *mad.Layout, data []byte) (int, bool) {
	if l == nil {
		return 0, false
	}
	covered := make([]bool, l.Size*8)
	for _, f := range l.Fields {
		for b := f.Bit; b < f.Bit+f.Width && b < len(covered); b++ {
			covered[b] = true
		}
	}
	for b, c := range covered {
		if !c && b/8 < len(data) && data[b/8]&(0x80>>(b%8)) != 0 {
			return b, true
		}
	}
	return 0, false
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// TestReservedSet: a set bit outside every field is found, one inside a
// field is not, and bytes past the layout's size are not looked at.
func TestReservedSet(t *testing.T) {
	l := &mad.Layout{Name: "X", Size: 2, Fields: []mad.Field{{Name: "A", Bit: 0, Width: 4}, {Name: "B", Bit: 8, Width: 8}}}
	for _, tc := range []struct {
		data []byte
		bit  int
		set  bool
	}{
		{[]byte{0xf0, 0xff, 0xff}, 0, false},
		{[]byte{0x08, 0x00}, 4, true},
		{[]byte{0x01, 0x00}, 7, true},
	} {
		if bit, set := reservedSet(l, tc.data); bit != tc.bit || set != tc.set {
			t.Errorf("% x: bit %d set %v, want %d %v", tc.data, bit, set, tc.bit, tc.set)
		}
	}
}

// withRouterGUID writes a copy of the topology file path whose routers
// take GUIDs from 0x300000 up (an rtguid= line first; ibsim's default
// gives the first router GUID 0, which the SM refuses) and returns its
// path.
func withRouterGUID(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, append([]byte("rtguid=0x300000\n"), b...), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
