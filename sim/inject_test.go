package sim

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/smp"
)

// timedRx records when each MAD is delivered (on the bubble's clock).
type timedRx struct {
	mu  sync.Mutex
	at  []time.Time
	tid []uint64
}

func (r *timedRx) Deliver(p *fabric.Packet) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.at = append(r.at, time.Now())
	r.tid = append(r.tid, mad.TIDOf(p.Data))
}

func (r *timedRx) take() ([]time.Time, []uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	at, tid := r.at, r.tid
	r.at, r.tid = nil, nil
	return at, tid
}

// delays sends n NodeInfo requests, one at a time, on a fresh fabric with
// faults fl and returns how late each response arrived. Each is checked
// to arrive after its own delay, not at once.
// timedHca1 is Hca1's port on net.2sw2path4hca (the SM on Switch1), raw,
// its deliveries timed.
func timedHca1(t *testing.T) (*Fabric, *raw, *timedRx) {
	t.Helper()
	f := mustLoad(t, "net.2sw2path4hca", &Options{SMNode: "Switch1"})
	r := attachRaw(t, f, "Hca1", 1)
	rx := &timedRx{}
	f.mu.Lock()
	r.w.rx = rx
	f.mu.Unlock()
	return f, r, rx
}

func delays(t *testing.T, fl Faults, n int) []time.Duration {
	t.Helper()
	f, r, rx := timedHca1(t)
	if err := f.SetFaults(fl); err != nil {
		t.Fatal(err)
	}
	var out []time.Duration
	for i := range n {
		sent := time.Now()
		req := drReq(t, mad.MethodGet, smp.AttrNodeInfo, 0, 0, 1, 3) // Switch1, then Switch2
		if err := r.w.Transmit(&fabric.Packet{Addr: fabric.Addr{LID: fabric.PermissiveLID}, Data: req}); err != nil {
			t.Fatal(err)
		}
		if at, _ := rx.take(); len(at) != 0 {
			t.Fatalf("request %d: answered at once", i)
		}
		time.Sleep(fl.Delay + fl.Jitter + time.Millisecond)
		at, tid := rx.take()
		if len(at) != 1 || tid[0] != mad.TIDOf(req) {
			t.Fatalf("request %d: %d responses (TIDs %x), want one with TID %x", i, len(at), tid, mad.TIDOf(req))
		}
		out = append(out, at[0].Sub(sent))
	}
	if st := f.FaultStats(); st.Delayed != uint64(n) || st.Requests != uint64(n) {
		t.Errorf("stats %+v, want %d requests delayed", st, n)
	}
	return out
}

// TestDelay: responses arrive Delay ± Jitter late, each delay drawn from
// the seed, so the same seed replays the same delays and another seed
// does not.
func TestDelay(t *testing.T) {
	const n = 20
	fl := Faults{Seed: 7, Delay: 5 * time.Millisecond, Jitter: 2 * time.Millisecond}
	var first, again, other []time.Duration
	synctest.Test(t, func(t *testing.T) { first = delays(t, fl, n) })
	synctest.Test(t, func(t *testing.T) { again = delays(t, fl, n) })
	fl.Seed = 8
	synctest.Test(t, func(t *testing.T) { other = delays(t, fl, n) })
	for i, d := range first {
		if d < 3*time.Millisecond || d > 7*time.Millisecond {
			t.Errorf("response %d arrived %v late, want 5ms ± 2ms", i, d)
		}
	}
	if !slices.Equal(first, again) {
		t.Errorf("seed 7 twice:\n%v\n%v", first, again)
	}
	if slices.Equal(first, other) || len(slices.Compact(slices.Sorted(slices.Values(first)))) < n/2 {
		t.Errorf("delays do not vary with the draw: seed 7 %v, seed 8 %v", first, other)
	}

	// Without jitter every response is exactly Delay late.
	synctest.Test(t, func(t *testing.T) {
		for i, d := range delays(t, Faults{Delay: 3 * time.Millisecond}, 5) {
			if d != 3*time.Millisecond {
				t.Errorf("response %d arrived %v late, want 3ms", i, d)
			}
		}
	})
}

// TestDelayClose: a fabric closed while a response is held back delivers
// nothing afterwards and leaves no timer behind (synctest.Test fails on
// a timer or goroutine that outlives the bubble's work).
func TestDelayClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, r, rx := timedHca1(t)
		if err := f.SetFaults(Faults{Delay: time.Second}); err != nil {
			t.Fatal(err)
		}
		if got := r.dr(smp.AttrNodeInfo, 0, 0, 1); got != nil {
			t.Fatal("the response came at once")
		}
		f.Close()
		time.Sleep(2 * time.Second)
		if at, _ := rx.take(); len(at) != 0 {
			t.Errorf("%d responses delivered after Close", len(at))
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		if len(f.late) != 0 {
			t.Errorf("%d delayed MADs still tracked after Close", len(f.late))
		}
	})
}

// TestSetFaultsErrors: bad values are refused, naming the value.
func TestSetFaultsErrors(t *testing.T) {
	f := mustLoad(t, "net.2sw2path4hca", nil)
	for _, tc := range []struct {
		name string
		fl   Faults
		want string
	}{
		{"loss above 1", Faults{Loss: 1.5}, "loss 1.5: not a probability"},
		{"negative delay", Faults{Delay: -time.Millisecond}, "delay -1ms jitter 0s: negative"},
		{"negative jitter", Faults{Jitter: -1}, "delay 0s jitter -1ns: negative"},
		{"unknown dead node", Faults{DeadNodes: []string{"nosuch"}}, `dead node "nosuch": no such node`},
		{"unknown muted node", Faults{MutePortInfo: []PortRef{{Node: "nosuch", Port: 1}}}, `set faults: mute PortInfo "nosuch": no such node`},
		{"unknown muted port", Faults{MutePortInfo: []PortRef{{Node: "Hca1", Port: 9}}}, `set faults: mute PortInfo`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := f.SetFaults(tc.fl)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}
