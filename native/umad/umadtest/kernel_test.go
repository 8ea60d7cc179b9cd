package umadtest

import (
	"encoding/binary"
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ibscript/ibscript/internal/leaktest"
	"github.com/ibscript/ibscript/native/umad"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// clock is an injectable clock: timers fire only when the test says.
type clock struct {
	mu     sync.Mutex
	timers []*timer
}

type timer struct {
	d       time.Duration
	f       func()
	stopped bool
}

func (c *clock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &timer{d: d, f: f}
	c.timers = append(c.timers, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		was := !t.stopped
		t.stopped = true
		return was
	}
}

// fire runs every armed timer once and returns how many ran.
func (c *clock) fire() int {
	c.mu.Lock()
	ts := c.timers
	c.timers = nil
	c.mu.Unlock()
	n := 0
	for _, t := range ts {
		if !t.stopped {
			t.stopped = true
			t.f()
			n++
		}
	}
	return n
}

func (c *clock) armed() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	var d []time.Duration
	for _, t := range c.timers {
		if !t.stopped {
			d = append(d, t.d)
		}
	}
	return d
}

func errnoIs(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

func open(t *testing.T, p *Port) *FD {
	t.Helper()
	f, err := p.Open("/dev/infiniband/umad0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func reg2(f *FD, class, version uint8, methods ...uint8) (int, error) {
	r := umad.RegReq2{Class: class, Version: version, QPN: uint32(umad.QPNFor(class))}
	for _, m := range methods {
		r.Methods[m/64] |= 1 << (m % 64)
	}
	b := r.Marshal()
	if err := f.Ioctl(umad.Req().RegisterAgent2, b[:]); err != nil {
		return -1, err
	}
	return int(binary.NativeEndian.Uint32(b[:])), nil
}

func newMAD(class, method uint8, tid uint64) []byte {
	m := make([]byte, umad.MADSize)
	m[0], m[1], m[2], m[3] = 1, class, 1, method
	binary.BigEndian.PutUint64(m[8:], tid)
	return m
}

func write(f *FD, hdr int, h umad.Header, m []byte) error {
	b := make([]byte, hdr+len(m))
	h.Put(b, hdr)
	copy(b[hdr:], m)
	n, err := f.Write(b)
	if err == nil && n != len(b) {
		return errors.New("short write")
	}
	return err
}

func read(t *testing.T, f *FD, size int) (umad.Header, []byte) {
	t.Helper()
	b := make([]byte, size)
	f.SetReadDeadline(time.Now()) // never block
	defer f.SetReadDeadline(time.Time{})
	n, err := f.Read(b)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var h umad.Header
	h.Decode(b, f.HeaderSize())
	return h, b[f.HeaderSize():n]
}

func TestAgentSlots(t *testing.T) {
	k := New(nil)
	f := open(t, k.AddPort(1))
	hi := map[uint32]bool{}
	for i := range umad.MaxAgents {
		id, err := reg2(f, 0x09, 1)
		if err != nil || id != i {
			t.Fatalf("agent %d: id %d, %v", i, id, err)
		}
		hi[f.agents[id].hiTID] = true
	}
	if len(hi) != umad.MaxAgents {
		t.Errorf("%d distinct hi_tids for %d agents", len(hi), umad.MaxAgents)
	}
	_, err := reg2(f, 0x09, 1)
	errnoIs(t, "33rd agent", err, syscall.ENOMEM)
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], 7)
	if err := f.Ioctl(umad.Req().UnregisterAgent, b[:]); err != nil {
		t.Fatal(err)
	}
	errnoIs(t, "second unregister", f.Ioctl(umad.Req().UnregisterAgent, b[:]), syscall.EINVAL)
	binary.NativeEndian.PutUint32(b[:], 32)
	errnoIs(t, "unregister 32", f.Ioctl(umad.Req().UnregisterAgent, b[:]), syscall.EINVAL)
	if id, err := reg2(f, 0x09, 1); id != 7 || err != nil {
		t.Errorf("after freeing 7: id %d, %v; want 7 (lowest free)", id, err)
	}
}

func TestRegistrationRules(t *testing.T) {
	k := New(nil)
	p := k.AddPort(1)
	a, b := open(t, p), open(t, k.AddPort(2))
	c := open(t, p)
	if _, err := reg2(a, 0x09, 1, 0x01, 0x02); err != nil {
		t.Fatal(err)
	}
	_, err := reg2(c, 0x09, 1, 0x02)
	errnoIs(t, "method owned by another fd of the port", err, syscall.EINVAL)
	if _, err := reg2(c, 0x09, 2, 0x02); err != nil {
		t.Errorf("other class version: %v", err)
	}
	if _, err := reg2(b, 0x09, 1, 0x02); err != nil {
		t.Errorf("same method on another port: %v", err)
	}
	tests := []struct {
		name string
		r    umad.RegReq2
		want syscall.Errno
	}{
		{"qpn 2", umad.RegReq2{QPN: 2, Class: 0x09}, syscall.EINVAL},
		{"SMI class on QP1", umad.RegReq2{QPN: 1, Class: 0x81}, syscall.EINVAL},
		{"GSI class on QP0", umad.RegReq2{QPN: 0, Class: 0x03}, syscall.EINVAL},
		{"class 0x50", umad.RegReq2{QPN: 1, Class: 0x50}, syscall.EINVAL},
		{"class version 0x83", umad.RegReq2{QPN: 1, Class: 0x09, Version: 0x83}, syscall.EINVAL},
		{"vendor range 2 without OUI", umad.RegReq2{QPN: 1, Class: 0x30}, syscall.EINVAL},
		{"rmpp on a non-RMPP class", umad.RegReq2{QPN: 1, Class: 0x09, RMPPVersion: 1}, syscall.EINVAL},
		{"rmpp_version 2", umad.RegReq2{QPN: 1, Class: 0x03, RMPPVersion: 2}, syscall.EINVAL},
		{"OUI over 24 bits", umad.RegReq2{QPN: 1, Class: 0x30, OUI: 1 << 24}, syscall.EINVAL},
		{"USER_RMPP send-only", umad.RegReq2{QPN: 1, Flags: umad.FlagUserRMPP}, syscall.EINVAL},
	}
	for _, tt := range tests {
		buf := tt.r.Marshal()
		errnoIs(t, tt.name, c.Ioctl(umad.Req().RegisterAgent2, buf[:]), tt.want)
	}
	for _, ok := range []umad.RegReq2{
		{QPN: 1, Class: 0x03, Version: 2, RMPPVersion: 1},
		{QPN: 1, Class: 0, RMPPVersion: 1}, // send-only may ask for RMPP
		{QPN: 0, Class: 0x81},
		{QPN: 1, Class: 0x30, OUI: 0x001405, Flags: umad.FlagUserRMPP, RMPPVersion: 1},
	} {
		buf := ok.Marshal()
		if err := c.Ioctl(umad.Req().RegisterAgent2, buf[:]); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
	// Unknown flags: EINVAL and the supported mask written back.
	r := umad.RegReq2{QPN: 1, Class: 0x09, Flags: 0x6}
	buf := r.Marshal()
	errnoIs(t, "unknown flags", c.Ioctl(umad.Req().RegisterAgent2, buf[:]), syscall.EINVAL)
	r.Unmarshal(buf[:])
	if r.Flags != umad.FlagUserRMPP {
		t.Errorf("flags written back = %#x, want %#x", r.Flags, umad.FlagUserRMPP)
	}
}

func TestHeaderMode(t *testing.T) {
	k := New(nil)
	p := k.AddPort(1)
	a := open(t, p)
	if a.HeaderSize() != umad.HeaderSizeOld {
		t.Fatalf("fresh fd: header %d, want 56", a.HeaderSize())
	}
	if err := a.Ioctl(umad.Req().EnablePKey, nil); err != nil || a.HeaderSize() != umad.HeaderSize {
		t.Fatalf("ENABLE_PKEY: %v, header %d", err, a.HeaderSize())
	}
	// A first REGISTER_AGENT freezes the old header.
	b := open(t, p)
	r := umad.RegReq{QPN: 1, Class: 0x09, Version: 1}
	buf := r.Marshal()
	if err := b.Ioctl(umad.Req().RegisterAgent, buf[:]); err != nil {
		t.Fatal(err)
	}
	errnoIs(t, "ENABLE_PKEY after registration", b.Ioctl(umad.Req().EnablePKey, nil), syscall.EINVAL)
	if b.HeaderSize() != umad.HeaderSizeOld {
		t.Errorf("after REGISTER_AGENT: header %d, want 56", b.HeaderSize())
	}
	// A first REGISTER_AGENT2 switches to the new header.
	c := open(t, p)
	if _, err := reg2(c, 0x09, 2); err != nil || c.HeaderSize() != umad.HeaderSize {
		t.Errorf("after REGISTER_AGENT2: %v, header %d, want 64", err, c.HeaderSize())
	}
	// An old kernel: ENOTTY for both.
	old := open(t, New(&Options{NoPKey: true}).AddPort(1))
	errnoIs(t, "old kernel ENABLE_PKEY", old.Ioctl(umad.Req().EnablePKey, nil), syscall.ENOTTY)
	_, err := reg2(old, 0x09, 1)
	errnoIs(t, "old kernel REGISTER_AGENT2", err, syscall.ENOTTY)
	errnoIs(t, "unknown ioctl", old.Ioctl(0x1234, nil), syscall.ENOTTY)
}

func TestWriteValidation(t *testing.T) {
	k := New(nil)
	f := open(t, k.AddPort(1))
	f.Ioctl(umad.Req().EnablePKey, nil)
	id, _ := reg2(f, 0x09, 1)
	H := umad.HeaderSize
	m := newMAD(0x09, 0x01, 1)
	errnoIs(t, "count < hdr+36 (checked before the agent)", write(f, H, umad.Header{Agent: 40}, m[:35]), syscall.EINVAL)
	errnoIs(t, "agent id 32", write(f, H, umad.Header{Agent: 32}, m), syscall.EINVAL)
	errnoIs(t, "empty slot", write(f, H, umad.Header{Agent: 5}, m), syscall.EIO)
	errnoIs(t, "non-RMPP MAD over 256", write(f, H, umad.Header{Agent: uint32(id)}, append(m, 0)), syscall.EINVAL)
	if err := write(f, H, umad.Header{Agent: uint32(id)}, m[:36]); err != nil {
		t.Errorf("36-byte MAD (zero-padded): %v", err)
	}
	if err := write(f, H, umad.Header{Agent: uint32(id), TimeoutMS: 10, LID: 9}, m); err != nil {
		t.Fatal(err)
	}
	m2 := newMAD(0x09, 0x01, 0xffff_0000_0001) // other user high bits: same TID after rewrite
	errnoIs(t, "duplicate outstanding TID", write(f, H, umad.Header{Agent: uint32(id), TimeoutMS: 10}, m2), syscall.EINVAL)
	if err := write(f, H, umad.Header{Agent: uint32(id), TimeoutMS: 10}, newMAD(0x0a, 0x01, 1)); err != nil {
		t.Errorf("same TID, other class: %v", err)
	}
}

// TestTimeoutsAndRetries drives the kernel's timers by hand.
func TestTimeoutsAndRetries(t *testing.T) {
	c := &clock{}
	k := New(&Options{AfterFunc: c.AfterFunc})
	a, b := k.AddPort(1), k.AddPort(2)
	fa, fb := open(t, a), open(t, b)
	fa.Ioctl(umad.Req().EnablePKey, nil)
	fb.Ioctl(umad.Req().EnablePKey, nil)
	id, _ := reg2(fa, 0x09, 1)
	peer, _ := reg2(fb, 0x09, 1, 0x01)
	h := umad.Header{Agent: uint32(id), TimeoutMS: 250, Retries: 2, LID: 2, QPN: 1}
	if err := write(fa, umad.HeaderSize, h, newMAD(0x09, 0x01, 0xabcd_0000_0042)); err != nil {
		t.Fatal(err)
	}
	if d := c.armed(); len(d) != 1 || d[0] != 250*time.Millisecond {
		t.Fatalf("armed timers %v, want one of 250ms (per attempt)", d)
	}
	for attempt := 2; attempt <= 3; attempt++ {
		if n := c.fire(); n != 1 {
			t.Fatalf("fire: %d timers", n)
		}
		if fa.Queued() != 0 {
			t.Fatalf("attempt %d: a record before the retries ran out", attempt)
		}
	}
	c.fire()
	if fb.Queued() != 3 {
		t.Errorf("peer got %d copies, want 3 (1 + 2 retries)", fb.Queued())
	}
	var tids []uint64
	for fb.Queued() > 0 {
		ph, m := read(t, fb, umad.HeaderSize+umad.MADSize)
		if int(ph.Agent) != peer || ph.LID != 1 || ph.QPN != 1 || ph.Length != umad.HeaderSize+umad.MADSize {
			t.Errorf("peer header %+v", ph)
		}
		tids = append(tids, binary.BigEndian.Uint64(m[8:]))
	}
	want := uint64(fa.agents[id].hiTID)<<32 | 0x42
	for _, tid := range tids {
		if tid != want {
			t.Errorf("transmitted TID %#x, want %#x (hi_tid | low 32 bits)", tid, want)
		}
	}
	// A record needs hdr+24 bytes; with less, EINVAL and it stays queued.
	small := make([]byte, umad.HeaderSize+23)
	fa.SetReadDeadline(time.Now())
	_, err := fa.Read(small)
	errnoIs(t, "timeout record into hdr+23", err, syscall.EINVAL)
	if fa.Queued() != 1 {
		t.Fatalf("queued %d after EINVAL, want 1", fa.Queued())
	}
	rh, data := read(t, fa, umad.HeaderSize+24)
	if rh.Status != umad.StatusTimedOut || int(rh.Agent) != id || rh.TimeoutMS != 250 || rh.Retries != 2 || len(data) != 24 ||
		binary.BigEndian.Uint64(data[8:]) != want || data[3] != 0x01 {
		t.Errorf("timeout record %+v, data % x", rh, data)
	}
	// Once timed out, the TID is free, and a late response is dropped.
	resp := newMAD(0x09, 0x81, want)
	a.Inject(Addr{LID: 2, QPN: 1}, resp)
	if fa.Queued() != 0 {
		t.Errorf("late response queued")
	}
	// Timeout with the sign bit set arms nothing; timeout 0 expects nothing.
	h.TimeoutMS = 0xffffffff
	write(fa, umad.HeaderSize, h, newMAD(0x09, 0x01, 7))
	h.TimeoutMS = 0
	write(fa, umad.HeaderSize, h, newMAD(0x09, 0x01, 8))
	if d := c.armed(); len(d) != 0 {
		t.Errorf("armed %v for timeouts -1 and 0, want none", d)
	}
	a.Inject(Addr{LID: 2, QPN: 1}, newMAD(0x09, 0x81, uint64(fa.agents[id].hiTID)<<32|8))
	if fa.Queued() != 0 {
		t.Errorf("response to a timeout-0 send queued")
	}
	a.Inject(Addr{LID: 2, QPN: 1}, newMAD(0x09, 0x81, uint64(fa.agents[id].hiTID)<<32|7))
	if fa.Queued() != 1 {
		t.Errorf("response to a forever send not queued")
	}
}

func TestReceiveQueue(t *testing.T) {
	k := New(nil)
	p := k.AddPort(1)
	f := open(t, p)
	f.Ioctl(umad.Req().EnablePKey, nil)
	id, _ := reg2(f, 0x09, 1, 0x05)
	// Unsolicited Trap: FIFO; short buffer EINVAL keeps the head.
	p.Inject(Addr{LID: 7, QPN: 1, SL: 3}, newMAD(0x09, 0x05, 1))
	p.Inject(Addr{LID: 7, QPN: 1}, newMAD(0x09, 0x05, 2))
	f.SetReadDeadline(time.Now())
	_, err := f.Read(make([]byte, umad.HeaderSize+100))
	errnoIs(t, "short buffer", err, syscall.EINVAL)
	_, err = f.Read(make([]byte, 10))
	errnoIs(t, "buffer below the header", err, syscall.EINVAL)
	h, m := read(t, f, 1024)
	if int(h.Agent) != id || h.LID != 7 || h.SL != 3 || h.QKey != 0x80010000 || binary.BigEndian.Uint64(m[8:]) != 1 || len(m) != 256 {
		t.Errorf("first record %+v TID %#x len %d", h, binary.BigEndian.Uint64(m[8:]), len(m))
	}
	h, m = read(t, f, 1024)
	if binary.BigEndian.Uint64(m[8:]) != 2 {
		t.Errorf("second record TID %#x", binary.BigEndian.Uint64(m[8:]))
	}
	// An RMPP message longer than the buffer: ENOSPC with the length, stays.
	big := make([]byte, 600)
	copy(big, newMAD(0x09, 0x05, 3))
	p.Inject(Addr{LID: 7, QPN: 1}, big)
	b := make([]byte, umad.HeaderSize+umad.MADSize)
	_, err = f.Read(b)
	errnoIs(t, "long message", err, syscall.ENOSPC)
	if got := binary.NativeEndian.Uint32(b[16:]); got != umad.HeaderSize+600 || f.Queued() != 1 {
		t.Errorf("ENOSPC: length %d (want %d), queued %d", got, umad.HeaderSize+600, f.Queued())
	}
	if _, m := read(t, f, umad.HeaderSize+600); len(m) != 600 {
		t.Errorf("read %d bytes, want 600", len(m))
	}
	// Unowned: Report dropped; Get answered by the kernel with 0x000C.
	p.Inject(Addr{LID: 7, QPN: 1}, newMAD(0x09, 0x06, 4))
	if f.Queued() != 0 {
		t.Error("unowned Report queued")
	}
	q := open(t, k.AddPort(7))
	q.Ioctl(umad.Req().EnablePKey, nil)
	qid, _ := reg2(q, 0x09, 1)
	write(q, umad.HeaderSize, umad.Header{Agent: uint32(qid), TimeoutMS: 100, LID: 1, QPN: 1}, newMAD(0x09, 0x01, 5))
	rh, rm := read(t, q, 1024)
	if rm[3] != 0x81 || binary.BigEndian.Uint16(rm[4:]) != 0x000c || rh.LID != 1 {
		t.Errorf("answer to an unowned Get: method %#x status %#x from %d", rm[3], binary.BigEndian.Uint16(rm[4:]), rh.LID)
	}
}

func TestPollDeadAndClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		k := New(nil)
		p := k.AddPort(1)
		f, _ := p.Open("/dev/infiniband/umad0")
		reg2(f, 0x09, 1, 0x05)
		f.SetReadDeadline(time.Now().Add(time.Second))
		start := time.Now()
		if _, err := f.Poll(); !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != time.Second {
			t.Errorf("poll on an empty queue: %v after %v", err, time.Since(start))
		}
		f.SetReadDeadline(time.Time{})
		go p.Inject(Addr{LID: 2, QPN: 1}, newMAD(0x09, 0x05, 1))
		if ev, err := f.Poll(); err != nil || ev != umad.PollIn|umad.PollOut {
			t.Errorf("poll with a record: %#x, %v", ev, err)
		}
		// Close unblocks a blocked read.
		read(t, f, 1024)
		done := make(chan error)
		go func() {
			_, err := f.Read(make([]byte, 1024))
			done <- err
		}()
		synctest.Wait()
		f.Close()
		if err := <-done; !errors.Is(err, os.ErrClosed) {
			t.Errorf("blocked read after Close: %v", err)
		}
		if err := f.Close(); !errors.Is(err, os.ErrClosed) {
			t.Errorf("close twice: %v", err)
		}
		// Agents dead.
		g, _ := p.Open("/dev/infiniband/umad0")
		defer g.Close()
		g.Ioctl(umad.Req().EnablePKey, nil)
		id, _ := reg2(g, 0x09, 1)
		p.Remove()
		if ev, err := g.Poll(); err != nil || ev != umad.PollErr {
			t.Errorf("poll when dead: %#x, %v; want POLLERR only", ev, err)
		}
		_, err := g.Read(make([]byte, 1024))
		errnoIs(t, "read when dead", err, syscall.EIO)
		errnoIs(t, "write when dead", write(g, umad.HeaderSize, umad.Header{Agent: uint32(id)}, newMAD(0x09, 1, 1)), syscall.EIO)
		_, err = reg2(g, 0x09, 2)
		errnoIs(t, "register when dead", err, syscall.EPIPE)
		if _, err := p.Open("/dev/infiniband/umad0"); !errors.Is(err, syscall.ENXIO) {
			t.Errorf("open when removed: %v", err)
		}
	})
}

// ib_umad_reg_agent2's order: flags before the slot search, OUI after.
func TestRegister2CheckOrder(t *testing.T) {
	f := open(t, New(nil).AddPort(1))
	for range umad.MaxAgents {
		if _, err := reg2(f, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	r := umad.RegReq2{QPN: 1, Class: 0x30, Flags: 0x2}
	b := r.Marshal()
	errnoIs(t, "bad flags with no free slot", f.Ioctl(umad.Req().RegisterAgent2, b[:]), syscall.EINVAL)
	r = umad.RegReq2{QPN: 1, Class: 0x30, OUI: 1 << 24}
	b = r.Marshal()
	errnoIs(t, "bad OUI with no free slot", f.Ioctl(umad.Req().RegisterAgent2, b[:]), syscall.ENOMEM)
	r = umad.RegReq2{QPN: 3}
	b = r.Marshal()
	errnoIs(t, "bad qpn with no free slot", f.Ioctl(umad.Req().RegisterAgent2, b[:]), syscall.EINVAL)
}

// A write must carry the class header: 56 bytes for SA.
func TestWriteClassHeader(t *testing.T) {
	f := open(t, New(nil).AddPort(1))
	f.Ioctl(umad.Req().EnablePKey, nil)
	id, _ := reg2(f, 0, 0)
	m := newMAD(0x03, 0x01, 1)
	errnoIs(t, "SA MAD of 55 bytes", write(f, umad.HeaderSize, umad.Header{Agent: uint32(id)}, m[:55]), syscall.EINVAL)
	if err := write(f, umad.HeaderSize, umad.Header{Agent: uint32(id)}, m[:56]); err != nil {
		t.Errorf("SA MAD of 56 bytes: %v", err)
	}
}

// Section 13 #9: for a kernel-RMPP agent the user's RMPP header (bytes
// 24-35) is not sent unless Active is set; for an agent without kernel
// RMPP the whole RMPP header is user data.
func TestRMPPHeaderBytes(t *testing.T) {
	k := New(nil)
	a, b := k.AddPort(1), k.AddPort(2)
	fa, fb := open(t, a), open(t, b)
	fa.Ioctl(umad.Req().EnablePKey, nil)
	fb.Ioctl(umad.Req().EnablePKey, nil)
	r := umad.RegReq2{QPN: 1, Class: 0x03, Version: 2, RMPPVersion: 1}
	buf := r.Marshal()
	if err := fa.Ioctl(umad.Req().RegisterAgent2, buf[:]); err != nil {
		t.Fatal(err)
	}
	kernelRMPP := int(binary.NativeEndian.Uint32(buf[:]))
	plain, _ := reg2(fa, 0x03, 1) // rmpp_version 0 on SA
	peer, _ := reg2(fb, 0x03, 2, 0x02)
	peer1, _ := reg2(fb, 0x03, 1, 0x02)
	for _, tt := range []struct {
		agent, peer int
		version     uint8
		wantZero    bool
	}{{kernelRMPP, peer, 2, true}, {plain, peer1, 1, false}} {
		m := newMAD(0x03, 0x02, 1)
		m[2] = tt.version
		copy(m[24:36], []byte{1, 1, 0x30, 0, 0, 0, 0, 1, 0, 0, 0, 9}) // RMPP header, Active clear
		if err := write(fa, umad.HeaderSize, umad.Header{Agent: uint32(tt.agent), LID: 2, QPN: 1}, m); err != nil {
			t.Fatal(err)
		}
		h, got := read(t, fb, 1024)
		zero := [12]byte{}
		if int(h.Agent) != tt.peer || (tt.wantZero != (string(got[24:36]) == string(zero[:]))) {
			t.Errorf("agent %d: peer %d got RMPP bytes % x, want zero %v", tt.agent, h.Agent, got[24:36], tt.wantZero)
		}
	}
}

// TestRoCEPort: a RoCE port (link layer Ethernet) has no QP0
// (EPROTONOSUPPORT), refuses a MAD without a GRH or with a source GID
// index it lacks (EINVAL), delivers by destination GID with the GRH the
// kernel reports (the sender's GID, the local index sent to, hop limit
// 64, no LID), and drops an answer sent from an IPv4-mapped GID, whose
// request then times out, as Linux 6.1 with rdma_rxe does.
func TestRoCEPort(t *testing.T) {
	ck := &clock{}
	k := New(&Options{AfterFunc: ck.AfterFunc})
	g := func(last byte, mapped bool) [16]byte {
		if mapped {
			return [16]byte{10: 0xff, 11: 0xff, 12: 10, 15: last}
		}
		return [16]byte{0: 0xfd, 15: last}
	}
	a, b := k.AddPort(0), k.AddPort(0)
	a.SetGIDs(true, [16]byte{0xfe, 0x80, 15: 1}, g(1, true), g(1, false))
	b.SetGIDs(true, [16]byte{0xfe, 0x80, 15: 2}, g(2, true), g(2, false))
	fa, fb := open(t, a), open(t, b)
	if _, err := reg2(fa, 0x81, 1); !errors.Is(err, syscall.EPROTONOSUPPORT) {
		t.Errorf("SMP agent on RoCE: %v, want EPROTONOSUPPORT", err)
	}
	ida, err := reg2(fa, 0x09, 1)
	if err != nil {
		t.Fatal(err)
	}
	idb, err := reg2(fb, 0x09, 1, 0x01)
	if err != nil {
		t.Fatal(err)
	}
	h := umad.Header{Agent: uint32(ida), QPN: 1, QKey: 0x80010000, TimeoutMS: 10}
	errnoIs(t, "no GRH", write(fa, umad.HeaderSize, h, newMAD(0x09, 0x01, 1)), syscall.EINVAL)
	h.GRHPresent, h.GID, h.GIDIndex = true, g(2, false), 7
	errnoIs(t, "gid_index 7", write(fa, umad.HeaderSize, h, newMAD(0x09, 0x01, 1)), syscall.EINVAL)
	for _, mapped := range []bool{false, true} {
		h.GIDIndex, h.GID, h.TrafficClass, h.FlowLabel, h.HopLimit = 2, g(2, false), 5, 0x777, 64
		if mapped {
			h.GIDIndex, h.GID = 1, g(2, true)
		}
		if err := write(fa, umad.HeaderSize, h, newMAD(0x09, 0x01, 2)); err != nil {
			t.Fatal(err)
		}
		rh, req := read(t, fb, umad.HeaderSize+umad.MADSize)
		want := umad.Header{Agent: uint32(idb), Length: umad.HeaderSize + umad.MADSize, QPN: 1, QKey: 0x80010000,
			GRHPresent: true, GIDIndex: h.GIDIndex, HopLimit: 64, TrafficClass: 5, FlowLabel: 0x777, GID: g(1, mapped)}
		if rh != want {
			t.Fatalf("mapped %v: request header %+v, want %+v", mapped, rh, want)
		}
		req[3] = 0x81
		back := umad.Header{Agent: uint32(idb), QPN: 1, GRHPresent: true, GIDIndex: rh.GIDIndex, GID: rh.GID, HopLimit: 64}
		if err := write(fb, umad.HeaderSize, back, req); err != nil {
			t.Fatal(err)
		}
		if mapped {
			ck.fire()
			rh, _ := read(t, fa, umad.HeaderSize+umad.MADSize)
			if rh.Status != umad.StatusTimedOut {
				t.Errorf("answer from an IPv4-mapped GID: status %d, want the request timed out", rh.Status)
			}
			continue
		}
		rh, _ = read(t, fa, umad.HeaderSize+umad.MADSize)
		if rh.Status != 0 || !rh.GRHPresent || rh.GID != g(2, false) || rh.GIDIndex != 2 {
			t.Errorf("answer header %+v", rh)
		}
	}
}

// TestIBCMOwnsCMSend: the kernel's ib_cm owns the CM class's Send on
// every port (the real kernel says EINVAL to a user agent asking for it,
// on Soft-RoCE as on InfiniBand); its other methods and another class
// version stay free; without ib_cm (NoIBCM) Send is free too.
func TestIBCMOwnsCMSend(t *testing.T) {
	a := open(t, New(nil).AddPort(1))
	_, err := reg2(a, 0x07, 2, 0x03)
	errnoIs(t, "CM Send with ib_cm loaded", err, syscall.EINVAL)
	if _, err := reg2(a, 0x07, 2, 0x01); err != nil {
		t.Errorf("CM Get: %v", err)
	}
	if _, err := reg2(a, 0x07, 1, 0x03); err != nil {
		t.Errorf("CM Send of class version 1: %v", err)
	}
	b := open(t, New(&Options{NoIBCM: true}).AddPort(1))
	if _, err := reg2(b, 0x07, 2, 0x03); err != nil {
		t.Errorf("CM Send without ib_cm: %v", err)
	}
}

// TestHostPortSMLID: a HostPort's SMLID is its sysfs sm_lid, in the
// kernel's "0x%x" text, which libibumad's reader gives back; 0 is 0x1 on
// InfiniBand, and an Ethernet port's is 0x0 whatever it is given.
func TestHostPortSMLID(t *testing.T) {
	h := NewHost(New(nil))
	h.AddCA("mlx5_1", 1, 0x0002c90300002000,
		HostPort{Num: 1, LID: 3, State: 4, PhysState: 5, SMLID: 0x1c},
		HostPort{Num: 2, LID: 4, State: 4, PhysState: 5},
		HostPort{Num: 3, State: 4, PhysState: 5, LinkLayer: "Ethernet", SMLID: 7})
	for port, want := range map[int]uint16{1: 0x1c, 2: 1, 3: 0} {
		p, err := umad.GetPort(h.FS, "mlx5_1", port)
		if err != nil || p.SMLID != want {
			t.Errorf("port %d: %+v, %v; want SMLID %#x", port, p, err, want)
		}
	}
	if f := h.FS[umad.SysInfiniband+"/mlx5_1/ports/1/sm_lid"]; f == nil || string(f.Data) != "0x1c\n" {
		t.Errorf("port 1's sm_lid file: %v, want 0x1c", f)
	}
}
