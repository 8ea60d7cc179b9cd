package perf_test

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/madtest"
	"github.com/ibscript/ibscript/mad/perf"
)

var attrs = []struct {
	name   string
	layout *mad.Layout
	new    func() madtest.Codec
}{
	{"ClassPortInfo", mad.ClassPortInfoLayout(), func() madtest.Codec { return new(mad.ClassPortInfo) }},
	{"PortCounters", perf.PortCountersLayout(), func() madtest.Codec { return new(perf.PortCounters) }},
	{"PortCountersExtended", perf.PortCountersExtendedLayout(), func() madtest.Codec { return new(perf.PortCountersExtended) }},
}

func newMAD() madtest.Codec { return new(perf.MAD) }

func TestLayouts(t *testing.T) {
	madtest.CheckLayout(t, perf.MADLayout())
	for _, a := range attrs {
		t.Run(a.name, func(t *testing.T) {
			madtest.CheckLayout(t, a.layout)
			madtest.WalkingOnes(t, a.layout, a.new)
			madtest.ReservedIgnored(t, a.layout, make([]byte, a.layout.Size), a.new)
			if a.layout.Size > 192 {
				t.Errorf("%s: %d bytes do not fit the 192-byte PMA data", a.name, a.layout.Size)
			}
		})
	}
	madtest.WalkingOnes(t, perf.MADLayout(), newMAD)
	madtest.ReservedIgnored(t, perf.MADLayout(), make([]byte, mad.Size), newMAD)
}

func TestRegistry(t *testing.T) {
	ls := perf.Layouts()
	for i, l := range ls {
		if l == perf.PortExtendedSpeedsCountersRSFECLayout() {
			// the second layout of its ID: by name and CodecOf only
			if perf.LayoutByName(l.Name) != l || perf.LayoutByID(l.ID) != perf.PortExtendedSpeedsCountersLayout() {
				t.Errorf("%s: by name %v, by ID %v", l.Name, perf.LayoutByName(l.Name), perf.LayoutByID(l.ID))
			}
			continue
		}
		if perf.LayoutByID(l.ID) != l {
			t.Errorf("layout %d (%s) is not registered by ID", i, l.Name)
		}
	}
	for _, a := range attrs {
		if perf.LayoutByID(a.layout.ID) != a.layout {
			t.Errorf("%s is not registered by ID", a.name)
		}
	}
	if perf.LayoutByID(perf.AttrPortSamplesResultExtended) != nil {
		t.Error("LayoutByID of an attribute without codec")
	}
}

func TestTruncated(t *testing.T) {
	for _, tc := range []struct {
		v   madtest.Codec
		n   int
		msg string
	}{
		{new(perf.PortCounters), 40, "portcounters: truncated (have 40, need 44)"},
		{new(perf.PortCountersExtended), 72, "portcountersextended: truncated (have 72, need 184)"},
		{new(perf.MAD), 100, "perfmgtmad: truncated (have 100, need 256)"},
	} {
		err := tc.v.UnmarshalBinary(make([]byte, tc.n))
		if !errors.Is(err, mad.ErrTruncated) || err.Error() != tc.msg {
			t.Errorf("error %v, want %q", err, tc.msg)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	pc := &perf.PortCounters{PortSelect: 3, CounterSelect: 0xffff, SymbolErrorCounter: 0xffff,
		LinkErrorRecoveryCounter: 0xff, LinkDownedCounter: 1, PortRcvErrors: 2, PortRcvRemotePhysicalErrors: 3,
		PortRcvSwitchRelayErrors: 4, PortXmitDiscards: 5, PortXmitConstraintErrors: 6, PortRcvConstraintErrors: 7,
		CounterSelect2: 0xff, LocalLinkIntegrityErrors: 15, ExcessiveBufferOverrunErrors: 14, QP1Dropped: 9,
		VL15Dropped: 10, PortXmitData: 0xffffffff, PortRcvData: 12, PortXmitPkts: 13, PortRcvPkts: 14, PortXmitWait: 15}
	pce := &perf.PortCountersExtended{PortSelect: perf.AllPorts, CounterSelect: 0xff, CounterSelect2: 0xffffffff,
		PortXmitData: 1 << 60, PortRcvData: 2, PortXmitPkts: 3, PortRcvPkts: 4, PortUnicastXmitPkts: 5,
		PortUnicastRcvPkts: 6, PortMulticastXmitPkts: 7, PortMulticastRcvPkts: 8, SymbolErrorCounter: 9,
		LinkErrorRecoveryCounter: 10, LinkDownedCounter: 11, PortRcvErrors: 12, PortRcvRemotePhysicalErrors: 13,
		PortRcvSwitchRelayErrors: 14, PortXmitDiscards: 15, PortXmitConstraintErrors: 16, PortRcvConstraintErrors: 17,
		LocalLinkIntegrityErrors: 18, ExcessiveBufferOverrunErrors: 19, VL15Dropped: 20, PortXmitWait: 21,
		QP1Dropped: ^uint64(0)}
	for _, tc := range []struct {
		name string
		v    madtest.Codec
		zero madtest.Codec
	}{
		{"PortCounters", pc, new(perf.PortCounters)},
		{"PortCountersExtended", pce, new(perf.PortCountersExtended)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := tc.v.AppendBinary(nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.zero.UnmarshalBinary(b); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.v, tc.zero); d != "" {
				t.Errorf("round trip (-want +got):\n%s", d)
			}
		})
	}
	_, err := (&perf.PortCounters{LocalLinkIntegrityErrors: 16}).MarshalBinary()
	if !errors.Is(err, mad.ErrRange) {
		t.Errorf("LocalLinkIntegrityErrors 16: %v", err)
	}
}

func TestNewGet(t *testing.T) {
	buf := make([]byte, 0, mad.Size)
	b, err := perf.NewGet(buf, 0x42, perf.AttrPortCounters, 1)
	if err != nil {
		t.Fatal(err)
	}
	var m perf.MAD
	if err := m.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	want := mad.Header{BaseVersion: 1, MgmtClass: mad.ClassPerf, ClassVersion: 1, Method: mad.MethodGet,
		TID: 0x42, AttrID: perf.AttrPortCounters}
	if d := cmp.Diff(want, m.Header); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	var pc perf.PortCounters
	if err := pc.UnmarshalBinary(perf.Data(b)); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(perf.PortCounters{PortSelect: 1}, pc); d != "" {
		t.Errorf("data (-want +got):\n%s", d)
	}
	// ClassPortInfo has no PortSelect: its data stays zero.
	b, _ = perf.NewGet(buf, 1, perf.AttrClassPortInfo, 1)
	if d := perf.Data(b); len(d) != 192 || cap(d) != 192 || d[1] != 0 {
		t.Errorf("ClassPortInfo request data % x", d[:4])
	}
	if _, err := perf.NewGet(make([]byte, 10), 1, perf.AttrPortCounters, 1); !errors.Is(err, mad.ErrTruncated) {
		t.Errorf("short buffer: %v", err)
	}
	if perf.Data(make([]byte, 255)) != nil {
		t.Error("Data of a short buffer")
	}
	madtest.ZeroAllocs(t, "NewGet", func() { _, _ = perf.NewGet(buf, 1, perf.AttrPortCountersExtended, 2) })
}

func TestDecodeAllocs(t *testing.T) {
	b := make([]byte, mad.Size)
	var m perf.MAD
	madtest.ZeroAllocs(t, "MAD.UnmarshalBinary", func() { _ = m.UnmarshalBinary(b) })
	for _, a := range attrs {
		v := a.new()
		madtest.ZeroAllocs(t, a.name+".UnmarshalBinary", func() { _ = v.UnmarshalBinary(perf.Data(b)) })
		out := make([]byte, 0, 192)
		madtest.ZeroAllocs(t, a.name+".AppendBinary", func() { _, _ = v.AppendBinary(out[:0]) })
	}
}

// framed decodes a whole PerfMgt MAD and the attribute in its data.
type framed struct {
	MAD  perf.MAD
	Attr madtest.Codec
}

func (f *framed) UnmarshalBinary(b []byte) error {
	if err := f.MAD.UnmarshalBinary(b); err != nil {
		return err
	}
	return f.Attr.UnmarshalBinary(f.MAD.Data[:])
}

func (f *framed) AppendBinary(b []byte) ([]byte, error) {
	m := f.MAD
	enc, err := f.Attr.AppendBinary(nil)
	if err != nil {
		return b, err
	}
	copy(m.Data[:], enc)
	return m.AppendBinary(b)
}

func codec(id uint16) madtest.Codec {
	switch id {
	case perf.AttrClassPortInfo:
		return new(mad.ClassPortInfo)
	case perf.AttrPortCounters:
		return new(perf.PortCounters)
	case perf.AttrPortCountersExtended:
		return new(perf.PortCountersExtended)
	}
	return nil
}

func TestGolden(t *testing.T) {
	caps := madtest.Captures(t, "testdata/*.hex")
	if len(caps) < 3 {
		t.Fatalf("found %d captures", len(caps))
	}
	for _, c := range caps {
		t.Run(filepath.Base(c.Path), func(t *testing.T) {
			id := mad.AttrIDOf(c.Bytes)
			v := codec(id)
			if v == nil {
				t.Fatalf("no codec for attribute %#04x", id)
			}
			madtest.Golden(t, c.Path, &framed{Attr: v},
				madtest.View{Layout: perf.MADLayout()},
				madtest.View{Layout: perf.LayoutByID(id), Offset: mad.SMPDataOff})
			madtest.ReservedIgnored(t, perf.MADLayout(), c.Bytes, newMAD)
		})
	}
}

func decode(t *testing.T, name string, v madtest.Codec) {
	t.Helper()
	c := madtest.ReadCapture(t, filepath.Join("testdata", name))
	f := framed{Attr: v}
	if err := f.UnmarshalBinary(c.Bytes); err != nil {
		t.Fatal(err)
	}
	if f.MAD.Status != 0 || f.MAD.Method != mad.MethodGetResp || f.MAD.MgmtClass != mad.ClassPerf {
		t.Fatalf("%s: not a PerfMgt GetResp: %+v", name, f.MAD.Header)
	}
}

// TestReferenceValues checks the captures against perfquery 2 1 and
// perfquery -x 2 1 on the same rig (counters moved on between the runs,
// so only the stable values are compared).
func TestReferenceValues(t *testing.T) {
	var cpi mad.ClassPortInfo
	decode(t, "classportinfo.hex", &cpi)
	// perfquery: "CapMask: 0x1200 CapMask2: 0x0000000"
	if cpi.CapabilityMask != perf.CapExtendedWidth|perf.CapPortXmitWait || cpi.CapabilityMask2 != 0 {
		t.Errorf("ClassPortInfo caps %#x/%#x, perfquery printed 0x1200/0x0", cpi.CapabilityMask, cpi.CapabilityMask2)
	}
	// ibsim counts every MAD as 72 data words (288 bytes on its wire).
	var pc perf.PortCounters
	decode(t, "portcounters.hex", &pc)
	if pc.PortSelect != 1 || pc.CounterSelect != 0 || pc.SymbolErrorCounter != 0 || pc.PortRcvErrors != 0 ||
		pc.PortXmitData == 0 || pc.PortRcvPkts == 0 || pc.PortXmitData != 72*pc.PortXmitPkts {
		t.Errorf("PortCounters %+v", pc)
	}
	var pce perf.PortCountersExtended
	decode(t, "portcountersext.hex", &pce)
	if pce.PortSelect != 1 || pce.PortXmitData == 0 || pce.PortXmitData != 72*pce.PortXmitPkts ||
		pce.PortUnicastXmitPkts != 0 || pce.SymbolErrorCounter != 0 {
		t.Errorf("PortCountersExtended %+v", pce)
	}
	if pce.PortXmitPkts <= uint64(pc.PortXmitPkts) {
		t.Errorf("the extended counters were read later: %d <= %d packets", pce.PortXmitPkts, pc.PortXmitPkts)
	}
}

func seeds(f *testing.F, id uint16) [][]byte {
	var out [][]byte
	for _, c := range madtest.Captures(f, "testdata/*.hex") {
		if id == 0 {
			out = append(out, c.Bytes)
		} else if mad.AttrIDOf(c.Bytes) == id {
			out = append(out, perf.Data(c.Bytes))
		}
	}
	return out
}

func FuzzMAD(f *testing.F) { madtest.Fuzz(f, newMAD, seeds(f, 0)...) }

func FuzzPortCounters(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(perf.PortCounters) }, seeds(f, perf.AttrPortCounters)...)
}

func FuzzPortCountersExtended(f *testing.F) {
	madtest.Fuzz(f, func() madtest.Codec { return new(perf.PortCountersExtended) }, seeds(f, perf.AttrPortCountersExtended)...)
}
