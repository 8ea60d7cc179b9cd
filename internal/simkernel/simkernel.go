// Package simkernel cables umadtest's fake kernel to the embedded
// simulator, for tests of the kernel backend against a fabric: a host
// whose planarized HCA's umad devices are a simulated node's, its SMPs
// answered by the simulator's SMAs.
package simkernel

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
	"github.com/ibscript/ibscript/sim"
)

// uplink cables a port of umadtest's fake kernel to a device of the
// embedded simulator (umadtest.Port.SetUplink): every MAD the host writes
// on kp is sent on tr (a plane port's SMI device, or the GSI device), and
// the answers are injected back into kp, so the simulator's SMAs answer
// the kernel backend's SMPs as a real port's link does. The kernel model
// keeps its own timeouts and retries; the simulator's timeout completions
// are dropped. It runs one goroutine, which Close ends.
type uplink struct {
	kp   *umadtest.Port
	tr   fabric.Transport
	out  chan upMAD
	done chan struct{}
	wg   sync.WaitGroup

	mu     sync.Mutex
	agents map[[2]uint8]fabric.AgentID // by class and version
	tids   map[tidKey]uint64           // the host's TID by the class and low 32 bits of the one sent
}

// tidKey is a request's class and the low 32 bits of its TID (the
// simulator's transport sets the high ones).
type tidKey struct {
	class uint8
	low   uint32
}

type upMAD struct {
	dst uint16
	src umadtest.Addr
	m   []byte
}

func newUplink(tb testing.TB, kp *umadtest.Port, tr fabric.Transport) *uplink {
	u := &uplink{kp: kp, tr: tr, out: make(chan upMAD, 1024), done: make(chan struct{}),
		agents: map[[2]uint8]fabric.AgentID{}, tids: map[tidKey]uint64{}}
	ctx, cancel := context.WithCancel(context.Background())
	kp.SetUplink(func(dst uint16, src umadtest.Addr, m []byte) {
		select {
		case u.out <- upMAD{dst, src, m}:
		default: // lost, as on a congested link; the kernel model retries
		}
	})
	u.wg.Go(func() { u.send(ctx, tb) })
	u.wg.Go(func() { u.recv(ctx) })
	tb.Cleanup(func() {
		kp.SetUplink(nil)
		cancel()
		tr.Close()
		u.wg.Wait()
	})
	return u
}

// send takes the host's MADs to the simulator: a request with a timeout
// (the simulator answers it, or drops it), a response as sent.
func (u *uplink) send(ctx context.Context, tb testing.TB) {
	for {
		var w upMAD
		select {
		case <-ctx.Done():
			return
		case w = <-u.out:
		}
		class, version := mad.MgmtClassOf(w.m), mad.ClassVersionOf(w.m)
		if class == mad.ClassSubnDR {
			class = mad.ClassSubnLID // one agent for both SMP classes' answers
		}
		u.mu.Lock()
		id, ok := u.agents[[2]uint8{class, version}]
		u.mu.Unlock()
		if !ok {
			var err error
			a := fabric.Agent{Class: class, Version: version}
			if class == mad.ClassSubnAdm {
				a = a.WithMethods(mad.MethodReport) // the SAs' Reports to the host's subscriptions
			}
			if id, err = u.tr.Register(ctx, a); err != nil {
				tb.Logf("uplink: register class %#x: %v", class, err)
				continue
			}
			u.mu.Lock()
			u.agents[[2]uint8{class, version}] = id
			u.mu.Unlock()
		}
		tid := mad.TIDOf(w.m)
		p := &fabric.Packet{Agent: id, Addr: fabric.Addr{LID: w.dst, QPN: w.src.QPN, SL: w.src.SL}, Data: w.m}
		if w.src.QPN != 0 {
			p.Addr.QKey = 0x80010000
		}
		if !mad.IsResponse(w.m) {
			p.Timeout = time.Minute // the kernel model times it out; this only holds the TID
			u.mu.Lock()
			u.tids[tidKey{mad.MgmtClassOf(w.m), uint32(tid)}] = tid
			u.mu.Unlock()
		}
		if err := u.tr.Send(ctx, p); err != nil && ctx.Err() == nil {
			tb.Logf("uplink: send class %#x TID %#x: %v", mad.MgmtClassOf(w.m), tid, err)
		}
	}
}

// recv injects the simulator's answers into the host's port, each with
// the TID the host sent, and its requests (an SA's Reports, the one
// unsolicited method the uplink registers) as they come.
func (u *uplink) recv(ctx context.Context) {
	var p fabric.Packet
	for {
		p.Data = make([]byte, 0, 2048)
		if err := u.tr.Recv(ctx, &p); err != nil {
			return
		}
		if p.Status != 0 {
			continue
		}
		m := p.Data
		if mad.IsResponse(m) {
			m = u.restore(m)
		}
		if m != nil {
			u.kp.Inject(umadtest.Addr{LID: p.Addr.LID, QPN: p.Addr.QPN, SL: p.Addr.SL}, m)
		}
	}
}

// Host is the fake kernel of a host whose planarized HCA is node of
// the simulated fabric sf: its GSI device mlx5_0 (cabled to node's GSI
// device) and, with perPlane false, one SMI device mlx5_1 with a port per
// plane, as the kernel makes it; with perPlane true one SMI device per
// plane, smiN with its port 1 on plane N (which mlx5 does not make). Each
// port has node's LID, GUIDs and SM LID there (a plane port's sm_lid is
// its plane's SM: the simulator runs one per plane), and is cabled to the
// simulator (an uplink).
func Host(tb testing.TB, sf *sim.Fabric, node string, perPlane bool) *umadtest.Host {
	ctx := context.Background()
	attrs, err := sf.Ports(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	var gsi fabric.PortAttr
	var planes []fabric.PortAttr
	for _, a := range attrs {
		switch a.CAName {
		case node + sim.GSISuffix:
			gsi = a
		case node:
			planes = append(planes, a)
		}
	}
	if gsi.CAName == "" || len(planes) == 0 {
		tb.Fatalf("%s is not a planarized CA of the fabric", node)
	}
	h := umadtest.NewHost(umadtest.New(nil))
	port := func(a fabric.PortAttr, num int) umadtest.HostPort {
		return umadtest.HostPort{Num: num, LID: a.LID, State: a.State, PhysState: a.PhysState, GUID: a.PortGUID, CapMask: a.CapMask, SMLID: a.SMLID}
	}
	h.AddCA("mlx5_0", 1, gsi.NodeGUID, port(gsi, 1))
	if perPlane {
		for _, a := range planes {
			h.AddCA(fmt.Sprintf("smi%d", a.PortNum), 1, a.NodeGUID+uint64(a.PortNum), port(a, 1))
		}
	} else {
		ps := make([]umadtest.HostPort, len(planes))
		for i, a := range planes {
			ps[i] = port(a, a.PortNum)
		}
		h.AddCA("mlx5_1", 1, planes[0].NodeGUID+1, ps...)
	}
	// umadN in the order the ports were added: the GSI device's, then the
	// plane ports' in port order.
	tr, err := sf.AttachGSI(node)
	if err != nil {
		tb.Fatal(err)
	}
	newUplink(tb, h.Port("/dev/infiniband/umad0"), tr)
	for i, a := range planes {
		tr, err := sf.Attach(node, a.PortNum)
		if err != nil {
			tb.Fatal(err)
		}
		newUplink(tb, h.Port(fmt.Sprintf("/dev/infiniband/umad%d", i+1)), tr)
	}
	return h
}

// restore returns a copy of the answer b with the TID the host sent, and
// forgets it; nil when the host sent no such request.
func (u *uplink) restore(b []byte) []byte {
	key := tidKey{mad.MgmtClassOf(b), uint32(mad.TIDOf(b))}
	u.mu.Lock()
	defer u.mu.Unlock()
	tid, ok := u.tids[key]
	if !ok {
		return nil
	}
	delete(u.tids, key)
	m := bytes.Clone(b)
	mad.SetTID(m, tid)
	return m
}
