package exporter

import (
	"encoding/hex"
	"errors"
	"sync"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/sim"
)

// auditLog collects a Session's audit entries.
type auditLog struct {
	mu      sync.Mutex
	entries []engine.AuditEntry
}

func (a *auditLog) add(e engine.AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return nil
}

// plantSaturated sets Switch1 port 1's SymbolErrorCounter and
// PortXmitWait at their tops and its PortRcvErrors below, Switch2 port
// 3's LinkDownedCounter at its top.
func plantSaturated(t *testing.T, f *sim.Fabric) {
	t.Helper()
	for _, c := range []struct {
		node string
		port int
		name string
		v    uint64
	}{
		{"Switch1", 1, "SymbolErrorCounter", 0xFFFF},
		{"Switch1", 1, "PortXmitWait", 0xFFFFFFFF},
		{"Switch1", 1, "PortRcvErrors", 5},
		{"Switch2", 3, "LinkDownedCounter", 0xFF},
		{"Switch2", 3, "VL15Dropped", 7},
	} {
		if err := f.SetCounter(c.node, c.port, c.name, c.v); err != nil {
			t.Fatal(err)
		}
	}
}

func counter(t *testing.T, f *sim.Fabric, node string, port int, name string) uint64 {
	t.Helper()
	v, err := f.Counter(node, port, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestResetSaturated: with ResetSaturated, one audited PortCounters Set
// per port with saturated counters clears those counters and no other;
// the snapshot holds the values read before; the next sweep resets
// nothing. Without it, nothing is sent.
func TestResetSaturated(t *testing.T) {
	var audit auditLog
	e, f := simExporterWith(t, net2sw, &Options{ResetSaturated: true}, &engine.Options{Audit: audit.add}, nil)
	plantSaturated(t, f)
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range s.Resets {
		if r.Err != nil {
			t.Errorf("reset %s port %d: %v", r.Port.Node.Desc, r.Port.Num, r.Err)
		}
		got[r.Port.Node.Desc+":"+itoa(r.Port.Num)] = join(r.Counters)
	}
	want := map[string]string{"Switch1:1": "SymbolErrorCounter,PortXmitWait", "Switch2:3": "LinkDownedCounter"}
	if len(got) != len(want) || got["Switch1:1"] != want["Switch1:1"] || got["Switch2:3"] != want["Switch2:3"] {
		t.Errorf("resets %v, want %v", got, want)
	}
	// The audit: one line per Set, CounterSelect bit 0 (SymbolError) and
	// CounterSelect2 (PortXmitWait) for Switch1 port 1, bit 2 (LinkDowned)
	// for Switch2 port 3.
	if len(audit.entries) != 2 {
		t.Fatalf("%d audit entries, want 2: %v", len(audit.entries), audit.entries)
	}
	sels := map[string]bool{}
	for _, a := range audit.entries {
		if a.Class != mad.ClassPerf || a.AttrID != perf.AttrPortCounters {
			t.Errorf("audit %v: not PortCounters", a)
		}
		var pc perf.PortCounters
		if err := pc.UnmarshalBinary(append(a.New, make([]byte, 64)...)); err != nil {
			t.Fatal(err)
		}
		sels[hex.EncodeToString([]byte{pc.PortSelect, byte(pc.CounterSelect >> 8), byte(pc.CounterSelect), pc.CounterSelect2})] = true
	}
	if !sels["01000101"] || !sels["03000400"] {
		t.Errorf("audited selects %v, want 01000101 (port 1: SymbolError, XmitWait) and 03000400 (port 3: LinkDowned)", sels)
	}
	// Cleared, and only those.
	for _, c := range []struct {
		node string
		port int
		name string
		v    uint64
	}{
		{"Switch1", 1, "SymbolErrorCounter", 0}, {"Switch1", 1, "PortRcvErrors", 5},
		{"Switch2", 3, "LinkDownedCounter", 0}, {"Switch2", 3, "VL15Dropped", 7},
	} {
		if v := counter(t, f, c.node, c.port, c.name); v != c.v {
			t.Errorf("%s port %d %s = %d after the reset, want %d", c.node, c.port, c.name, v, c.v)
		}
	}
	if v := counter(t, f, "Switch1", 1, "PortXmitWait"); v == 0xFFFFFFFF {
		t.Error("PortXmitWait still saturated after the reset")
	}
	// The snapshot shows what the sweep read: saturated.
	for _, ps := range s.Ports {
		if ps.Port.Node.Desc == "Switch1" && ps.Port.Num == 1 && ps.PC.SymbolErrorCounter != 0xFFFF {
			t.Errorf("snapshot SymbolErrorCounter %d, want the 65535 read", ps.PC.SymbolErrorCounter)
		}
	}
	mfs := gather(t, e)
	if m := series(mfs["infiniband_exporter_saturated_resets"], "collector")["switch"]; m == nil || value(m) != 2 {
		t.Errorf("saturated_resets %v, want 2", m)
	}
	s2, err := e.Sweep(t.Context())
	if err != nil || len(s2.Resets) != 0 || len(audit.entries) != 2 {
		t.Errorf("second sweep: %v, %d resets, %d audit entries", err, len(s2.Resets), len(audit.entries))
	}

	// Not asked: nothing sent, nothing cleared.
	var audit2 auditLog
	e, f = simExporterWith(t, net2sw, nil, &engine.Options{Audit: audit2.add}, nil)
	plantSaturated(t, f)
	if s, err = e.Sweep(t.Context()); err != nil || len(s.Resets) != 0 {
		t.Fatalf("sweep: %v, %d resets", err, len(s.Resets))
	}
	if len(audit2.entries) != 0 || counter(t, f, "Switch1", 1, "SymbolErrorCounter") != 0xFFFF {
		t.Errorf("without ResetSaturated: %d Sets, SymbolErrorCounter %d", len(audit2.entries), counter(t, f, "Switch1", 1, "SymbolErrorCounter"))
	}
	if mfs := gather(t, e); mfs["infiniband_exporter_saturated_resets"] != nil {
		t.Error("saturated_resets served without ResetSaturated")
	}
}

// TestResetSaturatedGated: on a production transport without AllowSet
// the resets are refused by the Session (ErrSetRefused), counted as
// failed, and nothing is cleared; with AllowSet they go out.
func TestResetSaturatedGated(t *testing.T) {
	wrap := func(tr fabric.Transport) fabric.Transport {
		return fabrictest.WithCaps(tr, func(c *fabric.Caps) { c.Production = true })
	}
	var audit auditLog
	e, f := simExporterWith(t, net2sw, &Options{ResetSaturated: true}, &engine.Options{Audit: audit.add}, wrap)
	plantSaturated(t, f)
	s, err := e.Sweep(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Resets) != 2 {
		t.Fatalf("%d resets, want 2", len(s.Resets))
	}
	for _, r := range s.Resets {
		if !errors.Is(r.Err, engine.ErrSetRefused) {
			t.Errorf("reset %s port %d: %v, want ErrSetRefused", r.Port.Node.Desc, r.Port.Num, r.Err)
		}
	}
	if len(audit.entries) != 0 || counter(t, f, "Switch1", 1, "SymbolErrorCounter") != 0xFFFF {
		t.Errorf("refused: %d audit entries, SymbolErrorCounter %d", len(audit.entries), counter(t, f, "Switch1", 1, "SymbolErrorCounter"))
	}
	if m := series(gather(t, e)["infiniband_exporter_saturated_reset_errors"], "collector")["switch"]; m == nil || value(m) != 2 {
		t.Errorf("saturated_reset_errors %v, want 2", m)
	}

	var audit2 auditLog
	e, f = simExporterWith(t, net2sw, &Options{ResetSaturated: true}, &engine.Options{AllowSet: true, Audit: audit2.add}, wrap)
	plantSaturated(t, f)
	if s, err = e.Sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Resets {
		if r.Err != nil {
			t.Errorf("with AllowSet: reset %s port %d: %v", r.Port.Node.Desc, r.Port.Num, r.Err)
		}
	}
	if len(audit2.entries) != 2 || counter(t, f, "Switch1", 1, "SymbolErrorCounter") != 0 {
		t.Errorf("with AllowSet: %d audit entries, SymbolErrorCounter %d", len(audit2.entries), counter(t, f, "Switch1", 1, "SymbolErrorCounter"))
	}
}

func join(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ","
		}
		out += v
	}
	return out
}
