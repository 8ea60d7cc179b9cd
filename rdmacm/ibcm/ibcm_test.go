package ibcm_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/mad/cm"
	"github.com/ibscript/ibscript/rdmacm"
	"github.com/ibscript/ibscript/rdmacm/cmtest"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
)

const topology = "../../tests/topologies/net.2sw2path4hca"

// rig is a CM over the user-space IB CM on the simulated 2sw2path4hca
// fabric, and its four CA ports.
type rig struct {
	cm    *rdmacm.CM
	f     *sim.Fabric
	lids  []uint16
	names []string // node of each of lids
	guids []uint64 // node GUID of each of lids
}

func newRig(tb testing.TB, opts *rdmacm.Options) *rig {
	tb.Helper()
	f := simtest.Load(tb, topology, nil)
	c, err := rdmacm.New(f, simtest.Session(tb, f, nil), opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	if c.Platform() {
		tb.Fatal("the simulator has no platform CM")
	}
	ports, err := f.Ports(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	r := &rig{cm: c, f: f}
	for _, p := range ports {
		if p.LID != 0 {
			r.lids = append(r.lids, p.LID)
			r.names = append(r.names, p.CAName)
			r.guids = append(r.guids, p.NodeGUID)
		}
	}
	if len(r.lids) < 4 {
		tb.Fatalf("only %d CA ports with LIDs", len(r.lids))
	}
	// IPoIB addresses of the first four: 10.0.0.N and fd00::N.
	i := 0
	for _, p := range ports {
		if p.LID == 0 || i == 4 {
			continue
		}
		if err := f.SetIPoIB(p.CAName, p.PortNum, testIPv4[i], testIPv6[i]); err != nil {
			tb.Fatal(err)
		}
		i++
	}
	return r
}

var (
	testIPv4 = []netip.Addr{netip.MustParseAddr("10.0.0.1"), netip.MustParseAddr("10.0.0.2"), netip.MustParseAddr("10.0.0.3"), netip.MustParseAddr("10.0.0.4")}
	testIPv6 = []netip.Addr{netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2"), netip.MustParseAddr("fd00::3"), netip.MustParseAddr("fd00::4")}
)

// TestConformanceSim runs the CM conformance suite on the user-space IB CM
// over the embedded simulator.
func TestConformanceSim(t *testing.T) {
	var lids [4]uint16
	copy(lids[:], newRig(t, nil).lids)
	cmtest.Run(t, cmtest.Hosts{LIDs: lids, IPv4: testIPv4, IPv6: testIPv6,
		New: func(t *testing.T, o *rdmacm.Options) *rdmacm.CM { return newRig(t, o).cm }})
}

func (r *rig) listen(tb testing.TB, lid, port uint16, ps rdmacm.PortSpace) (*rdmacm.EventChannel, *rdmacm.ID) {
	tb.Helper()
	ch, _ := r.cm.CreateEventChannel()
	id, err := r.cm.CreateID(ch, ps, false)
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.cm.BindAddr(tb.Context(), id, rdmacm.Addr{LID: lid, Port: port}); err != nil {
		tb.Fatal(err)
	}
	if err := r.cm.Listen(tb.Context(), id, 0); err != nil {
		tb.Fatal(err)
	}
	return ch, id
}

func (r *rig) route(tb testing.TB, ch *rdmacm.EventChannel, src, dst, port uint16, ps rdmacm.PortSpace) *rdmacm.ID {
	tb.Helper()
	id, err := r.cm.CreateID(ch, ps, false)
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.cm.ResolveAddr(tb.Context(), id, &rdmacm.Addr{LID: src}, rdmacm.Addr{LID: dst, Port: port}); err != nil {
		tb.Fatal(err)
	}
	cmtest.Ack(tb, r.cm, cmtest.Event(tb, ch, rdmacm.EventAddrResolved))
	if err := r.cm.ResolveRoute(tb.Context(), id); err != nil {
		tb.Fatal(err)
	}
	cmtest.Ack(tb, r.cm, cmtest.Event(tb, ch, rdmacm.EventRouteResolved))
	return id
}

// rawPeer is a CM peer played by hand on a transport of its own.
type rawPeer struct {
	tr    fabric.Transport
	agent fabric.AgentID
	lid   uint16
}

func newRawPeer(tb testing.TB, f *sim.Fabric, node string) *rawPeer {
	tb.Helper()
	tr, err := f.Attach(node, 1)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { tr.Close() })
	ag := fabric.Agent{Class: mad.ClassCM, Version: cm.ClassVersion}.WithMethods(mad.MethodSend)
	id, err := tr.Register(context.Background(), ag)
	if err != nil {
		tb.Fatal(err)
	}
	return &rawPeer{tr: tr, agent: id, lid: tr.Port().LID}
}

func (p *rawPeer) send(tb testing.TB, dlid uint16, b []byte) {
	tb.Helper()
	if err := p.tr.Send(context.Background(), &fabric.Packet{Agent: p.agent, Addr: fabric.Addr{LID: dlid, QPN: 1, QKey: cm.QKey}, Data: b}); err != nil {
		tb.Fatal(err)
	}
}

// recv returns the next CM message's attribute and body.
func (p *rawPeer) recv(tb testing.TB) (uint16, []byte) {
	tb.Helper()
	var pk fabric.Packet
	if err := p.tr.Recv(tb.Context(), &pk); err != nil {
		tb.Fatal(err)
	}
	return mad.AttrIDOf(pk.Data), append([]byte(nil), pk.Data[mad.HeaderSize:]...)
}

// TestAFIBPrivateData: the REQ and SIDR_REQ on the wire carry the caller's
// private data at offset 0 of their private data fields, with no RDMA CM
// header in front (AF_IB, as the kernel sends them), and the service ID
// is the port space's and port's.
func TestAFIBPrivateData(t *testing.T) {
	r := newRig(t, nil)
	c := r.cm
	peer := newRawPeer(t, r.f, r.names[2])
	ch, _ := c.CreateEventChannel()
	a := r.route(t, ch, r.lids[1], r.lids[2], 4791, rdmacm.PSTCP)
	pd := bytes.Repeat([]byte{0xa5}, rdmacm.MaxConnectPrivateData)
	copy(pd, "af_ib")
	if err := c.Connect(t.Context(), a, rdmacm.ConnParam{PrivateData: pd}); err != nil {
		t.Fatal(err)
	}
	attr, body := peer.recv(t)
	var req cm.REQ
	if err := req.UnmarshalBinary(body); err != nil || attr != cm.AttrREQ {
		t.Fatalf("%s: %v", cm.Name(attr), err)
	}
	if !bytes.Equal(req.PrivateData[:], pd) {
		t.Errorf("REQ private data % x, want the caller's 92 bytes", req.PrivateData[:8])
	}
	if want := uint64(rdmacm.PSTCP)<<16 | 4791; req.ServiceID != want {
		t.Errorf("service ID %#x, want %#x", req.ServiceID, want)
	}
	u := r.route(t, ch, r.lids[1], r.lids[2], 4792, rdmacm.PSUDP)
	if err := c.Connect(t.Context(), u, rdmacm.ConnParam{PrivateData: []byte("sidr")}); err != nil {
		t.Fatal(err)
	}
	for {
		attr, body = peer.recv(t)
		if attr == cm.AttrSIDRReq {
			break
		}
	}
	var sreq cm.SIDRReq
	if err := sreq.UnmarshalBinary(body); err != nil {
		t.Fatal(err)
	}
	if string(sreq.PrivateData[:4]) != "sidr" || sreq.PrivateData[4] != 0 {
		t.Errorf("SIDR_REQ private data %q", sreq.PrivateData[:8])
	}
	if err := c.Connect(t.Context(), u, rdmacm.ConnParam{PrivateData: make([]byte, rdmacm.MaxUDPrivateData+1)}); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("%d bytes of SIDR private data: %v", rdmacm.MaxUDPrivateData+1, err)
	}
}

// TestRouteErrorStatus: the SA has no path to the GID: ROUTE_ERROR
// -EHOSTUNREACH (-ETIMEDOUT is for an SA that does not answer).
func TestRouteErrorStatus(t *testing.T) {
	r := newRig(t, nil)
	c := r.cm
	ch, _ := c.CreateEventChannel()
	a, _ := c.CreateID(ch, rdmacm.PSTCP, false)
	if err := c.ResolveAddr(t.Context(), a, nil, rdmacm.Addr{GID: cmtest.NoPathGID(), Port: 1}); err != nil {
		t.Fatal(err)
	}
	cmtest.Ack(t, c, cmtest.Event(t, ch, rdmacm.EventAddrResolved))
	if err := c.ResolveRoute(t.Context(), a); err != nil {
		t.Fatal(err)
	}
	if ev := cmtest.Event(t, ch, rdmacm.EventRouteError); ev.Status != -int(syscall.EHOSTUNREACH) {
		t.Errorf("ROUTE_ERROR status %d, want %d", ev.Status, -int(syscall.EHOSTUNREACH))
	}
}

// TestUnreachable: a REQ to a port whose CM never answers (a raw agent
// owns CM Sends there and stays silent) is resent MaxCMRetries times on the
// CM timer, then UNREACHABLE -ETIMEDOUT (fake time).
func TestUnreachable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		c := r.cm
		hung := newRawPeer(t, r.f, r.names[2])
		ch, _ := c.CreateEventChannel()
		a := r.route(t, ch, r.lids[1], r.lids[2], 1, rdmacm.PSTCP)
		start := time.Now()
		if err := c.Connect(t.Context(), a, rdmacm.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		ev, err := ch.GetEvent(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != rdmacm.EventUnreachable || ev.Status != -int(syscall.ETIMEDOUT) {
			t.Fatalf("%v %d", ev.Type, ev.Status)
		}
		// 16 tries of 4.096us x 2^20 + 2 x 4.096us x 2^18 (the SA's
		// PathRecord PacketLifeTime 0x12, as OpenSM answers).
		if got, want := time.Since(start), 16*(4294967296+2147483648)*time.Nanosecond; got != want {
			t.Errorf("UNREACHABLE after %v, want %v", got, want)
		}
		c.AckEvent(ev)
		// What the peer got: the 16 REQs and nothing else (Linux's CM
		// sends no REJ when its REQ times out).
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		var attrs []string
		for {
			var pk fabric.Packet
			if err := hung.tr.Recv(ctx, &pk); err != nil {
				break
			}
			attrs = append(attrs, cm.Name(mad.AttrIDOf(pk.Data)))
		}
		if want := strings.Repeat("REQ ", 16); strings.Join(attrs, " ")+" " != want {
			t.Errorf("the silent peer got %v, want 16 REQs", attrs)
		}
	})
}

// TestNoListenerAnywhere: a port of the fabric where no id of the CM was
// ever bound answers as Linux's CM does on every port: a REQ gets REJ 8
// (invalid service ID) at once, a SIDR_REQ SIDR_REP status 1, instead of
// silence and UNREACHABLE after the CM retries (fake time: no timer runs).
func TestNoListenerAnywhere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		c := r.cm
		ch, _ := c.CreateEventChannel()
		start := time.Now()
		a := r.route(t, ch, r.lids[1], r.lids[2], 7, rdmacm.PSTCP)
		if err := c.Connect(t.Context(), a, rdmacm.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		ev := cmtest.Event(t, ch, rdmacm.EventRejected)
		if ev.Status != int(cm.RejInvalidServiceID) {
			t.Fatalf("connect to a port where nothing listens: status %d, want REJECTED 8", ev.Status)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("REJECTED after %v of CM timers, want at once", d)
		}
		cmtest.Ack(t, c, ev)
		u := r.route(t, ch, r.lids[0], r.lids[3], 9, rdmacm.PSUDP)
		if err := c.Connect(t.Context(), u, rdmacm.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		ev = cmtest.Event(t, ch, rdmacm.EventUnreachable)
		if ev.Status != int(cm.SIDRUnsupportedSID) || time.Since(start) != 0 {
			t.Errorf("SIDR_REQ to a port where nothing listens: UNREACHABLE status %d after %v, want 1 at once", ev.Status, time.Since(start))
		}
		cmtest.Ack(t, c, ev)
	})
}

// reqMAD is a REQ of the hand-played peer to port 99 of srv.
func reqMAD(peer *rawPeer, srv uint16, comm uint32, retries uint8) []byte {
	q := cm.REQ{LocalCommID: comm, ServiceID: uint64(rdmacm.PSTCP)<<16 | 99, LocalQPN: 0x77,
		LocalCMResponseTimeout: 16, RemoteCMResponseTimeout: 16, MaxCMRetries: retries, PKey: 0xffff,
		PrimaryLocalLID: peer.lid, PrimaryRemoteLID: srv, PrimaryLocalACKTimeout: 1}
	b, body := cm.NewMAD(cm.AttrREQ, uint64(comm))
	_, _ = q.AppendBinary(body[:0])
	return b
}

// TestTimersAgainstSilentPeer: a hand-played active peer sends a REQ and
// then stays silent: the CM's REP is resent MaxCMRetries times and the
// passive id gets UNREACHABLE -ETIMEDOUT; on a second connection the peer
// answers with an RTU, then ignores the DREQ, which ends in DISCONNECTED
// -ETIMEDOUT. Fake time.
func TestTimersAgainstSilentPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		c := r.cm
		peer := newRawPeer(t, r.f, r.names[1])
		srv := r.lids[0]
		lch, _ := r.listen(t, srv, 99, rdmacm.PSTCP)
		// Connection 1: no RTU.
		peer.send(t, srv, reqMAD(peer, srv, 0x1001, 2))
		if attr, _ := peer.recv(t); attr != cm.AttrMRA {
			t.Fatalf("after REQ: %s, want MRA", cm.Name(attr))
		}
		ev := cmtest.Event(t, lch, rdmacm.EventConnectRequest)
		cmtest.Ack(t, c, ev)
		start := time.Now()
		if err := c.Accept(t.Context(), ev.ID, rdmacm.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			attr, body := peer.recv(t)
			var rep cm.REP
			_ = rep.UnmarshalBinary(body)
			if attr != cm.AttrREP || rep.RemoteCommID != 0x1001 {
				t.Fatalf("%s to comm %#x, want REP", cm.Name(attr), rep.RemoteCommID)
			}
		}
		un := cmtest.Event(t, lch, rdmacm.EventUnreachable)
		if un.Status != -int(syscall.ETIMEDOUT) {
			t.Fatalf("UNREACHABLE status %d", un.Status)
		}
		// 3 tries of the REQ's LocalCMResponseTimeout (2^16 x 4.096 us)
		// alone, as Linux's cm_req_handler times the REP.
		if got, want := time.Since(start), 3*cm.Duration(16); got != want {
			t.Errorf("UNREACHABLE after %v, want %v", got, want)
		}
		cmtest.Ack(t, c, un)
		// Connection 2: RTU, then a DREQ nobody answers.
		peer.send(t, srv, reqMAD(peer, srv, 0x2002, 2))
		peer.recv(t) // MRA
		ev = cmtest.Event(t, lch, rdmacm.EventConnectRequest)
		cmtest.Ack(t, c, ev)
		if err := c.Accept(t.Context(), ev.ID, rdmacm.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		_, body := peer.recv(t)
		var rep cm.REP
		_ = rep.UnmarshalBinary(body)
		rtu := cm.RTU{LocalCommID: 0x2002, RemoteCommID: rep.LocalCommID}
		b, rb := cm.NewMAD(cm.AttrRTU, 1)
		_, _ = rtu.AppendBinary(rb[:0])
		peer.send(t, srv, b)
		cmtest.Ack(t, c, cmtest.Event(t, lch, rdmacm.EventEstablished))
		if err := c.Disconnect(t.Context(), ev.ID); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if attr, _ := peer.recv(t); attr != cm.AttrDREQ {
				t.Fatalf("%s, want DREQ", cm.Name(attr))
			}
		}
		dis := cmtest.Event(t, lch, rdmacm.EventDisconnected)
		if dis.Status != -int(syscall.ETIMEDOUT) {
			t.Errorf("DISCONNECTED status %d, want -110", dis.Status)
		}
		cmtest.Ack(t, c, dis)
	})
}

// TestPassiveSideAsLinux plays the active side by hand against a listener
// and checks what Linux's CM does (drivers/infiniband/core/cm.c): a
// duplicate REQ after the REP is not answered (the REP's own timer resends
// it), an MRA of the REP adds its service time to the REP's try, and a REJ
// on an established connection is reported as REJECTED. Fake time.
func TestPassiveSideAsLinux(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		c := r.cm
		peer := newRawPeer(t, r.f, r.names[1])
		srv := r.lids[0]
		lch, _ := r.listen(t, srv, 99, rdmacm.PSTCP)
		try := cm.Duration(16) // the REQ's LocalCMResponseTimeout
		peer.send(t, srv, reqMAD(peer, srv, 0x1001, 3))
		if attr, _ := peer.recv(t); attr != cm.AttrMRA {
			t.Fatalf("after REQ: %s, want MRA", cm.Name(attr))
		}
		ev := cmtest.Event(t, lch, rdmacm.EventConnectRequest)
		if pa := ev.ID.PeerAddr(); pa.LID != peer.lid {
			t.Errorf("passive peer address %v, want lid %d", pa, peer.lid)
		}
		cmtest.Ack(t, c, ev)
		if err := c.Accept(t.Context(), ev.ID, rdmacm.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		attr, body := peer.recv(t)
		var rep cm.REP
		_ = rep.UnmarshalBinary(body)
		if attr != cm.AttrREP {
			t.Fatalf("after accept: %s, want REP", cm.Name(attr))
		}
		// A duplicate REQ now: nothing comes back before the REP's timer.
		peer.send(t, srv, reqMAD(peer, srv, 0x1001, 3))
		if attr, _ := peer.recv(t); attr != cm.AttrREP || time.Since(start) != try {
			t.Fatalf("after a duplicate REQ: %s at %v, want the REP's resend at %v", cm.Name(attr), time.Since(start), try)
		}
		// MRA of the REP with service timeout 20: the next resend waits
		// 4.096us x 2^20 longer.
		start = time.Now()
		mra := cm.MRA{LocalCommID: 0x1001, RemoteCommID: rep.LocalCommID, MessageMRAed: cm.MsgREP, ServiceTimeout: 20}
		b, mb := cm.NewMAD(cm.AttrMRA, 0x1001)
		_, _ = mra.AppendBinary(mb[:0])
		peer.send(t, srv, b)
		if attr, _ := peer.recv(t); attr != cm.AttrREP || time.Since(start) != cm.Duration(20)+try {
			t.Fatalf("after an MRA of the REP: %s at %v, want the REP's resend at %v", cm.Name(attr), time.Since(start), cm.Duration(20)+try)
		}
		rtu := cm.RTU{LocalCommID: 0x1001, RemoteCommID: rep.LocalCommID}
		b, rb := cm.NewMAD(cm.AttrRTU, 0x1001)
		_, _ = rtu.AppendBinary(rb[:0])
		peer.send(t, srv, b)
		cmtest.Ack(t, c, cmtest.Event(t, lch, rdmacm.EventEstablished))
		// A REJ on the established connection: REJECTED, and the id is
		// out of the connection.
		rej := cm.REJ{LocalCommID: 0x1001, RemoteCommID: rep.LocalCommID, MessageRejected: cm.MsgOther, Reason: cm.RejStaleConn}
		b, jb := cm.NewMAD(cm.AttrREJ, 0x1001)
		_, _ = rej.AppendBinary(jb[:0])
		peer.send(t, srv, b)
		got := cmtest.Event(t, lch, rdmacm.EventRejected)
		if got.Status != int(cm.RejStaleConn) {
			t.Errorf("REJECTED status %d, want 10", got.Status)
		}
		cmtest.Ack(t, c, got)
		if err := c.Disconnect(t.Context(), ev.ID); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("disconnect after the REJ: %v, want EINVAL (not connected)", err)
		}
		// Destroying an id whose REP is out: REJ 28 naming no message
		// ("other"), as cm_format_rej does from REP_SENT.
		peer.send(t, srv, reqMAD(peer, srv, 0x2002, 3))
		peer.recv(t) // MRA
		ev = cmtest.Event(t, lch, rdmacm.EventConnectRequest)
		cmtest.Ack(t, c, ev)
		if err := c.Accept(t.Context(), ev.ID, rdmacm.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		peer.recv(t) // REP
		if err := c.DestroyID(t.Context(), ev.ID); err != nil {
			t.Fatal(err)
		}
		attr, body = peer.recv(t)
		var got2 cm.REJ
		_ = got2.UnmarshalBinary(body)
		if attr != cm.AttrREJ || got2.Reason != cm.RejConsumerDefined || got2.MessageRejected != cm.MsgOther || got2.RemoteCommID != 0x2002 {
			t.Errorf("destroy after the REP: %s %+v, want REJ 28 of message 'other'", cm.Name(attr), got2)
		}
	})
}

// TestDestroyWhileConnecting: destroying an id whose REQ is out sends
// REJ 4 (timeout) with the local CA's GUID as ARI, as cm_destroy_id does.
func TestDestroyWhileConnecting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		c := r.cm
		hung := newRawPeer(t, r.f, r.names[2])
		ch, _ := c.CreateEventChannel()
		a := r.route(t, ch, r.lids[1], r.lids[2], 1, rdmacm.PSTCP)
		if err := c.Connect(t.Context(), a, rdmacm.ConnParam{}); err != nil {
			t.Fatal(err)
		}
		if attr, _ := hung.recv(t); attr != cm.AttrREQ {
			t.Fatalf("%s, want REQ", cm.Name(attr))
		}
		if err := c.DestroyID(t.Context(), a); err != nil {
			t.Fatal(err)
		}
		attr, body := hung.recv(t)
		var rej cm.REJ
		_ = rej.UnmarshalBinary(body)
		if attr != cm.AttrREJ || rej.Reason != cm.RejTimeout || rej.MessageRejected != cm.MsgOther || rej.RejectInfoLength != 8 ||
			binary.BigEndian.Uint64(rej.ARI[:]) != r.guids[1] {
			t.Fatalf("%s %+v, want REJ 4 of message 'other' with the GUID %#x as ARI", cm.Name(attr), rej, r.guids[1])
		}
	})
}

// TestFaultyFabric: connections established and torn down over a fabric
// that loses, duplicates and reorders MADs: the IB CM's retries (REQ,
// REP, DREQ), its answers to duplicates (the MRA again, the RTU again,
// the DREP for a connection gone) and the SA's retries carry every one
// through. Fake time, so the CM timers' seconds pass at once.
func TestFaultyFabric(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, nil)
		r.f.SetFaults(sim.Faults{Seed: 7, Loss: 0.1, Duplicate: 0.1, Reorder: 0.1})
		c := r.cm
		next := func(ch *rdmacm.EventChannel, want rdmacm.EventType) *rdmacm.Event {
			t.Helper()
			ctx, cancel := context.WithTimeout(t.Context(), time.Hour)
			defer cancel()
			ev, err := ch.GetEvent(ctx)
			if err != nil {
				t.Fatalf("waiting for %v: %v", want, err)
			}
			if ev.Type != want || ev.Status != 0 {
				t.Fatalf("%v status %d, want %v", ev.Type, ev.Status, want)
			}
			cmtest.Ack(t, c, ev)
			return ev
		}
		lch, _ := r.listen(t, r.lids[0], 7000, rdmacm.PSTCP)
		ach, _ := c.CreateEventChannel()
		const n = 12
		active := map[*rdmacm.ID]bool{}
		for i := range n {
			id, err := c.CreateID(ach, rdmacm.PSTCP, false)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.ResolveAddr(t.Context(), id, &rdmacm.Addr{LID: r.lids[1+i%3]}, rdmacm.Addr{LID: r.lids[0], Port: 7000}); err != nil {
				t.Fatal(err)
			}
			next(ach, rdmacm.EventAddrResolved)
			for {
				// The SA may stay silent past the route's timeout: try again.
				ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
				err := c.ResolveRoute(ctx, id)
				cancel()
				if err != nil {
					t.Fatal(err)
				}
				ev, err := ach.GetEvent(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				cmtest.Ack(t, c, ev)
				if ev.Type == rdmacm.EventRouteResolved {
					break
				}
				if ev.Type != rdmacm.EventRouteError || ev.Status != -int(syscall.ETIMEDOUT) {
					t.Fatalf("%v status %d", ev.Type, ev.Status)
				}
			}
			if err := c.Connect(t.Context(), id, rdmacm.ConnParam{PrivateData: []byte{byte(i)}}); err != nil {
				t.Fatal(err)
			}
			active[id] = true
		}
		passive := map[*rdmacm.ID]bool{}
		seen := map[byte]bool{}
		for range n {
			ev := next(lch, rdmacm.EventConnectRequest)
			if seen[ev.Param.PrivateData[0]] {
				t.Fatalf("a second CONNECT_REQUEST for connection %d", ev.Param.PrivateData[0])
			}
			seen[ev.Param.PrivateData[0]] = true
			if err := c.Accept(t.Context(), ev.ID, rdmacm.ConnParam{}); err != nil {
				t.Fatal(err)
			}
			passive[ev.ID] = true
		}
		for range n {
			if ev := next(ach, rdmacm.EventEstablished); !active[ev.ID] {
				t.Fatalf("ESTABLISHED of id %d", ev.ID.Handle())
			}
		}
		for range n {
			if ev := next(lch, rdmacm.EventEstablished); !passive[ev.ID] {
				t.Fatalf("ESTABLISHED of id %d", ev.ID.Handle())
			}
		}
		for id := range active {
			if err := c.Disconnect(t.Context(), id); err != nil {
				t.Fatal(err)
			}
		}
		for range n {
			ev := next(lch, rdmacm.EventDisconnected)
			if err := c.Disconnect(t.Context(), ev.ID); err != nil {
				t.Fatal(err)
			}
		}
		for range n {
			next(ach, rdmacm.EventDisconnected)
		}
		st := r.f.FaultStats()
		if st.LostRequests == 0 || st.Duplicated == 0 {
			t.Errorf("faults injected: %+v, want losses and duplicates", st)
		}
		t.Logf("faults: %+v", st)
		for _, ch := range []*rdmacm.EventChannel{ach, lch} {
			if ch.Pending() != 0 {
				t.Errorf("%d events left", ch.Pending())
			}
		}
	})
}
