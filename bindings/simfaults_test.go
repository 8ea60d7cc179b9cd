package bindings

import (
	"context"
	"regexp"
	"strings"
	"testing"

	lua "github.com/yuin/gopher-lua"

	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
)

// SimulatorOf is simmod.Of, set by simmod_test.go (package bindings_test:
// simmod imports bindings, so these tests cannot import it).
var SimulatorOf func(*sim.Fabric) Simulator

// newSimTestState is newTestState with the sim module (Options.Sim).
func newSimTestState(tb testing.TB) (*lua.LState, *Env, *strings.Builder) {
	tb.Helper()
	f := simtest.Default(tb, nil)
	sess := simtest.Session(tb, f, nil)
	var out strings.Builder
	L, env, err := NewState(context.Background(), &Options{Session: sess, Fabric: f, Stdout: &out, Sim: SimulatorOf(f)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { env.Close(); L.Close() })
	return L, env, &out
}

// TestSimModuleAbsent: without Options.Sim there is no sim module.
func TestSimModuleAbsent(t *testing.T) {
	L, _, _ := newTestState(t)
	if err := DoString(L, `assert(sim == nil); assert(not pcall(require, "sim"))`); err != nil {
		t.Error(err)
	}
}

// TestSimFaultsErrors pins sim.faults' argument errors.
func TestSimFaultsErrors(t *testing.T) {
	L, _, _ := newSimTestState(t)
	for _, tc := range []struct{ script, want string }{
		{`sim.faults{loss = "x"}`, `sim\.faults: loss: number expected, got string`},
		{`sim.faults{loss = 2}`, `sim\.faults: loss 2: not a probability`},
		{`sim.faults{seed = -1}`, `sim\.faults: seed -1: want an integer from 0 to 2\^53-1`},
		{`sim.faults{seed = 1.5}`, `sim\.faults: seed 1\.5: want an integer`},
		{`sim.faults{delay = "5 ms"}`, `sim\.faults: delay "5 ms": want milliseconds or a duration such as "5ms"`},
		{`sim.faults{delay = 0/0}`, `sim\.faults: delay NaN: out of range`},
		{`sim.faults{jitter = -2}`, `sim\.faults: delay 0s jitter -2ms: negative`},
		{`sim.faults{jitter = true}`, `sim\.faults: jitter: milliseconds or a duration string expected, got boolean`},
		{`sim.faults{dead = "leaf01"}`, `sim\.faults: dead: table of node names expected, got string`},
		{`sim.faults{dead = {1}}`, `sim\.faults: dead: node names expected, got number`},
		{`sim.faults{dead = {"nosuch"}}`, `sim\.faults: dead node "nosuch": no such node`},
		{`sim.faults{lose = 0.1}`, `sim\.faults: unknown option "lose"`},
		{`sim.faults()`, `bad argument #1 to sim.faults \(table expected, got no value\)`},
	} {
		err := DoString(L, tc.script)
		if err == nil || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
			t.Errorf("%s: err %v, want %s", tc.script, err, tc.want)
		}
	}
	// A bad table changes nothing: the faults set before stay.
	if err := DoString(L, `sim.faults{delay = "1.5ms", jitter = 0.5}
		pcall(sim.faults, {loss = 2})
		smp.nodeinfo("lid:2")
		assert(sim.stats().delayed == 1, "delay was reset")`); err != nil {
		t.Error(err)
	}
}

// TestSimIPoIBErrors pins sim.ipoib's errors, and that addresses it sets
// resolve in the RDMA CM (a second port may not take them).
func TestSimIPoIBErrors(t *testing.T) {
	L, _, _ := newSimTestState(t)
	for _, tc := range []struct{ script, want string }{
		{`sim.ipoib("node002", 1, "10.0.0.300")`, `bad argument #3 to sim\.ipoib \("10\.0\.0\.300" is not an IPv4 or IPv6 address\)`},
		{`sim.ipoib("leaf01", 1, "10.0.0.9")`, `sim\.ipoib: ipoib: no CA or router port "leaf01"\[1\]`},
		{`sim.ipoib("node002", 1, "224.0.0.1")`, `224\.0\.0\.1 is not a unicast IPv4 or IPv6 address`},
		{`sim.ipoib("node002", 1, "10.0.0.2"); sim.ipoib("node003", 1, "10.0.0.2")`, `10\.0\.0\.2 is already "node002"\[1\]'s`},
		{`sim.ipoib()`, `bad argument #1 to sim\.ipoib`},
	} {
		err := DoString(L, tc.script)
		if err == nil || !regexp.MustCompile(tc.want).MatchString(err.Error()) {
			t.Errorf("%s: err %v, want %s", tc.script, err, tc.want)
		}
	}
}
