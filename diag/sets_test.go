package diag

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
	"github.com/ibscript/ibscript/mad/smp"
	"github.com/ibscript/ibscript/sim/simtest"
)

type audits struct {
	mu sync.Mutex
	e  []engine.AuditEntry
}

func (a *audits) add(e engine.AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.e = append(a.e, e)
	return nil
}

func prodEnv(t *testing.T, allow bool) (*Env, *audits) {
	t.Helper()
	f := simtest.Load(t, "../tests/topologies/net.2sw2path4hca", nil)
	tr, err := f.Attach("Hca1", 1)
	if err != nil {
		t.Fatal(err)
	}
	a := &audits{}
	s, err := engine.New(fabrictest.WithCaps(tr, func(c *fabric.Caps) { c.Production = true }), &engine.Options{AllowSet: allow, Audit: a.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return &Env{Session: s}, a
}

// TestSetsGatedAndAudited: on a production transport (the kernel's)
// ibportstate's ops, perfquery's resets and sminfo's Set are refused
// without AllowSet, with engine.ErrSetRefused, and nothing changes; with
// it each Set goes out with an audit line naming the attribute.
func TestSetsGatedAndAudited(t *testing.T) {
	ctx := context.Background()
	env, a := prodEnv(t, false)
	lid := env.Session.Port().LID
	tg := engine.LID(lid)
	_, err := IBPortStateRun(ctx, env, IBPortStateOptions{Target: tg, Port: 1, Ops: []string{"disable"}})
	if !errors.Is(err, engine.ErrSetRefused) {
		t.Errorf("ibportstate disable on a production port: %v, want ErrSetRefused", err)
	}
	if pi, err := env.Session.PortInfo(ctx, tg, 1); err != nil || pi.PortState != smp.PortStateActive {
		t.Errorf("after the refused disable: state %d, %v; want Active", pi.PortState, err)
	}
	_, err = PerfQueryRun(ctx, env, PerfQueryOptions{Target: &tg, Ports: []int{1}, ResetOnly: true})
	if !errors.Is(err, engine.ErrSetRefused) {
		t.Errorf("perfquery -R on a production port: %v, want ErrSetRefused", err)
	}
	_, err = SMInfoRun(ctx, env, SMInfoOptions{Target: &tg, Modifier: 4})
	if !errors.Is(err, engine.ErrSetRefused) {
		t.Errorf("sminfo with a modifier on a production port: %v, want ErrSetRefused", err)
	}
	if len(a.e) != 0 {
		t.Errorf("refused Sets audited: %+v", a.e)
	}

	env, a = prodEnv(t, true)
	if _, err := IBPortStateRun(ctx, env, IBPortStateOptions{Target: tg, Port: 1, Ops: []string{"speed", "0"}}); err != nil {
		t.Fatalf("ibportstate speed 0 with AllowSet: %v", err)
	}
	if _, err := PerfQueryRun(ctx, env, PerfQueryOptions{Target: &tg, Ports: []int{1}, ResetOnly: true}); err != nil {
		t.Fatalf("perfquery -R with AllowSet: %v", err)
	}
	if len(a.e) != 2 || a.e[0].AttrID != smp.AttrPortInfo || a.e[1].AttrID != perf.AttrPortCounters {
		t.Errorf("audit entries %+v, want a PortInfo Set then a PortCounters Set", a.e)
	}
}

// setRecorder keeps the data of every PortInfo Set sent through it.
type setRecorder struct {
	fabric.Transport
	mu   sync.Mutex
	sets [][]byte
}

func (r *setRecorder) Send(ctx context.Context, p *fabric.Packet) error {
	if c := mad.MgmtClassOf(p.Data); (c == mad.ClassSubnLID || c == mad.ClassSubnDR) &&
		mad.MethodOf(p.Data) == mad.MethodSet && mad.AttrIDOf(p.Data) == smp.AttrPortInfo {
		r.mu.Lock()
		r.sets = append(r.sets, append([]byte(nil), smp.Data(p.Data)...))
		r.mu.Unlock()
	}
	return r.Transport.Send(ctx, p)
}

// TestPortStateSetExtEnabled2: ibportstate's PortInfo Set as current
// rdma-core builds it (ibportstate.c after #1359's f87452433: "always set
// enabled speeds", LinkSpeedExtEnabled = espeed & 0x1f and
// LinkSpeedExtEnabled2 = espeed >> 5, 0 since espeed is refused above 31)
// and as 44 does (the PortInfo it read sent back, LinkSpeedExtEnabled2
// among the bits it does not know): on an XDR switch port, whose
// LinkSpeedExtEnabled2 reads 1, 44's Set carries 1 and current's 0.
func TestPortStateSetExtEnabled2(t *testing.T) {
	for _, tc := range []struct {
		version Version
		want    uint8
	}{{Version44, 1}, {VersionCurrent, 0}} {
		t.Run(fmt.Sprint(tc.want), func(t *testing.T) {
			f := simtest.Load(t, "../cmd/ibscript/testdata/xdr/net.xdr", nil)
			tr, err := f.Attach("H1", 1)
			if err != nil {
				t.Fatal(err)
			}
			rec := &setRecorder{Transport: tr}
			s, err := engine.New(rec, nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			env := &Env{Session: s, Version: tc.version}
			if _, err := IBPortStateRun(t.Context(), env, IBPortStateOptions{Target: engine.LID(1), Port: 1, Ops: []string{"espeed", "15"}}); err != nil {
				t.Fatal(err)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.sets) != 1 {
				t.Fatalf("%d PortInfo Sets, want 1", len(rec.sets))
			}
			pi := decode[smp.PortInfo](rec.sets[0])
			if pi.LinkSpeedExtEnabled != 15 || pi.LinkSpeedExtEnabled2 != tc.want {
				t.Errorf("Set: LinkSpeedExtEnabled %d, LinkSpeedExtEnabled2 %d; want 15, %d", pi.LinkSpeedExtEnabled, pi.LinkSpeedExtEnabled2, tc.want)
			}
		})
	}
}
