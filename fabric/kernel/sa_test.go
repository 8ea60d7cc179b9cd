package kernel_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/sa"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// TestSAGetTableKernelRMPP runs an SA GetTable through the kernel
// Transport, with an SA (another fd of the same port, as OpenSM on the
// host) answering with a 616-byte RMPP message. The kernel delivers a
// reassembled message as one record; the adapter grows its buffer on
// ENOSPC and the engine, seeing Caps().RMPP, hands it over as it is.
func TestSAGetTableKernelRMPP(t *testing.T) { saGetTableRMPP(t, twoCA) }

// TestSAGetTablePlanesRMPP: the same through a planarized port's pair,
// the SA answering on the GSI side (its SM LID is itself).
func TestSAGetTablePlanesRMPP(t *testing.T) { saGetTableRMPP(t, planarHost) }

func saGetTableRMPP(t *testing.T, host func() *umadtest.Host) {
	synctest.Test(t, func(t *testing.T) {
		f := newFabric(t, host())
		ctx := t.Context()
		tr, err := f.Open(ctx, "", 0)
		if err != nil {
			t.Fatal(err)
		}
		sm, err := f.Open(ctx, "mlx5_0", 1) // the SM's fd; the port's SM LID is itself
		if err != nil {
			t.Fatal(err)
		}
		id, err := sm.Register(ctx, fabric.Agent{Class: mad.ClassSubnAdm, Version: sa.ClassVersion}.WithMethods(mad.MethodGetTable))
		if err != nil {
			t.Fatal(err)
		}
		const n, stride = 5, 112
		var wg sync.WaitGroup
		wg.Go(func() {
			var p fabric.Packet
			for {
				if err := sm.Recv(context.Background(), &p); err != nil {
					if !errors.Is(err, net.ErrClosed) {
						t.Errorf("SA recv: %v", err)
					}
					return
				}
				resp := make([]byte, sa.HeaderSize+n*stride)
				copy(resp, p.Data[:mad.HeaderSize])
				resp[3] = mad.MethodGetTable | 0x80
				resp[24], resp[25], resp[26] = 1, 1, 0x07 // RMPP v1, DATA, Active|First|Last
				sa.SetAttributeOffset(resp, stride/8)
				for i := range n {
					resp[sa.HeaderSize+i*stride] = byte(i + 1)
				}
				if err := sm.Send(ctx, &fabric.Packet{Agent: id, Addr: p.Addr, Data: resp}); err != nil {
					t.Errorf("SA send: %v", err)
				}
			}
		})
		defer func() { sm.Close(); wg.Wait() }()
		s, err := engine.New(tr, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		attr, _ := sa.AttrByName("NodeRecord")
		recs, err := s.SAGetTable(ctx, attr, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != n || recs[0][0] != 1 || recs[n-1][0] != n {
			t.Errorf("got %d records, want %d in order", len(recs), n)
		}
	})
}
