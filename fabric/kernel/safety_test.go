package kernel_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cc"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
)

// TestSetGate: on the kernel backend (the model), a Set is refused
// without AllowSet and nothing is sent or audited; with AllowSet it goes
// out and the audit hook gets it, keys masked.
func TestSetGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFabric(t, twoCA())
		tr, err := f.Open(t.Context(), "", 0)
		if err != nil {
			t.Fatal(err)
		}
		if c := tr.Caps(); !c.Production || !c.RMPP || c.Retransmits != nil || c.SetHandler != nil {
			t.Fatalf("kernel transport caps %+v: want Production and RMPP only", tr.Caps())
		}
		var mu sync.Mutex
		var audit []engine.AuditEntry
		hook := func(a engine.AuditEntry) error { mu.Lock(); audit = append(audit, a); mu.Unlock(); return nil }
		s, err := engine.New(tr, &engine.Options{Timeout: 100 * time.Millisecond, Retries: 1, Audit: hook, AuditUser: "alice"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Perf(t.Context(), engine.LID(2), mad.MethodSet, perf.AttrPortCounters, 1, make([]byte, 40))
		if !errors.Is(err, engine.ErrSetRefused) {
			t.Errorf("Set without AllowSet: %v, want ErrSetRefused", err)
		}
		if len(audit) != 0 {
			t.Errorf("refused Set audited: %v", audit)
		}
		s.Close()

		tr, err = f.Open(t.Context(), "", 0)
		if err != nil {
			t.Fatal(err)
		}
		s, err = engine.New(tr, &engine.Options{Timeout: 100 * time.Millisecond, Retries: 1, Audit: hook, AuditUser: "alice", AllowSet: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		_, err = s.Perf(t.Context(), engine.LID(2), mad.MethodSet, perf.AttrPortCounters, 1, []byte{0, 1, 0xff, 0xff})
		if errors.Is(err, engine.ErrSetRefused) {
			t.Errorf("Set with AllowSet refused: %v", err)
		}
		pi := make([]byte, 64)
		copy(pi, []byte{0xde, 0xad, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef}) // M_Key
		pi[20] = 0x42
		_, _ = s.SMP(t.Context(), engine.LID(2), mad.MethodSet, smp.AttrPortInfo, 1, pi)
		mu.Lock()
		defer mu.Unlock()
		if len(audit) != 2 {
			t.Fatalf("%d audit entries, want 2: %v", len(audit), audit)
		}
		line := audit[0].String()
		for _, w := range []string{`user="alice"`, "target=lid:2", "class=0x04", "PortCounters", "old=unknown", "new=0001ffff"} {
			if !strings.Contains(line, w) {
				t.Errorf("audit line %q lacks %q", line, w)
			}
		}
		line = audit[1].String()
		if strings.Contains(line, "deadbeef") || !strings.Contains(line, "PortInfo") || !strings.HasSuffix(line, "42") {
			t.Errorf("PortInfo audit line %q: want M_Key masked, data kept", line)
		}
	})
}

// TestUMADPortSetGate: the raw umad port (Lua's umad module) refuses a
// Set on the kernel backend unless AllowSet.
func TestUMADPortSetGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFabric(t, twoCA())
		p, err := engine.OpenUMADPort(t.Context(), f, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		id, err := p.Register(t.Context(), mad.ClassPerf, 1, 0, [2]uint64{})
		if err != nil {
			t.Fatal(err)
		}
		m := make([]byte, mad.Size)
		m[0], m[1], m[2], m[3] = 1, mad.ClassPerf, 1, mad.MethodSet
		if err := p.Send(t.Context(), id, m, fabric.Addr{LID: 2, QPN: 1, QKey: 0x80010000}, 0, 0); !errors.Is(err, engine.ErrSetRefused) {
			t.Errorf("Set without AllowSet: %v", err)
		}
		p.AllowSet = true
		if err := p.Send(t.Context(), id, m, fabric.Addr{LID: 2, QPN: 1, QKey: 0x80010000}, 0, 0); err != nil {
			t.Errorf("Set with AllowSet: %v", err)
		}
	})
}

// TestSetGateCC: a Congestion Control Set is refused on the kernel backend
// without AllowSet; with it the audit line names the attribute and masks
// the CC_Key of the header and of CongestionKeyInfo.
func TestSetGateCC(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFabric(t, twoCA())
		var mu sync.Mutex
		var audit []engine.AuditEntry
		hook := func(a engine.AuditEntry) error { mu.Lock(); audit = append(audit, a); mu.Unlock(); return nil }
		for _, allow := range []bool{false, true} {
			tr, err := f.Open(t.Context(), "", 0)
			if err != nil {
				t.Fatal(err)
			}
			s, err := engine.New(tr, &engine.Options{Timeout: 100 * time.Millisecond, Retries: 1, Audit: hook, AllowSet: allow, CCKey: 0xdeadbeefdeadbeef})
			if err != nil {
				t.Fatal(err)
			}
			ki := cc.CongestionKeyInfo{CCKey: 0xfeedfacefeedface, CCKeyLeasePeriod: 0x4242}
			_, err = engine.Set(t.Context(), s, engine.LID(2), 0, &ki)
			if refused := errors.Is(err, engine.ErrSetRefused); refused == allow {
				t.Errorf("AllowSet %v: %v", allow, err)
			}
			s.Close()
		}
		mu.Lock()
		defer mu.Unlock()
		if len(audit) != 1 {
			t.Fatalf("%d audit entries, want 1: %v", len(audit), audit)
		}
		line := audit[0].String()
		if strings.Contains(line, "feedface") || strings.Contains(line, "deadbeef") || !strings.Contains(line, `attr="CongestionKeyInfo"`) ||
			!strings.Contains(line, "class=0x21") || !strings.HasSuffix(line, "new=00000000000000000000"+"4242") {
			t.Errorf("audit line %q: want the CC_Keys masked, the rest kept", line)
		}
	})
}

// TestUMADPortOfClosedFabric: umad_poll and umad_recv with timeout -1 on a
// port whose Fabric was closed under it fail at once with EINVAL ("invalid
// port handle"), as its sends do; they waited for ever (the driver's pump
// stopped without a word when the umad fd was closed below it).
func TestUMADPortOfClosedFabric(t *testing.T) {
	f := newFabric(t, twoCA())
	p, err := engine.OpenUMADPort(t.Context(), f, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	bound, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang bound
	defer cancel()
	if err := p.Poll(bound, -1); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("poll -1 after the fabric closed: %v, want EINVAL", err)
	}
	if pkt, err := p.Recv(bound, mad.Size, -1); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("recv -1 after the fabric closed: %+v, %v; want EINVAL", pkt, err)
	}
}
