package pair_test

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/pair"
	"github.com/ibscript/ibscript/internal/leaktest"
	"github.com/ibscript/ibscript/mad"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

var attr = fabric.PortAttr{CAName: "mlx5_0", PortNum: 1, LID: 1, SMIName: "mlx5_1", SMIPort: 1}

// TestConformance runs the Transport suite on a pair of two in-memory
// ports: the suite's GMPs travel on the GSI side, which is its peer.
func TestConformance(t *testing.T) {
	fabrictest.TestTransport(t, func(t *testing.T) (fabric.Transport, fabrictest.Peer) {
		smi := fabrictest.NewPipe(nil)
		gsi := fabrictest.NewPipe(&fabrictest.PipeOptions{Responder: fabrictest.Echo})
		return pair.New(smi.Transport(), gsi.Transport(), attr), gsi
	})
}

// TestSides: agents of classes 0x01 and 0x81 send through the SMI side,
// every other class (and send-only class 0) through the GSI side, and the
// answers come back to the pair's agent ids.
func TestSides(t *testing.T) {
	smi := fabrictest.NewPipe(&fabrictest.PipeOptions{Responder: fabrictest.Echo})
	gsi := fabrictest.NewPipe(&fabrictest.PipeOptions{Responder: fabrictest.Echo})
	tr := pair.New(smi.Transport(), gsi.Transport(), attr)
	defer tr.Close()
	if a := tr.Port(); a.CAName != attr.CAName || a.SMIName != attr.SMIName || a.SMIPort != attr.SMIPort {
		t.Errorf("Port() = %+v, want %+v", tr.Port(), attr)
	}
	fabrictest.TestCapsPassed(t, gsi.Transport().Caps(), tr.Caps())
	ctx := t.Context()
	for i, c := range []struct {
		class, version uint8
		smi            bool
	}{{mad.ClassSubnLID, 1, true}, {mad.ClassSubnDR, 1, true}, {mad.ClassPerf, 1, false}, {mad.ClassSubnAdm, 2, false}, {mad.ClassCC, 2, false}, {0, 1, false}} {
		id, err := tr.Register(ctx, fabric.Agent{Class: c.class, Version: c.version})
		if err != nil || id != fabric.AgentID(i) {
			t.Fatalf("Register class 0x%02x = %d, %v; want %d", c.class, id, err, i)
		}
		class := c.class
		if class == 0 {
			class = mad.ClassPerf // a send-only agent sends any class
		}
		m := fabrictest.NewMAD(c.version, mad.MethodGet, uint64(0x100+i))
		m[1] = class
		s0, g0 := smi.Requests(), gsi.Requests()
		if err := tr.Send(ctx, &fabric.Packet{Agent: id, Timeout: 1e9, Data: m}); err != nil {
			t.Fatal(err)
		}
		var p fabric.Packet
		if err := tr.Recv(ctx, &p); err != nil || p.Agent != id || p.Status != 0 || uint32(mad.TIDOf(p.Data)) != uint32(0x100+i) {
			t.Fatalf("class 0x%02x: answer agent %d status %d TID %#x, %v; want agent %d", c.class, p.Agent, p.Status, mad.TIDOf(p.Data), err, id)
		}
		if gotSMI := smi.Requests() - s0; (gotSMI == 1) != c.smi || gsi.Requests()-g0+gotSMI != 1 {
			t.Errorf("class 0x%02x: %d requests on the SMI side, %d on the GSI side; want it on the SMI side: %v", c.class, gotSMI, gsi.Requests()-g0, c.smi)
		}
	}
	if err := tr.Unregister(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if err := tr.Send(ctx, &fabric.Packet{Agent: 1, Data: fabrictest.NewMAD(1, mad.MethodGet, 1)}); err == nil {
		t.Error("Send from an unregistered agent succeeded")
	}
	if id, err := tr.Register(ctx, fabric.Agent{Class: mad.ClassPerf, Version: 1}.WithMethods(mad.MethodTrap)); err != nil || id != 1 {
		t.Errorf("Register after Unregister(1) = %d, %v; want 1", id, err)
	}
}

// TestSidesClosedUnderPair: sides closed by their owner (kernel.Fabric's
// Close closes every umad port it opened, a pair's sides among them) end
// their readers though nobody reads the pair, and the pair's Recv says the
// port is closed from then on, rather than waiting for its context.
func TestSidesClosedUnderPair(t *testing.T) {
	for _, first := range []int{0, 1} {
		before := goleak.IgnoreCurrent()
		pipes := [2]*fabrictest.Pipe{fabrictest.NewPipe(nil), fabrictest.NewPipe(nil)}
		tr := pair.New(pipes[0].Transport(), pipes[1].Transport(), attr)
		if err := pipes[first].Transport().Close(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		var p fabric.Packet
		if err := tr.Recv(ctx, &p); !errors.Is(err, net.ErrClosed) {
			t.Errorf("side %d closed: Recv = %v; want an error wrapping net.ErrClosed", first, err)
		}
		cancel()
		if err := pipes[1-first].Transport().Close(); err != nil {
			t.Fatal(err)
		}
		// Both readers have ended: the pair is not closed, and nobody reads it.
		if err := goleak.Find(before); err != nil {
			t.Errorf("side %d, then the other, closed: %v", first, err)
		}
		tr.Close()
	}
}
