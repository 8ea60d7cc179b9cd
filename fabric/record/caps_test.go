package record_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/record"
)

// capsTransport is a Transport reporting given Caps, as ibsim over an
// unpaired socket (MaxWindow) or the kernel (Production, RMPP, no
// retransmission count) do; it answers nothing.
type capsTransport struct {
	fabric.Transport
	caps fabric.Caps
}

func (c *capsTransport) Caps() fabric.Caps     { return c.caps }
func (c *capsTransport) Port() fabric.PortAttr { return fabric.PortAttr{} }
func (c *capsTransport) Close() error          { return nil }
func (c *capsTransport) Recv(ctx context.Context, _ *fabric.Packet) error {
	<-ctx.Done()
	return ctx.Err()
}

// TestRecorderCaps: the Recorder reports the capabilities of what it
// wraps. Before issue 21 it dropped MaxWindow (so --record on ibsim over
// an unpaired socket changed the engine's window), SetHandler (so the
// engine ran extra goroutines) and Production, and counted retransmissions
// as 0 for transports that do not count them, so Session.Retransmits said
// (0, true).
func TestRecorderCaps(t *testing.T) {
	for _, inner := range []fabric.Caps{
		{MaxWindow: 8},
		{RMPP: true, Production: true},
	} {
		tr := &capsTransport{caps: inner}
		rec, err := record.NewRecorder(tr, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		fabrictest.TestCapsPassed(t, inner, rec.Caps())
		s, err := engine.New(rec, nil)
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := s.Retransmits(); ok {
			t.Errorf("Session.Retransmits over a recorded transport that does not count = (%d, true), want false", n)
		}
		s.Close()
	}
	p := fabrictest.NewPipe(nil)
	defer p.Close()
	rec, err := record.NewRecorder(p.Transport(), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	fabrictest.TestCapsPassed(t, p.Transport().Caps(), rec.Caps())
}

// TestRecorderConformance: a Recorder keeps the whole Transport contract,
// its handler path included.
func TestRecorderConformance(t *testing.T) {
	fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		p := fabrictest.NewPipe(nil)
		t.Cleanup(func() { p.Close() })
		rec, err := record.NewRecorder(p.Transport(), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		return rec, p
	})
}
