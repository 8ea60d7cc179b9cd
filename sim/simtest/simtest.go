// Package simtest holds what tests share to run on the embedded simulator:
// the bundled fabric, and an engine session on it (or on any fabric),
// closed when the test ends. It is imported by tests only (internal/archtest).
package simtest

import (
	"context"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/sim"
)

// Load returns the fabric of the topology file path (sim.Load) with
// options o (nil: the defaults), closed when tb ends.
func Load(tb testing.TB, path string, o *sim.Options) *sim.Fabric {
	tb.Helper()
	f, err := sim.Load(path, o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// Default returns the bundled fabric (sim.Default) with options o (nil:
// the defaults), closed when tb ends.
func Default(tb testing.TB, o *sim.Options) *sim.Fabric {
	tb.Helper()
	f, err := sim.Default(o)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { f.Close() })
	return f
}

// Session returns an engine session with options o (nil: the defaults)
// on f's default port (umad_get_port(NULL, 0)'s; on the simulator the
// SM's), closed when tb ends.
func Session(tb testing.TB, f fabric.Fabric, o *engine.Options) *engine.Session {
	tb.Helper()
	return PortSession(tb, f, "", 0, o)
}

// PortSession is Session on f's port ca/port.
func PortSession(tb testing.TB, f fabric.Fabric, ca string, port int, o *engine.Options) *engine.Session {
	tb.Helper()
	tr, err := f.Open(context.Background(), ca, port)
	if err != nil {
		tb.Fatal(err)
	}
	sess, err := engine.New(tr, o)
	if err != nil {
		tr.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sess.Close() })
	return sess
}
