package engine_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/fabric/fabrictest"
	"github.com/ibscript/ibscript/mad"
)

// earlyTransport delivers a request for an agent the moment Register has
// made it, before Register returns (the window in which the kernel queues
// a C server's first request on its fd), and returns from Register only
// once the Session has taken that request (its reader is back in Recv).
type earlyTransport struct {
	fabric.Transport
	req    []byte
	reqs   chan fabric.Packet
	back   chan struct{}
	armed  atomic.Bool
	closed chan struct{}
}

func (t *earlyTransport) Caps() fabric.Caps {
	c := t.Transport.Caps()
	c.SetHandler = nil // the Session reads through Recv
	return c
}

func (t *earlyTransport) Register(ctx context.Context, a fabric.Agent) (fabric.AgentID, error) {
	id, err := t.Transport.Register(ctx, a)
	if err != nil {
		return id, err
	}
	t.reqs <- fabric.Packet{Agent: id, Addr: fabric.Addr{LID: 7, QPN: 1}, Data: t.req}
	<-t.back
	return id, nil
}

func (t *earlyTransport) Recv(ctx context.Context, p *fabric.Packet) error {
	if t.armed.Swap(false) {
		t.back <- struct{}{}
	}
	select {
	case q := <-t.reqs:
		data := append(p.Data[:0], q.Data...)
		*p = q
		p.Data = data
		t.armed.Store(true)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.closed:
		return net.ErrClosed
	}
}

func (t *earlyTransport) Close() error {
	close(t.closed)
	return t.Transport.Close()
}

// TestServeAnswersEarlyRequest: a request that reaches the port between
// the agent's registration and Serve's handler taking it (ibping -S's
// first ping from a client started at once) is answered, as the C server
// answers what the kernel queued on its fd; it was dropped.
func TestServeAnswersEarlyRequest(t *testing.T) {
	answers := make(chan []byte, 4)
	pipe := fabrictest.NewPipe(&fabrictest.PipeOptions{PacketResponder: func(p *fabric.Packet) ([]byte, bool) {
		answers <- append([]byte(nil), p.Data...)
		return nil, false
	}})
	defer pipe.Close()
	req := fabrictest.NewMAD(1, mad.MethodGet, 0x1234)
	req[1] = mad.ClassPerf
	tr := &earlyTransport{Transport: pipe.Transport(), req: req, reqs: make(chan fabric.Packet), back: make(chan struct{}), closed: make(chan struct{})}
	s, err := engine.New(tr, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	stop, err := s.Serve(t.Context(), fabric.Agent{Class: mad.ClassPerf, Version: 1}.WithMethods(mad.MethodGet), func(r *fabric.Packet) []byte {
		resp := append([]byte(nil), r.Data...)
		resp[3] |= 0x80 // GetResp
		return resp
	})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	select {
	case a := <-answers:
		if !mad.IsResponse(a) || mad.TIDOf(a) != mad.TIDOf(req) {
			t.Errorf("answer method %#x TID %#x; want the request's TID %#x answered", mad.MethodOf(a), mad.TIDOf(a), mad.TIDOf(req))
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the request that came while Serve registered its agent was not answered")
	}
}
