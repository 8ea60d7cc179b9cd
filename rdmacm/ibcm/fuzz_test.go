package ibcm

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad/cm"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
)

// FuzzHandle feeds arbitrary CM messages (attribute, Comm IDs aimed at the
// device's ids, the rest of the body as it comes) to a device with a
// listener, an active id whose REQ is out and the new id of an accepted
// request: whatever arrives, the device neither panics nor leaves its
// tables inconsistent (every Comm ID maps to a live id that holds it).
func FuzzHandle(f *testing.F) {
	fab, err := sim.Load("../../tests/topologies/net.2sw2path4hca", nil)
	if err != nil {
		f.Fatal(err)
	}
	defer fab.Close()
	s := simtest.Session(f, fab, nil)
	d := New(fab, s, nil)
	defer d.Close()
	c, _ := d.OpenChannel()
	ch := c.(*Channel)
	ports, _ := fab.Ports(context.Background())
	var lids []uint16
	for _, p := range ports {
		if p.LID != 0 {
			lids = append(lids, p.LID)
		}
	}
	gid := func(lid uint16) fabric.CMAddr {
		for _, p := range ports {
			if p.LID == lid {
				return fabric.CMAddr{GID: [16]byte(append(binary.BigEndian.AppendUint64(nil, p.GIDPrefix), binary.BigEndian.AppendUint64(nil, p.PortGUID)...))}
			}
		}
		return fabric.CMAddr{}
	}
	// A listener on lids[0], port 9 of RDMA_PS_TCP.
	l, _ := ch.CreateID(1, 0x0106, 2)
	la := gid(lids[0])
	la.ServiceID = 0x0106<<16 | 9
	if err := ch.Bind(l, la); err != nil {
		f.Fatal(err)
	}
	if err := ch.Listen(l, 0); err != nil {
		f.Fatal(err)
	}
	// An active id from lids[1] to the listener, its REQ out.
	a, _ := ch.CreateID(2, 0x0106, 2)
	dst := gid(lids[0])
	dst.ServiceID = 0x0106<<16 | 9
	if err := ch.ResolveAddr(a, nil, dst, 0); err != nil {
		f.Fatal(err)
	}
	if err := ch.ResolveRoute(a, 5e9); err != nil {
		f.Fatal(err)
	}
	for ev, err := ch.GetEvent(context.Background()); ev.Type != evRouteResolved; ev, err = ch.GetEvent(context.Background()) {
		if err != nil {
			f.Fatal(err)
		}
	}
	if err := ch.Connect(a, &fabric.CMConnParam{}); err != nil {
		f.Fatal(err)
	}
	d.mu.Lock()
	var comms []uint32
	for v := range d.comms {
		comms = append(comms, v)
	}
	p := d.ports[lids[0]]
	d.mu.Unlock()
	for _, attr := range []uint16{cm.AttrREQ, cm.AttrMRA, cm.AttrREJ, cm.AttrREP, cm.AttrRTU, cm.AttrDREQ, cm.AttrDREP, cm.AttrSIDRReq, cm.AttrSIDRRep, 0x19, 0x1a} {
		f.Add(attr, uint8(0), []byte{0x01, 0x06, 0, 9})
	}
	f.Fuzz(func(t *testing.T, attr uint16, which uint8, body []byte) {
		b, mb := cm.NewMAD(attr, uint64(which))
		copy(mb, body)
		if len(comms) > 0 {
			// Aim the message at an id: bytes 4..8 are the Remote
			// Comm ID of every message but REQ and the SIDRs.
			binary.BigEndian.PutUint32(mb[4:], comms[int(which)%len(comms)])
		}
		pk := fabric.Packet{Data: b, Addr: fabric.Addr{LID: lids[1], QPN: 1}}
		d.mu.Lock()
		defer d.mu.Unlock()
		d.handleLocked(p, &pk)
		for v, i := range d.comms {
			if i.localComm != v || i.state == stDestroyed || d.ids[i.handle] != i {
				t.Fatalf("Comm ID %#x maps to id %d (comm %#x, state %d)", v, i.handle, i.localComm, i.state)
			}
		}
	})
}
