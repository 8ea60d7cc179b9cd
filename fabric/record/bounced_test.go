package record_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/fabric/record"
	"github.com/ibscript/ibscript/mad"
)

// timeoutTransport times out every request, as ibsim does (Caps.NoTimeouts):
// one to LID 1 bounced back by the fabric, others delivered and unanswered.
type timeoutTransport struct {
	capsTransport
	ch chan fabric.Packet
}

func (c *timeoutTransport) Send(_ context.Context, p *fabric.Packet) error {
	c.ch <- fabric.Packet{Agent: p.Agent, Status: fabric.StatusTimeout, Bounced: p.Addr.LID == 1, Addr: p.Addr, Data: append([]byte(nil), p.Data...)}
	return nil
}

func (c *timeoutTransport) Recv(ctx context.Context, p *fabric.Packet) error {
	select {
	case q := <-c.ch:
		*p = q
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestRecordBounced: a recording keeps whether a timeout was bounced by the
// fabric or delivered and left unanswered (fabric.Packet.Bounced), and that
// the fabric times nothing out itself (Caps.NoTimeouts), so a replay tells
// the two apart as the run did (ibsysstat prints the C client's iberror for
// the one and its ibpanic for the other); the replay lost both.
func TestRecordBounced(t *testing.T) {
	tr := &timeoutTransport{capsTransport{caps: fabric.Caps{NoTimeouts: true}}, make(chan fabric.Packet, 2)}
	var buf bytes.Buffer
	rec, err := record.NewRecorder(tr, &buf)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	send := func(tr fabric.Transport, lid uint16) fabric.Packet {
		t.Helper()
		req := fabrictest.NewMAD(1, mad.MethodGet, uint64(lid))
		if err := tr.Send(ctx, &fabric.Packet{Timeout: time.Millisecond, Addr: fabric.Addr{LID: lid}, Data: req}); err != nil {
			t.Fatal(err)
		}
		var p fabric.Packet
		if err := tr.Recv(ctx, &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, lid := range []uint16{1, 2} {
		send(rec, lid)
	}
	rec.Close()
	r, err := record.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	re := record.NewReplay(r)
	defer re.Close()
	if !re.Caps().NoTimeouts {
		t.Error("the replay's Caps.NoTimeouts is false; the recorded transport's was true")
	}
	for _, lid := range []uint16{1, 2} {
		if p := send(re, lid); p.Status != fabric.StatusTimeout || p.Bounced != (lid == 1) {
			t.Errorf("LID %d: replayed status %d, bounced %v; recorded %d, %v", lid, p.Status, p.Bounced, fabric.StatusTimeout, lid == 1)
		}
	}
}
