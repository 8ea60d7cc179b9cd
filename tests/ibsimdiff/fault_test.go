package ibsimdiff

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/ibsim"
	"github.com/ibscript/ibscript/internal/ibsimtest"
	"github.com/ibscript/ibscript/topo"
)

const topoFat50 = "../topologies/fattree-50.net"

// private starts an ibsim of the test's own (faults must not disturb the
// shared ones), without an SM: directed routes need none.
func private(t *testing.T, topology string) *ibsimtest.Sim {
	t.Helper()
	ibsimtest.Require(t)
	s, err := ibsimtest.Start(t.Context(), t.TempDir(), topology, &ibsimtest.Options{NoSM: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// TestDiscoverWithDrops: with the ibsim console's Error rate at 10% on
// every switch port, discovery still finds every node and link (the same
// ibnetdiscover text as without drops) and reports the retransmissions it
// needed. ibsim bounces a dropped MAD to its sender with status 110; the
// client drops the bounce and the Mux's timer retries, as after a loss on
// a real fabric.
func TestDiscoverWithDrops(t *testing.T) {
	s := private(t, topoFat50)
	eo := &engine.Options{Timeout: 10 * time.Millisecond, Retries: 30}
	sess, tr := session(t, s, "", nil, eo)
	ctx := t.Context()
	clean, err := sess.Discover(ctx, nil)
	if err != nil || len(clean.Errors) > 0 {
		t.Fatalf("discover without drops: %v %v", err, clean.Errors)
	}
	// Without drops a retransmit only follows a 10ms timeout on a loaded
	// machine; it is logged, not asserted.
	for _, n := range clean.Fabric.Nodes {
		if n.Type == topo.Switch {
			if _, err := s.Console(ctx, fmt.Sprintf("Error %q 10", n.Desc)); err != nil {
				t.Fatal(err)
			}
		}
	}
	before := tr.Stats()
	d, err := sess.Discover(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range d.Errors {
		t.Errorf("with 10%% drops: %s: %v", e.Path, e.Err)
	}
	after := tr.Stats()
	dropped := after.Dropped - before.Dropped
	if len(d.Fabric.Nodes) != len(clean.Fabric.Nodes) {
		t.Errorf("with drops: %d nodes, want %d", len(d.Fabric.Nodes), len(clean.Fabric.Nodes))
	}
	var a, b bytes.Buffer
	wo := &topo.WriteOptions{Time: time.Unix(0, 0)}
	topo.WriteIBNetDiscover(&a, clean.Fabric, wo)
	topo.WriteIBNetDiscover(&b, d.Fabric, wo)
	if a.String() != b.String() {
		t.Errorf("with drops the fabric differs:\n%s", lineDiff(a.String(), b.String()))
	}
	if d.Retransmits == 0 || dropped == 0 {
		t.Errorf("with drops: %d retransmits, %d bounces seen; want both > 0", d.Retransmits, dropped)
	}
	t.Logf("fattree-50, Error 10 on every switch port: %d nodes, %d SMPs, %d bounced by ibsim (%.1f%% of %d sent), %d retransmits, %v (clean sweep %v, %d retransmits)",
		len(d.Fabric.Nodes), d.MADs, dropped, 100*float64(dropped)/float64(uint64(d.MADs)+d.Retransmits), uint64(d.MADs)+d.Retransmits,
		d.Retransmits, d.Elapsed.Round(time.Millisecond), clean.Elapsed.Round(time.Millisecond), clean.Retransmits)
}

// killAt is a Transport that kills ibsim when the n-th MAD is sent.
type killAt struct {
	fabric.Transport
	n    atomic.Int64
	at   int64
	once sync.Once
	kill func()
	// killed is when the kill returned (ibsim reaped); zero when the
	// n-th send never came.
	killed atomic.Pointer[time.Time]
}

func (k *killAt) Send(ctx context.Context, p *fabric.Packet) error {
	if k.n.Add(1) == k.at {
		k.once.Do(func() {
			k.kill()
			now := time.Now()
			k.killed.Store(&now)
		})
	}
	return k.Transport.Send(ctx, p)
}

// TestKillIbsimMidDiscovery: SIGKILL of ibsim in the middle of a sweep ends
// the sweep at once with one error saying ibsim is gone (wrapping
// fabric.ErrPeerGone and the socket's error), no partial Discovery, and
// Close does not hang.
func TestKillIbsimMidDiscovery(t *testing.T) {
	s := private(t, topoFat500)
	tr, err := ibsim.Open(t.Context(), s.Sock, nil)
	if err != nil {
		t.Fatal(err)
	}
	k := &killAt{Transport: tr, at: 500, kill: s.Kill}
	// A per-try timeout no answer misses on a loaded machine (at 100 ms,
	// a sweep under load could fail its first SMPs and end before the
	// 500th send: "ibsim survived the kill"), and long enough that one
	// waited out shows: after the kill, nothing may wait for it.
	const timeout, retries = 5 * time.Second, 2
	sess, err := engine.New(k, &engine.Options{Timeout: timeout, Retries: retries})
	if err != nil {
		tr.Close()
		t.Fatal(err)
	}
	d, err := sess.Discover(t.Context(), nil)
	end := time.Now()
	killed := k.killed.Load()
	if killed == nil {
		t.Fatalf("discover ended after %d sends, before the kill at send %d: %v", k.n.Load(), k.at, err)
	}
	if s.Alive() {
		t.Fatal("ibsim survived the kill")
	}
	// Bound: the first send after the kill is refused and fails every
	// waiter; nothing waits out its timeout, let alone its retries.
	elapsed := end.Sub(*killed)
	if elapsed >= timeout {
		t.Errorf("discover took %v after the kill, want less than one try's timeout (%v): a call waited it out", elapsed, timeout)
	}
	if d != nil || !errors.Is(err, fabric.ErrPeerGone) || !strings.Contains(err.Error(), "is gone") {
		t.Fatalf("discover with ibsim killed: %v (partial result %v), want one error wrapping fabric.ErrPeerGone", err, d != nil)
	}
	t.Logf("killed at send 500: discover returned after %v: %v", elapsed.Round(time.Millisecond), err)
	if _, err := sess.NodeInfo(t.Context(), engine.LID(1)); !errors.Is(err, fabric.ErrPeerGone) {
		t.Errorf("a call after the peer is gone: %v, want the same error", err)
	}
	cstart := time.Now()
	cerr := sess.Close()
	if el := time.Since(cstart); el > ibsim.DefaultCtlTimeout+time.Second {
		t.Errorf("Close took %v with ibsim gone", el)
	}
	if cerr == nil || !strings.Contains(cerr.Error(), "disconnect") {
		t.Errorf("Close with ibsim gone: %v, want an error about the disconnect", cerr)
	}
}

// privateSM starts an ibsim with OpenSM of the test's own.
// privateInit is privateSM with the ports initPorts names brought up,
// as shared.Get brings them up; osmArgs are OpenSM's extra options.
func privateInit(t *testing.T, topology string, osmArgs ...string) *ibsimtest.Sim {
	t.Helper()
	ibsimtest.Require(t)
	s, err := ibsimtest.Start(t.Context(), t.TempDir(), topology, &ibsimtest.Options{InitPorts: initPorts(topology), OSMArgs: osmArgs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

func privateSM(t *testing.T, topology string) *ibsimtest.Sim {
	t.Helper()
	ibsimtest.Require(t)
	s, err := ibsimtest.Start(t.Context(), t.TempDir(), topology, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}
