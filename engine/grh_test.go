package engine_test

import (
	"context"
	"errors"
	"testing"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/perf"
)

// grhRecorder records the addresses of what its Transport sends.
type grhRecorder struct {
	fabric.Transport
	sent []fabric.Addr
}

func (r *grhRecorder) Send(ctx context.Context, p *fabric.Packet) error {
	r.sent = append(r.sent, p.Addr)
	return r.Transport.Send(ctx, p)
}

// TestGIDTarget: PerfMgt to a gid: target on InfiniBand goes LID-routed
// (the LID of the port whose GUID is the GID's interface ID) with a GRH,
// and the PMA answers; SMPs to a GID are refused.
func TestGIDTarget(t *testing.T) {
	var rec *grhRecorder
	s, f := simSessionWrap(t, "../tests/topologies/net.2sw2path4hca", "Hca1", 1, nil, func(tr fabric.Transport) fabric.Transport {
		rec = &grhRecorder{Transport: tr}
		return rec
	})
	ctx := t.Context()
	ports, err := f.Ports(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var dst fabric.PortAttr
	for _, p := range ports {
		if p.CAName == "Hca4" && p.PortNum == 1 {
			dst = p
		}
	}
	g, _ := dst.GID(0)
	if _, err := s.Perf(ctx, engine.GID(g), mad.MethodGet, perf.AttrPortCounters, 1, nil); err != nil {
		t.Fatal(err)
	}
	last := rec.sent[len(rec.sent)-1]
	if !last.GRH || last.GID != g || last.LID != dst.LID || last.HopLimit != 64 {
		t.Errorf("PortCounters went to %+v, want LID %d with a GRH to %x", last, dst.LID, g)
	}
	if _, err := s.NodeInfo(ctx, engine.GID(g)); !errors.Is(err, engine.ErrBadTarget) {
		t.Errorf("NodeInfo to a GID: %v, want ErrBadTarget", err)
	}
}
