package engine_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ibscript/ibscript/engine"
	"github.com/ibscript/ibscript/fabric"
	"github.com/ibscript/ibscript/mad"
	"github.com/ibscript/ibscript/sim"
	"github.com/ibscript/ibscript/sim/simtest"
)

// The seed man pages' statements, one test each, on the embedded
// simulator through engine.UMADPort (the Go form of libibumad's calls).
// Where the page and real libibumad differ (umad-abi.md section 13), the
// test follows the library and says so.

// seedSim loads a topology of tests/topologies, closed when t ends.
func seedSim(t *testing.T, topology string) *sim.Fabric {
	t.Helper()
	f := simtest.Load(t, "../tests/topologies/"+topology, nil)
	return f
}

// seedPort opens Hca1's port on the two-switch fabric and registers a
// LID-routed SMP agent.
func seedPort(t *testing.T) (*engine.UMADPort, int) {
	t.Helper()
	return seedPortOn(t, seedSim(t, "net.2sw2path4hca"))
}

func seedPortOn(t *testing.T, f *sim.Fabric) (*engine.UMADPort, int) {
	t.Helper()
	p, err := engine.OpenUMADPort(t.Context(), f, "Hca1", 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	agent, err := p.Register(t.Context(), mad.ClassSubnLID, 1, 0, [2]uint64{})
	if err != nil {
		t.Fatal(err)
	}
	return p, agent
}

// seedNodeInfoGet is a LID-routed SMP Get(NodeInfo) with the given TID.
func seedNodeInfoGet(tid uint32) []byte {
	b := make([]byte, mad.Size)
	b[0], b[1], b[2], b[3] = 1, mad.ClassSubnLID, 1, mad.MethodGet
	binary.BigEndian.PutUint32(b[12:], tid)
	binary.BigEndian.PutUint16(b[16:], 0x0011)
	return b
}

// deadLID is a LID no port of the fabric has: nothing ever answers it.
const deadLID = 0xbfff

// umad_poll(3): "Once a packet is ready to be read, the function returns
// 0. After that the packet can be read using umad_recv()", and with a
// timeout_ms of zero umad_recv does not block.
func TestSeedUmadPollReadyThenRecv(t *testing.T) {
	p, agent := seedPort(t)
	ctx := t.Context()
	if err := p.Send(ctx, agent, seedNodeInfoGet(0x1234), fabric.Addr{LID: p.Port().SMLID}, 1000, 2); err != nil {
		t.Fatal(err)
	}
	for _, ms := range []int{-1, 5000} { // the second poll sees the same, still unread packet
		if err := p.Poll(ctx, ms); err != nil {
			t.Fatalf("umad_poll(%d) = %v, want 0", ms, err)
		}
	}
	pkt, err := p.Recv(ctx, mad.Size, 0)
	if err != nil {
		t.Fatalf("umad_recv(timeout 0) after a successful poll = %v", err)
	}
	if pkt.Agent != fabric.AgentID(agent) || pkt.Status != 0 || mad.MethodOf(pkt.Data) != mad.MethodGetResp ||
		uint32(mad.TIDOf(pkt.Data)) != 0x1234 {
		t.Errorf("received agent %d status %d method 0x%02x TID 0x%x", pkt.Agent, pkt.Status, mad.MethodOf(pkt.Data), mad.TIDOf(pkt.Data))
	}
}

// umad_poll(3): "Otherwise, -ETIMEDOUT is returned", for a positive
// timeout and for zero (real umad_poll passes 0 to poll(2), which returns
// 0 at once: -ETIMEDOUT, not EAGAIN).
func TestSeedUmadPollTimedOut(t *testing.T) {
	p, _ := seedPort(t)
	for _, ms := range []int{0, 1, 20} {
		if err := p.Poll(t.Context(), ms); !errors.Is(err, syscall.ETIMEDOUT) {
			t.Errorf("umad_poll(%d) on an empty port = %v, want ETIMEDOUT", ms, err)
		}
	}
}

// umad_poll(3) and umad_recv(3) with a negative timeout_ms block until a
// packet comes; the Go calls also end with their context.
func TestSeedUmadNegativeTimeoutBlocks(t *testing.T) {
	p, _ := seedPort(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	go func() { done <- p.Poll(ctx, -1) }()
	go func() { _, err := p.Recv(ctx, mad.Size, -1); done <- err }()
	cancel()
	for range 2 {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("blocked call after its context ended = %v, want context.Canceled", err)
		}
	}
}

// umad_recv(3): "A timeout_ms parameter of zero indicates a non blocking
// read" that "cant be fulfilled": -EWOULDBLOCK, which is EAGAIN on Linux
// (umad-abi.md 13 #1); a positive timeout that passes is -ETIMEDOUT (13 #2).
func TestSeedUmadRecvNothingReady(t *testing.T) {
	p, _ := seedPort(t)
	_, err := p.Recv(t.Context(), mad.Size, 0)
	if !errors.Is(err, syscall.EWOULDBLOCK) || !errors.Is(err, syscall.EAGAIN) {
		t.Errorf("umad_recv(timeout 0) = %v, want EWOULDBLOCK (EAGAIN)", err)
	}
	if _, err := p.Recv(t.Context(), mad.Size, 10); !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("umad_recv(timeout 10) = %v, want ETIMEDOUT", err)
	}
}

// umad_recv(3): "*length must be >= 256" and -EINVAL when "*length is
// less than the minimum supported"; the message is not consumed
// (umad-abi.md 13 #3: checked before reading).
func TestSeedUmadRecvLengthBelow256(t *testing.T) {
	p, agent := seedPort(t)
	ctx := t.Context()
	if err := p.Send(ctx, agent, seedNodeInfoGet(7), fabric.Addr{LID: p.Port().SMLID}, 1000, 2); err != nil {
		t.Fatal(err)
	}
	if err := p.Poll(ctx, 5000); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{-1, 0, 24, 255} {
		if _, err := p.Recv(ctx, n, 0); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("umad_recv(length %d) = %v, want EINVAL", n, err)
		}
	}
	if pkt, err := p.Recv(ctx, mad.Size, 0); err != nil || uint32(mad.TIDOf(pkt.Data)) != 7 {
		t.Errorf("umad_recv(256) after the EINVALs = %v, want the response still queued", err)
	}
}

// umad_send(3): "If reply is not received within the specified value, the
// original buffer is returned in the read channel with the status field
// set (to non zero)", after retries more tries; umad_recv returns it with
// the sending agent's id. The kernel returns only the 24-byte MAD header
// of it; ibscript returns the whole MAD as the page says (fabric/mux).
func TestSeedUmadSendTimeoutReturnsOriginal(t *testing.T) {
	p, agent := seedPort(t)
	ctx := t.Context()
	req := seedNodeInfoGet(0xabcd)
	if err := p.Send(ctx, agent, bytes.Clone(req), fabric.Addr{LID: deadLID}, 5, 2); err != nil {
		t.Fatal(err)
	}
	pkt, err := p.Recv(ctx, mad.Size, 10000)
	if err != nil {
		t.Fatalf("umad_recv of the timed-out send: %v", err)
	}
	if pkt.Status != int(syscall.ETIMEDOUT) {
		t.Errorf("status %d, want ETIMEDOUT (110)", pkt.Status)
	}
	if pkt.Agent != fabric.AgentID(agent) || pkt.Retries != 2 || pkt.Addr.LID != deadLID {
		t.Errorf("agent %d retries %d lid %d, want %d, 2, %d", pkt.Agent, pkt.Retries, pkt.Addr.LID, agent, deadLID)
	}
	if got := pkt.Data; len(got) != len(req) || uint32(mad.TIDOf(got)) != 0xabcd || !bytes.Equal(got[:8], req[:8]) || !bytes.Equal(got[12:], req[12:]) {
		t.Errorf("returned MAD differs from the one sent (TID bits 63..32 are the kernel's):\n got %x\nwant %x", got, req)
	}
	if _, err := p.Recv(ctx, mad.Size, 50); !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("a second recv = %v, want ETIMEDOUT: a timed-out send comes back once", err)
	}
}

// umad_send(3): "zero value means not solicited": no response is awaited,
// so no timeout record ever comes back, and the response to it matches no
// outstanding request and is dropped (umad-abi.md 14).
func TestSeedUmadSendTimeoutZeroUnsolicited(t *testing.T) {
	p, agent := seedPort(t)
	ctx := t.Context()
	for _, lid := range []uint16{deadLID, p.Port().SMLID} {
		if err := p.Send(ctx, agent, seedNodeInfoGet(1), fabric.Addr{LID: lid}, 0, 3); err != nil {
			t.Fatal(err)
		}
	}
	if pkt, err := p.Recv(ctx, mad.Size, 200); !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("umad_recv after unsolicited sends = %+v, %v; want ETIMEDOUT (nothing comes back)", pkt, err)
	}
}

// umad_send(3): "Negative timeout_ms makes kernel wait forever for the
// reply": no timeout record; a reply that does come is delivered.
func TestSeedUmadSendNegativeTimeoutWaitsForever(t *testing.T) {
	p, agent := seedPort(t)
	ctx := t.Context()
	if err := p.Send(ctx, agent, seedNodeInfoGet(2), fabric.Addr{LID: deadLID}, -1, 0); err != nil {
		t.Fatal(err)
	}
	if pkt, err := p.Recv(ctx, mad.Size, 200); !errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("umad_recv = %+v, %v; want ETIMEDOUT (the send waits forever)", pkt, err)
	}
	if err := p.Send(ctx, agent, seedNodeInfoGet(3), fabric.Addr{LID: p.Port().SMLID}, -1, 0); err != nil {
		t.Fatal(err)
	}
	if pkt, err := p.Recv(ctx, mad.Size, 5000); err != nil || pkt.Status != 0 || uint32(mad.TIDOf(pkt.Data)) != 3 {
		t.Errorf("the reply to a send with timeout -1: %+v, %v", pkt, err)
	}
}

// umad_send(3): "-EINVAL invalid port handle or agentid". Real umad_send
// returns -EIO with the cause in errno (umad-abi.md 13 #7); ibscript
// returns the cause, EINVAL.
func TestSeedUmadSendInvalidAgent(t *testing.T) {
	p, agent := seedPort(t)
	ctx := t.Context()
	for _, a := range []int{agent + 1, 31, -1} {
		if err := p.Send(ctx, a, seedNodeInfoGet(4), fabric.Addr{LID: p.Port().SMLID}, 100, 0); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("umad_send(agent %d) = %v, want EINVAL", a, err)
		}
	}
	if err := p.Unregister(ctx, agent); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, agent, seedNodeInfoGet(5), fabric.Addr{LID: p.Port().SMLID}, 100, 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("umad_send(unregistered agent %d) = %v, want EINVAL", agent, err)
	}
}

// umad_recv(3): "on success return the agentid": with two agents, each
// response comes back under the agent that sent the request.
func TestSeedUmadRecvReturnsAgentID(t *testing.T) {
	p, a1 := seedPort(t)
	ctx := t.Context()
	a2, err := p.Register(ctx, mad.ClassPerf, 1, 0, [2]uint64{})
	if err != nil {
		t.Fatal(err)
	}
	if a1 == a2 {
		t.Fatalf("two agents got the same id %d", a1)
	}
	perf := make([]byte, mad.Size)
	perf[0], perf[1], perf[2], perf[3] = 1, mad.ClassPerf, 1, mad.MethodGet
	binary.BigEndian.PutUint32(perf[12:], 9)
	binary.BigEndian.PutUint16(perf[16:], 0x0001) // ClassPortInfo
	if err := p.Send(ctx, a2, perf, fabric.Addr{LID: p.Port().SMLID, QPN: 1, QKey: 0x80010000}, 1000, 2); err != nil {
		t.Fatal(err)
	}
	if err := p.Send(ctx, a1, seedNodeInfoGet(8), fabric.Addr{LID: p.Port().SMLID}, 1000, 2); err != nil {
		t.Fatal(err)
	}
	got := map[uint32]fabric.AgentID{}
	for range 2 {
		pkt, err := p.Recv(ctx, mad.Size, 5000)
		if err != nil {
			t.Fatal(err)
		}
		got[uint32(mad.TIDOf(pkt.Data))] = pkt.Agent
	}
	if got[8] != fabric.AgentID(a1) || got[9] != fabric.AgentID(a2) {
		t.Errorf("agents by TID %v, want 8:%d 9:%d", got, a1, a2)
	}
}

// umad_send(3): "retries indicates the number of times the MAD will be
// retried before giving up": on a fabric losing every MAD, a send with
// retries r goes out r+1 times, then comes back once with ETIMEDOUT.
func TestSeedUmadSendRetries(t *testing.T) {
	f := seedSim(t, "net.2sw2path4hca")
	p, agent := seedPortOn(t, f)
	ctx := t.Context()
	for _, retries := range []int{0, 1, 3} {
		if err := f.SetFaults(sim.Faults{Seed: 1, Loss: 1}); err != nil {
			t.Fatal(err)
		}
		if err := p.Send(ctx, agent, seedNodeInfoGet(uint32(0x100+retries)), fabric.Addr{LID: p.Port().SMLID}, 5, retries); err != nil {
			t.Fatal(err)
		}
		pkt, err := p.Recv(ctx, mad.Size, 10000)
		if err != nil || pkt.Status != fabric.StatusTimeout {
			t.Fatalf("retries %d: recv %+v, %v; want the timed-out send", retries, pkt, err)
		}
		if st := f.FaultStats(); st.Requests != uint64(retries+1) || st.LostRequests != uint64(retries+1) {
			t.Errorf("retries %d: %d requests went out (%d lost), want %d", retries, st.Requests, st.LostRequests, retries+1)
		}
		if _, err := p.Recv(ctx, mad.Size, 50); !errors.Is(err, syscall.ETIMEDOUT) {
			t.Errorf("retries %d: a second completion: %v", retries, err)
		}
	}
}

// umad_send(3): a buffer larger than one MAD is an RMPP transmission only
// "when the agentid specifies a class which utilizes RMPP and the header
// flags indicate RMPP is active"; otherwise the kernel refuses it with
// EINVAL (ib_umad_write: a non-RMPP message longer than a MAD).
func TestSeedUmadSendLongWithoutRMPP(t *testing.T) {
	p, agent := seedPort(t)
	long := append(seedNodeInfoGet(1), make([]byte, mad.Size)...)
	if err := p.Send(t.Context(), agent, long, fabric.Addr{LID: p.Port().SMLID}, 100, 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("umad_send of %d bytes on an SMP agent = %v, want EINVAL", len(long), err)
	}
	sa, err := p.Register(t.Context(), mad.ClassSubnAdm, 2, 1, [2]uint64{})
	if err != nil {
		t.Fatal(err)
	}
	long[1], long[2] = mad.ClassSubnAdm, 2 // an SA MAD whose RMPPFlags (byte 26) lack Active
	addr := fabric.Addr{LID: p.Port().SMLID, QPN: 1, QKey: 0x80010000}
	if err := p.Send(t.Context(), sa, long, addr, 100, 0); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("umad_send of %d bytes on an RMPP agent, RMPP not active = %v, want EINVAL", len(long), err)
	}
}

// umad_get_port(3): "the default port if ca_name is NULL and portnum is
// zero. If only one of ca_name and portnum are specified, the other is
// used as a filter", resolved as libibumad's resolve_ca_port does: a CA
// alone gives its first Active port, else its first LinkUp one, else its
// first not Disabled, and ENODEV when all are Disabled; a port number
// alone gives the first CA with that port Active, else the first where it
// is not Disabled; a switch is always port 0, and named with another port
// ENODEV (libibumad reads that port's sysfs directory, which a switch
// lacks: -EIO); an unknown CA or a port the CA lacks is ENODEV. Release has nothing to fail (umad-abi.md 13 #12).
func TestSeedUmadGetPortResolution(t *testing.T) {
	f := seedSim(t, "net.2sw2path4hca2port")
	ctx := t.Context()
	open := func(ca string, port int) (fabric.PortAttr, error) {
		p, err := engine.OpenUMADPort(ctx, f, ca, port)
		if err != nil {
			return fabric.PortAttr{}, err
		}
		defer p.Close()
		return p.Port(), nil
	}
	check := func(what, ca string, port int, wantCA string, wantPort int) {
		t.Helper()
		a, err := open(ca, port)
		switch {
		case wantCA == "" && !errors.Is(err, syscall.ENODEV):
			t.Errorf("%s: get_port(%q, %d) = %s/%d, %v; want ENODEV", what, ca, port, a.CAName, a.PortNum, err)
		case wantCA != "" && (err != nil || a.CAName != wantCA || a.PortNum != wantPort):
			t.Errorf("%s: get_port(%q, %d) = %s/%d, %v; want %s/%d", what, ca, port, a.CAName, a.PortNum, err, wantCA, wantPort)
		}
	}
	def, err := open("", 0)
	if err != nil {
		t.Fatal(err)
	}
	check("default", "", 0, def.CAName, def.PortNum)
	check("CA alone", "Hca1", 0, "Hca1", 1)
	check("port alone", "", 2, "Hca1", 2)
	check("switch", "Switch1", 0, "Switch1", 0)
	check("switch and a port", "Switch1", 5, "", 0) // sysfs has port 0 alone: -EIO from libibumad
	check("unknown CA", "NoSuchCA", 0, "", 0)
	check("port the CA lacks", "Hca1", 3, "", 0)
	check("port no CA has", "", 9, "", 0)

	if err := f.SetLink("Hca1", 1, false); err != nil { // Hca1/1 Disabled, its switch end Polling
		t.Fatal(err)
	}
	check("CA alone, first port Disabled", "Hca1", 0, "Hca1", 2)
	check("port alone, Disabled on the first CA", "", 1, "Hca2", 1)
	check("a Disabled port asked by name", "Hca1", 1, "Hca1", 1) // as libibumad: a named port is taken as is
	if err := f.SetLink("Hca1", 2, false); err != nil {
		t.Fatal(err)
	}
	check("CA alone, every port Disabled", "Hca1", 0, "", 0)
}

// Edge values of umad_poll(3), umad_recv(3) and umad_send(3)'s timeout_ms:
// a timeout longer than a C int holds (a script's 1e18) waits as the
// longest one does (2^31-1 ms), where it overflowed into a negative
// Duration and timed out at once. The request's 50 ms timeout record is
// what the huge waits get.
func TestSeedUmadHugeTimeouts(t *testing.T) {
	p, agent := seedPort(t)
	ctx := t.Context()
	for i, ms := range []int{math.MaxInt32, math.MaxInt32 + 1, math.MaxInt64 / 1000, math.MaxInt64} {
		if err := p.Send(ctx, agent, seedNodeInfoGet(uint32(0x770+i)), fabric.Addr{LID: deadLID}, 50, 0); err != nil {
			t.Fatal(err)
		}
		if err := p.Poll(ctx, ms); err != nil {
			t.Errorf("umad_poll(%d) = %v, want 0 when the timeout record comes", ms, err)
		}
		if pkt, err := p.Recv(ctx, mad.Size, ms); err != nil || pkt.Status != fabric.StatusTimeout {
			t.Errorf("umad_recv(%d) = %+v, %v; want the timed-out send", ms, pkt, err)
		}
		if err := p.Send(ctx, agent, seedNodeInfoGet(uint32(0x780+i)), fabric.Addr{LID: deadLID}, ms, 0); err != nil {
			t.Fatal(err)
		}
		if pkt, err := p.Recv(ctx, mad.Size, 100); !errors.Is(err, syscall.ETIMEDOUT) {
			t.Errorf("umad_send(timeout %d): recv = %+v, %v; want ETIMEDOUT (the send still waits)", ms, pkt, err)
		}
	}
}

// umad_get_port(3) and umad_open_port with names and numbers no device
// has: a port past the CA's ports, a CA name with '/', "..", a NUL, or
// longer than UMAD_CA_NAME_LEN (20) is ENODEV; a negative port is EINVAL
// (native/umad's Resolve; libibumad reads ports/-1 of a named CA, -EIO,
// and takes any port for a NULL one).
func TestSeedUmadGetPortOddNames(t *testing.T) {
	f := seedSim(t, "net.2sw2path4hca")
	ctx := t.Context()
	for _, c := range []struct {
		ca   string
		port int
		want syscall.Errno
	}{
		{"Hca1", 3, syscall.ENODEV}, {"Hca1", 255, syscall.ENODEV}, {"Hca1", math.MaxInt, syscall.ENODEV},
		{"", 255, syscall.ENODEV}, {"", math.MaxInt, syscall.ENODEV},
		{"Hca1/", 1, syscall.ENODEV}, {"../Hca1", 0, syscall.ENODEV}, {"..", 1, syscall.ENODEV},
		{"Hca1\x00", 1, syscall.ENODEV}, {"Hca1" + strings.Repeat("x", 20), 1, syscall.ENODEV},
		{"", -1, syscall.EINVAL}, {"Hca1", -1, syscall.EINVAL}, {"", math.MinInt, syscall.EINVAL},
	} {
		p, err := engine.OpenUMADPort(ctx, f, c.ca, c.port)
		if !errors.Is(err, c.want) {
			t.Errorf("OpenUMADPort(%q, %d) = %v, want %v", c.ca, c.port, err, c.want)
		}
		if p != nil {
			p.Close()
		}
	}
	// The simulator itself refuses a negative port (it indexed its ports
	// with it and panicked).
	for _, ca := range []string{"", "Hca1"} {
		if tr, err := f.Open(ctx, ca, -1); !errors.Is(err, fabric.ErrInvalid) {
			t.Errorf("sim Open(%q, -1) = %v, want fabric.ErrInvalid", ca, err)
			if tr != nil {
				tr.Close()
			}
		}
	}
}

// Agent ids umad_unregister and umad_send refuse: out of range (-1, 32,
// 2^40), never registered, or unregistered already: EINVAL, and the port
// stays usable. The 33rd agent of a port is ENOMEM (the kernel's errno;
// umad_register returns -EPERM with it in errno, umad-abi.md 13 #13).
// umad_close_port twice returns 0 both times, as libibumad's does.
func TestSeedUmadAgentIDsOutOfRange(t *testing.T) {
	p, agent := seedPort(t)
	ctx := t.Context()
	for _, a := range []int{-1, 32, 1 << 40, agent + 1} {
		if err := p.Unregister(ctx, a); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("umad_unregister(%d) = %v, want EINVAL", a, err)
		}
		if err := p.Send(ctx, a, seedNodeInfoGet(1), fabric.Addr{LID: p.Port().SMLID}, 100, 0); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("umad_send(agent %d) = %v, want EINVAL", a, err)
		}
	}
	if err := p.Unregister(ctx, agent); err != nil {
		t.Fatal(err)
	}
	if err := p.Unregister(ctx, agent); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("umad_unregister of agent %d twice = %v, want EINVAL", agent, err)
	}
	n := 0
	for {
		_, err := p.Register(ctx, mad.ClassPerf, 1, 0, [2]uint64{})
		if err != nil {
			if !errors.Is(err, syscall.ENOMEM) || n != 32 {
				t.Errorf("agent %d: register = %v, want ENOMEM for the 33rd", n+1, err)
			}
			break
		}
		if n++; n > 32 {
			t.Fatal("a port took 33 agents")
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Errorf("umad_close_port twice = %v, want 0", err)
	}
}

// umad_poll(3) and umad_recv(3) on a port whose fabric was closed under
// it fail at once, as its sends do: EINVAL, "invalid port handle" (they
// waited for a MAD that could not come: for ever with -1). A call whose
// own context ends gets the context's error, not umad's ETIMEDOUT.
func TestSeedUmadPortOfClosedFabric(t *testing.T) {
	f := seedSim(t, "net.2sw2path4hca")
	p, _ := seedPortOn(t, f)
	ended, cancel := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := p.Recv(ended, mad.Size, -1); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("umad_recv(-1) with its context ended = %v, want context.DeadlineExceeded", err)
	}
	if err := p.Poll(ended, 1000); !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, syscall.ETIMEDOUT) {
		t.Errorf("umad_poll(1000) with its context ended = %v, want context.DeadlineExceeded", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang bound
	defer cancel()
	_, recvErr := p.Recv(ctx, mad.Size, -1)
	for name, err := range map[string]error{"poll": p.Poll(ctx, -1), "recv": recvErr} {
		if !errors.Is(err, syscall.EINVAL) {
			t.Errorf("umad_%s(-1) on a port of a closed fabric = %v, want EINVAL", name, err)
		}
	}
}

// goneTransport is a simulator port whose peer went away as ibsim's does
// when ibsim exits: every send and receive fails with a PeerGoneError.
type goneTransport struct{ fabric.Transport }

func (goneTransport) Send(context.Context, *fabric.Packet) error { return errGone }
func (goneTransport) Recv(context.Context, *fabric.Packet) error { return errGone }
func (goneTransport) Caps() fabric.Caps                          { return fabric.Caps{} }

var errGone = &fabric.PeerGoneError{Peer: "the test's ibsim", Err: syscall.ECONNREFUSED}

// umad_send(3), umad_recv(3), umad_poll(3): "-EIO send (receive, poll)
// operation failed": on a port whose peer is gone each fails with EIO,
// the cause (fabric.ErrPeerGone) kept, at once also with timeout -1.
func TestSeedUmadPeerGoneEIO(t *testing.T) {
	tr, err := seedSim(t, "net.2sw2path4hca").Open(t.Context(), "Hca1", 1)
	if err != nil {
		t.Fatal(err)
	}
	p := engine.NewUMADPort(goneTransport{tr})
	defer p.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // a hang bound
	defer cancel()
	agent, err := p.Register(ctx, mad.ClassSubnLID, 1, 0, [2]uint64{})
	if err != nil {
		t.Fatal(err)
	}
	sendErr := p.Send(ctx, agent, seedNodeInfoGet(1), fabric.Addr{LID: 1}, 100, 0)
	_, recvErr := p.Recv(ctx, mad.Size, -1)
	pollErr := p.Poll(ctx, -1)
	for _, err := range []error{sendErr, recvErr, pollErr} {
		if !errors.Is(err, syscall.EIO) || !errors.Is(err, fabric.ErrPeerGone) {
			t.Errorf("%v: want EIO and fabric.ErrPeerGone", err)
		}
	}
}
