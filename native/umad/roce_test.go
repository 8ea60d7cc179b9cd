package umad_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/ibscript/ibscript/internal/rocetest"
	"github.com/ibscript/ibscript/native/umad"
	"github.com/ibscript/ibscript/native/umad/umadtest"
)

// The roce* checks run libibumad's semantics (umad-abi.md) on a pair of
// RoCE ports: TestRoCE on the real kernel's Soft-RoCE pair that
// tests/kernelvm sets up ($IBSCRIPT_TEST_ROCE; elsewhere it skips), and
// TestModelRoCE on umadtest's model of the kernel with the same two ports,
// so the model is held to what the kernel does. RoCE has no QP0, no LIDs
// and no SM: every MAD carries a GRH between the two ends' IPv6 GIDs.

// roceEnv is where the checks run: sysfs, how devices open, the pair.
type roceEnv struct {
	fsys fs.FS
	o    *umad.Options // nil: the real system
	ends [2]rocetest.End
}

func TestRoCE(t *testing.T) {
	env := &roceEnv{fsys: os.DirFS("/"), ends: rocetest.Pair(t)}
	runRoCE(t, env)
}

// TestModelRoCE runs the same checks on the model: rxe0 and rxe1 with
// the GID tables Soft-RoCE gives them in the stage (fe80::, then
// ::ffff:10.0.0.N and fd00::N).
func TestModelRoCE(t *testing.T) {
	h, ends := rocetest.ModelHost()
	runRoCE(t, &roceEnv{fsys: h.FS, o: &umad.Options{FS: h.FS, Open: h.Open}, ends: ends})
}

func runRoCE(t *testing.T, env *roceEnv) {
	for _, c := range []struct {
		name string
		fn   func(*testing.T, *roceEnv)
	}{
		{"GetPort", roceGetPort},
		{"Registration", roceRegistration},
		{"SendRecv", roceSendRecv},
		{"Timeout", roceTimeout},
		{"RMPPNoSpace", roceRMPPNoSpace},
	} {
		t.Run(c.name, func(t *testing.T) { c.fn(t, env) })
	}
}

func (env *roceEnv) open(t *testing.T, e rocetest.End) *umad.Port {
	t.Helper()
	p, err := umad.OpenPort(e.CA, e.Port, env.o)
	if err != nil {
		t.Fatalf("open %v: %v", e, err)
	}
	t.Cleanup(func() { p.Close() })
	if p.HeaderSize() != umad.HeaderSize {
		t.Fatalf("%v: header size %d after ENABLE_PKEY, want %d", e, p.HeaderSize(), umad.HeaderSize)
	}
	return p
}

// to addresses e from a port whose GID index for the pair is from.
func to(agent int, from uint8, e rocetest.End) umad.Header {
	return umad.Header{Agent: uint32(agent), QPN: 1, QKey: 0x80010000, GRHPresent: true, GIDIndex: from, HopLimit: 64, GID: e.GID}
}

func errnoIs(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v (%d)", what, err, want, int(want))
	}
}

// recvWithin reads one record with a deadline.
func recvWithin(t *testing.T, p *umad.Port, d time.Duration) (umad.Header, []byte) {
	t.Helper()
	p.SetReadDeadline(time.Now().Add(d))
	defer p.SetReadDeadline(time.Time{})
	var h umad.Header
	b, err := p.Recv(&h, nil)
	if err != nil {
		t.Fatalf("%s: recv: %v", p.Path(), err)
	}
	return h, b
}

func expectNothing(t *testing.T, p *umad.Port, d time.Duration, why string) {
	t.Helper()
	if err := p.Poll(d); !errors.Is(err, syscall.ETIMEDOUT) {
		var h umad.Header
		b, _ := p.Recv(&h, nil)
		t.Errorf("%s: %s: poll %v, read status %d agent %d method 0x%02x", p.Path(), why, err, h.Status, h.Agent, b[3])
	}
}

const mClass, mMethodGet, mGetResp = 0x09, 0x01, 0x81

// roceGetPort: umad_get_port/umad_release_port on a RoCE port read
// what sysfs holds there: link layer Ethernet, LID 0, no SM, Active,
// GID 0 as prefix and GUID, a P_Key table.
func roceGetPort(t *testing.T, env *roceEnv) {
	ends, fsys := env.ends, env.fsys
	for _, e := range ends {
		p, err := umad.GetPort(fsys, e.CA, e.Port)
		if err != nil {
			t.Fatalf("get_port %v: %v", e, err)
		}
		if p.LinkLayer != "Ethernet" || p.BaseLID != 0 || p.SMLID != 0 || p.State != 4 || p.PhysState != 5 || len(p.PKeys) == 0 || p.PKeys[0] != 0xffff {
			t.Errorf("%v: link layer %q LID %d SM LID %d state %d phys %d pkeys %v", e, p.LinkLayer, p.BaseLID, p.SMLID, p.State, p.PhysState, p.PKeys)
		}
		raw, err := fs.ReadFile(fsys, "sys/class/infiniband/"+e.CA+"/ports/1/gids/0")
		if err != nil {
			t.Fatal(err)
		}
		var g [16]byte
		binary.BigEndian.PutUint64(g[:], p.GIDPrefix)
		binary.BigEndian.PutUint64(g[8:], p.PortGUID)
		if want := string(bytes.TrimSpace(raw)); gidText(g) != want {
			t.Errorf("%v: prefix/GUID %s, sysfs gids/0 %s", e, gidText(g), want)
		}
		if err := umad.ReleasePort(p); err != nil {
			t.Error(err)
		}
	}
	// No InfiniBand port: libibumad's second pass takes the first port
	// that is not Disabled, whatever its link layer.
	ca, n, err := umad.Resolve(fsys, "", 0, false)
	if err != nil || n != 1 || (ca != ends[0].CA && ca != ends[1].CA) {
		t.Errorf("default port %s/%d %v, want one of the pair", ca, n, err)
	}
}

func gidText(g [16]byte) string {
	var b bytes.Buffer
	for i := 0; i < 16; i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(hex4(binary.BigEndian.Uint16(g[i:])))
	}
	return b.String()
}

func hex4(v uint16) string {
	const d = "0123456789abcdef"
	return string([]byte{d[v>>12], d[v>>8&15], d[v>>4&15], d[v&15]})
}

// roceRegistration: the agent registration errors of the kernel, and
// the classes RoCE refuses.
func roceRegistration(t *testing.T, env *roceEnv) {
	e := env.ends
	p := env.open(t, e[0])
	// No QP0 on RoCE: the SMI classes do not register.
	for _, c := range []uint8{0x01, 0x81} {
		_, err := p.Register2(umad.Agent{Class: c, Version: 1})
		errnoIs(t, "register class 0x01/0x81 (QP0) on RoCE", err, syscall.EPROTONOSUPPORT)
	}
	// ib_cm owns the CM class's Send (and the other methods a CM receives).
	_, err := p.Register2(umad.Agent{Class: 0x07, Version: 2, Methods: [2]uint64{1 << 3}})
	errnoIs(t, "register CM Send (ib_cm owns it)", err, syscall.EINVAL)
	// A vendor class of range 2 needs an OUI.
	_, err = p.RegisterOUI(0x30, 0, 0, [2]uint64{})
	errnoIs(t, "register vendor class 0x30 with OUI 0", err, syscall.EINVAL)
	// rmpp_version on a class that is not RMPP, or above 1.
	_, err = p.Register2(umad.Agent{Class: mClass, Version: 1, RMPPVersion: 1})
	errnoIs(t, "rmpp_version 1 on class 0x09", err, syscall.EINVAL)
	_, err = p.Register2(umad.Agent{Class: 0x03, Version: 2, RMPPVersion: 2})
	errnoIs(t, "rmpp_version 2", err, syscall.EINVAL)
	// A class version past the kernel's table.
	_, err = p.Register2(umad.Agent{Class: mClass, Version: 0x83})
	errnoIs(t, "class version 0x83", err, syscall.EINVAL)
	// Unknown flags: EINVAL, and the kernel writes back what it supports.
	_, err = p.Register2(umad.Agent{Class: mClass, Version: 1, Flags: 0x80})
	errnoIs(t, "flag 0x80", err, syscall.EINVAL)
	var re *umad.RegisterError
	if !errors.As(err, &re) || re.Flags != umad.FlagUserRMPP {
		t.Errorf("flags written back %+v, want %#x", re, umad.FlagUserRMPP)
	}
	// Method ownership is exclusive across fds of the port.
	id, err := p.Register2(umad.Agent{Class: mClass, Version: 1, Methods: [2]uint64{1 << mMethodGet}})
	if err != nil || id != 0 {
		t.Fatalf("register class 0x09 Get: id %d %v, want 0 (lowest free slot)", id, err)
	}
	q := env.open(t, e[0])
	_, err = q.Register2(umad.Agent{Class: mClass, Version: 1, Methods: [2]uint64{1 << mMethodGet}})
	errnoIs(t, "the same method from another fd", err, syscall.EINVAL)
	// 32 agents an fd, the 33rd ENOMEM; ids are per fd, lowest free.
	for i := 0; i < umad.MaxAgents; i++ {
		id, err := q.Register2(umad.Agent{})
		if err != nil || id != i {
			t.Fatalf("send-only agent %d: id %d %v", i, id, err)
		}
	}
	_, err = q.Register2(umad.Agent{})
	errnoIs(t, "33rd agent", err, syscall.ENOMEM)
	if err := q.Unregister(7); err != nil {
		t.Fatal(err)
	}
	if id, err := q.Register2(umad.Agent{}); err != nil || id != 7 {
		t.Errorf("after unregistering 7: id %d %v, want 7", id, err)
	}
	errnoIs(t, "unregister an unknown id", p.Unregister(5), syscall.EINVAL)
}

// roceSendRecv: a Get with a GRH from rxe0 reaches the agent owning
// it on rxe1 with the kernel's tag in the TID's upper 32 bits and the
// sender's GID; the response comes back matched to the request; without
// a GRH the write fails; the write checks of umad-abi.md section 8.
func roceSendRecv(t *testing.T, env *roceEnv) {
	e := env.ends
	a, b := env.open(t, e[0]), env.open(t, e[1])
	sa, err := a.Register2(umad.Agent{})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Register2(umad.Agent{Class: mClass, Version: 1, Methods: [2]uint64{1<<mMethodGet | 1<<0x02}})
	if err != nil {
		t.Fatal(err)
	}
	// No GRH: RoCE cannot address a MAD by LID.
	h := umad.Header{Agent: uint32(sa), QPN: 1, QKey: 0x80010000, TimeoutMS: 100}
	errnoIs(t, "send without a GRH", a.Send(&h, mad(mClass, mMethodGet, 1), nil), syscall.EINVAL)
	// Short MAD, agent id past 32, an empty slot.
	h = to(sa, e[0].GIDIndex, e[1])
	errnoIs(t, "35-byte MAD", a.Send(&h, mad(mClass, mMethodGet, 2)[:35], nil), syscall.EINVAL)
	h = to(40, e[0].GIDIndex, e[1])
	errnoIs(t, "agent 40", a.Send(&h, mad(mClass, mMethodGet, 3), nil), syscall.EINVAL)
	h = to(5, e[0].GIDIndex, e[1])
	errnoIs(t, "unregistered agent 5", a.Send(&h, mad(mClass, mMethodGet, 4), nil), syscall.EIO)
	expectNothing(t, b, 100*time.Millisecond, "after refused writes")

	const tid = 0x11223344_55667788
	h = to(sa, e[0].GIDIndex, e[1])
	h.TimeoutMS, h.Retries = 2000, 2
	if err := a.Send(&h, mad(mClass, mMethodGet, tid), nil); err != nil {
		t.Fatalf("send Get with a GRH: %v", err)
	}
	// The same TID again while the first is outstanding: EINVAL.
	errnoIs(t, "duplicate outstanding TID", a.Send(&h, mad(mClass, mMethodGet, tid), nil), syscall.EINVAL)
	rh, req := recvWithin(t, b, 5*time.Second)
	if rh.Agent != uint32(sb) || rh.Status != 0 || !rh.GRHPresent || rh.GID != e[0].GID || rh.QPN != 1 || rh.LID != 0 || len(req) != umad.MADSize {
		t.Fatalf("received agent %d status %d GRH %v GID %x QPN %d LID %d len %d, want the Get from %v", rh.Agent, rh.Status, rh.GRHPresent, rh.GID, rh.QPN, rh.LID, len(req), e[0])
	}
	rtid := binary.BigEndian.Uint64(req[8:])
	if uint32(rtid) != tid&0xffffffff || rtid>>32 == tid>>32 {
		t.Errorf("TID on the wire 0x%016x: want low bits 0x%08x and the kernel's tag, not 0x%08x, above", rtid, tid&0xffffffff, tid>>32)
	}
	if rh.GIDIndex != e[1].GIDIndex {
		t.Errorf("received on GID index %d, want %d (%v)", rh.GIDIndex, e[1].GIDIndex, e[1])
	}
	resp := append([]byte(nil), req...)
	resp[3] = mGetResp
	rh.Agent = uint32(sb)
	rh.TimeoutMS, rh.Retries = 0, 0
	if err := b.Send(&rh, resp, nil); err != nil {
		t.Fatalf("send GetResp back on the received address: %v", err)
	}
	ah, got := recvWithin(t, a, 5*time.Second)
	if ah.Agent != uint32(sa) || ah.Status != 0 || got[3] != mGetResp || binary.BigEndian.Uint64(got[8:]) != rtid {
		t.Fatalf("requester got agent %d status %d method 0x%02x TID 0x%016x, want the GetResp, TID 0x%016x", ah.Agent, ah.Status, got[3], binary.BigEndian.Uint64(got[8:]), rtid)
	}
	// Exactly once: a second copy of the response matches nothing.
	if err := b.Send(&rh, resp, nil); err != nil {
		t.Fatal(err)
	}
	expectNothing(t, a, 300*time.Millisecond, "a duplicate response")
	// Unsolicited: a method nobody owns on rxe1 (Set is owned, Trap not):
	// dropped there, and no agent of rxe0 hears of it.
	h = to(sa, e[0].GIDIndex, e[1])
	if err := a.Send(&h, mad(mClass, 0x05, 9), nil); err != nil {
		t.Fatal(err)
	}
	expectNothing(t, b, 300*time.Millisecond, "a Trap no agent owns")
}

// roceTimeout: a Get nobody answers comes back after 1+retries
// attempts, each seen by the peer with the same TID, as a status-110
// record holding the 24-byte MAD header with the TID as transmitted.
func roceTimeout(t *testing.T, env *roceEnv) {
	e := env.ends
	a, b := env.open(t, e[0]), env.open(t, e[1])
	sa, _ := a.Register2(umad.Agent{})
	if _, err := b.Register2(umad.Agent{Class: mClass, Version: 1, Methods: [2]uint64{1 << mMethodGet}}); err != nil {
		t.Fatal(err)
	}
	h := to(sa, e[0].GIDIndex, e[1])
	h.TimeoutMS, h.Retries = 150, 2
	start := time.Now()
	if err := a.Send(&h, mad(mClass, mMethodGet, 0x77), nil); err != nil {
		t.Fatal(err)
	}
	var tids []uint64
	for range 3 {
		_, m := recvWithin(t, b, 5*time.Second)
		tids = append(tids, binary.BigEndian.Uint64(m[8:]))
	}
	th, rec := recvWithin(t, a, 5*time.Second)
	elapsed := time.Since(start)
	if th.Status != umad.StatusTimedOut || th.Agent != uint32(sa) || len(rec) != 24 {
		t.Fatalf("timeout record: status %d agent %d %d bytes, want 110, %d, 24", th.Status, th.Agent, len(rec), sa)
	}
	if got := binary.BigEndian.Uint64(rec[8:]); got != tids[0] || tids[1] != tids[0] || tids[2] != tids[0] || rec[3] != mMethodGet {
		t.Errorf("record TID 0x%016x method 0x%02x, attempts %x: want one TID, the Get's", got, rec[3], tids)
	}
	if elapsed < 450*time.Millisecond {
		t.Errorf("timed out after %v, want 3 x 150 ms at least", elapsed)
	}
	expectNothing(t, b, 200*time.Millisecond, "a fourth attempt")
}

// roceRMPPNoSpace: a 5-segment SA GetTableResp reassembled by the
// requester's kernel does not fit one MAD: read gives ENOSPC with the
// length needed and keeps it queued; Recv grows its buffer and reads it.
// Poll says nothing is there before it comes, and something after.
func roceRMPPNoSpace(t *testing.T, env *roceEnv) {
	e := env.ends
	a, b := env.open(t, e[0]), env.open(t, e[1])
	sa, _ := a.Register2(umad.Agent{RMPPVersion: 1})
	sb, err := b.Register2(umad.Agent{Class: 0x03, Version: 2, RMPPVersion: 1, Methods: [2]uint64{1 << 0x12}})
	if err != nil {
		t.Fatal(err)
	}
	errnoIs(t, "poll with nothing queued", a.Poll(50*time.Millisecond), syscall.ETIMEDOUT)
	q := mad(0x03, 0x12, 0x42)
	q[2] = 2
	h := to(sa, e[0].GIDIndex, e[1])
	h.TimeoutMS, h.Retries = 2000, 1
	if err := a.Send(&h, q, nil); err != nil {
		t.Fatal(err)
	}
	rh, req := recvWithin(t, b, 5*time.Second)
	const data = 5 * 200
	resp := make([]byte, 56+data)
	copy(resp, req[:56])
	resp[3] = 0x92
	resp[24], resp[25], resp[26] = 1, 1, 0x01
	for i := 56; i < len(resp); i++ {
		resp[i] = byte(i)
	}
	rh.Agent = uint32(sb)
	rh.TimeoutMS, rh.Retries = 0, 0
	if err := b.Send(&rh, resp, nil); err != nil {
		t.Fatalf("send a %d-byte RMPP response: %v", len(resp), err)
	}
	if err := a.Poll(5 * time.Second); err != nil {
		t.Fatalf("poll: %v", err)
	}
	buf := make([]byte, umad.HeaderSize+umad.MADSize)
	_, err = a.Read(buf)
	var ns *umad.NoSpaceError
	if !errors.As(err, &ns) || !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("read into one MAD's buffer: %v, want ENOSPC", err)
	}
	if want := 56 + data; ns.Need != want {
		t.Errorf("ENOSPC needs %d bytes, want %d", ns.Need, want)
	}
	ah, got := recvWithin(t, a, time.Second)
	if ah.Status != 0 || len(got) != len(resp) || !bytes.Equal(got[56:], resp[56:]) {
		t.Fatalf("after ENOSPC: status %d %d bytes (data equal %v), want %d", ah.Status, len(got), len(got) == len(resp) && bytes.Equal(got[56:], resp[56:]), len(resp))
	}
}

// TestGIDTablesOnlyWhereAsked: GetCA reads a RoCE port's GID table,
// GetCAWithoutGIDTables and the default-port resolution (which reads
// every CA) do not: 1024 sysfs files a port on Soft-RoCE.
func TestGIDTablesOnlyWhereAsked(t *testing.T) {
	h := umadtest.NewHost(umadtest.New(nil))
	ip := netip.MustParseAddr("fd00::1").As16()
	h.AddCA("rxe0", 1, 0x5054_00ff_fe12_3400, umadtest.HostPort{Num: 1, State: 4, PhysState: 5, LinkLayer: "Ethernet", GIDs: [][16]byte{{}, ip}})
	ca, err := umad.GetCA(h.FS, "rxe0")
	if err != nil {
		t.Fatal(err)
	}
	if g := ca.Ports[1].GIDs; len(g) != 3 || g[2] != ip {
		t.Errorf("GetCA: GID table %x, want fd00::1 at index 2", g)
	}
	light, err := umad.GetCAWithoutGIDTables(h.FS, "rxe0")
	if err != nil {
		t.Fatal(err)
	}
	if light.Ports[1].GIDs != nil || light.Ports[1].PortGUID != ca.Ports[1].PortGUID || light.Ports[1].State != 4 {
		t.Errorf("GetCAWithoutGIDTables: port %+v", light.Ports[1])
	}
	if p, err := umad.GetPort(h.FS, "rxe0", 1); err != nil || len(p.GIDs) != 3 {
		t.Errorf("GetPort: %v GIDs %x", err, p.GIDs)
	}
}
